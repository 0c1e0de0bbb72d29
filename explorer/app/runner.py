"""The live-fit runner every page reuses (DESIGN.md, "Live views").

Two layers:

* :class:`FitSession` -- pure Python, no Panel: a worker thread runs
  ``estimator.fit_iter(...)`` (BLAS limited to 1 thread), never touches Bokeh/Panel objects,
  appends each snapshot to a bounded :class:`SnapshotRecord` and swaps a reference to the
  newest. States: ``idle -> running <-> paused -> done | error``; ``reset()`` -> idle.
* :class:`LiveFitRunner` -- a thin ``pn.viewable.Viewer``: Run / Step / Pause / Reset, speed,
  progress text, scrub slider, and *one* periodic callback (~100 ms) that is active only while
  a run is active and renders the newest snapshot if it changed (the consumer never sees a
  backlog: a slow render just skips snapshots).

How a page uses it::

    runner = LiveFitRunner(make_estimator=lambda: RegularizedMTL(lambda1=l1),
                           get_data=lambda: (state.train.X, state.train.y, state.train.task),
                           render=self._render, on_finish=self._finished)
    state.param.watch(lambda *_: runner.reset(), "train")

``render(snapshot)`` patches the page's Bokeh sources (see :mod:`explorer.viz.live`);
``on_finish(estimator)`` gets the fitted estimator (main thread, from the periodic callback).
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable

import panel as pn
import param
from threadpoolctl import threadpool_limits

__all__ = ["FitSession", "LiveFitRunner", "SnapshotRecord", "SPEEDS"]

SPEEDS = {"1 step/s": 1.0, "2 steps/s": 2.0, "5 steps/s": 5.0, "10 steps/s": 10.0,
          "30 steps/s": 30.0, "unthrottled": None}


class SnapshotRecord:
    """A bounded list of snapshots: past ``cap`` the older half is thinned to every 2nd.

    The first and the newest snapshot are always kept.

    >>> rec = SnapshotRecord(cap=8)
    >>> for i in range(100):
    ...     rec.append(i)
    >>> len(rec) <= 8, rec[0], rec[-1]
    (True, 0, 99)
    """

    def __init__(self, cap: int = 500):
        if int(cap) < 4:
            raise ValueError(f"SnapshotRecord: cap must be an int >= 4; got {cap!r}.")
        self.cap = int(cap)
        self._items: list = []
        self._lock = threading.Lock()

    def append(self, item) -> None:
        with self._lock:
            self._items.append(item)
            if len(self._items) > self.cap:
                half = len(self._items) // 2
                old = self._items[:half]
                thinned = [old[0]] + old[2::2] if len(old) > 1 else old
                self._items = thinned + self._items[half:]

    def clear(self) -> None:
        with self._lock:
            self._items = []

    def items(self) -> list:
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i):
        with self._lock:
            return self._items[i]


class FitSession:
    """Pure-Python state machine around a worker thread running ``fit_iter``.

    Parameters
    ----------
    make_estimator : callable () -> MultiTaskEstimator
    get_data : callable () -> (X, y, task)
    record_cap : int
        Bound on the number of recorded snapshots.

    Attributes
    ----------
    state : {"idle", "running", "paused", "done", "error"}
    error : str or None
        The reason of the failure (exception type and message) in state "error".
    warnings : list of str
        Messages of warnings (e.g. ConvergenceWarning) raised during the fit.
    estimator : MultiTaskEstimator or None
    """

    def __init__(self, make_estimator: Callable, get_data: Callable, *, record_cap: int = 500):
        self.make_estimator, self.get_data = make_estimator, get_data
        self.record = SnapshotRecord(record_cap)
        self.steps_per_second: float | None = None
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        # One stop token per worker thread: a worker that outlives reset()'s join timeout
        # (a step longer than the timeout) keeps its own, already set, token, so it can
        # neither resume nor write into the next run's record.
        self._token = threading.Event()
        self._reset_fields()

    def _reset_fields(self):
        self.state = "idle"
        self.error: str | None = None
        self.warnings: list[str] = []
        self.estimator = None
        self._latest = None
        self._version = 0
        self._parked = False
        self._budget: int | None = None  # None = run freely; k = k more steps then pause
        self.record.clear()

    # ------------------------------------------------------------------ queries
    def latest(self):
        """The newest snapshot (or None)."""
        return self._latest

    @property
    def version(self) -> int:
        """Number of snapshots produced so far (changes whenever ``latest()`` does)."""
        return self._version

    @property
    def active(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ------------------------------------------------------------------ controls
    def run(self) -> None:
        """Start (or resume) running freely."""
        with self._cond:
            if self.state in ("done", "error"):
                return
            self._budget = None
            self.state = "running"
            self._cond.notify_all()
        self._ensure_thread()

    def step(self) -> None:
        """Advance exactly one snapshot, then pause."""
        with self._cond:
            if self.state in ("done", "error"):
                return
            self._budget = 1
            self.state = "running"
            self._cond.notify_all()
        self._ensure_thread()

    def pause(self) -> None:
        with self._cond:
            if self.state == "running":
                self.state = "paused"
                self._budget = 0
            self._cond.notify_all()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the worker to stop between steps and join it."""
        with self._cond:
            self._token.set()
            self._cond.notify_all()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        self._thread = None

    def reset(self) -> None:
        """Stop any run and clear the record; back to "idle"."""
        self.stop()
        with self._cond:
            self._reset_fields()

    def wait(self, timeout: float = 10.0) -> bool:
        """Block until the worker is paused, done, errored or stopped (for tests/notebooks)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._cond:
                if not self.active or (self.state != "running" and self._parked):
                    return True
                self._cond.wait(0.02)
        return False

    # ------------------------------------------------------------------ worker
    def _ensure_thread(self):
        if self.active:
            return
        self._token = threading.Event()
        self._thread = threading.Thread(target=self._work, args=(self._token,),
                                        name="LiveFitRunner", daemon=True)
        self._thread.start()

    def _gate(self, token: threading.Event) -> bool:
        """Wait while paused; return False when the worker must stop."""
        with self._cond:
            while not token.is_set() and (self.state == "paused" or self._budget == 0):
                if self.state == "running" and self._budget == 0:
                    self.state = "paused"
                self._parked = True
                self._cond.notify_all()
                self._cond.wait(0.1)
            self._parked = False
            return not token.is_set()

    def _work(self, token: threading.Event):
        try:
            with threadpool_limits(limits=1), warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                estimator = self.make_estimator()
                X, y, task = self.get_data()
                with self._cond:
                    if token.is_set():
                        return
                    self.estimator = estimator
                iterator = estimator.fit_iter(X, y, task)
                last = time.monotonic()
                while self._gate(token):
                    try:
                        snap = next(iterator)
                    except StopIteration:
                        break
                    with self._cond:   # a stopped worker never writes
                        if token.is_set():
                            return
                        self.record.append(snap)
                        self._latest = snap
                        self._version += 1
                        if self._budget is not None:
                            self._budget -= 1
                        self._cond.notify_all()
                    sps = self.steps_per_second
                    if not sps:
                        # Unthrottled: hand the GIL over once per step, or a Python-heavy
                        # solver starves the event loop's periodic render (measured 7 frames/s
                        # instead of 10 with rMTFL at ~3500 steps/s).
                        time.sleep(0)
                    if sps:
                        end = last + 1.0 / sps
                        with self._cond:
                            while not token.is_set() and time.monotonic() < end:
                                self._cond.wait(end - time.monotonic())
                    last = time.monotonic()
                else:
                    return  # stopped
                self.warnings.extend(f"{w.category.__name__}: {w.message}" for w in caught)
            with self._cond:
                if not token.is_set():
                    self.state = "done"
                self._cond.notify_all()
        except Exception as exc:  # noqa: BLE001 -- every failure reaches the user
            with self._cond:
                if token.is_set():
                    return
                self.error = f"{type(exc).__name__}: {exc}"
                self.state = "error"
                self._cond.notify_all()


class LiveFitRunner(pn.viewable.Viewer):
    """Run / Step / Pause / Reset controls, speed, progress and scrub over a :class:`FitSession`.

    Parameters
    ----------
    make_estimator : callable () -> MultiTaskEstimator
    get_data : callable () -> (X, y, task)
    render : callable (Snapshot) -> None
        Page-owned; patches Bokeh sources. Called on the session's thread.
    on_finish : callable (estimator) -> None, optional
        Called once when a fit completes.
    on_reset : callable () -> None, optional
        Called after every reset (the Reset button, or a page's own ``reset()`` when its data
        or hyper-parameters change): the page clears its views here.
    """

    status = param.String(default="Ready.")

    def __init__(self, make_estimator, get_data, render, on_finish=None, on_reset=None, *,
                 record_cap=500, period_ms: int = 100, **params):
        super().__init__(**params)
        self.session = FitSession(make_estimator, get_data, record_cap=record_cap)
        self.render, self.on_finish, self.on_reset = render, on_finish, on_reset
        self.period_ms = int(period_ms)
        self._shown_version = -1
        self._callback = None
        self._following = True
        self._finished_reported = False
        self._run_btn = pn.widgets.Button(label="▶ Run", color="primary", width=90)
        self._step_btn = pn.widgets.Button(label="Step", width=70)
        self._pause_btn = pn.widgets.Button(label="Pause", width=70)
        self._reset_btn = pn.widgets.Button(label="Reset", width=70)
        self._speed = pn.widgets.Select(label="Speed", options=list(SPEEDS), value="10 steps/s",
                                        width=130)
        self._scrub = pn.widgets.IntSlider(label="Recorded step", start=0, end=1, value=0,
                                           disabled=True, sizing_mode="stretch_width")
        self._alert = pn.pane.Alert("", alert_type="danger", visible=False,
                                    sizing_mode="stretch_width")
        self._status = pn.pane.Markdown(self.param.status, sizing_mode="stretch_width")
        self._run_btn.on_click(lambda e: self.run())
        self._step_btn.on_click(lambda e: self.step())
        self._pause_btn.on_click(lambda e: self.pause())
        self._reset_btn.on_click(lambda e: self.reset())
        self._speed.param.watch(self._set_speed, "value")
        # Only a user's release of the slider (value_throttled) scrubs. The server moves
        # ``value`` on every poll, and during a fast run the browser echoes stale values of
        # it back; taking those for a user's scrub paused runs after a few hundred steps.
        self._scrub.param.watch(lambda event: self.scrub_to(event.new), "value_throttled")
        self._set_speed()
        self.controls = pn.Column(
            pn.Row(self._run_btn, self._step_btn, self._pause_btn, self._reset_btn, self._speed),
            self._status, self._scrub, self._alert, sizing_mode="stretch_width")

    def __panel__(self):
        return self.controls

    # ------------------------------------------------------------------ controls
    def _set_speed(self, *_):
        self.session.steps_per_second = SPEEDS[self._speed.value]

    def run(self):
        self._following = True
        self.session.run()
        self._start_polling()

    def step(self):
        self._following = True
        self.session.step()
        self._start_polling()
        if not self._has_server():
            self.session.wait(30)
            self.poll()

    def pause(self):
        self.session.pause()
        self.poll()

    def stop(self):
        self.session.stop()
        self._stop_polling()

    def reset(self):
        """Stop the run and clear the record (data or hyper-parameters changed)."""
        self._stop_polling()
        self.session.reset()
        self._shown_version = -1
        self._finished_reported = False
        self._alert.visible = False
        self._scrub.disabled = True
        self.status = "Ready."
        if self.on_reset is not None:
            try:
                self.on_reset()
            except Exception as exc:  # noqa: BLE001 -- a view bug must not break the controls
                self._notify(f"Clearing the views failed: {type(exc).__name__}: {exc}", "warning")

    def objective_trace(self, up_to_step: int) -> tuple[list, list]:
        """``(steps, objectives)`` of the recorded snapshots up to ``up_to_step``.

        The periodic callback renders only the newest snapshot (frames are taken, never
        queued), so a curve drawn from rendered frames would miss steps; pages draw their
        objective curve from the record instead, which also serves scrubbing back.
        """
        kept = [(s.step, s.objective) for s in self.session.record.items()
                if s.step <= up_to_step and s.objective is not None]
        return [k for k, _ in kept], [v for _, v in kept]

    # ------------------------------------------------------------------ polling
    @staticmethod
    def _has_server() -> bool:
        return pn.state.curdoc is not None and pn.state.curdoc.session_context is not None

    def _start_polling(self):
        if self._callback is None:
            try:
                self._callback = pn.state.add_periodic_callback(self.poll, period=self.period_ms)
            except Exception:  # noqa: BLE001 -- no event loop (plain Python): poll on demand
                self._callback = None

    def _stop_polling(self):
        if self._callback is not None:
            self._callback.stop()
            self._callback = None

    def poll(self):
        """Render the newest snapshot if it changed; update progress; stop when idle."""
        s = self.session
        if self._following and s.version != self._shown_version:
            snap = s.latest()
            self._shown_version = s.version
            if snap is not None:
                self._safe_render(snap)
        self._update_status()
        if s.state in ("done", "error", "paused", "idle") or not s.active:
            self._stop_polling()
            self._finish()

    def _safe_render(self, snap):
        try:
            self.render(snap)
        except Exception as exc:  # noqa: BLE001 -- a view bug must not kill the run
            self._notify(f"Rendering failed: {type(exc).__name__}: {exc}", "warning")

    def _update_status(self):
        s = self.session
        snap = s.latest()
        obj = "" if snap is None or snap.objective is None else f", objective {snap.objective:.5g}"
        n = 0 if snap is None else snap.step
        self.status = f"**{s.state}** - step {n}{obj}"
        if len(s.record):
            self._scrub.end = max(len(s.record) - 1, 1)
            if self._following:
                self._scrub.value = len(s.record) - 1
            self._scrub.disabled = False

    def _finish(self):
        s = self.session
        if self._finished_reported or s.state not in ("done", "error"):
            return
        self._finished_reported = True
        for message in s.warnings:
            self._notify(message, "warning")
        if s.state == "error":
            self._notify(f"The fit failed: {s.error}", "error")
        elif self.on_finish is not None and s.estimator is not None:
            try:
                self.on_finish(s.estimator)
            except Exception as exc:  # noqa: BLE001
                self._notify(f"Post-fit view failed: {type(exc).__name__}: {exc}", "warning")

    def _notify(self, message, level="info"):
        self._alert.object = message
        self._alert.alert_type = {"error": "danger"}.get(level, level)
        self._alert.visible = True
        notifications = getattr(pn.state, "notifications", None)
        if notifications is not None:
            getattr(notifications, level, notifications.info)(message, duration=6000)

    def scrub_to(self, index: int | None) -> None:
        """Show recorded snapshot ``index`` (pausing a run); the last one resumes following."""
        items = self.session.record.items()
        if index is None or not items:
            return
        index = min(max(int(index), 0), len(items) - 1)
        if index == len(items) - 1 and self._following:
            return
        self._following = index == len(items) - 1
        if not self._following and self.session.state == "running":
            self.session.pause()
        if self._scrub.value != index:
            self._scrub.value = index
        self._safe_render(items[index])
