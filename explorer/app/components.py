"""Small browser-side components: a CSV upload field that refuses a file over the limit *in
the browser*, and the two parts of the live views' controls that change on every frame: the
frame pacer (:class:`FramePacer`) and text rewritten with every frame (:class:`LiveText`:
the status line, the agreement captions).

The stock ``FileInput`` sends the whole file base64-encoded in one websocket message before
the server can look at its size: a 15 MB file became a ~20 MB message, over the Bokeh
server's default limit (20 MiB), and the session died ("Server connection lost"). This
field checks ``file.size`` against ``limit_bytes`` in the browser; a larger file never
leaves it (``refused`` tells the server its name and size, so the user gets a message), a
smaller one travels as text (a CSV is text: no base64 inflation), well inside the limit.

:class:`ShownPageLayout` keeps BokehJS's layout passes to the page the app shows.
"""

from __future__ import annotations

import logging

import panel as pn
import param
from panel.custom import JSComponent

from explorer._compat import (
    SHOWN_PAGE_LAYOUT_ESM,
    VIEW_ELEMENTS_JS,
    send_at_once,
    style_new_flex_children,
)

log = logging.getLogger(__name__)

__all__ = ["CsvUpload", "FramePacer", "LiveText", "ShownPageLayout", "beside", "figure_pane",
           "flowing_row",
           "intro_card", "set_flex_objects", "status_line"]


class CsvUpload(JSComponent):
    """``<input type=file accept=.csv>`` with a browser-side size limit.

    After each accepted file, ``filename`` and ``content`` hold it and ``upload_id`` is
    incremented (watch ``upload_id``: the same file chosen twice is a new upload). A file over
    ``limit_bytes`` sets ``refused`` to ``"<size> <name>"`` instead and sends nothing else.
    """

    limit_bytes = param.Integer(default=10_000_000, bounds=(1, None))
    filename = param.String(default="")
    content = param.String(default="")
    upload_id = param.Integer(default=0)
    refused = param.String(default="")

    _esm = """
export function render({ model, el }) {
  const input = document.createElement("input");
  input.type = "file";
  input.accept = ".csv,text/csv";
  input.setAttribute("aria-label", "Upload a CSV file");
  input.style.fontSize = "15px";
  input.addEventListener("change", () => {
    const file = input.files[0];
    if (!file) { return; }
    if (file.size > model.limit_bytes) {
      model.refused = `${file.size} ${file.name}`;
      input.value = "";
      return;
    }
    const reader = new FileReader();
    reader.onload = () => {
      model.filename = file.name;
      model.content = reader.result;
      model.upload_id = model.upload_id + 1;
      input.value = "";
    };
    reader.readAsText(file);
  });
  el.appendChild(input);
}
"""


class FramePacer(JSComponent):
    """The browser's acknowledgement of each live frame (docs/DESIGN.md, "Live views").

    The server sets ``frame`` after it has patched a frame's sources; the browser answers by
    setting ``drawn`` to that number once the frame has arrived *and* the frame before it
    is painted. A frame counts as painted in a task right after the next animation frame,
    whose callbacks include BokehJS's repaint of the patched canvases (asked for while the
    patch was applied, before this one; BokehJS defers it past this frame only when it
    painted less than 1/60 s before); waiting for a second animation frame instead added up
    to a display refresh (~16 ms) to every frame of a run. The runner sends the next frame
    only after the answer, so the next frame travels and is made while this one is painted,
    and the browser never holds more than one frame it has not painted: a click is
    answered after one frame at most. (Answered only after its own paint, a frame left the
    browser idle for the whole trip to the server and back: measured on Outliers with
    ``bench_app --handicap 1``, 8.8 frames/s, and 12.7 with the paint and the trip
    overlapped.) Frames come at most ``FramePump.MAX_FPS`` a second, so one is painted
    before the next arrives unless applying it held the browser for longer than that. A
    hidden tab paints nothing and so asks for nothing.
    """

    frame = param.Integer(default=0)
    drawn = param.Integer(default=0)
    #: Ids of the Bokeh figures to watch (the server sets them) and those of them the
    #: browser reports outside the viewport (scrolled away): a view nobody can see need
    #: not be redrawn on every frame (see ``ModelPageView._render``).
    watched = param.List(default=[], item_type=str)
    offscreen = param.List(default=[], item_type=str)

    _esm = VIEW_ELEMENTS_JS + """
export function render({ model, el }) {
  el.style.display = "none";
  // Frame k is answered once it has arrived *and* frame k - 1 is on screen: the server
  // makes and sends frame k + 1 while k is painted, and the browser never holds more than
  // one frame it has not painted.
  let painted = model.frame - 1;   // the newest frame on screen (sent before this view: all)
  let unanswered = null;   // a frame that arrived while the one before it was painted
  const answer = () => {
    if (unanswered != null && painted >= unanswered - 1) {
      model.drawn = unanswered;
      unanswered = null;
    }
  };
  const acknowledge = () => {
    const frame = model.frame;
    unanswered = frame;
    answer();
    requestAnimationFrame(() => setTimeout(() => {
      painted = Math.max(painted, frame);
      answer();
    }, 0));
  };
  // Which watched figures are outside the viewport: their views' elements are found by
  // model id (viewElements, explorer/_compat.py; they may arrive after this one: looked
  // for again at every frame) and observed.
  const offscreen = new Set();
  const observed = new Set();
  const ids = new WeakMap();
  const report = () => {
    const now = [...offscreen].sort();
    if (now.join() !== [...model.offscreen].sort().join()) model.offscreen = now;
  };
  const observer = typeof IntersectionObserver === "undefined" ? null
    : new IntersectionObserver((entries) => {
        for (const entry of entries) {
          const id = ids.get(entry.target);
          if (entry.isIntersecting) offscreen.delete(id); else offscreen.add(id);
        }
        report();
      });
  const watch = () => {
    if (observer == null) return;
    const wanted = new Set(model.watched.filter((id) => !observed.has(id)));
    if (wanted.size === 0) return;
    for (const [id, element] of viewElements(wanted)) {
      observed.add(id);
      ids.set(element, id);
      observer.observe(element);
    }
  };
  model.on("frame", () => { acknowledge(); watch(); });
  model.on("watched", watch);
  acknowledge();   // a frame sent before this view existed is answered too
  watch();
}
"""


