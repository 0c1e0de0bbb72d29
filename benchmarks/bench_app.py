"""Browser benchmark of the served app: first render, live frames, pause, page switch, scrub,
server CPU per data change.

Serves two apps with one ``panel serve``: the MTL Explorer (``apps/explorer.py``) and a live-fit
page built by this very file (served, it takes the branch at the bottom): the shared
:class:`~explorer.app.runner.LiveFitRunner` driving ``RobustMTFL(tol=0, max_iter=60000)`` on
``make_outlier_tasks`` at the app's default size, with the views patched in place like the
Outliers page and a stamp source that carries, per frame, the solver step, when the snapshot
was made and when it was rendered. Headless Chromium (``/usr/bin/chromium``) drives both.

Measured (``--json`` prints one JSON object; the keys below; times are wall clock):

* ``first_render_cold_s``: the first visitor of a new server: a fresh browser context opens the
  app (the Tasks page) the moment the server first answers (``panel serve ... --warm``, as the
  README serves it; the poll asks Panel's index page, which builds no session), ``page.goto``
  -> the heading and the first plot canvas visible. Whatever a server pays once per process
  (imports, compiled kernels, first figures) that is not paid before it answers shows here.
* ``first_render_s``: worst page of ``first_render_by_page`` -- per page (``?page=...`` at the
  default data), the median of 5 loads, each in a *fresh browser context* (no cache, no
  cookies): ``page.goto`` -> the page's heading and its first plot canvas visible. One
  warm-up visit of every page (not counted) first, then the server's CPU must be idle
  (``settle_after_warm_up_s``: how long it stayed busy), so no work left over from the
  server's start lands in the numbers.
* ``live_fps``: worst model page of ``live_fps_by_page`` -- during an unthrottled run at the
  default data, the frames the browser *receives* per second *while the fit is running*,
  seen by a hook on the Bokeh document: bursts of data-source changes more than 30 ms apart,
  counted from a run's first frame to its last frame while running (the frame that says
  "done" and the time after it are left out). A fit that outlasts ``FPS_WINDOW_S`` (4 s) is
  one run; a fit that ends sooner is Reset and Run again until frames flowed for
  ``FPS_WINDOW_S`` over the runs together (``fps_runs``, ``fps_frame_span_s`` in the page's
  detail), so a fit ending within the window no longer counts its idle rest as missing
  frames (issue 40's outside run saw Outliers at 0.5 frames/s and Trees at 4.4 where a fit
  ended within the window).
  ``live_first_frame_s_by_page``: click -> first frame; ``live_fps_from_click_by_page``:
  the frames over the running time, the wait for the first included.
  ``live_fps_large`` the same at the large data. ``live_status_fps_by_page`` counts the
  changes of the runner's status line (``running - step N``) instead: it changes with every
  frame and also on poll ticks between frames. The fits are made long with the page's own
  link parameters (``LONG_FIT``: smallest penalties, iteration caps and depth at their
  bounds); at the default data they may still end within ~1 s unthrottled, so a fit whose
  first run's frames flow for less than ``FPS_MIN_SPAN_S`` is measured at 30 steps/s
  instead (``fps_speed``; the unthrottled try in ``fps_unthrottled_too_short``): the solver
  still makes snapshots faster than the runner sends frames (at most 15 a second).
* ``pause_p95_ms`` / ``pause_p95_ms_large``: worst model page; per page, ``PAUSE_TRIES`` times:
  start or resume the run (Reset + Run when it ended), wait until the browser shows it
  ``running`` at a newer step (and up to one more frame, at most 0.5 s), click *Pause* -> the
  status line in the browser says ``paused``; p95 over the tries. A try whose fit ended before
  the pause arrived counts in ``finished_before_pause``, not in the p95. When fewer than
  ``PAUSE_MIN_SAMPLES`` tries at unthrottled speed give a pause (the default data's fits last
  1-3 s), more tries are made at 30, then 10 steps/s (``pause_speed`` lists the speeds used;
  the page switch goes at the last one). A p95 of one pause had stood for a page before.
  The status-line count runs from the click on Run (``fps_frames`` over ``fps_span_s``,
  shorter when the fit ends first: ``fps_fit_ended``).
  "large" is ``LARGE``: ``outlier_tasks`` 100 tasks x 500 features x 40 samples a task
  (4,000 x 500 = 2,000,000 values, the budget's largest); Trees takes classification data:
  ``clustered_tasks`` 100 tasks x 200 features x 100 a task (10,000 x 200).
* ``page_switch_during_run_s`` / ``..._large``: worst model page; during a run, click *Tasks*
  in the sidebar's page chooser -> the Tasks heading painted, then click the model page again
  -> its heading painted; the worse of the two (at the pause's speed, or at 10 steps/s when
  no run at that speed lasted until the browser saw it: ``switch_speed`` in the page's
  detail). "Painted" is measured in the page's own clock:
  from the click's dispatch to the first animation frame in which the heading has a box.
  ``page_switch_settled_s``: the same switches until Playwright sees the heading visible;
  its check is a task of the page, so it runs once the browser has drawn the new page's
  figures and answers input again. Every page's run is Reset (its worker stopped) before its
  browser context closes, so no fit outlives its measurement.
* ``scrub_p95_ms``: after a completed fit on "Shared vs separate" (no refit), arrow key on the
  "Recorded snapshot" slider -> a data source changed in the browser, p95 over 20 moves.
* ``server_ms_per_change``: worst page of ``server_ms_per_change_by_page`` -- server CPU time
  (user + system of the ``panel serve`` process, all its threads, from ``/proc`` via psutil)
  for one change of the sidebar's *Data seed* field at the default data, the median of
  ``CHANGES`` changes (``server_ms_each``; their mean ``server_ms_mean``): type the seed,
  Enter, wait for the URL's ``data_seed`` and for the server's CPU to be idle again (bounded
  polling), minus the idle CPU rate (median of four 0.5 s windows) on the same open page just
  before. One browser page is open, so the number includes serving it.
* ``live_page``: the stamp page above (unthrottled, 6 s window): browser fps, the periodic
  callback's renders/s, solver steps/s with the app and alone, lag snapshot made -> browser
  and server render -> browser (median, p95, at the window end).

Run: ``.venv/bin/python benchmarks/bench_app.py [--json] [--out FILE] [--handicap N]`` (about 5
minutes on 2 cores; ``--out`` also writes the JSON object to FILE). ``loadavg_at_start``/``_at_end``
show whether something else was using the machine.

The figures travel with the machine they were measured on (``benchmarks/_reference.py``):
``cpu_reference_s`` (a fixed pure-Python and NumPy workload, seconds, best of 3, measured
first, before the handicap starts) at the top level, and under ``machine`` the load average,
the CPU count and model, the Python / NumPy / Panel / Bokeh versions and the date.
``--handicap N``: N CPU-bound processes (Python busy loops) run beside the server and the
browser from before the server starts until the end (stopped on an error or Ctrl-C too);
``handicap`` (N) and ``handicap_cores`` (the CPU they got, in cores) are in the JSON.
``--quick`` does one load per page, two pause tries, and skips the large data (a smoke test).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import psutil
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[1]
VIEWPORT = {"width": 1400, "height": 900}
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
WINDOW_MS = 6_000
DATA = dict(n_tasks=10, n_outliers=2, n_features=20, n_shared_features=5, n_samples_per_task=30,
            noise=0.5, random_state=0)  # the app's catalog defaults
MAX_ITER = 60_000       # ~18 s alone on 2 cores: outlasts the 6 s window even when slowed
DRAIN_S = 10            # longest wait for queued frames after the window
ALONE_STEPS = 10_000    # the "without the app" fit (~3 s)

HOOK = """
() => {
  window.__cds = [];
  window.__frames = [];
  const doc = window.Bokeh.documents[0];
  doc.on_change((e) => {
    const m = e.column_source || e.model;
    if (m && (e.column_source || (m.data !== undefined && e.attr === "data"))) {
      const now = performance.now();
      window.__cds.push(now);
      if (m.name === "bench_stamp") {
        const d = m.data;
        window.__frames.push({now: now, wall: performance.timeOrigin + now, step: d.step[0],
                              made: d.made[0], rendered: d.rendered[0], renders: d.renders[0]});
      }
    }
  });
  return true;
}
"""


def _estimator(max_iter):
    from explorer.models.rmtfl import RobustMTFL

    return RobustMTFL(tol=0.0, max_iter=max_iter)


def _data():
    from explorer.data.synthetic import make_outlier_tasks

    return make_outlier_tasks(**DATA)


class _Stamped:
    """Wraps an estimator: notes the wall time at which each snapshot was made."""

    def __init__(self, estimator, stamps: dict):
        self.estimator, self.stamps = estimator, stamps

    def fit_iter(self, X, y, task):
        for snap in self.estimator.fit_iter(X, y, task):
            self.stamps[snap.step] = time.time() * 1000.0
            yield snap


def serve_live_page():
    """The live-fit page (``panel serve benchmarks/bench_app.py``)."""
    import panel as pn
    from bokeh.models import ColumnDataSource
    from bokeh.plotting import figure

    from explorer.app.fit_session import FitJob
    from explorer.app.process import configure_process
    from explorer.app.runner import LiveFitRunner
    from explorer.viz.live import CurveView, MatrixHeatmap

    configure_process()

    ds = _data()
    tasks, features = list(ds.task_names), list(ds.feature_names)
    limit = float(np.max(np.abs(ds.truth["coef"]))) or 1.0
    views = {k: MatrixHeatmap(features, tasks, limit=limit, title=k, height=420)
             for k in ("P", "Q")}
    curve = CurveView(title="Objective", y_axis_type="log")
    stamp = ColumnDataSource({"step": [0], "made": [0.0], "rendered": [0.0], "renders": [0]},
                             name="bench_stamp")
    stamps: dict = {}
    renders = [0]
    runner = None

    shown = os.environ.get("BENCH_VIEWS", "P,Q,curve").split(",")

    def render(snap):
        for key, view in views.items():
            if key in shown:
                view.update(snap.matrices[key])
        if "curve" in shown:
            curve.reset(*runner.objective_trace(snap.step))
        renders[0] += 1
        stamp.data = {"step": [snap.step], "made": [stamps.get(snap.step, 0.0)],
                      "rendered": [time.time() * 1000.0], "renders": [renders[0]]}

    runner = LiveFitRunner(lambda: FitJob(_Stamped(_estimator(MAX_ITER), stamps),
                                          (ds.X, ds.y, ds.task)), render, record_cap=200)
    # the stamp source reaches the browser only as part of a model: a hidden 1-glyph figure
    holder = figure(width=10, height=10, toolbar_location=None, visible=False)
    holder.scatter("step", "renders", source=stamp)
    pn.Column(runner, pn.Row(*(pn.pane.Bokeh(v.figure) for v in views.values())),
              pn.pane.Bokeh(curve.figure), pn.pane.Bokeh(holder, visible=False),
              sizing_mode="stretch_width").servable()


def solver_alone() -> float:
    """Steps/s of the same fit in a FitSession (BLAS 1 thread), no server, unthrottled."""
    from explorer.app.fit_session import FitJob, FitSession

    ds = _data()
    session = FitSession(lambda: FitJob(_estimator(ALONE_STEPS), (ds.X, ds.y, ds.task)))
    start = time.perf_counter()
    session.run()
    session.wait(120)
    elapsed = time.perf_counter() - start
    return session.latest().step / elapsed


#: Where the served app's log goes (its errors explain a failed measurement).
SERVER_LOG = "/tmp/bench_app_server_{port}.log"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server():
    """``panel serve`` as the README runs it (``--warm``): returns ``(process, base URL,
    seconds until it answered)``. The poll asks Panel's index page (two apps are served),
    which builds no session, so the first session is the measured first visitor's."""
    port = free_port()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "panel", "serve", "apps/explorer.py", "benchmarks/bench_app.py",
         "--warm", "--port", str(port), f"--allow-websocket-origin=localhost:{port}"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
        stderr=open(SERVER_LOG.format(port=port), "w"))   # noqa: SIM115 -- the server's
    base = f"http://localhost:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/", timeout=10) as response:
                if response.status == 200:
                    return proc, base, time.perf_counter() - started
        except OSError:
            time.sleep(0.05)
    proc.terminate()
    raise RuntimeError("panel serve did not start within 180 s")


