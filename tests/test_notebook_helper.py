"""``explorer.notebook``: the app's pages and views in a notebook, offline (no browser here;
tests/ui/test_jupyterlab.py runs the tour in a real JupyterLab)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from explorer import notebook
from explorer.app.work import can_poll, in_notebook_kernel
from explorer.compare.metrics import relationship_agreement
from explorer.data.catalog import make_dataset
from explorer.models import RegularizedMTL

FAMILY = {"relations": "related,negated", "n_features": 2, "n_samples_per_task": 40}


def test_import_explorer_does_not_import_panel():
    code = "import sys, explorer, explorer.notebook; print('panel' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_app_page_applies_data_and_settings_before_the_widgets_exist():
    page = notebook.app_page("shared_vs_separate", params=FAMILY, data_seed=3,
                             train_fraction=0.5, coupling=0.01, size=0.02)
    assert page.state.dataset.n_tasks == 3 and page.state.data_seed == 3
    assert (page.params.coupling, page.params.size) == (0.01, 0.02)
    # the sliders show the values the fit uses
    assert page.form.widgets["coupling"].value == 0.01
    assert page.form.widgets["size"].value == 0.02


@pytest.mark.parametrize("kwargs, message", [
    ({"coupling": 100.0}, r"coupling must be .* \[0.0001, 10\]; got 100"),
    ({"nope": 1}, r"'nope' is not a parameter"),
    ({"params": {"n_samples_per_task": 1}}, r"n_samples_per_task"),
])
def test_app_page_refuses_bad_values_naming_them(kwargs, message):
    with pytest.raises(ValueError, match=message):
        notebook.app_page("shared_vs_separate", **kwargs)


def test_app_page_refuses_unknown_pages_and_settings_of_plain_pages():
    with pytest.raises(ValueError, match="slug must be one of"):
        notebook.app_page("nowhere")
    with pytest.raises(ValueError, match="page 'tasks' has no settings"):
        notebook.app_page("tasks", k=3)


def test_fit_runs_the_page_to_the_end_and_restores_its_pace():
    page = notebook.app_page("shared_vs_separate", params=FAMILY, train_fraction=0.5,
                             coupling=0.01)
    paced = page.runner.session.steps_per_second
    model = notebook.fit(page)
    assert page.runner.session.state == "done"
    assert page.runner.session.steps_per_second == paced == 2.0
    assert "Fitted in" in page.summary_text()
    # the same model as a direct fit on the page's training split
    train = page.state.train
    direct = RegularizedMTL(lambda_deviation=0.01, lambda_common=0.01, max_iter=300,
                            random_state=0).fit(*train.arrays())
    np.testing.assert_allclose(model.coef_, direct.coef_)
    with pytest.raises(ValueError, match="needs a model page"):
        notebook.fit(notebook.app_page("tasks"))


def test_page_views_and_replay_show_a_recorded_fit():
    data = make_dataset("task_family", FAMILY, random_state=0)
    model = RegularizedMTL(lambda_deviation=0.01)
    snapshots = list(model.fit_iter(*data.arrays()))
    views = notebook.page_views("shared_vs_separate")
    layout = notebook.replay(views, data, snapshots, step=snapshots[2].step)
    captions = [view.caption for view in views if getattr(view, "caption", None) is not None]
    assert len(layout.objects) == sum(len(view.figures) for view in views) + len(captions)
    learned, truth = views[0].estimate.heatmap, views[0].truth.heatmap
    np.testing.assert_allclose(learned.values, snapshots[2].matrices["similarity"])
    np.testing.assert_allclose(truth.values, data.truth["task_similarity"])
    agreement = relationship_agreement(snapshots[2].matrices["similarity"],
                                       data.truth["task_similarity"])
    assert f"rank correlation <b>{agreement['rank_correlation']:.2f}</b>" in captions[0].text
    objective = views[-1].curve.source.data["y"]
    assert list(objective) == [s.objective for s in snapshots[:3]]   # curves: up to the step
    with pytest.raises(ValueError, match="step must be one of the recorded steps"):
        notebook.replay(views, data, snapshots, step=10_000)
    with pytest.raises(ValueError, match="at least one Snapshot"):
        notebook.replay(views, data, [])
    with pytest.raises(ValueError, match="model pages"):
        notebook.page_views("tasks")


def test_no_polling_outside_a_server_or_a_notebook_kernel():
    assert not can_poll()
    assert not asyncio.run(_in_kernel())   # an event loop alone is not a notebook


async def _in_kernel() -> bool:
    return in_notebook_kernel()


def test_setup_keeps_pane_updates_off_the_cdn():
    """Panel re-sends a pane's stylesheets as CDN links when it updates the pane; after
    setup() every document's stylesheet cache answers them with the installed files."""
    code = textwrap.dedent("""
        from bokeh.document import Document
        from explorer import notebook
        notebook.setup()
        import panel as pn
        from panel.io.resources import CDN_DIST
        from panel.io.state import state
        doc = Document()
        pane = pn.pane.Markdown("first")
        model = pane.get_root(doc)
        doc.add_root(model)             # displayed (in a notebook, inlined at display)
        pane.object = "second"          # an update: Panel recomputes the stylesheets
        urls = [getattr(s, "url", "inline") for s in model.stylesheets]
        assert urls and all(not u.startswith("http") for u in urls), urls
        cached = state._stylesheets[doc][CDN_DIST + "css/markdown.css"]
        assert cached.url.startswith("data:text/css;base64,"), cached.url[:40]
        notebook.setup()                # again: harmless
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
