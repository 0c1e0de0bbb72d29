"""The Compare page in process: a method whose fit fails is named (escaped) with its reason
and the table of the others is shown; the run is not lost."""

from __future__ import annotations

import explorer.app.pages.compare as compare_page
from explorer.models import MultiTaskRidge
from tests.test_compare_page import make_page


def test_a_failing_method_is_named_and_the_others_are_tabled(monkeypatch):
    chosen = compare_page.chosen_estimators

    def with_a_broken_one(*args, **kwargs):
        # a negative penalty is refused when its fit starts
        return {**chosen(*args, **kwargs), "<i>broken</i>": MultiTaskRidge(lambda_ridge=-1.0)}

    monkeypatch.setattr(compare_page, "chosen_estimators", with_a_broken_one)
    page = make_page(dataset_name="outlier_tasks")
    page.settings.param.update(n_trials=2)
    page.run()
    result = page.result
    assert result is not None and not page.running
    assert "<i>broken</i>" not in result.methods and len(result.methods) >= 1
    assert list(result.failures) == ["<i>broken</i>"]
    status = page.status.object
    assert status.startswith(f"Done: {len(result.methods)} methods × 2 trials")
    assert "Left out, its fit failed: **&lt;i&gt;broken&lt;/i&gt;**" in status
    assert "<i>" not in status and "lambda_ridge" in status
    assert "<table" in page.results.table.object
    assert "broken" not in page.results.table.object
