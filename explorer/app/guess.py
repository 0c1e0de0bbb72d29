""""Your guess": predict how the tasks relate before the truth is shown, then face the gap
(issue 41; Kim, Reinecke & Hullman, CHI 2017).

With the truth hidden (the sidebar's *Hide the truth*, or a class's round not yet revealed)
the Tasks page and every model page whose data have a truth show a block (:class:`GuessBlock`;
on a model page the section :class:`GuessPanel` under it):

* a tasks x tasks grid (:class:`explorer.viz.guess.GuessGrid`) where a click cycles a pair
  through related / negated / unrelated / don't know; where the page is about them
  (Outliers, :data:`ABOUT`), the outlier tasks (a row of toggles) and the shared features (a
  choice of at most :data:`MAX_FEATURES`);
* "Lock my guess": alone, the session keeps it; in a class (:mod:`explorer.app.class_link`)
  the store has it before the block says "locked";
* once the truth is shown (the block's "Show the truth", or the teacher's reveal), the
  locked guess, the truth and the page's model's estimate side by side, each with its
  agreement (:func:`explorer.classroom.score_guess`,
  :func:`explorer.compare.agreement.relationship_agreement`; precision and recall for
  outliers and features) and one sentence on where they went wrong
  (:func:`explorer.classroom.where_wrong`).

The session has one guess (:class:`GuessBook`), whichever page it was made on: the Tasks
page's grid and a model page's show the same one. Bokeh models are made on the event loop,
the first time a block is shown with a truth to guess.
"""

from __future__ import annotations

import time

import numpy as np
import panel as pn
import param

from explorer.app.access import name_figures
from explorer.app.class_link import ClassLink, relation_truth, session_parts
from explorer.app.components import figure_pane, flowing_row, set_flex_objects
from explorer.app.page_panel import PagePanel
from explorer.app.work import locked
from explorer.classroom import Guess, score_guess, where_wrong
from explorer.compare.agreement import relationship_agreement, truth_for
from explorer.viz.guess import GuessGrid, blank
from explorer.viz.live import MatrixHeatmap, agreement_html, escape

__all__ = ["ABOUT", "GuessBlock", "GuessBook", "GuessPanel", "MAX_FEATURES", "model_estimate"]

#: What a page's guess covers besides the pairs: outlier tasks, shared features.
ABOUT = {"outliers": ("outliers", "features")}
#: Most features a guess of the shared ones names.
MAX_FEATURES = 10
#: The learned task x task matrices a guess's truth is compared with, in order of preference
#: (the page pairs the first its model has with the truth).
ESTIMATE_KEYS = ("correlation", "W_normalised", "similarity", "W")

HOW = ("**Your guess**, before the truth is shown: click a pair of tasks to cycle it "
       "through *related* (+), *negated* (−), *unrelated* (0) and *don't know* (?). "
       "Then lock it, and compare it with the truth.")


def model_estimate(estimator, truth: dict | None, m: int):
    """``(key, matrix)`` of the estimator's learned tasks x tasks matrix a page pairs with
    the tasks' truth (:data:`ESTIMATE_KEYS`, judged by
    :func:`explorer.compare.agreement.truth_for`); None when it learns none."""
    relationships = getattr(estimator, "task_relationships", None)
    if relationships is None:
        return None
    learned = dict(relationships())
    for key in (*ESTIMATE_KEYS, *learned):
        matrix = learned.get(key)
        if matrix is None or np.shape(matrix) != (m, m):
            continue
        paired = truth_for(key, (m, m), truth)
        if paired is not None and paired[0] in ("task_relation", "task_similarity"):
            return key, np.asarray(matrix, dtype=float)
    return None


def _share(value: float) -> str:
    return "n/a" if not np.isfinite(value) else f"{value:.0%}"


