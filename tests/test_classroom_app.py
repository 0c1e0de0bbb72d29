"""Predict, then reveal (issue 41), in the app without a browser: "Your guess" on the Tasks page
and on a model page (taps, lock, the student's own reveal: guess, truth and the model's
estimate with their agreement), and a class in a temporary SQLite store (a teacher opens it,
students lock, the teacher's view counts and pools them, the reveal reaches the students,
the next round, the CSV, the end); a wrong key shows nothing of the class; nicknames are
escaped; a session polls the store only while it is in a class."""

from __future__ import annotations

import numpy as np
import pytest

import explorer.app.class_link as class_link
from explorer.app.class_link import ClassLink
from explorer.app.guess import GuessBook, GuessPanel
from explorer.app.pages import PAGES
from explorer.app.pages.classroom import CHECK, ClassPage
from explorer.app.state import ExplorerState
from explorer.classroom import ClassStore, pooled_guess

PAGE = {page.slug: page for page in PAGES}


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A store of classes in a temporary SQLite file, the one the app's sessions use."""
    with ClassStore(tmp_path / "classes.sqlite") as store:
        monkeypatch.setattr(class_link, "process_store", lambda: store)
        yield store


def tasks_block(state):
    return PAGE["tasks"].build(state).guess


def guess_panel(view) -> GuessPanel:
    return next(panel for panel in view.panels if isinstance(panel, GuessPanel))


def run(view):
    view.runner._speed.value = "unthrottled"
    view.runner.session.run()
    assert view.runner.session.wait(60)
    view.runner.poll()
    assert view.runner.session.state == "done", view.runner.session.error


# ---------------------------------------------------------------------- alone
def test_alone_on_the_tasks_page_a_click_cycles_a_pair_lock_keeps_it_and_the_reveal_scores_it():
    state = ExplorerState()
    state.apply_preset("unrelated_among_related")
    block = tasks_block(state)
    assert not block.layout.visible            # the truth is shown: nothing to guess
    state.hide_truth = True
    assert block.layout.visible and block.mode() == "guess"
    grid = block.grid
    assert grid.names == ["T0", "T1", "T2", "T3"]    # neutral names while hidden
    assert np.isnan(grid.relation[0, 1]) and grid.relation[0, 0] == 1
    states = []
    for _ in range(4):                         # related, negated, unrelated, don't know
        grid.tap(1, 0)
        states.append(block.book.relation[0, 1])
    assert states[:3] == [1.0, -1.0, 0.0] and np.isnan(states[3])
    grid.tap(2, 2)                             # the diagonal is fixed
    assert block.book.relation[2, 2] == 1.0
    truth = state.true_dataset().truth["task_relation"]
    for i, j in [(0, 1), (0, 2), (1, 2), (0, 3)]:   # all related (T3 is not)
        grid.tap(i, j)
    assert block.book.relation[1, 0] == block.book.relation[0, 1] == 1.0   # symmetric
    assert block.show_button.disabled is False and block.nickname.visible is False
    block.lock()
    assert block.book.locked is not None and "Locked" in block.status.object
    grid.tap(1, 3)                             # the draft moves on; the locked guess stays
    assert np.isnan(block.book.locked.relation[1, 3])
    block.show_truth()
    assert state.hide_truth is False and block.mode() == "reveal"
    assert block.grid.editable is False and block.truth_column.visible
    assert np.array_equal(block._truth_view._values, truth)
    caption = block._grid_caption.object
    assert "Your guess against the truth" in caption and "sign right on <b>100%</b>" in caption
    # T3 is the unrelated task: the guess took T0-T3 as related
    assert "T0 base-T3 unrelated as related; they are unrelated" in block.sentence.object
    assert block.model_column.visible is False   # the Tasks page fits no model


