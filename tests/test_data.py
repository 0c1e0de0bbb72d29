import io

import numpy as np
import pandas as pd
import pytest

from explorer.data import MultiTaskDataset, make_task_family, read_csv
from explorer.data.validation import check_multitask

X2 = [[0.0, 1.0], [1.0, 2.0]]


# ---------------------------------------------------------------------- bad input -> ValueError
@pytest.mark.parametrize("kw, kind, message", [
    # NaN / inf in X: names X, the value and where it is
    ({"X": [[np.nan, 1.0], [1.0, 2.0]]}, "classification", r"X must be finite; got nan at row 0"),
    ({"X": [[0.0, 1.0], [1.0, np.inf]]}, "classification",
     r"X must be finite; got inf at row 1, column 1"),
    ({"X": [[0.0, 1.0], [-np.inf, 2.0]]}, "regression", r"X must be finite; got -inf at row 1"),
    # NaN / inf in y
    ({"y": [0.0, np.nan]}, "regression", r"y must be finite; got nan at row 1"),
    ({"y": [np.inf, 0.0]}, "regression", r"y must be finite; got inf at row 0"),
    ({"y": [0.0, np.nan]}, "classification", r"y must hold class labels; got nan at row 1"),
    ({"y": ["a", "b"]}, "regression", r"y must hold numbers for regression; got dtype <U1"),
    # length mismatch
    ({"y": [0, 1, 1]}, "classification", r"y has 3 entries but X has 2 rows"),
    ({"y": [0]}, "classification", r"y has 1 entries but X has 2 rows"),
    ({"task": [0, 0, 0]}, "classification", r"task has 3 entries but X has 2 rows"),
    # empty task: ids skip one
    ({"X": [[0.0], [1.0], [2.0]], "y": [0, 1, 0], "task": [0, 2, 2]}, "classification",
     r"every task 0\.\.2 needs at least one example; task 1 has none"),
    # non-integer task ids
    ({"task": [0.5, 0]}, "classification", r"task must hold integer task ids 0\.\.m-1; got 0\.5"),
    ({"task": [0, np.nan]}, "classification", r"task must hold integer task ids 0\.\.m-1; got nan"),
    ({"task": ["a", "b"]}, "classification", r"task must hold integer task ids .*dtype <U1 .*'a'"),
    ({"task": [True, False]}, "classification", r"task must hold integer task ids .*dtype bool"),
    # negative task ids
    ({"task": [0, -1]}, "classification", r"task ids must be non-negative integers; got -1"),
    ({"task": [-3, 0]}, "regression", r"task ids must be non-negative integers; got -3"),
    # wrong dimensionality
    ({"X": [1.0, 2.0]}, "classification", r"X must be a 2-D array .*got shape \(2,\)"),
    ({"X": np.zeros((2, 2, 2))}, "classification",
     r"X must be a 2-D array .*got shape \(2, 2, 2\)"),
    ({"y": [[0], [1]]}, "classification", r"y must be a 1-D array .*got shape \(2, 1\)"),
    ({"task": [[0], [0]]}, "classification", r"task must be a 1-D array .*got shape \(2, 1\)"),
    # no rows, no features, non-numeric X
    ({"X": np.zeros((0, 2)), "y": [], "task": []}, "classification",
     r"X must have at least one row; got shape \(0, 2\)"),
    ({"X": np.zeros((2, 0))}, "classification",
     r"X must have at least one feature; got shape \(2, 0\)"),
    ({"X": [["a", 1.0], [1.0, 2.0]]}, "classification", r"X must be numeric"),
])
def test_bad_inputs_raise_with_message(kw, kind, message):
    args = {"X": X2, "y": [0, 1], "task": [0, 0], **kw}
    with pytest.raises(ValueError, match=message):
        MultiTaskDataset(args["X"], args["y"], args["task"], kind=kind)


def test_bad_inputs_name_the_caller():
    with pytest.raises(ValueError, match=r"^MultiTaskDataset: X must be finite"):
        MultiTaskDataset([[np.nan]], [0], [0])


