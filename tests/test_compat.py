"""The framework internals explorer/_compat.py relies on, checked one by one.

Each test fails with a message naming the workaround when a Panel or Bokeh release changes
the internal it uses (or fixes the upstream bug it works around), so an upgrade is a
decision, never a silent change of behaviour.
"""

from __future__ import annotations

from types import SimpleNamespace
from weakref import WeakKeyDictionary

import panel as pn
from bokeh.document import Document
from bokeh.models import ImportedStyleSheet

from explorer._compat import template_root_forgotten_on_session_end, theme_kept_on_pane_updates


# --- shell and serving ------------------------------------------------------------------
def test_template_roots_are_listed_process_wide_and_removed_through_refs():
    assert isinstance(pn.state._fake_roots, list), (
        "panel.state._fake_roots changed; revisit template_root_forgotten_on_session_end")
    template = pn.template.BootstrapTemplate(title="t", main=[pn.pane.Markdown("x")])
    assert template._refs == {}, "Template._refs changed; revisit the template root workaround"
    doc, before = Document(), list(pn.state._fake_roots)
    template.server_doc(doc)
    assert len(pn.state._fake_roots) == len(before) + 1
    assert template._refs == {}, (
        "Panel now fills Template._refs itself: drop template_root_forgotten_on_session_end")
    template._server_destroy(SimpleNamespace(_document=doc))
    leaked = [ref for ref in pn.state._fake_roots if ref not in before]
    assert len(leaked) == 1       # the bug the workaround is for
    pn.state._fake_roots.remove(leaked[0])


def test_the_workaround_lets_panel_forget_an_ended_sessions_root():
    template = pn.template.BootstrapTemplate(title="t", main=[pn.pane.Markdown("x")])
    doc, before = Document(), list(pn.state._fake_roots)
    with template_root_forgotten_on_session_end(template, doc):
        template.server_doc(doc)
    assert len(pn.state._fake_roots) == len(before) + 1
    template._server_destroy(SimpleNamespace(_document=doc))   # the session's end
    assert pn.state._fake_roots == before


def test_the_served_template_attaches_in_one_frozen_walk_and_forgets_its_root():
    from explorer.app import ExplorerTemplate

    doc, before = Document(), list(pn.state._fake_roots)
    template = ExplorerTemplate(title="t", main=[pn.pane.Markdown("x")])
    template.server_doc(doc)
    assert doc.roots and len(pn.state._fake_roots) == len(before) + 1
    template._server_destroy(SimpleNamespace(_document=doc))
    assert pn.state._fake_roots == before


def _sheet_names(model) -> list[str]:
    return [str(getattr(sheet, "url", "")).split("/")[-1].split("?")[0]
            for sheet in model.stylesheets]


def test_a_changed_pane_keeps_the_template_theme_only_with_the_workaround():
    """Panel 1.9.4 renders a pane whose object changed as an isolated component (the whole of
    Bootstrap in its shadow root); theme_kept_on_pane_updates keeps the template's rules."""
    from panel.io.state import set_curdoc

    for kept in (False, True):
        doc = Document()
        with set_curdoc(doc):
            pane = pn.pane.Markdown("before")
            template = pn.template.BootstrapTemplate(title="t", main=[pane])
            if kept:
                theme_kept_on_pane_updates(template)
            template.server_doc(doc)
            model = pane._models[next(iter(pane._models))][0]
            assert "bootstrap.min.css" not in _sheet_names(model)   # themed by the hook
            pane.object = "after"
            isolated = "bootstrap.min.css" in _sheet_names(model)
        assert isolated is not kept, (
            "Panel no longer renders a changed pane as an isolated component; "
            "theme_kept_on_pane_updates in explorer/_compat.py may go" if not kept else
            "theme_kept_on_pane_updates no longer keeps the template's theme on a changed pane")
        assert "bootstrap.css" in _sheet_names(model)


# --- notebooks ----------------------------------------------------------------------------
def test_panel_still_looks_stylesheets_up_in_the_per_document_cache():
    from panel.io.resources import CDN_DIST
    from panel.io.state import state

    assert isinstance(state._stylesheets, WeakKeyDictionary), (
        "panel.io.state.state._stylesheets changed type; revisit inline_stylesheet_updates")
    doc = Document()
    url = CDN_DIST + "css/markdown.css"
    sentinel = ImportedStyleSheet(url="data:text/css;base64,")
    state._stylesheets[doc] = {url: sentinel}
    model = pn.pane.Markdown("x").get_root(doc)
    assert any(sheet is sentinel for sheet in model.stylesheets), (
        "Panel no longer reads state._stylesheets[doc] for a pane's stylesheets; "
        "inline_stylesheet_updates in explorer/_compat.py no longer keeps notebooks offline")
