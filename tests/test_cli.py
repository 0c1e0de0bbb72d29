import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from explorer.data import read_csv

ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def _run(*args):
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True,
                          text=True, env=ENV, timeout=60)


def test_help():
    r = _run("--help")
    assert r.returncode == 0 and "generate" in r.stdout


def test_generate_roundtrip(tmp_path):
    out = tmp_path / "d.csv"
    r = _run("generate", "task_family", "--param", "n_samples_per_task=20", "--param",
             "relations=related,negated,unrelated", "--seed", "3", "--out", str(out))
    assert r.returncode == 0, r.stderr
    data = read_csv(out)
    assert data.n_tasks == 4 and data.n_samples == 80


def test_generate_list():
    r = _run("generate", "--list")
    assert r.returncode == 0 and "outlier_tasks" in r.stdout


def test_bad_param_exits_2(tmp_path):
    r = _run("generate", "task_family", "--param", "n_samples_per_task=-3", "--out",
             str(tmp_path / "x.csv"))
    assert r.returncode == 2 and "n_samples_per_task" in r.stderr and "Traceback" not in r.stderr


def texts(document) -> set[str]:
    """The labels and titles of a document's models."""
    return {text for model in document.models
            for text in (getattr(model, "label", None), getattr(model, "title", None))
            if isinstance(text, str)}


def test_serve_builds_a_session_for_a_link():
    """``python -m explorer serve``: a real Bokeh server answers the page and builds a whole
    session for a link (pulled over the websocket, as a browser would) without an error; a
    session opened together with another gets its sidebar first and its page once the
    client reports the document drawn. The CI's lowest-versions step runs this as its app
    smoke test."""
    import panel.models  # noqa: F401 -- the document's custom model types, to read it here
    from bokeh.client import pull_session
    from bokeh.events import DocumentReady

    from explorer.app.pages import PAGES  # noqa: F401 -- and the app's own

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tempfile.TemporaryFile(mode="w+b")
    server = subprocess.Popen([sys.executable, "-m", "explorer", "serve", "--port", str(port)],
                              env={**ENV, "PYTHONUNBUFFERED": "1"}, stdout=log,
                              stderr=subprocess.STDOUT)
    url = f"http://localhost:{port}/explorer"
    body, labels, deadline = None, set(), time.monotonic() + 90
    try:
        while body is None and server.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=30) as response:
                    body = response.read().decode("utf-8", "replace")
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.25)   # the server is still starting
        if body is not None:
            with pull_session(url=url, arguments={"page": "trees", "data_seed": "3"}) as session:
                first = labels = texts(session.document)
                # opened right after the page request above, this session opens together
                # with it (a class opening the link): its sidebar first, and once a browser
                # reports the document drawn, the page (the Python client drops patches
                # that arrive while it waits for a reply: the document is pulled again)
                session.document.callbacks.send_event(DocumentReady())
                page_deadline = time.monotonic() + 30
                while "Max depth" not in labels and time.monotonic() < page_deadline:
                    time.sleep(0.5)
                    session.pull()
                    labels = texts(session.document)
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.seek(0)
        output = log.read().decode(errors="replace")
        log.close()
    assert body is not None, f"the server never answered:\n{output[-3000:]}"
    assert "<title>MTL Explorer</title>" in body
    assert {"Hide the truth", "Data seed"} <= first and "Max depth" not in first  # sidebar
    assert {"Hide the truth", "Data seed", "Max depth"} <= labels   # then the Trees page
    assert "Traceback" not in output and "ERROR" not in output, output[-3000:]
