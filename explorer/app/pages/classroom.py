"""The "Class" page (``?page=class``): open a class in one click, and the teacher's view of it.

Issue 41: students guess how the tasks relate before they see the truth; the teacher sees
the class live. Without a class the page offers "Open a class" (also in the sidebar). With
the teacher's link (``?class=<code>&key=<key>``: the key checked by the class's store) it
shows, every :data:`~explorer.app.class_link.POLL_S` seconds while the page is shown (read
off the event loop through the session's work service): how many locked a guess, the class's
mean guess beside the truth (and beside the model once the teacher fitted it), the
distribution of the students' scores, the pairs the class got most wrong, and the buttons
"Reveal to the class", "Next round", "Download CSV" and "End the class". Without the key (a
student's link, a wrong key) it shows nothing of the class. Nicknames are escaped.
"""

from __future__ import annotations

import io

import numpy as np
import panel as pn

from explorer.app.access import name_figures
from explorer.app.class_link import (
    ClassLink,
    class_links,
    class_scenarios,
    poll,
    relation_truth,
    scenario_data,
)
from explorer.app.components import figure_pane, flowing_row, intro_card, set_flex_objects
from explorer.app.guess import GuessBook
from explorer.app.work import locked
from explorer.classroom import most_wrong_pairs, pooled_guess, score_guess
from explorer.compare.agreement import UNRELATED_SHARE, relationship_agreement
from explorer.viz.guess import ScoreBars, relation_words
from explorer.viz.live import MatrixHeatmap, agreement_html, escape

__all__ = ["ClassPage", "class_snapshot"]

INTRO = """
## Class: predict, then reveal

Students guess how the tasks relate **before** they see the truth; then the truth, their
guess and the model's estimate are shown side by side. Predicting first, then facing the gap,
improves what people recall and understand (Kim, Reinecke & Hullman, CHI 2017).

1. **Open a class** (here or in the sidebar): you get a student link and a teacher link.
2. Students open the student link, click their guess on the grid and press *Lock my guess*.
   This page counts them and pools their guesses.
3. **Reveal to the class**: every student's page turns to the truth, their guess and the
   model's estimate. *Next round* moves the class to another scenario.
"""

#: The teacher's check of the class (a key of the session's recurring checks).
CHECK = "class-teacher"


def class_snapshot(store, code: str, key: str) -> dict | None:
    """What the teacher's view shows of class ``code`` now (numbers only; off the loop):
    the round, the guesses pooled, each student's score, the pairs most wrong, the nicknames
    and the CSV. None when the class is gone."""
    found = store.class_state(code)
    if found is None:
        return None
    records = store.guesses(code, key)
    data = scenario_data(found.scenario)
    truth = data.truth or {}
    relation = relation_truth(truth)
    guesses = [record.guess for record in records
               if record.guess.relation.shape == (data.n_tasks, data.n_tasks)]
    scored = {"task_relation": relation} if relation is not None else {}
    return {
        "state": found, "data": data, "relation": relation,
        "n_locked": len(records),
        "nicknames": [record.nickname for record in records],
        "pooled": pooled_guess(guesses) if guesses else None,
        "scores": [score_guess(g, scored)["relation"]["sign_agreement"] for g in guesses],
        "wrong": (most_wrong_pairs(guesses, relation, k=3)
                  if guesses and relation is not None else []),
        "csv": store.to_csv(code, key),
        "signature": (found.round, found.revealed,
                      tuple((r.student, r.locked_at) for r in records)),
    }


class _TeacherActions:
    """What the teacher does on the Class page: open a class, reveal the truth, the next
    round (the teacher's session moves to its data), end the class, download its CSV."""

    def open_class(self) -> None:
        state = self.state
        self.link.open_class(state.scenario if not state.scenario_edited else "")

    def reveal(self) -> None:
        code, key = self.link.code, self.state.class_key
        self.link.run("reveal", lambda store: store.reveal(code, key), self._acted)

    def next_round(self) -> None:
        name = self.next_scenario.value
        if not name:
            return
        code, key = self.link.code, self.state.class_key

        def action(store):
            return store.next_round(code, key, name, n_tasks=int(scenario_data(name).n_tasks))

        def moved(_) -> None:
            self.state.apply_preset(name)       # the teacher's session on the round's data
            self.state.page = "class"
            self._acted()

        self.link.run("next", action, moved)

    def end_class(self) -> None:
        code, key = self.link.code, self.state.class_key

        def ended(_) -> None:
            self.state.param.update(class_code="", class_key="")
            self.link.message = "The class has ended: its guesses are deleted."

        self.link.run("end", lambda store: store.end_class(code, key), ended)

    def _acted(self, *_) -> None:
        self.state.work.check(CHECK)

    def _csv(self):
        snapshot = self.snapshot
        return io.StringIO(snapshot["csv"] if snapshot else "")


