"""The data the app opens on shows the point of multi-task learning, and every page's default
fit lasts 5-20 s at the pace it opens at.

The opening data are the state's defaults (the default catalog entry with its default
parameters) under several data seeds; each page is measured with its default settings and
its own baselines, as the page compares them.
"""

from __future__ import annotations

import numpy as np
import pytest

from explorer.app.kit import ModelPage, per_task_error
from explorer.app.pages import PAGES
from explorer.app.runner import SPEEDS
from explorer.app.state import ExplorerState
from explorer.compare import compare
from explorer.compare.methods import CompareSettings, chosen_estimators
from explorer.data.catalog import load_preset

MODEL_PAGES = {p.slug: p for p in PAGES if isinstance(p, ModelPage)}
SEEDS = range(5)
SINGLE_TASK = {"single-task logistic"}


def _fit(page: ModelPage, state: ExplorerState, page_params=None):
    """The page's model (fitted step by step: the steps counted) and its mean test error, and
    each baseline's mean test error, as the page builds them from its settings."""
    train, test = state.train, state.test
    params = page.params(**(page_params or {}))
    seed = int(state.init_seed)
    model = page.make(params, seed, train)
    kwargs = {}
    if train.task_features is not None and getattr(model, "uses_task_features", False):
        kwargs["task_features"] = train.task_features
    steps = sum(1 for _ in model.fit_iter(train.X, train.y, train.task, **kwargs))
    errors = {"model": float(np.nanmean(per_task_error(model, test)))}
    for name, make in page.baselines.items():
        baseline = make(params, seed, train).fit(train.X, train.y, train.task)
        errors[name] = float(np.nanmean(per_task_error(baseline, test)))
    return steps, errors


#: Each model page that fits the opening data, and its single-task baseline (the page's name).
SINGLE_TASK_BASELINES = [("shared_vs_separate", "separate"), ("trees", "single-task"),
                         ("mtboost", "AnyBoost"), ("mtknn", "per-task")]


@pytest.mark.parametrize(("slug", "baseline"), SINGLE_TASK_BASELINES)
def test_at_the_default_seed_the_multi_task_model_beats_its_single_task_baseline(
        slug, baseline):
    """What a newcomer sees first: the opening data as the app opens on them (the state's
    default data and init seeds), where the page's summary reads "Mean test error ...:
    model X, <baseline> Y" with X < Y."""
    assert baseline in MODEL_PAGES[slug].baselines
    _, errors = _fit(MODEL_PAGES[slug], ExplorerState())
    assert errors["model"] < errors[baseline], errors


@pytest.mark.parametrize(("slug", "baseline", "wins"), [
    ("shared_vs_separate", "separate", 4),
    ("trees", "single-task", 3),
    ("mtboost", "AnyBoost", 3),
    ("mtknn", "per-task", 3)])
def test_the_multi_task_model_beats_its_single_task_baseline_on_the_opening_data(
        slug, baseline, wins):
    """On the mean over five data seeds, and on most of them one by one."""
    model, single = [], []
    for seed in SEEDS:
        _, errors = _fit(MODEL_PAGES[slug], ExplorerState(data_seed=seed))
        model.append(errors["model"])
        single.append(errors[baseline])
    model, single = np.array(model), np.array(single)
    assert model.mean() < single.mean(), (model, single)
    assert np.sum(model < single) >= wins, (model, single)


def test_compare_finds_a_multi_task_method_best_on_the_opening_data():
    """The Compare page's default methods and trials: the lowest average error is a multi-task
    method's under every data seed."""
    for seed in SEEDS:
        state = ExplorerState(data_seed=seed)
        settings = CompareSettings()
        estimators = chosen_estimators(settings, state.dataset.kind, task_features=False)
        assert SINGLE_TASK <= set(estimators)
        result = compare(estimators, state.dataset, n_trials=settings.n_trials,
                         train_fraction=state.train_fraction, random_state=seed, n_jobs=1,
                         progress=False)
        average = result.values().mean(axis=1)   # per method, over the trials
        assert average.idxmin() not in SINGLE_TASK, (seed, average)


def test_the_opening_data_keep_an_unrelated_task_among_related_ones():
    truth = ExplorerState().dataset.truth["task_relation"]
    assert truth.shape[0] >= 4 and (truth[0] == 1).sum() >= 3 and (truth[0] == 0).sum() >= 1


def _cases():
    for slug, page in MODEL_PAGES.items():
        yield pytest.param(slug, None, id=f"{slug}-opening")
        yield pytest.param(slug, page.scenario, id=f"{slug}-{page.scenario}")


@pytest.mark.parametrize(("slug", "scenario"), list(_cases()))
def test_the_default_fit_lasts_5_to_20_s_at_the_pace_the_page_opens_at(slug, scenario):
    """Steps of the fit at the page's defaults (or its scenario's settings) over the steps a
    second of its pace: counted, not timed."""
    page = MODEL_PAGES[slug]
    state, page_params = ExplorerState(), {}
    if scenario:
        assert state.apply_preset(scenario)
        page_params = load_preset(scenario).get("page_params", {})
    if page.problem_with(state.train):
        # the page cannot fit these data: it offers its scenario instead (no fit to time)
        assert scenario is None and page.scenario
        return
    steps, _ = _fit(page, state, page_params)
    speed = SPEEDS[page.pace_for(state.train)]
    assert speed is not None
    assert 5 <= steps / speed <= 20, (steps, page.pace_for(state.train))