def detection_line(what: str, scores: dict | None) -> str:
    """'Outliers: precision 50%, recall 100% (2 guessed, 1 true).'"""
    if scores is None:
        return ""
    return (f"{what}: precision <b>{_share(scores['precision'])}</b>, recall "
            f"<b>{_share(scores['recall'])}</b> ({scores['n_guessed']} named, "
            f"{scores['n_true']} true).")


def _precision_recall(found: np.ndarray, true: np.ndarray) -> dict:
    found, true = np.asarray(found, dtype=bool), np.asarray(true, dtype=bool)
    hits = int(np.sum(found & true))
    return {"precision": hits / found.sum() if found.sum() else float("nan"),
            "recall": hits / true.sum() if true.sum() else float("nan"),
            "n_guessed": int(found.sum()), "n_true": int(true.sum())}


# ---------------------------------------------------------------------- the session's guess
class GuessBook(param.Parameterized):
    """The session's one guess (:meth:`of`): the draft being clicked, the locked one, and the
    last model estimate a page fitted on the same data (the teacher's view shows it)."""

    version = param.Integer(default=0, doc="Counts changes of the draft or the lock.")

    def __init__(self, state, **params):
        super().__init__(**params)
        self.state = state
        self.data = None                    # the data (truth included) guessed about
        self.relation = np.zeros((0, 0))
        self.outliers = np.zeros(0, dtype=bool)
        self.features: tuple[int, ...] = ()
        self.locked: Guess | None = None
        self.locked_at = ""
        self.model: dict | None = None      # {"title", "relation", "outliers", "features"}

    @property
    def link(self) -> ClassLink:
        """The session's link with a class (:meth:`ClassLink.of`)."""
        return ClassLink.of(self.state)

    @classmethod
    def of(cls, state) -> GuessBook:
        """The session's guess (made the first time it is asked for)."""
        parts = session_parts(state)
        book = parts.get("guess_book")
        if book is None:
            book = parts["guess_book"] = cls(state)
            # Registered before the link is made: joining a class may build the round's
            # page at once (no loop yet while a session is built), which asks for the book
            # again; before, that made a second book and a second link, and the second
            # link, never told of the reveal, hid the truth again at each check.
            ClassLink.of(state).param.watch(lambda *_: book.reset(), ["round", "code"])
        return book

    def sync(self) -> None:
        """Start afresh when the data are others than those guessed about."""
        data = self.state.true_dataset()
        if data is not self.data:
            self.data = data
            self.reset()

    def reset(self) -> None:
        data = self.data
        m = 0 if data is None else data.n_tasks
        self.relation = blank(m)
        self.outliers = np.zeros(m, dtype=bool)
        self.features = ()
        self.locked, self.locked_at, self.model = None, "", None
        self.version += 1

    def touch(self) -> None:
        self.version += 1

    def guess(self, about: tuple[str, ...]) -> Guess:
        """The draft as a :class:`~explorer.classroom.Guess` (outliers and features when the
        page is about them and the data know them)."""
        truth = (self.data.truth or {}) if self.data is not None else {}
        outliers = (self.outliers.copy() if "outliers" in about
                    and truth.get("outlier_tasks") is not None else None)
        features = (tuple(sorted(self.features)) if "features" in about
                    and truth.get("shared_features") is not None else None)
        return Guess(self.relation.copy(), outliers, features)

    def keep(self, guess: Guess) -> None:
        self.locked = guess
        self.locked_at = time.strftime("%H:%M:%S")
        self.touch()


def guesses_on(state) -> bool:
    """Whether ``state`` is a session's state a guess can be made on (its truth can be
    hidden, its data read with their truth, and it can join a class)."""
    return (hasattr(state, "true_dataset") and hasattr(state, "param")
            and all(name in state.param for name in ("hide_truth", "class_code", "class_key")))