@pytest.mark.parametrize("y, task, message", [
    ([0, 0, 0, 1], [0, 0, 1, 1], r"task 0 has 1 class\(es\) \(\[0\]\); classification needs "
                                 r"at least 2 classes in every task"),
    (["a", "b", "b", "b"], [0, 0, 1, 1], r"task 1 has 1 class\(es\) \(\['b'\]\)"),
])
def test_one_class_task_where_classification_needs_two(y, task, message):
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match=message):
        check_multitask(X, y, task, kind="classification", min_classes=2, who="Demo")
    # the dataset itself accepts it (a task's label set may be a single class)
    assert MultiTaskDataset(X, y, task).n_tasks == 2


def test_one_class_task_rejected_by_a_classifier():
    from explorer.models.regularized import RegularizedMTL

    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match=r"RegularizedMTL: task 1 has 1 class"):
        RegularizedMTL(max_iter=5).fit(X, [0, 1, 1, 1], [0, 0, 1, 1])


@pytest.mark.parametrize("kw, message", [
    ({"task_names": ["a", "b", "c"]},
     r"every task 0\.\.2 needs at least one example; task 1 has none "
     r"\(tasks without examples: \[1, 2\]\)"),
    ({"feature_names": ["x"]}, r"feature_names must have 2 entries; got 1"),
    ({"feature_names": ["x", "x"]}, r"feature_names must be distinct; got \['x'\] more than once"),
    ({"task_features": [[1.0], [2.0]]}, r"task_features must have shape \(n_tasks=1, "
                                        r"n_task_features\); got shape \(2, 1\)"),
    ({"task_features": [[np.nan]]}, r"task_features must be finite"),
    ({"truth": {"coef": np.zeros((3, 1))}},
     r"truth\['coef'\] must have shape \(n_features=2, n_tasks=1\), i.e. \(2, 1\); "
     r"got shape \(3, 1\)"),
    ({"truth": [1]}, r"truth must be a dict; got list"),
    ({"kind": "clustering"}, r"kind must be one of .*; got 'clustering'"),
])
def test_bad_metadata(kw, message):
    with pytest.raises(ValueError, match=message):
        MultiTaskDataset(X2, [0, 1], [0, 0], **kw)


# ---------------------------------------------------------------------- split
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.7, 0.9])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_split_stratified_every_class_of_every_task_in_train(fraction, seed):
    d = make_task_family(("related", "negated", "unrelated"), n_samples_per_task=12,
                         random_state=seed)
    # make task 1 have a rare class: a single example of a third label
    y = d.y.copy()
    y[np.flatnonzero(d.task == 1)[0]] = 7
    d = MultiTaskDataset(d.X, y, d.task, task_names=d.task_names)
    train, test = d.split(fraction, random_state=seed)
    assert train.n_samples + test.n_samples == d.n_samples
    assert train.n_tasks == test.n_tasks == d.n_tasks
    for t in range(d.n_tasks):
        labels, counts = np.unique(d.task_data(t)[1], return_counts=True)
        assert set(train.task_data(t)[1]) == set(labels)       # every class in train
        assert set(test.task_data(t)[1]) == set(labels[counts >= 2])  # and in test if >= 2
        assert test.task_sizes[t] >= 1
    np.testing.assert_array_equal(np.sort(np.concatenate([train.y, test.y])), np.sort(d.y))


def test_split_is_reproducible_and_keeps_truth():
    d = make_task_family(n_samples_per_task=30, random_state=0)
    a, _ = d.split(0.7, random_state=3)
    b, _ = d.split(0.7, random_state=3)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.truth["task_relation"], d.truth["task_relation"])


@pytest.mark.parametrize("fraction, message", [
    (0.0, r"train_fraction must be in the range \(0, 1\); got 0\.0"),
    (1.0, r"train_fraction must be in the range \(0, 1\); got 1\.0"),
    ("0.5", r"train_fraction must be a finite number; got '0\.5'"),
    (np.nan, r"train_fraction must be a finite number; got nan"),
])
def test_split_bad_fraction(fraction, message):
    d = make_task_family(n_samples_per_task=10, random_state=0)
    with pytest.raises(ValueError, match=message):
        d.split(fraction)


