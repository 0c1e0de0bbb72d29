"""Work that must not run on the event loop: data generation, splits, projections.

DESIGN.md: the event loop only dispatches. A :class:`Offloader` runs ``compute()`` on a
process-wide pool of build threads and hands its result to ``apply(result)`` *on the event
loop* (Bokeh's ``add_next_tick_callback``, the one thread-safe way into a document), where
Bokeh and Panel objects may be touched. Requests under one key are "newest wins": a result
whose request was superseded before it finished is dropped, so a student who types three
seeds in a row sees the third data set, built once it is asked for, never the first two
arriving late.

Without a server (notebooks, tests, the library) there is no loop to keep free: the work
runs at once on the caller's thread, so the same code path is synchronous there.

>>> seen = []
>>> Offloader().submit("data", lambda: 6 * 7, seen.append)
>>> seen
[42]
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

__all__ = ["Offloader", "after_this_paint", "batched", "build_pool", "locked_callback"]

log = logging.getLogger(__name__)

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def build_pool() -> ThreadPoolExecutor:
    """The process-wide pool of build threads (two: one per core of the target machine;
    more would only make every session's build slower)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="explorer-build")
        return _pool


@contextmanager
def batched(doc):
    """Make ``doc`` Panel's current document and send what changes in it as one message.

    Every message made Bokeh index every model of the session's document, and the browser
    laid the page out once per message: the Tasks page's seven new figures came in seven
    messages (2.6 s to arrive). Held, they go together. Used for offloaded results, for a
    page shown and for a live frame (``LiveFitRunner.poll``); a view must then draw right
    when its changes arrive together (see ``viz.mtboost.SupertaskView``). Bokeh's ``freeze``
    of the model walk is not used: models added under it have no document yet when
    Panel styles them, and Panel then points their style sheets at its CDN, which an
    offline classroom cannot reach. Without a server session this only sets the current
    document.
    """
    from panel.io.document import hold
    from panel.io.state import set_curdoc

    with set_curdoc(doc):
        if doc is None or getattr(doc, "session_context", None) is None:
            yield
            return
        with hold(doc):
            yield


def after_this_paint(callback: Callable[[], None], *, fallback_s: float = 3.0) -> bool:
    """Run ``callback`` on the session's loop once what is sent now can be drawn, in a message
    of its own: for what a page may show a moment later than the rest (figures below the
    fold), so the browser draws the rest without waiting for it.

    Before the session has loaded (its first render), that is when the browser reports its
    document drawn (Panel's ``onload``), or after ``fallback_s`` if that report never comes;
    later (a page opened by a click), the loop's next tick: the message in hand goes first.
    Returns False, and runs nothing, without a served session (a notebook, a test: there
    everything is shown at once).
    """
    import panel as pn

    doc = pn.state.curdoc
    if doc is None or getattr(doc, "session_context", None) is None:
        return False
    done = threading.Event()

    def run() -> None:
        if done.is_set():
            return
        done.set()
        with batched(doc):
            callback()

    if pn.state.loaded:
        doc.add_next_tick_callback(run)
    else:
        pn.state.onload(run)
        doc.add_timeout_callback(run, int(fallback_s * 1000))
    return True


def locked_callback(fn):
    """Run ``fn`` (a widget's or a button's callback) where Bokeh's document lock is held.

    Panel runs some callbacks of a served session outside the lock (a click that arrives
    while a change from the browser is pending); there, a Bokeh model changed directly (a
    source cleared, the status line set) made the server raise "_pending_writes should be
    non-None" and the change never reached the browser: measured, a Reset whose status
    line never said "Ready.". Such a call is moved to the session's next tick, which Bokeh
    runs with the lock; everywhere else (under the lock, notebooks, tests) it runs at once.
    The test is the very attribute Bokeh's check reads, looked up defensively.
    """
    @functools.wraps(fn)
    def run(*args, **kwargs):
        from panel.io.state import set_curdoc, state

        doc = state.curdoc
        session = getattr(getattr(doc, "session_context", None), "_session", None)
        if session is not None and getattr(session, "_pending_writes", ()) is None:
            def later() -> None:
                with set_curdoc(doc):
                    fn(*args, **kwargs)

            doc.add_next_tick_callback(later)
            return None
        return fn(*args, **kwargs)

    return run


class Offloader:
    """Runs ``compute`` off the event loop and ``apply`` on it; the newest request per key wins.

    Parameters
    ----------
    schedule : callable (callback) -> None, optional
        Puts a callback on the event loop (the session document's ``add_next_tick_callback``,
        wrapped so Panel sees that document as current). None: no loop, run synchronously.
    executor : concurrent.futures.Executor, optional
        Where ``compute`` runs (default: :func:`build_pool`).
    """

    def __init__(self, schedule: Callable[[Callable[[], None]], None] | None = None,
                 executor=None):
        self.schedule = schedule
        self.executor = executor
        self._latest: dict[str, int] = {}
        self._lock = threading.Lock()
        self.closed = False

    @classmethod
    def for_document(cls, doc) -> Offloader:
        """An offloader that applies results on ``doc``'s event loop (None: synchronous)."""
        if doc is None or getattr(doc, "session_context", None) is None:
            return cls()
        def schedule(callback: Callable[[], None]) -> None:
            def on_loop() -> None:
                with batched(doc):
                    callback()

            doc.add_next_tick_callback(on_loop)

        return cls(schedule)

    @property
    def asynchronous(self) -> bool:
        """True when work runs off the caller's thread (there is an event loop to keep free)."""
        return self.schedule is not None

    def pending(self, key: str) -> bool:
        """True while a request under ``key`` has not been applied (or dropped) yet."""
        with self._lock:
            return key in self._latest

    def close(self) -> None:
        """The session ended: results still in flight are dropped."""
        with self._lock:
            self.closed = True
            self._latest.clear()

    def submit(self, key: str, compute: Callable[[], Any], apply: Callable[[Any], None],
               on_error: Callable[[Exception], None] | None = None) -> None:
        """Run ``compute()`` off the loop, then ``apply(result)`` (or ``on_error(exc)``) on it.

        Served, ``compute`` starts from the loop's next tick, after what the caller changes
        has gone out.

        A later ``submit`` under the same ``key`` supersedes this one: if it comes before
        this one's result is applied, that result is dropped.
        """
        if not self.asynchronous:
            try:
                result = compute()
            except Exception as exc:
                if on_error is None:
                    raise
                on_error(exc)
                return
            apply(result)
            return
        with self._lock:
            if self.closed:
                return
            ticket = self._latest.get(key, 0) + 1
            self._latest[key] = ticket

        def finish(outcome: Any, failed: bool) -> None:   # on the event loop
            with self._lock:
                if self.closed or self._latest.get(key) != ticket:
                    return   # superseded, or the session ended
                del self._latest[key]
            if failed:
                if on_error is not None:
                    on_error(outcome)
                else:
                    log.error("offloaded %r failed", key, exc_info=outcome)
                return
            apply(outcome)

        def work() -> None:   # on a build thread
            with self._lock:
                if self.closed or self._latest.get(key) != ticket:
                    return   # superseded before it started: do not even compute
            try:
                outcome, failed = compute(), False
            except Exception as exc:  # noqa: BLE001 -- handed to on_error on the loop
                outcome, failed = exc, True
            self.schedule(lambda: finish(outcome, failed))

        # Started from the loop's next tick: the caller's own changes (a page just built, a
        # control's echo) go to the browser first, without a build thread taking the GIL
        # from them (a page's first visit reached the browser ~100 ms later that way).
        executor = self.executor or build_pool()
        self.schedule(lambda: executor.submit(work))
