"""The page kit and the three model pages without a browser: fit, render, baselines, warm refit,
reset, re-targeting on a data change, scrubbing, the init seed, and the declarations' size."""

from __future__ import annotations

import inspect
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from explorer.app.kit import ModelPage, ModelPageView
from explorer.app.pages import PAGES
from explorer.app.state import ExplorerState
from explorer.viz.live import ObjectiveView, SnapshotMatrixView, TruthMatrixView

MODEL_PAGES = {p.slug: p for p in PAGES if isinstance(p, ModelPage)}
DATA_FOR = {"shared_vs_separate": "task_family", "trees": "local_relatedness",
            "outliers": "outlier_tasks", "mtboost": "task_family", "mtknn": "task_family",
            "transfer": "clustered_tasks"}


def build(slug: str, dataset: str | None = None, **state_params) -> ModelPageView:
    state = ExplorerState(dataset_name=dataset or DATA_FOR[slug], **state_params)
    page = MODEL_PAGES[slug].build(state)
    page.runner._speed.value = "unthrottled"
    return page


def run(page: ModelPageView):
    runner = page.runner
    runner.session.run()
    assert runner.session.wait(60)
    runner.poll()
    assert runner.session.state == "done", runner.session.error
    return runner.session.estimator


def view_of(page, cls, key=None):
    """The page's view of that class (and key), a part of a pair view included."""
    views = [part for v in page.views for part in (v, *getattr(v, "parts", ()))]
    return next(v for v in views if isinstance(v, cls) and (key is None or v.key == key))


def panel_of(page, name: str):
    """The page's own panel of that class name (see ``ModelPage.panels``)."""
    return next(p for p in page.panels if type(p).__name__ == name)


def test_every_model_page_is_a_declaration_of_well_under_150_lines():
    assert set(MODEL_PAGES) == set(DATA_FOR)
    for page in MODEL_PAGES.values():
        source = Path(inspect.getsourcefile(page.params)).read_text().splitlines()
        code = [line for line in source if line.strip() and not line.strip().startswith("#")]
        assert len(code) < 150, (page.slug, len(code))
        text = "\n".join(source)
        assert "LiveFitRunner" not in text   # the kit owns the runner
        # no page runs its own threads or polls, nor subclasses the kit's page view
        assert not re.search(r"threading|add_periodic_callback|ModelPageView\)", text)
        assert type(page) is ModelPage and type(page.build(ExplorerState(
            dataset_name=DATA_FOR[page.slug]))) is ModelPageView


@pytest.mark.parametrize("slug", sorted(DATA_FOR))
def test_page_runs_and_compares_with_its_baselines(slug):
    page = build(slug)
    model = run(page)
    series = page.errors.series
    assert series[0] == "model" and len(series) == 1 + len(MODEL_PAGES[slug].baselines)
    values = np.array(page.errors.source.data["value"]).reshape(-1, len(series))
    assert values.shape[0] == page.state.train.n_tasks
    expected = 1.0 - model.score_per_task(page.state.test.X, page.state.test.y,
                                          page.state.test.task)
    np.testing.assert_allclose(values[:, 0], np.nan_to_num(expected))
    measure = "1 - R²" if page.state.train.kind == "regression" else "share misclassified"
    assert f"Mean test error ({measure}" in page.summary_text()


def test_shared_vs_separate_shows_the_learned_similarity_beside_the_truth():
    page = build("shared_vs_separate")
    model = run(page)
    shown = view_of(page, SnapshotMatrixView, "similarity").heatmap.values
    np.testing.assert_allclose(shown, model.task_relationships()["similarity"])
    truth = page.state.train.truth
    np.testing.assert_array_equal(view_of(page, TruthMatrixView, "task_relation").heatmap.values,
                                  truth["task_relation"])
    np.testing.assert_allclose(view_of(page, TruthMatrixView, "task_similarity").heatmap.values,
                               truth["task_similarity"])
    curve = view_of(page, ObjectiveView).curve.source.data
    assert curve["x"] == list(range(1, model.n_iter_ + 1))   # every step, though frames skip


