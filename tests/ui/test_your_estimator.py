"""Your own estimator in the served app, in Chromium: a real ``python -m explorer serve
--model lab_model:LabCosineModel`` (a module outside the repository, on PYTHONPATH) that
also discovers the example package ``examples/custom_estimator`` through its
``mtl_explorer.models`` entry point (its source on PYTHONPATH and a dist-info written from
its pyproject.toml: installed, offline). Each page's button names its class; a run shows
the class's ``task_relationships()`` matrix beside the truth with the agreement caption, and
no console error (the ``new_page`` fixture)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.test_custom_model import write_entry_point
from tests.ui.conftest import _free_port, serving

pytestmark = pytest.mark.ui

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_SRC = ROOT / "examples" / "custom_estimator" / "src"
STARTUP_TIMEOUT_S = 120

#: A user's module, outside the repository: no fit_iter (one fit), no get_params.
LAB_MODEL = '''
import numpy as np


class LabCosineModel:
    """Per-task least squares; the tasks' similarity is the cosine of their weights."""

    def __init__(self, ridge=0.1):
        self.ridge = ridge

    def fit(self, X, y, task):
        m, d = int(task.max()) + 1, X.shape[1]
        self.coef_ = np.zeros((d + 1, m))
        for t in range(m):
            Xt = np.c_[X[task == t], np.ones((task == t).sum())]
            self.coef_[:, t] = np.linalg.solve(Xt.T @ Xt + self.ridge * np.eye(d + 1),
                                               Xt.T @ y[task == t])
        return self

    def predict(self, X, task):
        return np.einsum("nd,dn->n", np.c_[X, np.ones(len(X))], self.coef_[:, task])

    def task_relationships(self):
        W = self.coef_[:-1]
        unit = W / np.linalg.norm(W, axis=0)
        return {"similarity": unit.T @ unit}
'''


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The URL of ``python -m explorer serve --model lab_model:LabCosineModel`` with the
    example package installed (entry point) in a scratch path."""
    scratch = tmp_path_factory.mktemp("site")
    (scratch / "lab_model.py").write_text(LAB_MODEL)
    write_entry_point(scratch)
    port = _free_port()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(EXAMPLE_SRC), str(scratch)])}
    cmd = [sys.executable, "-m", "explorer", "serve", "--port", str(port),
           "--model", "lab_model:LabCosineModel"]
    with serving(cmd, cwd=scratch, env=env, port=port, timeout_s=STARTUP_TIMEOUT_S) as (url, _):
        yield url


@pytest.mark.parametrize(("slug", "title", "status"), [
    ("lab_cosine_model", "LabCosineModel", r"done - step 1\b"),
    ("task_similarity_ridge", "TaskSimilarityRidge", r"done - step 20\b"),
], ids=["--model", "entry point"])
def test_a_users_estimator_runs_beside_the_truth(served, new_page, slug, title, status):
    page = new_page()
    page.goto(f"{served}?page={slug}&d.kind=regression")
    shown = page.locator(f".explorer-page-{slug}")
    expect(page.get_by_role("button", name=title, exact=True)).to_be_visible(timeout=60_000)
    shown.get_by_text("Ready.").first.wait_for(timeout=60_000)
    shown.get_by_role("button", name="Fast").click()
    shown.get_by_text(re.compile(status)).first.wait_for(timeout=120_000)
    shown.get_by_text(re.compile(r"^Fitted in \d+ steps")).first.wait_for(timeout=60_000)
    for name in ("Learned similarity", "True task_similarity"):
        figure = shown.get_by_role("img", name=name, exact=True)
        expect(figure).to_have_count(1)
        expect(figure).to_be_visible()
    caption = shown.get_by_text("Agreement with the truth").first
    expect(caption).to_be_visible()
    assert re.search(r"rank correlation \d\.\d\d", caption.locator("..").inner_text())
