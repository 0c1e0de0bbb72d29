"""The app end to end in headless Chromium against one real ``panel serve apps/explorer.py``."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from explorer.app.state import UPLOAD_LIMIT_BYTES
from explorer.data.catalog import CATALOG
from tests.ui.conftest import FIGURES_THEMED_JS, ISOLATED_COMPONENTS_JS

pytestmark = pytest.mark.ui

#: Where the README's screenshot is written, only when asked (the tracked docs/screenshot.png
#: is not rewritten by a test run): ``MTL_SCREENSHOT=docs/screenshot.png``.
SCREENSHOT = os.environ.get("MTL_SCREENSHOT")


def open_app(page, url: str):
    page.goto(url)
    summary(page).wait_for()
    return page


def summary(page):
    """The sidebar's one-line data summary ('Data: 3 tasks · 40 per task · ...')."""
    return page.locator("p", has_text="Data:").first


def current_url(page) -> str:
    # what the user copies from the address bar (the app rewrites it with history.pushState)
    return page.evaluate("window.location.href")


def choose_dataset(page, name: str) -> None:
    page.get_by_role("combobox", name="Dataset").select_option(label=CATALOG[name].label)


def test_page_opens_titled(app_url, page):
    scripts: list[str] = []
    page.on("request", lambda request: scripts.append(request.url)
            if request.resource_type == "script" else None)
    open_app(page, app_url)
    assert page.title() == "MTL Explorer"
    # the app has no formula: no 1.8 MB MathJax bundle (_compat.mathjax_sent_only_for_math)
    assert any("bokeh.min.js" in url for url in scripts), scripts
    assert not any("bokeh-mathjax" in url for url in scripts), scripts
    assert page.get_by_text("MTL Explorer").first.is_visible()
    assert re.search(r"\d+ tasks", summary(page).inner_text())


#: Fingerprint of what the browser draws: for every glyph renderer currently shown, the sum
#: of one column of its data source (``x`` for scatters, ``image`` for heatmaps), sorted.
FINGERPRINT_JS = """(column) => {
  const out = [];
  for (const view of Bokeh.index.all_views()) {
    const source = view.model.data_source;
    if (source == null || view.model.glyph == null) continue;
    // the data drawn, not the values written in a heatmap's cells (a heatmap of a hidden
    // kind of truth keeps its last ones)
    if (view.model.glyph.constructor.__name__ === "Text") continue;
    const data = source.data;
    const values = data instanceof Map ? data.get(column) : data[column];
    if (values == null) continue;
    let total = 0;
    for (const v of values) {
      // exact zeros of a heatmap travel as NaN (painted grey): they add nothing
      if (typeof v === "number") total += v;
      else for (const w of v) if (!Number.isNaN(w)) total += w;
    }
    out.push(Math.round(total * 1e6) / 1e6);
  }
  return out.sort();
}"""


def fingerprint(page, column: str = "x") -> list[float]:
    return page.evaluate(FINGERPRINT_JS, column)


