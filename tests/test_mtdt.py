"""MT-DT and MT-Adaboost (Faddoul et al. 2012): the issue's must-hold properties."""

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from explorer.data import load_digits_tasks, make_local_relatedness
from explorer.models import MTAdaBoost, MTDecisionTree, SingleTaskAdaBoost, SingleTaskTree
from explorer.solvers.tree_split import task_information_gains


def _one_task_data(seed, n=600, d=5):
    rng = np.random.default_rng(seed)
    # float32-representable values, as scikit-learn stores X in float32.
    X = rng.normal(size=(n, d)).astype(np.float32).astype(np.float64)
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.5 * rng.normal(size=n) > 0.3).astype(int)
    y = y + (X[:, 2] > 0.8)
    return X, y


@pytest.mark.parametrize("criterion", ["ig_m", "ig_j", "ig_u"])
def test_one_task_tree_equals_sklearn_entropy_tree(criterion):
    for seed in range(4):
        X, y = _one_task_data(seed)
        X_test, _ = _one_task_data(seed + 100, n=1000)
        reference = DecisionTreeClassifier(criterion="entropy", max_depth=4,
                                           min_samples_leaf=8, random_state=0).fit(X, y)
        tree = MTDecisionTree(criterion=criterion, max_depth=4, min_samples_leaf=8)
        tree.fit(X, y, np.zeros(len(y), int))
        assert tree.n_nodes_ == reference.tree_.node_count
        np.testing.assert_array_equal(tree.predict(X_test, np.zeros(1000, int)),
                                      reference.predict(X_test))


def test_fully_grown_one_task_tree_differs_from_sklearn_only_at_exact_gain_ties():
    X, y = _one_task_data(0)
    ref = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=8, random_state=0)
    ref = ref.fit(X, y).tree_
    tree = MTDecisionTree(min_samples_leaf=8).fit(X, y, np.zeros(len(y), int)).tree_
    n_ties = 0

    def gain(mask, f, threshold):
        left = np.bincount(y[mask & (X[:, f] <= threshold)], minlength=3).astype(float)
        right = np.bincount(y[mask & (X[:, f] > threshold)], minlength=3).astype(float)
        return task_information_gains(left, right, np.array([0, 3]))["task"][0]

    def walk(a, b, mask):
        nonlocal n_ties
        assert (ref.feature[a] < 0) == (tree["feature"][b] < 0)
        if ref.feature[a] < 0:
            return
        f, t = ref.feature[a], ref.threshold[a]
        if f != tree["feature"][b] or abs(t - tree["threshold"][b]) > 1e-6:
            n_ties += 1
            assert gain(mask, f, t) == pytest.approx(
                gain(mask, tree["feature"][b], tree["threshold"][b]), abs=1e-12)
            return
        walk(ref.children_left[a], tree["left"][b], mask & (X[:, f] <= t))
        walk(ref.children_right[a], tree["right"][b], mask & (X[:, f] > t))

    walk(0, 0, np.ones(len(y), bool))
    print(f"\nfully grown one-task tree: {n_ties} subtree(s) differ, each at an exact tie")


def _two_tasks(seed=0, n=200):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(2 * n, 2))
    task = np.repeat([0, 1], n)
    y = np.empty(2 * n, dtype=object)
    a = X[:n]
    y[:n] = np.where(a[:, 0] < -1, "square", np.where(a[:, 1] < 0, "diamond", "circle"))
    b = X[n:]
    y[n:] = np.where(b[:, 0] > -1, "star", np.where(b[:, 1] < 0.5, "plus", "star"))
    return X, y, task


def test_early_leaves_appear_exactly_when_a_task_is_pure():
    X, y, task = _two_tasks()
    tree = MTDecisionTree(max_depth=6)
    snapshots = list(tree.fit_iter(X, y, task))
    assert [s.step for s in snapshots] == list(range(1, tree.n_nodes_ + 1))
    n_early = 0
    for snap in snapshots:
        node = snap.info["node"]
        leaves = {leaf["task"]: leaf for leaf in node["early_leaves"]}
        for j in node["active_tasks"]:
            n_labels = int(np.count_nonzero(node["class_counts"][j]))
            pure = n_labels <= 1
            if node["feature"] is not None:  # an internal node: leaves only for pure tasks
                assert (j in leaves) == pure
                n_early += pure
            if j in leaves:
                assert leaves[j]["reason"] == ("pure" if n_labels == 1 else
                                               "absent" if n_labels == 0 else "max depth")
    assert n_early > 0  # task 1 is pure on x0 > -1 before task 0 is done
    info = snapshots[0].info["node"]
    assert set(info) >= {"node", "depth", "feature", "threshold", "gains", "class_counts",
                         "deciding_task", "early_leaves"}
    assert set(info["gains"]) >= {"task", "ig_j", "ig_u", "ig_m", "best"}
    assert info["gains"]["ig_m"] >= info["gains"]["ig_j"] - 1e-12  # shared proportions