def test_outliers_page_marks_detection_against_the_truth_and_refits_warm():
    page = build("outliers")
    first = run(page)
    q = view_of(page, SnapshotMatrixView, "Q").heatmap.values
    np.testing.assert_allclose(q, first.Q_.T)                   # tasks x features
    truth = page.state.train.truth["outlier_tasks"]
    bars = next(v for v in page.views if hasattr(v, "bars")).bars
    for t, outcome in enumerate(bars.source.data["outcome"]):
        detected = bool(first.outlier_tasks_[t])
        assert outcome.startswith("outlier" if detected else ("missed" if truth[t] else "shares"))
    assert "F1 against the truth" in page.summary_text() and "Test nMSE" in page.summary_text()
    n_first = first.n_iter_
    page.params.columns = 1.0          # lambda_columns at its lambda_max: no outlier is left
    assert page.runner.session.wait(60)
    page.runner.poll()
    refit = page.runner.session.estimator
    assert refit is first and not refit.outlier_tasks_.any()
    assert np.all(np.array(bars.source.data["score"]) == 0)
    page.params.columns = 0.5         # a small move from a fitted solution: a warm start
    assert page.runner.session.wait(60)
    page.runner.poll()
    assert page.runner.session.estimator.n_iter_ < n_first
    page.runner.reset()               # the Reset button: views cleared, warm start dropped
    assert page.fit.fitted is None and not np.any(view_of(page, SnapshotMatrixView, "Q")
                                              .heatmap.values)


def test_trees_page_grows_node_by_node_and_boosts_through_the_runner():
    page = build("trees")
    page.runner.step()
    page.runner.step()
    diagram = page.views[0].diagram
    assert len(diagram.nodes.data["node"]) >= 2
    model = run(page)
    page.params.method = "boosting"
    assert page.runner.session.state == "idle"
    boosted = run(page)
    assert type(boosted).__name__ == "MTAdaBoost" and boosted is not model
    boosting = next(v for v in page.views if type(v).__name__ == "BoostingView")
    assert boosting.beta_source.data["round"] == list(range(1, boosted.n_iter_ + 1))


def test_trees_page_draws_figure_3_only_once_its_card_is_unfolded():
    import panel as pn

    from explorer.app.pages.trees import figure3_ratios

    page = build("trees")
    card = panel_of(page, "Figure3Panel").layout
    assert card in page._layout.objects                   # a section under the page
    assert card.collapsed and len(card) == 1   # the text, no figure yet
    card.collapsed = False
    plot = card[1]
    assert isinstance(plot, pn.pane.Bokeh)
    ratios = figure3_ratios()
    # the box plot's boxes are the paper's families x {IG_M, IG_U} over IG_J
    boxes = [r for r in plot.object.renderers if r.data_source.data.get("q1") is not None]
    assert boxes and len(boxes[0].data_source.data["q1"]) == 2 * len(ratios)
    card.collapsed = True
    card.collapsed = False
    assert len(card) == 2   # drawn once


def test_trees_figure_3_not_warmed_up_yet_is_computed_off_the_loop(monkeypatch):
    from test_work import FakeLoop

    from explorer.app.pages.trees import figure3_ratios
    from explorer.app.work import WorkService

    page = build("trees")
    loop = FakeLoop()
    page.state.work = WorkService(loop.schedule)
    card = panel_of(page, "Figure3Panel").layout
    figure3_ratios.cache_clear()            # the server's warm-up has not got there yet
    card.collapsed = False
    assert "Computing" in card[1].object    # said at once; nothing computed on the loop
    assert loop.run(2) == 2                 # computed on a work thread, shown on the loop
    assert type(card[1]).__name__ == "Bokeh" and len(card) == 2


