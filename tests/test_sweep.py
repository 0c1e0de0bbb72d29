"""``explorer.compare.sweep``: one estimator along one hyper-parameter (issue 42).

The outlier_tasks scenario (10 tasks, 100 features, 2 outlier tasks) is small enough that a
12-value, 3-trial sweep of rMTFL takes well under a second.
"""

from __future__ import annotations

import io
import itertools

import holoviews as hv
import numpy as np
import pandas as pd
import pytest

from explorer.compare import (
    ComparisonCancelled,
    SweepCancelled,
    SweepResult,
    compare,
    sweep,
)
from explorer.compare.sweep import FRAME_COLUMNS, MEAN, baseline_for, path_order
from explorer.data.catalog import load_preset, make_dataset
from explorer.data.dataset import MultiTaskDataset
from explorer.models import RegularizedMTL, RobustMTFL
from explorer.viz.sweep import report_html, sweep_plot


@pytest.fixture(scope="module")
def outliers():
    """The outlier_tasks scenario's data, as the app builds it."""
    preset = load_preset("outlier_tasks")
    return make_dataset(preset["dataset"], preset["params"], random_state=preset["data_seed"])


@pytest.fixture(scope="module")
def grid(outliers):
    """12 log-spaced values of lambda_columns, from its lambda_max down to 1% of it."""
    top = RobustMTFL().lambda_max(outliers.X, outliers.y, outliers.task)["lambda_columns"]
    return list(np.geomspace(1.0, 0.01, 12) * top)


@pytest.fixture(scope="module")
def path(outliers, grid):
    """The issue's sweep: 12 values, 3 trials, 3-fold inner CV."""
    return sweep(RobustMTFL(), outliers, "lambda_columns", grid, n_trials=3, cv=3)


def _means(result, quantity):
    return result.curve(quantity)["mean"].to_numpy()


def test_frame_is_tidy_with_the_quantities_in_the_users_order(path, outliers, grid):
    frame = path.frame
    assert list(frame.columns) == FRAME_COLUMNS
    assert frame["trial"].dtype == np.int64 and frame["value"].dtype == np.float64
    assert path.param == "lambda_columns" and path.values == grid
    assert path.truth_keys == ["P", "Q", "coef", "outlier_tasks", "shared_features"]
    expected = {"test_error", "baseline_error", "outliers:precision", "outliers:recall",
                "features:precision", "features:recall", "features:kept", "fit_time",
                "cv_choice"} | {f"agreement:{k}:{f}" for k in "PQW"
                                for f in ("sign", "rank", "relative_error")}
    assert set(path.quantities) == expected
    # the fits in the user's order (the path ran from large to small: the same order here)
    fits = frame[frame["quantity"] != "cv_choice"]
    assert list(dict.fromkeys(fits["param_value"])) == grid
    assert path.settings["path"] == grid and path.settings["warm_start"] is True
    # per task and the mean for the errors; one whole-model row for the rest
    one = frame[(frame["param_value"] == grid[4]) & (frame["trial"] == 1)]
    for quantity in ("test_error", "baseline_error"):
        tasks = one.loc[one["quantity"] == quantity, "task"].tolist()
        assert tasks == [*outliers.task_names, MEAN]
        per_task = one[(one["quantity"] == quantity) & (one["task"] != MEAN)]["value"]
        mean = one[(one["quantity"] == quantity) & (one["task"] == MEAN)]["value"]
        assert mean.item() == pytest.approx(per_task.mean())
    assert (one.loc[~one["quantity"].isin(["test_error", "baseline_error"]), "task"]
            == MEAN).all()
    # the baseline is fitted once per trial: the same at every value
    base = frame[(frame["quantity"] == "baseline_error") & (frame["task"] == MEAN)]
    assert (base.groupby("trial")["value"].nunique() == 1).all()
    assert len(frame[frame["quantity"] == "cv_choice"]) == 3


def test_outlier_recall_rises_to_one_within_the_grid(path, grid):
    recall = _means(path, "outliers:recall")
    assert recall[0] == 0.0                        # lambda_max: Q = 0, no outlier task
    assert recall[-1] == 1.0                       # both outlier tasks found
    assert np.all(np.diff(recall) >= 0)            # and found for good, once found
    first = int(np.argmax(recall == 1.0))
    assert 0 < first < len(grid) - 1
    # best: ties go to the first in the user's order (here the largest such lambda)
    assert path.best("outliers:recall") == grid[first]


