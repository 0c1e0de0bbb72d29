"""The live-fit runner every model page reuses (docs/DESIGN.md, "Live views"): the Panel layer.

:class:`LiveFitRunner` is a thin ``pn.viewable.Viewer`` over a
:class:`~explorer.app.fit_session.FitSession`: Run / Step / Pause / Reset, speed, progress
text, scrub slider (its widgets: :class:`RunControls`), and *one* periodic callback per
session (~100 ms) that is active only while a run is active and renders the newest snapshot
if it changed (:class:`FramePump`). Frames are taken, never queued, and paced by the browser
(:class:`~explorer.app.components.FramePacer`): the next frame goes once the browser has
drawn the last one.
"""

from __future__ import annotations

import time

import panel as pn
import param

from explorer import _compat
from explorer.app.fit_session import RECORD_MAX_BYTES, FitSession
from explorer.app.work import batched, can_poll, locked, on_loop, served

__all__ = ["FramePump", "LiveFitRunner", "RunControls", "SPEEDS"]

SPEEDS = {"1 step/s": 1.0, "2 steps/s": 2.0, "5 steps/s": 5.0, "10 steps/s": 10.0,
          "30 steps/s": 30.0, "unthrottled": None}


def _check_speed(speed: str) -> str:
    if speed not in SPEEDS:
        raise ValueError(f"speed must be one of {list(SPEEDS)}; got {speed!r}.")
    return speed


class RunControls:
    """The runner's widgets: Run / Step / Pause / Reset / Fast, the speed menu, the status
    line, the scrub slider and the alert, in ``layout`` (with the frame ``pacer``).

    ``actions`` maps "run", "step", "pause", "reset", "fast" to what their buttons do (each
    called under the document lock) and "scrub" to what a user's release of the slider does.
    """

    def __init__(self, speed: str, pacer, actions: dict):
        self.run = pn.widgets.Button(label="▶ Run", color="primary", width=90)
        self.step = pn.widgets.Button(label="Step", width=70)
        self.pause = pn.widgets.Button(label="Pause", width=70)
        self.reset = pn.widgets.Button(label="Reset", width=70)
        # a whole fit at full speed one click away from the teaching pace the page opens with
        self.fast = pn.widgets.Button(label="Fast", width=60,
                                      description="Run at full speed (unthrottled)")
        self.speed = pn.widgets.Select(label="Speed", options=list(SPEEDS),
                                       value=_check_speed(speed), width=130)
        self.scrub = pn.widgets.IntSlider(label="Recorded snapshot", start=0, end=1, value=0,
                                          disabled=True, sizing_mode="stretch_width")
        self.alert = pn.pane.Alert("", alert_type="danger", visible=False,
                                   sizing_mode="stretch_width")
        from explorer.app.components import status_line

        # The status line changes on every tick of a run: a component whose text change does
        # not lay the page out again (see LiveText).
        self.status = status_line(_status_html("Ready."), sizing_mode="stretch_width",
                                  margin=(0, 5))
        for name in ("run", "step", "pause", "reset", "fast"):   # they change Bokeh models
            getattr(self, name).on_click(locked(lambda e, act=actions[name]: act()))
        # Only a user's release of the slider (value_throttled) scrubs: the server moves
        # ``value`` on every poll, and the browser may echo stale values of it back.
        self.scrub.param.watch(locked(lambda event: actions["scrub"](event.new)),
                               "value_throttled")
        self._scrub_moved_at = 0.0
        self.layout = pn.Column(
            pn.Row(self.run, self.step, self.pause, self.reset, self.fast, self.speed),
            self.status, self.scrub, self.alert, pacer, sizing_mode="stretch_width")

    def say(self, message: str, level: str) -> None:
        """Show ``message`` in the alert (escaped)."""
        self.alert.object = _escape(message)
        self.alert.alert_type = {"error": "danger"}.get(level, level)
        self.alert.visible = True

    def progress(self, session, *, shown=None, state=None, following: bool = True) -> str:
        """The status text of ``session`` (``shown``: a scrubbed snapshot; ``state``: the
        tick's reading); the slider follows the record."""
        latest = session.latest()
        snap = latest if shown is None else shown
        state = session.state if state is None else state
        obj = "" if snap is None or snap.objective is None else f", objective {snap.objective:.5g}"
        text = f"**{state}** - step {0 if snap is None else snap.step}{obj}"
        if session.one_fit and state == "running":
            # no fit_iter: one fit, nothing to count until it ends
            text = "**fitting** - one fit (the estimator has no fit_iter: no steps to show)"
        if shown is not None and latest is not None and shown is not latest:
            text += f" (scrubbed back; the fit is at step {latest.step})"
        # the slider follows a run twice a second (it costs three widget updates); it is
        # exact whenever the run is not running, and on a scrub
        now = time.monotonic()
        if len(session.record) and (shown is not None or state != "running"
                                    or now - self._scrub_moved_at >= 0.5):
            self._scrub_moved_at = now
            last = len(session.record) - 1
            self.scrub.param.update(end=max(last, 1), disabled=False,
                                    **({"value": last} if following else {}))
        return text

    def cleared(self) -> None:
        """A reset: no alert, an empty slider."""
        self.alert.visible = False
        self.scrub.param.update(value=0, end=1, disabled=True)


