"""The "Outliers & shared features" page without a browser: fit, render, refit warm, reset."""

from __future__ import annotations

import numpy as np

from explorer.app.pages import PAGES
from explorer.app.state import ExplorerState


def _page():
    state = ExplorerState(dataset_name="outlier_tasks")
    page = next(p for p in PAGES if p.slug == "outliers").build(state)
    page.runner._speed.value = "unthrottled"
    return state, page


def _run(page):
    runner = page.runner
    runner.session.run()
    assert runner.session.wait(60)
    runner.poll()
    assert runner.session.state == "done", runner.session.error
    return runner.session.estimator


def test_page_fits_and_marks_outliers_against_the_truth():
    state, page = _page()
    m, d = state.train.n_tasks, state.train.n_features
    assert page.P.shape == page.Q.shape == page.W.shape == (m, d)
    model = _run(page)
    # the views show the fitted model, tasks x features
    shown_q = page.Q.values
    np.testing.assert_allclose(shown_q, model.Q_.T)
    truth = state.dataset.truth["outlier_tasks"]
    outcomes = page.bars.source.data["outcome"]
    for t in range(m):
        detected = t in model.outlier_tasks_
        assert outcomes[t].startswith("outlier" if detected else ("missed" if truth[t]
                                                                  else "shares"))
    assert "F1 against the truth" in page._note.object and "Test nMSE" in page._note.object
    assert len(page.curve.source.data["x"]) == model.n_iter_


def test_lambda_slider_refits_from_the_current_solution():
    state, page = _page()
    first = _run(page)
    n_first = first.n_iter_
    before = np.array(page.bars.source.data["score"])
    # the largest lambda2 on the slider: no task may keep its own weights
    page.lambda2.value = max(page.lambda2.options.values())
    assert page.runner.session.wait(60)   # the slider started a warm refit by itself
    page.runner.poll()
    refit = page.runner.session.estimator
    assert refit is first and refit.lambda2 == page.lambda2.value   # same model, new lambda
    after = np.array(page.bars.source.data["score"])
    assert np.any(before > 0) and np.all(after == 0) and len(refit.outlier_tasks_) == 0
    # a warm refit after a small change takes fewer iterations than the first fit
    page.lambda2.value = sorted(page.lambda2.options.values())[-2]
    assert page.runner.session.wait(60)
    page.runner.poll()
    assert page.runner.session.estimator.n_iter_ < n_first


def test_reset_clears_the_views_and_drops_the_warm_start():
    _, page = _page()
    _run(page)
    page.runner.reset()
    assert page._estimator is None and page.curve.source.data["x"] == []
    assert not np.any(page.Q.values)


def test_classification_data_gets_a_note_not_a_crash():
    state = ExplorerState(dataset_name="local_relatedness")
    page = next(p for p in PAGES if p.slug == "outliers").build(state)
    assert "regression" in page._panes[0].object
