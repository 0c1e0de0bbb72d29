"""The one work service: keyed jobs off the event loop, the newest request wins, results applied
on the loop, jobs cancelled when their inputs change and when the session ends, synchronous
without a loop; the session's state and the Tasks page publish nothing until then (docs/DESIGN.md:
the loop only dispatches)."""

from __future__ import annotations

import os
import queue
import sys
import threading
import time

import numpy as np
import param
import pytest

from explorer.app.state import ExplorerState
from explorer.app.work import (
    BACKGROUND_NICENESS,
    LONG,
    TURNS,
    Admission,
    Cancelled,
    WorkService,
    after_this_paint,
    busy,
    locked,
    start_thread,
)
from explorer.data import make_task_family
from explorer.data.catalog import make_dataset


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


def work(loop: FakeLoop) -> WorkService:
    return WorkService(loop.schedule)


def test_compute_runs_off_the_callers_thread_and_apply_on_the_loop():
    loop = FakeLoop()
    where = {}
    off = work(loop)
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
    off = work(loop)
    first = off.submit("k", lambda: gate.wait(10) and "first", applied.append)
    loop.run(1)                           # started: it computes until the gate opens
    off.submit("k", lambda: "second", applied.append)
    assert first.cancelled                # told to stop: a newer request replaced it
    off.submit("other", lambda: 1 / 0, applied.append, errors.append)
    gate.set()
    loop.run(5, timeout=5)
    assert applied == ["second"]          # the first finished late and was dropped
    assert len(errors) == 1 and isinstance(errors[0], ZeroDivisionError)


def test_a_closed_service_cancels_every_job_and_applies_nothing():
    loop = FakeLoop()
    applied, seen = [], {}
    off = work(loop)
    started = threading.Event()

    def long_compute(token):
        started.set()
        while not token.cancelled:        # a long computation checks its token
            time.sleep(0.005)
        seen["stopped"] = True
        return "late"

    queued = off.submit("k", lambda: 1, applied.append)
    running = off.submit("curve", long_compute, applied.append, pool=LONG, cancellable=True)
    parked = off.start("fit", lambda token: token._event.wait(30))
    loop.run(2)
    assert started.wait(5)
    off.close()                           # the session ended
    assert queued.cancelled and running.cancelled and parked.token.cancelled
    parked.join(5)
    assert not parked.alive
    loop.run(4, timeout=1)
    assert seen == {"stopped": True} and applied == []
    later = off.submit("k", lambda: 2, applied.append)   # nothing new runs either
    assert later.cancelled and loop.run(1, timeout=0.3) == 0 and applied == []


def test_a_job_whose_inputs_changed_stops_and_says_so():
    loop = FakeLoop()
    applied, errors = [], []
    off = work(loop)
    steps = []

    def curve(token):
        for k in range(1000):
            token.check()                 # raises Cancelled once cancelled
            steps.append(k)
            time.sleep(0.002)
        return "done"

    off.submit("curve", curve, applied.append, errors.append, pool=LONG, cancellable=True)
    loop.run(1)
    while len(steps) < 3:
        time.sleep(0.002)
    off.cancel("curve")
    loop.run(1)
    assert applied == [] and len(errors) == 1 and isinstance(errors[0], Cancelled)
    assert len(steps) < 1000 and not off.pending("curve")


def test_a_queued_job_cancelled_before_its_turn_never_runs():
    loop = FakeLoop()
    gate, ran, errors = threading.Event(), [], []
    first, second = work(loop), work(loop)     # two sessions, one turn
    first.submit("compare", lambda: gate.wait(10), lambda _: None, pool=TURNS)
    loop.run(1)
    second.submit("compare", lambda: ran.append(1), ran.append, errors.append, pool=TURNS)
    loop.run(1)
    assert busy(TURNS)
    second.cancel("compare")              # Cancel while it waits its turn: said at once
    loop.run(1)
    assert len(errors) == 1 and isinstance(errors[0], Cancelled)
    gate.set()
    loop.run(1)
    time.sleep(0.05)
    assert ran == [] and not busy(TURNS)


