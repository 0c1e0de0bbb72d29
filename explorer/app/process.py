"""Once per server process: BLAS threads, warning routing, the garbage collector, memory, warm-up.

Panel-free: ``panel serve`` runs the app script once per session; every function here acts
only the first time (or, for the memory trim, once per burst of ended sessions).
"""

from __future__ import annotations

import gc
import logging
import sys
import threading
import time
import warnings
from collections.abc import Callable
from contextlib import contextmanager

from sklearn.exceptions import ConvergenceWarning

from explorer import _compat

__all__ = ["WARM_UPS", "WARM_UP_STARTED", "capture_warnings", "configure_process",
           "freeze_long_lived", "install_warning_router", "release_memory_soon", "warm_up_kernels",
           "warm_up_with"]

log = logging.getLogger(__name__)

_warning_sink = threading.local()
_previous_showwarning = None
_configure_lock = threading.Lock()
_configured = False
_frozen = False
_collect_pending = False
_trim_pending = False
_trim_frozen = False
_warm_up: threading.Thread | None = None

#: What the warm-up runs after the kernels, in the order it was added: what a page computes
#: once per process (the Trees page's Figure 3), added by the page (:func:`warm_up_with`).
WARM_UPS: list[Callable[[], object]] = []

#: Said on stderr when the warm-up starts: the first start on a machine compiles for minutes
#: before the server listens, and a silent terminal looks like a hung one.
WARM_UP_STARTED = ("Compiling the numerical kernels and warming the pages (first start on this "
                   "machine: up to a few minutes; later starts: seconds)...")


def _say(message: str) -> None:
    """One line on the server's terminal (stderr, at once): visible whatever the log level."""
    print(f"MTL Explorer: {message}", file=sys.stderr, flush=True)


def _route_warning(message, category, filename, lineno, file=None, line=None):
    sink = getattr(_warning_sink, "messages", None)
    if sink is not None:
        sink.append(f"{category.__name__}: {message}")
        return
    _previous_showwarning(message, category, filename, lineno, file, line)


def install_warning_router() -> None:
    """Route warnings shown on a thread inside :func:`capture_warnings` to that thread's list
    (idempotent).

    Python 3.11 has no thread-local warning filters, and ``warnings.catch_warnings`` on a
    worker swaps process-wide state under other threads' feet; a ``showwarning`` hook that
    looks at a thread-local sink leaves every other thread's warnings as they were.
    """
    global _previous_showwarning
    with _configure_lock:
        if warnings.showwarning is not _route_warning:
            _previous_showwarning = warnings.showwarning
            warnings.showwarning = _route_warning


@contextmanager
def capture_warnings(messages: list[str]):
    """Warnings shown on this thread meanwhile are appended to ``messages`` as text."""
    install_warning_router()
    _warning_sink.messages = messages
    try:
        yield messages
    finally:
        _warning_sink.messages = None


def configure_process() -> None:
    """BLAS on one thread (threads of a 2-core server only fight), two malloc arenas,
    every ConvergenceWarning shown (a refit that does not converge again says so again),
    warnings of fit workers routed to their fits."""
    global _configured
    with _configure_lock:
        if _configured:
            return
        _configured = True
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)
    # Every worker thread would get a malloc arena of its own, and memory freed in one is not
    # handed back while the arena holds a live block: two keep ended sessions' memory
    # reusable and trimmable (numerical arrays are allocated by mmap, outside the arenas).
    _compat.limit_malloc_arenas(2)
    warnings.filterwarnings("always", category=ConvergenceWarning)
    install_warning_router()
    # Opening a session is mostly Bokeh making, indexing and serialising models (~0.3 s of
    # the server each; a class opens thirty): two costs of each model that change nothing
    # the app does. The check of every callback's signature as it is registered
    # (``inspect.signature`` of each of Panel's per-model partials; a wrong signature still
    # fails when called) is off through Bokeh's public setting (from Bokeh 3.9.1; before,
    # the checks stay), and the defaults of unset properties are computed once per class
    # (:func:`_compat.bokeh_defaults_computed_once`).
    from bokeh.settings import settings

    diagnostics = getattr(settings, "perform_error_diagnostics", None)
    if diagnostics is not None:
        diagnostics.set_value(False)
    _compat.bokeh_defaults_computed_once()
    # a message Panel queued for a session's websocket is written, whatever the order in
    # which its writes finish (a class locking at once lost some "Locked at" otherwise)
    _compat.queued_writes_never_stranded()
    # the 1.8 MB MathJax bundle only for a page with a formula (the app has none)
    _compat.mathjax_sent_only_for_math()


