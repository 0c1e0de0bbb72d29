"""The sweep section of the model pages without a browser (explorer/app/sweep_panel.py): the
page's slider values and the estimator parameter behind them, a sweep run through the work
service (synchronously where there is no loop), the curves' sources and the three markers,
a click on a point that sets the slider and starts a fit, Cancel, and data without a truth."""

from __future__ import annotations

import time

import numpy as np
import param
import pytest
from test_model_pages import MODEL_PAGES, build, panel_of, run
from test_work import FakeLoop

from explorer.app.pages.outliers import OutliersParams
from explorer.app.pages.trees import TreesParams
from explorer.app.state import ExplorerState
from explorer.app.sweep_panel import estimator_path, sweep_range, sweep_values, sweepable
from explorer.app.work import WorkService
from explorer.models import RobustMTFL


def scenario_page(name: str = "outlier_tasks", slug: str = "outliers"):
    """The page of ``slug`` on scenario ``name``'s data (the sweep section folded)."""
    state = ExplorerState()
    assert state.apply_preset(name)
    page = MODEL_PAGES[slug].build(state)
    page.runner._speed.value = "unthrottled"
    return page


def sweep_of(page, setting: str, *, n_values: int, n_trials: int, cv: bool = True):
    panel = panel_of(page, "SweepPanel")
    panel.setting.value = setting
    panel.n_values.value, panel.n_trials.value, panel.with_cv.value = n_values, n_trials, cv
    return panel


def test_the_values_come_from_the_declaration_bounds_and_log_scale():
    # Outliers' fractions of lambda_max: log-spaced over the declared 1e-3..1, as the slider
    assert sweep_values(OutliersParams, "columns", 4) == [0.001, 0.01, 0.1, 1.0]
    assert sweep_range(OutliersParams, "columns") == (1e-3, 1.0, True)
    # an integer, not on a log scale: evenly spaced, rounded, each once
    assert sweep_values(TreesParams, "max_depth", 8) == sorted(set(
        int(round(v)) for v in np.linspace(*TreesParams.param.max_depth.bounds, 8)))
    assert sweepable(OutliersParams) == [
        ("Shared features: lambda_rows / max", "rows"),
        ("Outlier tasks: lambda_columns / max", "columns"), ("Max iterations", "max_iter")]
    assert [name for _, name in sweepable(TreesParams)] == ["max_depth", "rounds"]

    class Open(param.Parameterized):   # a user's estimator: a penalty >= 0, no upper bound
        alpha = param.Number(0.5, bounds=(0, None))
        step = param.Number(0.5, bounds=(0, 1), inclusive_bounds=(False, True))
        flag = param.Boolean(True)

    assert sweep_values(Open, "alpha", 5) == [0.005, 0.05, 0.5, 5.0, 50.0]
    assert sweep_values(Open, "step", 3)[0] == pytest.approx(0.01)   # 0 is excluded
    assert [name for _, name in sweepable(Open)] == ["alpha", "step"]


def test_the_page_fraction_maps_to_the_one_estimator_parameter_it_moves():
    page = build("outliers")
    train = page.state.train
    values = [0.01, 0.1, 1.0]
    estimator, key, path, shown = estimator_path(page.page.make, page.params, "columns",
                                                 values, 0, train)
    lambda_max = RobustMTFL().lambda_max(train.X, train.y, train.task)["lambda_columns"]
    assert key == "lambda_columns" and shown == values
    np.testing.assert_allclose(path, np.array(values) * lambda_max)
    assert estimator.lambda_rows == pytest.approx(page.params.rows * RobustMTFL().lambda_max(
        train.X, train.y, train.task)["lambda_rows"])      # the other slider as it stands
    trees = build("trees")
    trees.params.method = "boosting"    # the boosted tree's depth, capped at 6: 7 and 8 once
    _, key, path, shown = estimator_path(trees.page.make, trees.params, "max_depth",
                                         [2, 6, 7, 8], 0, trees.state.train)
    assert (key, path, shown) == ("base__max_depth", [2, 6], [2, 6])
    trees.params.method = "tree"        # a single tree has no rounds
    with pytest.raises(ValueError, match="does not change the model"):
        estimator_path(trees.page.make, trees.params, "rounds", [1, 10], 0, trees.state.train)