def test_split_needs_two_examples_per_task():
    d = MultiTaskDataset([[0.0], [1.0], [2.0]], [0, 1, 0], [0, 0, 1], task_names=["a", "b"])
    with pytest.raises(ValueError, match=r"split needs at least 2 examples in every task; "
                                         r"task 1 \('b'\) has 1"):
        d.split(0.5)


# ---------------------------------------------------------------------- subset
def test_subset_renumbers_in_requested_order():
    d = make_task_family(("related", "negated", "unrelated"), n_samples_per_task=10, random_state=0)
    sub = d.subset([2, 0])
    assert sub.n_tasks == 2
    assert sub.task_names == [d.task_names[2], d.task_names[0]]
    np.testing.assert_array_equal(sub.task_data(0)[0], d.task_data(2)[0])
    np.testing.assert_array_equal(sub.task_data(1)[1], d.task_data(0)[1])
    np.testing.assert_array_equal(sub.truth["task_relation"],
                                  d.truth["task_relation"][np.ix_([2, 0], [2, 0])])
    assert sub.feature_names == d.feature_names and sub.kind == d.kind


@pytest.mark.parametrize("tasks, message", [
    ([], r"tasks must be a non-empty list of task ids; got \[\]"),
    ([[0, 1]], r"tasks must be a non-empty list of task ids; got \[\[0, 1\]\]"),
    ([0, 9], r"tasks must be integer ids in 0\.\.3; got \[0, 9\]"),
    ([-1], r"tasks must be integer ids in 0\.\.3; got \[-1\]"),
    ([0.5], r"tasks must be integer ids in 0\.\.3; got \[0\.5\]"),
    ([1, 1], r"tasks must not repeat a task id; got \[1, 1\]"),
])
def test_subset_bad_tasks(tasks, message):
    d = make_task_family(n_samples_per_task=10, random_state=0)
    with pytest.raises(ValueError, match=message):
        d.subset(tasks)


# ---------------------------------------------------------------------- frames and CSV
@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_frame_roundtrip(kind):
    d = make_task_family(n_samples_per_task=10, n_features=3, kind=kind, random_state=0)
    df = d.to_frame()
    assert list(df.columns) == [*d.feature_names, "task", "y"]
    back = MultiTaskDataset.from_frame(df)
    np.testing.assert_allclose(back.X, d.X)
    np.testing.assert_array_equal(back.y, d.y)
    np.testing.assert_array_equal(back.task, d.task)
    assert back.task_names == d.task_names
    assert back.feature_names == d.feature_names
    assert back.kind == kind


def test_from_frame_integer_task_ids_keep_numeric_order():
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0], "task": [10, 2, 10], "y": [0, 1, 1]})
    d = MultiTaskDataset.from_frame(df)
    assert d.task_names == ["2", "10"]
    np.testing.assert_array_equal(d.task, [1, 0, 1])


@pytest.mark.parametrize("df, kw, message", [
    (pd.DataFrame({"x": [1.0], "y": [0]}), {}, r"task='task' is not a column of the table; "
                                               r"columns are \['x', 'y'\]"),
    (pd.DataFrame({"x": [1.0], "t": [0]}), {"task": "t"}, r"target='y' is not a column"),
    (pd.DataFrame({"x": [1.0], "task": [0], "y": [0]}), {"features": ["x", "z"]},
     r"features \['z'\] are not columns"),
    (pd.DataFrame({"task": [0], "y": [0]}), {}, r"at least one feature column"),
    (pd.DataFrame({"x": ["a"], "task": [0], "y": [0]}), {},
     r"feature columns must be numeric; \['x'\] are not: column 'x', row 1 under the "
     r"header, holds 'a'"),
    (pd.DataFrame({"x": [1.0, 2.0], "task": [0, None], "y": [0, 1]}), {},
     r"task column 'task' has missing values"),
    (pd.DataFrame({"x": [1.0, 2.0], "task": [0, 0], "y": [0, None]}), {},
     r"target column 'y' has missing values"),
    ([[1.0]], {}, r"df must be a pandas DataFrame; got list"),
])
def test_from_frame_bad_tables(df, kw, message):
    with pytest.raises(ValueError, match=message):
        MultiTaskDataset.from_frame(df, **kw)


