"""A class in headless Chromium against one real ``panel serve apps/explorer.py --num-procs 2``
whose processes share one store of classes (``MTL_CLASS_DB``, issue 41): the teacher opens a
class on "A negated task" (Shared vs separate), three students (fresh browser contexts, one
nicknamed ``<b>x</b>``) click their guesses and lock them, the teacher's page counts 3 and
shows the class's mean guess beside the truth and the nickname as text, the teacher reveals,
and each student's page shows their guess, the truth, the model's estimate and the class's
mean guess, each with its agreement (the time the reveal took is printed: 2.0-3.0 s here).
Which process a page, its websocket or a student reaches is the kernel's choice: the store
is the only state the processes share. Every session after a process's first opens as when
a class opens the link at once (``MTL_TOGETHER_S``): its first document, then its sidebar
and page in turns. No console error and no request to a CDN (the fixtures fail the test on
any failed request; here every request is checked too): a session made from its token on
the other process than its page's once linked Panel's style sheets to the CDN.

``MTL_CLASS_SCREENSHOTS=<folder>`` saves the teacher's view and a student's reveal at
1366 x 768 there.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from tests.ui.conftest import ROOT, _free_port, serving

pytestmark = pytest.mark.ui

PROJECTOR = {"width": 1366, "height": 768}
#: How long a student's page may take to show the reveal before the test fails: a hang, not
#: a speed (the issue asks for 5 s; this test measured 2.0-2.7 s for the three students with
#: their four browsers and the two server processes on 2 cores, and prints it each run).
REVEAL_WAIT_MS = 15_000
SHOTS = os.environ.get("MTL_CLASS_SCREENSHOTS")

#: Where cell (i, j) of the guess grid named ``name`` is on the page (CSS px), from
#: BokehJS's own scales (categorical axes: factor k sits at k + 0.5; rows top to bottom).
CELL_JS = """([name, i, j]) => {
  for (const view of Bokeh.index.all_views()) {
    const attributes = view.model.html_attributes;
    if (view.frame == null || attributes == null || attributes["aria-label"] !== name)
      continue;
    const m = view.model.x_range.factors.length;
    const box = view.el.getBoundingClientRect();
    return {px: box.left + view.frame.x_scale.compute(j + 0.5),
            py: box.top + view.frame.y_scale.compute(m - 1 - i + 0.5)};
  }
  return null;
}"""

#: The symbol cell (i, j) of the grid named ``name`` shows now ("+", "−", "0", "?").
SYMBOL_JS = """([name, i, j]) => {
  for (const view of Bokeh.index.all_views()) {
    const attributes = view.model.html_attributes;
    if (attributes == null || attributes["aria-label"] !== name || view.frame == null)
      continue;
    const m = view.model.x_range.factors.length;
    const source = view.model.renderers[0].data_source;
    return source.data.symbol[i * m + j];
  }
  return null;
}"""


@pytest.fixture(scope="module")
def class_server(tmp_path_factory):
    """The URL of a ``panel serve --num-procs 2`` whose processes share one temporary store
    of classes (``MTL_CLASS_DB``)."""
    store = tmp_path_factory.mktemp("classes") / "classes.sqlite"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1", "MTL_CLASS_DB": str(store),
           # a class opens its link together: every session after a process's first opens
           # in turns (its sidebar and page after its first document), however quick the
           # machine (joined late, a student's page once never came that way)
           "MTL_TOGETHER_S": "600"}
    port = _free_port()
    cmd = [sys.executable, "-m", "panel", "serve", "apps/explorer.py", "--warm",
           "--num-procs", "2", "--port", str(port),
           f"--allow-websocket-origin=localhost:{port}",
           "--check-unused-sessions", "500", "--unused-session-lifetime", "15000"]
    with serving(cmd, cwd=ROOT, env=env, port=port) as (url, _):
        yield url


def click_cell(page, i: int, j: int, symbol: str) -> None:
    """Click pair (i, j) of the student's grid and wait for the server's answer. A click
    that landed while the page was still laying itself out (the cell moved between reading
    its place and the click) changes nothing: it is clicked again, never twice for one
    change (the pair must still show what it showed before)."""
    args = ["Your guess", i, j]
    page.wait_for_function(f"() => ({CELL_JS})({args!r}) !== null")
    before = page.evaluate(SYMBOL_JS, args)
    for _ in range(3):
        cell = page.evaluate(CELL_JS, args)
        page.mouse.click(cell["px"], cell["py"])
        try:
            page.wait_for_function(f"() => ({SYMBOL_JS})({args!r}) !== {before!r}",
                                   timeout=5_000)
            break
        except PlaywrightTimeout:
            continue
    assert page.evaluate(SYMBOL_JS, args) == symbol, (i, j, symbol)


def shown(page):
    """The class's page (Shared vs separate) in ``page``: a student's session opened on the
    Tasks page, whose guess block (hidden now) shows the same reveal."""
    return page.locator(".explorer-page-shared_vs_separate")


def no_cdn(page, seen: list[str]):
    """Record every request of ``page`` that leaves this machine's server."""
    page.on("request", lambda request: seen.append(request.url)
            if not request.url.startswith(("http://localhost", "data:", "blob:")) else None)
    return page


