"""The live fit's Panel-free session (:mod:`explorer.app.fit_session`) and the Panel runner
over it (:mod:`explorer.app.runner`), without a browser."""

from __future__ import annotations

import threading
import time
import warnings

import numpy as np
import param
import pytest
from sklearn.exceptions import ConvergenceWarning

from explorer.app.fit_session import FitJob, FitSession, SnapshotRecord
from explorer.app.runner import FramePump, LiveFitRunner
from explorer.models.base import FitDivergedError, Snapshot


class FakeEstimator:
    """fit_iter yields n snapshots; optional delay per step, failure, warning."""

    def __init__(self, n=5, delay=0.0, fail_at=None, exc=ValueError, warn=False, size=2):
        self.n, self.delay, self.fail_at, self.exc, self.warn = n, delay, fail_at, exc, warn
        self.size = size
        self.produced = 0
        self.threads = set()

    def fit_iter(self, X, y, task):
        for i in range(1, self.n + 1):
            self.threads.add(threading.current_thread().name)
            if self.delay:
                time.sleep(self.delay)
            if self.warn == "every step":
                warnings.warn(f"step {i} is odd", RuntimeWarning, stacklevel=1)
            if self.fail_at == i:
                raise self.exc(f"boom at step {i}")
            self.produced = i
            yield Snapshot(step=i, objective=1.0 / i,
                           matrices={"W": np.full((self.size, self.size), float(i))})
        if self.warn is True:
            warnings.warn("did not converge in 5 iterations", ConvergenceWarning, stacklevel=1)


def data():
    return np.zeros((4, 2)), np.zeros(4), np.zeros(4, dtype=int)


def job(estimator):
    return lambda: FitJob(estimator, data())


def session(**kw):
    cap = kw.pop("record_cap", 500)
    est = FakeEstimator(**kw)
    return FitSession(job(est), record_cap=cap), est


def test_idle_running_done():
    s, _ = session(n=5)
    assert s.state == "idle" and s.latest() is None
    s.run()
    assert s.wait(5)
    assert s.state == "done"
    assert [snap.step for snap in s.record.items()] == [1, 2, 3, 4, 5]
    assert s.latest().step == 5


def test_step_advances_exactly_one_snapshot():
    s, est = session(n=10)
    for k in range(1, 4):
        s.step()
        assert s.wait(5)
        assert s.state == "paused"
        assert s.latest().step == k and len(s.record) == k
    time.sleep(0.1)
    assert est.produced == 3
    s.run()
    assert s.wait(5) and s.state == "done" and s.latest().step == 10


def test_pause_and_resume():
    s, _ = session(n=200, delay=0.005)
    s.run()
    time.sleep(0.1)
    s.pause()
    assert s.wait(5)
    assert s.state == "paused"
    frozen = s.version
    time.sleep(0.1)
    assert s.version == frozen
    s.run()
    assert s.wait(10) and s.state == "done" and s.version == 200


def test_reset_clears():
    s, _ = session(n=50, delay=0.005)
    s.run()
    time.sleep(0.05)
    s.reset()
    assert s.state == "idle" and s.latest() is None and len(s.record) == 0 and not s.active


def test_record_stays_bounded_and_keeps_ends():
    rec = SnapshotRecord(cap=10)
    for i in range(1000):
        rec.append(i)
        assert len(rec) <= 10
    items = rec.items()
    assert items[0] == 0 and items[-1] == 999 and items == sorted(items)
    s, _ = session(n=300, record_cap=16)
    s.run()
    assert s.wait(10)
    assert len(s.record) <= 16 and s.record[0].step == 1 and s.record[-1].step == 300


def test_record_rejects_small_cap():
    with pytest.raises(ValueError, match="cap"):
        SnapshotRecord(cap=1)


def test_slow_consumer_sees_only_newest_and_never_blocks_worker():
    s, _ = session(n=400)
    s.run()
    seen = []
    while s.active or s.state == "running":
        snap = s.latest()
        if snap is not None:
            seen.append(snap.step)
        time.sleep(0.02)  # a slow "render"
    assert s.state == "done" and s.version == 400
    assert seen == sorted(seen)
    assert s.latest().step == 400


