"""The tour notebook in a real JupyterLab, in headless Chromium, with no internet.

A JupyterLab server (this interpreter's, so this venv's packages and kernel) serves a copy of
``notebooks/00_tour.ipynb`` from a temporary directory (running it writes the notebook's
checkpoints there, never into the checkout). Chromium opens it, runs every cell with
JupyterLab's "Run > Run All Cells" menu, and the test checks that

* the app's pages render in the outputs (Bokeh canvases, Panel widgets) and stay live:
  Reset on the "Shared vs separate" page clears its views, Run (at the "unthrottled" speed
  chosen in its Speed menu) fits again in the kernel and draws the same result;
* the browser asked no host but this machine for anything (every request and websocket
  recorded): Panel's and Bokeh's JavaScript and CSS came inline with the outputs, which is
  what makes the notebooks work in a classroom without internet.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

pytestmark = pytest.mark.ui

ROOT = Path(__file__).resolve().parents[2]
TOUR = ROOT / "notebooks" / "00_tour.ipynb"
TOKEN = "explorer-ui-test"
LOCAL_HOSTS = {"localhost", "127.0.0.1"}
STARTUP_TIMEOUT_S = 60
RUN_ALL_TIMEOUT_MS = 120_000
VIEWPORT = {"width": 1400, "height": 900}

#: The numbers the browser draws: for every glyph renderer of every Bokeh view on the page,
#: the sum of its ``image`` column (heatmaps), rounded; sorted.
HEATMAP_SUMS_JS = """() => {
  const out = [];
  for (const view of Bokeh.index.all_views()) {
    const source = view.model.data_source;
    if (source == null || view.model.glyph == null) continue;
    const data = source.data;
    const values = data instanceof Map ? data.get("image") : data["image"];
    if (values == null) continue;
    let total = 0;
    for (const v of values) {
      if (typeof v === "number") total += v;
      else for (const w of v) if (!Number.isNaN(w)) total += w;
    }
    out.push(Math.round(total * 1e4) / 1e4);
  }
  return out.sort();
}"""

#: True when every code cell has run (its prompt shows an execution count, none is queued).
ALL_RUN_JS = """() => {
  const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
    .map(e => e.textContent.trim());
  return prompts.length > 0 && prompts.every(t => /^\\[\\d+\\]:$/.test(t));
}"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _until(page, click, shown, server_output, attempts: int = 4,
           attempt_ms: int = 8_000) -> None:
    """``click()`` until ``shown`` (a locator) is visible, ``attempts`` times at most.

    A click on an output far down the notebook first scrolls it into view, and JupyterLab
    then lays out the cells it skipped while they were off screen: the button may move
    between Playwright's stability check and the click, which then lands beside it. Reset
    and Run are safe to press twice.
    """
    for attempt in range(attempts):
        click()
        try:
            shown.first.wait_for(timeout=attempt_ms)
            return
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                path = Path(tempfile.gettempdir()) / "jupyterlab-tour.png"
                page.screenshot(path=str(path))
                raise AssertionError(f"no {shown} after {attempts} clicks (screenshot: "
                                     f"{path}):\n{server_output()}") from None


def _api(base: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        f"{base}{path}", data=None if body is None else json.dumps(body).encode(),
        method="GET" if body is None else "POST",
        headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"{}")


