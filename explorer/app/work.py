"""The one work service: everything a session computes off the event loop goes through it.

docs/DESIGN.md ("The app"): the event loop only dispatches. A session's :class:`WorkService` runs a
job's ``compute`` on a process-wide executor and hands its result to ``apply`` on the session's
event loop (the document's ``add_next_tick_callback``, with that document current and its
changes held into one message), where Bokeh and Panel objects may be touched.

* Jobs are keyed: a newer request under a key cancels the older one (its :class:`Token` is
  set, its result dropped), so three seeds typed in a row build and show the third data set.
* ``cancel(key)`` stops a job whose inputs changed (its ``on_error`` hears
  :class:`Cancelled`); ``close()`` ends the session: every job is cancelled, nothing more is
  applied.
* A live fit's worker is a long job (:meth:`WorkService.start`): a thread of its own with the
  same kind of token, which it checks between steps.
* Where nothing runs an event loop for the session (tests, scripts) ``submit`` runs
  ``compute`` and ``apply`` at once on the caller's thread.
* Sessions opening together (a class opening one link) take turns: :class:`Admission`, one
  per server process, handed to each session's app.
* A recurring check (:meth:`WorkService.every`: is the class's round revealed yet?) runs
  its ``compute`` off the loop every few seconds and its ``apply`` on it, driven by the one
  periodic callback the service owns, which runs only while a check is registered and
  stops with the session. A page never starts a periodic callback of its own.

The module imports no Panel at import time (notebooks and the Panel-free fit session use it).

>>> seen = []
>>> token = WorkService().submit("data", lambda: 6 * 7, seen.append)
>>> seen
[42]
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import os
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

__all__ = ["BACKGROUND_NICENESS", "LONG", "QUICK", "TURNS", "Admission", "Cancelled", "Job",
           "Token", "WorkService", "after_this_paint", "answering", "batched", "busy",
           "can_poll", "in_notebook_kernel", "locked", "on_loop", "served", "start_thread"]

log = logging.getLogger(__name__)

#: Executors shared by every session of the process, named by ``submit(..., pool=...)``.
QUICK = "quick"   # short builds (data, splits): one thread per core of the target machine
#: Work that already fills the machine (a comparison's worker processes): one job at a
#: time in the process; :func:`busy` says whether one waits or runs (Compare says so).
TURNS = "turns"
LONG = "long"     # work that may last (figures, curves): a thread per job

_executors: dict[str, ThreadPoolExecutor] = {}
_executors_lock = threading.Lock()
_queued: dict[str, int] = {QUICK: 0, TURNS: 0, LONG: 0}

#: Every served session's jobs of :meth:`WorkService.submit` not applied yet (their tokens,
#: from the submit to the end of their ``apply``, which may submit the next step of the same
#: answer): an open session's answer in the making. Weak: a job whose callbacks are gone
#: (its session ended) is not waited for.
_answering: weakref.WeakSet = weakref.WeakSet()


#: Every open served session's :class:`WorkService` (made by :meth:`WorkService.for_document`
#: for a server's document, until closed): how many sessions this process serves.
_serving: weakref.WeakSet = weakref.WeakSet()


def answering() -> bool:
    """True while a served session of this process waits for an answer being made (a data
    build, a page's figures): :class:`Admission` lets it go before a new session's build."""
    return len(_answering) > 0


class Cancelled(Exception):
    """A job was cancelled (its inputs changed, or a newer request replaced it)."""


class Token:
    """A job's cancellation flag; a long computation checks it between its steps.

    Calling the token answers "should I stop?" (the ``should_stop`` of
    :func:`explorer.compare.compare`).
    """

    __slots__ = ("__weakref__", "_event")

    def __init__(self):
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def __call__(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` if the job was cancelled."""
        if self._event.is_set():
            raise Cancelled()


class Job:
    """A long job's handle: its token and its thread."""

    def __init__(self, token: Token, thread: threading.Thread):
        self.token, self.thread = token, thread

    @property
    def alive(self) -> bool:
        return self.thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        if self.thread is not threading.current_thread():
            self.thread.join(timeout)


def _executor(pool: str) -> ThreadPoolExecutor:
    workers = {QUICK: 2, TURNS: 1, LONG: 16}[pool]
    with _executors_lock:
        if pool not in _executors:
            _executors[pool] = ThreadPoolExecutor(max_workers=workers,
                                                  thread_name_prefix=f"explorer-{pool}")
        return _executors[pool]


def busy(pool: str) -> bool:
    """True while a job waits for or runs on ``pool`` (a comparison says it waits its turn)."""
    with _executors_lock:
        return _queued[pool] > 0


#: How far a background thread (:func:`start_thread`) stands behind the rest of the machine:
#: added to its nice value (Linux schedules each thread with a nice value of its own).
BACKGROUND_NICENESS = 10


def _behind_the_rest() -> None:
    """Lower the calling thread's CPU priority by :data:`BACKGROUND_NICENESS` (Linux only:
    elsewhere ``setpriority`` of a thread's id would name a process)."""
    if not sys.platform.startswith("linux"):
        return
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid,
                       min(19, os.getpriority(os.PRIO_PROCESS, tid) + BACKGROUND_NICENESS))
    except OSError:   # a sandbox that forbids it: the thread runs at its process's priority
        pass