# The acknowledgement is handled on the next tick, not after Panel's 50 ms debounce: it gates
# the next frame (see explorer._compat.send_at_once).
send_at_once(FramePacer, ["drawn"])


class ShownPageLayout(JSComponent):
    """Keeps BokehJS's layout passes to the page the app shows (invisible; one a session).

    Every page built in a session stays in the main area, the others hidden by one style
    rule (``app.hidden_pages_rule``), so going back to a page redraws nothing. But BokehJS
    lays out a whole document whenever any part of it changes: from the root down, every
    layout box is restyled and measured and every figure repainted, hidden or not. Measured
    in Chromium, one layout pass of the main area took 78 ms with the Tasks page alone,
    257 ms with the Trees page hidden beside it and 403 ms with Outliers: on a first visit
    to a page, or whenever a control relaid the page out, the hidden pages cost more than
    the shown one.

    Here the main area's view leaves its hidden pages out of its layout passes (BokehJS's
    ``layoutable_views``), and a hidden page's own requests for a layout wait: the page is
    marked, and laid out when it is shown again, as it is when the main area's width changed
    meanwhile (a resized window). A page shown again unchanged is painted as it was, with no
    layout pass at all.

    Which page is shown is read from the main area's style rule itself, so the two cannot
    disagree. The view is found among BokehJS's views as the one whose children carry the
    ``explorer-page`` class. A BokehJS without these hooks is left as it is: every page is
    then laid out, as before.
    """

    #: What the browser made of the hook: "applied", or "missing: <the internal>"
    #: (every page is then laid out, as without it; the server logs it).
    hook = param.String(default="")

    _esm = SHOWN_PAGE_LAYOUT_ESM

    @param.depends("hook", watch=True)
    def _report_hook(self) -> None:
        if self.hook.startswith("missing"):
            log.warning("ShownPageLayout: BokehJS hook not applied (%s); hidden pages are laid "
                        "out with the shown one. See explorer/_compat.py.", self.hook)


class LiveText(JSComponent):
    """Text that the server rewrites many times a second (a run's status, the agreement of
    an estimate with its truth), drawn without re-laying out the page.

    A Bokeh ``Div`` whose text changes re-renders itself and then lays out the whole page
    from the root: BokehJS re-reads the computed style of every layout box, on every tick
    of a run. Measured in one A/B on Trees (largest data, 30 steps/s): the browser received
    4.9 frames a second with a Div as the status line, 10.5 with this component. Here the
    text is swapped inside the component's box, which BokehJS does not know has changed;
    the page is laid out again only if the box's height changes (a caption wrapping to
    another number of lines).

    ``html`` is shown as HTML: the caller escapes it. ``one_line``: the text stays on one
    line, ends in an ellipsis when too long and shows whole as a tooltip (give the
    component a fixed ``height``). ``role``: the ARIA role of the text, for example
    "status".
    """

    html = param.String(default="")
    one_line = param.Boolean(default=False, constant=True)
    role = param.String(default="", constant=True)

    _esm = """
export function render({ model, el }) {
  const box = document.createElement("div");
  box.className = model.one_line ? "live-text one-line" : "live-text";
  if (model.role) box.setAttribute("role", model.role);
  const show = () => {
    box.innerHTML = model.html;
    if (model.one_line) box.title = box.textContent;
  };
  model.on("html", show);
  show();
  el.appendChild(box);
}
"""

    _stylesheets = [""":host .live-text { font-size: 15px; line-height: 1.35; }
:host .live-text.one-line {
  font-size: 1.05em; line-height: 24px; height: 24px; padding-left: 5px;
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis;
}"""]


