"""The framework internals explorer/_compat.py relies on, checked one by one.

Each test fails with a message naming the workaround when a Panel or Bokeh release changes
the internal it uses (or fixes the upstream bug it works around), so an upgrade is a
decision, never a silent change of behaviour.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path
from types import SimpleNamespace
from weakref import WeakKeyDictionary

import panel as pn
from bokeh.document import Document
from bokeh.models import ImportedStyleSheet
from packaging.version import Version

from explorer import _compat
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


def test_a_session_made_from_its_token_links_this_servers_stylesheets():
    """Without ``dist_url`` Panel links a model's style sheets to the CDN; with the variable
    stylesheets_from_this_server sets, to the server's own static files."""
    from panel.io.resources import CDN_DIST, LOCAL_DIST
    from panel.io.state import set_curdoc

    for set_here in (False, True):
        doc = Document()
        with set_curdoc(doc):
            if set_here:
                _compat.stylesheets_from_this_server(doc)
            model = pn.widgets.Button(label="b").get_root(doc)
        urls = [str(sheet.url) for sheet in model.stylesheets
                if isinstance(sheet, ImportedStyleSheet)]
        assert urls
        on_cdn = any(url.startswith(CDN_DIST) for url in urls)
        assert on_cdn is not set_here, (
            "Panel no longer links a token-made session's style sheets to the CDN; "
            "stylesheets_from_this_server in explorer/_compat.py may go" if not set_here else
            "Panel no longer reads the document's 'dist_url' template variable; "
            "stylesheets_from_this_server no longer keeps --num-procs sessions offline")
        if set_here:
            assert all(url.startswith(LOCAL_DIST) for url in urls), urls


def test_a_message_queued_after_the_block_was_lifted_is_still_written():
    """The state Panel's race leaves: a message in _WRITE_MSGS, no _WRITE_BLOCK. Panel's own
    _dispatch_msgs leaves it there; with queued_writes_never_stranded it is written."""
    import asyncio

    from panel.io import document

    class Socket:
        pass

    class Connection:
        _socket = Socket()

    written = []
    document.extra_socket_handlers[Socket] = lambda conn, msg=None: written.append(msg) or []
    try:
        for unstranded in (False, True):
            doc, connection = Document(), Connection()
            document._WRITE_MSGS[doc] = {connection: ["the patch"]}
            document._WRITE_BLOCK.pop(doc, None)
            if unstranded:
                assert _compat.queued_writes_never_stranded()
                dispatch = document._dispatch_msgs
            else:   # Panel's own, whether or not the workaround is installed
                dispatch = getattr(_compat, "panel_dispatch_msgs", document._dispatch_msgs)
            written.clear()
            asyncio.run(dispatch(doc))
            stranded = doc in document._WRITE_MSGS
            if unstranded:
                assert not stranded and written == ["the patch"], (
                    "queued_writes_never_stranded no longer gets a stranded message written")
            elif Version(pn.__version__) >= Version("1.9.4"):   # (1.9.0 has no early return)
                assert stranded and written == [], (
                    "Panel now writes a message queued without a block; "
                    "queued_writes_never_stranded in explorer/_compat.py may go")
            document._WRITE_MSGS.pop(doc, None)
            document._WRITE_BLOCK.pop(doc, None)
    finally:
        document.extra_socket_handlers.pop(Socket, None)


def _sends_mathjax(*objects) -> bool:
    """Whether a served template page of ``objects`` lists BokehJS's MathJax bundle."""
    from bokeh.resources import Resources
    from panel.io.resources import bundle_resources
    from panel.io.state import set_curdoc

    doc = Document()
    with set_curdoc(doc):
        pn.template.BootstrapTemplate(title="t", main=list(objects)).server_doc(doc)
        bundle = bundle_resources(doc.roots, Resources(mode="server"))
    return any("bokeh-mathjax" in str(url) for url in bundle.js_files)


