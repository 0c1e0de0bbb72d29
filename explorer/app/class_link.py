"""A session's link with a class (issue 41): who this session is in the class, and what round
the class is in.

The class lives in the store every server process shares (:class:`explorer.classroom.
ClassStore`, one per process: :func:`process_store`); a session knows of it only through its
link, ``?class=<code>`` (a student) or ``?class=<code>&key=<key>`` (the teacher), the state's
``class_code`` and ``class_key``. :class:`ClassLink`, one per session (:meth:`ClassLink.of`):

* joins the class the link names: the teacher's key is checked by the store (a wrong or
  missing key: a clear message and nothing of the class, not even its scenario); a student
  gets the round's scenario with the truth hidden (``hide_truth`` is held on while the round
  is not revealed);
* while a student's session is in a class, asks the store every :data:`POLL_S` seconds
  whether the teacher revealed the round, moved to the next one or ended the class, through
  the session's work service (:meth:`explorer.app.work.WorkService.every`: the store is read
  off the event loop, the page changed on it); a session in no class asks nothing;
* opens a class in one click (:meth:`open_class`) and gives its student and teacher links;
* locks a student's guess in the store (:meth:`lock`: committed before ``done`` is called).

Everything here that came from a user (the nickname) is plain text; whoever shows it escapes
it (:func:`explorer.viz.live.escape`).
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Callable
from typing import Any

import param

from explorer.classroom import ClassState, ClassStore, Guess

__all__ = ["ClassLink", "POLL_S", "class_links", "class_scenarios", "class_sidebar",
           "process_store", "relation_truth", "scenario_data", "session_parts"]

#: How often a student's session asks the store about the round (seconds).
POLL_S = 1.0
#: The scenario a class opens on when the session has none chosen (or edited it): the Tasks
#: page's guessing exercise.
DEFAULT_SCENARIO = "unrelated_among_related"


def session_parts(state) -> dict:
    """The helpers a session makes once and keeps (its class link, its guess book), by
    name, in the state's own ``__dict__``: they go when the state goes.

    (A module's ``WeakKeyDictionary`` keyed by the state kept every session alive: the
    helpers it held hold the state, and a weak key is never let go while its value holds
    it. Every ended session's state, document and data stayed in the server's memory.)
    """
    return state.__dict__.setdefault("_explorer_session_parts", {})


def process_store() -> ClassStore:
    """This server process's store of classes (``$MTL_CLASS_DB``, default the SQLite file
    of :func:`explorer.classroom.default_db_path`), made by the first session that needs it
    and kept in Panel's process-wide cache (``panel serve`` runs the app's script once per
    session)."""
    import panel as pn

    return pn.state.as_cached("explorer.classroom.store", ClassStore.from_environment)


@functools.lru_cache(maxsize=32)
def scenario_data(name: str):
    """The whole data set of scenario ``name`` as a session that chose it builds it (truth
    included); cached per process. Off the event loop."""
    from explorer.data.catalog import CATALOG, load_preset, make_dataset

    scenario = load_preset(name)
    entry = CATALOG[scenario["dataset"]]
    return make_dataset(scenario["dataset"], entry.values(scenario["params"]),
                        random_state=int(scenario["data_seed"]))


def relation_truth(truth: dict | None):
    """The tasks x tasks truth a guess of how the tasks relate is judged against: the signed
    ``task_relation`` where the data have it, else the true cosines ``task_similarity``
    (their signs; near zero counts as unrelated); None without either."""
    truth = truth or {}
    for key in ("task_relation", "task_similarity"):
        if truth.get(key) is not None:
            return truth[key]
    return None


@functools.lru_cache(maxsize=1)
def class_scenarios() -> dict[str, str]:
    """The scenarios a class can guess on, name -> title: their page is a page of the app
    (not Compare) and their data have a tasks x tasks truth. Built once per process (off
    the event loop: it builds each scenario's data)."""
    from explorer.data.catalog import list_presets, load_preset

    found = {}
    for name in list_presets():
        scenario = load_preset(name)
        if scenario["page"] == "compare":
            continue
        try:
            data = scenario_data(name)
        except (ValueError, OSError):
            continue
        if data.n_tasks >= 2 and relation_truth(data.truth) is not None:
            found[name] = scenario["title"]
    return found


class _FollowsTheRound:
    """A session follows the class's round (a part of :class:`ClassLink`): the round's
    scenario (the teacher's too) and, for a student, what each check of the store found, the
    truth held hidden until the teacher reveals it, then the class's pooled guess."""

    def _check(self, code: str):
        """The class's state and, once its round is revealed, the class's pooled guess (read
        in the same check, off the loop, until the session has it)."""
        found = self.store.class_state(code)
        pooled = None
        if (found is not None and found.revealed
                and (self.pooled is None or found.round != self.round)):
            pooled = self.store.pooled_after_reveal(code)
        return found, pooled

    def _polled(self, checked) -> None:
        """What the store says of the class now (on the event loop)."""
        found, pooled = checked
        self.poll_worked()
        if self.role != "student":
            return
        if found is None:
            self._leave()
            self.message = "The teacher ended the class."
            self.state.param.update(class_code="")
            self.state.notify(self.message, "info")
            return
        self._round(found)
        if pooled is not None and found.revealed:
            self.pooled = pooled

    def _round(self, found: ClassState, *, first: bool = False) -> None:
        """Follow the class to ``found``'s round: its scenario, the truth hidden until the
        round is revealed."""
        new_round = first or found.round != self.round
        if new_round or not found.revealed:
            self.pooled = None
        self.param.update(round=found.round, scenario=found.scenario, n_tasks=found.n_tasks,
                          revealed=found.revealed)
        if new_round and (self.state.scenario != found.scenario or self.state.scenario_edited
                          or not first):
            page = self.state.page
            self.state.apply_preset(found.scenario)
            if self.role == "teacher" and page == "class":
                self.state.page = "class"
        if self.role == "student":
            self._hold(not found.revealed)

    def _hold(self, hidden: bool) -> None:
        self._holding = True
        try:
            self.state.hide_truth = hidden
        finally:
            self._holding = False

    def _hide_changed(self, event) -> None:
        """A student cannot show the truth before the teacher reveals it."""
        if self._holding or self.role != "student" or self.revealed or event.new:
            return
        self.state.notify("The teacher reveals the truth to the class: lock your guess "
                          "meanwhile.", "info")
        self._hold(True)

    def check_now(self) -> None:
        """Ask the store about the round now (after an action)."""
        self.work.check("class")


class ClassLink(_FollowsTheRound, param.Parameterized):
    """One session's place in a class (see the module docstring).

    Parameters
    ----------
    state : ExplorerState
        The session's state (its ``class_code``, ``class_key``, ``hide_truth``, scenario).
    store : ClassStore, optional
        Default: :func:`process_store`.
    """

    role = param.Selector(default="", objects=["", "student", "teacher"],
                          doc="'' (in no class), 'student' or 'teacher'.")
    code = param.String(default="", doc="The class's code ('' in none).")
    round = param.Integer(default=0, doc="The class's round (0 in none).")
    scenario = param.String(default="", doc="The round's scenario.")
    n_tasks = param.Integer(default=0)
    revealed = param.Boolean(default=False, doc="The teacher revealed the round.")
    message = param.String(default="", doc="Why the session is not in the class its link "
                                           "names ('' when it is, or was sent to none).")
    nickname = param.String(default="", doc="The student's nickname (plain text, optional).")
    pooled = param.Parameter(default=None, doc="A student's view of the revealed round: "
                             "(the class's mean guess, (n_tasks, n_tasks), how many locked); "
                             "None before the reveal.")

    def __init__(self, state, store: ClassStore | None = None, **params):
        super().__init__(**params)
        self.state = state
        self._store = store
        #: this session's id in the class (random; the store keeps its guesses under it)
        self.student = secrets.token_urlsafe(12)
        self._holding = False
        self._poll_failing = False
        state.param.watch(self._link_changed, ["class_code", "class_key"])
        state.param.watch(self._hide_changed, "hide_truth")

    @classmethod
    def of(cls, state, store: ClassStore | None = None) -> ClassLink:
        """The session's link with a class (made the first time it is asked for), joined to
        the class the state's link names."""
        parts = session_parts(state)
        link = parts.get("class_link")
        if link is None:
            link = parts["class_link"] = cls(state, store)
            # Joined once registered: while a session is built there is no loop yet and the
            # join runs at once, building the round's page, which asks for the link again
            # (a second link would never hear of the reveal and hide the truth again).
            if state.class_code:
                link._link_changed()
        return link

    @property
    def store(self) -> ClassStore:
        """The store of classes (made on first use: read it off the event loop)."""
        if self._store is None:
            self._store = process_store()
        return self._store

    @property
    def key(self) -> str:
        """The teacher's key (only a teacher's session has one)."""
        return self.state.class_key if self.role == "teacher" else ""

    @property
    def work(self):
        return self.state.work

    # ------------------------------------------------------------------ joining
    def _link_changed(self, *_) -> None:
        code, key = self.state.class_code.strip(), self.state.class_key
        if code == self.code and (self.role == "teacher") == bool(key) and self.role:
            return
        self._leave()
        if not code:
            return
        def compute():   # (the store is made off the loop too: it may create its tables)
            store = self.store
            found = store.class_state(code)
            return found, (store.is_teacher(code, key) if key and found is not None
                           else False)

        self.work.submit("class-join", compute, lambda result: self._joined(code, key, *result),
                         self._failed)

    def _joined(self, code: str, key: str, found: ClassState | None, teacher: bool) -> None:
        if found is None:
            self._refuse(f"There is no open class with the code {code!r}: it may have ended "
                         "or expired. Ask your teacher for the class's link.")
            return
        if key and not teacher:
            self._refuse("This teacher's link has a wrong key (or the class has ended): "
                         "nothing of the class is shown. Use the link the app gave when the "
                         "class was opened.")
            return
        if not teacher:   # hidden before the session is a student's: never "missed" meanwhile
            self._hold(not found.revealed)
        self.param.update(role="teacher" if teacher else "student", code=found.code,
                          message="")
        self._round(found, first=True)
        if teacher:
            if "class" in self.state.param.page.objects:
                self.state.page = "class"
        else:
            poll(self.state, "class", lambda: self._check(found.code), self._polled,
                 self.poll_failed, still=lambda: self.role == "student")

    def _refuse(self, message: str) -> None:
        """The link names no class this session may join: say so, keep nothing of it."""
        self._leave()
        self.message = message
        self.state.param.update(class_code="", class_key="")
        self.state.notify(message, "error")

    def _failed(self, exc: Exception) -> None:
        self.state.notify(f"The class's store could not be reached: {exc}", "error")

    def poll_failed(self, exc: Exception) -> None:
        """A check of the class failed: said once (not every few seconds) until one works."""
        if not self._poll_failing:
            self._poll_failing = True
            self._failed(exc)

    def poll_worked(self) -> None:
        self._poll_failing = False

    def _leave(self) -> None:
        self.work.stop_every("class")
        self.param.update(role="", code="", round=0, scenario="", n_tasks=0, revealed=False,
                          pooled=None)

    # ------------------------------------------------------------------ actions
    def lock(self, guess: Guess, done: Callable[[], None],
             refused: Callable[[Exception], None]) -> None:
        """Commit ``guess`` as this student's for the round (off the loop); ``done()`` once the
        store has it, ``refused(exc)`` if it refused it (a revealed round, a bad guess)."""
        code, student, nickname = self.code, self.student, self.nickname
        self.work.submit("class-lock", lambda: self.store.lock_guess(code, student, guess,
                                                                     nickname.strip()),
                         lambda _: done(), refused)

    def open_class(self, scenario: str = "") -> None:
        """Open a class (off the loop) on ``scenario`` (when a class can guess on it, else
        on :data:`DEFAULT_SCENARIO`) and join it as its teacher: the session's link then
        carries the class's code and the teacher's key (:func:`class_links`)."""
        def compute():
            name = scenario if scenario in class_scenarios() else DEFAULT_SCENARIO
            return self.store.open_class(name, n_tasks=int(scenario_data(name).n_tasks))

        def opened(result) -> None:
            code, key = result
            self.state.param.update(class_code=code, class_key=key)

        self.work.submit("class-open", compute, opened, self._failed)

    def run(self, key: str, action: Callable[[ClassStore], Any],
            done: Callable[[Any], None] | None = None) -> None:
        """A teacher's action on the store (reveal, next round, end), off the loop; then
        ``done(result)`` on it."""
        self.work.submit(f"class-{key}", lambda: action(self.store), done or (lambda _: None),
                         self._failed)


def poll(state, key: str, compute: Callable[[], Any], apply: Callable[[Any], None],
         on_error: Callable[[Exception], None] | None = None, *,
         still: Callable[[], bool] = lambda: True) -> None:
    """Check the class every :data:`POLL_S` seconds through the session's work service
    (:meth:`~explorer.app.work.WorkService.every`). A served session whose document is
    still being made (its link read, its first page built) has no event loop's service yet:
    the check starts once the browser has the page, if ``still()`` says it is wanted."""
    from explorer.app.work import served

    work = state.work
    if work.asynchronous or not served():
        work.every(key, POLL_S, compute, apply, on_error)
        return
    import panel as pn

    def start() -> None:
        if still() and state.work.asynchronous:
            state.work.every(key, POLL_S, compute, apply, on_error)

    pn.state.onload(start)


def app_address(location: Any = None) -> str:
    """The app's address without a query (from the session's ``pn.state.location``), '' when
    unknown."""
    if location is None:
        return ""
    href = str(getattr(location, "href", "") or "")
    if href:
        return href.split("?", 1)[0].split("#", 1)[0]
    return ""


def class_links(code: str, key: str, location: Any = None) -> tuple[str, str]:
    """The student link (``?class=<code>``) and the teacher link (``&key=<key>``)."""
    base = app_address(location)
    return f"{base}?class={code}", f"{base}?class={code}&key={key}"


def class_sidebar(state) -> list:
    """The sidebar's class items: "Open a class" (one click: a class on the session's
    scenario; the Class page then shows its links), or where this session is in a class."""
    import panel as pn

    from explorer.app.work import locked
    from explorer.viz.live import escape

    link = ClassLink.of(state)
    button = pn.widgets.Button(label="Open a class", color="default",
                               sizing_mode="stretch_width",
                               description="A class on this scenario: students guess before "
                                           "the truth is shown, you see their guesses")
    where = pn.pane.HTML("", sizing_mode="stretch_width", styles={"font-size": "15px"})

    def open_class(*_) -> None:
        link.open_class(state.scenario if not state.scenario_edited else "")

    def show(*_) -> None:
        button.visible = not link.role
        if link.role == "student":
            where.object = (f"Class <b>{escape(link.code)}</b>, round {link.round}: "
                            + ("the truth is revealed." if link.revealed else
                               "guess, lock; the teacher reveals the truth."))
        elif link.role == "teacher":
            where.object = (f"You teach class <b>{escape(link.code)}</b> (round {link.round}): "
                            "its page is <i>Class</i>.")
        else:
            where.object = escape(link.message)
        where.visible = bool(where.object)

    button.on_click(locked(open_class))
    link.param.watch(show, ["role", "code", "round", "revealed", "message"])
    show()
    return [pn.pane.Markdown("### Class", margin=(10, 10, 0, 10)), where, button]
