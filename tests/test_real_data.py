import numpy as np
import pytest

from explorer.data import load_diabetes_tasks, load_digits_tasks, load_toy_pair


def test_digits_protocols():
    d = load_digits_tasks("pairs", n_tasks=3, random_state=0)
    assert d.task_names[0] == "T0 1 vs 7"
    d = load_digits_tasks(n_tasks=10, max_per_task=40, random_state=0)
    assert d.n_tasks == 10 and all(set(d.task_data(t)[1]) == {0, 1} for t in range(10))
    with pytest.raises(ValueError, match="protocol"):
        load_digits_tasks("all")


def test_toy_pair_relations():
    rel = load_toy_pair("related", random_state=0)
    neg = load_toy_pair("negated", random_state=0)
    np.testing.assert_array_equal(rel.task_data(1)[1], 1 - neg.task_data(1)[1])
    np.testing.assert_array_equal(rel.task_data(0)[1], neg.task_data(0)[1])
    un = load_toy_pair("unrelated", random_state=0)
    agree = np.mean(un.task_data(0)[1] == rel.task_data(0)[1])
    assert 0.4 < agree < 0.6
    with pytest.raises(ValueError, match="relation"):
        load_toy_pair("cousins")


def test_diabetes():
    d = load_diabetes_tasks("sex_age")
    assert d.n_tasks == 4 and d.kind == "regression" and d.n_samples == 442


@pytest.mark.parametrize("relation, value", [("related", 1), ("negated", -1), ("unrelated", 0)])
def test_toy_pair_truth(relation, value):
    d = load_toy_pair(relation, random_state=0)
    np.testing.assert_array_equal(d.truth["task_relation"], [[1, value], [value, 1]])
    train, test = d.split(0.5, random_state=0)
    np.testing.assert_array_equal(test.truth["task_relation"], d.truth["task_relation"])


def test_real_data_round_trips_through_csv():
    from explorer.data import read_csv

    d = load_diabetes_tasks()
    back = read_csv(d.to_csv())
    assert back.kind == "regression" and back.task_names == d.task_names
    np.testing.assert_array_equal(back.y, d.y)
