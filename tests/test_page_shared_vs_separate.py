"""The "Shared vs separate" page without a browser: fit, render, finish, reset."""

from __future__ import annotations

import numpy as np

from explorer.app.pages import PAGES
from explorer.app.state import ExplorerState


def test_page_runs_to_the_end_and_compares():
    state = ExplorerState()
    page = next(p for p in PAGES if p.slug == "shared_vs_separate").build(state)
    runner = page.runner
    runner._speed.value = "unthrottled"
    runner.session.run()
    assert runner.session.wait(60)
    runner.poll()
    assert runner.session.state == "done", runner.session.error
    m = state.train.n_tasks
    assert page.similarity.shape == (m, m)
    assert np.allclose(np.diag(page.similarity.values), 1.0)
    assert len(page.curve.source.data["x"]) >= 1
    values = np.array(page.bars.source.data["value"])
    assert values.shape == (2 * m,) and np.all((values >= 0) & (values <= 1))
    assert "shared" in page._note.object
    page.lambda1.value = 1.0  # a hyper-parameter change resets the run
    assert runner.session.state == "idle" and page.curve.source.data["x"] == []
