"""The "Task relationships (MTBoost)" page in-process (no browser): views against the fitted
model and the truth, the variant switch on the same data and seed, the supertask on 2-D data,
a link's bad value refused."""

from __future__ import annotations

import re

import numpy as np

from explorer.app.pages import PAGES
from explorer.app.state import ExplorerState
from explorer.viz.live import SnapshotMatrixView, TruthMatrixView
from explorer.viz.mtboost import LossBoundsView, SupertaskView

PAGE = next(p for p in PAGES if getattr(p, "slug", "") == "mtboost")


#: The page's scenario's data (boosting_relationships): 2-D, a negated and an unrelated task.
FAMILY_2D = {"relations": "related,negated,unrelated", "n_features": 2, "n_samples_per_task": 100}


def build(**state_params):
    state_params.setdefault("data_params", FAMILY_2D)
    page = PAGE.build(ExplorerState(dataset_name="task_family", **state_params))
    page.runner._speed.value = "unthrottled"
    return page


def run(page):
    page.runner.session.run()
    assert page.runner.session.wait(60)
    page.runner.poll()
    assert page.runner.session.state == "done", page.runner.session.error
    return page.runner.session.estimator


def view(page, cls, key=None):
    views = [part for v in page.views for part in (v, *getattr(v, "parts", ()))]
    return next(v for v in views if isinstance(v, cls) and getattr(v, "key", key) == key)


def test_the_page_shows_omega_beside_the_truth_and_the_bounds_per_round():
    page = build()
    page.params.n_rounds = 15
    model = run(page)
    shown = view(page, SnapshotMatrixView, "correlation").heatmap.values
    np.testing.assert_allclose(shown, model.task_relationships()["correlation"])
    np.testing.assert_allclose(view(page, SnapshotMatrixView, "Omega").heatmap.values,
                               model.Omega_)
    truth = page.state.train.truth["task_relation"]
    np.testing.assert_array_equal(view(page, TruthMatrixView, "task_relation").heatmap.values,
                                  truth)
    linked = ~np.eye(4, dtype=bool) & (truth != 0)
    assert np.all(np.sign(shown[linked]) == truth[linked])
    curve = view(page, LossBoundsView).source.data
    assert curve["round"] == list(range(1, model.n_iter_ + 1))   # every round, frames skip
    np.testing.assert_allclose(curve["loss"], model.objective_history_)
    assert np.all(np.array(curve["reversed"]) <= np.array(curve["loss"]) + 1e-12)
    series = page.errors.series
    assert series == ["model", "AnyBoost", "Omega fixed at I/m"]
    assert "Correlation signs right on **3 of 3**" in page.summary_text()


def test_the_variant_switch_shows_the_collapse_and_the_rising_loss():
    page = build()
    page.params.param.update(n_rounds=12, lam=3e-3)
    corrected = run(page)
    page.params.variant = "paper"                      # same data, same seed
    assert page.runner.session.state == "idle"
    paper = run(page)
    assert paper is not corrected and paper.step_ == "plain"
    values = np.sort(np.linalg.eigvalsh(paper.Omega_))[::-1]
    assert values[1] < 1e-3 * values[0]
    np.testing.assert_allclose(np.abs(view(page, SnapshotMatrixView, "correlation")
                                      .heatmap.values), 1.0, atol=1e-6)
    assert view(page, LossBoundsView).broken >= 1    # loss above the paper's claimed bound
    assert "Omega's eigenvalue ratio" in page.summary_text()
    # the claim is explained where it appears: what Theorem 2 says and where it is drawn
    above = re.search(r"Theorem 2 bound in \*\*(\d+)\*\* rounds: Theorem 2 claims",
                      page.summary_text())
    assert above and int(above.group(1)) >= 1 and "orange curve" in page.summary_text()


def test_the_supertask_is_drawn_with_weights_and_flips():
    page = build()
    page.params.n_rounds = 5
    run(page)
    supertask = view(page, SupertaskView)
    data = supertask.points
    assert len(data["x"]) == page.state.train.X.shape[0]
    last = page.runner.session.record.items()[-1].info
    train = page.state.train
    order = np.lexsort((train.X[:, 1], train.X[:, 0]))   # the points are drawn per label
    drawn = np.lexsort((data["y"], data["x"]))
    np.testing.assert_array_equal(data["flipped"][drawn], np.asarray(last["flipped"])[order])
    # a point's colour is its supertask label: its label, negated where it was flipped
    top = {name: train.y[train.task == t].max() for t, name in enumerate(train.task_names)}
    is_top = [y == top[t] for y, t in zip(data["label"], data["task"], strict=True)]
    signed = np.where(is_top, 1, -1)
    np.testing.assert_array_equal(data["supertask"], np.where(data["flipped"], -signed, signed))
    assert set(data["marker"]) <= {"circle", "triangle"}
    # the negated task is flipped against the base (their weights have opposite signs)
    names = [str(n) for n in train.task_names]
    flipped = np.asarray(data["flipped"], bool)
    assert flipped[data["task"] == names[0]].all() != flipped[data["task"] == names[2]].all()
    sizes = np.array(data["size"])
    assert sizes.max() > sizes.min()


def test_a_link_sets_the_variant_and_a_bad_value_is_refused():
    page = build()
    problems = page.state.from_query({"mtboost.variant": "paper", "mtboost.lam": "-1"})
    assert page.params.variant == "paper" and page.params.lam == 0.1
    assert len(problems) == 1 and "lam" in problems[0]
