"""Browser benchmark of the served app: first render, live frame rate and lag, scrub latency.

Serves two apps with one ``panel serve``: the MTL Explorer (``apps/explorer.py``) and a live-fit
page built by this very file (served, it takes the branch at the bottom): the shared
:class:`~explorer.app.runner.LiveFitRunner` driving a fit that lasts well beyond the measured
window -- ``RobustMTFL(tol=0, max_iter=60000)`` on ``make_outlier_tasks`` at the app's default
size (10 tasks, 20 features, 30 samples a task; ``tol=0`` never stops early, ``tol=1e-12``
still stops after ~200 steps), ~18 s alone -- with the views patched in place like the Outliers
page (P and Q ``MatrixHeatmap``, objective ``CurveView``). Headless Chromium opens both pages
and the script prints:

* time to first render of the "Shared vs separate" page: navigation start -> first plot canvas
  visible (target <= 3 s);
* the live run (unthrottled, 6 s window): frames per second the browser receives in the window
  (changes of a stamp source the render callback sets once per frame, counted by a JS hook on
  the Bokeh document; target >= 10 fps) and the periodic callback's renders per second;
  solver steps/s with the app (from the stamps) and alone (the same fit in a ``FitSession`` in
  this process, no server, before the server starts); lag, median / p95 / at the end of the
  window: snapshot made by the solver -> frame in the browser (includes the up to 100 ms wait
  for the next periodic tick, since frames are taken, never queued) and render call on the
  server -> frame in the browser (same machine, so the wall clocks agree). A lag that grows
  through the window means the browser is the slow part: frames queue in its websocket.
  ``BENCH_VIEWS`` (default ``P,Q,curve``) picks the views a frame patches, to find which
  one costs (e.g. ``BENCH_VIEWS=curve`` or ``none``, the stamp only).
* latency of the scrub slider of "Shared vs separate" after a completed fit (no refit): key
  press -> heatmap source changed in the browser, median and p95 over 20 moves (target
  p95 <= 300 ms).

Run: ``.venv/bin/python benchmarks/bench_app.py`` (about a minute).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
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

    from explorer.app.runner import FitJob, LiveFitRunner, configure_process
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
    from explorer.app.runner import FitJob, FitSession

    ds = _data()
    session = FitSession(lambda: FitJob(_estimator(ALONE_STEPS), (ds.X, ds.y, ds.task)))
    start = time.perf_counter()
    session.run()
    session.wait(120)
    elapsed = time.perf_counter() - start
    return session.latest().step / elapsed


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server():
    port = free_port()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "panel", "serve", "apps/explorer.py", "benchmarks/bench_app.py",
         "--port", str(port), f"--allow-websocket-origin=localhost:{port}"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://localhost:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/explorer", timeout=10) as response:
                if response.status == 200:
                    return proc, base
        except OSError:
            time.sleep(0.3)
    proc.terminate()
    raise RuntimeError("panel serve did not start within 90 s")


def pct(values, q):
    return float(np.percentile(np.asarray(values, dtype=float), q))


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
        print(f"live run: only {len(frames)} frames seen")
        return
    last_step = frames[-1]["step"]
    if last_step >= MAX_ITER:
        print(f"WARNING: the fit ended within the window (step {last_step})")
    window = [f for f in frames if t0 <= f["now"] <= t0 + WINDOW_MS]
    renders = frames[-1]["renders"] - frames[0]["renders"]
    server_span = (frames[-1]["rendered"] - frames[0]["rendered"]) / 1000
    steps = frames[-1]["step"] - frames[0]["step"]
    with_app = steps / ((frames[-1]["made"] - frames[0]["made"]) / 1000)
    lag_made = [f["wall"] - f["made"] for f in window] or [float("nan")]
    lag_render = [f["wall"] - f["rendered"] for f in window] or [float("nan")]
    gaps = np.diff([f["now"] for f in window]) if len(window) > 1 else np.array([np.nan])
    print(f"live run (RobustMTFL tol=0, make_outlier_tasks {DATA['n_samples_per_task']} samples x "
          f"{DATA['n_features']} features x {DATA['n_tasks']} tasks, views "
          f"{os.environ.get('BENCH_VIEWS', 'P,Q,curve')}, unthrottled, "
          f"{WINDOW_MS / 1000:.0f} s window; solver reached step {last_step} of {MAX_ITER}):")
    print(f"  browser: {len(window)} frames in the {WINDOW_MS / 1000:.0f} s window = "
          f"{len(window) / (WINDOW_MS / 1000):.1f} fps (target >= 10 fps); frame gap median "
          f"{np.median(gaps):.0f} ms, p95 {pct(gaps, 95):.0f} ms; "
          f"{len(frames) - len(window)} more frames arrived after the window")
    print(f"  periodic callback: {renders + 1} renders at {renders / server_span:.1f} renders/s "
          f"({renders + 1 - len(frames)} never reached the browser)")
    print(f"  solver: {with_app:.0f} steps/s with the app, {alone:.0f} steps/s alone "
          f"({with_app / alone:.0%})")
    print(f"  lag in the window, snapshot made -> browser: median {np.median(lag_made):.0f} ms, "
          f"p95 {pct(lag_made, 95):.0f} ms, at window end {lag_made[-1]:.0f} ms")
    print(f"  lag in the window, server render -> browser: median "
          f"{np.median(lag_render):.0f} ms, p95 {pct(lag_render, 95):.0f} ms, at window end "
          f"{lag_render[-1]:.0f} ms", flush=True)


def measure_scrub(page, url):
    page.goto(url)
    page.locator("canvas").first.wait_for(state="visible")
    page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0")
    page.evaluate(HOOK)
    page.locator("select", has=page.locator("option", has_text="unthrottled")).first \
        .select_option("unthrottled")
    page.get_by_role("button", name="▶ Run").click()
    page.get_by_text("done - step").first.wait_for(state="visible", timeout=60_000)
    page.wait_for_timeout(500)
    handle = page.locator(".noUi-handle").last
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
        print(f"scrub -> heatmap latency (Shared vs separate) over {lat.size} moves: median "
              f"{np.median(lat):.0f} ms, p95 {np.percentile(lat, 95):.0f} ms "
              f"(target p95 <= 300 ms)")
    else:
        print("scrub latency: no update observed")


def main():
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    t_start = time.perf_counter()
    alone = solver_alone()
    proc, base = start_server()
    explorer = base + "/explorer?page=shared_vs_separate"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(60_000)
            # warm-up visit (first session pays for imports), then the measured one
            page.goto(explorer)
            page.locator("canvas").first.wait_for(state="visible")
            start = time.perf_counter()
            page.goto(explorer)
            page.locator("canvas").first.wait_for(state="visible")
            first_render = time.perf_counter() - start
            print(f"first render (navigation -> first canvas): {first_render:.2f} s "
                  f"(target <= 3 s)", flush=True)
            measure_live(page, base + "/bench_app", alone)
            measure_scrub(page, explorer)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"total benchmark time: {time.perf_counter() - t_start:.0f} s")


if __name__ == "__main__":
    main()
elif __name__.startswith("bokeh"):  # served by panel serve
    serve_live_page()