def test_clean_stop_with_slow_estimator():
    s, est = session(n=10_000, delay=0.02)
    s.run()
    time.sleep(0.1)
    thread = s._thread
    s.stop()                        # returns at once; the worker ends between two steps
    assert s.join(2) and not thread.is_alive()
    produced = est.produced
    time.sleep(0.1)
    assert est.produced == produced


@pytest.mark.parametrize("exc", [ValueError, FitDivergedError, RuntimeError])
def test_errors_are_captured_with_message(exc):
    s, _ = session(n=5, fail_at=3, exc=exc)
    s.run()
    assert s.wait(5)
    assert s.state == "error"
    assert exc.__name__ in s.error and "boom at step 3" in s.error
    assert s.latest().step == 2


@pytest.mark.filterwarnings("always::sklearn.exceptions.ConvergenceWarning")
def test_convergence_warning_is_captured():
    s, _ = session(n=3, warn=True)
    s.run()
    assert s.wait(5) and s.state == "done"
    assert any("ConvergenceWarning" in w and "did not converge" in w for w in s.warnings)


@pytest.mark.filterwarnings("always::RuntimeWarning")
def test_warnings_stay_with_their_worker_and_survive_a_failure():
    # two sessions fitting at once: each keeps its own warnings; the filters are untouched
    filters_before = list(warnings.filters)
    a, _ = session(n=20, delay=0.002, warn="every step")
    b, _ = session(n=5, delay=0.002, warn="every step", fail_at=5)
    a.run()
    b.run()
    assert a.wait(10) and b.wait(10)
    assert a.state == "done" and b.state == "error"
    assert len(a.warnings) == 20 and len(b.warnings) == 5     # kept although b failed
    assert all("RuntimeWarning" in w for w in a.warnings + b.warnings)
    assert warnings.filters == filters_before
    with pytest.warns(RuntimeWarning, match="main thread"):   # other threads unaffected
        warnings.warn("main thread", RuntimeWarning, stacklevel=1)


def test_estimator_and_data_are_built_on_the_callers_thread():
    built_on = []

    def prepare():
        built_on.append(threading.current_thread().name)
        return FitJob(est, data(), after=lambda model: ("after", threading.current_thread().name))

    est = FakeEstimator(n=3)
    s = FitSession(prepare)
    s.run()
    assert s.wait(5) and s.state == "done"
    assert built_on == [threading.current_thread().name]
    assert est.threads == {"explorer-fit"} and s.result == ("after", "explorer-fit")


def test_record_is_bounded_in_bytes():
    s, _ = session(n=200, size=100)   # 80 kB a snapshot
    s.record.max_bytes = 2_000_000
    s.run()
    assert s.wait(10) and s.state == "done"
    assert s.record.nbytes <= 2_000_000 and len(s.record) < 40
    steps = [snap.step for snap in s.record.items()]
    assert steps[0] == 1 and steps[-1] == 200 and steps == sorted(steps)


def test_speed_throttles_worker():
    s, _ = session(n=1000)
    s.steps_per_second = 10.0
    s.run()
    time.sleep(0.35)
    assert 1 <= s.version < 50
    s.stop()


# ------------------------------------------------------------------ Panel layer
def test_runner_renders_newest_and_reports_errors():
    rendered, finished = [], []
    est = FakeEstimator(n=6)
    runner = LiveFitRunner(job(est), rendered.append,
                           lambda model, result: finished.append(model))
    runner._speed.value = "unthrottled"
    runner.session.run()
    assert runner.session.wait(5)
    runner.poll()
    assert rendered[-1].step == 6 and len(rendered) == 1  # only the newest is rendered
    assert finished == [est]
    assert "done" in runner.status and "step 6" in runner.status
    assert runner._scrub.end == 5 and not runner._scrub.disabled
    runner.scrub_to(1)  # scrub back: renders that snapshot, stops following
    assert rendered[-1].step == 2 and not runner.pump.following
    assert "step 2" in runner.status and "the fit is at step 6" in runner.status
    runner.scrub_to(0)  # the very first recorded snapshot, labelled with its solver step
    assert rendered[-1].step == 1 and "step 1," in runner.status

    failing = LiveFitRunner(job(FakeEstimator(n=5, fail_at=2)), lambda s: None)
    failing.session.run()
    assert failing.session.wait(5)
    failing.poll()
    assert failing._alert.visible and "boom at step 2" in failing._alert.object