def test_a_model_page_shows_the_guess_the_truth_and_the_fitted_estimate_side_by_side():
    state = ExplorerState(hide_truth=True)
    state.apply_preset("negated_task")
    state.hide_truth = True
    view = PAGE["shared_vs_separate"].build(state)
    block = guess_panel(view).block
    assert block.layout.visible and block.mode() == "guess"
    assert not block.outliers.visible and not block.features.visible   # not this page's topic
    block.grid.tap(0, 1)                       # T0-T1 related
    block.grid.tap(0, 2)                       # T0-T2 related (it is negated)
    block.lock()
    run(view)
    assert block.model is not None and block.model["key"] == "similarity"
    state.hide_truth = False
    assert block.mode() == "reveal" and block.model_column.visible
    shown = [o for o in block.row.objects if o.visible]   # (columns: Panel layouts)
    assert [id(o) for o in shown] == [id(block.guess_column), id(block.truth_column),
                                      id(block.model_column)]
    assert "The model against the truth" in block._model_caption.object
    assert block._model_view.figure.title.text == "The model's similarity"
    sentence = block.sentence.object
    assert "as related; they are negated" in sentence and "The model got" in sentence
    # the Tasks page's block shows the same guess (one per session)
    assert GuessBook.of(state) is block.book


def test_on_outliers_the_guess_names_outlier_tasks_and_shared_features_with_precision_recall():
    state = ExplorerState()
    state.apply_preset("outlier_tasks")
    state.hide_truth = True
    view = PAGE["outliers"].build(state)
    block = guess_panel(view).block
    assert block.outliers.visible and block.features.visible
    assert block.features.max_items == 10 and len(block.features.options) == 100
    truth = state.true_dataset().truth
    outliers = [int(t) for t in np.flatnonzero(truth["outlier_tasks"])]
    block.outliers.value = outliers[:1]
    block.features.value = [int(np.flatnonzero(truth["shared_features"])[0]), 99]
    block.lock()
    assert block.book.locked.outliers.sum() == 1 and len(block.book.locked.features) == 2
    run(view)
    state.hide_truth = False
    caption = block._grid_caption.object
    assert ("Outlier tasks: precision <b>100%</b>, recall <b>50%</b>" in caption
            and "Shared features: precision <b>50%</b>" in caption)
    model = block._model_caption.object
    assert "The model's outlier tasks: precision" in model and "learns no tasks x tasks" in model


def test_alone_nothing_polls_and_no_class_is_joined(store):
    state = ExplorerState()
    tasks_block(state)
    assert ClassLink.of(state).role == "" and not state.work.checking("class")


# ---------------------------------------------------------------------- a class
def open_class(store, scenario="unrelated_among_related"):
    teacher = ExplorerState()
    teacher.apply_preset(scenario)
    page = PAGE["class"].build(teacher)
    assert isinstance(page, ClassPage) and page.opening.visible and not page.teacher.visible
    page.open_class()
    return teacher, page


def join(code: str, nickname: str = ""):
    state = ExplorerState(class_code=code)
    block = tasks_block(state)
    block.nickname.value = nickname
    return state, block


