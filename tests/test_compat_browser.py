"""The Panel and BokehJS internals behind explorer/_compat.py's browser components are still
where the workarounds reach for them: each test fails loudly when one moves. (The UI tests
check the browser's side: the layout hook reports "applied", the pacer reports figures out
of sight.)"""

from __future__ import annotations

import inspect
from pathlib import Path

import bokeh
import panel as pn
import pytest

from explorer import _compat

BOKEHJS = Path(bokeh.__file__).parent / "server" / "static" / "js" / "bokeh.js"


def test_panel_still_reads_priority_changes():
    import panel.reactive

    source = inspect.getsource(panel.reactive.Syncable)
    assert "in self._priority_changes" in source, (
        "Panel no longer reads Syncable._priority_changes: the frame pacer's "
        "acknowledgement waits for the 50 ms debounce (explorer/_compat.send_at_once)")

    class Component(pn.custom.JSComponent):
        _esm = "export function render() {}"

    assert _compat.send_at_once(Component, ["x"])._priority_changes == ["x"]


def test_flexbox_children_get_the_per_root_hooks():
    from bokeh.document import Document
    from panel.io.state import state

    box = pn.FlexBox(pn.pane.Markdown("a"))
    layout = pn.Column(box)
    doc = Document()
    root = layout.get_root(doc)
    assert root.ref["id"] in box._models, "FlexBox._models no longer maps root ids"
    assert isinstance(state._views, dict), "panel.io.state.state._views is gone"
    signature = inspect.signature(pn.viewable.Viewable._preprocess)
    assert list(signature.parameters)[:3] == ["self", "root", "changed"], signature
    state._views[root.ref["id"]] = (layout, root, doc, None)
    try:
        seen = []
        original = layout._preprocess
        layout._preprocess = lambda root, changed=None: seen.append((root, changed))
        _compat.style_new_flex_children(box)
        assert seen == [(root, box)]
        layout._preprocess = original
    finally:
        del state._views[root.ref["id"]]


@pytest.mark.parametrize("internal", [
    "get layoutable_views()",     # LayoutDOMView's getter the layout hook redefines
    "invalidate_layout()",        # wrapped for hidden pages
    "all_views()",                # Bokeh.index: the views the hooks look through
])
def test_bokehjs_still_has_the_internals_the_hooks_use(internal):
    assert internal in BOKEHJS.read_text(encoding="utf-8"), (
        f"BokehJS {bokeh.__version__} has no {internal!r}: see explorer/_compat.py")