def test_scrubbing_shows_exactly_the_recorded_snapshot():
    page = build("trees")
    run(page)
    items = page.runner.session.record.items()
    page.runner.scrub_to(0)
    diagram = page.views[0].diagram
    first_nodes = len([t for t in diagram.nodes.data["text"] if t != "pending"])
    assert first_nodes == len(items[0].info["tree"]) == 1
    assert re.search(rf"step {items[0].step}\b", page.runner.status)
    page.runner.scrub_to(len(items) - 1)
    assert len([t for t in diagram.nodes.data["text"] if t != "pending"]) == \
        len(items[-1].info["tree"])


def test_views_scrolled_out_of_sight_skip_the_frames_of_a_run_and_catch_up():
    """The browser reports figures outside the viewport (FramePacer.offscreen): during a run
    their views are not redrawn; they draw the last frame when they scroll back in, and
    when the run stops."""
    page = build("trees")
    partition = next(v for v in page.views if type(v).__name__ == "PartitionLiveView")
    run(page)
    session, pacer = page.runner.session, page.runner.pacer
    first, last = session.record.items()[0], session.record.items()[-1]

    def planes():
        return [{k: np.asarray(v).tolist() for k, v in source.data.items()}
                for source in partition.view.sources]

    page.flow.render(first)
    at_first = planes()
    page.flow.render(last)
    at_last = planes()
    assert at_first != at_last and any(plane["left"] for plane in at_last)
    assert pacer.watched == [fig.id for fig in page.flow.panes.figures()]
    session.state = "running"                      # frames of a run in progress
    pacer.offscreen = [fig.id for fig in partition.figures]
    page.flow.render(first)
    assert planes() == at_last                     # skipped: nobody can see them
    assert len([t for t in page.views[0].diagram.nodes.data["text"]
                if t != "pending"]) == 1           # the tree on screen was drawn
    pacer.offscreen = []                           # scrolled back in: the last frame
    assert planes() == at_first
    page.flow.render(last)
    pacer.offscreen = [fig.id for fig in partition.figures]
    page.flow.render(first)
    assert planes() == at_last
    page.runner.on_stop()                          # the run stopped: no frame follows
    assert planes() == at_first
    session.state = "done"                         # not running (a scrub): drawn at once
    page.flow.render(last)
    assert planes() == at_last


def test_a_data_change_retargets_the_views_without_new_figures():
    page = build("shared_vs_separate")
    figures = [f for v in page.views for f in v.figures]
    ids = [id(f) for f in figures]
    run(page)
    page.state.data_params = {**page.state.current_params(),
                              "relations": "related,negated,unrelated,related,related"}
    assert page.state.train.n_tasks == 6
    assert [id(f) for v in page.views for f in v.figures] == ids
    heatmap = view_of(page, SnapshotMatrixView, "similarity").heatmap
    assert heatmap.shape == (6, 6) and list(heatmap.figure.x_range.factors) == \
        [str(n) for n in page.state.train.task_names]
    assert page.runner.session.state == "idle" and not np.any(heatmap.values)
    run(page)
    assert heatmap.values.shape == (6, 6) and np.any(heatmap.values)


def test_the_init_seed_reaches_the_estimator_and_resets_the_run():
    page = build("trees", init_seed=7)
    model = run(page)
    assert model.random_state == 7
    page.state.init_seed = 8
    assert page.runner.session.state == "idle"
    assert run(page).random_state == 8


def test_tiny_data_fits_and_says_what_it_cannot_score():
    page = build("outliers", train_fraction=0.9)
    page.state.data_params = {**page.state.current_params(), "n_tasks": 3,
                              "n_samples_per_task": 3}
    assert page.state.error == "" and not page.note.visible
    run(page)
    assert "too few test examples" in page.summary_text()
    page.state.data_params = {**page.state.current_params(), "n_tasks": 1, "n_outliers": 0,
                              "n_samples_per_task": 30}
    run(page)
    assert "Outlier F1 against the truth" in page.summary_text()


