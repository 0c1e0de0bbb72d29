"""A session's helpers go with its state.

A class link and a guess book were kept in module-level ``WeakKeyDictionary`` objects keyed by
the session's state; each held the state, and a weak key is never let go while its value
holds it: every session's state, document, figures and data stayed in the server (bench_load:
memory after thirty sessions closed 1.19x the memory before them; an in-process server still
held every ended session's ``ExplorerState`` after Bokeh had discarded the sessions, none
after the fix). They are kept on the state now (``class_link.session_parts``)."""

from __future__ import annotations

import gc
import weakref

from explorer.app.class_link import ClassLink, session_parts
from explorer.app.guess import GuessBook
from explorer.app.state import ExplorerState


def test_a_states_class_link_and_guess_book_do_not_keep_it_alive():
    state = ExplorerState()
    link, book = ClassLink.of(state), GuessBook.of(state)
    assert ClassLink.of(state) is link and GuessBook.of(state) is book   # one each
    assert session_parts(state) == {"class_link": link, "guess_book": book}
    gone = [weakref.ref(obj) for obj in (state, link, book, state.dataset)]
    del state, link, book
    gc.collect()
    assert [ref() for ref in gone] == [None] * 4


def test_two_states_have_their_own_helpers():
    one, two = ExplorerState(), ExplorerState()
    assert ClassLink.of(one) is not ClassLink.of(two)
    assert GuessBook.of(one).state is one and GuessBook.of(two).state is two
