"""Private framework and interpreter APIs the project still uses, in one place.

Each function names why no public API serves and what upstream change would remove it;
tests/test_compat*.py fail loudly when an internal used here changes. Panel and Bokeh are
imported lazily inside the functions, so any module may import this one.
"""

from __future__ import annotations

import ctypes
import sys

# --- runner and process (helper A)

def background_periodic_callback(callback, period_ms: int):
    """A started periodic callback of the current session that does not mark Panel busy.

    ``pn.state.add_periodic_callback`` marks the session busy and idle again around every
    tick (two document updates per live frame); only the constructor's undocumented
    ``background=True`` leaves that out. Waits for Panel to expose ``background`` on
    ``pn.state.add_periodic_callback`` (Panel 1.9 does not).
    """
    from panel.io.callbacks import PeriodicCallback

    periodic = PeriodicCallback(callback=callback, period=int(period_ms), background=True)
    periodic.start()
    return periodic


def clear_type_cache() -> None:
    """Clear CPython's type attribute cache (it holds the attribute names ended sessions made
    at run time, pinning their memory). No public API; CPython 3.13 renames it
    ``sys._clear_internal_caches``. Elsewhere than CPython: nothing to clear."""
    clear = getattr(sys, "_clear_type_cache", None) or getattr(sys, "_clear_internal_caches",
                                                               None)
    if clear is not None:
        clear()


def _libc():
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:   # not glibc
        return None


def limit_malloc_arenas(arenas: int) -> bool:
    """glibc's ``mallopt(M_ARENA_MAX, arenas)``; Python has no binding. False elsewhere."""
    libc = _libc()
    return bool(libc is not None and libc.mallopt(-8, int(arenas)))   # -8: M_ARENA_MAX


def malloc_trim() -> bool:
    """glibc's ``malloc_trim(0)``: hand freed arena pages back to the system; Python has no
    binding. False elsewhere."""
    libc = _libc()
    return bool(libc is not None and libc.malloc_trim(0))