def test_predictions_are_defined_for_every_task_and_label_set():
    X, y, task = _two_tasks()
    tree = MTDecisionTree(criterion="ig_m").fit(X, y, task)
    grid = np.random.default_rng(5).uniform(-4, 4, size=(300, 2))
    every = tree.predict_all(grid)
    assert every.shape == (300, 2)
    assert set(every[:, 0]) <= {"square", "diamond", "circle"}
    assert set(every[:, 1]) <= {"star", "plus"}
    proba = tree.predict_proba(grid, np.repeat([0, 1], 150))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.mean(tree.predict(X, task) == y) == 1.0
    relation = tree.task_relationships()["split_borrowing"]
    assert relation.shape == (2, 2) and np.all(relation >= 0) and relation.sum() > 0


def test_purity_below_one_stops_tasks_early_and_bad_parameters_are_named():
    X, y, task = _two_tasks()
    full = MTDecisionTree().fit(X, y, task)
    loose = MTDecisionTree(purity=0.8).fit(X, y, task)
    assert loose.n_nodes_ < full.n_nodes_
    assert any(leaf["reason"] == "purity" for n in loose.nodes_ for leaf in n["early_leaves"])
    for params, name in [({"criterion": "gini"}, "criterion"), ({"purity": 0.0}, "purity"),
                         ({"max_depth": 0}, "max_depth")]:
        with pytest.raises(ValueError, match=name):
            MTDecisionTree(**params).fit(X, y, task)


def test_single_task_tree_is_the_one_task_mtdt():
    X, y, task = _two_tasks()
    model = SingleTaskTree(max_depth=3).fit(X, y, task)
    alone = MTDecisionTree(max_depth=3).fit(X[task == 1], y[task == 1], np.zeros(200, int))
    np.testing.assert_array_equal(model.predict(X[task == 1], np.ones(200, int)),
                                  alone.predict(X[task == 1], np.zeros(200, int)))


def test_mtadaboost_training_error_falls_under_the_adaboost_m1_bound():
    rng = np.random.default_rng(1)
    X = rng.uniform(-3, 3, size=(400, 2))
    task = np.repeat([0, 1], 200)
    # Oblique boundaries: depth-2 trees stay weak, so boosting has work to do.
    y = np.where(task == 0, (X[:, 0] + X[:, 1] > 0).astype(int),
                 (X[:, 0] - 0.5 * X[:, 1] > 0.3).astype(int) + 2 * (X[:, 1] > 2))
    model = MTAdaBoost(base=MTDecisionTree(max_depth=2), n_estimators=15)
    snapshots = list(model.fit_iter(X, y, task))
    assert len(snapshots) == model.n_estimators_ == 15
    pooled = model.train_errors_.mean(axis=1)  # tasks have equal sizes: D_1 is uniform
    assert pooled[-1] < pooled[0] / 4
    errors = model.estimator_errors_
    bound = np.cumprod(2 * np.sqrt(errors * (1 - errors)))  # Freund & Schapire (1997)
    assert np.all(pooled <= bound + 1e-12)
    assert np.all(errors < 0.5)
    staged = list(model.staged_predict(X, task))
    assert len(staged) == 15
    np.testing.assert_array_equal(staged[-1], model.predict(X, task))
    assert np.mean(staged[-1] != y) == pytest.approx(pooled[-1])


def test_mtadaboost_stops_when_the_weak_error_exceeds_one_half():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = rng.integers(0, 3, 400)  # stumps on 3 noisy classes err > 1/2 once reweighted
    y[X[:, 0] > 0.5] = 0
    y[X[:, 1] > 1.2] = 1
    task = np.zeros(400, int)
    model = MTAdaBoost(base=MTDecisionTree(max_depth=1), n_estimators=20).fit(X, y, task)
    assert model.n_estimators_ == 2  # round 3's stump has error 0.503
    assert len(model.train_errors_) == len(model.betas_) == 2
    assert np.all(model.estimator_errors_ < 0.5)
    assert model.rejected_error_ > 0.5
    assert "1/2" in model.stop_reason_
    with pytest.raises(ValueError, match="first weak learner"):
        MTAdaBoost(base=MTDecisionTree(max_depth=1)).fit(X, rng.integers(0, 5, 400), task)