# ---------------------------------------------------------------------- the block
class _GuessChoices:
    """What a :class:`GuessBlock` asks besides the pairs and says of the lock: the outlier
    tasks and shared features (kept equal to the session's guess), the nickname, the status
    line; the grid's clicks and the choices' changes go to the session's guess."""

    def _status_text(self) -> str:
        book = self.book
        if book.locked is None:
            return ("Nothing locked yet." if self.link.role != "student" else
                    f"Class <b>{escape(self.link.code)}</b>, round {self.link.round}: lock "
                    "your guess before the teacher reveals the truth.")
        who = escape(self.link.nickname.strip()) or "anonymous"
        if self.link.role == "student":
            return (f"<b>Locked</b> at {book.locked_at} as <b>{who}</b>: the class's store "
                    "has it. You may change it and lock again until the teacher reveals the "
                    "truth.")
        return (f"<b>Locked</b> at {book.locked_at}. Press <i>Show the truth</i> when you are "
                "ready.")

    def _sync_choices(self, data, names, outliers, features, guessing: bool) -> None:
        asks_outliers = outliers is not None
        self.outliers.visible = self._outliers_label.visible = asks_outliers
        if asks_outliers:
            options = {name: t for t, name in enumerate(names)}
            if self.outliers.options != options:
                self.outliers.options = options
            picked = [int(t) for t in np.flatnonzero(self.book.outliers)]
            if sorted(self.outliers.value) != picked:
                self.outliers.value = picked
        asks_features = features is not None
        self.features.visible = asks_features
        if asks_features:
            options = {str(name): k for k, name in enumerate(data.feature_names)}
            if self.features.options != options:
                self.features.options = options
            if sorted(self.features.value) != sorted(self.book.features):
                self.features.value = list(self.book.features)
        self.outliers.disabled = self.features.disabled = not guessing

    def _tapped(self, i: int, j: int) -> None:
        book = self.book
        if book.relation.shape == self.grid.relation.shape:
            book.relation[i, j] = book.relation[j, i] = self.grid.relation[i, j]
            book.touch()

    def _outliers_picked(self, event) -> None:
        if self.mode() != "guess":
            return
        picked = np.zeros(self.book.relation.shape[0], dtype=bool)
        picked[[int(t) for t in event.new if 0 <= int(t) < picked.size]] = True
        if not np.array_equal(picked, self.book.outliers):
            self.book.outliers = picked
            self.book.touch()

    def _features_picked(self, event) -> None:
        if self.mode() != "guess":
            return
        chosen = tuple(sorted(int(k) for k in event.new))[:MAX_FEATURES]
        if chosen != self.book.features:
            self.book.features = chosen
            self.book.touch()

    def _nickname_typed(self, event) -> None:
        if self.link.nickname != event.new:
            self.link.nickname = event.new

    def _nickname_set(self, event) -> None:
        if self.nickname.value != event.new:
            self.nickname.value = event.new