def start_thread(target: Callable[[], None], name: str, *, behind: bool = False
                 ) -> threading.Thread:
    """A daemon thread for work that may outlive its caller's interest (a fit parked on
    Pause, the process's warm-up): an interpreter exits without waiting for it.

    ``behind``: the thread runs behind the rest of the machine (:data:`BACKGROUND_NICENESS`),
    so that on a busy server the event loop's answers (a class's changes, pages opening)
    get the CPU first (:meth:`WorkService.start` says when).
    """
    def run() -> None:
        if behind:
            _behind_the_rest()
        target()

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


#: True while a callback runs where Bokeh's document lock is held (see :func:`locked`).
_holding_lock: contextvars.ContextVar[bool] = contextvars.ContextVar("holding_lock",
                                                                     default=False)


def _loop_hooks(doc) -> tuple:
    """``(schedule, repeat)`` of a :class:`WorkService` for ``doc``'s session: on its event
    loop (served), on the notebook kernel's loop, or none (no loop: jobs run at once)."""
    if served(doc):
        def schedule(callback: Callable[[], None]) -> None:
            doc.add_next_tick_callback(lambda: on_loop(doc, callback))

        def repeat(callback: Callable[[], None], period_ms: int) -> Callable[[], None]:
            handle = doc.add_periodic_callback(lambda: on_loop(doc, callback), period_ms)

            def stop() -> None:
                try:
                    doc.remove_periodic_callback(handle)
                except ValueError:   # the session ended first: Bokeh removed it
                    pass

            return stop

        return schedule, repeat
    if in_notebook_kernel():
        import asyncio

        loop = asyncio.get_running_loop()

        def every(callback: Callable[[], None], period_ms: int) -> Callable[[], None]:
            handle = None

            def tick() -> None:
                nonlocal handle
                on_loop(doc, callback)
                handle = loop.call_later(period_ms / 1000, tick)

            handle = loop.call_later(period_ms / 1000, tick)
            return lambda: handle.cancel()

        return (lambda callback: loop.call_soon_threadsafe(on_loop, doc, callback)), every
    return None, None