def test_live_views_update_in_place_from_snapshots():
    from explorer.data import MultiTaskDataset
    from explorer.solvers.tree_split import relative_gains
    from explorer.viz.tree import (
        BoostingView,
        GainBars,
        PartitionView,
        TreeDiagram,
        theorem1_boxplot,
    )

    X, y, task = _two_tasks()
    tree = MTDecisionTree(max_depth=3)
    names = ["T0", "T1"]
    snapshots = list(tree.fit_iter(X, y, task))
    diagram = TreeDiagram(names, tree.classes_, ["x0", "x1"])
    partition = PartitionView(X, y, task, tree.classes_, names)
    bars = GainBars(names)
    sizes = []
    for snap in snapshots:
        diagram.update(snap.info["tree"], highlight=snap.info["node"]["node"])
        partition.update(snap.info["tree"])
        bars.update(snap.info["node"])
        sizes.append(len(diagram.nodes.data["x"]))
    assert sizes[0] == 3 and sizes[-1] == tree.n_nodes_  # root + 2 pending, then all
    assert " <= " in diagram.nodes.data["full"][0] and "≤" in diagram.nodes.data["text"][0]
    assert len(diagram.leaves.data["x"]) == sum(len(n["early_leaves"]) for n in tree.nodes_)
    # The full partition covers every training point's region with a decided label.
    assert all(len(src.data["left"]) > 0 for src in partition.sources[:len(names)])
    bars.update(snapshots[0].info["node"])
    assert max(bars.source.data["line"]) == 3
    model = MTAdaBoost(base=MTDecisionTree(max_depth=2), n_estimators=3)
    curves = BoostingView()
    curves.set_data(MultiTaskDataset(X, y, task, task_names=names))
    rounds = list(model.fit_iter(X, y, task))
    for snap in rounds:
        curves.update(snap)
    assert curves.error_source.data["round"] == [s.info["round"] for s in rounds]
    np.testing.assert_allclose(curves.error_source.data["train_1"],
                               np.asarray(model.train_errors_)[:, 1])
    np.testing.assert_allclose(curves.beta_source.data["beta"], model.betas_)
    ratios = relative_gains(20, random_state=0)
    assert all(np.all(r["ig_m"] >= 1 - 1e-9) for r in ratios.values())  # Theorem 1
    assert theorem1_boxplot(ratios) is not None


def test_mtadaboost_ig_m_beats_single_task_adaboost_on_digits_one_vs_rest():
    # ~100 training examples per task (Table 3's protocol); depth-3 trees and 30 rounds keep
    # the 10 splits at ~8 s while leaving the weak learners weak.
    rows = []
    for seed in range(10):
        # Each task: its own 500 images (half positives); 20% = 100 per task for training.
        data = load_digits_tasks("one-vs-rest", max_per_task=500, random_state=seed)
        train, test = data.split(0.2, random_state=seed)
        assert np.all(train.task_sizes == 100)
        base = MTDecisionTree(criterion="ig_m", max_depth=3)
        mt = MTAdaBoost(base=base, n_estimators=30).fit(train.X, train.y, train.task)
        st = SingleTaskAdaBoost(base=base, n_estimators=30).fit(train.X, train.y, train.task)
        rows.append((mt.score_per_task(test.X, test.y, test.task),
                     st.score_per_task(test.X, test.y, test.task)))
    mt_acc = np.mean([r[0] for r in rows], axis=0)
    st_acc = np.mean([r[1] for r in rows], axis=0)
    print("\ndigits one-vs-rest, 100 train/task, 10 splits: accuracy per task")
    print("task  AdaBoost.M1 (single-task)  MT-Adaboost IG_M")
    for t in range(10):
        print(f"{t} vs rest  {st_acc[t]:.4f}                 {mt_acc[t]:.4f}")
    print(f"avg   {st_acc.mean():.4f}                     {mt_acc.mean():.4f}")
    assert mt_acc.mean() > st_acc.mean()


def test_ig_m_trees_at_least_as_accurate_as_single_task_trees_on_local_relatedness():
    scores = {name: [] for name in ("single-task", "IG_J", "IG_U", "IG_M")}
    for seed in range(10):
        data = make_local_relatedness(n_samples_per_task=500, label_noise=0.1, random_state=seed)
        train, test = data.split(0.5, random_state=seed)
        models = {"single-task": SingleTaskTree(max_depth=6),
                  "IG_J": MTDecisionTree(criterion="ig_j", max_depth=6),
                  "IG_U": MTDecisionTree(criterion="ig_u", max_depth=6),
                  "IG_M": MTDecisionTree(criterion="ig_m", max_depth=6)}
        for name, model in models.items():
            model.fit(train.X, train.y, train.task)
            scores[name].append(model.score_per_task(test.X, test.y, test.task))
    table = {name: np.mean(v, axis=0) for name, v in scores.items()}
    print("\nlocal relatedness, depth-6 trees, 10 splits: test accuracy")
    print("task   " + "  ".join(f"{name:>11s}" for name in table))
    for t in range(2):
        print(f"T{t}     " + "  ".join(f"{acc[t]:11.4f}" for acc in table.values()))
    print("avg    " + "  ".join(f"{acc.mean():11.4f}" for acc in table.values()))
    assert table["IG_M"].mean() >= table["single-task"].mean()


def test_single_task_baselines_predict_the_dtype_of_y():
    X, y, task = _two_tasks()
    codes = np.unique(y, return_inverse=True)[1].ravel()
    for labels in (y, codes.astype(np.int64), codes.astype(np.float64)):
        tree = SingleTaskTree(max_depth=2).fit(X, labels, task)
        boost = SingleTaskAdaBoost(n_estimators=2).fit(X, labels, task)
        assert tree.predict(X, task).dtype == boost.predict(X, task).dtype == labels.dtype