def test_a_class_of_three_on_two_processes_locks_and_sees_the_reveal(class_server, new_page):
    started = time.monotonic()
    outside: list[str] = []
    teacher = no_cdn(new_page(PROJECTOR), outside)
    teacher.goto(class_server + "?scenario=negated_task")
    teacher.get_by_role("button", name="Open a class").first.click()
    expect(teacher.get_by_text(re.compile(r"^0 locked"))).to_be_visible(timeout=30_000)
    link = teacher.get_by_role("textbox", name="Student link (share it)").input_value()
    assert re.fullmatch(r"http://localhost:\d+/explorer\?class=[2-9A-HJ-NP-Z]{8}", link), link
    assert "key=" in teacher.get_by_role("textbox", name=re.compile("^Teacher link")
                                         ).input_value()

    # Three tasks, the truth: 0 and 1 related, 2 negated to both.
    students = []
    for nickname, pairs in (("alice", [(0, 2, "+"), (0, 1, "+"), (0, 2, "−")]),
                            ("<b>x</b>", [(0, 1, "+"), (1, 2, "+")]),
                            ("", [(0, 2, "+")])):
        page = no_cdn(new_page(PROJECTOR), outside)
        page.goto(link)
        grid = page.get_by_role("img", name="Your guess")
        grid.scroll_into_view_if_needed(timeout=30_000)
        grid.evaluate("el => el.scrollIntoView({block: 'center'})")   # every cell in view
        if nickname:
            page.get_by_role("textbox", name="Nickname (optional)").fill(nickname)
            page.get_by_role("textbox", name="Nickname (optional)").press("Tab")
        for i, j, symbol in pairs:
            click_cell(page, i, j, symbol)
        page.get_by_role("button", name="Lock my guess").click()
        # the store has it (or said why not), then the page says so
        status = shown(page).get_by_text(
            re.compile(r"^(Locked at \d\d:\d\d:\d\d as |Not locked)"))
        expect(status).to_be_visible(timeout=15_000)
        assert status.inner_text().startswith("Locked at"), status.inner_text()
        expect(status).to_contain_text(f"as {nickname or 'anonymous'}:")   # markup as text
        expect(page.get_by_role("button", name="Show the truth")).to_be_disabled()
        # then they see what the model learns (the reveal would start it: covered by
        # tests/test_classroom_app.py)
        page.get_by_role("button", name="Fast").click()
        expect(shown(page).get_by_text(re.compile(r"^done - step \d+"))).to_be_visible(
            timeout=30_000)
        students.append(page)

    expect(teacher.get_by_text(re.compile(r"^3 locked"))).to_be_visible(timeout=10_000)
    names = teacher.get_by_text(re.compile(r"^Locked: "))
    expect(names).to_contain_text("alice, <b>x</b>")          # escaped, not bold
    expect(teacher.get_by_role("img", name="The class's mean guess")).to_be_visible()
    expect(teacher.get_by_role("img", name="True relation")).to_be_visible()
    expect(teacher.get_by_text("The pairs the class got most wrong")).to_be_visible()
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        teacher.get_by_text(re.compile(r"^3 locked")).scroll_into_view_if_needed()
        teacher.screenshot(path=str(Path(SHOTS) / "teacher.png"))

    teacher.get_by_role("button", name="Reveal to the class").click()
    revealed = time.monotonic()
    for page in students:
        for text in (r"^Your guess against the truth", r"^The model against the truth",
                     r"^The mean of the 3 guesses locked in the class"):
            # (the Tasks page a student's session opened on, hidden now, shows it too)
            expect(shown(page).get_by_text(re.compile(text))).to_be_visible(
                timeout=REVEAL_WAIT_MS)
        for name in ("Your locked guess", "The class's mean guess", "True relation"):
            expect(shown(page).get_by_role("img", name=name)).to_be_visible()
        # the whole reveal, not half of it (a server error once stopped it after the guess
        # block: the sidebar still said the truth was hidden and the estimate went blank)
        expect(page.get_by_role("checkbox", name="Hide the truth")).not_to_be_checked()
        expect(shown(page).get_by_role("img", name="Learned similarity")).to_be_visible()
    took = time.monotonic() - revealed   # printed, not asserted: a speed is a measurement
    expect(shown(students[1]).get_by_text(re.compile(r"as related; they are negated"))
           ).to_be_visible()
    if SHOTS:
        shown(students[0]).get_by_role("img", name="Your locked guess"
                                       ).scroll_into_view_if_needed()
        students[0].screenshot(path=str(Path(SHOTS) / "student_reveal.png"))
    expect(teacher.get_by_text("revealed", exact=True)).to_be_visible()
    assert not outside, f"requests left this machine: {outside[:5]}"
    print(f"class test: {time.monotonic() - started:.1f} s, reveal reached the three students "
          f"in {took:.1f} s")
