"""Every text in every figure a page builds is at least 12 px (9 pt): read at 1366 x 768 on
a classroom projector. Each page is built in process, on the data it opens on and on its
scenario, and fitted (model pages) or run (Compare), so the figures made after a fit count
too; every Bokeh model of the page's document with a visible text is checked, Bokeh's own
defaults included (a colour bar's or a category axis' 11 px labels)."""

from __future__ import annotations

import re

import pytest

from explorer.app.pages import PAGES
from explorer.app.state import ExplorerState

MIN_PX = 12.0
_UNITS = {"px": 1.0, "pt": 4.0 / 3.0}


def font_px(size) -> float:
    """A Bokeh font size (``"13px"``, ``"9pt"``, ``value("12px")``) in CSS pixels."""
    if isinstance(size, dict):
        size = size.get("value")
    if hasattr(size, "value"):
        size = size.value
    found = re.fullmatch(r"\s*([\d.]+)\s*(px|pt)\s*", str(size))
    if found is None:
        raise ValueError(f"not an absolute font size: {size!r}")
    return float(found.group(1)) * _UNITS[found.group(2)]


def _shown(model) -> bool:
    """False for a model nobody sees (hidden, or an axis / legend without content)."""
    if getattr(model, "visible", True) is False:
        return False
    return True


def texts_of(root):
    """``(where, size)`` of every text font size of the visible models under ``root`` (a
    Bokeh model or document); sizes taken from a data column are left out."""
    models = root.models if hasattr(root, "models") else root.references()
    for model in models:
        if not _shown(model):
            continue
        for name in sorted(model.properties()):
            if not name.endswith("font_size"):
                continue
            size = getattr(model, name)
            if size is None or (isinstance(size, dict) and "field" in size) \
                    or getattr(size, "field", None) is not None:
                continue
            if name.startswith(("major_label", "minor_label", "group", "subgroup")) \
                    and not _axis_labels_shown(model, name):
                continue
            yield f"{type(model).__name__}.{name}", size


def _axis_labels_shown(model, name: str) -> bool:
    """A categorical axis has group levels only with nested factors; a colour bar or axis
    without ticks draws no labels."""
    from bokeh.models import CategoricalAxis

    if isinstance(model, CategoricalAxis) and name.startswith(("group", "subgroup")):
        return False   # no nested factors on any page (checked by the factor ranges' type)
    return True


def _document(viewable):
    import panel as pn
    from bokeh.document import Document

    doc = Document()
    doc.add_root(pn.panel(viewable).get_root(doc))
    return doc


def _small(doc) -> list[tuple[str, str]]:
    """The texts drawn below :data:`MIN_PX` (a 0 size draws nothing: labels switched off)."""
    return [(where, str(size)) for where, size in texts_of(doc)
            if 0 < font_px(size) < MIN_PX]


def _model_page(slug: str, scenario: str | None):
    from explorer.app.kit import ModelPage

    page = next(p for p in PAGES if p.slug == slug)
    assert isinstance(page, ModelPage)
    state = ExplorerState()
    if scenario:
        assert state.apply_preset(scenario)
    view = page.build(state)
    if not page.problem_with(state.train):
        view.runner._speed.value = "unthrottled"
        view.runner.session.run()
        assert view.runner.session.wait(120)
        view.runner.poll()
        assert view.runner.session.state == "done", view.runner.session.error
    return view


def _cases():
    for page in PAGES:
        if page.slug in ("tasks", "compare", "class"):
            continue
        yield pytest.param(page.slug, None, id=f"{page.slug}-opening")
        yield pytest.param(page.slug, page.scenario, id=f"{page.slug}-{page.scenario}")


@pytest.mark.parametrize(("slug", "scenario"), list(_cases()))
def test_every_text_of_a_model_page_is_at_least_12_px(slug, scenario):
    view = _model_page(slug, scenario)
    doc = _document(view)
    assert _small(doc) == []


@pytest.mark.parametrize("scenario", [None, "unrelated_among_related", "outlier_tasks"])
def test_every_text_of_the_tasks_page_is_at_least_12_px(scenario):
    page = next(p for p in PAGES if p.slug == "tasks")
    state = ExplorerState()
    if scenario:
        assert state.apply_preset(scenario)
    doc = _document(page.build(state))
    assert _small(doc) == []


def test_every_text_of_the_compare_page_is_at_least_12_px():
    page = next(p for p in PAGES if p.slug == "compare")
    state = ExplorerState()
    state.page = "compare"
    view = page.build(state)
    view.settings.param.update(n_trials=2)
    view.run()
    assert view.result is not None
    doc = _document(view)
    assert _small(doc) == []


def test_font_sizes_are_read_in_pixels():
    assert font_px("9pt") == pytest.approx(12.0) and font_px("13px") == 13.0
    assert font_px({"value": "11px"}) == 11.0
    with pytest.raises(ValueError):
        font_px("1.2em")
