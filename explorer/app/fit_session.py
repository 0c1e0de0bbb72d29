"""A live fit without Panel: a worker iterates ``estimator.fit_iter`` and records snapshots.

:class:`FitSession` runs a :class:`FitJob` that was built on the caller's thread (the event
loop: estimator, data and task features are read from widgets there) as a long job of a
:class:`~explorer.app.work.WorkService`: a worker thread with a stop token it checks between
steps. The worker never touches Bokeh or Panel objects; it appends each snapshot to a
:class:`SnapshotRecord` (bounded in count and in bytes) and swaps a reference to the newest.
After the fit, the job's ``after(estimator)`` (baselines, test scores) runs on the worker too.
States: ``idle -> running <-> paused -> done | error``; ``reset()`` -> idle.

An estimator without ``fit_iter`` (a user's class: the contract makes it optional) is fitted
with one call of ``fit`` on the worker, recorded as one snapshot carrying its
``task_relationships()`` matrices (``FitSession.one_fit`` says so while it runs).

Notebooks and tests use it as is; :class:`explorer.app.runner.LiveFitRunner` puts controls and
frames on top.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from explorer.app.process import capture_warnings
from explorer.app.work import Token, WorkService
from explorer.models.base import Snapshot

__all__ = ["FitJob", "FitSession", "RECORD_MAX_BYTES", "SnapshotRecord", "UNTHROTTLED_REST",
           "one_fit_snapshots", "snapshot_nbytes"]

#: Unthrottled, the worker rests this fraction of each step's time (see ``FitSession._pace``).
UNTHROTTLED_REST = 0.25

#: Default bound of one session's record of snapshots, in bytes.
RECORD_MAX_BYTES = 64 * 1024 * 1024

_session_ids = itertools.count()


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


def one_fit_snapshots(estimator, *args, **kwargs) -> Iterator[Snapshot]:
    """``fit_iter`` for an estimator that has none: one ``fit``, then one snapshot (step 1,
    no objective) whose matrices are the fitted estimator's ``task_relationships()``."""
    estimator.fit(*args, **kwargs)
    matrices = {str(key): np.asarray(value) for key, value in
                dict(estimator.task_relationships()).items()}
    yield Snapshot(step=1, objective=None, matrices=matrices)


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


class _FitWorker:
    """The worker's side of a :class:`FitSession` (its thread, through the session's work
    service): it waits while paused, paces the steps, records each snapshot under the
    session's condition and ends in "done" or "error"; a cancelled token (a stopped worker)
    writes nothing."""

    _cond: threading.Condition
    _stopped: dict

    def _ensure_thread(self):
        if self.active:
            return
        job, sink = self._job, self.warnings   # this run's: a later reset makes new ones
        # A warm refit iterates the estimator a stopped worker may still be fitting: the new
        # worker waits (on its own thread) for those to end; one estimator, one thread.
        with self._cond:
            before = [w for w, estimator in self._stopped.values()
                      if estimator is job.estimator]
        self._worker = self.work.start(
            self._key, lambda token: self._work(token, job, sink, before), name="explorer-fit")
        self._worker_estimator = job.estimator

    def _gate(self, token: Token) -> bool:
        """Wait while paused; return False when the worker must stop."""
        with self._cond:
            while not token.cancelled and (self.state == "paused" or self._budget == 0):
                if self.state == "running" and self._budget == 0:
                    self.state = "paused"
                self._parked = True
                self._cond.notify_all()
                self._cond.wait(0.1)
            self._parked = False
            return not token.cancelled

    def _pace(self, token: Token, last: float) -> None:
        sps = self.steps_per_second
        if not sps:
            # Unthrottled, the worker still rests: a CPU-bound thread that yields only for an
            # instant makes each of the event loop's GIL acquisitions wait a switch interval.
            time.sleep(UNTHROTTLED_REST * (time.monotonic() - last))
            return
        end = last + 1.0 / sps
        with self._cond:
            while not token.cancelled and time.monotonic() < end:
                self._cond.wait(end - time.monotonic())

    def _work(self, token: Token, job: FitJob, sink: list, before: list):
        for worker in before:   # stopped workers of the same estimator end first
            while worker.alive and not token.cancelled:
                worker.join(0.1)
        try:
            if not token.cancelled:
                with capture_warnings(sink):   # this worker's own list, kept on failure
                    self._iterate(token, job)
        finally:
            with self._cond:   # ended: nothing of it is kept
                self._stopped.pop(token, None)

    def _iterate(self, token: Token, job: FitJob):
        try:
            steps = (job.estimator.fit_iter if hasattr(job.estimator, "fit_iter")
                     else lambda *a, **k: one_fit_snapshots(job.estimator, *a, **k))
            iterator = steps(*job.args, **job.kwargs)
            last = time.monotonic()
            while self._gate(token):
                try:
                    snap = next(iterator)
                except StopIteration:
                    break
                with self._cond:   # a stopped worker never writes
                    if token.cancelled:
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
                if not token.cancelled:
                    self.result = result
                    self.state = "done"
                self._cond.notify_all()
        except Exception as exc:  # noqa: BLE001 -- every failure reaches the user
            with self._cond:
                if token.cancelled:
                    return
                self.error = f"{type(exc).__name__}: {exc}"
                self.state = "error"
                self._cond.notify_all()