class ClassPage(_TeacherActions, pn.viewable.Viewer):
    """The Class page of one session (see the module docstring)."""

    def __init__(self, state, **params):
        super().__init__(**params)
        self.state = state
        self.link = ClassLink.of(state)
        self.book = GuessBook.of(state)
        self._location = pn.state.location
        self._shown = True
        self.snapshot: dict | None = None
        self._views: dict[str, MatrixHeatmap] = {}
        self.message = pn.pane.Alert("", alert_type="warning", visible=False,
                                     sizing_mode="stretch_width")
        self.open_button = pn.widgets.Button(label="Open a class", color="primary",
                                             width=200)
        self.open_note = pn.pane.Markdown(
            "Opens a class on the scenario chosen in the sidebar (or on *An unrelated task "
            "among related ones* when none is chosen): you get the links to share.",
            sizing_mode="stretch_width")
        self.opening = pn.Column(self.open_note, self.open_button, sizing_mode="stretch_width")
        self.header = pn.pane.HTML("", sizing_mode="stretch_width",
                                   styles={"font-size": "18px"})
        self.student_link = pn.widgets.TextInput(label="Student link (share it)",
                                                 sizing_mode="stretch_width")
        self.teacher_link = pn.widgets.TextInput(label="Teacher link (keep it: it has your key)",
                                                 sizing_mode="stretch_width")
        self.count = pn.pane.HTML("", styles={"font-size": "20px"}, margin=(5, 10))
        self.reveal_button = pn.widgets.Button(label="Reveal to the class",
                                               color="primary", width=200)
        self.next_scenario = pn.widgets.Select(label="Next round's scenario", options={},
                                               width=300)
        self.next_button = pn.widgets.Button(label="Next round", width=140)
        self.download = pn.widgets.FileDownload(callback=self._csv, filename="class.csv",
                                                label="Download CSV", width=160,
                                                color="default")
        self.end_button = pn.widgets.Button(label="End the class", color="danger",
                                            width=160)
        self.matrices = flowing_row()
        self.bars: ScoreBars | None = None
        self.class_row = flowing_row()
        self.wrong = pn.pane.HTML("", width=420, styles={"font-size": "15px"})
        self.names = pn.pane.HTML("", sizing_mode="stretch_width", styles={"font-size": "14px"})
        self.teacher = pn.Column(
            self.header, pn.Row(self.student_link, self.teacher_link,
                                sizing_mode="stretch_width"),
            self.count,
            flowing_row(self.reveal_button, self.next_scenario, self.next_button,
                        self.download, self.end_button),
            self.matrices, self.class_row, self.names, sizing_mode="stretch_width",
            visible=False)
        self.intro = intro_card(INTRO, collapsed=False)   # folded for a class's teacher
        self.layout = pn.Column(self.intro, self.message, self.opening, self.teacher,
                                sizing_mode="stretch_width")
        self.open_button.on_click(locked(lambda *_: self.open_class()))
        self.reveal_button.on_click(locked(lambda *_: self.reveal()))
        self.next_button.on_click(locked(lambda *_: self.next_round()))
        self.end_button.on_click(locked(lambda *_: self.end_class()))
        self.link.param.watch(locked(lambda *_: self._role_changed()),
                              ["role", "code", "message"])
        self._role_changed()

    def __panel__(self):
        return self.layout

    def set_shown(self, shown: bool) -> None:
        """The app shows or hides the page: the class is checked only while it is shown."""
        self._shown = shown
        self._role_changed()

    def close(self) -> None:
        self.state.work.stop_every(CHECK)

    # ------------------------------------------------------------------ who is looking
    def _role_changed(self) -> None:
        link = self.link
        teacher = link.role == "teacher"
        self.message.object = escape(link.message)
        self.message.visible = bool(link.message)
        if link.role == "student":
            self.message.object = (f"You are in class <b>{escape(link.code)}</b> as a student. "
                                   "The teacher's view needs the teacher's link (with its key).")
            self.message.visible = True
        self.opening.visible = not link.role
        self.teacher.visible = teacher
        self.intro.collapsed = teacher
        if not teacher:
            self.snapshot = None
            self.state.work.stop_every(CHECK)
            return
        student, teacher_link = class_links(link.code, self.state.class_key, self._location)
        self.student_link.value, self.teacher_link.value = student, teacher_link
        self.download.filename = f"class-{link.code}.csv"
        if not self.next_scenario.options:
            self.state.work.submit("class-scenarios", class_scenarios, self._scenarios)
        if self._shown:
            if not self.state.work.checking(CHECK):
                code, key = link.code, self.state.class_key
                poll(self.state, CHECK, lambda: class_snapshot(link.store, code, key),
                     self._show,
                     self.link.poll_failed,
                     still=lambda: self._shown and self.link.role == "teacher")
        else:
            self.state.work.stop_every(CHECK)

    def _scenarios(self, found: dict) -> None:
        self.next_scenario.options = {title: name for name, title in found.items()}

    # ------------------------------------------------------------------ the view
    def _heatmap(self, name: str, names: list[str], title: str, limit: float = 1.0):
        view = self._views.get(name)
        if view is None:
            view = self._views[name] = MatrixHeatmap(names, names, limit=limit, title=title,
                                                     width=360, height=330)
            view.pane = pn.Column(figure_pane(view.figure),
                                  pn.pane.HTML("", width=360, styles={"font-size": "14px"}),
                                  margin=(0, 10))
        if view.row_names != names:
            view.set_names(names, names)
        view.set_limit(limit)
        view.figure.title.text = title
        return view

    def _show(self, snapshot: dict | None) -> None:
        """Show what the store says of the class now (on the loop)."""
        self.link.poll_worked()
        if snapshot is None:
            self.state.param.update(class_code="", class_key="")
            self.link.message = "The class has ended or expired."
            return
        self.snapshot = snapshot
        found, data, relation = snapshot["state"], snapshot["data"], snapshot["relation"]
        titles = class_scenarios_titles(found.scenario)
        self.header.object = (f"Class <b>{escape(found.code)}</b> · round {found.round}: "
                              f"<i>{escape(titles)}</i> · "
                              + ("<b>revealed</b>" if found.revealed else "not revealed yet"))
        n = snapshot["n_locked"]
        self.count.object = f"<b>{n} locked</b> a guess this round."
        self.reveal_button.disabled = found.revealed
        names = [str(t) for t in data.task_names]
        self._show_matrices(snapshot, names, relation, data, found)
        if self.bars is None:
            self.bars = ScoreBars()
            set_flex_objects(self.class_row, [figure_pane(self.bars.figure), self.wrong])
        self.bars.update(snapshot["scores"])
        name_figures(self.bars.figure)
        self.wrong.object = _wrong_pairs(snapshot["wrong"], names, relation, n)
        shown = [escape(name) if name.strip() else "<i>anonymous</i>"
                 for name in snapshot["nicknames"]]
        self.names.object = ("Locked: " + ", ".join(shown)) if shown else ""

    def _show_matrices(self, snapshot: dict, names: list[str], relation, data, found) -> None:
        """The class's mean guess, the truth and the teacher's fitted model, side by side."""
        items = []
        pooled = snapshot["pooled"]
        mean = self._heatmap("pooled", names, "The class's mean guess")
        if pooled is not None:
            mean.update(pooled)   # (a pair nobody guessed: "?")
            agreement = relationship_agreement(np.nan_to_num(pooled, nan=0.0), relation)
            mean.pane[1].object = agreement_html(agreement).replace(
                "Agreement with the truth", "The class's mean against the truth")
        else:
            mean.update(np.full((len(names), len(names)), np.nan))
            mean.pane[1].object = "No guess locked yet."
        items.append(mean.pane)
        if relation is not None:
            truth = self._heatmap("truth", names, "True relation")
            truth.update(np.asarray(relation, dtype=float))
            truth.pane[1].object = ("+1 related, −1 negated, 0 unrelated." if (
                data.truth or {}).get("task_relation") is not None else
                "The true cosine of the tasks' weights.")
            items.append(truth.pane)
        model = self.book.model
        if (model is not None and model.get("relation") is not None and relation is not None
                and self.state.scenario == found.scenario and not self.state.scenario_edited
                and np.shape(model["relation"]) == (len(names), len(names))):
            estimate = model["relation"]
            view = self._heatmap("model", names, f"The model's {model['key']} "
                                 f"({model['title']})",
                                 limit=float(np.nanmax(np.abs(estimate))) or 1.0)
            view.update(estimate)
            view.pane[1].object = agreement_html(relationship_agreement(estimate, relation)
                                                 ).replace("Agreement with the truth",
                                                           "The model against the truth")
            items.append(view.pane)
        for name, view in self._views.items():   # the figures' accessible names
            name_figures(view.figure, truth=name == "truth")
        if [id(o) for o in self.matrices.objects] != [id(o) for o in items]:
            set_flex_objects(self.matrices, items)