def test_render_exception_does_not_kill_run():
    calls = []

    def render(snap):
        calls.append(snap.step)
        raise KeyError("bad view")

    runner = LiveFitRunner(job(FakeEstimator(n=20, delay=0.002)), render)
    runner._speed.value = "unthrottled"
    runner.session.run()
    while runner.session.active:
        runner.poll()
        time.sleep(0.005)
    runner.poll()
    assert runner.session.state == "done" and runner.session.version == 20
    assert calls and "bad view" in runner._alert.object


def test_step_button_path_and_reset():
    rendered = []
    runner = LiveFitRunner(job(FakeEstimator(n=4)), rendered.append)
    runner.step()  # no server: waits and renders synchronously
    assert rendered[-1].step == 1 and runner.session.state == "paused"
    runner.reset()
    assert runner.session.state == "idle" and runner.status == "Ready."
    assert threading.active_count() >= 1


@pytest.mark.filterwarnings("always::sklearn.exceptions.ConvergenceWarning")
def test_real_regularized_model_runs():
    from explorer.models.regularized import RegularizedMTL

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    task = np.repeat([0, 1, 2], 20)
    y = (X[:, 0] > 0).astype(int)
    s = FitSession(lambda: FitJob(RegularizedMTL(max_iter=20), (X, y, task)))
    s.run()
    assert s.wait(30)
    assert s.state == "done", s.error
    assert s.latest().matrices["similarity"].shape == (3, 3)


def test_stale_slider_values_do_not_pause_a_run():
    # During a fast run the browser echoes old values of the scrub slider's ``value``; only a
    # user's release (``value_throttled``) may scrub and pause.
    est = FakeEstimator(n=200, delay=0.005)
    runner = LiveFitRunner(job(est), lambda s: None)
    runner._speed.value = "unthrottled"
    runner.session.run()
    while runner.session.version < 5:
        time.sleep(0.005)
    runner.poll()
    runner._scrub.value = 0            # an echo, not a user's scrub
    assert runner.session.state == "running"
    with param.edit_constant(runner._scrub):  # what the browser sets when the user lets go
        runner._scrub.value_throttled = 1
    assert runner.session.state == "paused" and not runner.pump.following
    runner.reset()


def test_a_worker_outliving_reset_never_writes_into_the_next_run():
    # reset() does not wait for a worker inside a long step: it must stay stopped
    slow = FakeEstimator(n=3, delay=0.6)
    s = FitSession(job(slow))
    s.run()
    time.sleep(0.1)                 # the worker is inside its first (slow) step
    s.reset()                       # returns at once; the worker is still running
    assert s._stopped
    assert s.join(5)                # the old worker finishes its step meanwhile
    assert s.version == 0 and len(s.record) == 0 and s.state == "idle"
    assert slow.produced == 1       # it finished that step, then stopped: no second one
    assert not s._stopped           # and nothing of it is kept



def test_a_hidden_page_fits_on_without_frames_and_shows_the_newest_when_shown():
    rendered = []
    runner = LiveFitRunner(job(FakeEstimator(n=6)), rendered.append)
    runner.set_rendering(True)                 # shown before any fit: still "Ready."
    assert runner.status == "Ready." and rendered == []
    runner.set_rendering(False)                # the user went to another page
    runner._speed.value = "unthrottled"
    runner.session.run()
    assert runner.session.wait(5)
    runner.poll()
    assert rendered == [] and runner.session.state == "done"   # no frame was sent
    runner.set_rendering(True)                 # back on the page: the newest, once
    assert [s.step for s in rendered] == [6] and "step 6" in runner.status
    runner.set_rendering(True)
    assert len(rendered) == 1