def changed_fingerprint(page, previous, column: str = "x", timeout_s: float = 15.0):
    """The fingerprint once it differs from ``previous`` (the status text and the plots
    arrive in separate messages); the unchanged one after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        current = fingerprint(page, column)
        if current != previous or time.monotonic() > deadline:
            return current
        page.wait_for_timeout(100)


def test_changing_the_generator_changes_the_tasks_page(app_url, page):
    open_app(page, app_url)
    before_summary, before_points = summary(page).inner_text(), fingerprint(page)
    page.get_by_text("+1 related, -1 negated, 0 unrelated").first.wait_for()
    choose_dataset(page, "outlier_tasks")
    page.get_by_text("1 marks a task that does not share").first.wait_for()
    page.wait_for_function("(s) => !document.body.innerText.includes(s)",
                           arg="+1 related, -1 negated, 0 unrelated")
    assert summary(page).inner_text() != before_summary
    assert "regression" in summary(page).inner_text()
    assert fingerprint(page) != before_points


def test_copied_link_reproduces_the_data(app_url, new_page):
    sender = open_app(new_page(), app_url)
    default_points = fingerprint(sender)
    choose_dataset(sender, "outlier_tasks")
    sender.get_by_text("1 marks a task that does not share").first.wait_for()
    for label, value in (("Data seed", "17"), ("Init seed", "5")):
        box = sender.get_by_label(label)
        box.fill(value)
        box.press("Enter")
    sender.wait_for_function("() => window.location.search.includes('init_seed=5')")
    sender.wait_for_function("() => window.location.search.includes('data_seed=17')")
    link = current_url(sender)
    assert "data=outlier_tasks" in link

    receiver = open_app(new_page(), link)     # a fresh context: nothing shared but the link
    receiver.get_by_text("1 marks a task that does not share").first.wait_for()
    assert summary(receiver).inner_text() == summary(sender).inner_text()
    assert receiver.get_by_label("Data seed").input_value() == "17"
    assert receiver.get_by_label("Init seed").input_value() == "5"
    received_points = fingerprint(receiver)
    assert received_points == fingerprint(sender)   # the same points are drawn
    assert received_points != default_points


def toast(page, text: str):
    return page.locator(".notyf__message", has_text=text).first


def test_bad_values_show_a_message_and_the_app_keeps_working(app_url, page):
    # a tampered link: the bad values are named, the rest of the page works
    open_app(page, app_url + "?data_seed=-4&page=%3Cscript%3E&d.no_such_param=1")
    toast(page, "could not be used").wait_for()
    message = toast(page, "could not be used").inner_text()
    assert "data_seed" in message and "no_such_param" in message
    # a malformed upload: an error toast, the previous data stays
    before = summary(page).inner_text()
    page.locator("input[type=file][accept='.csv,text/csv']").set_input_files(files=[{
        "name": "broken.csv", "mimeType": "text/csv", "buffer": b"a,b\n1,2\n"}])
    toast(page, "broken.csv").wait_for()
    assert "task" in toast(page, "broken.csv").inner_text()
    assert summary(page).inner_text() == before
    # a bad value typed into a generator parameter: named in a message, the data stays
    relations = page.get_by_label("Relations to task 0")
    relations.fill("related,siblings")
    relations.press("Enter")
    toast(page, "siblings").wait_for()
    assert "relations" in toast(page, "siblings").inner_text()
    # back to the value in force
    expect(relations).to_have_value(CATALOG["task_family"].defaults()["relations"])
    assert summary(page).inner_text() == before
    # and the app still answers
    box = page.get_by_label("Data seed")
    box.fill("3")
    box.press("Enter")
    page.wait_for_function("() => window.location.search.includes('data_seed=3')")
    # each refusal was said once (the toasts of errors stay 12 s)
    assert page.locator(".notyf__message", has_text="siblings").count() == 1
    assert page.locator(".notyf__message", has_text="broken.csv").count() == 1


def test_trees_page_grows_node_by_node(app_url, new_page):
    # a projector's screen: the tree and the per-task errors on it, the rest below the fold
    page = new_page({"width": 1366, "height": 768})
    open_app(page, app_url + "?page=trees&data=local_relatedness")
    page.get_by_text("Multi-task decision trees").first.wait_for()
    page.get_by_text("Ready.").first.wait_for()
    drawn = [fingerprint(page)]
    for n_nodes in (1, 2, 3):
        page.get_by_role("button", name="Step").click()
        page.get_by_text(re.compile(rf"paused - step {n_nodes}\b")).first.wait_for()
        drawn.append(changed_fingerprint(page, drawn[-1]))
    assert all(a != b for a, b in zip(drawn, drawn[1:], strict=False))  # every step redraws
    # Run grows the rest of the tree and compares with one tree per task; Reset empties it.
    page.get_by_role("combobox", name="Speed").select_option("unthrottled")
    page.get_by_role("button", name="▶ Run").click()
    page.get_by_text("Mean test error").first.wait_for(timeout=30_000)
    assert "single-task" in page.get_by_text("Mean test error").first.inner_text()
    # the browser reports the figures below the fold out of sight (their views skip the
    # frames of a run, and draw its end); the tree on screen is not among them
    page.wait_for_function(PACER_JS + "()?.offscreen.length > 0")
    pacer = page.evaluate(PACER_JS + "()")
    assert pacer["watched"][0] not in pacer["offscreen"]
    assert set(pacer["offscreen"]) < set(pacer["watched"])
    # the browser fits the tree to its column at one scale for boxes and labels: the whole
    # tree in the frame, labels at 13 px times that scale (never below 12 px), legends for
    # tasks and classes
    page.wait_for_function(TREE_FIT_JS + "() !== null")
    fit = page.evaluate(TREE_FIT_JS + "()")
    scale = fit["width"] / fit["span"]
    assert 12 / 13 - 1e-9 <= scale <= 1.25 + 1e-9
    assert fit["font"] == pytest.approx(13 * scale, abs=0.02) and fit["font"] >= 12 - 0.01
    assert fit["start"] <= fit["lo"] and fit["hi"] <= fit["start"] + fit["span"]
    assert fit["frame_height"] >= fit["height"] * scale - 1
    assert fit["legends"] == [["Tasks:", *TASKS_2], ["Classes (bars):", "0", "1", "2", "3"]]
    page.get_by_role("button", name="Reset").click()
    page.get_by_text("Ready.").first.wait_for()


def test_a_tree_wider_than_the_page_opens_on_its_root(app_url, new_page):
    """A tree too wide for the frame at the smallest readable scale is panned: the view
    opens on its root (above the middle of the tree), not on its left edge, where the top of
    the drawing was empty on a projector (100 tasks, depth 8: ~230 nodes)."""
    page = new_page({"width": 1366, "height": 768})
    open_app(page, app_url + "?page=trees&data=clustered_tasks&d.n_tasks=100"
             "&d.n_features=200&d.n_samples_per_task=100&trees.max_depth=8")
    page.get_by_text("Ready.").first.wait_for(timeout=60_000)
    page.get_by_role("combobox", name="Speed").select_option("unthrottled")
    page.get_by_role("button", name="▶ Run").click()
    page.get_by_text("Mean test error").first.wait_for(timeout=60_000)
    page.wait_for_function(TREE_FIT_JS + "() !== null")
    fit = page.evaluate(TREE_FIT_JS + "()")
    assert fit["span"] < fit["hi"] - fit["lo"]             # panned
    assert fit["start"] > fit["lo"]                         # not the left edge
    assert fit["start"] < fit["root"] < fit["start"] + fit["span"]
    assert abs(fit["root"] - (fit["start"] + fit["span"] / 2)) <= 1  # centred on it


TASKS_2 = ["T0 4 classes", "T1 2 classes"]
PACER_JS = """(() => {
  for (const doc of Bokeh.documents) for (const model of doc._all_models.values()) {
    const data = model.data
    if (data != null && data.offscreen !== undefined && data.watched !== undefined)
      return {watched: [...data.watched], offscreen: [...data.offscreen]}
  }
  return null
})"""
TREE_FIT_JS = """(() => {
  for (const view of Bokeh.index.all_views()) {
    const fig = view.model
    if (!fig.title?.text?.startsWith?.("MT-DT (")) continue
    const glyphs = fig.renderers.map((r) => r.glyph)
    const text = glyphs.find((g) => g.type == "Text" && g.y.field == "ty")
    const extent = fig.renderers.find((r) => r.data_source?.data?.lo != null).data_source
    if (fig.inner_width == null || text.text_font_size.value == "13px") return null
    return {width: fig.inner_width, span: fig.x_range.end - fig.x_range.start,
            start: fig.x_range.start, lo: extent.data.lo[0], hi: extent.data.hi[0],
            height: extent.data.height[0], root: extent.data.root[0],
            frame_height: fig.frame_height,
            font: parseFloat(text.text_font_size.value),
            legends: fig.above.filter((a) => a.type == "Legend").map(
              (l) => l.items.map((i) => i.label.value)).reverse()}
  }
  return null
})"""


def test_shared_vs_separate_runs_live_and_compares(app_url, page):
    open_app(page, app_url + "?page=shared_vs_separate")
    page.get_by_text("Shared vs separate: what am I looking at?").first.wait_for()
    page.get_by_text("Ready.").first.wait_for()
    before = fingerprint(page, "image")
    page.get_by_role("combobox", name="Speed").select_option("30 steps/s")
    page.get_by_role("button", name="▶ Run").click()
    page.get_by_text("Mean test error").first.wait_for(timeout=60_000)
    note = page.get_by_text("Mean test error").first.inner_text()
    shared, separate = (float(v) for v in re.findall(r"(\d\.\d{3})", note)[:2])
    assert 0.0 <= shared <= 1.0 and 0.0 <= separate <= 1.0
    assert changed_fingerprint(page, before, "image") != before  # the similarity was drawn
    page.get_by_text(re.compile(r"done - step \d+")).first.wait_for()
    if SCREENSHOT:
        page.screenshot(path=SCREENSHOT)
    # Reset, Run and Pause in turn while frames flow: every click is answered. (A click that
    # Panel ran outside Bokeh's document lock once left the status line at "done" for good;
    # that needs a change from the browser pending at the click, which this cannot force:
    # bench_app's pause tries met it, see offload.batched_callback.)
    status = page.get_by_text(re.compile(r"^(Ready\.|(running|paused|done) - step \d+)"))
    page.get_by_role("combobox", name="Speed").select_option("unthrottled")
    for _ in range(4):
        page.get_by_role("button", name="Reset").click()
        expect(status.first).to_have_text("Ready.")
        page.get_by_role("button", name="▶ Run").click()
        expect(status.first).to_have_text(re.compile(r"(running|done) - step \d+"))
        page.get_by_role("button", name="Pause").click()
        expect(status.first).to_have_text(re.compile(r"(paused|done) - step \d+"))


def test_outliers_page_runs_and_a_lambda_slider_refits(app_url, page):
    open_app(page, app_url + "?page=outliers&data=outlier_tasks")
    page.get_by_text("Outliers & shared features (robust MTFL)").first.wait_for()
    page.get_by_text("Ready.").first.wait_for()
    before = fingerprint(page, "image")
    page.get_by_role("combobox", name="Speed").select_option("unthrottled")
    page.get_by_role("button", name="▶ Run").click()
    page.get_by_text("Test nMSE").first.wait_for(timeout=60_000)
    assert changed_fingerprint(page, before, "image") != before   # P, Q, W were drawn
    scores = fingerprint(page, "score")
    assert any(s > 0 for s in scores)                       # some task was called an outlier
    assert "F1 against the truth" in page.get_by_text("Test nMSE").first.inner_text()
    # lambda_columns to its largest value: the slider refits (warm) and no task stays an outlier
    # (the label with its value: the Sweep section's Setting menu names the slider too)
    label = page.get_by_text(re.compile(r"^Outlier tasks: lambda_columns / max: "))
    slider = page.locator("div", has=label).filter(
        has=page.locator(".noUi-handle")).last       # the innermost box with label and slider
    handle = slider.locator(".noUi-handle")
    handle.focus()
    handle.press("End")
    page.get_by_text("Detected outlier tasks: none").first.wait_for(timeout=60_000)
    assert all(s == 0 for s in changed_fingerprint(page, scores, "score"))
    page.wait_for_function("() => window.location.search.includes('outliers.columns=1.0')")


PAYLOAD = "<img src=x onerror=\"window.__xss=(window.__xss||0)+1\">"


def test_a_script_payload_in_any_link_key_runs_nothing(app_url, page):
    from urllib.parse import quote

    keys = ["data", "page", "data_seed", "init_seed", "train", "d.relations", "d.n_features",
            "trees.criterion", "trees.max_depth", "outliers.rows", PAYLOAD]
    query = "&".join(f"{quote(k)}={quote(PAYLOAD)}" for k in keys)
    open_app(page, app_url + "?" + query)
    toast(page, "could not be used").wait_for()
    message = toast(page, "could not be used").inner_text()
    assert "<img" in message                    # shown as text, not as markup
    for key in ("data_seed", "init_seed", "trees.max_depth"):
        assert key in message
    # a typed payload and an uploaded file name are shown as text too
    relations = page.get_by_label("Relations to task 0")
    relations.fill(PAYLOAD)
    relations.press("Enter")
    toast(page, "relations must be").wait_for()
    page.locator("input[type=file][accept='.csv,text/csv']").set_input_files(files=[{
        "name": PAYLOAD + ".csv", "mimeType": "text/csv", "buffer": b"a,b\n1,2\n"}])
    toast(page, "task").last.wait_for()
    assert page.evaluate("() => window.__xss === undefined")
    assert page.locator("img[src=x]").count() == 0


def test_an_out_of_bounds_link_value_is_refused_and_not_kept(app_url, page):
    open_app(page, app_url + "?page=trees&data=local_relatedness&trees.max_depth=1000"
             "&trees.criterion=evil&d.n_samples_per_task=7")
    toast(page, "could not be used").wait_for()
    message = toast(page, "could not be used").inner_text()
    assert "trees.max_depth must be an integer in [1, 8]; got '1000'" in message
    assert "trees.criterion must be one of" in message and "n_samples_per_task" in message
    page.wait_for_function("() => window.location.search.includes('trees.max_depth=4')")
    query = parse_qs(urlsplit(current_url(page)).query)
    assert query["trees.max_depth"] == ["4"] and query["trees.criterion"] == ["ig_m"]
    assert query["d.n_samples_per_task"] == ["200"]


def _csv_of_size(n_bytes: int) -> bytes:
    """Two tasks, 20 features (so 10 MB stays inside the data-set budget), ``n_bytes`` long
    give or take one row."""
    header = ("task,y," + ",".join(f"x{j}" for j in range(20)) + "\n").encode()
    values = ",".join(f"{0.001 * j:.6f}" for j in range(20)).encode()
    row = b"0,1.5," + values + b"\n1,2.5," + values + b"\n"
    return header + row * ((n_bytes - len(header)) // len(row))


def test_uploads_just_under_and_over_the_limit_and_an_empty_file(app_url, page):
    open_app(page, app_url)
    before = summary(page).inner_text()
    big = _csv_of_size(UPLOAD_LIMIT_BYTES + 1000)
    page.locator("input[type=file][accept='.csv,text/csv']").set_input_files(files=[{
        "name": "too_big.csv", "mimeType": "text/csv", "buffer": big}])
    toast(page, "too_big.csv").wait_for()
    assert "It was not sent" in toast(page, "too_big.csv").inner_text()
    assert summary(page).inner_text() == before
    page.locator("input[type=file][accept='.csv,text/csv']").set_input_files(files=[{
        "name": "empty.csv", "mimeType": "text/csv", "buffer": b""}])
    toast(page, "empty.csv").wait_for()
    assert "empty" in toast(page, "empty.csv").inner_text()
    under = _csv_of_size(UPLOAD_LIMIT_BYTES - 1000)
    assert len(under) <= UPLOAD_LIMIT_BYTES
    page.locator("input[type=file][accept='.csv,text/csv']").set_input_files(files=[{
        "name": "just_under.csv", "mimeType": "text/csv", "buffer": under}])
    toast(page, "Loaded 'just_under.csv'").wait_for(timeout=60_000)
    # the summary sits in a shadow root (document.body.innerText does not see it): wait on
    # the summary itself, the data are built off the event loop after the file is read
    expect(summary(page)).to_contain_text("2 tasks", timeout=60_000)
    assert summary(page).inner_text() != before
    # the session is alive: the app still answers
    box = page.get_by_label("Data seed")
    box.fill("3")
    box.press("Enter")
    page.wait_for_function("() => window.location.search.includes('data_seed=3')")


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def test_a_closed_tab_stops_its_paused_fit(app_server, browser):
    url, process = app_server
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    open_app(page, url + "?page=outliers&data=outlier_tasks")
    page.get_by_text("Ready.").first.wait_for()
    before = _threads(process.pid)
    page.get_by_role("button", name="Step").click()
    page.get_by_text(re.compile(r"paused - step 1\b")).first.wait_for()
    assert _threads(process.pid) >= before + 1          # the parked worker
    context.close()                                     # the tab goes away
    deadline = time.monotonic() + 30
    while _threads(process.pid) > before and time.monotonic() < deadline:
        time.sleep(0.2)                                 # bounded polling of the server
    assert _threads(process.pid) <= before


RATIO = r"2nd/1st: (\d+(?:\.\d+)?(?:e[+-]?\d+)?)"


def test_mtboost_page_switches_between_the_paper_and_the_corrected_variant(app_url, page):
    # a link sets the printed updates at a small lambda: Omega collapses to rank 1
    open_app(page, app_url + "?page=mtboost&mtboost.variant=paper&mtboost.lam=0.003")
    page.get_by_text("Task relationships (MTBoost): what am I").first.wait_for()
    page.get_by_text("Ready.").first.wait_for()
    before = fingerprint(page, "image")
    page.get_by_role("combobox", name="Speed").select_option("unthrottled")
    page.get_by_role("button", name="▶ Run").click()
    note = page.get_by_text("eigenvalue ratio").first
    note.wait_for(timeout=60_000)
    ratio = float(re.search(RATIO, note.inner_text()).group(1))
    assert ratio < 1e-3
    assert changed_fingerprint(page, before, "image") != before   # the heatmaps were drawn
    # the switch: same data, same seed, the corrected updates
    page.get_by_role("combobox", name="Variant", exact=True).select_option("corrected")
    page.get_by_text("Ready.").first.wait_for()
    page.get_by_role("button", name="▶ Run").click()
    page.get_by_text("step: armijo").first.wait_for(timeout=60_000)
    note = page.get_by_text("eigenvalue ratio").first
    assert float(re.search(RATIO, note.inner_text()).group(1)) > 1e-2
    assert "The loss rose in 0 of" in note.inner_text()


def test_transfer_page_runs_moves_the_gate_and_reruns_after_reset(app_url, page):
    open_app(page, app_url + "?page=transfer&data=clustered_tasks&d.n_tasks=20&d.n_features=2")
    page.get_by_text("Transfer through task-level features").first.wait_for()
    page.get_by_role("combobox", name="Speed").select_option("unthrottled")
    run = page.get_by_role("button", name="▶ Run")
    run.click()
    page.get_by_text("Zero-shot on held-out tasks").first.wait_for(timeout=60_000)
    page.wait_for_function(      # Figure 1 drawn (its title is on the canvas, not in the DOM)
        """() => [...Bokeh.index.all_views()].some(v => v.model.title != null &&
             String(v.model.title.text).startsWith('Mean AP on held-out tasks vs H'))""",
        timeout=60_000)
    assert "adjusted Rand index" in page.get_by_text("Clusters against the truth").first \
        .inner_text()
    gate = fingerprint(page, "image")          # p_h sums to 1: the zero-shot image moves
    slider = page.locator("div", has=page.get_by_text("task feature t0")).filter(
        has=page.locator(".noUi-handle")).last
    handle = slider.locator(".noUi-handle")
    handle.focus()
    handle.press("Home")                       # a new task's feature moved: p_h follows
    assert changed_fingerprint(page, gate, "image") != gate
    page.get_by_role("button", name="Reset").click()
    page.get_by_text("Run the fit, then move").first.wait_for(timeout=20_000)
    run.click()                                 # the page still runs after a reset
    page.get_by_text("Zero-shot on held-out tasks").first.wait_for(timeout=60_000)


#: Marks (or reads the mark of) the first canvas drawn in a page's frame: the same element
#: after a switch away and back means the page's Bokeh views were kept, not re-created.
CANVAS_MARK_JS = """([slug, set]) => {
  const find = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.classList && el.classList.contains('explorer-page-' + slug)) return el;
      if (el.shadowRoot) { const hit = find(el.shadowRoot); if (hit) return hit; }
    }
    return null;
  };
  const canvas = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.tagName === 'CANVAS') return el;
      if (el.shadowRoot) { const hit = canvas(el.shadowRoot); if (hit) return hit; }
    }
    return null;
  };
  const frame = find(document);
  const el = frame && canvas(frame.shadowRoot || frame);
  if (el == null) return null;
  if (set) el.__explorer_mark = 'kept';
  return el.__explorer_mark ?? 'new';
}"""


#: The main area's BokehJS view: the pages its layout passes include and, with ``relayout``,
#: whether laying the whole main area out again moves any box of the shown page (it must
#: not: the page is laid out for the window as it is; see ``components.ShownPageLayout``).
LAYOUT_SCOPE_JS = """(relayout) => {
  const slugOf = (view) => (view.model.css_classes || [])
    .find((name) => name.startsWith('explorer-page-'));
  const main = [...Bokeh.index.all_views()]
    .find((view) => Array.isArray(view.child_views) && view.child_views.some(slugOf));
  const boxes = () => {
    const out = [];
    const walk = (view) => {
      const { x, y, width, height } = view.bbox ?? {};
      out.push([x, y, width, height].map(Math.round).join());
      if (Array.isArray(view.child_views)) for (const child of view.child_views) walk(child);
    };
    for (const view of main.layoutable_views) walk(view);
    return out.join(';');
  };
  const before = boxes();
  if (relayout) main.invalidate_layout();
  return {laid_out: main.layoutable_views.map(slugOf).filter((slug) => slug),
          moved: before !== boxes()};
}"""


def test_switching_back_to_a_built_page_keeps_its_drawn_figures(app_url, page):
    open_app(page, app_url)
    page.get_by_text("+1 related, -1 negated, 0 unrelated").first.wait_for()
    assert page.evaluate(CANVAS_MARK_JS, ["tasks", True]) == "kept"
    page.get_by_role("button", name="Trees").click()
    page.get_by_text("Multi-task decision trees").first.wait_for(state="visible")
    page.get_by_text("Ready.").first.wait_for()
    tasks_text = page.get_by_text("+1 related, -1 negated, 0 unrelated").first
    expect(tasks_text).to_be_hidden()
    # the hidden Tasks page is left out of the browser's layout passes
    assert page.evaluate(LAYOUT_SCOPE_JS, False)["laid_out"] == ["explorer-page-trees"]
    page.get_by_role("button", name="Tasks").click()
    expect(tasks_text).to_be_visible()
    expect(page.get_by_text("Multi-task decision trees").first).to_be_hidden()
    # the Tasks page was drawn before: the same canvas, not a rebuilt view
    assert page.evaluate(CANVAS_MARK_JS, ["tasks", False]) == "kept"
    assert page.evaluate(LAYOUT_SCOPE_JS, False)["laid_out"] == ["explorer-page-tasks"]
    # a narrower window while Trees is hidden: shown again, Trees is laid out for it
    page.set_viewport_size({"width": 1000, "height": 768})
    page.get_by_role("button", name="Trees").click()
    expect(page.get_by_text("Multi-task decision trees").first).to_be_visible()
    page.get_by_text("Ready.").first.wait_for()
    assert page.evaluate(LAYOUT_SCOPE_JS, True) == {"laid_out": ["explorer-page-trees"],
                                                    "moved": False}


#: Per drawn figure: does its shadow root hold the template's theme (bootstrap.css)?



def test_a_model_page_sends_its_figures_below_the_fold_next_and_all_themed(app_url, page):
    # The first figure comes with the page, the others in the next message; those are
    # added to a FlexBox, whose new children Panel does not style by itself: unstyled,
    # the next page switch restyled them all (measured: ~0.4 s of the browser).
    # 6 figures: W beside the true W, the scores, P, Q, the objective; the per-task errors
    # join with the first fit's (your own matrix beside the truth is drawn on the first
    # upload: test_one_screen.py). The page itself is built after the sidebar was drawn.
    open_app(page, app_url + "?page=outliers&data=outlier_tasks")
    for expected in (6, 7):
        page.wait_for_function(f"() => ({FIGURES_THEMED_JS})().length >= {expected}",
                               timeout=30_000)
        try:
            page.wait_for_function(f"() => ({FIGURES_THEMED_JS})().every((themed) => themed)",
                                   timeout=10_000)
        except Exception:  # noqa: BLE001 -- the assertion below says which figures
            pass
        assert page.evaluate(FIGURES_THEMED_JS) == [True] * expected
        if expected == 6:
            page.get_by_role("combobox", name="Speed").select_option("unthrottled")
            page.get_by_role("button", name="▶ Run").click()


def test_sessions_opened_together_get_their_pages_themed_and_working(app_url, page, new_page):
    """A class opening the link together: the second session, asked for while the first was
    being built, gets its sidebar first and its page once its browser has drawn it, in turn
    (tests/test_cli.py checks the order on the wire). Both pages come themed, without a
    console error, and run."""
    other = new_page()
    url = app_url + "?page=outliers&data=outlier_tasks"
    page.goto(url, wait_until="commit")
    other.goto(url, wait_until="commit")
    for opened in (page, other):
        opened.wait_for_function(f"() => ({FIGURES_THEMED_JS})().length >= 6", timeout=30_000)
        try:
            opened.wait_for_function(
                f"() => ({FIGURES_THEMED_JS})().every((themed) => themed)", timeout=10_000)
        except Exception:  # noqa: BLE001 -- the assertion below says which figures
            pass
        assert opened.evaluate(FIGURES_THEMED_JS) == [True] * 6
        # the page built after the sidebar was drawn is themed like a page built with it:
        # no component carries the whole of Bootstrap in its own shadow root (those slowed
        # every frame of a run by 3x the browser's style recalculation)
        assert opened.evaluate(ISOLATED_COMPONENTS_JS) == []
    other.get_by_role("combobox", name="Speed").select_option("unthrottled")
    other.get_by_role("button", name="▶ Run").click()
    other.get_by_text("Test nMSE").first.wait_for(timeout=60_000)
    # a page built on its first visit, in a callback of the session, likewise
    other.get_by_role("button", name="Trees").click()
    other.get_by_role("heading", name=re.compile("^Multi-task decision trees")).first.wait_for()
    assert other.evaluate(ISOLATED_COMPONENTS_JS) == []


def test_the_tasks_page_draws_its_late_figures_in_the_theme_too(app_url, page):
    # The tasks' scatters come with the page, the truth's heatmaps (relation, similarity,
    # coefficients) in the next message: made in a session callback, they once went out
    # unthemed (components made there carry the session's design, which Panel's theme hook
    # skips).
    open_app(page, app_url + "?page=tasks")
    page.wait_for_function(f"() => ({FIGURES_THEMED_JS})().length >= 4", timeout=30_000)
    try:
        page.wait_for_function(f"() => ({FIGURES_THEMED_JS})().every((themed) => themed)",
                               timeout=10_000)
    except Exception:  # noqa: BLE001 -- the assertion below says which figures
        pass
    themed = page.evaluate(FIGURES_THEMED_JS)
    assert len(themed) == 4 and all(themed), themed


def test_compare_page_runs_downloads_shows_code_and_cancels(app_url, page, new_page):
    open_app(page, app_url + "?page=compare&compare.n_trials=3")
    page.get_by_text("Compare methods").first.wait_for()
    page.get_by_role("button", name="▶ Run comparison").click()
    page.get_by_text(re.compile(r"Done: 4 methods × 3 trials")).first.wait_for(timeout=90_000)
    table = page.locator("table.mtl-compare")
    expect(table).to_be_visible()
    assert "average" in table.inner_text() and "MT-KNN" in table.inner_text()
    with page.expect_download() as download:
        page.get_by_role("button", name="Download CSV").click()
    lines = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("method,trial,task,metric,value")
    n_tasks = len(CATALOG["task_family"].defaults()["relations"].split(",")) + 1
    assert len(lines) == 1 + 4 * 3 * (n_tasks + 1)    # methods x trials x (tasks + average)
    with page.expect_download() as download:
        page.get_by_role("button", name="Download report").click()
    report = Path(download.value.path()).read_text(encoding="utf-8")
    assert report.startswith("<!DOCTYPE html>") and "truth: task_relation" in report
    page.get_by_role("button", name="Show code").click()
    expect(page.get_by_text("result = compare(estimators,")).to_be_visible()
    # a long comparison: another session stays usable meanwhile, and Cancel stops it
    # (about 80 s of fits on 2 workers: 1000 noisy examples a task, 200 boosting rounds; the
    # defaults' 250 fits could all end while the other session opened, and Cancel then waited)
    open_app(page, app_url + "?page=compare&compare.n_trials=50&compare.mt_adaboost=true"
             "&compare.n_rounds=200&d.n_samples_per_task=1000&d.n_features=10&d.noise=1")
    page.get_by_role("button", name="▶ Run comparison").click()
    page.get_by_text(re.compile(r"Running … \d+ of 250 fits")).first.wait_for(timeout=60_000)
    other = open_app(new_page(), app_url)
    expect(summary(other)).to_contain_text("tasks")
    page.get_by_role("button", name="Cancel").click()
    # Cancel takes at once in the page; the fits already on the workers are drained after
    # it (test_compare_page checks the cancelled run's end and its message in process)
    # (the drain can be quick: "Cancelling" may already have become "Cancelled after")
    page.get_by_text(re.compile(r"Cancell(ing|ed after)")).first.wait_for()
    expect(page.get_by_role("button", name="Cancel")).to_be_disabled()
    page.get_by_text(re.compile(r"Cancelled after \d+ of 250 fits")).first.wait_for(
        timeout=90_000)
    expect(page.get_by_role("button", name="▶ Run comparison")).to_be_enabled()


@pytest.mark.parametrize(("slug", "baseline"), [
    ("shared_vs_separate", "separate"), ("trees", "single-task"), ("mtboost", "AnyBoost"),
    ("mtknn", "per-task")])
def test_on_the_opening_data_the_model_beats_its_single_task_baseline(app_url, new_page, slug,
                                                                      baseline):
    """The data the app opens on, at the seed a newcomer sees, show the point: after a fit
    (Fast) the summary reads "Mean test error ...: model X, <baseline> Y" with X < Y."""
    page = open_app(new_page({"width": 1366, "height": 768}), app_url + f"?page={slug}")
    page.get_by_text("Ready.").first.wait_for()
    page.get_by_role("button", name="Fast").click()
    expect(page.get_by_role("combobox", name="Speed")).to_have_value("unthrottled")
    page.get_by_text(re.compile(r"^Fitted in \d+ steps")).first.wait_for(timeout=120_000)
    note = page.get_by_text(re.compile(r"^Fitted in \d+ steps")).first.inner_text()
    found = re.search(rf"Mean test error \([^)]*\): model (\d\.\d{{3}}), {re.escape(baseline)} "
                      r"(\d\.\d{3})", note)
    assert found, note
    model, single = (float(v) for v in found.groups())
    assert model < single, note


def test_fast_on_a_fresh_page_starts_the_fit(app_url, page):
    open_app(page, app_url + "?page=mtknn")
    page.get_by_text("Ready.").first.wait_for()
    page.get_by_role("button", name="Fast").click()
    expect(page.get_by_role("status").filter(has_text=re.compile(r"running|done"))
           .first).to_be_visible(timeout=2_000)


def test_a_scenario_chosen_after_its_page_sets_the_slider_the_fit_uses(app_url, page):
    """Shared vs separate first, then the scenario "When sharing hurts" (coupling 10): the
    slider reads 10, as the link and the fit do (it read 0.1)."""
    open_app(page, app_url + "?page=shared_vs_separate")
    page.get_by_text("Ready.").first.wait_for()
    coupling = r"Coupling \(pull towards shared\): "
    expect(page.get_by_text(re.compile(coupling + r"0\.1(?![\d.])")).first).to_be_visible()
    page.get_by_role("combobox", name="Scenario").select_option(label="When sharing hurts")
    page.wait_for_function("() => window.location.search.includes('coupling=10')")
    expect(page.get_by_text(re.compile(coupling + r"10(\.0)?(?![\d.])")).first).to_be_visible()


def test_compare_shows_its_average_column_without_scrolling_sideways(app_url, new_page):
    """At 1366 x 768 with the sidebar open, the table's average column lies inside the
    window (the seven tasks of the opening data follow it)."""
    page = open_app(new_page({"width": 1366, "height": 768}),
                    app_url + "?page=compare&compare.n_trials=3")
    page.get_by_role("button", name="▶ Run comparison").click()
    page.get_by_text(re.compile(r"Done: 4 methods × 3 trials")).first.wait_for(timeout=90_000)
    expect(page.get_by_text(re.compile(r"Best on average: "))).to_have_count(1)
    heading = page.locator("table.mtl-compare th.average")
    expect(heading).to_have_text("average")
    for cell in (heading, page.locator("table.mtl-compare td.average").last):
        box = cell.bounding_box()
        assert box is not None and 0 <= box["x"] and box["x"] + box["width"] <= 1366, box
    expect(page.locator("p.mtl-caption")).to_contain_text("clearly the best")


def test_a_checkbox_label_ticks_it_and_run_after_done_starts_again(app_url, page):
    open_app(page, app_url + "?page=compare")
    page.get_by_text("Compare methods").first.wait_for()
    box = page.get_by_role("checkbox", name="MT-AdaBoost")   # named by its label's text
    expect(box).not_to_be_checked()
    page.get_by_text("MT-AdaBoost", exact=True).click()
    expect(box).to_be_checked()
    page.wait_for_function("() => window.location.search.includes('compare.mt_adaboost=true')")

    open_app(page, app_url + "?page=shared_vs_separate")
    page.get_by_text("Ready.").first.wait_for()
    status = page.get_by_text(re.compile(r"^(Ready\.|(running|paused|done) - step \d+)")).first
    page.get_by_role("combobox", name="Speed").select_option("unthrottled")
    page.get_by_role("button", name="▶ Run").click()
    expect(status).to_have_text(re.compile(r"done - step \d+"), timeout=60_000)
    last = int(re.search(r"step (\d+)", status.inner_text()).group(1))
    page.get_by_role("combobox", name="Speed").select_option("2 steps/s")
    page.get_by_role("button", name="▶ Run").click()   # after "done": from the start again
    expect(status).to_have_text(re.compile(r"running - step [1-5]\b"))
    assert last > 5


def test_figures_are_found_by_their_accessible_names(app_url, page):
    open_app(page, app_url + "?page=outliers&data=outlier_tasks")
    expect(page.get_by_role("img", name="W = P + Q (estimate)")).to_be_visible()
    expect(page.get_by_role("img", name="True W")).to_be_visible()
    open_app(page, app_url + "?page=shared_vs_separate")
    estimate = page.get_by_role("img", name="Learned similarity", exact=True)
    truth = page.get_by_label("True cosine of the weights")
    expect(estimate).to_be_visible()
    expect(truth).to_be_visible()
    assert truth.get_attribute("role") == "img"
    open_app(page, app_url + "?page=tasks")
    expect(page.get_by_role("img", name=re.compile(r"^(True|Truth)\b")).first).to_be_visible()


def _rgb_hex(css: str) -> str:
    """'rgb(138, 75, 0)' -> '#8a4b00'."""
    return "#" + "".join(f"{int(v):02x}" for v in re.findall(r"\d+", css)[:3])


def test_a_warning_toast_is_readable(app_url, page):
    """WCAG AA: the toast's text against its background at least 4.5:1."""
    from explorer.app.serving import TOAST_BACKGROUNDS, contrast_ratio

    open_app(page, app_url + "?page=trees&trees.max_depth=1000")
    message = toast(page, "could not be used")
    message.wait_for()
    text, background = message.evaluate(
        "m => [getComputedStyle(m).color, getComputedStyle("
        "m.closest('.notyf__toast').querySelector('.notyf__ripple')).backgroundColor]")
    assert _rgb_hex(background) == TOAST_BACKGROUNDS["warning"]   # the colour drawn under it
    assert contrast_ratio(_rgb_hex(text), _rgb_hex(background)) >= 4.5, (text, background)


