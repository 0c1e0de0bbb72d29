"""The Neighbourhoods (MT-KNN) page in process: W beside the truth, the inspector, and
Figure 4 (test error against k) as the page's sweep of k."""

import numpy as np
from test_model_pages import build, panel_of, run, view_of

from explorer.viz.live import SnapshotMatrixView
from explorer.viz.mtknn import neighbour_votes

#: 2-D tasks (the inspector needs them), a negated and an unrelated task.
FAMILY_2D = {"relations": "related,negated,unrelated", "n_features": 2, "n_samples_per_task": 100}


def test_mtknn_page_shows_W_the_inspector_and_the_k_curve():
    page = build("mtknn", data_params=FAMILY_2D)
    model = run(page)
    shown = view_of(page, SnapshotMatrixView, "W_normalised").heatmap.values
    np.testing.assert_allclose(shown, model.task_relationships()["W_normalised"], rtol=1e-6)
    # click a test point: its k neighbours from all tasks, votes w_{t_i,t_l} s(i,l) y_l
    inspector = panel_of(page, "InspectorPanel").inspector
    inspector.points.selected.indices = [3]
    links = inspector.links.data
    assert len(links["vote"]) == model.n_neighbors
    test = page.state.test
    info = neighbour_votes(model, test.X[3], int(test.task[3]))
    np.testing.assert_allclose(links["vote"], info["vote"])
    f = model.decision_function(test.X[3:4], test.task[3:4])[0]
    assert np.isclose(np.sum(info["vote"]), f)
    assert f"class {info['decision']}" in inspector.figure.title.text
    # Figure 4: the sweep's first setting is k (here, without a loop, run at once)
    sweep = panel_of(page, "SweepPanel")
    assert sweep.setting.value == "k"
    sweep.n_values.value, sweep.n_trials.value = 4, 1
    sweep.run()
    curve = sweep.curves.source.data
    assert list(curve["x"]) == [1, 14, 27, 40] and np.isfinite(curve["test"]).all()
    assert sweep.outcome["result"].param == "n_neighbors"
    # a new k from the slider refits with that k
    page.params.k = 7
    assert run(page).n_neighbors == 7


def test_the_papers_solver_from_the_page_never_raises_the_objective():
    page = build("mtknn", data_params=FAMILY_2D)
    page.params.solver = "paper"
    model = run(page)
    assert model.solver == "paper"
    history = model.objective_history_
    assert np.all(np.diff(history) <= 1e-10 * np.abs(history[1:]))


def test_inspector_votes_add_up_for_mt_kr():
    from explorer.data.synthetic import make_task_family
    from explorer.models import MTKR

    data = make_task_family(kind="regression", n_features=2, random_state=0)
    model = MTKR(n_neighbors=12).fit(data.X, data.y, data.task)
    for i in range(0, 40, 7):
        info = neighbour_votes(model, data.X[i], int(data.task[i]))
        present = np.unique(info["task"])
        missing = np.setdiff1d(np.arange(data.n_tasks), present)
        t = int(data.task[i])
        fallback = float(model.W_[t, missing] @ model.task_means_[missing])
        assert np.isclose(info["vote"].sum() + fallback, info["decision"])


def test_page_runs_mt_kr_on_regression_tasks():
    page = build("mtknn", data_params={**FAMILY_2D, "kind": "regression"})
    model = run(page)
    assert type(model).__name__ == "MTKR"
    np.testing.assert_allclose(model.W_.sum(1), 1.0, atol=1e-6)
    inspector = panel_of(page, "InspectorPanel").inspector
    inspector.points.selected.indices = [0]
    assert "prediction" in inspector.figure.title.text
    assert "per-task" in page.summary_text()


def test_after_a_paper_fit_the_summary_says_how_far_it_stopped_above_the_optimum():
    page = build("mtknn", data_params=FAMILY_2D)
    page.params.solver = "paper"
    model = run(page)
    gap = model.gap_to_optimum()
    measured = page.fit.result.extra["gap"]   # measured on the fit's worker
    assert measured["optimum"] == gap["optimum"] and measured["objective"] == gap["objective"]
    if gap["relative_gap"] > 1e-3:
        assert f"stopped {gap['relative_gap']:.0%} above the optimum" in page.summary_text()
    else:
        assert "reached the default solver's optimum" in page.summary_text()
    page.params.solver = "dual"   # the default solver: nothing to say, nothing measured
    run(page)
    assert "paper's solver" not in page.summary_text()
    assert "gap" not in page.fit.result.extra


def test_the_gap_sentence_reads_as_the_issue_asks():
    from types import SimpleNamespace

    from explorer.app.pages.mtknn import explain_gap

    paper = SimpleNamespace(solver="paper")
    result = SimpleNamespace(extra={"gap": {"objective": 3.01, "optimum": 2.36,
                                            "relative_gap": 0.65 / 2.36}})
    assert explain_gap(paper, result, None, None) == (
        "The paper's solver stopped 28% above the optimum the default solver reaches "
        "(3.01 vs 2.36).")
    too_many = explain_gap(paper, SimpleNamespace(extra={}), None, None)
    assert "at most 50 tasks" in too_many
    assert explain_gap(SimpleNamespace(solver="dual"), result, None, None) == ""


def test_the_page_shows_the_exact_solvers_refusal_of_too_many_tasks(monkeypatch):
    from explorer.solvers import task_weights

    monkeypatch.setattr(task_weights, "MAX_EXACT_TASKS", 2)
    page = build("mtknn", data_params=FAMILY_2D)
    runner = page.runner
    runner.session.run()
    assert runner.session.wait(60)
    runner.poll()
    assert runner.session.state == "error"
    assert "at most n_tasks = 2" in runner.session.error