class _GuessReveal:
    """The reveal of a :class:`GuessBlock`: the locked guess scored against the truth, the
    truth, and the page's fitted model beside them, each with its agreement."""

    def _reveal(self, data, names, relation, outliers, features) -> None:
        book = self.book
        guess = book.locked
        truth = {"task_relation": np.asarray(relation, dtype=float),
                 "outlier_tasks": outliers, "shared_features": features}
        scores = score_guess(guess, {k: v for k, v in truth.items() if v is not None})
        n_open = int(np.sum(np.isnan(guess.relation[~np.eye(data.n_tasks, dtype=bool)]))) // 2
        lines = [agreement_html(scores["relation"]).replace(
            "Agreement with the truth", "Your guess against the truth")]
        if n_open:
            lines.append(f"{n_open} pair{'s' if n_open > 1 else ''} left open (don't know) "
                         "are not counted.")
        lines += [detection_line("Outlier tasks", scores.get("outliers")),
                  detection_line("Shared features", scores.get("features"))]
        self._grid_caption.object = "<br>".join(line for line in lines if line)
        # the truth
        view = self._heatmap("truth", names)
        if view.row_names != names:
            view.set_names(names, names)
        view.update(np.asarray(relation, dtype=float))
        view.figure.title.text = ("True relation" if (data.truth or {}).get("task_relation")
                                  is not None else "True cosine of the weights")
        said = ["+1 related (blue), −1 negated (red), 0 unrelated (grey)."
                if (data.truth or {}).get("task_relation") is not None else
                "The true cosine of the tasks' weights (its sign: related or negated; near 0 "
                "unrelated)."]
        if outliers is not None:
            said.append("True outlier tasks: <b>" + escape(", ".join(
                names[t] for t in np.flatnonzero(outliers)) or "none") + "</b>.")
        if features is not None:
            said.append(f"True shared features: <b>{int(np.sum(features))}</b> of "
                        f"{len(features)}.")
        self._truth_caption.object = " ".join(said)
        self.truth_column.visible = True
        # the model
        model = self.model if self.model is not None and self.model.get("data") is data else None
        estimate = model.get("relation") if model else None
        if model is not None:
            self._show_model(model, names, relation, outliers, features)
        elif self.page_title:
            self._model_note.object = (f"Run the fit of <i>{escape(self.page_title)}</i>: "
                                       "its estimate joins your guess and the truth here.")
        self.model_column.visible = model is not None
        self._model_note.visible = model is None and bool(self.page_title)
        self.class_column.visible = self._show_class(names, relation)
        self._arrange()
        self.sentence.object = escape(where_wrong(guess, relation, estimate, names))
        self.sentence.visible = True

    #: The reveal's heatmaps: attribute of the view, of its caption, its column, its title.
    HEATMAPS = {"truth": ("_truth_view", "_truth_caption", "truth_column", "True relation"),
                "class": ("_class_view", "_class_caption", "class_column",
                          "The class's mean guess"),
                "model": ("_model_view", "_model_caption", "model_column", "")}

    def _heatmap(self, which: str, names) -> MatrixHeatmap:
        """The reveal's heatmap ``which`` (:data:`HEATMAPS`), made the first time with its
        caption under it in its column."""
        view_attr, caption_attr, column_attr, title = self.HEATMAPS[which]
        view = getattr(self, view_attr)
        if view is None:
            view = MatrixHeatmap(names, names, limit=1.0, title=title, width=340, height=320)
            caption = pn.pane.HTML("", width=340, styles={"font-size": "14px"})
            setattr(self, view_attr, view)
            setattr(self, caption_attr, caption)
            getattr(self, column_attr).objects = [figure_pane(view.figure), caption]
        view.figure.visible = True   # (the figure's flag: see PagePanes._arrange)
        return view

    def _ready_for_the_reveal(self, names) -> None:
        """A student's reveal comes from the teacher, to a whole class at once: its figures
        are made and sent, hidden (their columns are), while the student guesses, so the
        reveal only fills and shows them (a browser building three figures at the reveal
        took seconds on a busy machine)."""
        for which in ("truth", "model", "class"):
            view = self._heatmap(which, names)
            if view.row_names != names:
                view.set_names(names, names)

    def _show_class(self, names, relation) -> bool:
        """The class's mean guess beside the truth, once the teacher revealed the round (a
        student's view: pooled, never another student's guess). False when there is none."""
        pooled = self.link.pooled if self.link.role == "student" else None
        if pooled is None or pooled[0].shape != (len(names), len(names)):
            return False
        mean, n = pooled
        view = self._heatmap("class", names)
        if view.row_names != names:
            view.set_names(names, names)
        view.update(mean)   # (a pair nobody guessed: "?")
        agreement = relationship_agreement(np.nan_to_num(mean, nan=0.0), relation)
        self._class_caption.object = (
            f"The mean of the {n} guess{'es' if n != 1 else ''} locked in the class.<br>"
            + agreement_html(agreement).replace("Agreement with the truth",
                                                "The class against the truth"))
        return True

    def _show_model(self, model, names, relation, outliers, features) -> None:
        lines = []
        estimate = model.get("relation")
        if estimate is not None:
            limit = float(np.nanmax(np.abs(estimate))) or 1.0
            view = self._heatmap("model", names)
            if view.row_names != names:
                view.set_names(names, names)
            view.set_limit(limit)
            view.update(estimate)
            view.figure.title.text = f"The model's {model['key']}"
            lines.append(agreement_html(relationship_agreement(estimate, relation)).replace(
                "Agreement with the truth", "The model against the truth"))
        else:   # the caption alone
            self._heatmap("model", names).figure.visible = False
            lines.append(f"The model ({escape(model['name'])}) learns no tasks x tasks "
                         "matrix.")
        if outliers is not None and model.get("outliers") is not None:
            lines.append(detection_line("The model's outlier tasks",
                                        _precision_recall(model["outliers"], outliers)))
        if features is not None and model.get("features") is not None:
            lines.append(detection_line("The model's shared features",
                                        _precision_recall(model["features"], features)))
        self._model_caption.object = "<br>".join(lines)