def test_a_sweep_of_the_outlier_penalty_draws_its_curves_and_marks_cv_and_the_truth():
    """The issue's must-hold: on the outlier_tasks scenario a 12-value sweep of
    lambda_columns with 3 trials finds every outlier task within the grid, and the page
    marks the CV choice and the truth-best value."""
    page = scenario_page()
    panel = sweep_of(page, "columns", n_values=12, n_trials=3)
    panel.run()                      # no loop: the work service runs it at once
    assert not panel.running and panel.result.visible
    result, values = panel.outcome["result"], panel.outcome["values"]
    assert values == sweep_values(OutliersParams, "columns", 12) and len(values) == 12
    assert result.param == "lambda_columns" and result.n_trials == 3
    data = panel.curves.source.data
    np.testing.assert_allclose(data["x"], values)
    np.testing.assert_allclose(data["test"], result.curve("test_error")["mean"])
    np.testing.assert_allclose(data["baseline"], result.curve("baseline_error")["mean"])
    np.testing.assert_allclose(data["relative_error"],
                               result.curve("agreement:W:relative_error")["mean"])
    recall = np.asarray(data["outlier_recall"])
    assert recall.max() == 1.0 and recall[-1] == 0.0   # lambda_max zeroes Q: none found
    # the markers: where the slider stands, CV's choice, the value closest to the truth
    curves = panel.curves
    index = {v: i for i, v in enumerate(result.values)}
    assert curves.marker("slider") == page.params.columns == 0.2
    assert curves.marker("cv") == values[index[result.cv_choice()]]
    assert curves.marker("truth") == values[index[result.truth_best()]]
    assert curves.marker("truth") == values[int(np.nanargmin(data["relative_error"]))]
    titles = [pane.object.title.text for pane in panel.figures.objects]
    assert titles == ["Test error (band: ±1 sd over the trials)", "Learned W against the truth",
                      "Structure found"]
    assert all(pane.object.html_attributes["aria-label"] == title
               for pane, title in zip(panel.figures.objects, titles, strict=True))
    assert f"{len(values)} values × 3 trials ({12 * 3 * 4 + 3} fits)" in panel.status.object
    caption = panel.caption.object
    assert "cross-validation's choice" in caption and "closest to the truth" in caption
    assert not panel.note.visible
    # the slider moves: its marker follows
    page.params.columns = 0.5
    assert curves.marker("slider") == 0.5


def test_clicking_a_point_sets_the_slider_and_starts_a_fit():
    page = scenario_page()
    panel = sweep_of(page, "columns", n_values=5, n_trials=1, cv=False)
    panel.run()
    values = panel.outcome["values"]
    assert page.runner.session.state == "idle"
    panel.curves.source.selected.indices = [1]     # what a tap on the second point sends
    assert page.params.columns == values[1]
    assert page.form.widgets["columns"].value == values[1]   # the slider shows it
    assert page.runner.session.state in ("running", "done")
    assert panel.curves.marker("slider") == values[1]
    assert panel.curves.source.selected.indices == []    # the same point can be clicked again
    model = run(page)
    train = page.state.train
    lambda_max = RobustMTFL().lambda_max(train.X, train.y, train.task)["lambda_columns"]
    assert model.lambda_columns == pytest.approx(values[1] * lambda_max)
    # after a finished fit a warm page refits by itself from the new value
    panel.curves.source.selected.indices = [3]
    assert page.runner.session.state in ("running", "done")
    assert run(page).lambda_columns == pytest.approx(values[3] * lambda_max)


def test_on_a_page_that_does_not_refit_by_itself_a_click_starts_the_fit():
    page = build("mtknn")
    run(page)
    panel = sweep_of(page, "k", n_values=3, n_trials=1, cv=False)
    panel.run()
    assert panel.outcome["values"] == [1, 20, 40] and panel.curves.marker("cv") is None
    panel.curves.source.selected.indices = [1]
    assert page.params.k == 20 and page.runner.session.state in ("running", "done")
    assert run(page).n_neighbors == 20


