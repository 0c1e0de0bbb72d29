"""Scenarios (data/scenarios/*.json): every page covered, each one loads through the state and
reaches its page with its settings, each story's claim holds on its data, and the sidebar
marks a scenario "(edited)" once a data setting changes."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from explorer.app.pages import PAGES
from explorer.app.state import ExplorerState
from explorer.data.catalog import list_presets, load_preset, make_dataset
from explorer.parameters import encode_value
from explorer.viz.live import escape

SCENARIOS = list_presets()
PAGE_BY_SLUG = {page.slug: page for page in PAGES}


def _data(name):
    """The scenario, its data set and the split the app makes of it."""
    scenario = load_preset(name)
    data = make_dataset(scenario["dataset"], scenario["params"],
                        random_state=scenario["data_seed"])
    train, test = data.split(scenario.get("train_fraction", 0.7),
                             random_state=scenario["data_seed"])
    return scenario, data, train, test


def _page_params(name):
    """The scenario's page hyper-parameters as the page's own declaration holds them."""
    scenario = load_preset(name)
    return PAGE_BY_SLUG[scenario["page"]].params(**scenario.get("page_params", {}))


def _errors(model, test):
    return 1 - np.asarray(model.score_per_task(*test.arrays()))


def _app():
    from explorer.app import ExplorerApp

    return ExplorerApp(state=ExplorerState())


def _chooser(app):
    from explorer.app.scenarios import ScenarioChooser

    return next(item for item in app.sidebar if isinstance(item, ScenarioChooser))


def _page_settings(app, slug):
    view = app._built[slug]
    return getattr(view, "params", None) or getattr(view, "settings", None)


# ---------------------------------------------------------------------- coverage, loading
def test_at_least_eight_scenarios_and_every_page_has_one():
    assert len(SCENARIOS) >= 8
    # every page that shows data (the Class page is the teacher's view of a class: its
    # rounds take their scenarios from the other pages')
    assert {load_preset(name)["page"] for name in SCENARIOS} == set(PAGE_BY_SLUG) - {"class"}
    for name in SCENARIOS:
        story = load_preset(name)["story"]
        assert story.strip() and "\n" not in story


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario_loads_and_reaches_its_page_with_its_settings(name):
    scenario = load_preset(name)
    app = _app()
    state = app.state
    try:
        assert state.apply_preset(name), state.notices
        assert not [n for n in state.notices if n[0] in ("warning", "error")]
        assert (state.page, state.scenario, state.scenario_edited) == (scenario["page"], name,
                                                                       False)
        expected = make_dataset(scenario["dataset"], scenario["params"],
                                random_state=scenario["data_seed"])
        np.testing.assert_array_equal(state.dataset.X, expected.X)
        np.testing.assert_array_equal(state.dataset.y, expected.y)
        assert state.train_fraction == scenario.get("train_fraction", 0.7)
        assert state.init_seed == scenario.get("init_seed", 0)
        assert app.shown is app._built[scenario["page"]]          # the page was built and shown
        owner = PAGE_BY_SLUG[scenario["page"]].params
        if owner is None:
            assert not scenario.get("page_params")
        else:   # the page's settings: the scenario's values, the rest at their defaults
            settings = _page_settings(app, scenario["page"])
            for pname in owner.param:
                if pname != "name":
                    want = scenario.get("page_params", {}).get(pname, owner.param[pname].default)
                    assert getattr(settings, pname) == want, pname
            query = state.to_query()                     # and the address bar says so
            for pname, value in scenario.get("page_params", {}).items():
                assert query[f"{scenario['page']}.{pname}"] == encode_value(owner.param[pname],
                                                                            value)
        chooser = _chooser(app)
        assert chooser.select.value == name and chooser.story.visible
        assert chooser.story.object == escape(scenario["story"])
        assert state.to_query()["scenario"] == name
    finally:
        app.close()


def test_a_built_page_gets_the_scenario_settings_back():
    app = _app()
    state = app.state
    try:
        assert state.apply_preset("sharing_hurts")
        settings = _page_settings(app, "shared_vs_separate")
        settings.param.update(coupling=0.01, max_iter=50)       # the user moves the sliders
        assert state.apply_preset("sharing_hurts")              # choosing it again restores them
        assert (settings.coupling, settings.max_iter) == (10.0, 300)
        assert state.apply_preset("negated_task")               # same page, its own settings
        assert settings.coupling == 0.1
    finally:
        app.close()


# ---------------------------------------------------------------------- each story's claim
def test_story_unrelated_among_related():
    _, data, _, _ = _data("unrelated_among_related")
    relation, cosine = data.truth["task_relation"], data.truth["task_similarity"]
    np.testing.assert_array_equal(relation[:3, :3], 1)              # tasks 0-2 related
    np.testing.assert_array_equal(relation[3, :3], 0)               # task 3 unrelated to all
    assert abs(cosine[0, 3]) < 1e-9                                 # turned by 90 degrees
    assert cosine[0, 1] > 0.9 and cosine[0, 2] > 0.9
    assert data.n_features == 2                                     # drawn as it is, no PCA


def _shared_vs_separate(name):
    from explorer.app.pages.shared_vs_separate import make_model, make_separate

    scenario, data, train, test = _data(name)
    params = _page_params(name)
    seed = scenario.get("init_seed", 0)
    shared = make_model(params, seed, train).fit(*train.arrays())
    separate = make_separate(params, seed, train).fit(*train.arrays())
    return data, train, test, shared, separate


def test_story_two_related_tasks_sharing_pays():
    data, train, test, shared, separate = _shared_vs_separate("two_related_tasks")
    assert data.truth["task_relation"][0, 1] == 1
    assert data.n_features == 20 and list(train.task_sizes) == [20, 20]
    assert shared.task_relationships()["similarity"][0, 1] > 0.8
    assert _errors(shared, test).mean() < _errors(separate, test).mean() - 0.03


def test_story_negated_task():
    data, _, _, shared, _ = _shared_vs_separate("negated_task")
    assert data.truth["task_relation"][0, 2] == -1 and data.truth["task_relation"][0, 1] == 1
    similarity = shared.task_relationships()["similarity"]
    assert similarity[0, 2] < -0.8 and similarity[0, 1] > 0.8


def test_story_sharing_hurts():
    data, _, test, shared, separate = _shared_vs_separate("sharing_hurts")
    assert shared.lambda_deviation == 10.0                           # the strong coupling
    assert list(data.truth["task_relation"][0, 1:]) == [-1, 0]
    assert _errors(shared, test).mean() > _errors(separate, test).mean() + 0.15


def test_story_different_label_sets():
    from explorer.app.pages.trees import make_model

    scenario, data, train, _ = _data("different_label_sets")
    tree = make_model(_page_params("different_label_sets"), 0, train).fit(*train.arrays())
    assert [len(c) for c in tree.classes_] == [4, 2]
    borrowing = tree.split_borrowing_
    assert borrowing[1, 0] > 0.1 > borrowing[0, 1]    # task 1 reuses task 0's splits, not back
    own = [node for node in tree.nodes_ if node.get("feature") == 0
           and node.get("deciding_task") == 1 and abs(node["threshold"] - 2.0) < 0.5]
    assert own                                        # task 1's own split near x0 = 2
    assert data.truth["local_region"].any() and not data.truth["local_region"].all()


def test_story_outlier_tasks_in_high_dimension():
    from explorer.app.pages.outliers import make_model

    _, data, train, _ = _data("outlier_tasks")
    assert data.n_features == 100 and train.task_sizes.max() < 25      # d >> n per task
    model = make_model(_page_params("outlier_tasks"), 0, train).fit(*train.arrays())
    np.testing.assert_array_equal(model.outlier_tasks_, data.truth["outlier_tasks"])
    assert data.truth["outlier_tasks"].sum() == 2
    shared = data.truth["shared_features"]
    assert shared.sum() == 5 and model.shared_features_[shared].all()
    assert model.shared_features_.sum() == 11                          # 6 false alarms


def test_story_school_outliers():
    from explorer.app.pages.outliers import make_model

    scenario, data, train, _ = _data("school_outliers")
    assert (data.n_tasks, data.n_features) == (139, 27) and scenario["train_fraction"] == 0.24
    model = make_model(_page_params("school_outliers"), 0, train).fit(*train.arrays())
    assert model.shared_features_.sum() == 9 and model.outlier_tasks_.sum() == 5


def test_story_boosting_relationships():
    from explorer.app.pages.mtboost import make_model

    _, data, train, _ = _data("boosting_relationships")
    model = make_model(_page_params("boosting_relationships"), 0, train).fit(*train.arrays())
    correlation = model.correlation_
    assert list(data.truth["task_relation"][0]) == [1, 1, -1, 0]
    assert correlation[0, 1] > 0.3 and correlation[0, 2] < -0.3 and abs(correlation[0, 3]) < 0.2


def test_story_neighbours_from_other_tasks():
    from explorer.app.pages.mtknn import make_model

    _, data, train, _ = _data("neighbours_from_other_tasks")
    model = make_model(_page_params("neighbours_from_other_tasks"), 0, train)
    W = model.fit(*train.arrays()).task_relationships()["W"]
    relation = data.truth["task_relation"]
    off = ~np.eye(data.n_tasks, dtype=bool)
    assert (relation[off] != 0).all()
    np.testing.assert_array_equal(np.sign(W[off]), relation[off])  # + related, - negated


def test_story_new_task_from_task_features():
    from explorer.compare.transfer import held_out_tasks, zero_shot_table

    _, data, _, _ = _data("new_task_from_task_features")
    params = _page_params("new_task_from_task_features")
    assert data.task_features is not None and held_out_tasks(data.n_tasks)[1].size == 10
    table = zero_shot_table(data, n_clusters=params.n_clusters, covariance=params.covariance,
                            random_state=0)
    tltf = table.pop("TL-TF")["mean AP"]
    assert set(table) == {"STL (pooled)", "TL-SC", "TL-MC", "TL-Comb"}
    assert all(tltf > other["mean AP"] + 0.05 for other in table.values())


def test_story_paper_table():
    from explorer.compare import compare
    from explorer.compare.methods import CompareSettings, chosen_estimators

    scenario, data, _, _ = _data("paper_table")
    assert set(scenario["page_params"]) <= set(CompareSettings.param)   # methods that exist
    settings = _page_params("paper_table")
    estimators = chosen_estimators(settings, data.kind,
                                   task_features=data.task_features is not None)
    assert sorted(estimators) == ["L2,1 MTFL", "rMTFL", "ridge per task"]
    # as the page runs it: the data seed roots the trials, the train fraction of the sidebar
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # an inner solver's ConvergenceWarning is no claim
        result = compare(estimators, data, n_trials=settings.n_trials,
                         train_fraction=scenario["train_fraction"],
                         random_state=scenario["data_seed"], progress=False)
    average = result.frame.groupby("method")["value"].mean()
    assert average["rMTFL"] < average["L2,1 MTFL"] < average["ridge per task"]


# ---------------------------------------------------------------------- "(edited)"
@pytest.mark.parametrize("change", [
    {"data_seed": 7}, {"init_seed": 3}, {"train_fraction": 0.5},
    {"dataset_name": "outlier_tasks"}, {"data_params": "noise"}])
def test_changing_a_data_setting_marks_the_scenario_edited(change):
    state = ExplorerState()
    assert state.apply_preset("negated_task")
    if change == {"data_params": "noise"}:
        state.set_data_param("noise", 0.5)
    else:
        state.param.update(**change)
    assert state.scenario == "negated_task" and state.scenario_edited
    assert state.apply_preset("negated_task")                 # choosing it again restores it
    assert not state.scenario_edited and state.data_seed == 0 and state.init_seed == 0
    assert state.current_params()["relations"] == "related,negated"
    assert state.current_params()["noise"] == 0.1 and state.train_fraction == 0.7


def test_edited_means_different_from_the_scenario():
    state = ExplorerState()
    assert state.apply_preset("two_related_tasks")
    state.train_fraction = 0.1 + 0.2 - 0.2                    # a slider's rounding: same value
    assert not state.scenario_edited
    state.set_data_param("n_features", 21)
    assert state.scenario_edited
    state.set_data_param("n_features", 20)                    # changed back by hand
    assert not state.scenario_edited
    state.page = "tasks"                                      # looking elsewhere is no edit
    assert not state.scenario_edited
    state.clear_scenario()
    assert (state.scenario, state.scenario_edited) == ("", False)
    state.data_seed = 5
    assert not state.scenario_edited


def test_sidebar_shows_the_story_then_edited_and_choosing_again_restores():
    from explorer.app.scenarios import NO_SCENARIO, edited_value

    app = _app()
    state = app.state
    try:
        chooser = _chooser(app)
        select = chooser.select
        assert select.value == "" and not chooser.story.visible and select.label == "Scenario"
        assert select.labels[0] == NO_SCENARIO and len(select.values) == len(SCENARIOS) + 1
        # listed under their pages' titles, in the pages' order
        shown = [page for page in PAGES if page.slug != "class"]   # (no scenario of its own)
        assert list(select.groups)[1:] == [page.title for page in shown]
        for page in shown:
            assert {load_preset(name)["page"] for name in select.groups[page.title].values()} \
                == {page.slug}

        chooser.select.value = "negated_task"                  # the user picks a scenario
        title = load_preset("negated_task")["title"]
        assert state.scenario == "negated_task" and state.page == "shared_vs_separate"
        assert chooser.story.visible and "similarity near -1" in chooser.story.object

        state.data_seed = 3                                    # the user edits the data
        assert select.value == edited_value("negated_task")
        labels = dict(zip(select.values, select.labels, strict=True))
        assert labels[edited_value("negated_task")] == f"{title} (edited)"
        assert labels["negated_task"] == title                 # the plain entry stays choosable
        assert select.label == "Scenario (edited)"             # readable however long the title
        assert chooser.story.object.startswith("<i>Edited:</i>")
        assert "choose it again" in chooser.story.object.lower()

        chooser.select.value = "negated_task"                  # chosen again: restored
        assert state.data_seed == 0 and not state.scenario_edited
        assert select.value == "negated_task" and select.label == "Scenario"
        assert edited_value("negated_task") not in select.values
        assert "similarity near -1" in chooser.story.object

        if "hide_truth" in state.param:                        # the story tells the truth
            state.hide_truth = True
            assert "flipped" not in chooser.story.object and "hidden" in chooser.story.object
            state.hide_truth = False
            assert "similarity near -1" in chooser.story.object

        chooser.select.value = ""                              # no scenario: no story
        assert state.scenario == "" and not chooser.story.visible
        assert "scenario" not in state.to_query()
    finally:
        app.close()


def test_story_is_escaped_and_page_values_are_checked_like_link_values(tmp_path, monkeypatch):
    import explorer.data.catalog as catalog

    base = load_preset("sharing_hurts")
    for name, changes in {"odd": {"story": "Look at <b>this</b> & that"},
                          "bad_page_value": {"page_params": {"coupling": 1000, "size": 0.5}},
                          "unknown_page_value": {"page_params": {"bogus": 1}}}.items():
        (tmp_path / f"{name}.json").write_text(json.dumps({**base, "name": name, **changes}))
    monkeypatch.setattr(catalog, "_scenario_dir", lambda: tmp_path)

    app = _app()
    state = app.state
    try:
        chooser = _chooser(app)
        chooser.select.value = "odd"
        assert chooser.story.object == "Look at &lt;b&gt;this&lt;/b&gt; &amp; that"

        assert not state.apply_preset("bad_page_value")
        level, message = state.notices[-1]
        assert level == "warning" and "shared_vs_separate.coupling must be a finite number in " \
                                      "[0.0001, 10]; got 1000" in message
        settings = _page_settings(app, "shared_vs_separate")
        assert settings.coupling == 0.1 and settings.size == 0.5   # refused one not applied
        # the very message a link's value gets
        problems = state.from_query({"shared_vs_separate.coupling": "1000"})
        assert problems == ["shared_vs_separate.coupling must be a finite number in "
                            "[0.0001, 10]; got '1000'"]
        assert not state.apply_preset("unknown_page_value")
        assert "'bogus' is not a parameter here" in state.notices[-1][1]
    finally:
        app.close()


def test_a_scenario_file_is_checked_when_read(tmp_path, monkeypatch):
    import explorer.data.catalog as catalog

    base = load_preset("negated_task")
    files = {"no_story": {k: v for k, v in base.items() if k != "story"},
             "bad_param": {**base, "params": {"n_features": 0}},
             "typo_param": {**base, "params": {"relation": "related"}},
             "two_lines": {**base, "story": "one\ntwo"},
             "other_name": {**base, "name": "negated_task"}}
    for name, content in files.items():
        content = {**content, "name": content["name"] if name == "other_name" else name}
        (tmp_path / f"{name}.json").write_text(json.dumps(content))
    (tmp_path / "broken.json").write_text("{")
    monkeypatch.setattr(catalog, "_scenario_dir", lambda: tmp_path)
    messages = {"no_story": "missing keys ['story']", "bad_param": "n_features must be",
                "typo_param": "['relation'] are not parameters",
                "two_lines": "'story' must be one line",
                "other_name": "'name' must be the file's name", "broken": "not valid JSON"}
    state = ExplorerState()
    before = state.dataset
    for name, message in messages.items():
        with pytest.raises(ValueError, match=f"scenario '{name}'"):
            load_preset(name)
        assert not state.apply_preset(name)
        assert message in state.notices[-1][1] and state.dataset is before


# ---------------------------------------------------------------------- links
def test_a_link_carries_the_scenario_and_is_validated():
    state = ExplorerState()
    assert state.apply_preset("sharing_hurts")
    state.data_seed = 4
    query = state.to_query()
    assert query["scenario"] == "sharing_hurts"

    other = ExplorerState()                       # a new session opening the link
    assert other.from_query(query) == []
    assert (other.scenario, other.scenario_edited, other.data_seed) == ("sharing_hurts", True, 4)
    assert other.page == "shared_vs_separate"
    assert other._pending_page_values["shared_vs_separate"]["coupling"] == 10.0

    short = ExplorerState()                       # the scenario alone; the link's page wins
    assert short.from_query({"scenario": "outlier_tasks", "page": "tasks",
                             "outliers.rows": "0.5"}) == []
    assert short.dataset_name == "outlier_tasks" and short.page == "tasks"
    assert not short.scenario_edited
    assert short._pending_page_values["outliers"]["rows"] == 0.5

    bad = ExplorerState()
    before = bad.dataset
    problems = bad.from_query({"scenario": "../../etc/passwd"})
    assert problems and problems[0].startswith("scenario must be one of [")
    assert "got '../../etc/passwd'" in problems[0]
    assert bad.scenario == "" and bad.dataset is before
    assert bad.owns_query_key("scenario")