@pytest.mark.parametrize("source", ["buffer", "bytes", "path"])
def test_csv_roundtrip(source, tmp_path):
    d = make_task_family(n_samples_per_task=10, random_state=0)
    text = d.to_csv()
    if source == "buffer":
        arg = io.StringIO(text)
    elif source == "bytes":
        arg = text.encode()
    else:
        arg = tmp_path / "data.csv"
        arg.write_text(text)
    back = read_csv(arg)
    np.testing.assert_allclose(back.X, d.X)
    np.testing.assert_array_equal(back.y, d.y)
    np.testing.assert_array_equal(back.task, d.task)
    assert back.task_names == d.task_names


@pytest.mark.parametrize("source", ["buffer", "bytes", "path"])
def test_read_csv_size_limit(source, tmp_path):
    d = make_task_family(n_samples_per_task=10, random_state=0)
    text = d.to_csv()
    limit = len(text.encode()) - 1
    if source == "buffer":
        arg = io.StringIO(text)
    elif source == "bytes":
        arg = text.encode()
    else:
        arg = tmp_path / "data.csv"
        arg.write_text(text)
    size = len(text.encode())
    got = f"at least {limit + 1}" if source == "buffer" else f"{size}"
    message = rf"over the size limit max_bytes={limit}; got {got} bytes"
    with pytest.raises(ValueError, match=message):
        read_csv(arg, max_bytes=limit)
    assert read_csv(arg if source != "buffer" else io.StringIO(text),
                    max_bytes=limit + 1).n_samples == d.n_samples


@pytest.mark.parametrize("text, message", [
    ("", r"the CSV data is empty"),
    ("  \n\n", r"the CSV data is empty"),
    ("x0,y\n1.0,0\n", r"task='task' is not a column of the table; columns are \['x0', 'y'\]"),
    ("x0,task\n1.0,0\n", r"target='y' is not a column of the table"),
    ("x0,x1,task,y\n1.0,abc,0,1\n", r"feature columns must be numeric; \['x1'\] are not: "
                                    r"column 'x1', row 1 under the header, holds 'abc'"),
    ("x0,task,y\n1.0,0,1\n2.0,0,1,5,6\n", r"the CSV data could not be parsed"),
    ("x0,task,y\n", r"the table has no rows \(only a header\?\); got 0 rows with columns "
                     r"\['x0', 'task', 'y'\]"),
    ("x0,task,y\nnan,0,1\n", r"X must be finite; got nan at row 0, column 0"),
])
def test_read_csv_malformed(text, message):
    with pytest.raises(ValueError, match=message):
        read_csv(io.StringIO(text))


def test_a_malformed_csv_names_the_column_the_row_and_the_offending_value():
    """A teacher's file with one bad cell: the message quotes "hello", not the column's
    first (valid) value, and says where it is; a missing cell above it does not count."""
    data = make_task_family(n_samples_per_task=5, random_state=0)
    lines = data.to_csv().splitlines()            # the JSON line, the header, the rows
    first = lines[2].split(",")
    first[1] = ""                                  # row 1: x1 missing
    lines[2] = ",".join(first)
    bad = lines[6].split(",")
    bad[1] = "hello"                               # row 5: x1 is text
    lines[6] = ",".join(bad)
    with pytest.raises(ValueError) as error:
        read_csv("\n".join(lines) + "\n")
    message = str(error.value)
    assert message == ("feature columns must be numeric; ['x1'] are not: column 'x1', row 5 "
                       "under the header, holds 'hello'.")
    frame = pd.DataFrame({"x": [1.5, 2.5, 3.5], "f": ["0.1", "0.2", "n/a"],
                          "task": [0, 0, 1], "y": [0, 1, 1]})
    with pytest.raises(ValueError, match=r"\['f'\] are not: column 'f', row 3 under the "
                                         r"header, holds 'n/a'"):
        MultiTaskDataset.from_frame(frame)


def test_read_csv_bad_argument():
    with pytest.raises(ValueError, match=r"path_or_buffer must be a path, bytes or a file "
                                         r"object; got int"):
        read_csv(42)


# ---------------------------------------------------------------------- truth validation
def _small(truth=None, **kw):
    X = np.arange(12.0).reshape(6, 2)
    return MultiTaskDataset(X, [0, 1, 0, 1, 0, 1], [0, 0, 1, 1, 2, 2], truth=truth, **kw)