def _wrong_pairs(wrong, names: list[str], relation, n_locked: int) -> str:
    """The pairs the class got most wrong (``(i, j, share)``), as HTML ('' before a lock)."""
    if not wrong:
        return "<b>The pairs the class got most wrong</b><br>none yet" if n_locked else ""
    truth_signs = signs_of(relation)
    lines = [f"<b>{escape(names[i])}–{escape(names[j])}</b>: {share:.0%} of the class "
             f"wrong (the truth: {relation_words(truth_signs[i, j])})"
             for i, j, share in wrong]
    return "<b>The pairs the class got most wrong</b><br>" + "<br>".join(lines)


def signs_of(relation) -> np.ndarray:
    """+1 / -1 / 0 of a true relation (a cosine within :data:`UNRELATED_SHARE` of the
    largest counts as unrelated), as the class's scores judge them."""
    relation = np.asarray(relation, dtype=float)
    off = ~np.eye(relation.shape[0], dtype=bool)
    scale = np.nanmax(np.abs(relation[off]), initial=0.0) if off.any() else 0.0
    return np.where(np.abs(relation) > UNRELATED_SHARE * scale, np.sign(relation), 0.0)


def class_scenarios_titles(name: str) -> str:
    """The title of scenario ``name`` (its name when it has none)."""
    from explorer.data.catalog import load_preset

    try:
        return load_preset(name)["title"]
    except ValueError:
        return name
