"""A method whose fit raises: ``compare(..., errors="report")`` leaves it out and says why
(the Compare page runs that way); the default still raises. And MT-KR on School (139 tasks)
gives a table."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from explorer.compare import compare
from explorer.data.synthetic import make_outlier_tasks
from explorer.models import MTKR, MultiTaskRidge, PerTaskEstimator


@pytest.fixture(scope="module")
def data():
    return make_outlier_tasks(n_tasks=3, n_features=6, n_samples_per_task=24,
                              n_shared_features=2, n_outliers=1, noise=0.5, random_state=1)


def methods():
    # a negative ridge penalty is refused when the fit starts (its declared constraint)
    return {"ridge": MultiTaskRidge(lambda_ridge=0.1),
            "broken <b>": MultiTaskRidge(lambda_ridge=-1.0),
            "stl": PerTaskEstimator(estimator=Ridge(alpha=1.0))}


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_failing_method_is_reported_and_the_others_are_kept(data, n_jobs):
    result = compare(methods(), data, n_trials=2, random_state=0, progress=False,
                     n_jobs=n_jobs, errors="report")
    assert result.methods == ["ridge", "stl"]
    assert set(result.frame["method"]) == {"ridge", "stl"}
    assert list(result.failures) == ["broken <b>"]
    assert result.failures["broken <b>"].startswith("trial 0: ValueError: ")
    assert "lambda_ridge" in result.failures["broken <b>"]
    assert "failures=['broken <b>']" in repr(result)
    good = compare({k: v for k, v in methods().items() if k != "broken <b>"}, data,
                   n_trials=2, random_state=0, progress=False)
    np.testing.assert_array_equal(result.values().to_numpy(), good.values().to_numpy())
    assert good.failures == {}


def test_by_default_a_failing_method_fails_the_run(data):
    with pytest.raises(ValueError, match="lambda_ridge") as raised:
        compare(methods(), data, n_trials=1, progress=False)
    assert any("method 'broken <b>'" in note for note in raised.value.__notes__)


def test_when_every_method_fails_the_reasons_are_listed(data):
    broken = {"a": MultiTaskRidge(lambda_ridge=-1.0), "b": MultiTaskRidge(lambda_ridge=-2.0)}
    with pytest.raises(RuntimeError, match=r"every method failed: a \(trial 0: ValueError"):
        compare(broken, data, n_trials=1, progress=False, errors="report")
    with pytest.raises(ValueError, match="errors must be 'raise' or 'report'"):
        compare(broken, data, n_trials=1, progress=False, errors="ignore")


def test_mt_kr_on_school_gives_a_table():
    # 139 tasks: above the dense solver's limit, so "auto" solves W matrix-free
    from explorer.data import load_school

    result = compare({"MT-KR": MTKR(tol=1e-4), "ridge": MultiTaskRidge()}, load_school(),
                     n_trials=1, train_fraction=0.24, random_state=0, progress=False,
                     errors="report")
    assert result.failures == {}
    nmse = result.values("nmse").mean(axis=1)
    assert list(nmse.index) == ["MT-KR", "ridge"] and np.all(np.isfinite(nmse))
    assert 0 < nmse["MT-KR"] < 1.5, nmse
    W = result.relationships()["MT-KR"]["W"]
    assert W.shape == (139, 139)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-9)
