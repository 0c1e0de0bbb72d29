"""The project's only uses of private Panel/Bokeh internals, one section per owner.

Everything else goes through the frameworks' public APIs. Each workaround here names the
upstream issue or release it waits for, and ``tests/test_compat.py`` checks the internal it
relies on, so a framework release that changes it fails a test instead of silently undoing
the fix. Panel and Bokeh are imported inside the functions: ``explorer.viz`` may import this
module without importing Panel.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["background_periodic_callback", "clear_type_cache", "inline_stylesheet_updates",
           "limit_malloc_arenas", "malloc_trim", "template_root_forgotten_on_session_end"]


# --- shell and serving (helper B) ---------------------------------------------------------
@contextmanager
def template_root_forgotten_on_session_end(template, doc) -> Iterator[None]:
    """Around ``template.server_doc(doc)``: let Panel forget the template's root when the
    session of ``doc`` ends.

    A template registers one root per document in the process-wide list
    ``panel.state._fake_roots`` and removes it on session end through ``Template._refs``,
    which Panel 1.9 never fills, so every ended session left its root id behind (and those
    scattered strings kept ended sessions' memory from going back to the system). Filling
    ``_refs`` lets Panel's own clean-up remove it. Waits for a Panel release whose
    ``BaseTemplate._init_doc`` records ``self._refs[document]`` (not 1.9.4).
    """
    import panel as pn

    before = set(pn.state._fake_roots)
    yield
    added = [ref for ref in pn.state._fake_roots if ref not in before]
    if added:
        template._refs[doc] = added[-1]


# --- notebooks ----------------------------------------------------------------------------
def inline_stylesheet_updates() -> None:
    """In a notebook, send the stylesheets of pane *updates* from the installed Panel as
    ``data:`` URLs, never as links to the CDN (offline classrooms).

    ``pn.extension(inline=True)`` inlines what a cell first displays, but a pane changed
    later (a page's status line during a fit) is sent with links to cdn.holoviz.org. Panel
    looks each link up first in the per-document cache ``panel.io.state.state._stylesheets``;
    here that cache answers it with the file from Panel's ``dist`` directory. Waits for
    holoviz/panel#8707 (fixed upstream by #8708, after 1.9.4). Running it again is harmless.
    """
    import base64
    from weakref import WeakKeyDictionary

    from bokeh.models import ImportedStyleSheet
    from panel.io.resources import CDN_DIST, DIST_DIR, LOCAL_DIST
    from panel.io.state import state

    class InlineStylesheets(dict):
        """One document's stylesheets by URL; Panel's own ones become ``data:`` URLs."""

        def _offline(self, url) -> None:
            if not isinstance(url, str) or dict.__contains__(self, url):
                return
            # a CDN link, or the server-relative path Panel later rewrites to one
            prefix = next((p for p in (CDN_DIST, LOCAL_DIST) if url.startswith(p)), None)
            if prefix is None:
                return
            path = DIST_DIR / url[len(prefix):].split("?")[0]
            if path.is_file():
                data = base64.b64encode(path.read_bytes()).decode("ascii")
                dict.__setitem__(self, url,
                                 ImportedStyleSheet(url=f"data:text/css;base64,{data}"))

        def __contains__(self, url) -> bool:
            self._offline(url)
            return dict.__contains__(self, url)

        def __getitem__(self, url):
            self._offline(url)
            return dict.__getitem__(self, url)

        def get(self, url, default=None):
            self._offline(url)
            return dict.get(self, url, default)

        def __bool__(self) -> bool:   # Panel tests ``if cache and url in cache``
            return True

    class Documents(WeakKeyDictionary):
        """Every document gets an :class:`InlineStylesheets` cache when Panel asks."""

        def _cache(self, doc) -> InlineStylesheets:
            cache = WeakKeyDictionary.get(self, doc)
            if not isinstance(cache, InlineStylesheets):
                cache = InlineStylesheets(cache or {})
                WeakKeyDictionary.__setitem__(self, doc, cache)
            return cache

        def __contains__(self, doc) -> bool:
            return doc is not None and self._cache(doc) is not None

        def __getitem__(self, doc):
            return self._cache(doc)

        def get(self, doc, default=None):
            return default if doc is None else self._cache(doc)

        def __setitem__(self, doc, cache) -> None:
            WeakKeyDictionary.__setitem__(self, doc, cache)
            self._cache(doc)

    current = state._stylesheets
    if not isinstance(current, WeakKeyDictionary):
        raise RuntimeError("panel.io.state.state._stylesheets is no longer a "
                           f"WeakKeyDictionary (got {type(current).__name__}); the offline "
                           "stylesheet workaround in explorer/_compat.py needs updating.")
    if type(current).__name__ != "Documents":
        documents = Documents()
        for doc, cache in list(current.items()):
            documents[doc] = cache
        state._stylesheets = documents


# --- work service and process tuning (helper A) ---------------------------------------------
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



# --- components and figures (helper C) ------------------------------------------------------