@pytest.mark.parametrize("truth, message", [
    ({"bogus": 1}, r"truth has an unknown key 'bogus'; known keys are \['P', 'Q', 'clusters', "
                   r"'coef', 'local_region', 'outlier_tasks', 'shared_features', "
                   r"'task_relation', 'task_similarity'\]"),
    ({"task_relation": np.eye(2)}, r"truth\['task_relation'\] must have shape "
                                   r"\(n_tasks=3, n_tasks=3\), i.e. \(3, 3\); got shape \(2, 2\)"),
    ({"task_relation": np.zeros((3, 3))}, r"must have \+1 on its diagonal .*got \[0\.0, 0\.0"),
    ({"task_relation": 2 * np.eye(3)}, r"truth\['task_relation'\] must hold only -1, 0 and \+1; "
                                       r"got 2\.0"),
    ({"task_relation": np.triu(np.ones((3, 3)) - 2 * np.eye(3)) + 2 * np.eye(3)},
     r"truth\['task_relation'\] must be symmetric"),
    ({"task_similarity": np.full((3, 3), 1.5)}, r"truth\['task_similarity'\] must be in "
                                                r"\[-1, 1\]; got 1\.5"),
    ({"task_similarity": np.full((3, 3), np.nan)}, r"truth\['task_similarity'\] must be finite"),
    ({"outlier_tasks": [True, False]}, r"truth\['outlier_tasks'\] must have shape "
                                       r"\(n_tasks=3,\), i\.e\. \(3,\); got shape \(2,\)"),
    ({"outlier_tasks": [0, 2, 1]}, r"truth\['outlier_tasks'\] must be a boolean mask \(or 0/1\); "
                                   r"got 2"),
    ({"shared_features": [True, False, True]}, r"truth\['shared_features'\] must have shape "
                                               r"\(n_features=2,\)"),
    ({"clusters": [0, -1, 1]}, r"truth\['clusters'\] must hold non-negative integer ids"),
    ({"clusters": [0, 0.5, 1]}, r"truth\['clusters'\] must hold non-negative integer ids"),
    ({"coef": np.zeros((2, 3)) + np.inf}, r"truth\['coef'\] must be finite; got inf"),
    ({"P": np.zeros((3, 2))}, r"truth\['P'\] must have shape \(n_features=2, n_tasks=3\)"),
    ({"local_region": [True] * 5}, r"truth\['local_region'\] must have shape "
                                   r"\(n_samples=6,\), i\.e\. \(6,\); got shape \(5,\)"),
    ({"coef": [["a"] * 3] * 2}, r"truth\['coef'\] must be numeric; got dtype <U1"),
])
def test_bad_truth(truth, message):
    with pytest.raises(ValueError, match=message):
        _small(truth)


def test_truth_is_normalised_and_read_only():
    d = _small({"outlier_tasks": [0, 1, 0], "clusters": [0.0, 1.0, 1.0],
                "task_relation": np.eye(3)})
    assert d.truth["outlier_tasks"].dtype == bool
    assert d.truth["clusters"].dtype.kind == "i"
    with pytest.raises(ValueError, match="read-only"):
        d.truth["task_relation"][0, 1] = 1


def test_subset_follows_every_per_task_truth_key_and_keeps_per_feature_ones():
    rng = np.random.default_rng(0)
    coef = rng.normal(size=(2, 3))
    truth = {"task_relation": np.array([[1, -1, 0], [-1, 1, 0], [0, 0, 1]]),
             "task_similarity": np.corrcoef(coef.T), "outlier_tasks": [True, False, False],
             "shared_features": [True, False], "clusters": [2, 0, 1], "coef": coef,
             "P": coef, "Q": np.zeros((2, 3)), "local_region": [1, 0, 0, 1, 1, 0]}
    d = _small(truth, task_features=[[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]],
               task_names=["a", "b", "c"])
    sub = d.subset([2, 0])
    pick = [2, 0]
    np.testing.assert_array_equal(sub.truth["task_relation"], [[1, 0], [0, 1]])
    np.testing.assert_allclose(sub.truth["task_similarity"],
                               d.truth["task_similarity"][np.ix_(pick, pick)])
    np.testing.assert_array_equal(sub.truth["outlier_tasks"], [False, True])
    np.testing.assert_array_equal(sub.truth["clusters"], [1, 2])
    for key in ("coef", "P", "Q"):
        np.testing.assert_allclose(sub.truth[key], d.truth[key][:, pick])
    np.testing.assert_array_equal(sub.truth["shared_features"], [True, False])
    # rows of task 2 (rows 4, 5) then task 0 (rows 0, 1)
    np.testing.assert_array_equal(sub.truth["local_region"], [True, False, True, False])
    np.testing.assert_array_equal(sub.task_features, [[3.0, 30.0], [1.0, 10.0]])
    assert sub.task_names == ["c", "a"]