class _RecurringChecks:
    """The recurring checks of a :class:`WorkService` (:meth:`every`): one ticker, the
    service's one periodic callback, runs the checks that are due as jobs of
    :meth:`WorkService.submit`."""

    _lock: threading.Lock
    _checks: dict
    _ticker: tuple | None
    closed: bool
    repeat: Callable | None

    def every(self, key: str, seconds: float, compute: Callable[[], Any],
              apply: Callable[[Any], None], on_error: Callable[[Exception], None] | None = None,
              *, pool: str = QUICK) -> None:
        """Check something every ``seconds`` until :meth:`stop_every` (or the session's end):
        ``compute()`` off the loop (a job of :meth:`submit` under the key ``every:<key>``),
        then ``apply(result)`` (or ``on_error(exc)``) on it. The first check runs at once; a
        check still running when the next is due is not doubled. A newer ``every`` under
        ``key`` replaces the older one.

        The one periodic callback of the service (``repeat``, served: a Bokeh periodic
        callback of the session's document) drives every check of the session; it runs
        only while a check is registered. Where there is no loop (tests, scripts), a check
        runs once now and again on each :meth:`check`.

        Used by a class (:mod:`explorer.app.class_link`): every second a student's session
        asks the shared store whether the round was revealed.
        """
        if seconds <= 0:
            raise ValueError(f"seconds must be > 0; got {seconds!r}.")
        with self._lock:
            if self.closed:
                return
            self._checks[key] = _Check(float(seconds), compute, apply, on_error, pool)
        self._retime()
        self.check(key)

    def stop_every(self, key: str) -> None:
        """Stop the recurring check ``key`` (a check under way is dropped, never applied)."""
        with self._lock:
            found = self._checks.pop(key, None)
        if found is not None:
            self.cancel(f"every:{key}")
            self._retime()

    def checking(self, key: str) -> bool:
        """True while a recurring check runs under ``key``."""
        with self._lock:
            return key in self._checks

    def check(self, key: str) -> None:
        """Run the recurring check ``key`` now (after an action whose effect it should show
        at once), unless one is under way; its next run is counted from now."""
        with self._lock:
            found = self._checks.get(key)
        if found is None or self.pending(f"every:{key}"):
            return
        found.due = time.monotonic() + found.seconds

        def apply(result, found=found) -> None:
            with self._lock:
                current = self._checks.get(key) is found
            if current:
                found.apply(result)

        def failed(exc: Exception, found=found) -> None:
            with self._lock:
                current = self._checks.get(key) is found
            if not current or isinstance(exc, Cancelled):
                return
            if found.on_error is not None:
                found.on_error(exc)
            else:
                log.warning("recurring check %r failed: %s", key, exc)

        self.submit(f"every:{key}", found.compute, apply, failed, pool=found.pool)

    def _tick(self) -> None:
        """The ticker's callback (on the loop): every check that is due runs."""
        now = time.monotonic()
        with self._lock:
            due = [key for key, found in self._checks.items() if found.due <= now]
        for key in due:
            self.check(key)

    def _retime(self) -> None:
        """Start, re-time or stop the ticker for the checks registered now."""
        if self.repeat is None:
            return
        with self._lock:
            period = (max(100, int(min(c.seconds for c in self._checks.values()) * 500))
                      if self._checks and not self.closed else None)
            ticker, self._ticker = self._ticker, None
            if ticker is not None and ticker[0] == period:
                self._ticker = ticker
                return
        if ticker is not None:
            ticker[1]()
        if period is not None:
            stop = self.repeat(self._tick, period)
            with self._lock:
                self._ticker = (period, stop)


class _Posts:
    """Callbacks posted to the loop by a :class:`WorkService`'s jobs (:meth:`post`): at most
    one waits per key."""

    _lock: threading.Lock
    _posts: dict
    closed: bool
    schedule: Callable | None
    asynchronous: bool

    def post(self, key: str, callback: Callable[[], None]) -> None:
        """Run ``callback`` on the loop; at most one waits per key (a newer one replaces it),
        so a fast producer never leaves the browser a backlog (progress counts)."""
        if not self.asynchronous:
            callback()
            return
        with self._lock:
            if self.closed:
                return
            first = key not in self._posts
            self._posts[key] = callback
        if first:
            self.schedule(lambda: self._run_post(key))

    def _run_post(self, key: str) -> None:
        with self._lock:
            callback = self._posts.pop(key, None)
            if self.closed:
                return
        if callback is not None:
            callback()


