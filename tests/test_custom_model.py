"""Your own estimator on a page of its own (explorer.app.custom): the contract check, the
widgets derived from its declaration (or its defaults), one fit for a class without
``fit_iter``, its matrices beside the truth, errors shown on its page, the three ways in
(``--model``, ``MTL_EXPLORER_MODELS``, the entry-point group) and the Compare page's list."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import param
import pytest
import tomllib

from explorer import notebook
from explorer.app import custom
from explorer.app.custom import (
    ContractError,
    check_contract,
    configured_models,
    discovered_models,
    hyper_parameters,
    load_model,
    slug_for,
    unique_slugs,
)
from explorer.app.fit_session import FitJob, FitSession
from explorer.app.kit import ModelPage
from explorer.app.pages import PAGES, pages_for
from explorer.compare.methods import CompareSettings, chosen_estimators, methods_for
from explorer.data.catalog import make_dataset
from explorer.models import RegularizedMTL
from explorer.parameters import public_parameters

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "custom_estimator"
sys.path.insert(0, str(EXAMPLE / "src"))

from similarity_ridge import TaskSimilarityRidge  # noqa: E402

REGRESSION = {"kind": "regression"}


class Plain:
    """A class with the contract and nothing else: no get_params, no fit_iter, no score."""

    def __init__(self, scale=1.0, shrink=True, rounds=3, mode="mean", random_state=None,
                 prior=None):
        self.scale, self.shrink, self.rounds, self.mode = scale, shrink, rounds, mode
        self.random_state, self.prior = random_state, prior

    def fit(self, X, y, task):
        m = int(np.max(task)) + 1
        self.means_ = np.array([np.mean(y[task == t]) for t in range(m)]) * self.scale
        return self

    def predict(self, X, task):
        return self.means_[np.asarray(task)]

    def task_relationships(self):
        gap = np.abs(self.means_[:, None] - self.means_[None, :])
        return {"closeness": 1.0 / (1.0 + gap), "not_a_matrix": self.means_}


class NoRelationships:
    def fit(self, X, y, task):
        return self

    def predict(self, X, task):
        return np.zeros(len(X))


class Fails(Plain):
    def fit(self, X, y, task):
        raise ArithmeticError("the solver diverged at step 3")


# ---------------------------------------------------------------------- the contract
def test_a_class_missing_a_method_is_refused_naming_it():
    with pytest.raises(ContractError, match=r"NoRelationships cannot be served: it has no "
                                            r"task_relationships\(\) method") as refused:
        check_contract(NoRelationships)
    assert "docs/DESIGN.md" in str(refused.value)   # where the contract is (it exists)
    with pytest.raises(ContractError, match="not a class"):
        check_contract(Plain())
    assert check_contract(Plain) is Plain


def test_a_named_class_is_imported_and_checked():
    assert load_model("similarity_ridge:TaskSimilarityRidge") is TaskSimilarityRidge
    with pytest.raises(ContractError, match="package.module:ClassName"):
        load_model("similarity_ridge.TaskSimilarityRidge")
    with pytest.raises(ContractError, match="similarity_ridge has no Missing"):
        load_model("similarity_ridge:Missing")
    with pytest.raises(ContractError, match="importing no_such_module_xyz failed"):
        load_model("no_such_module_xyz:Model")
    with pytest.raises(ContractError, match=f"{__name__}:NoRelationships cannot "
                                            "be served: it has no task_relationships"):
        load_model(f"{__name__}:NoRelationships")


def test_slugs_are_url_safe_and_unique():
    assert slug_for(TaskSimilarityRidge) == "task_similarity_ridge"
    assert slug_for(type("HTTPModel", (), {})) == "http_model"
    assert slug_for(type("Model_ß2", (), {})) == "model_2"
    assert unique_slugs([Plain, Plain, Fails], ["plain"]) == ["plain_2", "plain_3", "fails"]


# ---------------------------------------------------------------------- widgets
def test_widgets_from_scikit_learn_constraints():
    settings = hyper_parameters(TaskSimilarityRidge)
    assert public_parameters(settings) == ["alpha", "coupling", "n_iter"]
    assert isinstance(settings.param.alpha, param.Number)
    assert settings.param.alpha.bounds == (0.0, None)
    assert settings.param.coupling.bounds == (0.0, 100.0)
    assert isinstance(settings.param.n_iter, param.Integer)
    assert settings.param.n_iter.bounds == (1, 200)
    with pytest.raises(ValueError):
        settings(n_iter=0)   # the declaration refuses what the estimator refuses


def test_widgets_from_the_projects_constraints():
    settings = hyper_parameters(RegularizedMTL)
    assert settings.param.loss.objects == ["logistic", "squared"]
    assert isinstance(settings.param.fit_intercept, param.Boolean)
    assert settings.param.lambda_deviation.bounds[0] == 0
    assert "random_state" not in public_parameters(settings)


def test_widgets_from_the_defaults_types():
    settings = hyper_parameters(Plain)
    assert public_parameters(settings) == ["scale", "shrink", "rounds", "mode"]
    assert type(settings.param.scale) is param.Number
    assert settings.param.scale.softbounds == (0.0, 10.0)
    assert type(settings.param.shrink) is param.Boolean
    assert type(settings.param.rounds) is param.Integer
    assert type(settings.param.mode) is param.String


# ---------------------------------------------------------------------- the page
def test_a_live_page_shows_its_matrix_beside_the_truth():
    page = notebook.model_page(TaskSimilarityRidge, "task_family", params=REGRESSION,
                               n_iter=8)
    assert page.page.slug == "task_similarity_ridge" and page.page.kinds == ("regression",)
    assert page.params.n_iter == 8
    view = page.views[0]
    assert view.figures == [] and "run the fit" in view.caption.text
    estimator = notebook.fit(page)
    assert isinstance(estimator, TaskSimilarityRidge) and estimator.n_iter_ == 8
    assert len(page.runner.session.record) == 8
    assert view.keys == ["similarity"]
    names = [fig.title.text for fig in view.figures]
    assert names == ["Learned similarity", "True task_similarity"]
    pair = view.view("similarity")
    np.testing.assert_allclose(pair.estimate.heatmap.values,
                               estimator.task_relationships()["similarity"])
    np.testing.assert_allclose(pair.truth.heatmap.values,
                               page.state.train.truth["task_similarity"])
    assert "rank correlation" in view.caption.text
    assert "Mean test error (" in page.summary.object
    code = page.code()
    assert "from similarity_ridge import TaskSimilarityRidge" in code
    assert "TaskSimilarityRidge(n_iter=8)" in code


def test_a_class_without_fit_iter_is_fitted_once_off_the_loop():
    page = notebook.model_page(Plain(scale=2.0), "task_family", params=REGRESSION)
    assert page.page.objective == "" and page.params.scale == 2.0
    estimator = notebook.fit(page)
    assert isinstance(estimator, Plain) and estimator.scale == 2.0
    record = page.runner.session.record.items()
    assert [s.step for s in record] == [1]
    view = page.views[0]
    assert view.keys == ["closeness"]   # (m, m); the vector is named as not drawn
    assert "not_a_matrix" in view.caption.text and "not drawn" in view.caption.text
    assert "no truth" in view.caption.text
    # errors from predict: the class has no score_per_task
    errors = page.outcome.shown["model"]
    assert errors.shape == (page.state.train.n_tasks,) and np.all(np.isfinite(errors))
    assert "errors = {'model': per_task_error(model, test)}" in page.code()


def test_the_status_says_fitting_while_the_one_fit_runs():
    release, started = threading.Event(), threading.Event()

    class Slow(Plain):
        def fit(self, X, y, task):
            started.set()
            release.wait(30)
            return super().fit(X, y, task)

    page = notebook.model_page(Slow, "task_family", params=REGRESSION)
    page.runner.session.steps_per_second = None
    page.runner.run()
    try:
        assert started.wait(30)
        page.runner.poll()
        assert page.runner.status.startswith("**fitting**"), page.runner.status
    finally:
        release.set()
    assert page.runner.session.wait(30)
    page.runner.poll()
    assert page.runner.status.startswith("**done**")


def test_a_fit_that_raises_shows_its_error_on_its_page():
    page = notebook.model_page(Fails, "task_family", params=REGRESSION)
    with pytest.raises(RuntimeError, match="ArithmeticError: the solver diverged at step 3"):
        notebook.fit(page)
    assert page.runner._alert.visible
    assert "the solver diverged at step 3" in page.runner._alert.object
    other = notebook.app_page("shared_vs_separate")   # the rest goes on
    assert notebook.fit(other) is not None


def test_fit_session_runs_fit_when_there_is_no_fit_iter():
    data = make_dataset("task_family", REGRESSION, random_state=0)
    session = FitSession(lambda: FitJob(Plain(), data.arrays()))
    session.run()
    assert session.wait(30) and session.state == "done"
    assert session.one_fit
    (snapshot,) = session.record.items()
    assert snapshot.step == 1 and snapshot.objective is None
    assert set(snapshot.matrices) == {"closeness", "not_a_matrix"}


# ---------------------------------------------------------------------- ways in
def test_custom_pages_follow_the_shipped_ones_and_join_compare():
    pages = pages_for([TaskSimilarityRidge, Plain])
    slugs = [page.slug for page in pages]
    assert slugs[:len(PAGES)] == [page.slug for page in PAGES]
    assert slugs[len(PAGES):] == ["task_similarity_ridge", "plain"]
    assert all(isinstance(page, ModelPage) for page in pages[len(PAGES):])
    compare = next(page for page in pages if page.slug == "compare")
    settings = compare.params
    assert issubclass(settings, CompareSettings)
    assert set(public_parameters(settings)) == {*public_parameters(CompareSettings),
                                                "task_similarity_ridge", "plain"}
    assert "plain" not in CompareSettings.param   # the shipped keys stay as they were
    offered = compare.build.keywords["methods"]
    assert [m.name for m in methods_for("regression", methods=offered)][-2:] == [
        "TaskSimilarityRidge", "Plain"]
    assert "TaskSimilarityRidge" not in [m.name for m in methods_for("classification",
                                                                     methods=offered)]
    chosen = chosen_estimators(settings(), "regression", methods=offered)
    assert isinstance(chosen["TaskSimilarityRidge"], TaskSimilarityRidge)
    off = chosen_estimators(settings(plain=False), "regression", methods=offered)
    assert "Plain" not in off and "TaskSimilarityRidge" in off


def test_the_compare_page_fits_a_users_estimator():
    from explorer.app.pages.compare import ComparePage
    from explorer.app.state import ExplorerState

    pages = pages_for([TaskSimilarityRidge])
    compare = next(page for page in pages if page.slug == "compare")
    state = ExplorerState(pages={page.slug: page.params for page in pages},
                          data_params=REGRESSION)
    view = compare.build(state)
    assert isinstance(view, ComparePage)
    for key in public_parameters(CompareSettings):
        if isinstance(CompareSettings.param[key], param.Boolean) and key != "ridge":
            setattr(view.settings, key, False)
    view.settings.n_trials = 2
    view.run()
    result = view.result
    assert result is not None, view.status.object
    assert set(result.methods) == {"ridge per task", "TaskSimilarityRidge"}


def test_models_named_in_the_environment():
    environ = {custom.ENV_VAR: f"similarity_ridge:TaskSimilarityRidge, {__name__}:Plain"}
    assert configured_models(environ=environ)[:2] == [TaskSimilarityRidge, Plain]
    with pytest.raises(ContractError, match="NoRelationships"):
        configured_models(environ={custom.ENV_VAR: f"{__name__}:NoRelationships"})


def write_entry_point(target: Path) -> None:
    """A dist-info for the example package in ``target`` (on sys.path), its entry points
    read from the package's own pyproject.toml."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    info = target / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\n"
                                   f"Version: {project['version']}\n")
    lines = []
    for group, points in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


def test_an_installed_package_is_discovered_by_its_entry_point(tmp_path, monkeypatch):
    write_entry_point(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert TaskSimilarityRidge in discovered_models()


def test_serve_refuses_a_class_missing_task_relationships_at_start(tmp_path):
    (tmp_path / "broken_estimator.py").write_text(
        "class Broken:\n"
        "    def fit(self, X, y, task):\n        return self\n"
        "    def predict(self, X, task):\n        return X[:, 0]\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    done = subprocess.run([sys.executable, "-m", "explorer", "serve", "--port", "0",
                           "--model", "broken_estimator:Broken"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert ("broken_estimator:Broken cannot be served: it has no task_relationships() "
            "method") in done.stderr