def test_progress_posts_keep_at_most_one_update_waiting():
    loop = FakeLoop()
    off = work(loop)
    shown = []
    for count in range(5):                # a fast producer on another thread
        off.post("progress", lambda count=count: shown.append(count))
    assert loop.callbacks.qsize() == 1
    loop.run(1)
    assert shown == [4]                   # the newest count, once
    off.post("progress", lambda: shown.append(5))
    loop.run(1)
    assert shown == [4, 5]


def test_without_a_loop_everything_runs_at_once():
    service = WorkService.for_document(None)
    assert not service.asynchronous
    seen = []
    service.submit("k", lambda token: token.cancelled, seen.append, cancellable=True)
    assert seen == [False]
    with pytest.raises(ZeroDivisionError):     # no on_error: the caller hears of it
        service.submit("k", lambda: 1 / 0, seen.append)
    service.post("p", lambda: seen.append("posted"))
    assert seen == [False, "posted"]
    # a cancel from inside the computation (a Cancel button's callback) reaches it
    service.submit("c", lambda token: (service.cancel("c"), token.cancelled)[1], seen.append,
                   cancellable=True)
    assert seen[-1] is True


class ServedDoc:
    """What the service uses of a served session's document."""

    session_context = object()

    def __init__(self):
        self.ticks: list = []

    def add_next_tick_callback(self, callback):
        self.ticks.append(callback)

    def run_ticks(self, timeout: float = 10.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            while self.ticks:
                self.ticks.pop(0)()
            time.sleep(0.01)
            if not self.ticks:
                return


def test_a_served_session_applies_results_on_its_loop_with_its_document_current(monkeypatch):
    import panel as pn

    doc = ServedDoc()
    service = WorkService.for_document(doc)
    assert service.asynchronous
    monkeypatch.setattr("explorer.app.work.batched", lambda d: _current(d))
    seen = []
    service.submit("k", lambda: threading.get_ident(),
                   lambda ident: seen.append((ident, threading.get_ident(),
                                              pn.state.curdoc is doc)))
    assert seen == []
    for _ in range(3):                     # enqueue, compute, apply
        deadline = time.monotonic() + 5
        while not doc.ticks and time.monotonic() < deadline:
            time.sleep(0.01)
        doc.run_ticks()
    (computed_on, applied_on, current), = seen
    assert computed_on != applied_on == threading.get_ident() and current


def _current(doc):
    from panel.io.state import set_curdoc

    return set_curdoc(doc)


def test_locked_runs_at_once_without_a_session_and_on_the_next_tick_when_served(
        monkeypatch):
    import panel as pn

    calls = []
    record = locked(lambda value: calls.append(value))
    record(1)
    assert calls == [1]
    doc = ServedDoc()
    monkeypatch.setattr(pn.state, "curdoc", doc)
    monkeypatch.setattr("explorer.app.work.batched", lambda d: _current(d))
    record(2)                              # a served callback: held for the lock
    assert calls == [1] and len(doc.ticks) == 1
    doc.ticks.pop()()
    assert calls == [1, 2]
    service = WorkService(lambda callback: callback())   # its applies hold the lock
    from explorer.app.work import on_loop

    on_loop(doc, lambda: record(3))
    assert calls == [1, 2, 3] and not doc.ticks
    del service


def test_the_state_builds_data_off_the_loop_and_publishes_on_it():
    state = ExplorerState(pages=("tasks",))
    loop = FakeLoop()
    state.work = work(loop)
    before = state.dataset
    state.data_seed = 7
    assert state.dataset is before and state.building   # the loop is free meanwhile
    loop.run(2)
    assert state.dataset is not before and not state.building and state.error == ""
    expected = make_dataset("task_family", {}, random_state=7)   # the catalog's defaults
    np.testing.assert_array_equal(state.dataset.X, expected.X)
    # three quick changes: one build published, the last one's
    for seed in (1, 2, 3):
        state.data_seed = seed
    loop.run(4, timeout=3)      # three starts (two find themselves superseded), one result
    np.testing.assert_array_equal(state.dataset.X,
                                  make_dataset("task_family", {}, random_state=3).X)


def test_a_refused_value_built_off_the_loop_keeps_the_data_and_says_why():
    state = ExplorerState(pages=("tasks",))
    loop = FakeLoop()
    state.work = work(loop)
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
        work = WorkService()        # synchronous: no loop here

    state = State(dataset=make_task_family(("related", "negated"), random_state=0))
    page = TasksPage(state)
    grid = page._scatter.figure
    heatmaps = {key: view.figure for key, (view, _) in page._truth.items()}
    first_x = list(page._scatter.points.data["px"])
    assert page._scatter.cells.data["title"][0].startswith("T0") and page._scatter.columns == 3
    state.dataset = make_task_family(("related",), random_state=1)
    assert page._scatter.figure is grid                  # the same figure, patched
    assert page._scatter.columns == 2 and len(page._scatter.cells.data["title"]) == 2
    assert list(page._scatter.points.data["px"]) != first_x
    assert {key: view.figure for key, (view, _) in page._truth.items()} == heatmaps
    relation = page._truth["task_relation"][0]
    assert relation.shape == (2, 2) and relation.values[0, 1] == 1.0


def test_after_this_paint_defers_nothing_without_a_served_session():
    # a notebook or a test has no browser to paint first: the caller shows everything now
    ran = []
    assert after_this_paint(lambda: ran.append(1)) is False
    assert ran == []


class TickDocument:   # what Admission.in_turn needs of a Bokeh document: a next-tick callback
    session_context = None

    def add_next_tick_callback(self, callback):
        import asyncio

        asyncio.get_running_loop().call_soon(callback)


def test_in_turn_runs_queued_callbacks_in_order_with_the_loop_answering_in_between():
    """Sessions opening together build their first pages one per turn of the event loop,
    first come first served; what arrives meanwhile (an open session's change) waits for
    one build, not for all of them."""
    import asyncio

    admission = Admission()
    seen = []

    async def open_three_then_change():
        for k in range(3):
            admission.in_turn(TickDocument(), lambda k=k: seen.append(f"page {k}"))
        assert admission.waiting == 3
        await asyncio.sleep(0)
        asyncio.get_running_loop().call_soon(lambda: seen.append("change"))
        for _ in range(400):   # a short breath between two turns (turn_gap_s)
            if len(seen) == 4:
                break
            await asyncio.sleep(0.005)

    asyncio.run(open_three_then_change())
    assert [s for s in seen if s.startswith("page")] == ["page 0", "page 1", "page 2"]
    assert seen.index("change") < seen.index("page 2"), seen
    assert admission.waiting == 0


def test_an_answer_is_in_the_making_from_its_submit_to_the_end_of_its_last_step():
    """A data change's answer is a chain of jobs (the data, then the page's figures, each
    submitted by the step before it): :func:`answering` holds from the first submit until
    the last apply, and a session's end lets go of what it had in flight."""
    from explorer.app.work import answering

    loop = FakeLoop()
    off, applied = work(loop), []
    assert not answering()
    off.submit("data", lambda: "data",
               lambda data: off.submit("figures", lambda: data + " drawn", applied.append))
    assert answering()
    assert loop.run(2) == 2                    # the data built and applied ...
    assert answering() and applied == []       # ... its figures are still being made
    assert loop.run(2) == 2
    assert applied == ["data drawn"] and not answering()

    gate = threading.Event()
    off.submit("data", lambda: gate.wait(10), applied.append)
    loop.run(1)                                # computing
    assert answering()
    off.close()                                # the session ended meanwhile
    assert not answering()
    gate.set()


def test_a_turn_waits_while_an_open_session_is_answered_but_not_for_ever():
    """A new session's build (a turn) waits while an open session's answer is being made, so
    a change waits for the build that was running when it came, not for one at each of its
    steps; after ``yield_s`` the turn runs however busy the class keeps the server."""
    import asyncio

    busy_now = {"answering": True}
    admission = Admission(answering=lambda: busy_now["answering"], yield_s=0.3)
    seen = []

    async def open_while_others_change():
        admission.in_turn(TickDocument(), lambda: seen.append("page"))
        await asyncio.sleep(0.1)
        waited_for_the_answer = seen == []
        busy_now["answering"] = False          # the answer went out
        for _ in range(200):
            if seen:
                break
            await asyncio.sleep(0.005)
        busy_now["answering"] = True           # a class that never stops changing
        start = time.monotonic()
        admission.in_turn(TickDocument(), lambda: seen.append("page 2"))
        while len(seen) < 2 and time.monotonic() - start < 10:
            await asyncio.sleep(0.01)
        return waited_for_the_answer, time.monotonic() - start

    waited_for_the_answer, second_after = asyncio.run(open_while_others_change())
    assert waited_for_the_answer
    assert seen == ["page", "page 2"]
    assert second_after >= 0.3                 # it waited its yield_s, then ran


def test_admission_opens_sessions_together_within_its_window_on_its_own_clock():
    """The policy with a fake clock: a session that starts within ``together_s`` of the end
    of another's first document (or while builds wait their turn) opens together with it;
    two admissions (two server processes, two tests) know nothing of each other."""
    import asyncio

    now = [1000.0]
    admission = Admission(together_s=2.0, clock=lambda: now[0])
    other = Admission(clock=lambda: now[0])
    assert not admission.opening_together()          # the first visitor is alone
    admission.opened()
    now[0] += 1.9
    assert admission.opening_together() and not other.opening_together()
    now[0] += 0.2                                    # 2.1 s after: alone again
    assert not admission.opening_together()
    admission.opened()
    now[0] += 1.0
    admission.opened()                               # counted from the latest end
    now[0] += 1.5
    assert admission.opening_together()
    now[0] += 10.0
    assert not admission.opening_together()

    async def queued_then_served():
        admission.in_turn(TickDocument(), lambda: None)
        waiting_while_queued = admission.opening_together()
        for _ in range(200):
            if not admission.waiting:
                break
            await asyncio.sleep(0.005)
        return waiting_while_queued

    assert asyncio.run(queued_then_served())         # a build waits: the next one joins it
    assert not admission.opening_together() and admission.waiting == 0


def test_admission_runs_at_once_without_a_loop_and_finds_the_session_it_admitted():
    from bokeh.document import Document

    admission, ran = Admission(), []
    admission.in_turn(None, lambda: ran.append(1))   # panel serve --warm: no loop yet
    assert ran == [1]
    doc = Document()
    assert Admission.of(doc) is None
    admission.admit(doc)
    assert Admission.of(doc) is admission and Admission.of(Document()) is None
    assert Admission.of(None) is None


def test_the_app_takes_its_admission_and_the_server_process_has_one():
    from explorer.app import ExplorerApp
    from explorer.app.pages import PAGES
    from explorer.app.serving import process_admission

    tasks = [page for page in PAGES if page.slug == "tasks"]
    admission = Admission()
    app = ExplorerApp(pages=tasks, admission=admission)
    assert app.admission is admission and not admission.opening_together()   # not served
    assert ExplorerApp(pages=tasks).admission is not admission   # a notebook's: its own
    assert process_admission() is process_admission()
    app.close()


def test_one_helper_says_whether_a_session_is_served_and_the_app_asks_only_it():
    import types
    from pathlib import Path

    from explorer.app.work import served

    assert served(None) is False and served() is False           # a test: no session
    assert served(types.SimpleNamespace(session_context=None)) is False   # a notebook's
    assert served(types.SimpleNamespace(session_context=object())) is True
    app = Path(__file__).resolve().parents[1] / "explorer" / "app"
    asking = sorted(str(path.relative_to(app)) for path in app.rglob("*.py")
                    if "session_context" in path.read_text(encoding="utf-8"))
    assert asking == ["work.py"], asking


# ---------------------------------------------------------------------- recurring checks
class PeriodicDoc(ServedDoc):
    """A served document that also keeps periodic callbacks (Bokeh's public API)."""

    def __init__(self):
        super().__init__()
        self.periodic: list = []

    def add_periodic_callback(self, callback, period_ms):
        handle = (callback, period_ms)
        self.periodic.append(handle)
        return handle

    def remove_periodic_callback(self, handle):
        self.periodic.remove(handle)   # ValueError when gone, as Bokeh's


def test_a_recurring_check_runs_off_the_loop_on_one_periodic_callback_until_stopped(
        monkeypatch):
    monkeypatch.setattr("explorer.app.work.batched", lambda d: _current(d))
    doc = PeriodicDoc()
    service = WorkService.for_document(doc)
    seen, threads = [], []

    def compute():
        threads.append(threading.get_ident())
        return len(threads)

    service.every("class", 2.0, compute, seen.append)
    service.every("other", 4.0, lambda: "x", seen.append)
    assert len(doc.periodic) == 1 and doc.periodic[0][1] == 1000   # one ticker, half the period
    for _ in range(3):
        doc.run_ticks()
    assert sorted(seen, key=str) == [1, "x"] and threads[0] != threading.get_ident()
    tick = doc.periodic[0][0]
    tick()                  # not due yet: nothing runs
    doc.run_ticks()
    assert len(seen) == 2
    service.check("class")  # now, on request
    for _ in range(3):
        doc.run_ticks()
    assert seen[-1] == 2
    service.stop_every("other")
    assert len(doc.periodic) == 1 and service.checking("class") and not service.checking("other")
    service.close()         # the session's end stops the ticker
    assert doc.periodic == [] and not service.checking("class")
    service.every("late", 1.0, compute, seen.append)   # a closed service starts nothing
    assert doc.periodic == []


def test_without_a_loop_a_recurring_check_runs_now_and_on_each_check():
    service, seen = WorkService(), []
    values = iter(range(10))
    service.every("k", 2.0, lambda: next(values), seen.append)
    service.check("k")
    service.stop_every("k")
    service.check("k")   # stopped: nothing
    assert seen == [0, 1]
    errors = []
    service.every("bad", 1.0, lambda: 1 / 0, seen.append, errors.append)
    assert isinstance(errors[0], ZeroDivisionError)
    with pytest.raises(ValueError, match="seconds"):
        service.every("k", 0, lambda: 1, seen.append)


def _nice_of_a_fit_worker(service: WorkService) -> int:
    seen = queue.Queue()
    job = service.start("fit", lambda token: seen.put(
        os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
    job.join(5)
    return seen.get(timeout=5)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="threads have nice values "
                    "of their own on Linux only (elsewhere the call names a process)")
def test_a_live_fit_runs_behind_the_loop_only_while_the_process_serves_others(monkeypatch):
    """A visitor alone keeps their fit at full priority (its frames are their answer); once
    the process serves other sessions too, a fit's worker runs behind the loop's answers
    (its nice value the starter's plus BACKGROUND_NICENESS, capped at 19), and the starting
    thread keeps its own. The warm-up's thread always runs behind."""
    import weakref

    monkeypatch.setattr("explorer.app.work._serving", weakref.WeakSet())  # other tests' gone
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    behind = min(19, mine + BACKGROUND_NICENESS)
    alone = WorkService.for_document(ServedDoc())
    assert _nice_of_a_fit_worker(alone) == mine
    other = WorkService.for_document(ServedDoc())
    assert _nice_of_a_fit_worker(alone) == behind
    other.close()                                  # the other session ended
    assert _nice_of_a_fit_worker(alone) == mine
    alone.close()
    seen = []
    start_thread(lambda: seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id())),
                 "explorer-warm-up", behind=True).join(5)
    assert seen == [behind]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == mine