def test_a_class_from_open_to_end(store):
    teacher, page = open_class(store)
    link = ClassLink.of(teacher)
    assert link.role == "teacher" and teacher.page == "class" and page.teacher.visible
    assert page.student_link.value == f"?class={link.code}"
    assert page.teacher_link.value == f"?class={link.code}&key={teacher.class_key}"
    assert store.is_teacher(link.code, teacher.class_key)
    assert "<b>0 locked</b>" in page.count.object
    # two students: the round's scenario, the truth hidden and held hidden
    alice, alice_block = join(link.code, "alice")
    other, other_block = join(link.code, "<b>x</b>")
    for state in (alice, other):
        assert state.scenario == "unrelated_among_related" and state.hide_truth
        assert ClassLink.of(state).role == "student" and state.work.checking("class")
        state.hide_truth = False               # a student cannot show it before the reveal
        assert state.hide_truth and "reveals the truth" in state.notices[-1][1]
    assert alice_block.show_button.disabled and alice_block.nickname.visible
    alice_block.grid.tap(0, 1)                 # related: right
    alice_block.grid.tap(0, 3)                 # related: wrong (T3 is unrelated)
    other_block.grid.tap(0, 3)
    other_block.grid.tap(0, 3)                 # negated: wrong
    for block in (alice_block, other_block):
        block.lock()
    # committed before the page says locked
    stored = store.guess_of(link.code, ClassLink.of(alice).student)
    assert stored == alice_block.book.locked and "Locked" in alice_block.status.object
    assert "as <b>&lt;b&gt;x&lt;/b&gt;</b>" in other_block.status.object   # escaped
    # the teacher's view
    teacher.work.check(CHECK)
    assert "<b>2 locked</b>" in page.count.object
    assert "&lt;b&gt;x&lt;/b&gt;" in page.names.object and "<b>x</b>" not in page.names.object
    pooled = pooled_guess([alice_block.book.locked, other_block.book.locked])
    shown = page._views["pooled"]
    assert np.allclose(pooled, shown._values, equal_nan=True)   # nobody guessed: "?"
    assert "?" in shown._labels["#222222"].data["text"]
    assert [id(o) for o in page.matrices.objects] == [id(page._views["pooled"].pane),
                                                      id(page._views["truth"].pane)]
    counts = dict(zip(page.bars.source.data["bin"], page.bars.source.data["count"],
                      strict=True))
    assert counts["80–100%"] == 1 and counts["none guessed"] == 1   # other: no signed pair
    assert "T0 base–T3 unrelated</b>: 100% of the class wrong" in page.wrong.object
    # the reveal reaches the students on their next check
    page.reveal()
    assert "<b>revealed</b>" in page.header.object and page.reveal_button.disabled
    for state, block in ((alice, alice_block), (other, other_block)):
        state.work.check("class")
        assert not state.hide_truth and block.mode() == "reveal"
        assert "Your guess against the truth" in block._grid_caption.object
    assert "T0 base-T3 unrelated as related" in alice_block.sentence.object
    # the next round: another scenario, the truth hidden again, round 1's guesses kept
    page.next_scenario.value = "negated_task"
    page.next_round()
    assert teacher.page == "class" and teacher.scenario == "negated_task"
    assert "round 2" in page.header.object and "<b>0 locked</b>" in page.count.object
    alice.work.check("class")
    assert alice.scenario == "negated_task" and alice.hide_truth
    assert alice_block.book.locked is None and alice_block.mode() == "guess"
    assert len(store.guesses(link.code, teacher.class_key, round=1)) == 2
    csv = page._csv().read()
    assert csv.startswith("round,scenario,student,nickname") and "<b>x</b>" in csv
    assert page.download.filename == f"class-{link.code}.csv"
    # the end
    page.end_class()
    assert store.class_state(link.code) is None and teacher.class_code == ""
    assert page.opening.visible and not page.teacher.visible
    alice.work.check("class")
    assert ClassLink.of(alice).role == "" and alice.class_code == ""
    assert not alice.work.checking("class")    # out of the class: no more polling


def test_a_wrong_or_missing_key_shows_nothing_of_the_class(store):
    code, key = store.open_class("negated_task", n_tasks=3)
    for wrong in ("not-the-key", key[:-1] + ("A" if key[-1] != "A" else "B")):
        state = ExplorerState(class_code=code, class_key=wrong, page="class")
        page = PAGE["class"].build(state)
        link = ClassLink.of(state)
        assert link.role == "" and "wrong key" in link.message
        assert state.class_code == "" and state.class_key == ""   # not kept in the link
        assert state.scenario != "negated_task"                   # not even its scenario
        assert page.message.visible and "wrong key" in page.message.object
        assert not page.teacher.visible and code not in page.message.object
        assert not state.work.checking("class") and not state.work.checking(CHECK)
    # a student's link on the Class page: the class, but not the teacher's view
    state = ExplorerState(class_code=code, page="class")
    page = PAGE["class"].build(state)
    assert not page.teacher.visible and "needs the teacher's link" in page.message.object
    # an unknown code
    state = ExplorerState(class_code="ZZZZZZZZ")
    ClassLink.of(state)
    assert ClassLink.of(state).role == "" and "no open class" in ClassLink.of(state).message


def test_a_lock_the_store_refuses_is_not_said_locked(store):
    teacher, page = open_class(store)
    code = ClassLink.of(teacher).code
    state, block = join(code, "tab\there")   # a control character in the nickname
    block.grid.tap(0, 1)
    block.lock()
    assert block.book.locked is None and "Not locked" in block.status.object
    assert "nickname" in block.status.object
    block.nickname.value = "tab here"
    page.reveal()                              # the student's page has not heard yet
    block.lock()
    assert block.book.locked is None and "revealed" in block.status.object
    assert store.guess_of(code, ClassLink.of(state).student) is None


def test_the_app_has_one_store_per_process(monkeypatch, tmp_path):
    monkeypatch.setenv("MTL_CLASS_DB", str(tmp_path / "one.sqlite"))
    import panel as pn

    pn.state.cache.pop("explorer.classroom.store", None)
    try:
        first = class_link.process_store()
        assert first is class_link.process_store() and str(tmp_path) in first.url
    finally:
        pn.state.cache.pop("explorer.classroom.store", None)