def test_a_task_with_one_class_gets_a_note():
    from explorer.data import MultiTaskDataset

    rng = np.random.default_rng(0)
    X, task = rng.normal(size=(40, 2)), np.repeat([0, 1], 20)
    y = np.where(task == 0, X[:, 0] > 0, 0).astype(int)      # task 1 has one class
    data = MultiTaskDataset(X, y, task, task_names=["two", "only <b>one</b>"])
    problem = MODEL_PAGES["trees"].problem_with(data)
    assert "two classes" in problem and "only <b>one</b> has one" in problem
    assert MODEL_PAGES["outliers"].problem_with(data).startswith("Outliers & shared features "
                                                                 "works with regression")


def test_closing_the_app_stops_a_paused_worker_and_releases_the_record():
    import threading

    from explorer.app import ExplorerApp

    app = ExplorerApp(state=ExplorerState(dataset_name="outlier_tasks", page="outliers"))
    page = app._built["outliers"]
    page.runner.step()                       # a stepped fit parks its worker
    worker = page.runner.session._thread
    assert worker is not None and worker.is_alive() and len(page.runner.session.record) == 1
    app.close()
    worker.join(5)
    assert not worker.is_alive() and worker not in threading.enumerate()
    assert len(page.runner.session.record) == 0 and page.runner.session.estimator is None
    assert app._built == {}


def test_a_data_change_neither_replaces_the_page_nor_wakes_hidden_pages():
    from explorer.app import ExplorerApp

    app = ExplorerApp(state=ExplorerState(page="tasks"))
    app.state.page = "shared_vs_separate"
    shown = app.shown
    tasks = app._built["tasks"]
    drawn = list(tasks._scatter.points.data["px"])
    app.state.data_seed = 3                      # on a model page
    assert app.shown is shown                     # patched in place, not replaced
    assert list(tasks._scatter.points.data["px"]) == drawn and tasks._stale  # it waits
    app.state.page = "tasks"                      # and catches up when shown
    assert list(tasks._scatter.points.data["px"]) != drawn and not tasks._stale


@pytest.mark.parametrize("slug", sorted(DATA_FOR))
def test_a_fit_at_the_defaults_lasts_long_enough_for_a_class_to_follow(slug):
    """Teaching pace: at the speed a page opens with, its default fit lasts 5-20 s."""
    from explorer.app.runner import SPEEDS

    state = ExplorerState(dataset_name=DATA_FOR[slug])
    pace = MODEL_PAGES[slug].pace_for(state.train)
    opened = MODEL_PAGES[slug].build(state)
    assert opened.runner._speed.value == pace          # the page opens at that speed
    page = build(slug)
    run(page)
    seconds = page.runner.session.version / SPEEDS[pace]
    assert 5 <= seconds <= 20, (slug, page.runner.session.version, pace)


@pytest.mark.parametrize("slug", sorted(DATA_FOR))
def test_show_code_reproduces_the_pages_numbers_and_the_results_download(slug, capsys):
    page = build(slug)
    assert page.tools.results_button.disabled             # nothing to download before a fit
    model = run(page)
    shown = page.outcome.shown
    namespace: dict = {}
    exec(compile(page.code(), f"<{slug} show code>", "exec"), namespace)  # noqa: S102
    again = namespace["errors"]
    assert list(again) == list(shown)
    for name in shown:
        np.testing.assert_allclose(again[name], shown[name], rtol=1e-9, atol=1e-12,
                                   equal_nan=True, err_msg=f"{slug}: {name}")
    matrices = {key: np.asarray(value, dtype=float)
                for key, value in model.task_relationships().items() if np.ndim(value) == 2}
    printed = capsys.readouterr().out   # the code prints the learned task matrices too
    assert all(f"{key}\n[" in printed for key in matrices), (slug, list(matrices))
    page.tools.code_toggle.value = True                    # the same code, shown escaped
    assert "errors = {" in page.tools.code.object and "&#x27;model&#x27;" in page.tools.code.object
    assert not page.tools.results_button.disabled
    table = pd.read_csv(io.StringIO(page.exports.results_csv()), keep_default_na=False)
    assert list(table.columns) == ["quantity", "key", "row", "column", "value"]
    errors = table[table.quantity == "test_error"]
    assert list(errors.key.unique()) == list(shown)
    for name in shown:   # tidy: one row per task and series
        np.testing.assert_allclose(errors[errors.key == name].value.astype(float), shown[name])
    for key, matrix in matrices.items():   # and one per entry of each learned matrix
        cells = table[(table.quantity == "matrix") & (table.key == key)]
        np.testing.assert_allclose(cells.value.astype(float), matrix.ravel(), err_msg=key)
    html_file = page.tools._figures_file().getvalue()
    assert html_file.startswith("<!DOCTYPE html>") and "Bokeh" in html_file
    assert "cdn.bokeh.org" not in html_file                 # inline: opens offline
    for view in page.views:   # each caption (the agreement with the truth) under its figures
        caption = getattr(getattr(view, "caption", None), "text", "")
        assert not caption or f'<p class="caption">{caption}</p>' in html_file, slug
    if any(hasattr(view, "truth") for view in page.views):
        assert "Agreement with the truth" in html_file, slug