def measure_cold_render(browser, base) -> float:
    """The first visitor: a fresh context opens the app's default page (Tasks)."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(NAV_TIMEOUT_MS)
    start = time.perf_counter()
    page.goto(base + "/explorer")
    page.get_by_role("heading", name=HEADINGS["tasks"]).first.wait_for(state="visible")
    page.locator("canvas").first.wait_for(state="visible")
    elapsed = time.perf_counter() - start
    context.close()
    return round(elapsed, 2)


def pct(values, q):
    return float(np.percentile(np.asarray(values, dtype=float), q))


def say(*args, **kwargs):
    if not QUIET[0]:
        print(*args, **kwargs, flush=True)


QUIET = [False]
RENDER_LOADS = 5            # fresh-context loads per page for first_render_s
PAUSE_TRIES = 6             # pause clicks per (model page, data) ...
PAUSE_BUDGET_S = 30         # ... fewer once this is spent (and at least 2 were measured)
PAUSE_MIN_SAMPLES = 3       # fewer pauses measured at a speed: more at the next slower one
FPS_WINDOW_S = 4.0          # live_fps: seconds of frames flowing over which they are counted
FPS_MIN_SPAN_S = 2.0        # frames flowing shorter unthrottled: measured at 30 steps/s
FPS_MAX_RUNS = 8            # runs (Reset, Run) to gather FPS_WINDOW_S of running, at most ...
FPS_BUDGET_S = 40           # ... and seconds
CHANGES = 5                 # data-seed changes per page for server_ms_per_change
NAV_TIMEOUT_MS = 120_000
#: The model pages' long fits (their own link parameters, at their bounds) so a run outlasts
#: the measurements; the data stay at the defaults (or LARGE).
LONG_FIT = {"shared_vs_separate": {"shared_vs_separate.coupling": 1e-4,
                                   "shared_vs_separate.size": 1e-4,
                                   "shared_vs_separate.max_iter": 5000},
            "trees": {"trees.max_depth": 8},
            "outliers": {"outliers.rows": 1e-3, "outliers.columns": 1e-3,
                         "outliers.max_iter": 20000}}
#: The default data of a page: the app's default dataset, except where the page needs another
#: kind (Outliers takes regression data: its own catalog entry at the catalog's defaults).
DEFAULT_DATA = {"outliers": {"data": "outlier_tasks"}}
#: The largest data the budget allows (rows x features = 2,000,000): outlier_tasks 100 tasks x
#: 500 features x 40 a task (4,000 x 500); Trees takes classification data only: clustered_tasks
#: 100 tasks x 200 features (its cap) x 100 a task (10,000 x 200).
LARGE = {"data": "outlier_tasks", "d.n_tasks": 100, "d.n_features": 500,
         "d.n_samples_per_task": 40}
LARGE_BY_PAGE = {"trees": {"data": "clustered_tasks", "d.n_tasks": 100, "d.n_features": 200,
                           "d.n_samples_per_task": 100}}
HEADING_TEXT = {"tasks": "Tasks:", "shared_vs_separate": "Shared vs separate",
                "trees": "Multi-task decision trees", "outliers": "Outliers & shared features"}
HEADINGS = {"tasks": re.compile(r"^Tasks(:|$)"),
            "shared_vs_separate": re.compile(r"^Shared vs separate"),
            "trees": re.compile(r"^Multi-task decision trees"),
            "outliers": re.compile(r"^Outliers & shared features")}

#: Hook on the Bokeh document: the runner's status line (state, step, one event per frame)
#: and every data-source change.
STATUS_HOOK = """
() => {
  window.__cds = []; window.__frames = []; window.__state = ""; window.__step = -1;
  window.__seq = 0; window.__ended = null;
  const re = /(running|paused|done|error)\\b[^\\n]{0,80}?step (\\d+)/;
  for (const doc of window.Bokeh.documents) {
    doc.on_change((e) => {
      const now = performance.now();
      const m = e.column_source || e.model;
      if (m && (e.column_source || e.attr === "data")) window.__cds.push(now);
      // the status line's "html" (a StatusLine; "text" of the Div it was before)
      if ((e.attr !== "html" && e.attr !== "text") || !e.model) return;
      const text = String(e.value !== undefined ? e.value : e.model[e.attr]);
      const found = re.exec(text);
      if (found) {
        window.__state = found[1]; window.__step = Number(found[2]); window.__seq += 1;
        if (found[1] === "running") window.__frames.push({now: now, step: Number(found[2])});
        else if (window.__ended === null) window.__ended = now;   // the run's first non-running
      } else if (text.includes("Ready.")) {
        window.__state = "ready"; window.__seq += 1;
      }
    });
  }
  return true;
}
"""


BURSTS_JS = """([t0, t1]) => {
  let n = 0, last = -1e9, first = null, first_of_last = null;
  for (const t of window.__cds) {
    if (t < t0 || t > t1) continue;
    if (t - last > 30) { n += 1; first_of_last = t; if (first === null) first = t; }
    last = t;
  }
  return [n, first, first_of_last];
}"""


def query_url(base, slug, *extra):
    params = {"page": slug}
    for part in extra:
        params.update(part)
    return base + "/explorer?" + urllib.parse.urlencode(params)


def page_titles() -> dict:
    from explorer.app.pages import PAGES

    return {page.slug: page.title for page in PAGES}


def measure_first_render(browser, base, loads) -> dict:
    out = {}
    for slug in HEADINGS:
        url = query_url(base, slug, DEFAULT_DATA.get(slug, {}))
        times = []
        for _ in range(loads):
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            page.set_default_timeout(NAV_TIMEOUT_MS)
            start = time.perf_counter()
            page.goto(url)
            page.get_by_role("heading", name=HEADINGS[slug]).first.wait_for(state="visible")
            page.locator("canvas").first.wait_for(state="visible")
            times.append(time.perf_counter() - start)
            context.close()
        out[slug] = round(float(np.median(times)), 2)
        say(f"  first render {slug}: median {out[slug]:.2f} s of {len(times)} fresh contexts "
            f"({', '.join(f'{t:.2f}' for t in times)})")
    return out


def _status(page):
    return page.evaluate("[window.__state, window.__step, window.__frames.length, window.__seq]")


def _wait_frames(page, n_more, timeout_ms=10_000):
    n = page.evaluate("window.__frames.length")
    try:
        page.wait_for_function("(n) => window.__frames.length >= n || window.__state === 'done'",
                               arg=n + n_more, timeout=timeout_ms, polling=20)
    except PlaywrightTimeout:
        pass


def _reset(page) -> None:
    """Click Reset until the runner says "Ready." (a second click if the first was lost)."""
    for attempt in range(3):
        page.get_by_role("button", name="Reset").click()
        try:
            page.wait_for_function("() => window.__state === 'ready'", timeout=15_000,
                                   polling=20)
            return
        except PlaywrightTimeout:
            say(f"  Reset not answered with 'Ready.' (attempt {attempt + 1}; the hook's state "
                f"{_status(page)})")
    raise RuntimeError("the runner never said 'Ready.' after Reset")


def _ensure_running(page):
    state, step, _, _ = _status(page)
    if state == "running":
        return True
    if state in ("done", "error"):
        _reset(page)
        step = -1
    page.get_by_role("button", name="▶ Run").click()
    try:
        page.wait_for_function(
            "(s) => (window.__state === 'running' && window.__step > s) "
            "|| window.__state === 'done'", arg=step, timeout=90_000, polling=20)
    except PlaywrightTimeout:
        return False
    return _status(page)[0] == "running"


def open_model_page(page, url, slug):
    page.goto(url)
    page.get_by_role("heading", name=HEADINGS[slug]).first.wait_for(state="visible")
    page.get_by_role("button", name="▶ Run").wait_for(state="visible")
    page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0")
    page.evaluate(STATUS_HOOK)
    page.get_by_role("combobox", name="Speed").select_option("unthrottled")


def _pause_tries(page, tries, out) -> None:
    tries_end = time.monotonic() + PAUSE_BUDGET_S
    for _ in range(tries):
        if time.monotonic() > tries_end and len(out["pause_ms"]) >= 2:
            break       # bounded: a slow page gets fewer tries
        if not _ensure_running(page):
            out["finished_before_pause"] += 1
            continue
        _wait_frames(page, 1, timeout_ms=500)   # a run the browser has seen running
        state, _, _, seq = _status(page)
        if state != "running":
            out["finished_before_pause"] += 1
            continue
        start = time.perf_counter()
        page.get_by_role("button", name="Pause").click(no_wait_after=True)
        page.wait_for_function(
            "(n) => window.__seq > n && (window.__state === 'paused' "
            "|| window.__state === 'done')", arg=seq, timeout=60_000, polling=10)
        elapsed = (time.perf_counter() - start) * 1000
        if _status(page)[0] == "paused":
            out["pause_ms"].append(round(elapsed))
        else:
            out["finished_before_pause"] += 1


#: Installed before a page switch: in the page's own clock, the time from the click's
#: dispatch to the first animation frame in which the target page's heading has a box (it is
#: painted in that frame). Playwright's own visibility check runs as a task of the page, so
#: it sees the heading only once the browser has finished drawing the new page's figures.
HEADING_PAINTED_JS = """([slug, heading]) => {
  window.__painted = null; window.__clicked = null;
  document.addEventListener('click', () => { window.__clicked = performance.now() },
                            {capture: true, once: true});
  const frameOf = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.classList && el.classList.contains('explorer-page-' + slug)) return el;
      if (el.shadowRoot) { const hit = frameOf(el.shadowRoot); if (hit) return hit; }
    }
    return null;
  };
  const headingIn = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.childElementCount === 0 && el.textContent.startsWith(heading)) return el;
      if (el.shadowRoot) { const hit = headingIn(el.shadowRoot); if (hit) return hit; }
    }
    return null;
  };
  const tick = () => {
    if (window.__clicked !== null) {
      const frame = frameOf(document);
      const el = frame && headingIn(frame.shadowRoot || frame);
      const box = el && el.getBoundingClientRect();
      if (box && box.width > 0 && box.height > 0) {
        window.__painted = performance.now() - window.__clicked;
        return;
      }
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""


def _timed_switch(page, titles, target) -> tuple[float, float]:
    """Click ``target`` in the page chooser: (s until its heading is painted, s until the
    browser has drawn the page and answers again: Playwright sees the heading)."""
    page.evaluate(HEADING_PAINTED_JS, [target, HEADING_TEXT[target]])
    start = time.perf_counter()
    page.get_by_role("button", name=titles[target], exact=True).click(no_wait_after=True)
    page.get_by_role("heading", name=HEADINGS[target]).first.wait_for(state="visible")
    settled = time.perf_counter() - start
    painted = page.evaluate("window.__painted")
    return round((painted if painted is not None else settled * 1000) / 1000, 2), round(settled, 2)


def _one_run(page, window_s) -> dict:
    """Click Run and watch until ``window_s`` has passed or the fit ended: the run's frames
    while it was *running* (the frame that says "done" and anything after it left out)."""
    n0, t0 = page.evaluate("() => { window.__ended = null; "
                           "return [window.__frames.length, performance.now()]; }")
    page.get_by_role("button", name="▶ Run").click()
    try:
        page.wait_for_function("(t) => performance.now() >= t || window.__ended !== null",
                               arg=t0 + window_s * 1000, timeout=window_s * 1000 + 60_000,
                               polling=50)
    except PlaywrightTimeout:
        pass
    status, ended, t1 = page.evaluate("(n) => [window.__frames.slice(n).map(f => f.now), "
                                      "window.__ended, performance.now()]", n0)
    if ended is not None:
        # running until its last "running" status (the data of that frame arrive with it)
        end = min(status[-1] + 30, ended - 1) if status else ended
    else:
        end = t1
    bursts, first, last = page.evaluate(BURSTS_JS, [t0, end])
    return {"ended": ended is not None, "running_s": max(end - t0, 0.0) / 1000,
            "status": sum(1 for t in status if t <= end), "bursts": bursts,
            "first_s": None if first is None else (first - t0) / 1000,
            "span_s": 0.0 if bursts < 2 else (last - first) / 1000}


def _measure_fps(page, out, min_span_s: float = 0.0) -> None:
    """Live frames the browser receives per second *while a fit runs*, at the speed set.

    One run when the fit outlasts ``FPS_WINDOW_S``; when it ends sooner, Reset and Run again
    (at most ``FPS_MAX_RUNS`` runs, ``FPS_BUDGET_S`` s) until frames flowed for
    ``FPS_WINDOW_S`` over the runs together. A run counts until its last frame while
    running: the time after the fit ended (the rest of a window, the "done" frame) is not
    counted, so a fit ending within the window no longer pulls the rate down. ``data_fps``:
    frames (data bursts) per second from each run's first frame to its last, summed over the
    runs; ``data_fps_from_click`` the same from the click (the wait for the first frame in);
    ``fps``: the status line's changes per second of running. A first run that ended with
    frames flowing for less than ``min_span_s`` stops there: too short to be measured at this
    speed (the caller measures at a slower one instead)."""
    runs, budget_end = [], time.monotonic() + FPS_BUDGET_S
    while True:
        run = _one_run(page, FPS_WINDOW_S)
        runs.append(run)
        if (not run["ended"] or sum(r["span_s"] for r in runs) >= FPS_WINDOW_S
                or len(runs) >= FPS_MAX_RUNS or time.monotonic() > budget_end
                or (len(runs) == 1 and run["span_s"] < min_span_s)):
            break
        _reset(page)
    running = sum(r["running_s"] for r in runs)
    span = sum(r["span_s"] for r in runs)
    intervals = sum(r["bursts"] - 1 for r in runs if r["bursts"] >= 2)
    bursts = sum(r["bursts"] for r in runs)
    out["fps"] = round(sum(r["status"] for r in runs) / running, 1) if running > 0 else None
    out["data_fps_from_click"] = round(bursts / running, 1) if running > 0 else None
    out["data_fps"] = round(intervals / span, 1) if span > 0 else None
    out["first_frame_s"] = (None if runs[0]["first_s"] is None
                            else round(runs[0]["first_s"], 2))
    out["fps_frames"], out["fps_runs"] = bursts, len(runs)
    # fps_span_s: click -> the last frame while running, over the runs (the window when the
    # fit outlasted it); fps_frame_span_s: first frame -> last, over the runs;
    # fps_longest_span_s: the longest of one run (a fit long enough to be measured?)
    out["fps_span_s"], out["fps_running_s"] = round(running, 2), round(running, 2)
    out["fps_frame_span_s"] = round(span, 2)
    out["fps_longest_span_s"] = round(max(r["span_s"] for r in runs), 2)
    out["fps_fit_ended"] = all(r["ended"] for r in runs)   # every run ended within the window


def measure_model_page(browser, base, slug, data, titles, tries) -> dict:
    """fps, pause latencies and page-switch times on one model page, one data size."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(NAV_TIMEOUT_MS)
    out = {"fps": None, "pause_ms": [], "finished_before_pause": 0, "switch_s": [],
           "switch_settled_s": []}
    try:
        open_model_page(page, query_url(base, slug, data, LONG_FIT[slug]), slug)
        # live frames while the fit runs (runs repeated until frames flowed FPS_WINDOW_S);
        # a fit whose frames flow for less than FPS_MIN_SPAN_S unthrottled (the default
        # data) is measured at 30 steps/s instead, where it lasts, and the solver still
        # outruns the frames
        out["fps_speed"] = "unthrottled"
        _measure_fps(page, out, min_span_s=FPS_MIN_SPAN_S)
        if out["fps_fit_ended"] and out["fps_longest_span_s"] < FPS_MIN_SPAN_S:
            out["fps_unthrottled_too_short"] = {
                "data_fps": out["data_fps"], "runs": out["fps_runs"],
                "frames_flowed_s": out["fps_longest_span_s"],
                "first_frame_s": out["first_frame_s"]}
            _reset(page)
            page.get_by_role("combobox", name="Speed").select_option("30 steps/s")
            out["fps_speed"] = "30 steps/s"
            _measure_fps(page, out)
        # pause at the fastest speed at which a run lasts until the pause arrives (at the
        # default data an unthrottled fit may end before the browser has seen it running);
        # a p95 of one or two pauses says little, so slower speeds add pauses until there
        # are PAUSE_MIN_SAMPLES (pause_speed names every speed used)
        speeds = []
        for speed in ("unthrottled", "30 steps/s", "10 steps/s"):
            page.get_by_role("combobox", name="Speed").select_option(speed)
            speeds.append(speed)
            out["pause_speed"] = ", ".join(speeds)
            _pause_tries(page, tries, out)
            if len(out["pause_ms"]) >= min(PAUSE_MIN_SAMPLES, tries):
                break
        # page switch during a run: to Tasks and back (a few tries to catch a run, slower
        # when the fit ends at the pause's speed before the browser sees it running)
        caught = any(_ensure_running(page) for _ in range(3))
        if not caught and not out["pause_speed"].endswith("10 steps/s"):
            page.get_by_role("combobox", name="Speed").select_option("10 steps/s")
            out["switch_speed"] = "10 steps/s"
            caught = any(_ensure_running(page) for _ in range(3))
        if caught:
            _wait_frames(page, 1, timeout_ms=500)
            for target in ("tasks", slug):
                shown, settled = _timed_switch(page, titles, target)
                out["switch_s"].append(shown)
                out["switch_settled_s"].append(settled)
            out["still_running_after_switch"] = _status(page)[0] == "running"
    finally:
        # stop the worker before the browser goes (a running fit outlives its session and
        # would load the server during the next measurements)
        try:
            page.get_by_role("button", name="Reset").click(timeout=30_000)
            page.wait_for_function("() => window.__state === 'ready'", timeout=30_000)
        except Exception:  # noqa: BLE001
            out["reset_failed"] = True
        context.close()
    return out


def measure_runs(browser, base, titles, tries, sizes) -> dict:
    results = {}
    for size, data in sizes.items():
        for slug in LONG_FIT:
            if size == "large":
                page_data = LARGE_BY_PAGE.get(slug, data)
            else:
                page_data = DEFAULT_DATA.get(slug, {})
            r = measure_model_page(browser, base, slug, page_data, titles, tries)
            r["pause_p95_ms"] = round(pct(r["pause_ms"], 95)) if r["pause_ms"] else None
            results.setdefault(size, {})[slug] = r
            say(f"  {size} {slug}: {r['fps']} frames/s received; pause -> 'paused' "
                f"{r['pause_ms']} ms (p95 {r['pause_p95_ms']}; {r['finished_before_pause']} "
                f"tries ended as 'done'; at {r['pause_speed']}); page switch during the run "
                f"(to Tasks, back) "
                f"{r['switch_s']} s")
    return results


def _server_cpu(proc) -> float:
    t = psutil.Process(proc.pid).cpu_times()
    return t.user + t.system


def _settle(proc, quiet_s=0.5, limit_s=20.0) -> None:
    """Bounded polling until the server's CPU was idle (< 3% of a core) for ``quiet_s``."""
    deadline = time.monotonic() + limit_s
    last, t_last = _server_cpu(proc), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(quiet_s)
        now, t_now = _server_cpu(proc), time.monotonic()
        if (now - last) < 0.03 * (t_now - t_last):
            return
        last, t_last = now, t_now


def measure_server_cpu(browser, base, proc, n_changes) -> dict:
    out = {}
    for slug in HEADINGS:
        context = browser.new_context(viewport=VIEWPORT)
        page = context.new_page()
        page.set_default_timeout(NAV_TIMEOUT_MS)
        page.goto(query_url(base, slug, DEFAULT_DATA.get(slug, {})))
        page.get_by_role("heading", name=HEADINGS[slug]).first.wait_for(state="visible")
        box = page.get_by_label("Data seed")
        box.wait_for(state="visible")
        _settle(proc)
        # the open page's idle rate: the median of four 0.5 s windows (a collection after an
        # earlier page's session ended, Bokeh's check for ended sessions, may land in one of
        # them: one 2 s window then read up to 80 ms/s and the page came out negative)
        rates = []
        for _ in range(4):
            c0, t0 = _server_cpu(proc), time.monotonic()
            time.sleep(0.5)
            rates.append((_server_cpu(proc) - c0) / (time.monotonic() - t0))
        idle_rate = float(np.median(rates))
        walls, each = [], []
        for i in range(n_changes):
            seed = 101 + i
            c0, t0 = _server_cpu(proc), time.monotonic()
            start = time.perf_counter()
            box.fill(str(seed))
            box.press("Enter")
            page.wait_for_function(f"() => window.location.search.includes('data_seed={seed}&') "
                                   f"|| window.location.search.endsWith('data_seed={seed}')",
                                   timeout=60_000)
            walls.append(time.perf_counter() - start)
            _settle(proc)
            each.append(_server_cpu(proc) - c0 - idle_rate * (time.monotonic() - t0))
        # the median change: a burst that is not this change's (an earlier page's session
        # ended and collected, Bokeh's check for unused sessions) lands in one change's window
        # and moved the mean of five by up to 90 ms from one run to the next
        out[slug] = {"server_ms": round(float(np.median(each)) * 1000),
                     "server_ms_mean": round(float(np.mean(each)) * 1000),
                     "server_ms_each": [round(c * 1000) for c in each],
                     "url_updated_s": round(float(np.median(walls)), 2),
                     "idle_ms_per_s": round(idle_rate * 1000, 1)}
        say(f"  data-seed change on {slug}: {out[slug]['server_ms']} ms server CPU a change "
            f"(median of {n_changes}, each {out[slug]['server_ms_each']}; idle "
            f"{out[slug]['idle_ms_per_s']} ms/s subtracted), URL updated after "
            f"{out[slug]['url_updated_s']} s (median)")
        context.close()
    return out


def measure_live(page, url, alone):
    page.goto(url)
    page.locator("canvas").first.wait_for(state="visible")
    page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0")
    page.evaluate(HOOK)
    page.locator("select", has=page.locator("option", has_text="unthrottled")).first \
        .select_option("unthrottled")
    page.get_by_role("button", name="▶ Run").click()
    t0 = page.evaluate("performance.now()")
    time.sleep(WINDOW_MS / 1000)
    page.get_by_role("button", name="Pause").click()  # waits while the browser is busy
    # let queued frames drain (at most DRAIN_S) so the server-side rates see every render
    count, deadline = -1, time.monotonic() + DRAIN_S
    while time.monotonic() < deadline:
        n = page.evaluate("window.__frames.length")
        if n == count:
            break
        count = n
        time.sleep(1.0)
    frames = [f for f in page.evaluate("window.__frames") if f["step"] > 0]
    if len(frames) < 3:
        say(f"live run: only {len(frames)} frames seen")
        return {"frames": len(frames)}
    last_step = frames[-1]["step"]
    window_ms = WINDOW_MS
    if last_step >= MAX_ITER:
        # the fit ended within the window: frames over the time it ran, not the whole window
        window_ms = min(WINDOW_MS, max(frames[-1]["now"] - t0, 1.0))
        say(f"WARNING: the fit ended within the window (step {last_step}, after "
            f"{window_ms / 1000:.1f} s): frames counted over that time")
    window = [f for f in frames if t0 <= f["now"] <= t0 + window_ms]
    renders = frames[-1]["renders"] - frames[0]["renders"]
    server_span = (frames[-1]["rendered"] - frames[0]["rendered"]) / 1000
    steps = frames[-1]["step"] - frames[0]["step"]
    with_app = steps / ((frames[-1]["made"] - frames[0]["made"]) / 1000)
    lag_made = [f["wall"] - f["made"] for f in window] or [float("nan")]
    lag_render = [f["wall"] - f["rendered"] for f in window] or [float("nan")]
    gaps = np.diff([f["now"] for f in window]) if len(window) > 1 else np.array([np.nan])
    say(f"live run (RobustMTFL tol=0, make_outlier_tasks {DATA['n_samples_per_task']} samples x "
          f"{DATA['n_features']} features x {DATA['n_tasks']} tasks, views "
          f"{os.environ.get('BENCH_VIEWS', 'P,Q,curve')}, unthrottled, "
          f"{WINDOW_MS / 1000:.0f} s window; solver reached step {last_step} of {MAX_ITER}):")
    say(f"  browser: {len(window)} frames in the {window_ms / 1000:.1f} s window = "
          f"{len(window) / (window_ms / 1000):.1f} fps (target >= 10 fps); frame gap median "
          f"{np.median(gaps):.0f} ms, p95 {pct(gaps, 95):.0f} ms; "
          f"{len(frames) - len(window)} more frames arrived after the window")
    say(f"  periodic callback: {renders + 1} renders at {renders / server_span:.1f} renders/s "
          f"({renders + 1 - len(frames)} never reached the browser)")
    say(f"  solver: {with_app:.0f} steps/s with the app, {alone:.0f} steps/s alone "
          f"({with_app / alone:.0%})")
    say(f"  lag in the window, snapshot made -> browser: median {np.median(lag_made):.0f} ms, "
          f"p95 {pct(lag_made, 95):.0f} ms, at window end {lag_made[-1]:.0f} ms")
    say(f"  lag in the window, server render -> browser: median "
          f"{np.median(lag_render):.0f} ms, p95 {pct(lag_render, 95):.0f} ms, at window end "
          f"{lag_render[-1]:.0f} ms")
    return {"fps": round(len(window) / (window_ms / 1000), 1),
            "window_s": round(window_ms / 1000, 2), "fit_ended": last_step >= MAX_ITER,
            "renders_per_s": round(renders / server_span, 1),
            "steps_per_s_with_app": round(with_app), "steps_per_s_alone": round(alone),
            "lag_made_ms": {"median": round(float(np.median(lag_made))),
                            "p95": round(pct(lag_made, 95)), "end": round(lag_made[-1])},
            "lag_render_ms": {"median": round(float(np.median(lag_render))),
                              "p95": round(pct(lag_render, 95)), "end": round(lag_render[-1])}}


def measure_scrub(page, url):
    page.goto(url)
    page.locator("canvas").first.wait_for(state="visible")
    page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0")
    page.evaluate(STATUS_HOOK)
    page.locator("select", has=page.locator("option", has_text="unthrottled")).first \
        .select_option("unthrottled")
    page.get_by_role("button", name="▶ Run").click()
    page.get_by_text("done - step").first.wait_for(state="visible", timeout=60_000)
    page.wait_for_timeout(500)
    # the "Recorded snapshot" slider's handle (not the page's last slider: the Sweep section
    # under the page has sliders of its own), marked for the locator
    page.evaluate("""() => {
      const walk = (root) => {
        for (const el of root.querySelectorAll('*')) {
          if (el.shadowRoot) {
            const title = el.shadowRoot.querySelector('.bk-slider-title');
            const handle = el.shadowRoot.querySelector('.noUi-handle');
            if (title && handle && title.textContent.startsWith('Recorded snapshot'))
              handle.setAttribute('data-bench', 'scrub');
            walk(el.shadowRoot);
          }
        }
      };
      walk(document);
    }""")
    handle = page.locator("[data-bench=scrub]").first
    latencies = []
    for i in range(20):
        handle.focus()
        before = page.evaluate("window.__cds.length")
        t_press = page.evaluate("performance.now()")
        page.keyboard.press("ArrowLeft" if i % 2 == 0 else "ArrowRight")
        try:
            page.wait_for_function(f"() => window.__cds.length > {before}", timeout=5_000)
        except Exception:  # noqa: BLE001
            continue
        latencies.append(page.evaluate("window.__cds[window.__cds.length-1]") - t_press)
        page.wait_for_timeout(100)
    if latencies:
        lat = np.array(latencies)
        result = {"median_ms": round(float(np.median(lat))), "p95_ms": round(pct(lat, 95)),
                  "moves": int(lat.size)}
        say(f"scrub -> heatmap latency (Shared vs separate) over {lat.size} moves: median "
              f"{np.median(lat):.0f} ms, p95 {np.percentile(lat, 95):.0f} ms "
              f"(target p95 <= 300 ms)")
        return result
    say("scrub latency: no update observed")
    return {"median_ms": None, "p95_ms": None, "moves": 0}


def main(argv=None):
    import argparse

    from _reference import Handicap, header, into_json, machine_facts
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description="Browser benchmark of the served app.")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: 1 load a page, 2 pause tries, no large data")
    parser.add_argument("--skip-live-page", action="store_true",
                        help="skip the stamp page (live_page)")
    parser.add_argument("--out", default=None, help="also write the JSON object to this file")
    parser.add_argument("--handicap", type=int, default=0, metavar="N",
                        help="N CPU-bound processes (Python busy loops) running beside the "
                             "server and the browser for the whole measurement (default 0)")
    parser.add_argument("--only", default=None,
                        help="comma-separated parts to run (first_render, runs, scrub, "
                             "server_cpu, live_page); default: all")
    args = parser.parse_args(argv)
    parts = set(args.only.split(",")) if args.only else {"first_render", "runs", "scrub",
                                                         "server_cpu", "live_page"}
    QUIET[0] = args.json
    loads, tries = (1, 2) if args.quick else (RENDER_LOADS, PAUSE_TRIES)
    sizes = {"defaults": {}} if args.quick else {"defaults": {}, "large": LARGE}

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    t_start = time.perf_counter()
    # the machine as it is (before the handicap starts): see benchmarks/_reference.py
    facts = machine_facts()
    say(header(facts))
    result: dict = {"loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
                    "handicap": args.handicap}
    handicap = Handicap(args.handicap)
    proc = None
    try:
        handicap.start()
        if args.handicap:
            say(f"handicap: {args.handicap} CPU-bound process(es) running beside the measurement")
        alone = None if args.skip_live_page else solver_alone()
        titles = page_titles()
        with sync_playwright() as pw:
            # the browser first: the first visitor comes the moment the server answers
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            proc, base, result["server_start_s"] = start_server()
            result["first_render_cold_s"] = measure_cold_render(browser, base)
            say(f"server answered after {result['server_start_s']:.1f} s; the first visitor's "
                f"render: {result['first_render_cold_s']:.2f} s")
            # warm-up visit to every page (a page's first session in a process), not counted
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            page.set_default_timeout(NAV_TIMEOUT_MS)
            for slug in HEADINGS:
                page.goto(query_url(base, slug, DEFAULT_DATA.get(slug, {})))
                page.get_by_role("heading", name=HEADINGS[slug]).first.wait_for(state="visible")
            context.close()
            settle_start = time.perf_counter()
            _settle(proc, quiet_s=1.0, limit_s=120.0)
            result["settle_after_warm_up_s"] = round(time.perf_counter() - settle_start, 1)

            if "first_render" in parts:
                say(f"first render (fresh context, goto -> heading and first canvas visible; "
                    f"median of {loads}):")
                by_page = measure_first_render(browser, base, loads)
                result["first_render_s"] = max(by_page.values())
                result["first_render_worst_page"] = max(by_page, key=by_page.get)
                result["first_render_by_page"] = by_page

            runs = {}
            if "runs" in parts:
                say(f"live runs (unthrottled; long fits {LONG_FIT}; large = {LARGE}):")
                runs = measure_runs(browser, base, titles, tries, sizes)
            for size, suffix in (("defaults", ""), ("large", "_large")):
                if size not in runs:
                    continue
                per = runs[size]
                fps = {s: r["data_fps"] for s, r in per.items()
                       if r.get("data_fps") is not None}
                pause = {s: r["pause_p95_ms"] for s, r in per.items()
                         if r["pause_p95_ms"] is not None}
                switch = {s: max(r["switch_s"]) for s, r in per.items() if r["switch_s"]}
                settled = {s: max(r["switch_settled_s"]) for s, r in per.items()
                           if r["switch_settled_s"]}
                result[f"live_fps{suffix}"] = min(fps.values()) if fps else None
                result[f"live_fps{suffix}_by_page"] = fps
                for key, name in (("fps", "status_fps"), ("data_fps_from_click",
                                                         "fps_from_click"),
                                  ("first_frame_s", "first_frame_s")):
                    result[f"live_{name}{suffix}_by_page"] = {s: r.get(key)
                                                              for s, r in per.items()}
                result[f"pause_p95_ms{suffix}"] = max(pause.values()) if pause else None
                result[f"pause_p95_ms{suffix}_by_page"] = pause
                result[f"page_switch_during_run_s{suffix}"] = (max(switch.values())
                                                               if switch else None)
                result[f"page_switch_during_run_s{suffix}_by_page"] = switch
                result[f"page_switch_settled_s{suffix}"] = (max(settled.values())
                                                            if settled else None)
                result[f"page_switch_settled_s{suffix}_by_page"] = settled
                result[f"runs{suffix}_detail"] = per

            if "scrub" in parts:
                page = browser.new_page(viewport=VIEWPORT)
                page.set_default_timeout(NAV_TIMEOUT_MS)
                scrub = measure_scrub(page, base + "/explorer?page=shared_vs_separate")
                result["scrub_p95_ms"] = scrub["p95_ms"]
                result["scrub_median_ms"] = scrub["median_ms"]
                page.close()

            if "server_cpu" in parts:
                say("server CPU per data change (Data seed field, default data):")
                cpu = measure_server_cpu(browser, base, proc, 2 if args.quick else CHANGES)
                result["server_ms_per_change"] = max(v["server_ms"] for v in cpu.values())
                result["server_ms_per_change_by_page"] = {k: v["server_ms"]
                                                          for k, v in cpu.items()}
                result["server_change_detail"] = cpu

            if not args.skip_live_page and "live_page" in parts:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.set_default_timeout(60_000)
                result["live_page"] = measure_live(page, base + "/bench_app", alone)
                page.close()
            browser.close()
    finally:
        try:
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=10)
        finally:
            handicap.stop()
    result.update(handicap.facts())
    result["total_s"] = round(time.perf_counter() - t_start)
    result["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]  # other work on the box?
    result = into_json(result, facts)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    if args.json:
        print(json.dumps(result))
    else:
        keys = ["cpu_reference_s", "handicap", "first_render_cold_s", "first_render_s",
                "live_fps", "live_fps_large",
                "pause_p95_ms",
                "pause_p95_ms_large", "page_switch_during_run_s",
                "page_switch_during_run_s_large", "page_switch_settled_s",
                "page_switch_settled_s_large", "scrub_p95_ms", "server_ms_per_change"]
        print("summary: " + ", ".join(f"{k}={result.get(k)}" for k in keys))
        print(f"total benchmark time: {result['total_s']} s")


if __name__ == "__main__":
    main()
elif __name__.startswith("bokeh"):  # served by panel serve
    serve_live_page()