class FitSession(_FitWorker):
    """Pure-Python state machine around a worker running a :class:`FitJob`.

    Parameters
    ----------
    prepare : callable () -> FitJob
        Called on the caller's thread (the event loop) when a run starts from idle.
    work : WorkService, optional
        The session's work service; the worker is its long job (cancelled when the session
        ends). Default: a service of its own.
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
    one_fit : bool
        The job's estimator has no ``fit_iter``: the run is one ``fit`` (no steps to watch).
    """

    def __init__(self, prepare: Callable[[], FitJob], *, work: WorkService | None = None,
                 record_cap: int = 500, record_max_bytes: int = RECORD_MAX_BYTES):
        self.prepare = prepare
        self.work = work if work is not None else WorkService()
        self.record = SnapshotRecord(record_cap, record_max_bytes)
        self.steps_per_second: float | None = None
        self._key = f"fit-{next(_session_ids)}"
        self._cond = threading.Condition()
        # One stop token per worker. stop() and reset() never wait for the worker (they run
        # on the event loop): a stopped worker that is inside a step (or the ``after`` step)
        # finishes it in the background with its own, already cancelled, token, so it can
        # neither resume nor write into the next run's record, and lets go of its job when it
        # ends. ``_stopped``: those still running (token -> their handle and estimator).
        self._worker = None
        self._worker_estimator = None
        self._stopped: dict[Token, tuple[Any, Any]] = {}
        self._reset_fields()

    def _reset_fields(self):
        self.state = "idle"
        self.error: str | None = None
        self.warnings: list[str] = []
        self.estimator = None
        self.result = None
        self.one_fit = False
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
        return self._worker is not None and self._worker.alive

    @property
    def _thread(self) -> threading.Thread | None:
        """The worker's thread (None before a run and after a stop)."""
        return None if self._worker is None else self._worker.thread

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
                self.one_fit = not hasattr(job.estimator, "fit_iter")
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

    def stop(self) -> None:
        """Tell the worker to stop; return at once, never waiting for it (the event loop
        calls this on every change of data or hyper-parameters).

        The worker stops between two steps; one inside a long step (or the job's ``after``)
        ends it in the background, writes nothing and calls nothing back, and what it holds
        is released when its thread ends. :meth:`join` waits for that (tests, scripts)."""
        worker = self._worker
        with self._cond:
            if worker is not None:
                worker.token.cancel()
                self._stopped[worker.token] = (worker, self._worker_estimator)
                self._stopped = {t: we for t, we in self._stopped.items() if we[0].alive}
            self._cond.notify_all()
        self._worker, self._worker_estimator = None, None

    def reset(self) -> None:
        """Stop any run (without waiting for its worker) and clear the record; back to
        "idle"."""
        self.stop()
        with self._cond:
            self._reset_fields()

    def join(self, timeout: float | None = None) -> bool:
        """Wait until every worker this session started has ended (tests and scripts only:
        never on the event loop); True when they have."""
        end = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            workers = [w for w, _ in self._stopped.values()]
        workers += [self._worker] if self._worker is not None else []
        for worker in workers:
            worker.join(None if end is None else max(0.0, end - time.monotonic()))
        return not any(worker.alive for worker in workers)

    def wait(self, timeout: float = 10.0) -> bool:
        """Block until the worker is paused, done, errored or stopped (for tests/notebooks)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._cond:
                if not self.active or (self.state != "running" and self._parked):
                    return True
                self._cond.wait(0.02)
        return False
