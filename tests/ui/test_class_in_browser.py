"""A class in headless Chromium against two real ``panel serve apps/explorer.py`` servers that
share one store of classes (``MTL_CLASS_DB``, issue 41): the teacher opens a class on the
first, two students (fresh browser contexts, one on each server; one nicknamed ``<b>x</b>``)
click their guesses and lock them, the teacher's page counts 2 and shows the nickname as
text, the teacher reveals, and both students' pages show their guess, the truth and the
agreement within seconds: the store is the only state the servers share. No console error
(the fixtures fail the test on any).

Two servers rather than ``--num-procs 2``: with ``--num-procs`` a session whose websocket
reaches the other process than its page's request gets Panel's style sheets from the CDN
(requests that fail offline), whatever the page; seen on the opening page too.

``MTL_CLASS_SCREENSHOTS=<folder>`` saves the teacher's view and a student's reveal at
1366 x 768 there.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.ui.conftest import ROOT, _free_port, serving

pytestmark = pytest.mark.ui

PROJECTOR = {"width": 1366, "height": 768}
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
def class_servers(tmp_path_factory):
    """The URLs of two ``panel serve`` whose sessions share one temporary store of classes
    (``MTL_CLASS_DB``), started together."""
    store = tmp_path_factory.mktemp("classes") / "classes.sqlite"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1", "MTL_CLASS_DB": str(store)}
    with contextlib.ExitStack() as stack:
        urls = []
        for _ in range(2):
            port = _free_port()
            cmd = [sys.executable, "-m", "panel", "serve", "apps/explorer.py", "--warm",
                   "--port", str(port), f"--allow-websocket-origin=localhost:{port}",
                   "--check-unused-sessions", "500", "--unused-session-lifetime", "15000"]
            urls.append(stack.enter_context(serving(cmd, cwd=ROOT, env=env, port=port))[0])
        yield urls


def click_cell(page, i: int, j: int, symbol: str) -> None:
    """Click pair (i, j) of the student's grid and wait for the server's answer."""
    args = ["Your guess", i, j]
    page.wait_for_function(f"() => ({CELL_JS})({args!r}) !== null")
    cell = page.evaluate(CELL_JS, args)
    page.mouse.click(cell["px"], cell["py"])
    page.wait_for_function(f"() => ({SYMBOL_JS})({args!r}) === {symbol!r}")


def test_a_teacher_opens_a_class_two_students_lock_and_see_the_reveal(class_servers, new_page):
    started = time.monotonic()
    first, second = class_servers
    teacher = new_page(PROJECTOR)
    teacher.goto(first + "?page=class")
    teacher.get_by_role("button", name="Open a class").last.click()
    expect(teacher.get_by_text(re.compile(r"^0 locked"))).to_be_visible(timeout=30_000)
    student_link = teacher.get_by_role("textbox", name="Student link (share it)")
    link = student_link.input_value()
    assert re.fullmatch(r"http://localhost:\d+/explorer\?class=[2-9A-HJ-NP-Z]{8}", link), link
    assert "key=" in teacher.get_by_role("textbox", name=re.compile("^Teacher link")
                                         ).input_value()

    students = []
    for server, nickname, pairs in (
            (first, "alice", [(0, 1, "+"), (0, 3, "+")]),
            (second, "<b>x</b>", [(0, 1, "+"), (1, 2, "+"), (1, 2, "−")])):
        page = new_page(PROJECTOR)
        page.goto(link.replace(first, server))   # the other student on the other server
        grid = page.get_by_role("img", name="Your guess")
        grid.scroll_into_view_if_needed(timeout=30_000)
        page.get_by_role("textbox", name="Nickname (optional)").fill(nickname)
        page.get_by_role("textbox", name="Nickname (optional)").press("Tab")
        for i, j, symbol in pairs:
            click_cell(page, i, j, symbol)
        page.get_by_role("button", name="Lock my guess").click()
        # the store has it (or said why not), then the page says so
        status = page.get_by_text(re.compile(r"^(Locked at \d\d:\d\d:\d\d as |Not locked)"))
        expect(status).to_be_visible(timeout=15_000)
        assert status.inner_text().startswith("Locked at"), status.inner_text()
        expect(status).to_contain_text(f"as {nickname}:")      # the markup shown as text
        expect(page.get_by_role("button", name="Show the truth")).to_be_disabled()
        students.append(page)

    expect(teacher.get_by_text(re.compile(r"^2 locked"))).to_be_visible(timeout=10_000)
    names = teacher.get_by_text(re.compile(r"^Locked: "))
    expect(names).to_have_text("Locked: alice, <b>x</b>")          # escaped, not bold
    expect(teacher.get_by_role("img", name="The class's mean guess")).to_be_visible()
    expect(teacher.get_by_role("img", name="True relation")).to_be_visible()
    expect(teacher.get_by_text("The pairs the class got most wrong")).to_be_visible()
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        teacher.get_by_text(re.compile(r"^2 locked")).scroll_into_view_if_needed()
        teacher.screenshot(path=str(Path(SHOTS) / "teacher.png"))

    teacher.get_by_role("button", name="Reveal to the class").click()
    revealed = time.monotonic()
    for page in students:
        caption = page.get_by_text(re.compile(r"^Your guess against the truth"))
        expect(caption).to_be_visible(timeout=8_000)
        expect(page.get_by_role("img", name="Your locked guess")).to_be_visible()
        expect(page.get_by_role("img", name="True relation").first).to_be_visible()
    took = time.monotonic() - revealed
    assert took < 8, f"the reveal took {took:.1f} s to reach both students"
    expect(students[0].get_by_text(re.compile(r"as related; they are unrelated"))
           ).to_be_visible()
    if SHOTS:
        students[0].get_by_role("img", name="Your locked guess").scroll_into_view_if_needed()
        students[0].screenshot(path=str(Path(SHOTS) / "student_reveal.png"))
    expect(teacher.get_by_text("revealed", exact=True)).to_be_visible()
    print(f"class test: {time.monotonic() - started:.1f} s, reveal reached both students "
          f"in {took:.1f} s")