class GuessBlock(_GuessChoices, _GuessReveal, pn.viewable.Viewer):
    """The guess of one page (see the module docstring).

    Parameters
    ----------
    state : ExplorerState
    about : tuple of str
        What the page's guess covers besides the pairs (:data:`ABOUT`).
    page_title : str
        The page's title ('' for the Tasks page, which fits no model).
    """

    def __init__(self, state, *, about: tuple[str, ...] = (), page_title: str = "", **params):
        super().__init__(**params)
        self.state, self.about, self.page_title = state, tuple(about), page_title
        self.layout = pn.Card(title="Your guess", visible=False)
        if not guesses_on(state):   # a stand-in state (a test's): nothing to guess about
            return
        self.book = GuessBook.of(state)
        self.link = self.book.link
        self.grid: GuessGrid | None = None   # made the first time a guess is asked for
        self.model: dict | None = None       # this page's fitted model, on these data
        self._truth_view: MatrixHeatmap | None = None
        self._model_view: MatrixHeatmap | None = None
        self.intro = pn.pane.Markdown(HOW, sizing_mode="stretch_width", margin=(0, 10))
        self.outliers = pn.widgets.CheckButtonGroup(
            label="Outlier tasks", options={}, value=[], color="default", variant="outline",
            margin=(0, 10))
        self._outliers_label = pn.pane.Markdown("**Outlier tasks**: click the ones you think "
                                                "are outliers.", margin=(5, 10, 0, 10))
        self.features = pn.widgets.MultiChoice(
            label=f"Shared features (at most {MAX_FEATURES})", options={}, value=[],
            max_items=MAX_FEATURES, width=300)
        self.nickname = pn.widgets.TextInput(label="Nickname (optional)", max_length=40,
                                             placeholder="anonymous", width=220)
        self.lock_button = pn.widgets.Button(label="Lock my guess", color="primary",
                                             width=160)
        self.show_button = pn.widgets.Button(label="Show the truth", width=160)
        self.status = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                   styles={"font-size": "15px"})
        self.controls = pn.Column(self._outliers_label, self.outliers, self.features,
                                  self.nickname, pn.Row(self.lock_button, self.show_button),
                                  self.status, width=360, margin=0)
        self.guess_column = pn.Column(margin=(0, 10), width=None)
        self.truth_column = pn.Column(margin=(0, 10), visible=False)
        self.model_column = pn.Column(margin=(0, 10), visible=False)
        self.class_column = pn.Column(margin=(0, 10), visible=False)
        self._class_view: MatrixHeatmap | None = None
        self._model_note = pn.pane.HTML("", width=300, styles={"font-size": "14px"},
                                        visible=False, margin=(0, 10))
        self.row = flowing_row()
        self.sentence = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                     styles={"font-size": "15px"}, visible=False)
        self.layout.param.update(objects=[self.intro, self.row, self.sentence], collapsed=False,
                                 sizing_mode="stretch_width", margin=(10, 10))
        self.lock_button.on_click(locked(lambda *_: self.lock()))
        self.show_button.on_click(locked(lambda *_: self.show_truth()))
        self.outliers.param.watch(locked(self._outliers_picked), "value")
        self.features.param.watch(locked(self._features_picked), "value")
        self.nickname.param.watch(self._nickname_typed, "value")
        self.link.param.watch(self._nickname_set, "nickname")
        state.param.watch(locked(lambda *_: self.refresh()), ["hide_truth", "dataset"])
        self.link.param.watch(locked(lambda *_: self.refresh()), ["role", "revealed", "pooled"])
        self.book.param.watch(locked(lambda *_: self.refresh()), "version")
        self.refresh()

    def __panel__(self):
        return self.layout

    # ------------------------------------------------------------------ what is shown
    def _truths(self):
        """(data, relation truth, outlier truth, feature truth) of the data guessed about."""
        data = self.book.data
        truth = (data.truth or {}) if data is not None else {}
        outliers = truth.get("outlier_tasks") if "outliers" in self.about else None
        features = truth.get("shared_features") if "features" in self.about else None
        return data, relation_truth(truth), outliers, features

    def mode(self) -> str:
        """'guess' (the truth hidden), 'reveal' (a locked guess and the truth), 'missed' (a
        class revealed a round this session locked nothing for) or '' (nothing shown)."""
        data, relation, outliers, features = self._truths()
        if data is None or data.n_tasks < 2 or relation is None:
            return ""
        if self.state.hide_truth:
            return "guess"
        if self.book.locked is not None:
            return "reveal"
        return "missed" if self.link.role == "student" else ""

    def refresh(self) -> None:
        """Show what the session's guess and the truth's state call for (on the loop)."""
        self._refresh()
        for view, truth in ((self.grid, False), (self._truth_view, True),
                            (self._model_view, False), (self._class_view, False)):
            if view is not None:   # (titles change: the figures' accessible names follow)
                name_figures(view.figure, truth=truth)

    def _refresh(self) -> None:
        self.book.sync()
        mode = self.mode()
        self.layout.visible = bool(mode)
        if not mode:
            return
        data, relation, outliers, features = self._truths()
        names = [str(n) for n in self.state.dataset.task_names] if self.state.dataset else []
        if len(names) != data.n_tasks:
            names = [str(n) for n in data.task_names]
        if self.grid is None:
            self.grid = GuessGrid(names)
            self.grid.on_tap(self._tapped)
            self._grid_caption = pn.pane.HTML("", width=340, margin=(0, 5),
                                              styles={"font-size": "14px"})
            self.guess_column.objects = [figure_pane(self.grid.figure), self._grid_caption]
        guessing = mode == "guess"
        book = self.book
        shown = book.relation if guessing or book.locked is None else book.locked.relation
        if self.grid.names != names or self.grid.relation.shape != shown.shape:
            self.grid.set_names(names, shown)
        elif not np.array_equal(self.grid.relation, shown, equal_nan=True):
            self.grid.show(shown)
        self.grid.editable = guessing
        self.grid.figure.title.text = "Your guess" if guessing else "Your locked guess"
        self._sync_choices(data, names, outliers, features, guessing)
        in_class = self.link.role == "student"
        self.nickname.visible = in_class and guessing
        self.lock_button.visible = guessing
        self.show_button.visible = guessing
        waiting = in_class and not self.link.revealed
        self.show_button.disabled = waiting
        self.show_button.description = ("The teacher reveals the truth to the class"
                                        if waiting else "Show the truth on every page")
        self.controls.visible = guessing
        self.intro.visible = guessing
        if guessing:
            self.guess_column.visible = True   # (hidden by a "missed" round before)
            self._grid_caption.object = ""
            self.truth_column.visible = self.model_column.visible = False
            self.class_column.visible = False
            self.sentence.visible = False
            self._model_note.visible = False
            self.status.object = self._status_text()
            if in_class:
                self._ready_for_the_reveal(names)
            self._arrange()
            return
        if mode == "missed":
            self._grid_caption.object = ""
            self.guess_column.visible = self._model_note.visible = False
            self.truth_column.visible = self.model_column.visible = False
            self.class_column.visible = False
            self.sentence.object = ("The teacher revealed the truth: you locked no guess this "
                                    "round. The truth is on the page now.")
            self.sentence.visible = True
            return
        self.guess_column.visible = True
        self._reveal(data, names, relation, outliers, features)

    def _arrange(self) -> None:
        """Every part of the block in its row, once: what is shown is chosen by visibility
        alone (a FlexBox whose items change is drawn again whole in the browser, which took
        seconds at a reveal on a busy machine)."""
        items = [self.guess_column, self.controls, self.truth_column, self.model_column,
                 self._model_note, self.class_column]
        if [id(o) for o in self.row.objects] != [id(o) for o in items]:
            set_flex_objects(self.row, items)

    # ------------------------------------------------------------------ actions
    def lock(self) -> None:
        """Lock the draft: alone, the session keeps it; in a class, the store has it before
        the block says so."""
        guess = self.book.guess(self.about)
        if self.link.role != "student":
            self.book.keep(guess)
            return
        self.status.object = "Locking your guess…"

        def refused(exc: Exception) -> None:
            self.status.object = f"<b>Not locked</b>: {escape(exc)}"

        self.link.lock(guess, lambda: self.book.keep(guess), refused)

    def show_truth(self) -> None:
        """The student's own reveal (alone, or in a class once the teacher revealed)."""
        if self.link.role == "student" and not self.link.revealed:
            return
        self.state.hide_truth = False

    def set_model(self, model: dict | None) -> None:
        """This page's fitted model ({"title", "name", "key", "relation", "outliers",
        "features", "data"}), or None after a reset."""
        if not guesses_on(self.state):
            return
        self.model = model
        if model is not None:
            self.book.model = model
        if self.mode() == "reveal":
            self.refresh()