def test_closing_stops_a_paused_worker_and_leaves_the_widgets_alone():
    runner = LiveFitRunner(job(FakeEstimator(n=1000, delay=0.01)), lambda snap: None)
    runner._speed.value = "unthrottled"
    runner.session.run()
    time.sleep(0.1)
    runner.session.pause()
    assert runner.session.wait(5) and runner.session.active
    runner.poll()
    shown = runner.status
    assert "paused" in shown
    runner.close()            # the session's document is going: no widget is touched
    assert not runner.session.active and runner.session.latest() is None
    assert runner.status == shown


def test_pause_is_answered_before_the_last_frame_is_made():
    """Served, a click on Pause sends "paused" in a message of its own; the run's newest
    frame follows on the loop's next tick (making it cost the server tens of ms under load,
    and the click waited for it)."""
    rendered = []
    runner = LiveFitRunner(job(FakeEstimator(n=400, delay=0.005)), rendered.append)
    runner._speed.value = "unthrottled"
    runner.session.run()
    deadline = time.monotonic() + 10
    while runner.session.version < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    ticks = []
    runner.session.work.schedule = ticks.append    # the session's loop, held here
    runner.pause()
    assert "paused" in runner.status and rendered == [] and len(ticks) == 1
    assert runner.session.wait(5)
    ticks.pop()()                                  # the next tick: the last frame
    assert rendered and rendered[-1].step == runner.session.latest().step
    assert "paused" in runner.status
    runner.close()


def test_an_early_acknowledgement_books_the_next_frame_instead_of_waiting_for_a_tick(
        monkeypatch):
    """The browser drew a frame sooner than 1 / MAX_FPS after it went: the next frame is
    booked for that moment (once), not left to the next poll tick."""
    import contextlib

    import explorer.app.runner as runner_module

    class ServedDoc:                       # what the runner uses of a served document
        session_context = object()

        def __init__(self):
            self.timeouts, self.ticks = [], []

        def add_timeout_callback(self, callback, ms):
            self.timeouts.append((callback, ms))

        def add_next_tick_callback(self, callback):   # the pacer's watcher, held for the lock
            self.ticks.append(callback)

    rendered = []
    runner = LiveFitRunner(job(FakeEstimator(n=3)), rendered.append)
    runner._speed.value = "unthrottled"
    runner.session.run()
    assert runner.session.wait(5)
    doc = ServedDoc()
    monkeypatch.setattr(runner_module.pn.state, "curdoc", doc)
    monkeypatch.setattr(runner_module, "batched", lambda d: contextlib.nullcontext())
    runner.pump._callback = object()            # a run being polled
    runner.pump._frame_sent()                   # a frame went just now ...
    runner.pacer.drawn = runner.pacer.frame   # ... and the browser has drawn it already
    runner.pump.on_drawn()
    runner.pump.on_drawn()                     # a second early acknowledgement books nothing
    assert rendered == [] and len(doc.timeouts) == 1
    callback, ms = doc.timeouts[0]
    assert 1 <= ms <= 1000 / FramePump.MAX_FPS + 1
    runner.pump._frame_sent_at -= 1.0           # the booked moment has come
    callback()
    assert [s.step for s in rendered] == [3] and runner.pacer.frame == 2
    assert "step 3" in runner.status


def test_run_after_done_starts_the_fit_again_from_the_start():
    rendered, cleared = [], []
    est = FakeEstimator(n=3)
    runner = LiveFitRunner(job(est), rendered.append, on_reset=lambda: cleared.append(True))
    runner._speed.value = "unthrottled"
    runner.run()
    assert runner.session.wait(5)
    runner.poll()
    assert runner.session.state == "done" and rendered[-1].step == 3
    runner.run()   # after "done": a new fit from step 1, not nothing
    assert cleared, "the views were not emptied for the new fit"
    assert runner.session.wait(5)
    runner.poll()
    assert runner.session.state == "done" and runner.session.version == 3
    assert [snap.step for snap in runner.session.record.items()] == [1, 2, 3]
    runner.step()   # Step after "done" also starts again, and stops after one step
    assert runner.session.state == "paused" and rendered[-1].step == 1


