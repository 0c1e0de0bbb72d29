"""The Compare page in process (no server: the comparison runs on the caller's thread, in one
process): what it offers for the data, what it shows, its downloads, Show code, Cancel."""

from __future__ import annotations

import io
import re
import threading
import time

import numpy as np
import pandas as pd
import pytest

from explorer.app.pages import PAGES
from explorer.app.pages.compare import ComparePage, truth_matrices
from explorer.app.state import ExplorerState
from explorer.compare.methods import METHODS, CompareSettings, chosen_estimators, methods_for

PAGE = next(p for p in PAGES if p.slug == "compare")


def make_page(**state_params) -> ComparePage:
    state = ExplorerState(**state_params)
    state.page = "compare"
    return PAGE.build(state)


def visible_switches(page: ComparePage) -> set[str]:
    keys = {m.key for m in METHODS}
    return {name for name, widget in page.form.widgets.items()
            if name in keys and widget.visible}


def test_compare_is_registered_after_transfer_and_declares_its_link_keys():
    slugs = [p.slug for p in PAGES]
    assert slugs[-3:] == ["transfer", "compare", "class"]   # the class's page last (issue 41)
    assert PAGE.params is CompareSettings


def test_the_page_offers_the_methods_of_the_data_kind():
    page = make_page()                                   # task family: classification
    assert visible_switches(page) == {m.key for m in methods_for("classification",
                                                                 task_features=False)}
    assert "tltf" not in visible_switches(page)          # no task features in these data
    page.state.dataset_name = "outlier_tasks"            # regression
    assert visible_switches(page) == {"ridge", "l21", "rmtfl", "kr", "mt_kr"}
    # hyper-parameters only of chosen methods
    assert not page.form.widgets["n_neighbors"].visible
    page.settings.mt_kr = True
    assert page.form.widgets["n_neighbors"].visible
    page.state.dataset_name = "clustered_tasks"          # task features: TL-TF is offered
    assert "tltf" in visible_switches(page)


def test_a_run_shows_the_table_plots_truth_and_enables_the_downloads():
    page = make_page()
    page.settings.param.update(n_trials=3, mt_knn=False)
    page.run()
    result = page.result
    assert result is not None and not page.running
    assert result.methods == ["single-task logistic", "Regularized MTL", "MT-DT (IG_M)"]
    assert result.n_trials == 3 and result.settings["train_fraction"] == \
        page.state.train_fraction
    assert "<table" in page.results.table.object and "± " in page.results.table.object
    assert "Done: 3 methods × 3 trials" in page.status.object
    # the status names the methods marked best on average (as the table marks them)
    marked = result.best()[result.columns[-1]]
    for method in marked.index[marked.to_numpy()]:
        assert method in page.status.object
    shown = page.results
    assert shown.plots.object is not None and shown.matrices.object is not None
    from bokeh.models import Plot

    titles = {fig.title.text for fig in shown.matrices.object.select({"type": Plot})
              if fig.title is not None}
    assert "truth: task_relation" in titles and "Regularized MTL: similarity" in titles
    assert not shown.csv_button.disabled and not shown.report_button.disabled
    frame = pd.read_csv(io.StringIO(shown._csv().getvalue()))
    assert len(frame) == len(result.frame) and set(frame["method"]) == set(result.methods)
    report = shown._report().getvalue()
    assert report.startswith("<!DOCTYPE html>") and "beside the truth" in report


def test_show_code_reproduces_the_pages_numbers():
    page = make_page(data_seed=3)
    page.settings.param.update(n_trials=2, regularized=False, mt_knn=False, max_depth=4)
    page.run()
    code = page.results.code.object
    assert code.startswith("<pre><code>") and "&#x27;" in code     # shown escaped
    import html

    source = html.unescape(re.sub(r"</?(pre|code)>", "", code))
    namespace: dict = {}
    exec(compile(source, "<show code>", "exec"), namespace)   # noqa: S102 - our own snippet
    again = namespace["result"]
    pd.testing.assert_frame_equal(
        again.frame.drop(columns="fit_time_s"), page.result.frame.drop(columns="fit_time_s"))


def test_cancel_stops_the_comparison_and_says_so():
    page = make_page()
    page.settings.param.update(n_trials=20)
    calls = []
    original = page._on_progress

    def cancel_after_two(done, total):
        calls.append(done)
        original(done, total)
        if done == 2:
            page.cancel()

    page._on_progress = cancel_after_two
    page.run()
    assert page.result is None and not page.running
    assert max(calls) < 20 * 4
    assert re.search(r"Cancelled after \d+ of 80 fits", page.status.object)
    assert page.results.csv_button.disabled and not page.run_button.disabled