class FramePump:
    """The periodic poll of a run and its frames, paced by the browser.

    One periodic callback, active only while a run is; each tick renders the newest snapshot
    if it changed (``render``), once the browser has drawn the last frame (the ``pacer``'s
    acknowledgement, or ``ACK_TIMEOUT_S``), at most ``MAX_FPS`` a second; ``status(state=)``
    shows the tick's progress; ``stopped()`` is called when the poll stops because the run
    did. ``following``: frames show the newest snapshot (not a scrubbed one); ``rendering``:
    the page is shown.
    """

    #: Most frames a second sent to one browser (the poll's tick is the other bound).
    MAX_FPS = 15.0

    #: Longest wait for the browser's acknowledgement of a frame before the next one goes
    #: anyway (a lost acknowledgement must not freeze the view).
    ACK_TIMEOUT_S = 2.0

    def __init__(self, session, pacer, *, render, status, stopped, period_ms: int = 100):
        self.session, self.pacer, self.period_ms = session, pacer, int(period_ms)
        self.render, self.status, self.stopped = render, status, stopped
        self.shown_version = -1
        self.following = True
        self.rendering = True
        self._callback = None
        self._frame_sent_at = 0.0
        self._frame_booked = False
        # The next frame goes as soon as the browser acknowledges this one, at most MAX_FPS
        # a second: waiting for the poll's next tick would halve the frame rate.
        pacer.param.watch(locked(self.on_drawn), "drawn")

    def start(self, *, failed: bool = False) -> None:
        if self._callback is None and can_poll():
            self._callback = _compat.background_periodic_callback(self.poll, self.period_ms)
        elif self._callback is None and failed:
            self.poll()

    def stop(self) -> None:
        if self._callback is not None:
            self._callback.stop()
            self._callback = None

    def set_rendering(self, on: bool) -> None:
        """Frames on (the page is shown: the newest snapshot at once) or off."""
        self.rendering = bool(on)
        snap = self.session.latest()
        if on and snap is not None and self.behind():
            self.shown_version = self.session.version
            self.render(snap)
            self.status()

    def behind(self) -> bool:
        """A newer snapshot than the one on screen is due."""
        return (self.rendering and self.following
                and self.session.version != self.shown_version)

    def poll(self) -> None:
        """Render the newest snapshot if it changed; update progress; stop when idle.

        What a tick changes goes to the browser as one message (:func:`~explorer.app.work.
        on_loop`): Bokeh indexes every model of the document once per message."""
        on_loop(pn.state.curdoc, self._poll)

    def _poll(self) -> None:
        s = self.session
        # One reading of the state for the whole tick (the worker may finish meanwhile: a
        # status written from an older reading than the stop decision would stay stale);
        # "active" first, so a worker seen gone has already written its final state.
        active = s.active
        state = s.state
        behind = self.behind()
        if behind and self._browser_ready():
            self.send()
            behind = False
        self.status(state=state)
        if behind:
            return   # the browser is still drawing the last frame: the newest goes next tick
        if state in ("done", "error", "paused", "idle") or not active:
            self.stop()
            self.stopped()

    def send(self) -> None:
        """Render the newest snapshot (the browser has drawn the last frame)."""
        snap = self.session.latest()
        self.shown_version = self.session.version
        if snap is not None:
            self.render(snap)
            self._frame_sent()

    def on_drawn(self, *_) -> None:
        """The browser drew the last frame: the next goes now if one is due (on the loop).

        An acknowledgement that comes sooner than ``1 / MAX_FPS`` after its frame books the
        next frame for that moment instead of leaving it to the next poll tick."""
        if self._callback is None or not self.behind():
            return
        wait_s = 1.0 / self.MAX_FPS - (time.monotonic() - self._frame_sent_at)
        doc = pn.state.curdoc
        if wait_s > 0:
            if served() and not self._frame_booked:
                self._frame_booked = True
                doc.add_timeout_callback(lambda: self._booked_frame(doc),
                                         max(1, int(wait_s * 1000)))
            return
        with batched(doc):
            self.send()
            self.status()

    def _booked_frame(self, doc) -> None:
        """The moment booked by an early acknowledgement (a timeout callback on ``doc``)."""
        from panel.io.state import set_curdoc

        self._frame_booked = False
        if self.pacer.drawn >= self.pacer.frame:   # no frame went meanwhile (the poll's)
            with set_curdoc(doc):
                self.on_drawn()

    def _browser_ready(self) -> bool:
        """True when the browser has drawn the last frame (always, without a server)."""
        if not served() or self.pacer.drawn >= self.pacer.frame:
            return True
        return time.monotonic() - self._frame_sent_at > self.ACK_TIMEOUT_S

    def _frame_sent(self) -> None:
        if served():
            self._frame_sent_at = time.monotonic()
            self.pacer.frame += 1