def test_a_reset_or_a_slider_change_never_waits_for_a_long_after_step():
    """Must hold (issue 40): with an ``after`` step of 3 s running on the worker, a reset and
    a slider change return on the caller (the event loop) long before the 3 s are over; a
    new fit started right after gives the right result and the stopped fits' never shows."""
    import dataclasses

    from explorer.app.kit import ModelPage
    from explorer.app.pages import PAGES
    from explorer.app.state import ExplorerState

    declared = next(p for p in PAGES if isinstance(p, ModelPage)
                    and p.slug == "shared_vs_separate")
    entered, release, calls = threading.Event(), threading.Event(), []

    def after(model, inputs):           # on the worker, once the fit and baselines are done
        calls.append(inputs.params.coupling)
        number = len(calls)
        entered.set()
        if number <= 2:                 # the two fits that get stopped: 3 s (unless let go)
            release.wait(3.0)
        return {"call": number, "coupling": inputs.params.coupling}

    hooks = dataclasses.replace(declared.hooks, after=after)
    page = dataclasses.replace(declared, hooks=hooks).build(
        ExplorerState(dataset_name="task_family"))
    runner = page.runner
    runner._speed.value = "unthrottled"
    try:
        runner.run()
        assert entered.wait(60) and runner.session.state == "running"   # in the after step
        entered.clear()
        start = time.perf_counter()
        runner.reset()
        assert time.perf_counter() - start < 0.5
        assert runner.session.state == "idle" and runner.status == "Ready."

        runner.run()
        assert entered.wait(60) and runner.session.state == "running"
        start = time.perf_counter()
        page.params.coupling = 1.0      # what the slider does: the page resets its fit
        assert time.perf_counter() - start < 0.5
        assert runner.session.state == "idle" and len(calls) == 2

        runner.run()                    # a new fit while both stopped ones still sleep
        assert runner.session.wait(60)
        runner.poll()
        s = runner.session
        assert s.state == "done", s.error
        assert s.result.extra == {"call": 3, "coupling": 1.0} and not release.is_set()
        train = page.state.train
        fresh = declared.make(page.params, int(page.state.init_seed), train).fit(
            train.X, train.y, train.task)
        np.testing.assert_allclose(s.estimator.coef_, fresh.coef_)
        shown, version, summary = s.result, s.version, page.summary.object
        assert "Fitted in" in summary

        release.set()                   # the stopped fits end their after steps now
        assert s.join(5) and not s._stopped
        runner.poll()
        assert s.result is shown and s.version == version and s.state == "done"
        assert page.fit.result is shown and page.summary.object == summary
    finally:
        release.set()
        runner.close()


def test_a_warm_refit_waits_on_its_worker_for_the_stopped_one_to_let_go_of_the_estimator():
    """A stopped worker may still be inside a step of the estimator a warm refit starts
    again from: the new worker (not the caller) waits for it; one estimator, one thread."""
    inside, most = [0], [0]
    lock = threading.Lock()

    class Shared(FakeEstimator):
        def fit_iter(self, X, y, task):
            for i in range(1, self.n + 1):
                with lock:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                time.sleep(0.3)          # a long step
                with lock:
                    inside[0] -= 1
                yield Snapshot(step=i, objective=1.0 / i, matrices={})

    shared = Shared(n=3)
    s = FitSession(lambda: FitJob(shared, data()))    # the same estimator every run
    s.run()
    time.sleep(0.1)                     # the worker is inside its first step
    start = time.perf_counter()
    s.reset()
    s.run()                             # the new worker starts from the same estimator
    assert time.perf_counter() - start < 0.2
    assert s.wait(10) and s.state == "done" and s.version == 3
    assert most[0] == 1                 # never two threads in the estimator at once
    assert s.join(5)
