"""MT-KR on School (139 tasks) from the Neighbourhoods page: the default solver ("auto")
solves W matrix-free, the fit runs to the end and the summary reads (the conftest fails the
test on any console error)."""

from __future__ import annotations

import re

import pytest

from tests.ui.test_app import open_app

pytestmark = pytest.mark.ui


def test_mt_kr_on_school_runs_to_the_end(app_url, page):
    open_app(page, app_url + "?page=mtknn&data=school")
    page.get_by_text("Heterogeneous neighbourhoods (MT-KNN / MT-KR)").first.wait_for()
    page.get_by_text("Ready.").first.wait_for(timeout=60_000)
    page.get_by_role("button", name="Fast").click()
    page.get_by_text(re.compile(r"done - step \d+")).first.wait_for(timeout=240_000)
    result = page.get_by_text("Fitted in").first
    result.wait_for(timeout=60_000)
    assert re.search(r"better than per-task on \d+ of 139 \(", result.inner_text())
    assert page.get_by_text("failed").count() == 0
