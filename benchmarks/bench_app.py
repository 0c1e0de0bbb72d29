"""Browser benchmark of the served app: first render, live fps, control -> plot latency.

Starts ``panel serve apps/explorer.py`` on a free port, opens the "Shared vs separate" page in
headless Chromium and prints:

* time to first render: navigation start -> first plot canvas visible (target <= 3 s);
* frames per second the browser receives during a live run at 30 steps/s (6 s window):
  ColumnDataSource updates counted by a JS hook on the Bokeh document,
  grouped into frames (changes less than
  15 ms apart belong to one frame) (target >= 10 fps);
* latency of the scrub slider (no refit): key press -> heatmap source changed in the browser,
  median and p95 over 20 moves (target p95 <= 300 ms).

Run: ``.venv/bin/python benchmarks/bench_app.py``
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
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

HOOK = """
() => {
  window.__cds = [];
  const doc = window.Bokeh.documents[0];
  doc.on_change((e) => {
    const m = e.column_source || e.model;
    if (m && (e.column_source || (m.data !== undefined && e.attr === "data"))) {
      window.__cds.push(performance.now());
    }
  });
  return true;
}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server():
    port = free_port()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "panel", "serve", "apps/explorer.py", "--port", str(port),
         f"--allow-websocket-origin=localhost:{port}"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://localhost:{port}/explorer"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                if response.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.3)
    proc.terminate()
    raise RuntimeError("panel serve did not start within 90 s")


def frames(stamps, gap_ms=15.0):
    stamps = sorted(stamps)
    return sum(1 for i, t in enumerate(stamps) if i == 0 or t - stamps[i - 1] > gap_ms)


def main():
    proc, url = start_server()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(60_000)
            # warm-up visit (first session pays for imports), then the measured one
            page.goto(url + "?page=shared_vs_separate")
            page.locator("canvas").first.wait_for(state="visible")
            start = time.perf_counter()
            page.goto(url + "?page=shared_vs_separate")
            page.locator("canvas").first.wait_for(state="visible")
            first_render = time.perf_counter() - start
            print(f"first render (navigation -> first canvas): {first_render:.2f} s "
                  f"(target <= 3 s)", flush=True)

            page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0")
            page.evaluate(HOOK)
            page.locator("select", has=page.locator("option", has_text="30 steps/s")).first \
                .select_option("30 steps/s")
            page.get_by_role("button", name="▶ Run").click()
            t0 = page.evaluate("performance.now()")
            page.wait_for_timeout(6_000)  # measure a 6 s window of the live run
            page.get_by_role("button", name="Pause").click()
            page.wait_for_timeout(500)
            stamps = [t for t in page.evaluate("window.__cds") if t >= t0]
            if len(stamps) > 1:
                span = (stamps[-1] - stamps[0]) / 1000
                n = frames(stamps)
                print(f"live run: {n} frames in {span:.2f} s = {n / max(span, 1e-9):.1f} fps "
                      f"(target >= 10 fps)")
            else:
                print("live run: no source updates seen")

            handle = page.locator(".noUi-handle").last
            latencies = []
            for i in range(20):
                handle.focus()
                before = page.evaluate("window.__cds.length")
                t_press = page.evaluate("performance.now()")
                page.keyboard.press("ArrowLeft" if i % 2 == 0 else "ArrowRight")
                try:
                    page.wait_for_function(f"() => window.__cds.length > {before}",
                                           timeout=5_000)
                except Exception:  # noqa: BLE001
                    continue
                latencies.append(page.evaluate("window.__cds[window.__cds.length-1]")
                                 - t_press)
                page.wait_for_timeout(100)
            if latencies:
                lat = np.array(latencies)
                print(f"scrub -> heatmap latency over {lat.size} moves: median "
                      f"{np.median(lat):.0f} ms, p95 {np.percentile(lat, 95):.0f} ms "
                      f"(target p95 <= 300 ms)")
            else:
                print("scrub latency: no update observed")
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