@pytest.mark.parametrize("slug, name, title", [
    ("outliers", "outlier_tasks", "Outlier tasks in high dimension"),
    ("transfer", "new_task_from_task_features", "A new task from its task features")])
def test_a_page_on_the_opening_data_offers_its_scenario_in_one_click(app_url, page, slug, name,
                                                                     title):
    open_app(page, app_url + f"?page={slug}")
    button = page.get_by_role("button", name=f"Load the scenario “{title}”")
    expect(button).to_be_visible()
    expect(page.get_by_text("one click loads it").first).to_be_visible()
    button.click()
    page.wait_for_function("() => window.location.search.includes('data=')")
    expect(button).to_be_hidden(timeout=30_000)   # the scenario's data are built first
    expect(page.get_by_role("button", name="▶ Run")).to_be_visible()
    page.get_by_text("Ready.").first.wait_for()


def test_the_school_scenario_runs_its_page_to_the_end(app_url, page):
    """Real data (139 tasks): the scenario opens the Outliers page on School, the fit runs to
    the end at full speed and the per-task errors read as a distribution (the conftest fails
    the test on any console error)."""
    open_app(page, app_url + "?scenario=school_outliers")
    page.get_by_text("Outliers & shared features (robust MTFL)").first.wait_for()
    page.get_by_text("Exam scores of 139 schools").first.wait_for()
    page.get_by_text("Ready.").first.wait_for(timeout=60_000)
    page.get_by_role("button", name="Fast").click()
    page.get_by_text(re.compile(r"done - step \d+")).first.wait_for(timeout=120_000)
    page.get_by_text("Test nMSE").first.wait_for(timeout=60_000)   # the page's details
    headline = page.get_by_text(re.compile(r"^Fitted in \d+ steps")).first.inner_text()
    assert "worst for the model: school" in headline
    assert re.search(r"better than lasso on \d+ of 139 \(", headline), headline


