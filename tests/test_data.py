import io

import numpy as np
import pytest

from explorer.data import MultiTaskDataset, make_task_family, read_csv


@pytest.mark.parametrize("kw, word", [
    ({"X": [[np.nan, 1.0], [1.0, 2.0]]}, "X"),
    ({"X": [[np.inf, 1.0], [1.0, 2.0]]}, "X"),
    ({"y": [0, 1, 1]}, "y"),
    ({"task": [0, -1]}, "task"),
    ({"task": [0.5, 0]}, "task"),
    ({"X": [1.0, 2.0]}, "X"),
])
def test_bad_inputs(kw, word):
    args = {"X": [[0.0, 1.0], [1.0, 2.0]], "y": [0, 1], "task": [0, 0], **kw}
    with pytest.raises(ValueError, match=word):
        MultiTaskDataset(args["X"], args["y"], args["task"])


def test_split_stratified_and_subset():
    d = make_task_family(n_samples=30, random_state=0)
    train, test = d.split(0.7, random_state=0)
    for t in range(d.n_tasks):
        assert set(train.task_data(t)[1]) == set(d.task_data(t)[1])
    sub = d.subset([0, 2])
    assert sub.n_tasks == 2


def test_csv_roundtrip():
    d = make_task_family(n_samples=10, random_state=0)
    text = d.to_csv()
    back = read_csv(io.StringIO(text))
    np.testing.assert_allclose(back.X, d.X)
    np.testing.assert_array_equal(back.y, d.y)
    np.testing.assert_array_equal(back.task, d.task)


def test_read_csv_malformed():
    with pytest.raises(ValueError):
        read_csv(io.StringIO("a,b\n1,2\n"))
