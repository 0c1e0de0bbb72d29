"""Work off the event loop: the newest request wins, results are applied on the loop, and the
session's state and the Tasks page publish nothing until then (DESIGN.md: the loop only
dispatches)."""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import param

from explorer.app.offload import Offloader, after_this_paint
from explorer.app.state import ExplorerState
from explorer.data import make_task_family


class FakeLoop:
    """Stands in for the session's event loop: callbacks wait in a queue until ``run``."""

    def __init__(self):
        self.callbacks: queue.Queue = queue.Queue()
        self.thread_ids: list[int] = []

    def schedule(self, callback) -> None:
        self.callbacks.put(callback)

    def run(self, expected: int = 1, timeout: float = 20.0) -> int:
        """Run callbacks on this thread until ``expected`` ran (or the pool went quiet)."""
        ran, end = 0, time.monotonic() + timeout
        while ran < expected and time.monotonic() < end:
            try:
                callback = self.callbacks.get(timeout=0.05)
            except queue.Empty:
                continue
            callback()
            ran += 1
        return ran


def offloader(loop: FakeLoop, workers: int = 2) -> Offloader:
    return Offloader(loop.schedule, ThreadPoolExecutor(max_workers=workers))


def test_compute_runs_off_the_callers_thread_and_apply_on_the_loop():
    loop = FakeLoop()
    where = {}
    off = offloader(loop)
    off.submit("k", lambda: where.setdefault("compute", threading.get_ident()) and 5,
               lambda result: where.setdefault("apply", (threading.get_ident(), result)))
    time.sleep(0.2)
    # the work starts from the loop's next tick (the caller's changes go out first) ...
    assert "compute" not in where
    assert "apply" not in where           # ... and nothing is applied before the loop runs it
    assert loop.run(2) == 2
    assert where["compute"] != threading.get_ident()
    assert where["apply"] == (threading.get_ident(), 5)
    assert not off.pending("k")


def test_the_newest_request_wins_and_errors_reach_on_error():
    loop = FakeLoop()
    gate = threading.Event()
    applied, errors = [], []
    off = offloader(loop, workers=1)
    off.submit("k", lambda: gate.wait(10) and "first", applied.append)
    loop.run(1)                           # started: it computes until the gate opens
    off.submit("k", lambda: "second", applied.append)
    off.submit("other", lambda: 1 / 0, applied.append, errors.append)
    gate.set()
    loop.run(5, timeout=5)
    assert applied == ["second"]          # the first finished late and was dropped
    assert len(errors) == 1 and isinstance(errors[0], ZeroDivisionError)


def test_a_closed_offloader_applies_nothing():
    loop = FakeLoop()
    applied = []
    off = offloader(loop)
    off.submit("k", lambda: 1, applied.append)
    off.close()
    loop.run(2, timeout=1)
    assert applied == []


def test_the_state_builds_data_off_the_loop_and_publishes_on_it():
    state = ExplorerState(pages=("tasks",))
    loop = FakeLoop()
    state.offloader = offloader(loop)
    before = state.dataset
    state.data_seed = 7
    assert state.dataset is before and state.building   # the loop is free meanwhile
    loop.run(2)
    assert state.dataset is not before and not state.building and state.error == ""
    expected = make_task_family(random_state=7)
    np.testing.assert_array_equal(state.dataset.X, expected.X)
    # three quick changes: one build published, the last one's
    for seed in (1, 2, 3):
        state.data_seed = seed
    loop.run(4, timeout=3)      # three starts (two find themselves superseded), one result
    np.testing.assert_array_equal(state.dataset.X, make_task_family(random_state=3).X)


def test_a_refused_value_built_off_the_loop_keeps_the_data_and_says_why():
    state = ExplorerState(pages=("tasks",))
    loop = FakeLoop()
    state.offloader = offloader(loop)
    good = state.dataset
    state.data_params = {**state.current_params(), "n_samples_per_task": 10**7}
    loop.run(2)
    assert state.dataset is good and not state.building
    assert "n_samples_per_task must be an integer" in state.error
    assert state.current_params()["n_samples_per_task"] != 10**7   # the spec went back
    assert state.notices[-1][0] == "error"


def test_the_tasks_page_patches_its_figures_in_place():
    from explorer.app.pages.tasks import TasksPage

    class State(param.Parameterized):
        dataset = param.Parameter()

    state = State(dataset=make_task_family(("related", "negated"), random_state=0))
    page = TasksPage(state)
    figures = list(page._scatter.figures)
    heatmaps = {key: view.figure for key, (view, _) in page._truth.items()}
    first_x = list(page._scatter.sources[0].data["x"])
    state.dataset = make_task_family(("related",), random_state=1)
    assert page._scatter.figures[:2] == figures[:2]      # the same figures, patched
    assert [f.visible for f in page._scatter.figures] == [True, True, False]
    assert list(page._scatter.sources[0].data["x"]) != first_x
    assert {key: view.figure for key, (view, _) in page._truth.items()} == heatmaps
    relation = page._truth["task_relation"][0]
    assert relation.shape == (2, 2) and relation.values[0, 1] == 1.0


def test_after_this_paint_defers_nothing_without_a_served_session():
    # a notebook or a test has no browser to paint first: the caller shows everything now
    ran = []
    assert after_this_paint(lambda: ran.append(1)) is False
    assert ran == []
