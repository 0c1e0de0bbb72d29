"""A new user's tour of the whole app in one fresh browser window of a projector's size
(1366 x 768): generator settings changed again and again, an upload and back, every page,
a run driven by every control and left for another page, a saved figure file opened offline.

The tour passes only when the browser said nothing wrong: no console error, no BokehJS
warning ("could not set initial ranges", "columns of inconsistent lengths"), no uncaught
error ("Size mismatch", "Offset is outside the bounds of the DataView"), no failed request
(the conftest's checks). Every wait is on what the page shows.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from explorer.data.catalog import CATALOG

pytestmark = pytest.mark.ui

PROJECTOR = {"width": 1366, "height": 768}
EXAMPLE_CSV = Path(__file__).resolve().parents[2] / "data" / "example_tasks.csv"

#: The page buttons of the sidebar: the page's slug and a text it shows once built.
PAGES = {
    "Tasks": ("tasks", "Tasks: what am I looking at?"),
    "Shared vs separate": ("shared_vs_separate", "Shared vs separate: what am I looking at?"),
    "Trees": ("trees", "Multi-task decision trees"),
    "Outliers & shared features": ("outliers", "Outliers & shared features (robust MTFL)"),
    "Task relationships (MTBoost)": ("mtboost", "Task relationships (MTBoost): what am I"),
    "Neighbourhoods (MT-KNN)": ("mtknn", "Heterogeneous neighbourhoods (MT-KNN / MT-KR)"),
    "Transfer (TL-TF)": ("transfer", "Transfer through task-level features"),
    "Compare": ("compare", "Compare methods"),
}
MODEL_PAGES = [title for title in PAGES if title not in ("Tasks", "Compare")]

#: The runner's status line: "Ready." or "<state> - step <n>".
STATUS = re.compile(r"^(Ready\.|(running|paused|done|failed) - step \d+)")
#: A model page is ready: its status line, or its note that the data do not suit it.
PAGE_READY = re.compile(STATUS.pattern + r"|works with \w+ data")

#: Whether BokehJS drew something: a canvas in some view's shadow root.
DRAWN_JS = """() => {
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.tagName === 'CANVAS' && el.width > 0) return true;
      if (el.shadowRoot && walk(el.shadowRoot)) return true;
    }
    return false;
  };
  return typeof Bokeh !== 'undefined' && Bokeh.documents.length > 0 && walk(document);
}"""


#: What the main area's layout hook (components.ShownPageLayout) reported: "applied", or
#: the BokehJS internal it missed (explorer/_compat.py).
LAYOUT_HOOK_JS = """() => {
  for (const doc of Bokeh.documents) for (const model of doc._all_models.values())
    if (model.data != null && model.data.hook !== undefined) return model.data.hook;
  return null;
}"""


#: The shown page asks for its layout five times in one task (as the properties of one
#: message do): how many layouts of the document ran before the task ended, and after.
#: The hook (explorer/_compat.py) makes it [0, 1]; BokehJS alone lays out at each ask.
LAYOUTS_OF_ONE_TASK_JS = """async () => {
  const main = Bokeh.index.all_views().find((view) => view.__explorer_scoped);
  const shown = main.child_views.find((view) =>
    (view.model.css_classes || []).includes("explorer-page")
    && getComputedStyle(view.el).contentVisibility !== "hidden");   // (shell.hidden_pages_rule)
  let layouts = 0;
  const counted = [];   // whichever view up the chain is the layout's root counts
  for (let view = shown; view != null; view = view.parent) {
    if (typeof view.compute_layout !== "function") continue;
    const own = view.compute_layout;
    view.compute_layout = function () { layouts += 1; return own.call(this); };
    counted.push(view);
  }
  try {
    for (let ask = 0; ask < 5; ask++) shown.invalidate_layout();
    const within = layouts;
    await new Promise((resolve) => setTimeout(resolve, 0));
    return [within, layouts];
  } finally {
    for (const view of counted) delete view.compute_layout;
  }
}"""


#: Tasks of the data the app opens on (the catalog's default task family).
OPENING_TASKS = len(CATALOG["task_family"].defaults()["relations"].split(",")) + 1


def summary(page):
    """The sidebar's one-line data summary ('Data: 4 tasks · ...')."""
    return page.locator("p", has_text="Data:").first


def wait_for_data(page, pattern: str) -> None:
    """Until the summary matches ``pattern`` and no new data are being built."""
    expect(summary(page)).to_contain_text(re.compile(pattern), timeout=60_000)
    expect(summary(page)).not_to_contain_text("building", timeout=60_000)


def show(page, title: str) -> None:
    slug, text = PAGES[title]
    page.get_by_role("button", name=title, exact=True).click()
    frame = shown_page(page, slug)
    frame.get_by_text(text).first.wait_for(state="visible", timeout=60_000)
    if title in MODEL_PAGES:
        frame.get_by_text(PAGE_READY).locator("visible=true").first.wait_for(timeout=60_000)


def shown_page(page, slug: str):
    return page.locator(f".explorer-page-{slug}")


def set_relations(page, relations: str, n_tasks: int) -> None:
    box = page.get_by_label("Relations to task 0")
    box.fill(relations)
    box.press("Enter")
    wait_for_data(page, rf"\b{n_tasks} tasks")