def status_line(html: str = "", **params) -> LiveText:
    """The runner's status line: one line of 24 px (see :class:`LiveText`)."""
    return LiveText(html=html, one_line=True, role="status", height=24, **params)


def figure_pane(fig, **params) -> pn.pane.Bokeh:
    """A pane for a Bokeh figure that takes the template's theme whenever it is made.

    Made in a session's callback before the browser has the page (a result applied on the
    loop; afterwards :func:`explorer.app.serving.themed_by_the_template` resets the
    session's default), Panel gives a component the session's design as its own, and its
    theme hook then skips it: the figure went out unthemed (no Bootstrap style sheet,
    measured in the UI tests). ``design=None`` leaves the design to the layout it joins, as
    for the figures made with the page; in a notebook it changes nothing.
    """
    return pn.pane.Bokeh(fig, design=None, **params)


def set_flex_objects(box: pn.FlexBox, objects: list) -> None:
    """``box.objects = objects``, with the design's style sheets given to what is new.

    Panel styles a layout's new children (the template's theme: fonts, the loading
    spinner) when it sends them, except for a ``FlexBox``'s: a FlexBox is a ReactiveHTML,
    whose children update skips Panel's per-root hooks. Figures added to a FlexBox after the
    page was first sent (the kit's figures below the fold, the Tasks page's scatters) went
    out unstyled, and the next change of a plain layout (a page switch) restyled them all at
    once: ~0.4 s of the browser's time on a page switch, measured. Here the same hooks
    run on ``box`` once its children are set (:func:`explorer._compat.style_new_flex_children`).
    """
    box.objects = objects
    style_new_flex_children(box)


def intro_card(markdown: str, *, collapsed: bool = True, font_size: str = "15px") -> pn.Card:
    """A page's introduction as a card whose header is the page's ``## heading``: folded by
    default, so the controls and the main live view fit a 1366 x 768 projector without
    scrolling; one click unfolds the explanation.

    >>> card = intro_card("## Tasks\\n\\nEach panel is one task.")
    >>> card.title, card.collapsed
    ('Tasks: what am I looking at?', True)
    """
    lines = markdown.strip().splitlines()
    heading = ""
    if lines and lines[0].startswith("#"):
        heading, lines = lines[0].lstrip("#").strip(), lines[1:]
    body = pn.pane.Markdown("\n".join(lines).strip(), sizing_mode="stretch_width",
                            styles={"font-size": font_size})
    return pn.Card(body, title=f"{heading}: what am I looking at?" if heading else "About",
                   collapsed=collapsed, sizing_mode="stretch_width", margin=(0, 10, 5, 10),
                   header_css_classes=["intro-header"],
                   stylesheets=[":host .card-title { font-size: 1.35em; font-weight: 600; }"])


def beside(left, right, *, right_least: int) -> pn.FlexBox:
    """``left`` and ``right`` in one row while the row is wide enough for ``right`` to get
    ``right_least`` px beside ``left``; in a narrower window (1024 px with the sidebar open)
    ``right`` goes under ``left``, at the full width, instead of past the window's edge.

    >>> row = beside(pn.Column(width=300), pn.Column(sizing_mode="stretch_width"),
    ...              right_least=620)
    >>> row[1].styles["flex"]
    '1 1 620px'
    """
    return flowing_row(left, right, least=right_least)


def flowing_row(*objects, least: int = 400) -> pn.FlexBox:
    """A row whose items go on the next line where the window is too narrow for them all,
    instead of past the window's right edge (a wrapping ``FlexBox``); an item that
    stretches takes the room left on its line, at least ``least`` px (or the whole line).

    Not a ``Row``: Panel gives a row the sum of its items' least widths as its own, and
    every layout above it the same, so a page could only overflow a narrow window, never
    wrap. A ``FlexBox`` has no least width of its own. Items added later go in with
    :func:`set_flex_objects` (the template's theme).

    >>> box = flowing_row(pn.Spacer(width=300), pn.Column(sizing_mode="stretch_width"))
    >>> box.flex_wrap, box[1].styles["min-width"]
    ('wrap', 'min(100%, 400px)')
    """
    for item in objects:
        if item.sizing_mode in ("stretch_width", "stretch_both", "scale_width", "scale_both"):
            # (inline: it overrides the 100% width Bokeh gives a stretching item)
            item.styles = {**item.styles, "flex": f"1 1 {int(least)}px", "width": "auto",
                           "min-width": f"min(100%, {int(least)}px)"}
    return pn.FlexBox(*objects, flex_wrap="wrap", flex_direction="row",
                      sizing_mode="stretch_width")
