"""Nothing overlaps: on every page, at 1366 x 768, 1024 x 768 and 1920 x 1080, after a run,
with Show code open and a matrix of one's own uploaded, no two visible figures, text lines or
controls are drawn over each other, every button in view takes its own clicks, and nothing
sticks out past the window's right edge, from the top of the page to its bottom.

What is measured is what a person sees (:mod:`tests.ui.layout_probe`): the boxes of the
page's visible leaves, inside shadow roots, clipped by their scrolling ancestors. A page is
run once and then looked at in each window size (a resized window lays the page out again,
as a teacher's projector does).

``MTL_SCREENSHOTS=<dir>`` also saves every screen looked at there.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import expect

from explorer.app.pages import PAGES
from explorer.app.state import ExplorerState
from tests.ui.layout_probe import (
    BLOCKED_JS,
    CUT_OFF_JS,
    LEAVES_JS,
    SCROLL_JS,
    describe,
    overlaps,
)

pytestmark = pytest.mark.ui

WINDOWS = [{"width": 1366, "height": 768}, {"width": 1024, "height": 768},
           {"width": 1920, "height": 1080}]
SCREENSHOTS = os.environ.get("MTL_SCREENSHOTS")
MODEL_PAGES = {page.slug: page for page in PAGES if hasattr(page, "scenario")}
#: every page, on the data that suit it (a model page on its scenario), and Outliers on School
VISITS = ([("tasks", ""), ("compare", "")]
          + [(slug, MODEL_PAGES[slug].scenario) for slug in sorted(MODEL_PAGES)]
          + [("outliers", "school_outliers")])


def _look(page, name: str) -> list[str]:
    """Scroll the page from its top to its bottom; return what overlaps, is cut off or takes
    another button's clicks, on each screen."""
    problems: list[str] = []
    page.evaluate(SCROLL_JS, -100_000)
    for screen in range(40):
        page.wait_for_timeout(150)   # the scroll's repaint (not a wait for the app)
        pairs = overlaps(page.evaluate(LEAVES_JS))
        if pairs:
            problems.append(f"{name}, screen {screen}: {len(pairs)} overlapping pairs\n"
                            + describe(pairs[:8]))
        blocked = page.evaluate(BLOCKED_JS)
        if blocked:
            problems.append(f"{name}, screen {screen}: another box takes the clicks of "
                            f"{blocked}")
        if SCREENSHOTS:
            Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(SCREENSHOTS) / f"layout-{name}-{screen}.png"))
        if not page.evaluate(SCROLL_JS, page.viewport_size["height"] - 150):
            break
    cut = page.evaluate(CUT_OFF_JS)
    if cut > 1:
        problems.append(f"{name}: the page reaches {cut} px past the window's right edge")
    return problems


def _upload_a_matrix(page, n_tasks: int, tmp_path: Path) -> None:
    """Open "Your own matrix beside the truth" and upload an n x n matrix."""
    page.get_by_text("Your own matrix beside the truth").first.click()
    mine = tmp_path / "mine.csv"
    matrix = np.eye(n_tasks) + 0.5 * (1 - np.eye(n_tasks))
    mine.write_text("\n".join(",".join(f"{v:.2f}" for v in row) for row in matrix))
    page.locator("input[type=file][accept='.csv,.npy']").set_input_files(str(mine))
    # (on data without a truth it stands alone: "Your matrix (no truth to compare with here)")
    expect(page.get_by_role("img", name=re.compile(r"^Your matrix")).first).to_be_visible(
        timeout=30_000)


@pytest.mark.parametrize(("slug", "scenario"), VISITS,
                         ids=[f"{slug}-{scenario or 'opening'}" for slug, scenario in VISITS])
def test_nothing_overlaps_at_any_window_size(app_url, new_page, tmp_path, slug, scenario):
    page = new_page(WINDOWS[0])
    query = f"?page={slug}" + (f"&scenario={scenario}" if scenario else "")
    page.goto(app_url + query)
    problems: list[str] = []
    if slug in MODEL_PAGES:
        page.get_by_text("Ready.").first.wait_for(timeout=90_000)
        page.get_by_role("button", name="Fast").click()
        page.get_by_text(re.compile(r"done - step \d+")).first.wait_for(timeout=180_000)
        page.get_by_text(re.compile(r"^Fitted in \d+ steps")).first.wait_for(timeout=60_000)
        # Show code must take its click like any button (once it did not: a figure lay over it)
        page.get_by_role("button", name="Show code").click(timeout=10_000)
        expect(page.get_by_text("train, test = dataset.split(").first).to_be_visible()
        state = ExplorerState()
        state.apply_preset(scenario)
        _upload_a_matrix(page, state.train.n_tasks, tmp_path)
    elif slug == "compare":
        page.get_by_role("button", name=re.compile("Run comparison")).first.wait_for(
            timeout=60_000)
    else:
        page.get_by_role("img").first.wait_for(timeout=60_000)
    for window in WINDOWS:
        page.set_viewport_size(window)
        problems += _look(page, f"{slug}-{scenario or 'opening'}-{window['width']}")
    assert not problems, "\n".join(problems)
