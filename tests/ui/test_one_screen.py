"""One screen tells the story: at a 1366 x 768 projector, after a run, every model page shows
its estimate beside its truth (found by their accessible names) inside the first 768 px,
side by side in one row, with the agreement between them written under the pair.

``MTL_SCREENSHOTS=<dir>`` also saves each page's screen there (for a person to look at).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from explorer.app.pages import PAGES
from tests.ui.conftest import FIGURES_THEMED_JS

pytestmark = pytest.mark.ui

PROJECTOR = {"width": 1366, "height": 768}
SCREENSHOTS = os.environ.get("MTL_SCREENSHOTS")

#: page -> (the estimate's accessible name, its truth's; for the tree page the per-task
#: errors kept in view beside the tree).
STORY = {
    "shared_vs_separate": ("Learned similarity", "True cosine of the weights"),
    "trees": (re.compile(r"^MT-DT \(IG_M\): \d+ nodes$"), "Per-task test error"),
    "outliers": ("W = P + Q (estimate)", "True W"),
    "mtboost": ("Learned task correlation", "True relation (+1, -1, 0)"),
    "mtknn": ("Learned W (row / diagonal)", "True task relation"),
    "transfer": ("phi: q(cluster) per task", "True clusters"),
}
MODEL_PAGES = {page.slug: page for page in PAGES if hasattr(page, "scenario")}


def test_every_model_page_is_in_the_table():
    assert set(STORY) == set(MODEL_PAGES)


def _box(page, name) -> dict:
    figure = page.get_by_role("img", name=name, exact=True)
    expect(figure).to_have_count(1)
    expect(figure).to_be_visible()
    return figure.bounding_box()


@pytest.mark.parametrize("slug", sorted(STORY))
def test_the_estimate_and_its_truth_share_the_first_screen(app_url, new_page, slug):
    page = new_page(PROJECTOR)
    scenario = MODEL_PAGES[slug].scenario
    page.goto(f"{app_url}?page={slug}&scenario={scenario}")
    page.get_by_text("Ready.").first.wait_for(timeout=60_000)
    page.get_by_role("button", name="Fast").click()
    page.get_by_text(re.compile(r"done - step \d+")).first.wait_for(timeout=120_000)
    page.get_by_text(re.compile(r"^Fitted in \d+ steps")).first.wait_for(timeout=60_000)
    estimate_name, truth_name = STORY[slug]
    estimate, truth = _box(page, estimate_name), _box(page, truth_name)
    for name, box in ((estimate_name, estimate), (truth_name, truth)):
        # a tree grows as deep as it is (a deep one scrolls): its top levels are in view
        height = min(box["height"], 250) if slug == "trees" and box is estimate else (
            box["height"])
        assert box["y"] >= 0 and box["y"] + height <= PROJECTOR["height"], (name, box)
        assert box["x"] >= 0 and box["x"] + box["width"] <= PROJECTOR["width"], (name, box)
    # side by side in one row: they overlap vertically, one to the left of the other
    assert estimate["y"] < truth["y"] + truth["height"] and truth["y"] < (
        estimate["y"] + estimate["height"]), (estimate, truth)
    assert (estimate["x"] + estimate["width"] <= truth["x"] + 1
            or truth["x"] + truth["width"] <= estimate["x"] + 1), (estimate, truth)
    if slug != "trees":   # a matrix beside its truth says how close it comes
        caption = page.get_by_text("Agreement with the truth").first
        expect(caption).to_be_visible()
        assert re.search(r"rank correlation \d\.\d\d", caption.locator("..").inner_text())
        assert caption.bounding_box()["y"] < PROJECTOR["height"]
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{slug}.png"))


def test_a_matrix_of_your_own_is_drawn_beside_the_truth(app_url, page, tmp_path):
    """The section under every model page: a CSV of the user's, read and judged."""
    page.goto(f"{app_url}?page=mtknn&scenario=neighbours_from_other_tasks")
    page.get_by_text("Ready.").first.wait_for(timeout=60_000)
    page.get_by_text("Your own matrix beside the truth").first.click()
    relation = [[1, 1, -1], [1, 1, -1], [-1, -1, 1]]   # the scenario's three tasks
    mine = tmp_path / "mine.csv"
    mine.write_text("\n".join(",".join(str(0.5 * v) for v in row) for row in relation))
    page.locator("input[type=file][accept='.csv,.npy']").set_input_files(str(mine))
    expect(page.get_by_role("img", name="Your matrix", exact=True)).to_be_visible()
    expect(page.get_by_role("img", name="True task_relation", exact=True)).to_be_visible()
    expect(page.get_by_text("rank correlation 1.00").first).to_be_visible()
    # the pair is made on this first upload, and drawn in the template's theme all the same
    page.wait_for_function(f"() => ({FIGURES_THEMED_JS})().every((themed) => themed)")
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("1,0\n0,1\n")
    page.locator("input[type=file][accept='.csv,.npy']").set_input_files(str(wrong))
    expect(page.get_by_text("a 3 x 3 matrix (tasks x tasks of the current data) expected")
           .first).to_be_visible()