class WorkService(_RecurringChecks, _Posts):
    """One session's keyed jobs: compute off the loop, apply on it, the newest per key wins.

    Parameters
    ----------
    schedule : callable (callback) -> None, optional
        Puts a callback on the session's event loop. None: no loop, jobs run synchronously.
    """

    def __init__(self, schedule: Callable[[Callable[[], None]], None] | None = None,
                 repeat: Callable[[Callable[[], None], int], Callable[[], None]] | None = None):
        self.schedule = schedule
        #: ``repeat(callback, period_ms) -> stop``: a periodic callback on the session's loop
        #: (:meth:`every`'s ticker); None: no loop, checks run when :meth:`check` is called
        self.repeat = repeat
        self._tokens: dict[str, Token] = {}
        self._futures: dict[str, tuple] = {}   # key -> (future, pool, finish) while queued
        self._posts: dict[str, Callable[[], None]] = {}
        self._checks: dict[str, _Check] = {}
        self._ticker: tuple[int, Callable[[], None]] | None = None   # (period, stop)
        self._lock = threading.Lock()
        self.closed = False

    @classmethod
    def for_document(cls, doc) -> WorkService:
        """The service of ``doc``'s session: results applied on its event loop (served), on
        the notebook kernel's loop, or at once (no loop)."""
        service = cls(*_loop_hooks(doc))
        if served(doc):
            _serving.add(service)
        return service

    @property
    def asynchronous(self) -> bool:
        """True when jobs run off the caller's thread (there is an event loop to keep free)."""
        return self.schedule is not None

    def pending(self, key: str) -> bool:
        """True while a request under ``key`` has not been applied (or dropped) yet."""
        with self._lock:
            return key in self._tokens

    # ------------------------------------------------------------------ jobs
    def submit(self, key: str, compute: Callable[..., Any], apply: Callable[[Any], None],
               on_error: Callable[[Exception], None] | None = None, *, pool: str = QUICK,
               cancellable: bool = False) -> Token:
        """Run ``compute()`` off the loop, then ``apply(result)`` (or ``on_error(exc)``) on it.

        ``cancellable``: ``compute`` takes the job's :class:`Token` and checks it between
        steps. Served, ``compute`` starts from the loop's next tick, after what the caller
        changes has gone out. A job cancelled by :meth:`cancel` ends with ``on_error`` (the
        exception it raised, or :class:`Cancelled`); a superseded one is dropped.
        """
        token = Token()
        if not self.asynchronous:
            return self._submit_now(key, token, compute, apply, on_error, cancellable)
        with self._lock:
            if self.closed:
                token.cancel()
                return token
            previous = self._tokens.get(key)
            self._tokens[key] = token
        if previous is not None:
            previous.cancel()
        _answering.add(token)
        finish = functools.partial(self._finish, key, token, apply, on_error)

        def work() -> None:   # on an executor's thread
            try:
                if token.cancelled:
                    outcome, failed = Cancelled(), True
                else:
                    outcome = compute(token) if cancellable else compute()
                    failed = False
            except Exception as exc:  # noqa: BLE001 -- handed to on_error on the loop
                outcome, failed = exc, True
            finally:
                _release(pool)
            self.schedule(lambda: finish(outcome, failed))

        def enqueue() -> None:   # on the loop's next tick
            if token.cancelled:   # superseded or cancelled before it started: never runs
                finish(Cancelled(), True)
                return
            with _executors_lock:
                _queued[pool] += 1
            future = _executor(pool).submit(work)
            with self._lock:
                if self._tokens.get(key) is token:
                    self._futures[key] = (future, pool, finish)

        self.schedule(enqueue)
        return token

    def _submit_now(self, key: str, token: Token, compute, apply, on_error,
                    cancellable: bool) -> Token:
        """:meth:`submit` without a loop: compute and apply on the caller's thread."""
        with self._lock:
            self._tokens[key] = token   # cancel(key) reaches it while it computes
        try:
            result = compute(token) if cancellable else compute()
        except Exception as exc:
            if on_error is None:
                raise
            on_error(exc)
            return token
        finally:
            with self._lock:
                if self._tokens.get(key) is token:
                    del self._tokens[key]
        apply(result)
        return token

    def _finish(self, key: str, token: Token, apply, on_error, outcome: Any,
                failed: bool) -> None:
        """A job of :meth:`submit` ended (on the event loop): apply its outcome, unless it
        was superseded or the session ended."""
        try:
            self._apply(key, token, apply, on_error, outcome, failed)
        finally:
            _answering.discard(token)

    def _apply(self, key: str, token: Token, apply, on_error, outcome: Any,
               failed: bool) -> None:
        with self._lock:
            if self.closed or self._tokens.get(key) is not token:
                return   # superseded, or the session ended
            del self._tokens[key]
            self._futures.pop(key, None)
        if token.cancelled and not failed:
            outcome, failed = Cancelled(), True
        if not failed:
            apply(outcome)
        elif on_error is not None:
            on_error(outcome)
        elif not isinstance(outcome, Cancelled):
            log.error("work %r failed", key, exc_info=outcome)

    def start(self, key: str, run: Callable[[Token], None], *, name: str = "explorer-fit"
              ) -> Job:
        """Run ``run(token)`` on a thread of its own, served or not (a live fit's worker,
        parked while paused). A newer job under ``key`` cancels this one's token.

        While the process serves other sessions too, the thread runs behind the loop's
        answers (``start_thread(behind=True)``): a class's changes go first (measured in
        benchmarks/RESULTS.md). A visitor alone keeps full priority: the frames are theirs.
        """
        token = Token()
        with self._lock:
            previous = self._tokens.get(key)
            self._tokens[key] = token
            if self.closed:
                token.cancel()
        if previous is not None:
            previous.cancel()

        def target() -> None:
            try:
                run(token)
            finally:
                with self._lock:
                    if self._tokens.get(key) is token:
                        del self._tokens[key]

        return Job(token, start_thread(target, name, behind=len(_serving) > 1))

    def cancel(self, key: str) -> None:
        """The inputs of the job under ``key`` changed: it stops (a job still queued never
        starts) and its ``on_error`` hears of it."""
        with self._lock:
            token = self._tokens.get(key)
            queued = self._futures.get(key)
        if token is not None:
            token.cancel()
        if queued is not None:
            future, pool, finish = queued
            if future.cancel():   # it never started: say so now
                _release(pool)
                self.schedule(lambda: finish(Cancelled(), True))

    def close(self) -> None:
        """The session ended: every job is cancelled and nothing more is applied."""
        _serving.discard(self)
        with self._lock:
            self.closed = True
            self._checks.clear()
            ticker, self._ticker = self._ticker, None
        if ticker is not None:
            ticker[1]()
        with self._lock:
            tokens, futures = list(self._tokens.values()), list(self._futures.values())
            self._tokens.clear()
            self._futures.clear()
            self._posts.clear()
        for token in tokens:
            token.cancel()
            _answering.discard(token)
        for future, pool, _ in futures:
            if future.cancel():
                _release(pool)