def test_split_cuts_per_sample_truth_and_keeps_task_features():
    d = make_task_family(n_samples_per_task=20, random_state=0)
    region = np.arange(d.n_samples) % 3 == 0
    tf = np.arange(2.0 * d.n_tasks).reshape(d.n_tasks, 2)
    d = MultiTaskDataset(d.X, d.y, d.task, task_names=d.task_names, task_features=tf,
                         truth={**d.truth, "local_region": region})
    train, test = d.split(0.6, random_state=1)
    for part in (train, test):
        rows = [int(np.flatnonzero((d.X == x).all(1) & (d.task == t))[0])
                for x, t in zip(part.X, part.task, strict=True)]
        np.testing.assert_array_equal(part.truth["local_region"], region[rows])
        np.testing.assert_array_equal(part.task_features, tf)
        np.testing.assert_array_equal(part.truth["task_similarity"], d.truth["task_similarity"])


@pytest.mark.parametrize("tf, message", [
    ([[1.0], [2.0]], r"task_features must have shape \(n_tasks=3, n_task_features\); "
                     r"got shape \(2, 1\)"),
    ([1.0, 2.0, 3.0], r"task_features must have shape \(n_tasks=3, n_task_features\); "
                      r"got shape \(3,\)"),
    ([[1.0], [np.inf], [0.0]], r"task_features must be finite; got inf at task 1, column 0"),
    ([["a"], ["b"], ["c"]], r"task_features must be numeric"),
])
def test_bad_task_features(tf, message):
    with pytest.raises(ValueError, match=message):
        _small(task_features=tf)


# ---------------------------------------------------------------------- round trips
def _assert_same(back, d):
    np.testing.assert_array_equal(back.X, d.X)
    np.testing.assert_array_equal(back.y, d.y)
    assert back.y.dtype.kind == d.y.dtype.kind
    np.testing.assert_array_equal(back.task, d.task)
    assert back.task_names == d.task_names
    assert back.feature_names == d.feature_names
    assert back.kind == d.kind
    if d.task_features is None:
        assert back.task_features is None
    else:
        np.testing.assert_array_equal(back.task_features, d.task_features)


def _catalog_cases():
    from explorer.data.catalog import CATALOG
    return sorted(CATALOG)


@pytest.mark.parametrize("name", _catalog_cases())
def test_every_catalog_dataset_survives_the_csv_and_frame_round_trip(name):
    from explorer.data.catalog import make_dataset

    d = make_dataset(name, random_state=0)
    _assert_same(read_csv(d.to_csv()), d)
    _assert_same(read_csv(io.StringIO(d.to_csv())), d)
    _assert_same(MultiTaskDataset.from_frame(d.to_frame()), d)
    # a shuffled, subset dataset too: task order is not the order of first appearance
    sub = d.subset(list(range(d.n_tasks))[::-1])
    _assert_same(read_csv(sub.to_csv().encode()), sub)


def test_diabetes_comes_back_as_regression():
    from explorer.data import load_diabetes_tasks

    d = load_diabetes_tasks("sex_age")
    back = read_csv(d.to_csv())
    assert back.kind == "regression" and back.n_tasks == 4
    # the explicit argument wins over the header
    assert read_csv(d.to_csv(), kind="classification").kind == "classification"