# ---------------------------------------------------------------------- a model page's section
class GuessPanel(PagePanel):
    """"Your guess" under a model page (the kit adds it to every page; it shows only where
    the data have a truth to guess)."""

    below = True

    def __init__(self, state, page, runner=None):
        self.block = GuessBlock(state, about=ABOUT.get(page.slug, ()), page_title=page.title)
        self.state, self.page, self.runner = state, page, runner
        self.layout = self.block.layout
        if runner is not None and guesses_on(state):
            state.param.watch(locked(self._class_revealed), "hide_truth")

    def _class_revealed(self, event) -> None:
        """The teacher's reveal shows the model beside the truth too: on the page a student
        is looking at, a fit that has not started on these data starts, at full speed
        (its estimate joins the reveal when it finishes; the student's own settings).
        Started once the truth is shown (the views relabelled), not before."""
        link = self.block.link
        if (event.new or link.role != "student" or not link.revealed
                or self.state.page != self.page.slug or self.block.model is not None
                or self.runner.session.state != "idle" or self.state.train is None
                or self.page.problem_with(self.state.train)):
            return
        self.runner.run_fast()

    def fitted(self, estimator, result, fit) -> None:
        data = self.state.true_dataset()
        if data is None or data.n_tasks != fit.train.n_tasks:
            return
        found = model_estimate(estimator, data.truth, data.n_tasks)
        model = {"title": self.page.title, "data": data, "name": type(estimator).__name__,
                 "key": found[0] if found else "", "relation": found[1] if found else None,
                 "outliers": getattr(estimator, "outlier_tasks_", None),
                 "features": getattr(estimator, "shared_features_", None)}
        self.block.set_model(model)

    def clear(self) -> None:
        self.block.set_model(None)