def test_hiding_the_truth_names_tasks_neutrally_and_revealing_it_keeps_the_fit():
    page = build("outliers")
    state = page.state
    run(page)
    shown_errors = {k: v.copy() for k, v in page.outcome.shown.items()}
    truth_view = view_of(page, TruthMatrixView)
    assert "against the truth" in page.summary_text() and state.train.truth
    state.hide_truth = True
    assert state.train.task_names == [f"T{t}" for t in range(state.train.n_tasks)]
    assert not state.train.truth and not state.dataset.truth and not state.test.truth
    assert state.to_query()["hide_truth"] == "true"
    # the fit on screen stays: same run, same numbers, estimate still drawn
    assert page.runner.session.state == "done" and page.fit.fitted is not None
    for name, values in shown_errors.items():
        np.testing.assert_array_equal(page.outcome.shown[name], values)
    assert page.errors.source.data["x"][0][0] == "T0"            # bars under neutral names
    assert "hidden" in truth_view.heatmap.figure.title.text
    assert not truth_view.heatmap.values.any()             # the true W is not drawn
    assert "against the truth" not in page.summary_text()  # nor scored in the summary
    state.hide_truth = False                               # the reveal
    assert state.train.truth and state.train.task_names[0] != "T0"
    assert page.runner.session.state == "done" and page.fit.fitted is not None
    assert truth_view.heatmap.values.any() and "hidden" not in truth_view.heatmap.figure.title.text
    assert "against the truth" in page.summary_text()


def test_fast_runs_the_fit_at_full_speed_in_one_click():
    page = MODEL_PAGES["trees"].build(ExplorerState(dataset_name="local_relatedness"))
    assert page.runner._speed.value == MODEL_PAGES["trees"].pace
    assert page.runner.session.state == "idle"
    page.runner.buttons.fast.clicks += 1
    assert page.runner._speed.value == "unthrottled"
    assert page.runner.session.steps_per_second is None
    assert page.runner.session.state in ("running", "done")   # it started: not only the speed
    page.runner.session.wait(60)
    assert page.runner.session.state == "done"


def test_outliers_show_code_writes_the_penalties_in_the_sliders_units():
    """The sliders are fractions of lambda_max: the code says so (0.2 * lambda_max[...]),
    and it builds the very penalties the page fits with."""
    page = build("outliers")
    page.params.rows = 0.3
    code = page.code()
    assert "lambda_rows=0.3 * lambda_max['lambda_rows']" in code
    assert "lambda_columns=0.2 * lambda_max['lambda_columns']" in code
    namespace: dict = {}
    setup = code.split("model = ")[0]   # the imports, the data and lambda_max, then the model
    exec(compile(setup + "model = " + code.split("model = ")[1].splitlines()[0],  # noqa: S102
                 "<outliers code>", "exec"), namespace)
    made = page.page.make(page.params, int(page.state.init_seed), page.state.train)
    assert namespace["model"].lambda_rows == pytest.approx(made.lambda_rows, rel=1e-12)
    assert namespace["model"].lambda_columns == pytest.approx(made.lambda_columns, rel=1e-12)