def test_best_goes_by_each_quantitys_direction(path, grid):
    error = _means(path, "test_error")
    assert path.best() == path.best("test_error") == grid[int(np.nanargmin(error))]
    relative = _means(path, "agreement:W:relative_error")
    assert path.best("agreement:W:relative_error") == grid[int(np.nanargmin(relative))]
    assert path.truth_quantity() == "agreement:W:relative_error"
    assert path.truth_best() == grid[int(np.nanargmin(relative))]
    rank = _means(path, "agreement:W:rank")
    assert path.best("agreement:W:rank") == grid[int(np.nanargmax(rank))]
    assert path.higher_is_better("features:precision")
    assert not path.higher_is_better("agreement:Q:relative_error")
    with pytest.raises(ValueError, match="no better direction"):
        path.best("features:kept")
    with pytest.raises(ValueError, match="recorded quantities"):
        path.best("no such quantity")


def test_cv_choice_is_the_most_frequent_of_the_trials_choices(path, grid):
    choices = path.cv_choices()
    assert len(choices) == 3 and all(c in grid for c in choices)
    counts = [choices.count(v) for v in grid]
    assert path.cv_choice() == grid[int(np.argmax(counts))]
    rows = path.frame[path.frame["quantity"] == "cv_choice"]
    assert (rows["param_value"] == rows["value"]).all()     # the chosen value, twice
    assert (rows["task"] == MEAN).all()


