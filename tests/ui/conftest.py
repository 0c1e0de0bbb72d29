"""Real-browser fixtures: one ``panel serve apps/explorer.py`` per session, headless Chromium.

* ``app_server``: ``(url, process)``; ``app_url``: the served app's URL
  (``http://localhost:<port>/explorer``); the server is started once per test session and
  killed at the end. A server that fails to start fails the tests with its stderr.
* ``new_page``: a factory of pages, each in a *fresh* browser context (no shared cookies or
  storage: what a colleague opening a copied link sees); ``new_page(viewport)`` for another
  window size. Every console error, every warning of BokehJS (a console warning whose text
  starts with ``[bokeh``: "could not set initial ranges", "columns of inconsistent
  lengths"), every uncaught page error and every failed request of every page fails the
  test, except the named, explained console messages in ``ALLOWED_CONSOLE_ERRORS``.
* ``watch_console(page)``: the same checks on a page the test made itself (another
  context, e.g. an offline one); ``console_problems``: the list they fill.
* ``page``: one such page, 1400 x 900.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
VIEWPORT = {"width": 1400, "height": 900}
STARTUP_TIMEOUT_S = 60

#: Console errors that are not the app's fault, each with the reason it is harmless.
ALLOWED_CONSOLE_ERRORS: list[tuple[re.Pattern, str]] = [
    (re.compile(r"favicon\.ico.*404|Failed to load resource.*favicon"),
     "Chromium asks for /favicon.ico, which the Panel server does not serve."),
]


#: The servers running now: a name -> a function returning the end of its output.
_SERVER_OUTPUTS: dict = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test's report carries the end of each running server's output: a server-side
    traceback is then in the CI log next to the browser-side failure it caused."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for name, output in list(_SERVER_OUTPUTS.items()):
            report.sections.append((f"output of {name}", output()))


#: Whether each Bokeh figure on the page got the template's theme (its shadow root links
#: Bootstrap's style sheet), in document order.
FIGURES_THEMED_JS = """() => {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.classList && el.classList.contains('bk-Figure') && el.shadowRoot) {
        out.push([...el.shadowRoot.querySelectorAll('link')]
                 .some((link) => link.href.split('/').pop().startsWith('bootstrap.css')));
      }
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return out;
}"""

#: Components rendered as isolated ones: the whole of Bootstrap (bootstrap.min.css) linked
#: in their own shadow root instead of the template's rules for their kind (see
#: explorer.app.serving.themed_by_the_template); returns their Bokeh classes.
ISOLATED_COMPONENTS_JS = """() => {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) {
        if ([...el.shadowRoot.children].some((child) => child.tagName === 'LINK'
              && child.href.split('/').pop().startsWith('bootstrap.min.css')))
          out.push([...el.classList].find((name) => name.startsWith('bk-')) || el.tagName);
        walk(el.shadowRoot);
      }
    }
  };
  walk(document);
  return out;
}"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def app_url(app_server):
    return app_server[0]


@contextlib.contextmanager
def serving(cmd: list[str], *, cwd, env: dict, port: int,
            timeout_s: float = STARTUP_TIMEOUT_S):
    """Run the server ``cmd`` (listening on ``port``) until its ``/explorer`` answers; yield
    ``(url, process)``; stop it afterwards. A server that exits or does not answer within
    ``timeout_s`` fails the test with the end of its output; while it runs, a test that
    fails gets the end of its output in its report (``pytest_runtest_makereport``)."""
    log = tempfile.TemporaryFile(mode="w+b")
    # a process group of its own: ``--num-procs`` forks workers that outlive their parent
    # (tornado's fork_processes does not signal them), so the whole group is stopped
    process = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    url = f"http://localhost:{port}/explorer"
    name = " ".join(cmd[1:4])

    def server_output() -> str:
        log.seek(0)
        return log.read().decode(errors="replace")[-5000:]

    deadline = time.monotonic() + timeout_s
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(f"{name} exited with code {process.returncode}:\n"
                            f"{server_output()}", pytrace=False)
            try:
                with urllib.request.urlopen(url, timeout=10) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"{name} did not answer within {timeout_s} s:\n"
                            f"{server_output()}", pytrace=False)
            time.sleep(0.2)
        _SERVER_OUTPUTS[name] = server_output
        yield url, process
    finally:
        _SERVER_OUTPUTS.pop(name, None)
        _stop_group(process)
        log.close()


def _stop_group(process: subprocess.Popen) -> None:
    """Stop a server started in a process group of its own, its forked workers included."""
    import signal

    for sig, wait_s in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                os.killpg(process.pid, 0)   # anyone of the group left?
            except ProcessLookupError:
                break
            process.poll()   # (reaps the parent)
            time.sleep(0.1)
        else:
            continue
        break
    process.wait()


@pytest.fixture(scope="session")
def app_server():
    """``(url, process)`` of the one ``panel serve`` of the test session. Sessions whose
    browser went away are looked for every half second and destroyed once unused for 15 s
    (Bokeh's default lifetime: a shorter one discards sessions whose page is still loading)."""
    port = _free_port()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "panel", "serve", "apps/explorer.py", "--warm",
           "--port", str(port), f"--allow-websocket-origin=localhost:{port}",
           "--check-unused-sessions", "500",
           "--unused-session-lifetime", "15000"]
    with serving(cmd, cwd=ROOT, env=env, port=port) as served:
        yield served


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def _allowed(text: str) -> bool:
    return any(pattern.search(text) for pattern, _ in ALLOWED_CONSOLE_ERRORS)


def is_problem(kind: str, text: str) -> bool:
    """Whether a console message of type ``kind`` fails a test: any error, and BokehJS's
    warnings (its logger prefixes them ``[bokeh <version>]``)."""
    if kind == "error":
        return not _allowed(text)
    return kind == "warning" and text.startswith("[bokeh")


@pytest.fixture
def console_problems():
    """Every console error, BokehJS warning, page error and failed request seen by the
    pages of the test (see ``watch_console``); a non-empty list fails the test."""
    problems: list[str] = []
    yield problems
    if problems:
        pytest.fail(f"{len(problems)} browser console errors and warnings:\n"
                    + "\n".join(problems), pytrace=False)


@pytest.fixture
def watch_console(console_problems):
    """``watch_console(page)``: report the page's console problems to ``console_problems``."""
    def watch(page):
        page.on("console", lambda msg: console_problems.append(
            f"console.{msg.type}: {msg.text}") if is_problem(msg.type, msg.text) else None)
        page.on("pageerror", lambda exc: console_problems.append(f"page error: {exc}"))
        page.on("requestfailed", lambda r: console_problems.append(
            f"request failed: {r.url[:200]} ({r.failure})"))
        return page

    return watch


@pytest.fixture
def new_page(browser, watch_console):
    """Factory: ``new_page(viewport=VIEWPORT)`` opens a page in a fresh context; console
    problems fail the test."""
    contexts = []

    def make(viewport: dict | None = None):
        context = browser.new_context(viewport=viewport or VIEWPORT)
        context.set_default_timeout(20_000)
        contexts.append(context)
        return watch_console(context.new_page())

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def page(new_page):
    return new_page()