@pytest.mark.parametrize("slug", sorted(DATA_FOR))
def test_every_figure_has_an_accessible_name_and_truth_figures_say_so(slug):
    page = build(slug)
    run(page)
    truth_named = 0
    for view in page.views:
        for fig in view.figures:
            name = fig.html_attributes.get("aria-label", "")
            assert fig.html_attributes.get("role") == "img" and name, (slug, fig.title.text)
            assert " ".join(fig.title.text.split()) in name
            beside = getattr(view, "truth", None)
            beside = getattr(beside, "heatmap", beside)   # a pair view's truth part
            if isinstance(view, TruthMatrixView) or fig is getattr(beside, "figure", None):
                assert re.match(r"(True|Truth)\b", name), name
                truth_named += 1
    assert page.errors.figure.html_attributes["aria-label"] == "Per-task test error"
    assert truth_named >= 1 or slug == "trees"   # the tree page draws no truth matrix


def test_every_model_page_declares_a_scenario_made_for_it():
    from explorer.data.catalog import list_presets, load_preset

    for slug, page in MODEL_PAGES.items():
        assert page.scenario in list_presets(), slug
        assert load_preset(page.scenario)["page"] == slug


@pytest.mark.parametrize("slug", ["outliers", "transfer"])
def test_a_page_on_data_that_do_not_suit_it_offers_its_scenario_in_one_click(slug):
    page = MODEL_PAGES[slug].build(ExplorerState(page=slug))   # the opening data
    assert page.note.visible and page.scenario_button.visible
    assert "one click loads it" in page.note.object
    page.scenario_button.clicks += 1
    state = page.state
    assert state.scenario == MODEL_PAGES[slug].scenario and state.error == ""
    assert not page.note.visible and not page.scenario_button.visible
    assert page.runner.__panel__().visible and page.body.visible   # the page offers Run


def test_on_139_tasks_the_bars_read_as_a_distribution_and_name_the_worst_tasks():
    page = build("outliers", "school", train_fraction=0.24)
    run(page)
    model = page.outcome.shown["model"]
    names = [str(n) for n in page.state.train.task_names]
    order = np.argsort(-np.nan_to_num(model), kind="stable")
    shown, k = page.errors.source.data, len(page.errors.series)   # model, lasso, ridge
    assert [x[0] for x in shown["x"][::k]] == [names[t] for t in order]   # hover names each
    np.testing.assert_allclose(shown["value"][::k], np.nan_to_num(model)[order])
    assert np.all(np.diff(shown["value"][::k]) <= 0)
    worst = ", ".join(f"{names[t]} ({model[t]:.2f})" for t in order[:3])
    assert f"worst for the model: {worst}" in page.summary_text()
    # the CSV keeps the data's task order
    assert page.exports.results_csv().splitlines()[1].startswith(f"test_error,model,{names[0]},")
    # a few tasks: named under their bars, in the data's order
    page.state.dataset_name = DATA_FOR["outliers"]
    run(page)
    assert [x[0] for x in page.errors.source.data["x"][::k]] == [
        str(n) for n in page.state.train.task_names]
    assert "worst for the model" not in page.summary_text()


def test_a_page_can_choose_its_pace_for_the_data():
    page = build("shared_vs_separate", "school", train_fraction=0.24)
    assert page.page.pace_for(page.state.train) == "30 steps/s"   # 300 steps: 10 s
    page.state.dataset_name = DATA_FOR["shared_vs_separate"]   # the speed is set again
    assert page.runner._speed.value == "5 steps/s" == page.page.pace_for(page.state.train)