PACER_STEPS_JS = """async () => {
  // the component's parameters: the data model Panel makes for FramePacer
  const data = [...Bokeh.documents[0].all_models].find(
      (m) => m.type && m.type.startsWith("FramePacer"));
  const n = data.frame;
  const nextPaint = () => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
  await nextPaint();                 // frame n is on screen
  data.frame = n + 1;                // frame n + 1 arrives
  const atArrival = data.drawn;      // answered at once: the frame before it is painted
  data.frame = n + 2;                // n + 2 arrives before n + 1 was painted
  const beforePaint = data.drawn;    // not answered yet
  await nextPaint();
  await nextPaint();
  return {n, atArrival, beforePaint, afterPaint: data.drawn};
}"""


def test_a_frame_is_answered_when_it_arrives_if_the_one_before_is_painted(app_url, page):
    """The browser's answer to a live frame (``FramePacer``): at arrival when the frame before
    it is on screen, so the server makes and sends the next while this one is painted; held
    while the frame before is not painted yet, so the browser never has two frames it has
    not painted. Played on the real component in Chromium by setting ``frame`` as the
    server does, on an idle page (no run: the server's pump ignores the answers)."""
    open_app(page, app_url + "?page=outliers&data=outlier_tasks")
    page.get_by_text("Ready.").first.wait_for()
    steps = page.evaluate(PACER_STEPS_JS)
    n = steps["n"]
    assert steps["atArrival"] == n + 1, steps
    assert steps["beforePaint"] == n + 1, steps
    assert steps["afterPaint"] == n + 2, steps
