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


# ---------------------------------------------------------------------- truth is right
def _cosine(a, b):
    return a @ b / (np.linalg.norm(a) * np.linalg.norm(b))


@pytest.mark.parametrize("f", [make_task_family, make_outlier_tasks, make_local_relatedness,
                               make_clustered_tasks])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_task_related_to_itself_and_similarity_is_the_cosine(f, seed):
    data = f(random_state=seed)
    truth = data.truth
    if "task_relation" in truth:
        np.testing.assert_array_equal(np.diagonal(truth["task_relation"]), 1)
    if "coef" in truth:
        coef, sim = truth["coef"], truth["task_similarity"]
        assert sim.shape == (data.n_tasks, data.n_tasks)
        np.testing.assert_allclose(np.diagonal(sim), 1.0)
        for s in range(data.n_tasks):
            for t in range(data.n_tasks):
                if s != t and np.linalg.norm(coef[:, s]) and np.linalg.norm(coef[:, t]):
                    assert sim[s, t] == pytest.approx(_cosine(coef[:, s], coef[:, t]), abs=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_unrelated_task_is_orthogonal_to_the_base_in_2d(seed):
    # independent draws in 2-D are often nearly parallel: the truth must still say 0 honestly
    data = make_task_family(("related", "negated", "unrelated"), random_state=seed)
    coef, rel, sim = data.truth["coef"], data.truth["task_relation"], data.truth["task_similarity"]
    assert abs(_cosine(coef[:, 0], coef[:, 3])) < 1e-12
    assert rel[0, 3] == rel[3, 0] == 0 and rel[1, 3] == 0 and rel[2, 3] == 0
    assert abs(sim[0, 3]) < 1e-12
    np.testing.assert_array_equal(rel, [[1, 1, -1, 0], [1, 1, -1, 0], [-1, -1, 1, 0],
                                        [0, 0, 0, 1]])
    assert sim[0, 2] == pytest.approx(-1.0)


def test_unrelated_tasks_orthogonal_to_each_other_where_the_dimension_allows():
    data = make_task_family(("unrelated",) * 4, n_features=5, random_state=0)
    unit = data.truth["coef"] / np.linalg.norm(data.truth["coef"], axis=0)
    np.testing.assert_allclose(unit.T @ unit, np.eye(5), atol=1e-12)
    np.testing.assert_array_equal(data.truth["task_relation"], np.eye(5))


@pytest.mark.parametrize("seed", range(10))
def test_second_unrelated_task_in_2d_takes_the_orthogonal_direction_with_a_sign(seed):
    data = make_task_family(("unrelated", "unrelated", "related"), random_state=seed)
    coef, rel = data.truth["coef"], data.truth["task_relation"]
    assert abs(_cosine(coef[:, 0], coef[:, 1])) < 1e-12
    assert abs(_cosine(coef[:, 0], coef[:, 2])) < 1e-12
    cos12 = _cosine(coef[:, 1], coef[:, 2])
    assert abs(abs(cos12) - 1) < 1e-12          # only one direction is left in 2-D
    assert rel[1, 2] == rel[2, 1] == np.sign(cos12)  # and the truth says so
    assert rel[0, 1] == rel[0, 2] == 0 and rel[0, 3] == 1 and rel[1, 3] == rel[2, 3] == 0


def test_relabelled_task_is_unrelated_and_related_to_itself():
    data = make_task_family(("related", "relabelled"), random_state=0)
    rel, sim = data.truth["task_relation"], data.truth["task_similarity"]
    np.testing.assert_array_equal(rel[2], [0, 0, 1])
    np.testing.assert_array_equal(data.truth["coef"][:, 2], 0.0)
    np.testing.assert_allclose(sim[2], [0.0, 0.0, 1.0])


def test_unrelated_needs_two_features():
    with pytest.raises(ValueError, match=r"'unrelated' needs n_features >= 2"):
        make_task_family(("unrelated",), n_features=1)
    assert make_task_family(("related", "negated"), n_features=1).n_features == 1


def test_local_region_has_one_entry_per_row_and_follows_split():
    data = make_local_relatedness(n_samples_per_task=100, random_state=0)
    region = data.truth["local_region"]
    assert region.shape == (data.n_samples,)
    np.testing.assert_array_equal(region, data.X[:, 0] < 0)
    train, test = data.split(0.7, random_state=0)
    for part in (train, test):
        assert part.truth["local_region"].shape == (part.n_samples,)
        np.testing.assert_array_equal(part.truth["local_region"], part.X[:, 0] < 0)
    sub = data.subset([1])
    np.testing.assert_array_equal(sub.truth["local_region"], sub.X[:, 0] < 0)


def test_outlier_truth_parts_add_up():
    data = make_outlier_tasks(n_tasks=6, n_outliers=2, n_features=8, n_shared_features=3,
                              random_state=0)
    np.testing.assert_allclose(data.truth["P"] + data.truth["Q"], data.truth["coef"])
