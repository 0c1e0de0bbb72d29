"""What a person sees overlap: the boxes of a page's visible leaves, measured in the browser.

Two controls of one widget (a number field's spin buttons drawn in its box) are not a pair.
A leaf is a figure (a Bokeh plot's element: what it draws is its own business), a control
(button, input, select, text area: the text inside is part of it) or a line of text (each
text node's rendered line boxes, from a ``Range``). The walk goes into shadow roots, so
Panel's and Bokeh's components are seen as the browser draws them. A box is clipped by its
scrolling or clipping ancestors (a code panel's text scrolled out of its box is not seen),
and a leaf inside a fixed-position element (the template's header) does not scroll with the
page, so it is left out.

:data:`LEAVES_JS` returns ``[{kind, label, x, y, width, height}]`` in page coordinates;
:func:`overlaps` pairs the leaves whose boxes overlap by more than a pixel or two each way;
:data:`BLOCKED_JS` names the buttons whose centre another element takes the click of;
:data:`CUT_OFF_JS` the leaves that stick out past the window's right edge.
"""

from __future__ import annotations

#: The visible leaves of the page, in page coordinates (see the module docstring).
LEAVES_JS = r"""() => {
  const leaves = [];
  const CONTROLS = new Set(['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA']);
  const parentOf = (el) => el.parentElement || (el.getRootNode && el.getRootNode().host) || null;
  const hidden = (el) => {
    for (let e = el; e; e = parentOf(e)) {
      const style = getComputedStyle(e);
      if (style.display === 'none' || style.visibility === 'hidden'
          || style.opacity === '0') return true;
      if (style.position === 'fixed') return true;   // does not scroll with the page
    }
    return false;
  };
  const clipped = (el, r) => {
    let box = {left: r.left, top: r.top, right: r.right, bottom: r.bottom};
    for (let e = parentOf(el); e; e = parentOf(e)) {
      const style = getComputedStyle(e);
      if (style.overflowX !== 'visible' || style.overflowY !== 'visible') {
        const c = e.getBoundingClientRect();
        if (style.overflowX !== 'visible') {
          box.left = Math.max(box.left, c.left);
          box.right = Math.min(box.right, c.right);
        }
        if (style.overflowY !== 'visible') {
          box.top = Math.max(box.top, c.top);
          box.bottom = Math.min(box.bottom, c.bottom);
        }
      }
    }
    return box;
  };
  const owners = new Map();   // a widget's shadow root -> a number
  const ownerOf = (el) => {
    const root = el.getRootNode();
    if (!owners.has(root)) owners.set(root, owners.size);
    return owners.get(root);
  };
  const add = (kind, label, el, r) => {
    if (r.width < 2 || r.height < 2) return;
    const b = clipped(el, r);
    if (b.right - b.left < 2 || b.bottom - b.top < 2) return;
    leaves.push({kind, label: (label || '').trim().slice(0, 60), owner: ownerOf(el),
                 x: b.left + scrollX, y: b.top + scrollY,
                 width: b.right - b.left, height: b.bottom - b.top});
  };
  const isFigure = (el) => el.classList && (el.classList.contains('bk-Figure')
      || el.classList.contains('bk-GridPlot'));
  const walk = (root) => {
    for (const node of root.childNodes) {
      if (node.nodeType === Node.TEXT_NODE) {
        if (!node.textContent.trim()) continue;
        const el = node.parentElement;
        if (!el || hidden(el)) continue;
        const range = document.createRange();
        range.selectNodeContents(node);
        for (const r of range.getClientRects()) add('text', node.textContent, el, r);
        continue;
      }
      if (node.nodeType !== Node.ELEMENT_NODE) continue;
      const el = node;
      if (['STYLE', 'SCRIPT', 'LINK', 'TEMPLATE', 'OPTION'].includes(el.tagName)) continue;
      if (isFigure(el)) {
        if (!hidden(el)) {
          const parent = el.parentElement;
          const name = el.getAttribute('aria-label')
            || (parent && parent.getAttribute('aria-label')) || 'figure';
          add('figure', name, el, el.getBoundingClientRect());
        }
        continue;
      }
      if (CONTROLS.has(el.tagName)) {
        if (!hidden(el) && el.type !== 'hidden')
          add('control', el.innerText || el.value || el.getAttribute('aria-label') || el.type,
              el, el.getBoundingClientRect());
        continue;
      }
      if (el.shadowRoot) walk(el.shadowRoot);
      walk(el);
    }
  };
  walk(document.body);
  return leaves;
}"""