def move_slider(page, label: str, key: str, times: int = 1) -> None:
    """Move the sidebar's slider ``label`` by keyboard (each press is a user's release)."""
    slider = page.locator("div", has=page.get_by_text(re.compile(rf"^{label}: "))).filter(
        has=page.locator(".noUi-handle")).last
    handle = slider.locator(".noUi-handle")
    for _ in range(times):
        before = summary(page).inner_text()
        handle.focus()
        handle.press(key)
        expect(summary(page)).not_to_have_text(before, timeout=60_000)
        expect(summary(page)).not_to_contain_text("building", timeout=60_000)


def run_step_scrub_reset(page, title: str) -> None:
    """Drive the shown model page: Step, Run, another page during the run and back, Pause,
    Run to the end, scrub back, Reset."""
    frame = shown_page(page, PAGES[title][0])
    status = frame.locator("[role=status]")
    frame.get_by_role("combobox", name="Speed").select_option("5 steps/s")
    frame.get_by_role("button", name="Step").click()
    expect(status).to_have_text(re.compile(r"paused - step 1\b"))
    frame.get_by_role("button", name="▶ Run").click()
    expect(status).to_have_text(re.compile(r"running - step [2-9]\b"))
    show(page, "Tasks")                                   # away during the run
    show(page, title)                                     # and back
    frame.get_by_role("button", name="Pause").click()
    expect(status).to_have_text(re.compile(r"(paused|done) - step \d+"))
    frame.get_by_role("button", name="Fast").click()
    expect(status).to_have_text(re.compile(r"done - step \d+"), timeout=60_000)
    scrub = frame.locator("div", has=page.get_by_text("Recorded snapshot")).filter(
        has=page.locator(".noUi-handle")).last
    handle = scrub.locator(".noUi-handle")
    handle.focus()
    handle.press("ArrowLeft")                             # one recorded step back
    expect(status).to_contain_text("scrubbed back")
    frame.get_by_role("button", name="Reset").click()
    expect(status).to_have_text("Ready.")


def test_a_tour_of_the_app_leaves_the_console_clean(app_url, new_page, browser, watch_console,
                                                    tmp_path):
    page = new_page(PROJECTOR)
    page.goto(app_url)
    wait_for_data(page, rf"\b{OPENING_TASKS} tasks")
    page.get_by_text(PAGES["Tasks"][1]).first.wait_for()

    # every page once, the model pages left with views of the opening data's tasks
    for title in PAGES:
        show(page, title)
    # hidden pages are left out of the browser's layout passes: the hook found its internals
    page.wait_for_function(f"({LAYOUT_HOOK_JS})() !== ''")
    assert page.evaluate(LAYOUT_HOOK_JS) == "applied"
    # and what one message changes on the shown page is laid out once, after the message
    assert page.evaluate(LAYOUTS_OF_ONE_TASK_JS) == [0, 1]

    # a run on a model page, driven by every control, with a page switch in the middle
    show(page, "Shared vs separate")
    run_step_scrub_reset(page, "Shared vs separate")

    # the number of tasks and of features, several times, with built pages hidden and shown
    set_relations(page, "related", 2)
    show(page, "Outliers & shared features")
    set_relations(page, "related,negated,unrelated,related,negated", 6)
    move_slider(page, "Features", "ArrowRight")
    show(page, "Task relationships (MTBoost)")
    set_relations(page, "negated,unrelated", 3)
    show(page, "Tasks")

    # a CSV upload, pages on it, then back to a generator, whose tasks change again
    page.locator("input[type=file][accept='.csv,text/csv']").set_input_files(str(EXAMPLE_CSV))
    wait_for_data(page, r"\b3 tasks")
    show(page, "Transfer (TL-TF)")
    show(page, "Trees")
    page.get_by_role("combobox", name="Dataset").select_option(
        label=CATALOG["clustered_tasks"].label)
    wait_for_data(page, r"\b12 tasks")
    move_slider(page, "Tasks", "PageDown")
    show(page, "Shared vs separate")
    frame = shown_page(page, "shared_vs_separate")
    frame.get_by_role("combobox", name="Speed").select_option("unthrottled")
    frame.get_by_role("button", name="▶ Run").click()
    expect(frame.locator("[role=status]")).to_have_text(re.compile(r"done - step \d+"),
                                                        timeout=60_000)
    # the summary comes after "done" and moves the buttons under it: click once it is there
    frame.get_by_text(re.compile(r"^Fitted in \d+ steps")).first.wait_for(timeout=60_000)

    # the page's figures saved as one HTML file, opened with no network at all
    with page.expect_download() as download:
        frame.get_by_role("button", name="Figures (HTML)").click()
    saved = tmp_path / "figures.html"
    download.value.save_as(saved)
    offline = browser.new_context(viewport=PROJECTOR, offline=True)
    try:
        offline.route(re.compile(r"^(?!file:).*"), lambda route: route.abort())
        viewer = watch_console(offline.new_page())
        viewer.goto(saved.as_uri())
        viewer.wait_for_function(DRAWN_JS)
    finally:
        offline.close()
