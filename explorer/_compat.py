"""The project's only uses of private Panel/Bokeh/CPython internals, one section per part.

Everything else goes through the frameworks' public APIs. Each entry has a "Waits for:" line:
the upstream issue, release or missing public API it waits for, or that none exists and why
the workaround is worth its risk (checked against Panel 1.9.4, Bokeh 3.9.2, CPython 3.11).
``tests/test_compat*.py`` check the internal each relies on, so a framework release that
changes it fails a test instead of silently undoing the fix, and check that every entry keeps
its "Waits for:" line. Panel and Bokeh are imported inside the functions: ``explorer.viz``
may import this module without importing Panel.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["CLIENT_ONLY_SETV_JS", "SHOWN_PAGE_LAYOUT_ESM", "VIEW_ELEMENTS_JS",
           "background_periodic_callback", "bokeh_defaults_computed_once", "clear_type_cache",
           "inline_stylesheet_updates", "limit_malloc_arenas", "malloc_trim",
           "mathjax_sent_only_for_math", "send_at_once",
           "style_new_flex_children", "template_root_forgotten_on_session_end",
           "theme_kept_on_pane_updates"]


# --- shell and serving ---------------------------------------------------------
@contextmanager
def template_root_forgotten_on_session_end(template, doc) -> Iterator[None]:
    """Around ``template.server_doc(doc)``: let Panel forget the template's root when the
    session of ``doc`` ends.

    A template registers one root per document in the process-wide list
    ``panel.state._fake_roots`` and removes it on session end through ``Template._refs``,
    which Panel 1.9 never fills, so every ended session left its root id behind (and those
    scattered strings kept ended sessions' memory from going back to the system). Filling
    ``_refs`` lets Panel's own clean-up remove it.

    Waits for: a Panel release whose ``BaseTemplate._init_doc`` records
    ``self._refs[document] = ref`` where it appends ``ref`` to ``state._fake_roots``
    (panel/template/base.py:268 in 1.9.4; ``_server_destroy`` pops ``_refs`` at :189). No
    upstream issue found (https://github.com/holoviz/panel/pull/8607 fixed the neighbouring
    ``state._views`` leak, not this one): worth reporting, the fix is that one line.
    """
    import panel as pn

    before = set(pn.state._fake_roots)
    yield
    added = [ref for ref in pn.state._fake_roots if ref not in before]
    if added:
        template._refs[doc] = added[-1]


def theme_kept_on_pane_updates(template) -> None:
    """Keep the template's theme on a pane whose content changes (a Markdown's new text).

    Panel 1.9.4 sends such a pane's properties all again, its style sheets from its design's
    ``params``, which always answers for an *isolated* component: the whole of Bootstrap
    (bootstrap.min.css and two more) lands in the shadow root of a pane that inherits the
    template's theme (the template's hook gave it the template's design as ``_design``).
    Measured on Outliers: the summary and details of a finished fit, and every frame of the
    next run then costs the browser ~5 ms more style work. Here the template's design
    answers ``params`` for the components that inherit it with the rules its hook applies
    (``isolated=False``); a component with a design of its own is answered as before.

    Waits for: Panel's ``Design.params`` (panel/theme/base.py:454 in 1.9.4, called by
    ``Reactive._update_properties``, panel/reactive.py:742) to pass ``isolated=False`` for a
    component that inherits its design, as the template's hook does. No upstream issue found
    (https://github.com/holoviz/panel/pull/5278, "Avoid needlessly updating stylesheets",
    is the nearest; the behaviour is still in 1.9.4). Worth its risk: the override only
    answers components without a design of their own, and the test fails loudly when Panel
    stops isolating a changed pane.
    """
    from panel.io.state import state

    design = template._design
    original = type(design).params

    def params(viewable, doc=None):
        if getattr(viewable, "design", None) is not None:
            return original(design, viewable, doc)
        if doc is None:
            cache = {}
        else:
            cache = state._stylesheets.get(doc)
            if cache is None:
                state._stylesheets[doc] = cache = {}
        modifiers, child_modifiers = design._get_modifiers(viewable, theme=design.theme,
                                                           isolated=False)
        design._patch_modifiers(doc, modifiers, cache)
        return modifiers, child_modifiers

    design.params = params


def stylesheets_from_this_server(document) -> None:
    """Give a served session's document the server's own stylesheet address before any
    model is made, so a session made from its token alone links Panel's style sheets to
    this server, never to the CDN (offline classrooms, ``--num-procs``).

    Panel records where its style sheets come from in the document's template variable
    ``dist_url`` only when it renders the page's HTML (``server_html_page_for_session``,
    panel/io/server.py:369-377); every model reads it there and falls back to
    cdn.holoviz.org (panel/reactive.py:714-717, 753-756; theme/base.py:287-290). With
    ``panel serve --num-procs 2`` a page's request and its websocket may reach different
    processes: the second makes the session from the token, no HTML is rendered there, and
    every style sheet of that session linked the CDN (seen in headless Chromium offline:
    failed requests, unstyled widgets). Here the variable is set the same way Panel sets it
    for the page, when the server serves its own resources (Bokeh's default, ``server``).
    Harmless in the process that renders the page: Panel sets the same value there again.

    Waits for: Panel to set ``dist_url`` for a session made from a token too. No upstream
    issue found for ``--num-procs``; https://github.com/holoviz/panel/issues/7073
    (style sheets from the CDN when a page is not served through Panel's handler) is the
    nearest. Worth its risk: it only fills a variable Panel itself reads, on a public Bokeh
    property (``Document.template_variables``), and the test fails loudly when Panel stops
    reading it.
    """
    from bokeh.settings import settings
    from panel.io.resources import LOCAL_DIST
    from panel.io.state import state

    if document is None or settings.resources(default="server") != "server":
        return
    variables = document.template_variables
    if "dist_url" not in variables:
        variables["dist_url"] = f"{state.rel_path}/{LOCAL_DIST}" if state.rel_path else LOCAL_DIST


def queued_writes_never_stranded() -> bool:
    """Send the messages Panel queued for a session's websocket even when an earlier write of
    the same session lifted the queue's block first (once per process; True when installed).

    Panel 1.9.4 queues a patch it cannot write at once (``schedule_write_events``:
    ``_WRITE_MSGS[doc]``, ``_WRITE_BLOCK[doc] = True``) and schedules ``_dispatch_msgs(doc)``
    to write it. A ``_dispatch_msgs`` already under way (awaiting its writes) then ends with
    ``del _WRITE_BLOCK[doc]``; the one just scheduled finds no block and returns at once, and
    the queued message stays in ``_WRITE_MSGS`` until the session changes again
    (panel/io/document.py:232-270). A class hit it: thirty students locking at once, 1-5 of
    them never received "Locked at" although the store had their guess and their Bokeh
    model had the text; logged while measuring, those sessions' documents each held one
    message in ``_WRITE_MSGS`` with no block, seconds later. Here ``_dispatch_msgs`` treats
    queued messages as blocked, so the scheduled write sends them.

    Waits for: Panel to write queued messages whatever became of the block. No upstream issue
    found (worth reporting). Worth its risk: it only adds the block back where Panel itself
    queued messages for the document, and the test fails loudly when the names change.
    """
    from panel.io import document

    original = getattr(document, "_dispatch_msgs", None)
    if original is None or not all(hasattr(document, name)
                                   for name in ("_WRITE_MSGS", "_WRITE_BLOCK")):
        raise RuntimeError("panel.io.document no longer has _dispatch_msgs, _WRITE_MSGS and "
                           "_WRITE_BLOCK; queued_writes_never_stranded in explorer/_compat.py "
                           "needs updating.")
    if getattr(original, "_explorer_unstranded", False):
        return True

    async def dispatch_msgs(doc):
        if doc not in document._WRITE_BLOCK and document._WRITE_MSGS.get(doc):
            document._WRITE_BLOCK[doc] = True   # queued after an earlier write lifted it
        await original(doc)

    global panel_dispatch_msgs
    panel_dispatch_msgs = original   # (Panel's own, for the test)
    dispatch_msgs._explorer_unstranded = True
    document._dispatch_msgs = dispatch_msgs
    return True


def mathjax_sent_only_for_math() -> bool:
    """Send BokehJS's MathJax bundle (``bokeh-mathjax.min.js``, 1.8 MB) only to a page with
    TeX to typeset (once per process; True when installed).

    Panel 1.9.4 lists the bundle on a served page whenever one of the document's *roots* is
    a Panel ``HTML`` model (``panel.io.resources._panel_use_mathjax``, added by
    https://github.com/holoviz/panel/pull/8424 for Pyodide), and every template has one: its
    empty ``js_area``. So each visitor of the app fetched and parsed 1.8 MB of JavaScript
    (36% of the page's scripts; a class of thirty opening the link: 54 MB more over the
    school's network) for no formula at all. (On this machine's loopback the first render
    did not move: Outliers 2.28-2.56 s with the bundle, 2.28-2.49 s without, ``--handicap``
    busy loop, two runs of five loads each; the gain is the bytes.) Here the bundle goes to
    a page when one of its document's Panel ``HTML`` models (Markdown, HTML, Str panes) has
    math not disabled and a text with TeX in Bokeh's own delimiters (``$$ $$``, ``\\[ \\]``,
    ``\\( \\)``: ``contains_tex_string``, the rule Bokeh applies to its own models). BokehJS
    cannot load the bundle later anyway (its MathJax provider is a singleton:
    https://github.com/holoviz/panel/issues/8176).

    Waits for: a Panel release whose ``_panel_use_mathjax`` looks at the text of the
    models, not their type (none filed; PR 8424's review discussed the check, not the
    template's root): worth reporting. ``tests/test_compat.py`` fails when Panel stops
    listing the bundle for a template without math, or renames the function.
    """
    from panel.io import resources

    original = getattr(resources, "_panel_use_mathjax", None)
    if original is None:
        return False
    if getattr(original, "__wrapped__", None) is not None:
        return True   # already installed
    from bokeh.embed.util import contains_tex_string
    from panel.models.markup import HTML

    def _panel_use_mathjax(roots) -> bool:
        documents = {root.document for root in roots if root.document is not None}
        models = ([model for document in documents for model in document.models] if documents
                  else [model for root in roots for model in root.references()])
        return any(isinstance(model, HTML) and not model.disable_math
                   and isinstance(model.text, str) and contains_tex_string(model.text)
                   for model in models)

    _panel_use_mathjax.__wrapped__ = original
    resources._panel_use_mathjax = _panel_use_mathjax
    return True


# --- notebooks ----------------------------------------------------------------------------
def inline_stylesheet_updates() -> None:
    """In a notebook, send the stylesheets of pane *updates* from the installed Panel as
    ``data:`` URLs, never as links to the CDN (offline classrooms).

    ``pn.extension(inline=True)`` inlines what a cell first displays, but a pane changed
    later (a page's status line during a fit) is sent with links to cdn.holoviz.org. Panel
    looks each link up first in the per-document cache ``panel.io.state.state._stylesheets``;
    here that cache answers it with the file from Panel's ``dist`` directory. Running it
    again is harmless.

    Waits for: Panel to inline stylesheets on the property-update path too. The fix of
    https://github.com/holoviz/panel/issues/8707 (https://github.com/holoviz/panel/pull/8708,
    ``replace_inline_css`` drops the ``?v=`` query, panel/io/notebook.py:373) is in 1.9.4,
    but Panel applies it only to the models of a changed layout (``Viewable._preprocess``,
    panel/viewable.py:656-660) and at first display, not when ``Reactive._update_model``
    sends a pane's new properties; no upstream issue for that path found (worth reporting).
    Worth its risk: the cache only answers Panel's own ``dist`` files, and the test fails
    loudly when Panel stops reading it.
    """
    import base64
    from weakref import WeakKeyDictionary

    from bokeh.models import ImportedStyleSheet
    from panel.io.resources import CDN_DIST, DIST_DIR, LOCAL_DIST
    from panel.io.state import state

    class InlineStylesheets(dict):
        """One document's stylesheets by URL; Panel's own ones become ``data:`` URLs."""

        def _offline(self, url) -> None:
            if not isinstance(url, str) or dict.__contains__(self, url):
                return
            # a CDN link, or the server-relative path Panel later rewrites to one
            prefix = next((p for p in (CDN_DIST, LOCAL_DIST) if url.startswith(p)), None)
            if prefix is None:
                return
            path = DIST_DIR / url[len(prefix):].split("?")[0]
            if path.is_file():
                data = base64.b64encode(path.read_bytes()).decode("ascii")
                dict.__setitem__(self, url,
                                 ImportedStyleSheet(url=f"data:text/css;base64,{data}"))

        def __contains__(self, url) -> bool:
            self._offline(url)
            return dict.__contains__(self, url)

        def __getitem__(self, url):
            self._offline(url)
            return dict.__getitem__(self, url)

        def get(self, url, default=None):
            self._offline(url)
            return dict.get(self, url, default)

        def __bool__(self) -> bool:   # Panel tests ``if cache and url in cache``
            return True

    class Documents(WeakKeyDictionary):
        """Every document gets an :class:`InlineStylesheets` cache when Panel asks."""

        def _cache(self, doc) -> InlineStylesheets:
            cache = WeakKeyDictionary.get(self, doc)
            if not isinstance(cache, InlineStylesheets):
                cache = InlineStylesheets(cache or {})
                WeakKeyDictionary.__setitem__(self, doc, cache)
            return cache

        def __contains__(self, doc) -> bool:
            return doc is not None and self._cache(doc) is not None

        def __getitem__(self, doc):
            return self._cache(doc)

        def get(self, doc, default=None):
            return default if doc is None else self._cache(doc)

        def __setitem__(self, doc, cache) -> None:
            WeakKeyDictionary.__setitem__(self, doc, cache)
            self._cache(doc)

    current = state._stylesheets
    if not isinstance(current, WeakKeyDictionary):
        raise RuntimeError("panel.io.state.state._stylesheets is no longer a "
                           f"WeakKeyDictionary (got {type(current).__name__}); the offline "
                           "stylesheet workaround in explorer/_compat.py needs updating.")
    if type(current).__name__ != "Documents":
        documents = Documents()
        for doc, cache in list(current.items()):
            documents[doc] = cache
        state._stylesheets = documents


# --- work service and process tuning ---------------------------------------------
def background_periodic_callback(callback, period_ms: int):
    """A started periodic callback of the current session that does not mark Panel busy.

    ``pn.state.add_periodic_callback`` marks the session busy and idle again around every
    tick (two document updates per live frame); only the constructor's undocumented
    ``background=True`` leaves that out.

    Waits for: a public ``background`` argument on ``pn.state.add_periodic_callback``
    (panel/io/state.py:602 in 1.9.4 takes callback, period, count, timeout, start only). No
    upstream issue found. Worth its risk: ``background`` is a constructor keyword Panel
    itself passes (panel/io/state.py:340, widgets/terminal.py:132, file_selector.py:196), so
    it is unlikely to go without Panel changing too.
    """
    from panel.io.callbacks import PeriodicCallback

    periodic = PeriodicCallback(callback=callback, period=int(period_ms), background=True)
    periodic.start()
    return periodic


def clear_type_cache() -> None:
    """Clear CPython's type attribute cache (it holds the attribute names ended sessions made
    at run time, pinning their memory). Elsewhere than CPython: nothing to clear.

    Waits for: nothing public will come (both clears are documented private ``sys._``
    functions); CPython 3.13 deprecates ``sys._clear_type_cache`` for
    ``sys._clear_internal_caches`` (https://github.com/python/cpython/issues/129027), and
    from 3.16 (unreleased) the cache is per type and both are no-ops
    (https://github.com/python/cpython/issues/155354): this then does nothing, and the
    memory it freed should be measured again. Worth its risk: one call, after sessions end.
    """
    clear = getattr(sys, "_clear_type_cache", None) or getattr(sys, "_clear_internal_caches",
                                                               None)
    if clear is not None:
        clear()


def _libc():
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:   # not glibc
        return None


def limit_malloc_arenas(arenas: int) -> bool:
    """glibc's ``mallopt(M_ARENA_MAX, arenas)``. False elsewhere.

    Waits for: none exists or is planned -- Python has no binding for glibc's malloc tuning
    (a GNU extension); the public alternative, the ``MALLOC_ARENA_MAX`` environment variable,
    must be set before the process starts, which ``panel serve`` users would have to do by
    hand. Worth its risk: a call of glibc's stable C ABI through ctypes, once at start."""
    libc = _libc()
    return bool(libc is not None and libc.mallopt(-8, int(arenas)))   # -8: M_ARENA_MAX


def malloc_trim() -> bool:
    """glibc's ``malloc_trim(0)``: hand freed arena pages back to the system. False
    elsewhere.

    Waits for: none exists or is planned -- Python has no binding for this GNU extension.
    Worth its risk: a call of glibc's stable C ABI through ctypes after sessions end, where
    it hands back memory the allocator would otherwise keep (bench_load's
    ``memory_after_ratio``)."""
    libc = _libc()
    return bool(libc is not None and libc.malloc_trim(0))



# --- Bokeh model defaults --------------------------------------------------------------
#: Values that no one can change in place: a default of these types may be shared.
_IMMUTABLE_TYPES = (type(None), bool, int, float, str, bytes)
#: (model class, property name) -> the property's default, for immutable defaults no theme
#: overrides (:func:`bokeh_defaults_computed_once`)
_class_defaults: dict[tuple[type, str], object] = {}


def _immutable(value) -> bool:
    if isinstance(value, tuple):
        return all(_immutable(item) for item in value)
    return type(value) in _IMMUTABLE_TYPES


def bokeh_defaults_computed_once() -> bool:
    """Compute an unset Bokeh property's default once per model class, not at every read.

    Bokeh 3.9 computes the default of a property a model has not set anew at each read
    (``PropertyDescriptor._get_default``): it walks the class's MRO for overridden
    defaults, looks for a theme by raising an ``AttributeError``, copies the value and
    validates it. Every model is read whole several times in a session (when it is made,
    each time the document indexes its models, when it is serialised), and most of its
    ~40 properties keep their defaults: 36% of the server's CPU to open a session of the
    app went there (cProfile of ten sessions opened at once).

    The default of a property whose value is immutable (None, a number, a string, a tuple
    of those) and that no theme overrides for the instance is the same for every instance
    of the class, so it is kept after its first computation. Mutable defaults (lists,
    dicts, models, data specs) and themed instances still take Bokeh's own path, which
    keeps a mutable default per instance. ``tests/test_compat.py`` checks every property of
    every model class against Bokeh's own computation. Returns False (and changes nothing)
    if Bokeh no longer has this internal.

    Waits for: Bokeh 4.0, whose property system "materializes defaults only when accessed"
    (https://github.com/bokeh/bokeh/pull/15355, merged to branch-4.0, fixing
    https://github.com/bokeh/bokeh/issues/15354) and drops the descriptor machinery this
    wraps: there this returns False, and the session's CPU should be measured again. Bokeh
    3.10's metadata cache (bokeh/bokeh#15322) caches property metadata, not defaults.
    """
    from bokeh.core.property.descriptors import PropertyDescriptor

    original = getattr(PropertyDescriptor, "_get_default", None)
    if original is None:
        return False
    if getattr(original, "__wrapped__", None) is not None:
        return True   # already installed

    missing = object()

    def _get_default(self, obj):
        # where ``HasProps.apply_theme`` keeps a theme's values (``themed_values()`` looks
        # them up by raising an AttributeError when there are none: 5% of a session here)
        themed = "__themed_values__" in obj.__dict__
        key = (obj.__class__, self.name)
        if not themed:
            value = _class_defaults.get(key, missing)
            if value is not missing:
                return value
        value = original(self, obj)
        if not themed and _immutable(value) and not self.has_unstable_default(obj):
            _class_defaults[key] = value
        return value

    _get_default.__wrapped__ = original
    PropertyDescriptor._get_default = _get_default
    return True


# --- browser components and figures ------------------------------------------------------
#: BokehJS internals :class:`explorer.app.components.ShownPageLayout` relies on.
#:
#: Every page built in a session stays in the main area (hidden by a style rule) so going
#: back to one redraws nothing; but BokehJS lays out a whole document whenever any part of
#: it changes, hidden children included (78 ms for one page against 257-403 ms with hidden
#: pages beside it, measured in Chromium). BokehJS 3.9 has no public way to leave a child out
#: of its parent's layout pass: the hook redefines ``LayoutDOMView.layoutable_views`` (a
#: getter) on the main area's view and defers ``invalidate_layout`` of hidden pages; the
#: view is found through ``Bokeh.index``. The component reports ``hook = "applied"`` or what
#: it missed ("missing: ..."); the server logs a miss and the UI tests assert "applied".
#:
#: The same wrapper lays the shown page out once per browser task: BokehJS lays the whole
#: document out again at every layout property a message changes (``visible``, an axis's
#: factors, a text: ``LayoutDOMView.invalidate_layout`` in 3.9.2, "TODO: it would be better
#: and more efficient to do a localized update"), so a class's reveal, one message with about
#: forty such changes, cost each student's Chromium 2.2 s of layout; the page's requests are
#: now gathered and laid out once in a microtask after the message (the reveal reached three
#: students in 2.0-2.7 s instead of 4.6-5.7 s; tests/ui/test_tour.py counts the layouts).
#:
#: Waits for: BokehJS to leave hidden (``display: none`` / ``content-visibility: hidden``)
#: children out of their parent's layout pass and to lay out once per message (the second:
#: https://github.com/bokeh/bokeh/issues/12129, closed, and #4394's "this requires an
#: invalidation algorithm"), or the app to show one page at a time at no cost. No upstream
#: issue asks for the first; the nearest are
#: https://github.com/bokeh/bokeh/issues/7438 (open: inactive tabs still render) and
#: https://github.com/bokeh/bokeh/pull/15205 (merged: a ``Tabs`` with
#: ``link_layouts=False`` builds only the active tab's views; not in 3.9.2, whose
#: ``TabsView.child_models`` still builds every tab), which may let the pages live in a
#: ``Tabs`` without headers instead; try it when it is released. Worth its risk
#: meanwhile: a miss only costs speed (every page laid out, as without the hook), and it
#: is reported.
SHOWN_PAGE_LAYOUT_ESM = """const PAGE = "explorer-page";
const isPage = (view) => (view.model.css_classes || []).includes(PAGE);

// The shown page's slug from the main area's style rule (app.hidden_pages_rule); null when
// the rule hides every page, undefined when there is no rule (nothing hidden).
const shownSlug = (main) => {
  for (const sheet of main.model.stylesheets) {
    if (typeof sheet === "string" && sheet.includes(PAGE)) {
      const match = sheet.match(/:not\\(\\.explorer-page-([\\w-]+)\\)/);
      return match ? match[1] : null;
    }
  }
  return undefined;
};

const getterOf = (object, name) => {
  for (let proto = object; proto != null; proto = Object.getPrototypeOf(proto)) {
    const found = Object.getOwnPropertyDescriptor(proto, name);
    if (found != null && found.get != null) return found.get;
  }
  return null;
};

function scope(main, report) {
  if (main.__explorer_scoped) return true;   // found before (or by another app's component)
  const layoutable = getterOf(main, "layoutable_views");
  if (layoutable == null || typeof main.invalidate_layout !== "function") {
    report("missing: BokehJS LayoutDOMView.layoutable_views / invalidate_layout");
    return false;
  }
  const hidden = (view) => {
    if (!isPage(view)) return false;
    const slug = shownSlug(main);
    return slug !== undefined && !view.model.css_classes.includes(`${PAGE}-${slug}`);
  };
  const waiting = new WeakSet();       // hidden pages that asked for a layout
  const widthAtHide = new WeakMap();   // page view -> the main area's width when hidden
  const scoped = new WeakSet();
  const asked = new WeakSet();         // shown pages with a layout due at the end of the task
  const scopePage = (view) => {
    if (scoped.has(view) || typeof view.invalidate_layout !== "function") return;
    scoped.add(view);
    const own = view.invalidate_layout;
    view.invalidate_layout = function () {
      if (hidden(this)) { waiting.add(this); return; }
      // One layout for everything one message changed: BokehJS lays the whole document out
      // again at each changed property (a reveal's 40 changes: 40 passes, 2 s in Chromium).
      if (asked.has(this)) return;
      asked.add(this);
      queueMicrotask(() => {
        asked.delete(this);
        if (hidden(this)) waiting.add(this);
        else own.call(this);
      });
    };
  };
  Object.defineProperty(main, "layoutable_views", {
    configurable: true,
    get() {
      const views = layoutable.call(this);
      for (const view of views) if (isPage(view)) scopePage(view);
      return views.filter((view) => !hidden(view));
    },
  });
  const switched = () => {
    let relayout = false;
    const width = main.bbox.width;
    for (const view of main.child_views) {
      if (!isPage(view)) continue;
      if (hidden(view)) {
        if (!widthAtHide.has(view)) widthAtHide.set(view, width);
      } else {
        if (waiting.has(view) || (widthAtHide.has(view) && widthAtHide.get(view) !== width))
          relayout = true;
        waiting.delete(view);
        widthAtHide.delete(view);
      }
    }
    if (relayout) main.invalidate_layout();
  };
  main.model.properties.stylesheets.change.connect(switched);
  main.__explorer_scoped = true;
  return true;
}

export function render({ model, el }) {
  el.style.display = "none";
  const report = (outcome) => { if (model.hook !== outcome) model.hook = outcome; };
  // The main area is another root of the document: looked for until found (its view may
  // come after this one). Every main area found is scoped (a notebook may show two apps).
  const find = () => {
    if (typeof Bokeh === "undefined" || typeof Bokeh.index?.all_views !== "function") {
      report("missing: Bokeh.index.all_views");
      return true;   // nothing to look for again
    }
    let found = false;
    for (const view of Bokeh.index.all_views()) {
      const children = view.child_views;   // an array on layouts (not on every view)
      if (Array.isArray(children) && children.some(isPage))
        found = scope(view, report) || found;
    }
    if (found) report("applied");
    return found;
  };
  if (!find()) {
    let tries = 0;
    const timer = setInterval(() => {
      if (find()) clearInterval(timer);
      else if (++tries > 600) { clearInterval(timer); report("missing: the main area's view"); }
    }, 100);
  }
}
"""

#: The BokehJS internal :class:`explorer.app.components.FramePacer` uses to find the
#: watched figures' elements by model id: ``Bokeh.index`` (a map of views). Panel's
#: ``ReactiveESM`` hands a component its own model and element only; there is no public
#: BokehJS lookup of another model's view in 3.9. A missing index leaves ``offscreen``
#: empty (every figure drawn on every frame, as without the pacer's help); the Trees UI test
#: waits for a reported off-screen figure, so it fails loudly when the index changes.
#:
#: Waits for: a documented way for a Panel ESM component to look views up. Bokeh made the
#: index a ``ViewManager`` and hands it to ``CustomJS`` as ``cb_context.index``
#: (https://github.com/bokeh/bokeh/pull/13351), but Panel's ESM ``render`` gets no such
#: context; no upstream issue asks for one. Worth its risk: Panel's own ESM render shim
#: looks its views up through the same global (``Bokeh.index.find_one_by_id``,
#: panel/dist/lib/models/reactive_esm.js in 1.9.4), so the index will not go without
#: Panel changing too.
VIEW_ELEMENTS_JS = """
const viewElements = (ids) => {
  const found = new Map();
  if (typeof Bokeh === "undefined" || typeof Bokeh.index?.all_views !== "function")
    return found;
  for (const view of Bokeh.index.all_views())
    if (ids.has(view.model.id) && view.el != null) found.set(view.model.id, view.el);
  return found;
};
"""

#: BokehJS's client-only change, for :data:`explorer.viz.tree._FIT_JS` (the tree's fit to its
#: frame): ``set_local(model, attrs)`` sets ``attrs`` on ``model`` in the browser and sends
#: nothing to the server. The fit's ranges, frame height and fonts are the browser's
#: business; sent back (the documented ``model.prop = value`` always syncs) they cost the
#: server ~170 ms of CPU per data change. It relies on ``HasProps.setv(attrs, {sync:
#: false})``: ``setv`` passes ``options.sync`` to the change events it makes and the server
#: connection (``ClientConnection._document_changed``) drops events whose ``sync`` is false.
#: In a notebook Panel's comm manager sends them anyway (it does not read ``sync``): there
#: the fit is only slower, never wrong. ``tests/test_compat.py`` checks the installed
#: bundles (bokeh.js and bokeh.min.js) for each of those steps.
#:
#: Waits for: nothing upstream -- ``setv`` and ``SetOptions.sync`` are in BokehJS's own
#: type declarations (lib/core/has_props.d.ts) but not in Bokeh's user documentation, and no
#: issue asks to document client-only changes for ``CustomJS``. Worth its risk: if BokehJS
#: drops the option, the changes are sent (slower, still correct) and the test fails.
CLIENT_ONLY_SETV_JS = """
// explorer/_compat.py CLIENT_ONLY_SETV_JS: set attributes in the browser only
// (BokehJS HasProps.setv(attrs, {sync: false}): nothing goes to the server)
const set_local = (model, attrs) => model.setv(attrs, {sync: false})
"""


def send_at_once(component_class: type, names: list[str]) -> type:
    """Have Panel send changes of ``names`` from the browser on the next tick, not after its
    50 ms debounce (Panel's private ``_priority_changes``; Panel 1.9 has no public
    setting). Used for the frame pacer's acknowledgement, which gates the next frame: while
    a debounced change was pending Panel queued every click of the session behind it (a
    Pause reached the runner 0.5 s late). Returns the class.

    Waits for: a public per-parameter "not debounced" setting in Panel (1.9.4 reads the
    class attribute at panel/reactive.py:637; the 50 ms is ``Syncable._debounce``). No
    upstream issue found. Worth its risk: Panel's own Tabulator sets the same attribute
    (panel/widgets/tables.py:1374), and this raises when Panel no longer has it.
    """
    from panel.reactive import Syncable

    if not hasattr(Syncable, "_priority_changes"):
        raise RuntimeError("Panel no longer has Syncable._priority_changes: the frame pacer's "
                           "acknowledgements would wait 50 ms each; see explorer/_compat.py.")
    component_class._priority_changes = list(names)
    return component_class


def style_new_flex_children(box) -> None:
    """Run Panel's per-root hooks (the template's style sheets, the loading spinner) on a
    ``FlexBox`` whose children were just set.

    Panel styles a layout's new children when it sends them, except a ``FlexBox``'s: a
    FlexBox is a ReactiveHTML, whose children update skips those hooks, so figures added
    later went out unstyled and the next page switch restyled them all (~0.4 s of the
    browser's time, measured). The hooks' entry point is private in Panel 1.9
    (``Viewable._preprocess``, reached through ``box._models`` and ``state._views``, as
    Panel's own layouts do).

    Waits for: Panel to run the per-root hooks on a ``FlexBox``'s (ReactiveHTML's) new
    children, as it does for its other layouts. No upstream issue found
    (https://github.com/holoviz/panel/pull/2092, "Various fixes for ReactiveHTML children",
    is the nearest; the behaviour is still in 1.9.4). Worth its risk: the private names are
    checked by ``tests/test_compat_browser.py``, and a miss costs speed only (the next page
    switch restyles the figures).
    """
    from panel.io.state import state

    for ref in list(box._models):
        root_view = state._views.get(ref)   # (the root's viewable, its model, doc, comm)
        if root_view is not None:
            root_view[0]._preprocess(root_view[1], box)