def test_progress_reported_after_a_cancel_keeps_saying_cancelling():
    # served, the fits already on the workers report after Cancel: the count must not
    # turn the status line back to "Running" (the UI test waited on "Cancelling" in vain)
    page = make_page()
    page.running = True
    page.progress.max = 80
    page._progress_seen = (3, 80)
    page._show_progress()
    assert page.status.object.startswith("Running … 3 of 80")
    page.cancel()
    page._progress_seen = (5, 80)
    page._show_progress()
    assert page.status.object.startswith("Cancelling … 5 of 80") and page.progress.value == 5


def test_new_data_clears_the_results_of_the_old():
    page = make_page()
    page.settings.param.update(n_trials=2)
    page.run()
    assert page.result is not None
    page.state.data_seed = 5
    assert page.result is None and page.results.table.object == ""
    assert "data changed" in page.status.object and page.results.csv_button.disabled


def test_link_values_for_the_page_are_checked_by_its_declaration():
    state = ExplorerState()
    problems = state.from_query({"page": "compare", "compare.n_trials": "many",
                                 "compare.mt_dt": "false", "compare.max_depth": "3"})
    assert len(problems) == 1 and "n_trials" in problems[0] and "'many'" in problems[0]
    page = PAGE.build(state)
    assert page.settings.mt_dt is False and page.settings.max_depth == 3
    assert page.settings.n_trials == CompareSettings.param.n_trials.default


def test_with_no_method_of_the_kind_chosen_the_kinds_defaults_run():
    settings = CompareSettings(**{m.key: False for m in METHODS})
    chosen = chosen_estimators(settings, "regression", task_features=False)
    assert list(chosen) == ["ridge per task", "L2,1 MTFL", "rMTFL"]


def test_truth_matrices_are_the_task_and_coefficient_matrices():
    page = make_page(dataset_name="outlier_tasks")
    truth = truth_matrices(page.state.dataset)
    assert {"coef", "P", "Q", "task_similarity"} == set(truth)
    assert all(np.ndim(v) == 2 for v in truth.values())


@pytest.mark.parametrize("data", ["clustered_tasks"])
def test_tltf_joins_with_the_data_task_features(data):
    page = make_page(dataset_name=data)
    page.settings.param.update(n_trials=2, tltf=True, regularized=False, mt_dt=False,
                               mt_knn=False, single_logistic=True)
    page.run()
    assert page.result.methods == ["single-task logistic", "TL-TF"]


def test_a_second_comparison_waits_for_the_first_and_says_so():
    """Served, comparisons take turns (each fills the machine's cores): a second session's
    waits, says so, and runs once the first ends; progress reaches the loop as it goes."""
    from test_work import FakeLoop

    from explorer.app.work import TURNS, WorkService

    loop = FakeLoop()
    other, gate = WorkService(loop.schedule), threading.Event()
    other.submit("compare", lambda: gate.wait(30), lambda _: None, pool=TURNS)
    loop.run(1)                                          # another session's comparison runs
    page = make_page()
    page.state.work = WorkService(loop.schedule)
    page.settings.param.update(n_trials=2)
    page.run()
    assert page.running and "another comparison is running" in page.status.object
    loop.run(1, timeout=0.5)
    assert page.result is None and page.running          # it waits ...
    gate.set()
    end = time.monotonic() + 120
    while page.running and time.monotonic() < end:      # ... then runs: progress, result
        loop.run(1, timeout=0.5)
    assert page.result is not None and page.result.n_trials == 2
    assert "Done: " in page.status.object


def test_cancel_during_a_served_comparison_and_the_session_end_stop_it():
    from test_work import FakeLoop

    from explorer.app.work import WorkService

    loop = FakeLoop()
    page = make_page()
    page.state.work = WorkService(loop.schedule)
    page.settings.param.update(n_trials=50)
    page.run()
    loop.run(1)                                          # started on a work thread
    page.cancel()
    assert page.status.object == "Cancelling …" and page.cancel_button.disabled
    end = time.monotonic() + 120
    while page.running and time.monotonic() < end:
        loop.run(1, timeout=0.5)
    assert re.search(r"Cancelled after \d+ of 200 fits", page.status.object)
    assert page.result is None and not page.run_button.disabled
    page.run()                                           # again, then the tab closes
    loop.run(1)
    page.state.work.close()
    page.close()
    loop.run(3, timeout=1)
    assert page.result is None and not page.state.work.pending("compare")
