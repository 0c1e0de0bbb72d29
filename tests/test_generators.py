import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from explorer.data import (
    make_clustered_tasks,
    make_local_relatedness,
    make_outlier_tasks,
    make_task_family,
)


def _sep(data, t):
    X, y = data.task_data(t)
    w = LogisticRegression(C=100.0).fit(X, y).coef_.ravel()
    return w / np.linalg.norm(w)


def test_task_family_truth_matches_data():
    data = make_task_family(("related", "negated", "unrelated"), n_samples_per_task=400,
                            perturbation=0.1, random_state=0)
    w0, w1, w2 = _sep(data, 0), _sep(data, 1), _sep(data, 2)
    assert w0 @ w1 > 0.9
    assert w0 @ w2 < -0.9
    rel = data.truth["task_relation"]
    assert rel[0, 1] == 1 and rel[0, 2] == -1 and rel[0, 3] == 0
    assert data.task_names[:3] == ["T0 base", "T1 related", "T2 negated"]


def test_task_family_regression_many_dims():
    data = make_task_family(("negated",), n_features=20, kind="regression", noise=0.0,
                            random_state=1)
    X, y = data.task_data(1)
    np.testing.assert_allclose(y, X @ data.truth["coef"][:, 1])
    np.testing.assert_allclose(data.truth["coef"][:, 1], -data.truth["coef"][:, 0])


def test_outlier_tasks_truth():
    data = make_outlier_tasks(noise=0.0, random_state=0)
    P, Q = data.truth["P"], data.truth["Q"]
    nz_cols = np.flatnonzero(np.abs(Q).sum(0) > 0)
    np.testing.assert_array_equal(nz_cols, np.flatnonzero(data.truth["outlier_tasks"]))
    nz_rows = np.flatnonzero(np.abs(P).sum(1) > 0)
    np.testing.assert_array_equal(nz_rows, np.flatnonzero(data.truth["shared_features"]))
    for t in range(data.n_tasks):
        X, y = data.task_data(t)
        np.testing.assert_allclose(np.linalg.norm(X, axis=0), 1.0)
        np.testing.assert_allclose(y, X @ (P[:, t] + Q[:, t]), atol=1e-9)


def test_local_relatedness():
    data = make_local_relatedness(n_samples_per_task=400, random_state=0)
    y0, y1 = data.task_data(0)[1], data.task_data(1)[1]
    assert set(y0) == {0, 1, 2, 3} and set(y1) == {0, 1}
    X1 = data.task_data(1)[0]
    left = X1[:, 0] < 0
    # on the left half task 1's label is the upper/lower blob: agreement with x1 > 0
    assert np.mean(y1[left] == (X1[left, 1] > 0)) == 1.0
    assert np.mean(y1[~left] == (X1[~left, 1] > 0)) < 0.9


def test_clustered_gate():
    def gate_acc(informative):
        accs = []
        for seed in range(5):
            d = make_clustered_tasks(n_tasks=30, n_clusters=3, informative=informative,
                                     n_samples_per_task=10, random_state=seed)
            tf, c = d.task_features, d.truth["clusters"]
            accs.append(LogisticRegression().fit(tf[::2], c[::2]).score(tf[1::2], c[1::2]))
        return np.mean(accs)

    assert gate_acc(True) > 0.85
    assert gate_acc(False) < 0.6


@pytest.mark.parametrize("f", [make_task_family, make_outlier_tasks, make_local_relatedness,
                               make_clustered_tasks])
def test_deterministic(f):
    a, b = f(random_state=3), f(random_state=3)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)


@pytest.mark.parametrize("f, kw, word", [
    (make_task_family, {"relations": ("siblings",)}, "relations"),
    (make_task_family, {"n_features": 0}, "n_features"),
    (make_outlier_tasks, {"n_outliers": 50}, "n_outliers"),
    (make_local_relatedness, {"label_noise": 2.0}, "label_noise"),
    (make_clustered_tasks, {"n_clusters": 0}, "n_clusters"),
])
def test_bad_params(f, kw, word):
    with pytest.raises(ValueError, match=word):
        f(**kw)