class LiveFitRunner(pn.viewable.Viewer):
    """Run / Step / Pause / Reset controls, speed, progress and scrub over a :class:`FitSession`.

    Parameters
    ----------
    prepare : callable () -> FitJob
        Builds the estimator and its data on the event loop when a run starts.
    render : callable (Snapshot) -> None
        Page-owned; patches Bokeh sources. Called on the session's thread.
    on_finish : callable (estimator, result) -> None, optional
        Called once when a fit completes (``result``: what the job's ``after`` returned).
    on_reset : callable () -> None, optional
        Called after every reset (the Reset button, or the page's own ``reset()`` when its
        data or hyper-parameters change): the page clears its views here.
    notify : callable (message, level) -> None, optional
        Where messages go (the kit passes the session's one notification channel); without
        it they show in the runner's alert only.
    on_stop : callable () -> None, optional
        Called when the poll stops because the run did (paused, done, failed): no frame
        follows, so a page draws here what it left out of the frames of the run.
    work : WorkService, optional
        The session's work service; the fit's worker is its long job.
    speed : str
        The speed it opens at, a key of :data:`SPEEDS`.
    """

    status = param.String(default="Ready.")

    def __init__(self, prepare, render, on_finish=None, on_reset=None, *, notify=None,
                 on_stop=None, work=None, record_cap=500, record_max_bytes=RECORD_MAX_BYTES,
                 period_ms: int = 100, speed: str = "10 steps/s", **params):
        super().__init__(**params)
        from explorer.app.components import FramePacer

        self.pacer = FramePacer(width=0, height=0, margin=0)
        self.session = FitSession(prepare, work=work, record_cap=record_cap,
                                  record_max_bytes=record_max_bytes)
        self.render, self.on_finish, self.on_reset = render, on_finish, on_reset
        self.on_stop = on_stop   # the run stopped (paused, done, failed): no frame follows
        self.notify = notify
        self.pump = FramePump(self.session, self.pacer, render=self._safe_render,
                              status=self._update_status, stopped=self._stopped,
                              period_ms=period_ms)
        self._finished_reported = False
        self.buttons = RunControls(speed, self.pacer, {
            "run": self.run, "step": self.step, "pause": self.pause, "reset": self.reset,
            "fast": self.run_fast, "scrub": self.scrub_to})
        self._speed, self._scrub, self._alert = (self.buttons.speed, self.buttons.scrub,
                                                 self.buttons.alert)
        self.param.watch(lambda event: setattr(self.buttons.status, "html",
                                               _status_html(event.new)), "status")
        self._speed.param.watch(self._set_speed, "value")
        self._set_speed()
        self.controls = self.buttons.layout

    def __panel__(self):
        return self.controls

    # ------------------------------------------------------------------ controls
    def set_speed(self, speed: str) -> None:
        """Choose the speed (a key of :data:`SPEEDS`), as the Speed menu does."""
        self._speed.value = _check_speed(speed)

    def _set_speed(self, *_):
        self.session.steps_per_second = SPEEDS[self._speed.value]

    def run(self):
        self._restart_if_over()
        self.pump.following = True
        self.session.run()
        self.pump.start(failed=self.session.state == "error")

    def run_fast(self):
        """The Fast button: the speed goes to unthrottled and the fit runs (a run under way
        goes on at full speed; a finished one starts again, as Run does)."""
        self.set_speed("unthrottled")
        if self.session.state != "running":
            self.run()

    def step(self):
        self._restart_if_over()
        self.pump.following = True
        self.session.step()
        self.pump.start(failed=self.session.state == "error")
        if not served():
            self.session.wait(30)
            self.poll()

    def _restart_if_over(self) -> None:
        """Run or Step after the fit finished (or failed) starts it again from the start:
        the record is cleared and the views emptied, as a reset does."""
        if self.session.state in ("done", "error"):
            self.reset()

    def pause(self):
        self.session.pause()
        # "paused" goes in a message of its own; the run's last frame (the newest snapshot,
        # tens of ms of the server under load at Outliers) and the end of the poll follow
        # on the next tick, so the click is answered first
        self._update_status(state=self.session.state)
        self.session.work.post("pause", self.poll)

    def stop(self):
        self.session.stop()
        self.pump.stop()

    def close(self):
        """The session ended: stop the worker (paused or not) and drop the record, touching
        no widget (the session's document is being destroyed: its models take no values)."""
        self.pump.stop()
        self.session.reset()

    def reset(self):
        """Stop the run and clear the record (data or hyper-parameters changed)."""
        self.pump.stop()
        self.session.reset()
        self.pump.shown_version = -1
        self._finished_reported = False
        self.buttons.cleared()
        self.status = "Ready."
        if self.on_reset is not None:
            try:
                self.on_reset()
            except Exception as exc:  # noqa: BLE001 -- a view bug must not break the controls
                self._notify(f"Clearing the views failed: {type(exc).__name__}: {exc}", "warning")

    def set_rendering(self, on: bool) -> None:
        """Draw frames (the page is shown) or not (hidden: the fit goes on, nothing is sent);
        turned back on, the newest snapshot is drawn at once."""
        self.pump.set_rendering(on)

    def objective_trace(self, up_to_step: int) -> tuple[list, list]:
        """``(steps, objectives)`` of the recorded snapshots up to ``up_to_step``.

        The periodic callback renders only the newest snapshot (frames are taken, never
        queued), so a curve drawn from rendered frames would miss steps; curves are drawn
        from the record instead, which also serves scrubbing back.
        """
        kept = [(s.step, s.objective) for s in self.session.record.items()
                if s.step <= up_to_step and s.objective is not None]
        return [k for k, _ in kept], [v for _, v in kept]

    # ------------------------------------------------------------------ frames
    def poll(self):
        """One tick of the poll (:meth:`FramePump.poll`)."""
        self.pump.poll()

    def _stopped(self) -> None:
        if self.on_stop is not None:
            self.on_stop()
        self._finish()

    def _safe_render(self, snap):
        try:
            self.render(snap)
        except Exception as exc:  # noqa: BLE001 -- a view bug must not kill the run
            self._notify(f"Rendering failed: {type(exc).__name__}: {exc}", "warning")

    def _update_status(self, shown=None, state=None):
        self.status = self.buttons.progress(self.session, shown=shown, state=state,
                                            following=self.pump.following)

    def _finish(self):
        s = self.session
        if self._finished_reported or s.state not in ("done", "error"):
            return
        self._finished_reported = True
        for message in s.warnings:
            self._notify(message, "warning")
        if s.state == "error":
            self._notify(f"The fit failed: {s.error}", "error")
        elif self.on_finish is not None and s.estimator is not None:
            try:
                self.on_finish(s.estimator, s.result)
            except Exception as exc:  # noqa: BLE001
                self._notify(f"Post-fit view failed: {type(exc).__name__}: {exc}", "warning")

    def _notify(self, message, level="info"):
        self.buttons.say(message, level)
        if self.notify is not None:
            self.notify(message, level)

    def scrub_to(self, index: int | None) -> None:
        """Show recorded snapshot ``index`` (pausing a run); the last one resumes following.

        The views and the status show exactly that snapshot, labelled with its solver step.
        """
        items = self.session.record.items()
        if index is None or not items:
            return
        index = min(max(int(index), 0), len(items) - 1)
        self.pump.following = following = index == len(items) - 1
        if not following and self.session.state == "running":
            self.session.pause()
        if self._scrub.value != index:
            self._scrub.value = index
        self._safe_render(items[index])
        if following:
            self.pump.shown_version = self.session.version
        self._update_status(shown=items[index])


def _status_html(text: str) -> str:
    """The status line's Markdown (``**state** - step N, ...``) as HTML, escaped.

    >>> _status_html("**running** - step 3, objective 0.5")
    '<b>running</b> - step 3, objective 0.5'
    """
    import re

    return re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", _escape(text))


def _escape(text: str) -> str:
    import html

    return html.escape(str(text), quote=False)