def freeze_long_lived() -> None:
    """Move the objects alive now out of the cyclic collector's generations (``gc.freeze``):
    called with only the imports alive (the first session's build), then each time a
    session's pages are built. Frozen objects are still freed by reference counting; cycles
    among them are collected when sessions end (:func:`release_memory_soon`) or at the
    latest :data:`COLLECT_FROZEN_S` after a freeze.

    Why: CPython's full collection walks every tracked object, and a full collection comes
    each time the objects that survived grew by a quarter, which they do with every session
    a class opens. Measured (``bench_load.py --sessions 30 --num-procs 1``, 40 s): 18 full
    collections, 2.5 s in all, up to 0.40 s each, every session stopped meanwhile. A session's
    pages live as long as it does, so the collector has nothing to find in them.

    The young generations are collected first (a few ms), so no garbage is frozen.
    """
    global _frozen

    with _configure_lock:
        first, _frozen = not _frozen, True
    gc.collect(2 if first else 1)
    gc.freeze()
    _collect_frozen_later()


#: Longest wait (s) for a collection of cycles among frozen objects after a freeze: what a
#: page dropped while its session lives (an old figure, a replaced data set) is freed within
#: it, however long the session.
COLLECT_FROZEN_S = 300.0


def _collect_frozen_later() -> None:
    global _collect_pending
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:   # panel serve --warm's build, a notebook: nobody to stall
        return
    if not _collect_pending:
        _collect_pending = True
        loop.call_later(COLLECT_FROZEN_S, _collect_frozen)


def _collect_frozen() -> None:
    """One full collection over every object, the frozen ones too; the survivors are frozen
    again."""
    global _collect_pending

    _collect_pending = False
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _trim_memory() -> None:
    global _trim_pending, _trim_frozen
    frozen, _trim_pending, _trim_frozen = _trim_frozen, False, False

    # the attribute names ended sessions made at run time, held by CPython's type cache,
    # keep their scattered allocator arenas from going back to the system
    _compat.clear_type_cache()
    # Bokeh collects before a session's destroy hooks run: the cycles those hooks let go
    # (and an ended session's frozen pages) would wait for a full collection an idle
    # server never makes
    if frozen:
        _collect_frozen()
    else:
        gc.collect()
    _compat.malloc_trim()


def release_memory_soon(delay_s: float = 2.0, *, drawn: bool = True) -> None:
    """Give the memory of ended sessions back to the system, once, ``delay_s`` from now.

    Calls within ``delay_s`` share one trim (a class closing its tabs costs one). On a running
    event loop it is scheduled there; without one it runs at once.

    ``drawn``: the session ended was drawn in a browser, so its objects were frozen
    (:func:`freeze_long_lived`) and only a collection of every object frees their cycles: a
    stall of 1-2 s on a loaded server of thirty sessions. A session that was never drawn
    (with ``--num-procs``, a page request whose websocket went to another process: Bokeh
    ends it unused) made only its first document; the frozen part of it waits for the next
    full collection (:data:`COLLECT_FROZEN_S`), and its end costs no stall.
    """
    global _trim_pending, _trim_frozen
    import asyncio

    _trim_frozen = _trim_frozen or drawn
    if _trim_pending:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        _trim_memory()
        return
    _trim_pending = True
    loop.call_later(delay_s, _trim_memory)


def warm_up_with(function: Callable[[], object]) -> Callable[[], object]:
    """Add ``function()`` to the warm-up (:data:`WARM_UPS`): a page's work done once per
    process, before the server listens, instead of on a user's click. A page adds it when
    imported (the process imports no page). Returns ``function``: a decorator."""
    if function not in WARM_UPS:
        WARM_UPS.append(function)
    return function


def warm_up_kernels(*, wait: bool = False) -> threading.Thread:
    """Compile the numba kernels (or load them from numba's cache) and run what the pages
    added (:func:`warm_up_with`: the Trees page's Figure 3), once per process, off the event
    loop, so no user's click waits for them; ``wait``: return only when done (a server about
    to listen). Returns the warm-up's thread. The pages add theirs when imported: import
    :mod:`explorer.app` first (``apps/explorer.py`` and ``serve`` do).

    It says on stderr that it starts (:data:`WARM_UP_STARTED`) and, when done, how long it
    took: ``panel serve --warm`` and ``python -m explorer serve`` wait for it before they
    listen, up to minutes on a machine whose numba cache is empty."""
    global _warm_up
    from explorer.app.work import start_thread

    with _configure_lock:
        if _warm_up is not None:
            if wait:
                _warm_up.join()
            return _warm_up

        def run() -> None:
            started = time.perf_counter()
            try:
                from explorer import solvers

                solvers.warm_up()
                for warm_up in list(WARM_UPS):
                    warm_up()
            except Exception:  # a failed warm-up only costs time later
                log.exception("warming up the compiled kernels failed")
                _say(f"warming up failed after {time.perf_counter() - started:.1f} s; the app "
                     "works, its first fits compile what they need.")
                return
            _say(f"kernels compiled and pages warm in {time.perf_counter() - started:.1f} s.")

        _say(WARM_UP_STARTED)
        _warm_up = start_thread(run, "explorer-warm-up", behind=True)
    if wait:
        _warm_up.join()
    return _warm_up