def test_mathjax_goes_only_to_a_page_with_a_formula():
    """Panel lists the 1.8 MB bundle for any template (its js_area is an HTML root); with
    mathjax_sent_only_for_math, only a page whose text has TeX gets it."""
    from panel.io import resources

    text = pn.pane.Markdown("Task 2 is negated: $5 is not math.")
    formula = pn.pane.Markdown(r"The penalty $$\lambda \|W\|_{2,1}$$")
    installed = getattr(resources, "_panel_use_mathjax", None)
    panels_own = getattr(installed, "__wrapped__", installed)
    if panels_own is None:   # a Panel before holoviz/panel#8424: nothing to work around
        assert not _compat.mathjax_sent_only_for_math()
        return
    resources._panel_use_mathjax = panels_own
    try:
        assert _sends_mathjax(text), (
            "Panel no longer sends MathJax to a template page without math; "
            "mathjax_sent_only_for_math in explorer/_compat.py may go")
    finally:
        resources._panel_use_mathjax = installed
    assert _compat.mathjax_sent_only_for_math()
    assert not _sends_mathjax(text)
    assert _sends_mathjax(text, formula)
    assert not _sends_mathjax(pn.pane.HTML(r"$$x$$"))   # an HTML pane's math is off


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


# --- Bokeh model defaults -------------------------------------------------------------
def _model_classes():
    from bokeh.model import Model

    import explorer.app  # noqa: F401 -- Panel's and the app's models too

    return sorted(set(Model.model_class_reverse_map.values()),
                  key=lambda cls: f"{cls.__module__}.{cls.__qualname__}")


def test_bokeh_still_computes_defaults_where_the_cache_wraps_it():
    from bokeh.core.property.descriptors import PropertyDescriptor
    from bokeh.models import Div

    assert _compat.bokeh_defaults_computed_once()
    wrapped = PropertyDescriptor._get_default
    assert getattr(wrapped, "__wrapped__", None) is not None, "the cache is not installed"
    # the internals it relies on: the original still gives a fresh instance's default, and
    # apply_theme still keeps a theme's values in the instance's __dict__
    div = Div()
    assert wrapped.__wrapped__(Div.lookup("text"), div) == ""
    div.apply_theme({"width": 123})
    assert "__themed_values__" in div.__dict__, "Bokeh keeps theme values elsewhere now"


def test_every_cached_default_is_bokehs_own_for_every_model_class():
    """Each property of each model class (Bokeh's, Panel's, the app's), read on an instance
    through the cache twice, equals Bokeh's own computation; only immutable values are
    shared between instances."""
    from bokeh.core.property.descriptors import PropertyDescriptor

    _compat.bokeh_defaults_computed_once()
    original = PropertyDescriptor._get_default.__wrapped__
    checked = cached = 0
    for cls in _model_classes():
        try:
            first, second, fresh = cls(), cls(), cls()
        except Exception:  # noqa: BLE001 -- abstract or needs arguments: Bokeh can't either
            continue
        for name in cls.properties():
            descriptor = cls.lookup(name)
            if name in first._property_values or not hasattr(descriptor, "_get_default"):
                continue   # set by the constructor, or an alias of another property
            through_cache = descriptor._get_default(first)
            again = descriptor._get_default(second)
            own = original(descriptor, fresh)
            where = f"{cls.__name__}.{name}"
            if _compat._immutable(own):
                for value in (through_cache, again):
                    assert value == own or (value != value and own != own), \
                        f"{where}: {value!r} != Bokeh's {own!r}"
                cached += (cls, name) in _compat._class_defaults
            else:   # lists, dicts, models, data specs: Bokeh's own path, never shared
                assert (cls, name) not in _compat._class_defaults, where
                assert type(through_cache) is type(own), where
            checked += 1
    assert checked > 3000 and cached > 2000, (checked, cached)


def test_a_themed_instance_gets_its_theme_not_the_class_default():
    from bokeh.models import Div, Slider

    _compat.bokeh_defaults_computed_once()
    plain, themed = Div(), Div()
    assert plain.width is None and plain.disabled is False   # cached now
    themed.apply_theme({"width": 321, "disabled": True})
    assert (themed.width, themed.disabled) == (321, True)
    assert (plain.width, plain.disabled) == (None, False)
    themed.apply_theme({})
    assert themed.width is None
    # a mutable default is still one per instance
    one, other = Slider(start=0, end=1, value=0), Slider(start=0, end=1, value=0)
    assert one.tags is not other.tags
    one.tags.append("mine")
    assert other.tags == []


# --- BokehJS client-only changes (the tree's fit) -----------------------------------------
def _bokehjs(name: str) -> str:
    import bokeh

    path = Path(bokeh.__file__).parent / "server" / "static" / "js" / name
    return path.read_text(encoding="utf-8")


def _after(source: str, start: str, length: int) -> str:
    """The ``length`` characters of ``source`` from ``start`` (which must be there)."""
    at = source.find(start)
    assert at >= 0, (f"BokehJS no longer has {start!r}: CLIENT_ONLY_SETV_JS in "
                     "explorer/_compat.py (the tree's client-only fit) needs revisiting")
    return source[at:at + length]


