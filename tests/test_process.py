"""Once per server process: the memory given back after sessions end, the warning routing,
and the Panel-free modules (no Panel or Bokeh import of their own)."""

from __future__ import annotations

import ast
import threading
import warnings
from pathlib import Path

import pytest

import explorer.app


def test_ended_sessions_share_one_memory_trim(monkeypatch):
    import asyncio

    from explorer.app import process

    calls = []
    trim = process._trim_memory
    monkeypatch.setattr(process, "_trim_memory", lambda: (calls.append(1), trim()))

    async def close_two_tabs():
        process.release_memory_soon(delay_s=0.05)
        process.release_memory_soon(delay_s=0.05)   # a second tab: the same trim
        assert process._trim_pending and calls == []   # later, on the loop
        await asyncio.sleep(0.3)

    asyncio.run(close_two_tabs())
    assert calls == [1] and not process._trim_pending
    process.release_memory_soon()          # no loop (a notebook): at once
    assert calls == [1, 1] and not process._trim_pending


def test_the_memory_trim_collects_what_ended_sessions_left_in_cycles():
    """Bokeh collects garbage before a session's destroy hooks run; what the hooks free in
    cycles (fit records, builds) must not wait for a collection an idle server never makes."""
    import gc
    import weakref

    from explorer.app import process

    class Record:
        pass

    record = Record()
    record.itself = record            # a cycle: reference counting alone never frees it
    alive = weakref.ref(record)
    del record
    gc.disable()                      # no automatic collection may do the trim's work
    try:
        assert alive() is not None
        process._trim_memory()
        assert alive() is None
    finally:
        gc.enable()


@pytest.fixture
def thawed():
    """The test process's objects back in the collector's generations afterwards (the
    functions under test freeze every object alive)."""
    import gc

    yield
    gc.unfreeze()


class _Record:
    """An object in a cycle: only the cyclic collector frees it."""

    def __init__(self):
        self.itself = self


def test_a_built_session_leaves_the_collector_and_its_cycles_are_freed_when_sessions_end(
        thawed):
    import gc
    import weakref

    from explorer.app import process

    young_garbage, kept = _Record(), _Record()
    gone, alive = weakref.ref(young_garbage), weakref.ref(kept)
    gc.disable()                      # no automatic collection may do the work under test
    try:
        del young_garbage
        process.freeze_long_lived()   # a session was built
        assert gone() is None         # garbage is collected, not frozen
        assert gc.get_freeze_count() > 0
        del kept                      # the session ends: its cycle is garbage now
        gc.collect()
        assert alive() is not None    # frozen: full collections no longer walk it
        # a session never drawn (its websocket went to another process) ends: no stall
        process.release_memory_soon(drawn=False)    # (no loop: at once)
        assert alive() is not None
        process.release_memory_soon()  # a drawn session ends: every object is collected
        assert alive() is None
    finally:
        gc.enable()


def test_cycles_among_frozen_objects_are_freed_within_the_set_time_on_a_server(
        monkeypatch, thawed):
    import asyncio
    import gc
    import weakref

    from explorer.app import process

    monkeypatch.setattr(process, "COLLECT_FROZEN_S", 0.05)
    monkeypatch.setattr(process, "_collect_pending", False)

    async def a_long_session():
        dropped = _Record()           # a page's old figure: made, frozen, then dropped
        alive = weakref.ref(dropped)
        process.freeze_long_lived()
        del dropped
        gc.collect()
        assert alive() is not None
        await asyncio.sleep(0.3)      # no session ended meanwhile
        return alive()

    gc.disable()
    try:
        assert asyncio.run(a_long_session()) is None
    finally:
        gc.enable()


def test_the_memory_trim_lets_go_of_attribute_names_made_by_the_sessions():
    """CPython's type attribute cache holds each name looked up; names a session made at run
    time (from JSON patches, generated properties) would keep ended sessions' memory pinned."""
    import sys

    from explorer.app import process

    class Model:
        pass

    name = "".join(["session_made_", "name"])   # made at run time, not an interned constant
    unheld = sys.getrefcount(name)
    getattr(Model, name, None)                  # lookups (the metaclass's, the class's)
    assert sys.getrefcount(name) > unheld       # ... the cache keeps the name
    process._trim_memory()
    assert sys.getrefcount(name) == unheld


@pytest.mark.filterwarnings("always::RuntimeWarning")
def test_warnings_on_a_thread_go_to_its_own_list_only():
    from explorer.app.process import capture_warnings

    caught, elsewhere = [], []

    def worker():
        with capture_warnings(caught):
            warnings.warn("from the worker", RuntimeWarning, stacklevel=1)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        warnings.warn("from the caller", RuntimeWarning, stacklevel=1)
        elsewhere.extend(str(w.message) for w in shown)
    assert caught == ["RuntimeWarning: from the worker"]
    assert elsewhere == ["from the caller"]


@pytest.mark.parametrize("module", ["fit_session", "work", "process"])
def test_the_fit_session_and_the_work_service_import_no_panel(module):
    """Notebooks and tests use these without a server: none imports Panel or Bokeh at
    import time (only inside the functions that need a session's document)."""
    source = Path(explorer.app.__file__).with_name(f"{module}.py").read_text()
    top = [node for node in ast.parse(source).body
           if isinstance(node, ast.Import | ast.ImportFrom)]
    names = [alias.name for node in top if isinstance(node, ast.Import) for alias in node.names]
    names += [node.module or "" for node in top if isinstance(node, ast.ImportFrom)]
    assert names and not [n for n in names if n.split(".")[0] in {"panel", "bokeh"}]
    assert not [n for n in names if n in {"explorer.app.runner", "explorer.app.kit"}]


def test_the_warm_up_says_what_it_is_doing_before_the_server_listens(monkeypatch, capsys):
    """``panel serve --warm`` and ``python -m explorer serve`` wait for the warm-up before they
    listen (minutes on a machine whose numba cache is empty): a line on stderr says so when it
    starts, another how long it took when it is done."""
    import explorer.solvers
    from explorer.app import process
    from explorer.app.pages import trees

    ran = []
    monkeypatch.setattr(process, "_warm_up", None)   # as in a new server process
    monkeypatch.setattr(explorer.solvers, "warm_up", lambda: ran.append("kernels"))
    assert trees.figure3_ratios in process.WARM_UPS    # the page added its own
    monkeypatch.setattr(process, "WARM_UPS", [lambda: ran.append("figure 3")])
    process.warm_up_kernels(wait=True)
    err = capsys.readouterr().err.splitlines()
    assert ran == ["kernels", "figure 3"]
    assert err[0] == f"MTL Explorer: {process.WARM_UP_STARTED}"
    assert "Compiling the numerical kernels" in err[0] and "first start" in err[0]
    assert len(err) == 2 and err[1].startswith("MTL Explorer: kernels compiled and pages warm in")
    assert err[1].endswith(" s.")
    process.warm_up_kernels(wait=True)    # once per process: nothing more is said
    assert capsys.readouterr().err == ""


def test_a_failed_warm_up_says_so_and_the_server_goes_on(monkeypatch, capsys):
    import explorer.solvers
    from explorer.app import process

    def broken():
        raise RuntimeError("no compiler")

    monkeypatch.setattr(process, "_warm_up", None)
    monkeypatch.setattr(explorer.solvers, "warm_up", broken)
    process.warm_up_kernels(wait=True)
    err = capsys.readouterr().err
    assert process.WARM_UP_STARTED in err and "warming up failed after" in err