def test_identical_frames_sequential_threads_and_dask(outliers, grid):
    from distributed import Client, LocalCluster

    kwargs = dict(n_trials=2, cv=2, random_state=3)
    values = grid[2:7]
    done = []
    reference = sweep(RobustMTFL(), outliers, "lambda_columns", values,
                      callback=lambda d, t: done.append((d, t)), **kwargs)
    total = 2 * (len(values) * (1 + 2) + 1)     # path, 2 CV folds per value, the baseline
    assert done == [(i, total) for i in range(1, total + 1)]   # after each fit, in order
    runs = {"threads": sweep(RobustMTFL(), outliers, "lambda_columns", values, n_jobs=2,
                             backend="threading", **kwargs)}
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        progress = []
        runs["dask"] = sweep(RobustMTFL(), outliers, "lambda_columns", values,
                             backend="dask", client=client,
                             callback=lambda d, t: progress.append(d), **kwargs)
        assert progress == [total // 2, total]                  # a trial's fits at once
    expected = reference.frame[reference.frame["quantity"] != "fit_time"]
    for name, result in runs.items():
        frame = result.frame[result.frame["quantity"] != "fit_time"]
        pd.testing.assert_frame_equal(frame, expected, check_exact=True, obj=name)
        assert result.cv_choices() == reference.cv_choices()


class CountingRMTFL(RobustMTFL):
    """RobustMTFL that records each fit's solver sweeps (in process)."""

    sweeps: list = []

    def fit(self, X, y, task, **kwargs):
        super().fit(X, y, task, **kwargs)
        CountingRMTFL.sweeps.append(self.n_iter_)
        return self


def test_warm_and_cold_fits_agree_to_the_solvers_tolerance(outliers, grid):
    """Block CD stops when the relative duality gap is below tol = 1e-8, which bounds the
    relative suboptimality of each fit: both ends of the comparison are within 1e-8 of the
    optimum's objective, so their coefficients differ by about sqrt(1e-8) = 1e-4 relative
    (the objective is quadratic near the optimum). Test errors and the relative error of W
    must agree to 1e-4 relative; the structure found (supports) exactly."""
    estimator = CountingRMTFL(solver="bcd", tol=1e-8)
    results = {}
    for warm in (True, False):
        CountingRMTFL.sweeps = []
        results[warm] = sweep(estimator, outliers, "lambda_columns", grid, n_trials=2, cv=2,
                              warm_start=warm)
        results[warm, "sweeps"] = sum(CountingRMTFL.sweeps)
    warm, cold = results[True].frame, results[False].frame
    assert results[True, "sweeps"] < 0.8 * results[False, "sweeps"]   # warm starts help
    for quantity in ("test_error", "agreement:W:relative_error"):
        a = warm.loc[warm["quantity"] == quantity, "value"].to_numpy()
        b = cold.loc[cold["quantity"] == quantity, "value"].to_numpy()
        np.testing.assert_allclose(a, b, rtol=1e-4, err_msg=quantity)
    for quantity in ("outliers:precision", "outliers:recall", "features:kept",
                     "features:recall"):
        a = warm.loc[warm["quantity"] == quantity, "value"].to_numpy()
        b = cold.loc[cold["quantity"] == quantity, "value"].to_numpy()
        np.testing.assert_array_equal(a, b, err_msg=quantity)
    # the warm-started inner CV (along each fold's path) chooses as the harness's cold one
    assert results[True].cv_choices() == results[False].cv_choices()
    # the coefficients themselves, along the path on the whole data
    model = RobustMTFL(solver="bcd", tol=1e-8, warm_start=True)
    for value in grid:
        warm_W = model.set_params(lambda_columns=value).fit(
            outliers.X, outliers.y, outliers.task).coef_
        cold_W = RobustMTFL(solver="bcd", tol=1e-8, lambda_columns=value).fit(
            outliers.X, outliers.y, outliers.task).coef_
        scale = max(np.linalg.norm(cold_W), 1e-12)
        assert np.linalg.norm(warm_W - cold_W) <= 1e-4 * scale


def test_same_splits_and_baseline_as_compare():
    data = make_dataset("task_family", random_state=0)   # the opening data (classification)
    name, baseline = baseline_for(data.kind)
    assert name == "single-task logistic"
    result = sweep(RegularizedMTL(), data, "lambda_deviation", [1.0, 0.1], n_trials=2)
    assert result.metric == "error_rate" and not result.greater_is_better
    compared = compare({name: baseline}, data, n_trials=2, train_fraction=0.7,
                       progress=False)
    expected = compared.values("error_rate").loc[name].to_numpy()
    base = result.frame[(result.frame["quantity"] == "baseline_error")
                        & (result.frame["task"] == MEAN) & (result.frame["param_value"] == 1.0)]
    np.testing.assert_array_equal(base.sort_values("trial")["value"].to_numpy(), expected)
    # the similarity of RegularizedMTL is judged against the data's truth
    assert {"agreement:similarity:sign", "agreement:similarity:rank"} <= set(
        result.quantities)


def test_data_without_truth_gives_error_and_structure_only():
    school = make_dataset("school")
    top = RobustMTFL().lambda_max(school.X, school.y, school.task)["lambda_columns"]
    result = sweep(RobustMTFL(), school, "lambda_columns", [0.3 * top, 0.03 * top],
                   n_trials=1)
    assert result.truth_keys == []
    assert set(result.quantities) == {"test_error", "baseline_error", "features:kept",
                                      "fit_time"}
    assert result.truth_best() is None and result.cv_choice() is None
    assert result.frame["task"].nunique() == school.n_tasks + 1
    document = report_html(result)
    assert '<div class="figure">' in document
    assert "none (error and structure only)" in document


def test_csv_round_trip_html_table_report_and_plot(path, tmp_path):
    back = pd.read_csv(io.StringIO(path.to_csv()))
    # to 1e-12: pandas 2.0's default parser (the lowest version declared) reads a 17-digit
    # repr a few units in the last place off; pandas 3 reads it exactly
    pd.testing.assert_frame_equal(back, path.frame, check_dtype=False, check_exact=False,
                                  rtol=1e-12, atol=0)
    path.to_csv(tmp_path / "sweep.csv")
    assert (tmp_path / "sweep.csv").read_text() == path.to_csv()
    table = path.to_html()          # numbers and text: the table of means
    assert table.startswith('<table class="mtl-compare mtl-sweep">')
    assert table.count("<tr>") == 1 + len(path.quantities) - 1      # no cv_choice row
    assert f"CV&#x27;s choice {path.cv_choice():.4g}" in table
    assert path.to_html(tmp_path / "table.html") is None
    assert (tmp_path / "table.html").read_text() == table
    document = report_html(path)     # the standalone report: the curves, Bokeh inline
    assert document.startswith("<!DOCTYPE html>") and '<div class="figure">' in document
    assert table in document
    assert "static/" not in document and "<script src" not in document     # offline
    assert report_html(path, tmp_path / "sweep.html") is None
    assert '<div class="figure">' in (tmp_path / "sweep.html").read_text()
    layout = sweep_plot(path)
    assert isinstance(layout, hv.Layout)
    titles = [panel.opts.get().kwargs.get("title") for panel in layout]
    assert titles == ["test error", "P against the truth", "Q against the truth",
                      "W against the truth", "structure found", "features kept"]
    first = layout[0]
    labels = [element.label for element in first]
    assert "CV choice" in labels and "truth-best" in labels
    cv_marker = next(e for e in first if e.label == "CV choice")
    assert set(cv_marker.dimension_values(0)) == {path.cv_choice()}
    assert first.opts.get().kwargs["logx"] is True            # 0.01 .. 1 x lambda_max
    one = sweep_plot(path, ["fit_time"])
    assert len(one) == 1
    with pytest.raises(ValueError, match="recorded quantities"):
        sweep_plot(path, ["cv_choice"])


def test_should_stop_cancels_between_fits(outliers, grid):
    done = []
    with pytest.raises(SweepCancelled) as info:
        sweep(RobustMTFL(), outliers, "lambda_columns", grid[:4], n_trials=2,
              callback=lambda d, t: done.append(d), should_stop=lambda: len(done) >= 3)
    assert isinstance(info.value, ComparisonCancelled)     # the harness's error, as compare
    assert (info.value.done, info.value.total) == (3, 10)
    assert done == [1, 2, 3] and "sweep cancelled after 3 of 10 fits" in str(info.value)
    # threads: checked before every fit on the worker too. With one trial the executor asks
    # once (dispatching it), the worker before the baseline's fit, then before the path's
    # first: stopped there, no fit of the path runs (the executor alone would let all 4 run)
    calls = itertools.count(1)
    CountingRMTFL.sweeps = []
    with pytest.raises(SweepCancelled):
        sweep(CountingRMTFL(), outliers, "lambda_columns", grid[:4], n_trials=1, n_jobs=2,
              backend="threading", should_stop=lambda: next(calls) > 2)
    assert CountingRMTFL.sweeps == []


def test_path_order_and_bad_arguments(outliers, grid):
    assert path_order("lambda_rows", [0.1, 1.0, 0.5]) == (1, 2, 0)
    assert path_order("max_depth", [3, 1, 2]) == (1, 2, 0)
    assert path_order("lambda_rows", [0.1, 1.0], "given") == (0, 1)
    assert path_order("lambda_rows", [0.1, "auto"]) == (0, 1)     # not numbers: as given
    given = sweep(RobustMTFL(), outliers, "lambda_columns", grid[:3][::-1], n_trials=1,
                  order="given", baseline=None)
    assert given.settings["path"] == grid[:3][::-1]
    assert "baseline_error" not in given.quantities
    truthless = MultiTaskDataset(outliers.X, outliers.y, outliers.task, kind="regression")
    with pytest.raises(ValueError, match="param must be one of RobustMTFL's parameters"):
        sweep(RobustMTFL(), truthless, "lambda", [1.0])
    with pytest.raises(ValueError, match="values must be distinct"):
        sweep(RobustMTFL(), truthless, "lambda_columns", [1.0, 1])
    with pytest.raises(ValueError, match="values must be a non-empty sequence"):
        sweep(RobustMTFL(), truthless, "lambda_columns", [])
    with pytest.raises(ValueError, match="metric must name one metric"):
        sweep(RobustMTFL(), truthless, "lambda_columns", [1.0], metric=["nmse", "amse"])
    with pytest.raises(ValueError, match="client is only used with backend='dask'"):
        sweep(RobustMTFL(), truthless, "lambda_columns", [1.0], client="tcp://x:1")
    assert isinstance(sweep(RobustMTFL(), truthless, "lambda_columns", [1.0], n_trials=1),
                      SweepResult)
