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


# ---------------------------------------------------------------------- School
@pytest.fixture(scope="module")
def school():
    from explorer.data import load_school

    return load_school()


def test_school_is_the_benchmark_of_the_rmtfl_paper(school):
    # Sec. 6.1: 15362 students of 139 schools, 27 attributes once the bias column is left out
    assert school.kind == "regression"
    assert (school.n_samples, school.n_tasks, school.n_features) == (15362, 139, 27)
    assert school.task_names[0] == "school 0" and school.task_names[-1] == "school 138"
    assert school.feature_names == [f"x{j}" for j in range(27)]
    assert school.task_sizes.min() == 22 and school.task_sizes.max() == 251
    assert school.y.min() == 1 and school.y.max() == 70
    # no constant column is left; the dropped one is in the span of the year indicators
    assert np.all(np.ptp(school.X, axis=0) > 0)
    np.testing.assert_array_equal(school.X[:, :3].sum(axis=1), 1.0)


def test_school_matches_the_shipped_csv_row_for_row(school):
    import gzip

    import pandas as pd

    from explorer.data.real import SCHOOL_FILE, shipped_file

    with gzip.open(shipped_file(SCHOOL_FILE)) as stream:
        frame = pd.read_csv(stream)
    assert (frame["x27"] == 1).all()
    np.testing.assert_array_equal(school.X, frame[[f"x{j}" for j in range(27)]].to_numpy())
    np.testing.assert_array_equal(school.y, frame["y"].to_numpy())
    np.testing.assert_array_equal(school.task, frame["task"].to_numpy())


def test_school_csv_round_trip_is_exact(school):
    from explorer.data import read_csv

    text = school.to_csv()
    back = read_csv(text)
    assert back.kind == "regression" and back.task_names == school.task_names
    assert back.feature_names == school.feature_names
    for name in ("X", "y", "task"):
        np.testing.assert_array_equal(getattr(back, name), getattr(school, name))
    assert back.to_csv() == text


def test_school_in_the_catalog_and_the_cli(tmp_path, capsys):
    from explorer.__main__ import main
    from explorer.data import CATALOG, make_dataset

    assert CATALOG["school"].label == "School: 139 London schools"
    assert make_dataset("school").n_tasks == 139
    with pytest.raises(ValueError, match="not parameters"):
        make_dataset("school", {"n_tasks": 5})
    assert main(["generate", "--list"]) == 0
    assert "school: School: 139 London schools" in capsys.readouterr().out
    out = tmp_path / "school.csv"
    assert main(["generate", "school", "--out", str(out)]) == 0
    assert "15362 rows, 139 tasks" in capsys.readouterr().out