def test_a_matrix_of_your_own_is_judged_against_the_truth_you_choose():
    from explorer.app.matrix_upload import YourMatrixPanel

    page = build("shared_vs_separate")
    panel = panel_of(page, "YourMatrixPanel")
    assert isinstance(panel, YourMatrixPanel) and panel.layout in page._layout.objects
    assert panel.view is None and not panel.result.objects   # no figures before a file
    truth = page.state.train.truth
    assert {"task_relation", "task_similarity"} <= set(panel.truth_key.options)
    panel.truth_key.value = "task_relation"
    names = ",".join(str(n) for n in page.state.train.task_names)
    relation = np.asarray(truth["task_relation"], dtype=float)
    csv = names + "\n" + "\n".join(",".join(str(v) for v in row) for row in 0.5 * relation)
    panel.file.filename = "mine.csv"
    panel.file.value = csv.encode()          # read synchronously where no loop runs
    assert panel.result.visible and not panel.message.visible
    np.testing.assert_array_equal(panel.view.estimate.heatmap.values, 0.5 * relation)
    np.testing.assert_array_equal(panel.view.truth.heatmap.values, relation)
    assert "sign right on <b>100%</b>" in panel.view.caption.text
    assert "rank correlation <b>1.00</b>" in panel.view.caption.text
    panel.truth_key.value = "task_similarity"  # the other truth, the same matrix
    np.testing.assert_allclose(panel.view.truth.heatmap.values, truth["task_similarity"])
    panel.file.filename = "wrong.csv"
    panel.file.value = b"1,0\n0,1\n"
    m = page.state.train.n_tasks
    assert panel.message.visible and f"a {m} x {m} matrix" in panel.message.object
    assert not panel.result.visible


def _scenarios_with_page_values() -> list[str]:
    from explorer.data.catalog import list_presets, load_preset

    return [name for name in list_presets() if load_preset(name).get("page_params")
            and load_preset(name).get("page") in MODEL_PAGES]


@pytest.mark.parametrize("scenario", _scenarios_with_page_values())
def test_a_scenario_chosen_after_its_page_was_built_shows_its_values_in_the_widgets(scenario):
    """Issue 39: Shared vs separate first, then "When sharing hurts": the fit used coupling 10
    while the slider read 0.1. The widget shows the value the fit uses however it was set."""
    from explorer.data.catalog import load_preset

    preset = load_preset(scenario)
    page = build(preset["page"])            # the page first, on the opening data
    page.state.apply_preset(scenario)       # then the scenario
    for name, value in preset["page_params"].items():
        assert getattr(page.params, name) == value            # what the fit uses
        assert page.form.widgets[name].value == value, name    # what the widget reads
        assert page.state.to_query()[f"{preset['page']}.{name}"] == str(value)   # the link


def test_without_a_truth_the_estimate_stands_alone_and_the_truth_comes_back_on_the_reveal():
    """Issue 39: Outliers on School gave half its first screen to an empty "True W" box. With
    no truth (hidden, or real data) the story row holds the estimate alone, at the pair's
    width and with its own colour bar; the reveal puts the truth back beside it."""
    from explorer.viz.live import EstimateTruthView

    page = build("outliers")
    pair = next(v for v in page.views if isinstance(v, EstimateTruthView))
    estimate, truth = pair.estimate.heatmap.figure, pair.truth.heatmap.figure
    assert [pane.object for pane in page.story.objects] == [estimate, truth]
    assert estimate.right == [] and estimate.frame_width == pair.frame
    page.state.hide_truth = True
    # the truth keeps its place in the row, hidden (the reveal only shows it again)
    assert [pane.object for pane in page.story.objects if pane.object.visible] == [estimate]
    assert [pane.object for pane in page.story.objects] == [estimate, truth]
    assert estimate.frame_width == 2 * pair.frame and estimate.right == [pair._estimate_bar]
    assert "no truth" in estimate.title.text
    run(page)
    assert "none, the truth is hidden or unknown" in pair.caption.text
    page.state.hide_truth = False
    assert [pane.object for pane in page.story.objects
            if pane.object.visible] == [estimate, truth]
    assert estimate.right == [] and "no truth" not in estimate.title.text