def test_without_a_truth_the_section_says_so_and_shows_error_and_structure():
    page = build("outliers", "school", train_fraction=0.24)
    panel = sweep_of(page, "columns", n_values=3, n_trials=1, cv=False)
    assert panel.note.visible and "no known truth" in panel.note.object
    panel.run()
    titles = [pane.object.title.text for pane in panel.figures.objects]
    assert titles == ["Test error (band: ±1 sd over the trials)", "Structure found"]
    data = panel.curves.source.data
    assert np.isnan(data["relative_error"]).all() and np.isnan(data["outlier_recall"]).all()
    assert np.isfinite(data["kept_share"]).all()         # the features kept, a share of 28
    assert panel.curves.marker("truth") is None and "closest to the truth" not in \
        panel.caption.object


def _wait(condition, timeout: float = 60.0, loop: FakeLoop | None = None) -> None:
    """Until ``condition()``, running ``loop``'s callbacks meanwhile when given."""
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out"
        if loop is None:
            time.sleep(0.02)
        else:
            loop.run(1, timeout=0.05)


def test_cancel_stops_a_sweep_that_a_reset_of_the_fit_leaves_running():
    page = scenario_page()
    loop = FakeLoop()
    page.state.work = WorkService(loop.schedule)    # served: the sweep runs off the loop
    panel = sweep_of(page, "columns", n_values=40, n_trials=10)
    panel.run()
    assert panel.running and panel.cancel_button.disabled is False
    loop.run(1)                                      # it starts on a work thread
    _wait(lambda: panel._progress_seen[0] >= 3)
    page.runner.reset()                              # the fit's Reset: not the sweep's
    seen = panel._progress_seen[0]
    _wait(lambda: panel._progress_seen[0] > seen + 3)
    loop.run(1)                                      # a progress count reaches the page
    assert "fits done" in panel.status.object
    panel.cancel_button.clicks += 1                  # Cancel
    assert panel.status.object == "Cancelling …" and panel.cancel_button.disabled
    _wait(lambda: not panel.running, loop=loop)    # it ends before its next fit
    done, total = panel._progress_seen
    assert not panel.running and done < total == 40 * 10 * 4 + 10
    assert panel.status.object == f"Cancelled after {done} of {total} fits."
    assert panel.outcome is None and not panel.result.visible and not panel.run_button.disabled
    # new data stop a running sweep as well
    panel.n_values.value, panel.n_trials.value = 40, 10
    panel.run()
    loop.run(1)
    _wait(lambda: panel._progress_seen[0] >= 1)
    panel.set_data(page.state.train)
    _wait(lambda: not panel.running, loop=loop)
    assert panel.status.object == "The data changed: the sweep stopped."


def test_the_page_of_a_users_own_estimator_sweeps_its_declared_settings():
    """A user's class gets the section too: its constraints give the ranges (``coupling`` in
    [0, 100]; ``alpha`` >= 0: 1/100 to 100 times its value); a class without get_params is
    told why it cannot be swept."""
    import sys
    from pathlib import Path

    from explorer.app.custom import model_page

    sys.path.insert(0, str(Path(__file__).parents[1] / "examples" / "custom_estimator" / "src"))
    from similarity_ridge import TaskSimilarityRidge

    page = model_page(TaskSimilarityRidge).build(ExplorerState(
        dataset_name="task_family", data_params={"kind": "regression"}))
    panel = panel_of(page, "SweepPanel")
    assert [name for _, name in sweepable(page.params)] == ["alpha", "coupling", "n_iter"]
    assert sweep_values(page.params, "alpha", 3) == [0.01, 1.0, 100.0]
    panel = sweep_of(page, "coupling", n_values=3, n_trials=1, cv=False)
    panel.run()
    assert panel.outcome["result"].param == "coupling"
    assert list(panel.curves.source.data["x"]) == [0.0, 50.0, 100.0]
    assert np.isfinite(panel.curves.source.data["test"]).all()

    class Plain:   # the contract, without get_params / set_params
        def __init__(self, scale=1.0):
            self.scale = scale

        def fit(self, X, y, task):
            return self

        def predict(self, X, task):
            return np.zeros(len(X))

        def task_relationships(self):
            return {}

    page = model_page(Plain).build(ExplorerState(dataset_name="task_family",
                                                 data_params={"kind": "regression"}))
    panel = sweep_of(page, "scale", n_values=3, n_trials=1)
    panel.run()
    assert "needs an estimator with get_params" in panel.status.object
    assert panel.outcome is None and not panel.running