def test_the_teachers_view_shows_the_model_beside_the_truth_once_the_teacher_fitted_it(store):
    teacher, page = open_class(store, "negated_task")
    assert teacher.scenario == "negated_task" and teacher.page == "class"
    assert "model" not in page._views
    view = PAGE["shared_vs_separate"].build(teacher)
    run(view)
    teacher.work.check(CHECK)
    model = page._views["model"]
    assert [id(o) for o in page.matrices.objects][-1] == id(model.pane)
    assert model.figure.title.text == "The model's similarity (Shared vs separate)"
    assert "The model against the truth" in model.pane[1].object


def test_a_students_model_page_at_the_reveal_fits_and_shows_the_class_beside_the_truth(store):
    """Joining while the session is built must leave one link (a second one hid the truth
    again at each check); the reveal starts the page's fit where none ran, and shows the
    class's mean guess beside the truth (pooled, never another student's guess)."""
    from explorer.app.shell import ExplorerApp

    teacher, page = open_class(store, "negated_task")
    student = ExplorerState(class_code=ClassLink.of(teacher).code)
    app = ExplorerApp(state=student)   # as a served session is built: the sidebar joins
    view = app._built["shared_vs_separate"]
    block = guess_panel(view).block
    assert student.page == "shared_vs_separate" and student.hide_truth
    assert block.mode() == "guess" and block.guess_column.visible
    # made and sent hidden while the student guesses: the reveal only fills them
    assert not any(c.visible for c in (block.truth_column, block.model_column,
                                        block.class_column))
    assert block._truth_view is not None and block._class_view is not None
    block.grid.tap(0, 2)                       # T0-T2 related (it is negated)
    block.lock()
    other, other_block = join(ClassLink.of(teacher).code)
    other_block.grid.tap(0, 2)
    other_block.grid.tap(0, 2)                 # negated: right
    other_block.lock()
    assert block.link.pooled is None and view.runner.session.state == "idle"
    page.reveal()
    student.work.check("class")
    assert not student.hide_truth and block.mode() == "reveal"
    assert view.runner.session.state in ("running", "done")   # the reveal started the fit
    assert view.runner.session.wait(60)
    view.runner.poll()
    assert block.model is not None and block.model_column.visible
    pooled, n = block.link.pooled
    assert n == 2 and pooled[0, 2] == 0.0      # one related, one negated: the mean is 0
    assert block.class_column.visible
    assert "The mean of the 2 guesses" in block._class_caption.object
    assert "The class against the truth" in block._class_caption.object
    student.work.check("class")                # and the truth stays shown
    assert not student.hide_truth and block.mode() == "reveal"
    assert GuessBook.of(student).link is ClassLink.of(student)


def test_a_student_opening_with_the_class_has_the_rounds_page_before_anything_is_built(
        store, monkeypatch):
    """A class opening its link together: each session's first document is the template and
    a line, its sidebar and page follow in turns. The session joins the class while that
    first document is made, so the line names the round's page and the turns build the
    round's scenario with the truth hidden. (Joined by the sidebar's turn instead, the
    round's scenario changed widgets BokehJS had not drawn yet: the page never came.)"""
    from explorer.app.shell import ExplorerApp

    teacher, _ = open_class(store, "negated_task")
    monkeypatch.setattr(ExplorerApp, "_first_page_after_load", lambda self: True)
    student = ExplorerState(class_code=ClassLink.of(teacher).code)
    app = ExplorerApp(state=student)
    assert not app.sidebar and not app._built                  # nothing built yet
    assert (student.scenario, student.page) == ("negated_task", "shared_vs_separate")
    assert student.hide_truth and "Shared vs separate" in app._coming.object
    assert ClassLink.of(student).role == "student"


def test_a_store_that_fails_is_said_once_not_at_every_check(store, monkeypatch):
    state, block = join(open_class(store)[1].link.code)
    said = len(state.notices)

    def down(code):
        raise OSError("the database is away")

    monkeypatch.setattr(store, "class_state", down)
    for _ in range(3):
        state.work.check("class")
    assert [m for _, m in list(state.notices)[said:]] == [
        "The class's store could not be reached: the database is away"]
    assert ClassLink.of(state).role == "student" and state.work.checking("class")