@pytest.fixture(scope="module")
def jupyterlab():
    """``(base_url, server_output)`` of a JupyterLab serving a temporary copy of the tour. Its
    kernel is started through the REST API before the browser comes, so JupyterLab attaches
    to it instead of starting one of its own (it started two, and dropped the cells queued on
    the first, when the page opened first)."""
    tmp = Path(tempfile.mkdtemp(prefix="explorer-jupyterlab-"))
    notebooks = tmp / "notebooks"
    notebooks.mkdir()
    shutil.copy(TOUR, notebooks / TOUR.name)
    # This interpreter as the notebook's "python3" kernel, found first on JUPYTER_PATH.
    kernel = tmp / "share" / "jupyter" / "kernels" / "python3"
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (explorer test)", "language": "python",
        "env": {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
    }))
    # No toast asking to fetch Jupyter's news (it would cover the outputs).
    settings = tmp / "settings"
    notification = settings / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "JUPYTER_PATH": str(tmp / "share" / "jupyter"),
           "JUPYTER_CONFIG_DIR": str(tmp / "config"), "JUPYTER_DATA_DIR": str(tmp / "data"),
           "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"), "OPENBLAS_NUM_THREADS": "1",
           "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
           "--ip=127.0.0.1", f"--port={port}", f"--IdentityProvider.token={TOKEN}",
           f"--ServerApp.root_dir={notebooks}", f"--LabApp.user_settings_dir={settings}",
           f"--LabApp.workspaces_dir={tmp / 'workspaces'}", "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--LabApp.extension_manager=readonly"]
    log = tempfile.TemporaryFile(mode="w+b")
    process = subprocess.Popen(cmd, cwd=tmp, env=env, stdout=log, stderr=subprocess.STDOUT)

    def server_output() -> str:
        log.seek(0)
        return log.read().decode(errors="replace")[-6000:]

    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if process.poll() is not None:
                pytest.fail(f"jupyter lab exited with code {process.returncode}:\n"
                            f"{server_output()}", pytrace=False)
            try:
                _api(base, "/api/status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"jupyter lab did not answer within {STARTUP_TIMEOUT_S} s:\n"
                            f"{server_output()}", pytrace=False)
            time.sleep(0.2)
        _api(base, "/api/sessions", {"path": TOUR.name, "name": TOUR.name, "type": "notebook",
                                     "kernel": {"name": "python3"}})
        yield base, server_output
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def test_tour_runs_in_jupyterlab_offline(jupyterlab, browser):
    base, server_output = jupyterlab
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(30_000)
    requested: list[str] = []
    page_errors: list[str] = []
    try:
        page = context.new_page()
        page.on("request", lambda request: requested.append(request.url))
        page.on("websocket", lambda socket: requested.append(socket.url))
        page.on("pageerror", lambda exc: page_errors.append(str(exc)))
        page.goto(f"{base}/lab/tree/{TOUR.name}?token={TOKEN}")
        page.get_by_text("Python 3 (explorer test) | Idle").wait_for()

        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:
            page.wait_for_function(ALL_RUN_JS, timeout=RUN_ALL_TIMEOUT_MS)
        except PlaywrightTimeout as exc:
            page.screenshot(path=str(Path(tempfile.gettempdir()) / "jupyterlab-tour.png"))
            raise AssertionError(f"the tour did not run to its end (screenshot: "
                                 f"jupyterlab-tour.png in {tempfile.gettempdir()}):\n"
                                 f"{server_output()}") from exc
        errors = page.locator(".jp-OutputArea-output[data-mime-type*='error']")
        assert errors.count() == 0, errors.first.inner_text()

        # The app's "Shared vs separate" page in its cell's output: drawn, with its widgets.
        cell = page.locator(".jp-CodeCell").filter(has_text="shared_page = notebook.app_page")
        output = cell.locator(".jp-OutputArea")
        output.get_by_text("Fitted in").first.wait_for()
        assert output.locator("canvas").count() >= 4   # heatmaps, objective, error bars
        page.evaluate(f"window.explorerHeatmapSums = {HEATMAP_SUMS_JS}")
        drawn = page.evaluate("window.explorerHeatmapSums()")
        assert any(drawn), drawn

        # Live: Reset clears the views (the kernel answers through Panel's comm) ...
        status = output.get_by_text(re.compile(r"^(Ready\.|(running|paused|done) - step)"))
        _until(page, lambda: output.get_by_role("button", name="Reset").click(),
               output.get_by_text("Ready."), server_output)
        page.wait_for_function("(before) => JSON.stringify(window.explorerHeatmapSums()) "
                               "!== JSON.stringify(before)", arg=drawn)
        assert output.get_by_text("Fitted in").count() == 0
        # ... and Run fits again in the kernel, drawing frames from its event loop.
        output.get_by_role("combobox", name="Speed").select_option("unthrottled")
        _until(page, lambda: output.get_by_role("button", name="Run").click(),
               output.get_by_text(re.compile(r"^(running|done) - step")), server_output)
        output.get_by_text("Fitted in").first.wait_for(timeout=60_000)
        page.wait_for_function("(before) => JSON.stringify(window.explorerHeatmapSums()) "
                               "=== JSON.stringify(before)", arg=drawn)
        assert status.count() == 1, status.all_inner_texts()
        assert page_errors == [], page_errors
    finally:
        context.close()

    remote = sorted({url for url in requested
                     if urlsplit(url).scheme not in ("data", "blob")
                     and urlsplit(url).hostname not in LOCAL_HOSTS})
    assert remote == [], f"the browser asked other hosts than this machine: {remote[:20]}"
    assert any("/api/kernels/" in url for url in requested), "no kernel websocket recorded"
