"""The private APIs the runner and the process tuning use (explorer/_compat.py, section
"runner and process"): each test fails loudly when the internal it relies on changes."""

from __future__ import annotations

import inspect
import sys

import pytest

from explorer import _compat


def test_panels_periodic_callback_still_takes_background_and_skips_the_busy_flag():
    from panel.io.callbacks import PeriodicCallback

    callback = PeriodicCallback(callback=lambda: None, period=100, background=True)
    assert callback._background is True, "PeriodicCallback no longer keeps 'background'"
    source = inspect.getsource(PeriodicCallback._periodic_callback)
    assert "self._background" in source and "_add_busy_event" in source, (
        "PeriodicCallback's tick no longer decides the busy flag by 'background': revisit "
        "explorer._compat.background_periodic_callback")


def test_a_background_periodic_callback_starts_and_stops_without_a_session():
    ticks = []
    periodic = _compat.background_periodic_callback(lambda: ticks.append(1), 50)
    try:
        assert periodic.running and periodic.period == 50
    finally:
        periodic.stop()
    assert not periodic.running


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="CPython's type cache")
def test_the_type_cache_clear_is_still_there():
    assert (getattr(sys, "_clear_type_cache", None)
            or getattr(sys, "_clear_internal_caches", None)), \
        "CPython dropped both type-cache clears: revisit explorer._compat.clear_type_cache"
    _compat.clear_type_cache()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_glibc_malloc_tuning_is_reachable():
    assert _compat._libc() is not None, "libc.so.6 not loadable: malloc tuning is off"
    assert _compat.limit_malloc_arenas(2) is True
    _compat.malloc_trim()