def test_bokehjs_setv_still_keeps_a_change_with_sync_false_in_the_browser():
    """Each step CLIENT_ONLY_SETV_JS relies on, in the bundles the browser loads: ``setv``
    takes an options object and hands ``options.sync`` to its change events, and the server
    connection drops the events whose ``sync`` is false."""
    source = _bokehjs("bokeh.js")
    setv = _after(source, "setv(changed_attrs, options = {}) {", 1800)
    assert "const sync = options.sync ?? true;" in setv, (
        "BokehJS's setv no longer reads options.sync: the tree's fit would send every range, "
        "frame height and font back to the server (CLIENT_ONLY_SETV_JS, explorer/_compat.py)")
    assert "this._push_changes(changed, sync);" in setv, "setv no longer passes sync on"
    push = _after(source, "_push_changes(changes, sync) {", 900)
    assert "event.sync = sync;" in push, "_push_changes no longer marks its events' sync"
    connection = _after(source, "_document_changed(event) {", 400)
    assert "events.filter((event) => event.sync)" in connection, (
        "BokehJS's ClientConnection no longer drops events with sync false: the tree's "
        "client-only fit is sent to the server (CLIENT_ONLY_SETV_JS, explorer/_compat.py)")
    # the minified bundle (what `panel serve` sends by default) says the same
    minified = _bokehjs("bokeh.min.js")
    found = re.search(r"setv\((\w+),(\w+)=\{\}\)\{", minified)
    assert found, "bokeh.min.js: no setv(attrs, options = {})"
    body = minified[found.end():found.end() + 1500]
    options = re.escape(found.group(2))
    assert re.search(rf"const (\w+)={options}\.sync\?\?!0;this\._push_changes\(\w+,\1\)",
                     body), "bokeh.min.js: setv no longer hands options.sync to its events"
    assert re.search(r"_push_changes\((\w+),(\w+)\)\{.{0,400}?\.sync=\2[,;]", minified), \
        "bokeh.min.js: _push_changes no longer marks its events' sync"
    assert re.search(r"_document_changed\(\w+\)\{.{0,200}?\.filter\(\((\w+)=>\1\.sync\)\)",
                     minified), "bokeh.min.js: the client connection no longer reads sync"
    # and the option is in BokehJS's own declarations
    typings = _bokehjs("lib/core/has_props.d.ts")
    options_type = _after(typings, "type SetOptions = {", 200)
    assert "sync?: boolean;" in options_type, "HasProps.SetOptions has no sync any more"


def test_the_tree_fit_changes_its_models_only_through_the_compat_snippet():
    from explorer.viz import tree

    assert tree._FIT_JS.startswith(_compat.CLIENT_ONLY_SETV_JS)
    own = tree._FIT_JS[len(_compat.CLIENT_ONLY_SETV_JS):]
    assert "setv(" not in own and "sync" not in own, (
        "explorer/viz/tree.py reaches BokehJS's setv itself: use set_local "
        "(CLIENT_ONLY_SETV_JS, explorer/_compat.py)")
    assert own.count("set_local(") == 4
    diagram = tree.TreeDiagramView().diagram
    for model in (diagram.figure, diagram.extent):   # refit on a new width, a new extent
        codes = [callback.code for callbacks in model.js_property_callbacks.values()
                 for callback in callbacks]
        assert tree._FIT_JS in codes, "the tree's figure no longer runs _FIT_JS"


# --- every entry says what it waits for ---------------------------------------------------
def test_every_compat_entry_names_what_it_waits_for():
    """Each name in ``_compat.__all__``: a "Waits for:" line in its docstring (functions) or
    in the ``#:`` comment block above it (constants)."""
    source = inspect.getsource(_compat)
    tree = ast.parse(source)
    lines = source.splitlines()
    missing = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in _compat.__all__:
            text = ast.get_docstring(node) or ""
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1
              and getattr(node.targets[0], "id", None) in _compat.__all__):
            above, row = [], node.lineno - 2
            while row >= 0 and lines[row].startswith("#:"):
                above.append(lines[row])
                row -= 1
            text = "\n".join(reversed(above))
        else:
            continue
        name = node.name if isinstance(node, ast.FunctionDef) else node.targets[0].id
        if "Waits for:" not in text:
            missing.append(name)
    assert not missing, f"_compat entries without a 'Waits for:' line: {missing}"
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)} | {
        t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
        if isinstance(t, ast.Name)}
    assert set(_compat.__all__) <= defined
