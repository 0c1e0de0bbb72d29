"""The sweep section in headless Chromium against a real ``panel serve apps/explorer.py``: on
the Outliers page with the outlier_tasks scenario, a sweep of the outlier-task penalty is
cancelled, run again, and a click on one of its points moves the slider and starts a fit."""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.ui

#: Where the section's screenshot goes, only when asked: ``MTL_SWEEP_SCREENSHOT=path.png``.
SCREENSHOT = os.environ.get("MTL_SWEEP_SCREENSHOT")

#: Where point ``index`` of the curve of ``column`` in the figure named ``name`` is on the
#: page (CSS px from the viewport's corner), from BokehJS's own scales; its x and y too.
POINT_JS = """([name, column, index]) => {
  for (const view of Bokeh.index.all_views()) {
    const attributes = view.model.html_attributes;
    if (view.frame == null || attributes == null || attributes["aria-label"] !== name)
      continue;
    const dots = view.model.renderers.find((r) => r.glyph != null && r.glyph.y != null
      && r.glyph.y.field === column && r.glyph.size != null);
    const data = dots.data_source.data;
    const x = data.x[index], y = data[column][index];
    const box = view.el.getBoundingClientRect();
    return {x, y, px: box.left + view.frame.x_scale.compute(x),
            py: box.top + view.frame.y_scale.compute(y)};
  }
  return null;
}"""


def slider_handle(page, label: str):
    """The handle of the slider whose label starts with ``label``."""
    box = page.locator("div", has=page.get_by_text(re.compile("^" + re.escape(label)))).filter(
        has=page.locator(".noUi-handle")).last      # the innermost box with label and slider
    return box.locator(".noUi-handle")


def set_slider(page, label: str, value: int, start: int) -> None:
    """Move an integer slider that starts at ``start`` to ``value`` with the keyboard."""
    handle = slider_handle(page, label)
    handle.focus()
    handle.press("Home")
    for _ in range(value - start):
        handle.press("ArrowRight")
    expect(page.get_by_text(re.compile("^" + re.escape(label) + rf": {value}$")).first
           ).to_be_visible()


def test_a_sweep_runs_cancels_reruns_and_a_click_on_a_point_refits(app_url, new_page):
    page = new_page({"width": 1366, "height": 768})
    page.goto(app_url + "?page=outliers&scenario=outlier_tasks")
    page.get_by_text("Ready.").first.wait_for(timeout=30_000)
    page.get_by_text("Sweep: the fit against one setting").first.click()
    page.get_by_role("combobox", name="Setting").select_option(
        label="Outlier tasks: lambda_columns / max")
    # a long one (40 values x 10 trials x 4 fits, and the baselines), cancelled
    set_slider(page, "Values", 40, 3)
    set_slider(page, "Trials (random splits)", 10, 1)
    run, cancel = (page.get_by_role("button", name=n) for n in ("▶ Run sweep", "Cancel"))
    run.click()
    page.get_by_text(re.compile(r"^Running … \d+ of 1610 fits done")).first.wait_for()
    cancel.click()
    page.get_by_text(re.compile(r"^Cancelled after \d+ of 1610 fits\.$")).first.wait_for()
    expect(cancel).to_be_disabled()
    expect(run).to_be_enabled()
    # run again at the defaults: 8 values x 3 trials
    set_slider(page, "Values", 8, 3)
    set_slider(page, "Trials (random splits)", 3, 1)
    run.click()
    page.get_by_text(re.compile(r"^Done: .* 8 values × 3 trials \(99 fits\)")).first.wait_for(
        timeout=60_000)
    caption = page.get_by_text(re.compile("^Lines: ")).first
    expect(caption).to_contain_text("cross-validation's choice")
    expect(caption).to_contain_text("closest to the truth")
    structure = page.get_by_role("img", name="Structure found")
    for name in ("Test error (band: ±1 sd over the trials)", "Learned W against the truth"):
        expect(page.get_by_role("img", name=name)).to_be_visible()
    structure.scroll_into_view_if_needed()
    if SCREENSHOT:
        page.get_by_role("img", name="Test error (band: ±1 sd over the trials)"
                         ).scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOT)
        structure.scroll_into_view_if_needed()
    # click the outlier recall at the seventh value (0.373 of lambda_max; the slider: 0.2)
    point = page.evaluate(POINT_JS, ["Structure found", "outlier_recall", 6])
    assert point is not None and point["x"] == pytest.approx(0.373)
    page.mouse.click(point["px"], point["py"])
    label = r"Outlier tasks: lambda_columns / max: "
    expect(page.get_by_text(re.compile(label + r"0\.373(?![\d])")).first).to_be_visible()
    page.wait_for_function("() => window.location.search.includes('outliers.columns=0.373')")
    expect(page.get_by_role("status").filter(has_text=re.compile(r"running|done")).first
           ).to_be_visible(timeout=10_000)
