"""What the app needs from Panel and Bokeh that they do not offer publicly, in one place.

Each workaround says why no public API serves and what would let it go; each is checked by
a test that fails loudly when the internal changes (tests/test_compat_browser.py, and for
the browser's side the UI tests, which assert the hooks were found and applied). Panel and
Bokeh are imported inside the functions, so any module may import this one.
"""

from __future__ import annotations

# --- browser components (helper C)

#: BokehJS internals :class:`explorer.app.components.ShownPageLayout` relies on.
#:
#: Every page built in a session stays in the main area (hidden by a style rule) so going
#: back to one redraws nothing; but BokehJS lays out a whole document whenever any part of
#: it changes, hidden children included (78 ms for one page against 257-403 ms with hidden
#: pages beside it, measured in Chromium). BokehJS 3.9 has no public way to leave a child out
#: of its parent's layout pass: the hook redefines ``LayoutDOMView.layoutable_views`` (a
#: getter) on the main area's view and defers ``invalidate_layout`` of hidden pages; the
#: view is found through ``Bokeh.index``. No upstream issue asks for it yet; it goes when
#: BokehJS skips layout of hidden (``display: none`` / ``content-visibility: hidden``)
#: children, or when the app shows one page at a time at no cost. The component reports
#: ``hook = "applied"`` or what it missed ("missing: ..."); the server logs a miss and the
#: UI tests assert "applied".
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
  const scopePage = (view) => {
    if (scoped.has(view) || typeof view.invalidate_layout !== "function") return;
    scoped.add(view);
    const own = view.invalidate_layout;
    view.invalidate_layout = function () {
      if (hidden(this)) { waiting.add(this); return; }
      return own.call(this);
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


def send_at_once(component_class: type, names: list[str]) -> type:
    """Have Panel send changes of ``names`` from the browser on the next tick, not after its
    50 ms debounce (Panel's private ``_priority_changes``; Panel 1.9 has no public
    setting). Used for the frame pacer's acknowledgement, which gates the next frame: while
    a debounced change was pending Panel queued every click of the session behind it (a
    Pause reached the runner 0.5 s late). Returns the class.
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
    Panel's own layouts do). Goes when Panel styles a ReactiveHTML's children itself.
    """
    from panel.io.state import state

    for ref in list(box._models):
        root_view = state._views.get(ref)   # (the root's viewable, its model, doc, comm)
        if root_view is not None:
            root_view[0]._preprocess(root_view[1], box)