def test_csv_format_header_and_task_feature_columns(tmp_path):
    d = _small(task_features=[[1.0], [2.0], [3.0]], task_names=["a", "b", "c"],
               feature_names=["u", "v"], kind="regression")
    text = d.to_csv()
    lines = text.splitlines()
    assert lines[0] == '# mtl-explorer {"kind": "regression", "task_names": ["a", "b", "c"]}'
    assert lines[1] == "u,v,tf_0,task,y"
    assert lines[2] == "0.0,1.0,1.0,a,0.0"
    d.to_csv(tmp_path / "d.csv")
    _assert_same(read_csv(tmp_path / "d.csv"), d)
    buffer = io.StringIO()
    d.to_csv(buffer)
    assert buffer.getvalue() == text


def test_csv_without_header_still_reads_and_other_comment_lines_are_skipped():
    back = read_csv(io.StringIO("# my data\nx,tf_a,task,y\n1.0,5,a,0\n2.0,5,a,1\n3.0,6,b,0\n"))
    assert back.kind == "classification" and back.task_names == ["a", "b"]
    np.testing.assert_array_equal(back.task_features, [[5.0], [6.0]])
    assert back.feature_names == ["x"]


@pytest.mark.parametrize("text, message", [
    ("x,tf_0,task,y\n1.0,5,a,0\n2.0,6,a,1\n",
     r"task feature column 'tf_0' must have one value per task; task 'a' has 5\.0 and 6\.0 "
     r"\(row 1\)"),
    ("x,tf_0,task,y\n1.0,,a,0\n2.0,6,a,1\n", r"task feature column 'tf_0' must be finite"),
    ("x,tf_0,task,y\n1.0,u,a,0\n", r"task feature columns must be numeric; \['tf_0'\]"),
    ('# mtl-explorer {"kind": "clustering"}\nx,task,y\n1.0,a,0\n',
     r"kind must be one of .*; got 'clustering'"),
    ("# mtl-explorer {kind}\nx,task,y\n1.0,a,0\n",
     r"the CSV header line must be '# mtl-explorer ' followed by a JSON object"),
    ('# mtl-explorer {"colour": 1}\nx,task,y\n1.0,a,0\n',
     r"the CSV header line has unknown keys \['colour'\]"),
    ('# mtl-explorer {"task_names": "a"}\nx,task,y\n1.0,a,0\n',
     r"task_names must be a list of strings"),
])
def test_csv_metadata_and_task_feature_errors(text, message):
    with pytest.raises(ValueError, match=message):
        read_csv(io.StringIO(text))


def test_recorded_task_order_survives_edits():
    # rows of a recorded task deleted, a new task added: order kept, no empty task
    text = ('# mtl-explorer {"kind": "classification", "task_names": ["01", "a", "b"]}\n'
            "x,task,y\n1.0,b,0\n2.0,new,1\n3.0,01,0\n")
    back = read_csv(text)
    assert back.task_names == ["01", "b", "new"]
    np.testing.assert_array_equal(back.task, [1, 2, 0])


@pytest.mark.parametrize("kw, message", [
    ({"task_names": ["a"]}, r"task column 'task' has values \['b'\] that are not in "
                            r"task_names \['a'\]"),
    ({"task_names": ["a", "b", "c"]}, r"every task 0\.\.2 needs at least one example; "
                                      r"task 2 has none"),
    ({"task_names": ["a", "a"]}, r"task_names must not repeat a name"),
])
def test_from_frame_explicit_task_names_are_strict(kw, message):
    df = pd.DataFrame({"x": [1.0, 2.0], "task": ["a", "b"], "y": [0, 1]})
    with pytest.raises(ValueError, match=message):
        MultiTaskDataset.from_frame(df, **kw)
    assert MultiTaskDataset.from_frame(df, task_names=["b", "a"]).task.tolist() == [1, 0]


def test_read_csv_missing_path():
    with pytest.raises(ValueError, match=r"path_or_buffer: no CSV file at 'nope\.csv'"):
        read_csv("nope.csv")


def test_to_frame_refuses_feature_names_that_clash_with_its_columns():
    d = MultiTaskDataset(X2, [0, 1], [0, 0], feature_names=["task", "x"])
    with pytest.raises(ValueError, match=r"feature_names must not use .*got \['task'\]"):
        d.to_frame()