class _Check:
    """A recurring check of :meth:`WorkService.every`."""

    __slots__ = ("apply", "compute", "due", "on_error", "pool", "seconds")

    def __init__(self, seconds, compute, apply, on_error, pool):
        self.seconds, self.compute, self.apply = seconds, compute, apply
        self.on_error, self.pool, self.due = on_error, pool, 0.0


def _release(pool: str) -> None:
    with _executors_lock:
        _queued[pool] -= 1


def on_loop(doc, callback: Callable[[], None]) -> None:
    """Run ``callback`` (called on the session's loop, with Bokeh's document lock held) with
    ``doc`` current and its changes sent as one message; :func:`locked` calls inside it run
    at once."""
    marker = _holding_lock.set(True)
    try:
        with batched(doc):
            callback()
    finally:
        _holding_lock.reset(marker)


@contextmanager
def batched(doc):
    """Make ``doc`` Panel's current document and send what changes in it as one message.

    Each message makes Bokeh index every model of the session's document and the browser lay
    the page out once, so a callback's changes go together. Without a server session this
    only sets the current document.
    """
    from panel.io.document import hold
    from panel.io.state import set_curdoc

    with set_curdoc(doc):
        if not served(doc):
            yield
            return
        with hold(doc):
            yield


def locked(fn):
    """Wrap a widget's callback (or a method a shell calls) to run where Bokeh's document
    lock is held, so it may change Bokeh models directly.

    Panel runs some callbacks of a served session without the lock (a click that arrives
    while a change from the browser is pending); there a Bokeh model changed directly raised
    and the change never reached the browser. Panel's public ``pn.state.execute(callback,
    schedule=True)`` runs a callback on the session's next tick with the lock; a call made
    from this service's own callbacks (which hold the lock) runs at once, and so does any
    call without a served session (notebooks, tests).
    """
    @functools.wraps(fn)
    def run(*args, **kwargs):
        import panel as pn

        doc = pn.state.curdoc
        if _holding_lock.get() or not served(doc):
            return fn(*args, **kwargs)
        pn.state.execute(lambda: on_loop(doc, lambda: fn(*args, **kwargs)), schedule=True)
        return None

    return run


def after_this_paint(callback: Callable[[], None], *, fallback_s: float = 10.0) -> bool:
    """Run ``callback`` on the session's loop once what is sent now can be drawn, in a message
    of its own (figures below the fold), so the browser draws the rest without waiting.

    Before the session has loaded, that is when the browser reports its document drawn
    (Panel's ``onload``), or after ``fallback_s`` (a browser that never reports); later, at
    once. The fallback is long: sent before the document was drawn, the figures miss the
    template's theme, and on a busy server (two sessions opening together while others end)
    3 s came before the report (tests/ui/test_app.py's sessions opened together, in CI).
    Either way in turn with the other sessions' pages (:meth:`Admission.in_turn` of the
    session's admission; on the next tick for a session that was admitted by none). Returns
    False, and runs nothing, without a served session (there everything is shown at once).
    """
    import panel as pn

    doc = pn.state.curdoc
    if not served(doc):
        return False
    admission = Admission.of(doc)
    done = threading.Event()

    def take_turn() -> None:
        if admission is not None:
            admission.in_turn(doc, callback)
        else:
            doc.add_next_tick_callback(lambda: on_loop(doc, callback))

    def run() -> None:   # in turn with the sessions opening meanwhile (a class at once)
        if not done.is_set():
            done.set()
            take_turn()

    if pn.state.loaded:
        take_turn()
    else:
        pn.state.onload(run)
        doc.add_timeout_callback(run, int(fallback_s * 1000))
    return True


