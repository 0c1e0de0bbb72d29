"""The live-fit runner every page reuses (DESIGN.md, "Live views").

Two layers:

* :class:`FitSession` -- pure Python, no Panel: a worker thread iterates
  ``estimator.fit_iter(...)`` of a :class:`FitJob` that was built *on the caller's thread*
  (the event loop: estimator, data and task features are read from widgets there, never on
  the worker). The worker never touches Bokeh/Panel objects; it appends each snapshot to a
  :class:`SnapshotRecord` (bounded in count and in bytes) and swaps a reference to the
  newest. After the fit, the job's ``after(estimator)`` (baselines, test scores) runs on the
  worker too, so no fit of any size runs on the event loop. States:
  ``idle -> running <-> paused -> done | error``; ``reset()`` -> idle.
* :class:`LiveFitRunner` -- a thin ``pn.viewable.Viewer``: Run / Step / Pause / Reset, speed,
  progress text, scrub slider, and *one* periodic callback (~100 ms) that is active only while
  a run is active and renders the newest snapshot if it changed (the consumer never sees a
  backlog: a slow render just skips snapshots).

Warnings raised on a worker are routed to that worker's list by a ``showwarning`` hook
installed once per process (:func:`configure_process`); no worker touches the process-wide
warning filters, and the list survives a failed fit. BLAS threads are limited to one, once,
by the same call at server start (threads of a 2-core server would only fight).
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import panel as pn
import param
from sklearn.exceptions import ConvergenceWarning

from explorer.app.offload import batched, locked_callback

__all__ = ["FitJob", "FitSession", "LiveFitRunner", "SnapshotRecord", "SPEEDS",
           "can_poll", "in_notebook_kernel", "release_memory_soon",
           "configure_process", "freeze_imports", "snapshot_nbytes"]

SPEEDS = {"1 step/s": 1.0, "2 steps/s": 2.0, "5 steps/s": 5.0, "10 steps/s": 10.0,
          "30 steps/s": 30.0, "unthrottled": None}

#: Unthrottled, the worker rests this fraction of each step's time (see ``FitSession._pace``).
UNTHROTTLED_REST = 0.25

#: Default bound of one session's record of snapshots, in bytes.
RECORD_MAX_BYTES = 64 * 1024 * 1024

#: The fits of one server process take turns, one step at a time. CPU-bound threads convoy
#: the event loop: each of its many GIL acquisitions (a socket write, a callback) waits for
#: every running fit thread's switch interval, so five live fits made other sessions' clicks
#: slow. Taking turns costs little (the GIL already runs one thread's Python at a time) and
#: leaves the loop one contender instead of five.
_STEP_TURN = threading.Lock()


# ---------------------------------------------------------------------- process set-up
_warning_sink = threading.local()
_previous_showwarning = None
_configure_lock = threading.Lock()
_configured = False


def _route_warning(message, category, filename, lineno, file=None, line=None):
    sink = getattr(_warning_sink, "messages", None)
    if sink is not None:
        sink.append(f"{category.__name__}: {message}")
        return
    _previous_showwarning(message, category, filename, lineno, file, line)


def install_warning_router() -> None:
    """Route warnings shown on a fit worker to that worker's list (idempotent).

    Python 3.11 has no thread-local warning filters, and ``warnings.catch_warnings`` on a
    worker swaps process-wide state under other threads' feet; a ``showwarning`` hook that
    looks at a thread-local sink leaves every other thread's warnings as they were.
    """
    global _previous_showwarning
    with _configure_lock:
        if warnings.showwarning is not _route_warning:
            _previous_showwarning = warnings.showwarning
            warnings.showwarning = _route_warning


def configure_process() -> None:
    """Once per server process: BLAS on one thread, warnings routed, kernels warming up.

    ``panel serve`` runs the app script once per session; only the first call acts.
    """
    global _configured
    with _configure_lock:
        if _configured:
            return
        _configured = True
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)
    _limit_malloc_arenas()
    # A refit that does not converge again must say so again (the default action shows a
    # warning once per text and line).
    warnings.filterwarnings("always", category=ConvergenceWarning)
    install_warning_router()


_frozen = False


def freeze_imports() -> None:
    """Once per process: the objects alive now (the imported modules of numpy, scipy,
    scikit-learn, Bokeh, Panel and this package, ~260,000) leave the cyclic garbage
    collector's generations.

    Each full collection walked them all: 115 ms with the imports alone, and the server
    makes one every few seconds while sessions open and fits record snapshots, stalling
    every session's clicks and frames. Frozen objects are still freed by reference counting;
    call this before a session's objects exist (the server's start, or the first session's
    build, before its page is made).
    """
    global _frozen
    import gc

    with _configure_lock:
        if _frozen:
            return
        _frozen = True
    gc.collect()
    gc.freeze()


def _limit_malloc_arenas(arenas: int = 2) -> None:
    """Two malloc arenas for the server process instead of glibc's 8 per core.

    Every worker thread that allocates gets an arena of its own by default, and memory freed
    in one is not handed back while the arena holds a live block: after thirty sessions
    had come and gone, the server kept 10-15% more than it started with. Two arenas (one
    for the event loop, one the workers share) keep what ended sessions freed reusable and
    trimmable; numerical work allocates large arrays by mmap, outside the arenas.
    """
    import ctypes

    M_ARENA_MAX = -8   # glibc's mallopt parameter
    try:
        ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, arenas)
    except (OSError, AttributeError):   # not glibc: nothing to set
        pass


_trim_pending = False


def _trim_memory() -> None:
    global _trim_pending
    _trim_pending = False
    import ctypes
    import gc
    import sys

    # CPython's type attribute cache (4096 entries) keeps a reference to the name of each
    # attribute looked up, and the sessions looked up thousands of names made at run time
    # (Bokeh's and Panel's from JSON patches and generated properties). Those few thousand
    # small strings, scattered, kept ~10-20 of the allocator's 1 MiB arenas of ended
    # sessions from going back to the system (30 sessions: 1.12x the memory before them,
    # 1.08x with the cache cleared). The cache refills on the next lookups.
    clear_type_cache = getattr(sys, "_clear_type_cache", None)   # CPython only
    if clear_type_cache is not None:
        clear_type_cache()
    # Bokeh collects garbage when it destroys a session's document, but before the
    # session's destroy hooks run (they stop its fits and drop its records and builds):
    # the cycles those leave would wait for a full collection that an idle server never
    # makes (60 s after thirty sessions closed, ~340,000 of their objects were still there).
    gc.collect()

    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):   # not glibc: nothing to trim
        pass


def release_memory_soon(delay_s: float = 2.0) -> None:
    """Give the memory of ended sessions back to the system, once, ``delay_s`` from now.

    A session's objects are freed when it ends: first CPython's type attribute cache lets go
    of the attribute names the sessions made, then a collection of the cycles its
    destroy hooks let go (Bokeh's own collection runs before those hooks), then
    ``malloc_trim(0)`` hands back the pages glibc keeps in its arenas (one per thread that
    allocated: fit workers, build threads). Calls within ``delay_s`` share one collection
    and trim (thirty tabs closing at once cost one). On the running event loop it is
    scheduled there (no thread comes and goes); without one it runs at once. Elsewhere than
    glibc only the collection is made.
    """
    global _trim_pending
    import asyncio

    if _trim_pending:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        _trim_memory()
        return
    _trim_pending = True
    loop.call_later(delay_s, _trim_memory)


def in_notebook_kernel() -> bool:
    """True on the event loop of a Jupyter kernel (a notebook cell or a widget's callback).

    There is no Bokeh server session there, but the kernel's asyncio loop runs Panel's
    periodic callbacks, and what they change reaches the notebook over Panel's comm.
    """
    import asyncio
    import sys

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


def can_poll() -> bool:
    """True where periodic callbacks run: a server session, or a notebook's kernel.

    Elsewhere (tests, scripts) nothing would call them: callers do the work at once instead.
    """
    doc = pn.state.curdoc
    return (doc is not None and doc.session_context is not None) or in_notebook_kernel()


def snapshot_nbytes(snapshot, *, materialise: bool = True) -> int | None:
    """Bytes a snapshot holds in arrays (its matrices and the arrays in its info).

    Snapshots are lazy (their matrices are built when first looked at); with
    ``materialise=False`` a snapshot not yet looked at gives None instead of being built.
    """
    total = 0
    for part in (getattr(snapshot, "matrices", None), getattr(snapshot, "info", None)):
        if not isinstance(part, Mapping):
            continue
        if not materialise and not getattr(part, "materialised", True):
            return None
        for value in part.values():
            total += value.nbytes if isinstance(value, np.ndarray) else 0
    return total


@dataclass
class FitJob:
    """What a worker runs: built on the event loop, only iterated on the worker.

    Attributes
    ----------
    estimator : MultiTaskEstimator
    args : tuple
        ``(X, y, task)`` for ``fit_iter``.
    kwargs : dict
        Further fit parameters (e.g. ``task_features``).
    after : callable (estimator) -> object, optional
        Runs on the worker once the fit is complete (baselines, test scores); its result is
        handed to the page's ``on_finish`` on the event loop.
    """

    estimator: Any
    args: tuple
    kwargs: dict = field(default_factory=dict)
    after: Callable[[Any], Any] | None = None


class SnapshotRecord:
    """A bounded list of snapshots: past ``cap`` items or ``max_bytes`` bytes, the older half
    is thinned to every 2nd. The first and the newest snapshot are always kept.

    >>> rec = SnapshotRecord(cap=8)
    >>> for i in range(100):
    ...     rec.append(i)
    >>> len(rec) <= 8, rec[0], rec[-1]
    (True, 0, 99)
    """

    def __init__(self, cap: int = 500, max_bytes: int = RECORD_MAX_BYTES):
        if int(cap) < 4:
            raise ValueError(f"SnapshotRecord: cap must be an int >= 4; got {cap!r}.")
        self.cap = int(cap)
        self.max_bytes = int(max_bytes)
        self._items: list = []
        self._sizes: list[int] = []
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """Bytes held by the recorded snapshots' arrays."""
        return sum(self._sizes)

    def append(self, item) -> None:
        # The snapshots of one fit have the same shapes: the first is measured, the others
        # (lazy, not looked at yet) are counted at its size, so recording never builds them.
        size = snapshot_nbytes(item, materialise=not self._sizes)
        if size is None:
            size = self._sizes[-1]
        with self._lock:
            self._items.append(item)
            self._sizes.append(size)
            while len(self._items) > 2 and (len(self._items) > self.cap
                                            or sum(self._sizes) > self.max_bytes):
                half = len(self._items) // 2
                keep = [0, *range(2, half, 2), *range(half, len(self._items))]
                self._items = [self._items[k] for k in keep]
                self._sizes = [self._sizes[k] for k in keep]
                if half <= 2:   # nothing left to thin: the first and the newest stay
                    break

    def clear(self) -> None:
        with self._lock:
            self._items, self._sizes = [], []

    def items(self) -> list:
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i):
        with self._lock:
            return self._items[i]


class FitSession:
    """Pure-Python state machine around a worker thread running a :class:`FitJob`.

    Parameters
    ----------
    prepare : callable () -> FitJob
        Called on the caller's thread (the event loop) when a run starts from idle.
    record_cap : int
        Bound on the number of recorded snapshots.
    record_max_bytes : int
        Bound on the bytes the recorded snapshots hold.

    Attributes
    ----------
    state : {"idle", "running", "paused", "done", "error"}
    error : str or None
        The reason of the failure (exception type and message) in state "error".
    warnings : list of str
        Warnings (e.g. ConvergenceWarning) raised during the fit, kept when it fails.
    estimator : MultiTaskEstimator or None
    result : object
        What the job's ``after`` returned (state "done").
    """

    def __init__(self, prepare: Callable[[], FitJob], *, record_cap: int = 500,
                 record_max_bytes: int = RECORD_MAX_BYTES):
        self.prepare = prepare
        self.record = SnapshotRecord(record_cap, record_max_bytes)
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
        self.result = None
        self._job: FitJob | None = None
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
        self._go(budget=None)

    def step(self) -> None:
        """Advance exactly one snapshot, then pause."""
        self._go(budget=1)

    def _go(self, budget: int | None) -> None:
        if self.state in ("done", "error"):
            return
        if self._job is None:
            try:
                job = self.prepare()   # on the caller's thread: widgets and data read here
            except Exception as exc:  # noqa: BLE001 -- a bad set-up reaches the user
                with self._cond:
                    self.error = f"{type(exc).__name__}: {exc}"
                    self.state = "error"
                return
            with self._cond:
                self._job, self.estimator = job, job.estimator
        with self._cond:
            self._budget = budget
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
        install_warning_router()
        self._token = threading.Event()
        self._thread = threading.Thread(target=self._work, args=(self._token, self._job),
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

    def _pace(self, token: threading.Event, last: float) -> None:
        sps = self.steps_per_second
        if not sps:
            # Unthrottled, the worker still leaves the event loop a share of the GIL: a
            # CPU-bound thread that only yields for an instant makes every one of the event
            # loop's many GIL acquisitions (each socket write, each callback) wait up to the
            # 5 ms switch interval, and a Pause click took seconds to show on a large page.
            # Resting a fifth of each step's time keeps the solver at ~80% of its speed.
            time.sleep(UNTHROTTLED_REST * (time.monotonic() - last))
            return
        end = last + 1.0 / sps
        with self._cond:
            while not token.is_set() and time.monotonic() < end:
                self._cond.wait(end - time.monotonic())

    def _work(self, token: threading.Event, job: FitJob):
        _warning_sink.messages = self.warnings   # this worker's own list, kept on failure
        try:
            iterator = job.estimator.fit_iter(*job.args, **job.kwargs)
            last = time.monotonic()
            while self._gate(token):
                try:
                    with _STEP_TURN:
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
                self._pace(token, last)
                last = time.monotonic()
            else:
                return  # stopped
            result = job.after(job.estimator) if job.after is not None else None
            with self._cond:
                if not token.is_set():
                    self.result = result
                    self.state = "done"
                self._cond.notify_all()
        except Exception as exc:  # noqa: BLE001 -- every failure reaches the user
            with self._cond:
                if token.is_set():
                    return
                self.error = f"{type(exc).__name__}: {exc}"
                self.state = "error"
                self._cond.notify_all()
        finally:
            _warning_sink.messages = None


class LiveFitRunner(pn.viewable.Viewer):
    """Run / Step / Pause / Reset controls, speed, progress and scrub over a :class:`FitSession`.

    Parameters
    ----------
    prepare : callable () -> FitJob
        Builds the estimator and its data on the event loop when a run starts.
    render : callable (Snapshot) -> None
        Page-owned; patches Bokeh sources. Called on the session's thread.
    on_finish : callable (estimator, result) -> None, optional
        Called once when a fit completes (``result``: what the job's ``after`` returned).
    on_reset : callable () -> None, optional
        Called after every reset (the Reset button, or the page's own ``reset()`` when its
        data or hyper-parameters change): the page clears its views here.
    notify : callable (message, level) -> None, optional
        Where messages go (the kit passes the session's one notification channel); without
        it they show in the runner's alert only.
    on_stop : callable () -> None, optional
        Called when the poll stops because the run did (paused, done, failed): no frame
        follows, so a page draws here what it left out of the frames of the run.
    speed : str
        The speed it opens at, a key of :data:`SPEEDS`.
    """

    status = param.String(default="Ready.")

    #: Most frames a second sent to one browser (the poll's tick is the other bound).
    MAX_FPS = 15.0

    #: Longest wait for the browser's acknowledgement of a frame before the next one goes
    #: anyway (a lost acknowledgement must not freeze the view).
    ACK_TIMEOUT_S = 2.0

    def __init__(self, prepare, render, on_finish=None, on_reset=None, *, notify=None,
                 on_stop=None, record_cap=500, record_max_bytes=RECORD_MAX_BYTES,
                 period_ms: int = 100, speed: str = "10 steps/s", **params):
        super().__init__(**params)
        from explorer.app.components import FramePacer, StatusLine

        self.pacer = FramePacer(width=0, height=0, margin=0)
        # The next frame goes as soon as the browser acknowledges this one (not at the next
        # tick: a frame and its acknowledgement take ~100 ms, and waiting for the tick after
        # that halved the frame rate), at most MAX_FPS a second.
        self.pacer.param.watch(locked_callback(self._on_drawn), "drawn")
        self._frame_sent_at = 0.0
        self._frame_booked = False
        self.session = FitSession(prepare, record_cap=record_cap,
                                  record_max_bytes=record_max_bytes)
        self.render, self.on_finish, self.on_reset = render, on_finish, on_reset
        self.on_stop = on_stop   # the run stopped (paused, done, failed): no frame follows
        self.notify = notify
        self.period_ms = int(period_ms)
        self._shown_version = -1
        self._callback = None
        self._following = True
        self._rendering = True
        self._finished_reported = False
        self._run_btn = pn.widgets.Button(label="▶ Run", color="primary", width=90)
        self._step_btn = pn.widgets.Button(label="Step", width=70)
        self._pause_btn = pn.widgets.Button(label="Pause", width=70)
        self._reset_btn = pn.widgets.Button(label="Reset", width=70)
        if speed not in SPEEDS:
            raise ValueError(f"speed must be one of {list(SPEEDS)}; got {speed!r}.")
        self._speed = pn.widgets.Select(label="Speed", options=list(SPEEDS), value=speed,
                                        width=130)
        self._scrub = pn.widgets.IntSlider(label="Recorded snapshot", start=0, end=1, value=0,
                                           disabled=True, sizing_mode="stretch_width")
        self._alert = pn.pane.Alert("", alert_type="danger", visible=False,
                                    sizing_mode="stretch_width")
        # The status line changes on every tick of a run: a component whose text change does
        # not lay the page out again (a Bokeh Div's did, see StatusLine).
        self._status = StatusLine(html=_status_html(self.status), height=24,
                                  sizing_mode="stretch_width", margin=(0, 5))
        self.param.watch(lambda event: setattr(self._status, "html", _status_html(event.new)),
                         "status")
        self._scrub_moved_at = 0.0
        # the buttons' callbacks change Bokeh models: under the document lock
        self._run_btn.on_click(locked_callback(lambda e: self.run()))
        self._step_btn.on_click(locked_callback(lambda e: self.step()))
        self._pause_btn.on_click(locked_callback(lambda e: self.pause()))
        self._reset_btn.on_click(locked_callback(lambda e: self.reset()))
        # "unthrottled" one click away from the teaching pace the page opens with
        self._fast_btn = pn.widgets.Button(label="Fast", width=60,
                                           description="Full speed (unthrottled)")
        self._fast_btn.on_click(lambda e: setattr(self._speed, "value", "unthrottled"))
        self._speed.param.watch(self._set_speed, "value")
        # Only a user's release of the slider (value_throttled) scrubs. The server moves
        # ``value`` on every poll, and during a fast run the browser echoes stale values of
        # it back; taking those for a user's scrub paused runs after a few hundred steps.
        self._scrub.param.watch(locked_callback(lambda event: self.scrub_to(event.new)),
                                "value_throttled")
        self._set_speed()
        self.controls = pn.Column(
            pn.Row(self._run_btn, self._step_btn, self._pause_btn, self._reset_btn,
                   self._fast_btn, self._speed),
            self._status, self._scrub, self._alert, self.pacer, sizing_mode="stretch_width")

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

    def close(self):
        """The session ended: stop the worker (paused or not) and drop the record, touching
        no widget. The session's document is being destroyed: a browser-side component's
        model takes no value any more (setting the status line there raised, and the end of
        the session's clean-up never ran)."""
        self._stop_polling()
        self.session.reset()

    def reset(self):
        """Stop the run and clear the record (data or hyper-parameters changed)."""
        self._stop_polling()
        self.session.reset()
        self._shown_version = -1
        self._finished_reported = False
        self._alert.visible = False
        self._scrub.param.update(value=0, end=1, disabled=True)
        self.status = "Ready."
        if self.on_reset is not None:
            try:
                self.on_reset()
            except Exception as exc:  # noqa: BLE001 -- a view bug must not break the controls
                self._notify(f"Clearing the views failed: {type(exc).__name__}: {exc}", "warning")

    def set_rendering(self, on: bool) -> None:
        """Draw frames (the page is shown) or not (hidden: the fit goes on, nothing is sent);
        turned back on, the newest snapshot is drawn at once."""
        self._rendering = bool(on)
        snap = self.session.latest()
        if on and self._following and snap is not None \
                and self.session.version != self._shown_version:
            self._shown_version = self.session.version
            self._safe_render(snap)
            self._update_status()

    def objective_trace(self, up_to_step: int) -> tuple[list, list]:
        """``(steps, objectives)`` of the recorded snapshots up to ``up_to_step``.

        The periodic callback renders only the newest snapshot (frames are taken, never
        queued), so a curve drawn from rendered frames would miss steps; curves are drawn
        from the record instead, which also serves scrubbing back.
        """
        kept = [(s.step, s.objective) for s in self.session.record.items()
                if s.step <= up_to_step and s.objective is not None]
        return [k for k, _ in kept], [v for _, v in kept]

    # ------------------------------------------------------------------ polling
    @staticmethod
    def _has_server() -> bool:
        return pn.state.curdoc is not None and pn.state.curdoc.session_context is not None

    def _start_polling(self):
        if self._callback is None and can_poll():
            from panel.io.callbacks import PeriodicCallback

            # background: Panel would otherwise mark the page busy and idle again on every
            # tick, two extra document updates per frame (~10% of the event loop measured).
            self._callback = PeriodicCallback(callback=self.poll, period=self.period_ms,
                                              background=True)
            self._callback.start()
        elif self._callback is None and self.session.state == "error":
            self.poll()

    def _stop_polling(self):
        if self._callback is not None:
            self._callback.stop()
            self._callback = None

    def poll(self):
        """Render the newest snapshot if it changed; update progress; stop when idle.

        What a tick changes goes to the browser as one message
        (:func:`~explorer.app.offload.batched`): unheld, a frame was three to six messages,
        and Bokeh indexed every model of the session's document for each (Trees' pause p95
        at the defaults: 555 ms unheld; 214-462 ms held, over four benchmark runs)."""
        with batched(pn.state.curdoc):
            self._poll()

    def _poll(self):
        s = self.session
        # One reading of the state for the whole tick (the worker may finish meanwhile: a
        # status written from an older reading than the stop decision would stay stale);
        # "active" first, so a worker seen gone has already written its final state.
        active = s.active
        state = s.state
        behind = self._rendering and self._following and s.version != self._shown_version
        if behind and self._browser_ready():
            self._send_frame()
            behind = False
        self._update_status(state=state)
        if behind:
            return   # the browser is still drawing the last frame: the newest goes next tick
        if state in ("done", "error", "paused", "idle") or not active:
            self._stop_polling()
            if self.on_stop is not None:
                self.on_stop()
            self._finish()

    def _send_frame(self) -> None:
        """Render the newest snapshot (the browser has drawn the last frame)."""
        snap = self.session.latest()
        self._shown_version = self.session.version
        if snap is not None:
            self._safe_render(snap)
            self._frame_sent()

    def _on_drawn(self, *_) -> None:
        """The browser drew the last frame: the next goes now if one is due (on the loop).

        An acknowledgement that comes sooner than ``1 / MAX_FPS`` after its frame books the
        next frame for that moment: left to the next poll tick (up to 100 ms later), the
        frames of a page the browser draws in ~50 ms went at the tick's 10 a second."""
        s = self.session
        if (self._callback is None or not self._rendering or not self._following
                or s.version == self._shown_version):
            return
        wait_s = 1.0 / self.MAX_FPS - (time.monotonic() - self._frame_sent_at)
        doc = pn.state.curdoc
        if wait_s > 0:
            if self._has_server() and not self._frame_booked:
                self._frame_booked = True
                doc.add_timeout_callback(lambda: self._booked_frame(doc),
                                         max(1, int(wait_s * 1000)))
            return
        with batched(doc):
            self._send_frame()
            self._update_status()

    def _booked_frame(self, doc) -> None:
        """The moment booked by an early acknowledgement (a timeout callback on ``doc``)."""
        from panel.io.state import set_curdoc

        self._frame_booked = False
        if self.pacer.drawn >= self.pacer.frame:   # no frame went meanwhile (the poll's)
            with set_curdoc(doc):
                self._on_drawn()

    def _browser_ready(self) -> bool:
        """True when the browser has drawn the last frame (always, without a server)."""
        if not self._has_server() or self.pacer.drawn >= self.pacer.frame:
            return True
        return time.monotonic() - self._frame_sent_at > self.ACK_TIMEOUT_S

    def _frame_sent(self) -> None:
        if self._has_server():
            self._frame_sent_at = time.monotonic()
            self.pacer.frame += 1

    def _safe_render(self, snap):
        try:
            self.render(snap)
        except Exception as exc:  # noqa: BLE001 -- a view bug must not kill the run
            self._notify(f"Rendering failed: {type(exc).__name__}: {exc}", "warning")

    def _update_status(self, shown=None, state=None):
        s = self.session
        latest = s.latest()
        snap = latest if shown is None else shown
        obj = "" if snap is None or snap.objective is None else f", objective {snap.objective:.5g}"
        n = 0 if snap is None else snap.step
        text = f"**{s.state if state is None else state}** - step {n}{obj}"
        if shown is not None and latest is not None and shown is not latest:
            text += f" (scrubbed back; the fit is at step {latest.step})"
        self.status = text
        # the slider follows a run twice a second (every frame cost three widget updates);
        # it is exact whenever the run is not running, and on a scrub
        now = time.monotonic()
        running = (s.state if state is None else state) == "running"
        if len(s.record) and (shown is not None or not running
                              or now - self._scrub_moved_at >= 0.5):
            self._scrub_moved_at = now
            last = len(s.record) - 1
            self._scrub.param.update(end=max(last, 1), disabled=False,
                                     **({"value": last} if self._following else {}))

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
                self.on_finish(s.estimator, s.result)
            except Exception as exc:  # noqa: BLE001
                self._notify(f"Post-fit view failed: {type(exc).__name__}: {exc}", "warning")

    def _notify(self, message, level="info"):
        self._alert.object = _escape(message)
        self._alert.alert_type = {"error": "danger"}.get(level, level)
        self._alert.visible = True
        if self.notify is not None:
            self.notify(message, level)

    def scrub_to(self, index: int | None) -> None:
        """Show recorded snapshot ``index`` (pausing a run); the last one resumes following.

        The views and the status show exactly that snapshot, labelled with its solver step.
        """
        items = self.session.record.items()
        if index is None or not items:
            return
        index = min(max(int(index), 0), len(items) - 1)
        self._following = index == len(items) - 1
        if not self._following and self.session.state == "running":
            self.session.pause()
        if self._scrub.value != index:
            self._scrub.value = index
        self._safe_render(items[index])
        if self._following:
            self._shown_version = self.session.version
        self._update_status(shown=items[index])


def _status_html(text: str) -> str:
    """The status line's Markdown (``**state** - step N, ...``) as HTML, escaped.

    >>> _status_html("**running** - step 3, objective 0.5")
    '<b>running</b> - step 3, objective 0.5'
    """
    import re

    return re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", _escape(text))


def _escape(text: str) -> str:
    import html

    return html.escape(str(text), quote=False)
