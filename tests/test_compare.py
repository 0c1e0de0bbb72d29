"""The comparison harness (issue 16): seeds, backends, tables, the t-test marking, CV,
relationships, the HTML report and argument validation."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Ridge

from explorer.compare import ComparisonCancelled, ComparisonResult, compare, job_seeds, nmse
from explorer.data.synthetic import make_outlier_tasks
from explorer.models import L21MTFL, MultiTaskRidge, PerTaskEstimator


@pytest.fixture(scope="module")
def regression_data():
    return make_outlier_tasks(n_tasks=3, n_features=6, n_samples_per_task=24,
                              n_shared_features=2, n_outliers=1, noise=0.5, random_state=1)


def small_methods():
    return {"ridge": MultiTaskRidge(lambda_ridge=0.1),
            "l21": L21MTFL(lambda_rows=0.05),
            "stl": PerTaskEstimator(estimator=Ridge(alpha=1.0))}


def test_frame_is_tidy_and_matches_a_direct_fit(regression_data):
    calls = []
    result = compare(small_methods(), regression_data, n_trials=2, train_fraction=0.5,
                     progress=False, callback=lambda done, total: calls.append((done, total)))
    assert isinstance(result, ComparisonResult)
    frame = result.frame
    assert list(frame.columns) == ["method", "trial", "task", "metric", "value", "fit_time_s",
                                   "params"]
    # 3 methods x 2 trials x (3 tasks + average), one metric ("auto" -> nmse)
    assert len(frame) == 3 * 2 * 4 and set(frame["metric"]) == {"nmse"}
    assert calls == [(i, 6) for i in range(1, 7)]
    # Independent check of one cell: the same split and fit done by hand.
    split_seed, _ = job_seeds(0, 1, "ridge")
    train, test = regression_data.split(0.5, random_state=split_seed)
    model = MultiTaskRidge(lambda_ridge=0.1).fit(*train.arrays())
    expected = nmse(test.y, model.predict(test.X, test.task), test.task)
    cell = frame.query("method == 'ridge' and trial == 1 and task == 'average'")["value"]
    assert cell.item() == pytest.approx(expected, rel=1e-12)
    table = result.table()
    assert list(table.index) == ["ridge", "l21", "stl"]
    assert list(table.columns) == [*regression_data.task_names, "average"]
    assert all("±" in cell for cell in table.to_numpy().ravel())


def test_should_stop_cancels_between_jobs(regression_data):
    done = []
    with pytest.raises(ComparisonCancelled) as info:
        compare(small_methods(), regression_data, n_trials=3, train_fraction=0.5,
                progress=False, callback=lambda d, t: done.append(d),
                should_stop=lambda: len(done) >= 2)
    assert (info.value.done, info.value.total) == (2, 9)
    assert done == [1, 2]


def test_params_column_is_json(regression_data):
    result = compare({"ridge": MultiTaskRidge()}, regression_data, n_trials=1,
                     train_fraction=0.5, progress=False,
                     param_grid={"ridge": {"lambda_ridge": [0.01, 10.0]}}, cv=3)
    chosen = {json.dumps(json.loads(p)) for p in result.frame["params"]}
    assert len(chosen) == 1 and json.loads(chosen.pop())["lambda_ridge"] in (0.01, 10.0)
    assert isinstance(result.frame, pd.DataFrame)
    assert np.isfinite(result.frame["value"]).all()