class Admission:
    """Who goes when sessions open together (a class opening one link): the policy of one
    server process, made where the app is served (:func:`explorer.app.serving.build_app`)
    and handed to each session's app (``ExplorerApp(admission=...)``).

    * :meth:`opened`: a session's first document was just built. A session that starts
      within ``together_s`` seconds of the last one's (counted from its end, so a slow build
      does not split a burst), or while builds still wait their turn, opens together with
      them (:meth:`opening_together`): its page follows its first document, in turn.
    * :meth:`in_turn`: work a session queues while it opens (its sidebar, its page, the
      figures below the fold) runs after everything queued before it, by any session, one
      callback per turn of the event loop with a breath of ``turn_gap_s`` in between, first
      come, first served. A turn waits while an open session's answer is being made
      (``answering``: a data build and the figures it changes, step after step), for up to
      ``yield_s``: a change then waits for the one build that was running when it came, not
      for one at each of its steps. Measured (``bench_load.py --burst 30 --handicap 1``, one
      run each, the sessions' objects frozen in both; turns of 0.15-0.2 s of CPU, 0.25-0.4 s
      on the loaded machine): the changes' p95 over the whole load 1.06 s with the wait, 1.31
      s without. The changes sent while thirty sessions open stay at 2.6-2.8 s: the loop is
      then busy with more than turns (the new sessions' page requests, websockets and data,
      the live fits' frames), and with thirty sessions changing, an answer is nearly always
      being made, so turns mostly go after ``yield_s``.
    * :meth:`admit` / :meth:`of`: the admission a session's document was admitted by
      (:func:`after_this_paint` finds it there; a page need not know its app).

    Parameters
    ----------
    together_s : float
    turn_gap_s : float
        Pause between two turns: the messages of open sessions (and the hops of their
        changes: a data build's result, its figures) are answered in it.
    turn_timeout_s : float
        Longest wait for one turn's callback (a session that ended before its turn never
        runs it).
    answering : callable () -> bool
        True while an open session's answer is being made (default :func:`answering`, the
        process's sessions).
    yield_s : float
        Longest wait of a turn for ``answering`` to be False: opening sessions are not
        starved by a class that keeps changing things.
    clock : callable () -> float
        Seconds, monotonic (a test passes a fake clock).

    >>> now = [100.0]
    >>> admission = Admission(clock=lambda: now[0])
    >>> admission.opening_together()
    False
    >>> admission.opened(); now[0] += 0.5; admission.opening_together()
    True
    >>> now[0] += 1.0; admission.opening_together()
    False
    """

    TOGETHER_S = 1.0
    TURN_GAP_S = 0.02
    TURN_TIMEOUT_S = 10.0
    YIELD_S = 1.0
    #: how often a waiting turn looks again whether the answers are made
    YIELD_POLL_S = 0.005

    @classmethod
    def from_environment(cls) -> Admission:
        """This process's policy: ``together_s`` from the environment variable
        ``MTL_TOGETHER_S`` (seconds > 0) when set, the defaults otherwise. A server on a slow
        or busy machine may widen the window (and a test pins it, so that two openings a
        moment apart count as together however loaded the machine is).

        >>> import os; os.environ["MTL_TOGETHER_S"] = "30"
        >>> Admission.from_environment().together_s
        30.0
        >>> del os.environ["MTL_TOGETHER_S"]
        """
        text = os.environ.get("MTL_TOGETHER_S", "").strip()
        if not text:
            return cls()
        try:
            together_s = float(text)
        except ValueError:
            together_s = float("nan")
        if not together_s > 0:
            raise ValueError(f"MTL_TOGETHER_S must be a number of seconds > 0; got {text!r}.")
        return cls(together_s=together_s)

    def __init__(self, *, together_s: float = TOGETHER_S, turn_gap_s: float = TURN_GAP_S,
                 turn_timeout_s: float = TURN_TIMEOUT_S,
                 answering: Callable[[], bool] = answering, yield_s: float = YIELD_S,
                 clock: Callable[[], float] = time.monotonic):
        self.together_s, self.turn_gap_s = float(together_s), float(turn_gap_s)
        self.turn_timeout_s, self.clock = float(turn_timeout_s), clock
        self.answering, self.yield_s = answering, float(yield_s)
        self._last_opened = float("-inf")
        self._turns: deque = deque()   # (document, callback), oldest first
        self._taker: asyncio.Task | None = None

    # ------------------------------------------------------------------ who opens together
    def opened(self) -> None:
        """A session's first document was just built (see :meth:`opening_together`)."""
        self._last_opened = self.clock()

    def opening_together(self) -> bool:
        """True when another session finished its first document less than ``together_s``
        seconds ago, or builds still wait their turn."""
        return self.clock() - self._last_opened < self.together_s or self.waiting > 0

    @property
    def waiting(self) -> int:
        """How many callbacks wait for their turn (:meth:`in_turn`)."""
        return len(self._turns)

    def admit(self, doc) -> None:
        """``doc``'s session is admitted here: its pages' :func:`after_this_paint` take their
        turns with this admission."""
        _admitted[doc] = self

    @staticmethod
    def of(doc) -> Admission | None:
        """The admission ``doc``'s session was admitted by (None: none)."""
        try:
            return _admitted.get(doc)
        except TypeError:   # not weakly referable: never admitted
            return None

    # ------------------------------------------------------------------ turns
    def in_turn(self, doc, callback: Callable[[], None]) -> None:
        """Run ``callback`` as :func:`on_loop` does, after every callback queued here before
        it, one per turn of the event loop. Without a running event loop (``panel serve
        --warm`` building the app before it listens) it runs at once."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:   # no event loop (panel serve --warm's own build): at once
            on_loop(doc, callback)
            return
        self._turns.append((doc, callback))
        if self._taker is None or self._taker.done():
            self._taker = loop.create_task(self._take_turns())

    async def _take_turns(self) -> None:
        loop = asyncio.get_running_loop()
        while self._turns:
            await self._after_open_sessions_answers()
            doc, callback = self._turns.popleft()
            done = loop.create_future()

            def run(doc=doc, callback=callback, done=done) -> None:
                try:
                    on_loop(doc, callback)
                finally:
                    if not done.done():
                        done.set_result(None)

            try:
                doc.add_next_tick_callback(run)   # with the session's document lock
            except Exception:  # noqa: BLE001 -- the session ended meanwhile: nothing to build
                continue
            try:
                await asyncio.wait_for(done, self.turn_timeout_s)
            except asyncio.TimeoutError:
                log.warning("in_turn: a callback did not run within %s s", self.turn_timeout_s)
            if self._turns:   # a breath between two: what arrived meanwhile goes first
                await asyncio.sleep(self.turn_gap_s)

    async def _after_open_sessions_answers(self) -> None:
        """Wait while ``answering()`` (``yield_s`` at most, on the real clock)."""
        end = time.monotonic() + self.yield_s
        while self.answering() and time.monotonic() < end:
            await asyncio.sleep(self.YIELD_POLL_S)


#: document -> the :class:`Admission` that admitted its session (forgotten with it)
_admitted: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def in_notebook_kernel() -> bool:
    """True on the event loop of a Jupyter kernel (a notebook cell or a widget's callback):
    no Bokeh server session, but the kernel's asyncio loop runs callbacks and what they
    change reaches the notebook over Panel's comm."""
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
    """True where periodic callbacks run: a server session, or a notebook's kernel."""
    return served() or in_notebook_kernel()


#: ``served()``'s default: Panel's current document.
_CURRENT = object()


def served(doc: Any = _CURRENT) -> bool:
    """True when ``doc`` (by default Panel's current document) is a Bokeh server session's:
    a browser is connected through a server, callbacks go through its event loop, and what
    changes is sent as messages. False for None, a notebook's document, or a test's.

    The one place the app asks "is this a served session?".

    >>> served(None), served()
    (False, False)
    """
    if doc is _CURRENT:
        import panel as pn

        doc = pn.state.curdoc
    return doc is not None and getattr(doc, "session_context", None) is not None