#: Buttons whose centre is taken by another element (a click there would not reach them).
BLOCKED_JS = r"""() => {
  const out = [];
  const deepAt = (x, y) => {
    let el = document.elementFromPoint(x, y);
    while (el && el.shadowRoot) {
      const inner = el.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === el) break;
      el = inner;
    }
    return el;
  };
  const contains = (outer, inner) => {
    for (let e = inner; e; e = e.parentElement || (e.getRootNode && e.getRootNode().host)) {
      if (e === outer) return true;
    }
    return false;
  };
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.tagName === 'BUTTON') {
        const r = el.getBoundingClientRect();
        const style = getComputedStyle(el);
        // only where the button is in view inside its scrolling area (not under the
        // template's header, which the area scrolls beneath)
        let view = {top: 0, bottom: innerHeight, left: 0, right: innerWidth};
        for (let e = el.parentElement || el.getRootNode().host; e;
             e = e.parentElement || (e.getRootNode && e.getRootNode().host)) {
          if (/(auto|scroll)/.test(getComputedStyle(e).overflowY)) {
            const c = e.getBoundingClientRect();
            view = {top: Math.max(view.top, c.top), bottom: Math.min(view.bottom, c.bottom),
                    left: Math.max(view.left, c.left), right: Math.min(view.right, c.right)};
          }
        }
        if (r.width > 2 && r.height > 2 && style.visibility !== 'hidden'
            && r.top >= view.top && r.bottom <= view.bottom && r.left >= view.left
            && r.right <= view.right) {
          const at = deepAt(r.left + r.width / 2, r.top + r.height / 2);
          if (at && !contains(el, at) && !contains(at, el))
            out.push(el.innerText.trim().slice(0, 40));
        }
      }
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return out;
}"""

#: How far the page's content reaches past the right edge of the window, or of the main
#: scrolling area (the template's main column scrolls sideways instead of cutting off, but
#: a teacher at 1024 px sees only its left part).
CUT_OFF_JS = r"""() => {
  let worst = 0;
  const doc = document.scrollingElement || document.documentElement;
  worst = Math.max(worst, doc.scrollWidth - doc.clientWidth);
  for (const el of document.querySelectorAll('*')) {
    const style = getComputedStyle(el);
    if (/(auto|scroll|hidden)/.test(style.overflowX) && el.clientHeight > 200
        && el.clientWidth > 300 && el.scrollWidth > el.clientWidth)
      worst = Math.max(worst, el.scrollWidth - el.clientWidth);
  }
  return worst;
}"""


def overlaps(leaves: list[dict], *, tolerance: float = 2.0) -> list[tuple[dict, dict]]:
    """Pairs of leaves whose boxes overlap by more than ``tolerance`` px in both directions.

    >>> a = dict(kind='text', label='a', x=0, y=0, width=10, height=10)
    >>> b = dict(kind='figure', label='b', x=5, y=5, width=10, height=10)
    >>> c = dict(kind='text', label='c', x=10, y=0, width=10, height=10)
    >>> [(p['label'], q['label']) for p, q in overlaps([a, b, c])]
    [('a', 'b'), ('c', 'b')]
    """
    found = []
    ordered = sorted(leaves, key=lambda leaf: leaf["y"])
    for i, p in enumerate(ordered):
        for q in ordered[i + 1:]:
            if q["y"] >= p["y"] + p["height"] - tolerance:
                break
            dx = min(p["x"] + p["width"], q["x"] + q["width"]) - max(p["x"], q["x"])
            dy = min(p["y"] + p["height"], q["y"] + q["height"]) - max(p["y"], q["y"])
            if dx > tolerance and dy > tolerance and not _one_widget(p, q):
                found.append((p, q))
    return found


def _one_widget(p: dict, q: dict) -> bool:
    """Two controls of one widget (a number field and its spin buttons) overlap by design."""
    return (p["kind"] == q["kind"] == "control" and "owner" in p
            and p["owner"] == q.get("owner"))


def describe(pairs: list[tuple[dict, dict]]) -> str:
    """One line per overlapping pair, for a test's failure message."""
    def one(leaf):
        return (f"{leaf['kind']} {leaf['label']!r} at ({leaf['x']:.0f}, {leaf['y']:.0f}) "
                f"{leaf['width']:.0f}x{leaf['height']:.0f}")
    return "\n".join(f"{one(p)}  OVER  {one(q)}" for p, q in pairs)


#: Scrolls the page's main scrolling area (the template's main column, or the window) down by
#: ``delta`` px; returns whether it moved.
SCROLL_JS = r"""(delta) => {
  const candidates = [document.scrollingElement, ...document.querySelectorAll('*')];
  let area = null;
  for (const el of candidates) {
    if (!el) continue;
    const style = getComputedStyle(el);
    const scrolls = el === document.scrollingElement || /(auto|scroll)/.test(style.overflowY);
    if (scrolls && el.scrollHeight > el.clientHeight + 1
        && (!area || el.clientWidth * el.clientHeight > area.clientWidth * area.clientHeight))
      area = el;
  }
  if (!area) return false;
  const before = area.scrollTop;
  area.scrollTop = before + delta;
  return area.scrollTop !== before;
}"""
