import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from explorer.data import read_csv

ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def _run(*args):
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True,
                          text=True, env=ENV, timeout=60)


def test_help():
    r = _run("--help")
    assert r.returncode == 0 and "generate" in r.stdout
    r = _run("serve", "--help")   # --warm as with panel serve (serve always warms up)
    assert r.returncode == 0 and "--warm" in r.stdout


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


def _wire_labels(models: dict) -> set[str]:
    """The labels and titles of the models a client received (JSON, as on the wire)."""
    return {value for model in models.values()
            for key, value in model.get("attributes", {}).items()
            if key in ("label", "title") and isinstance(value, str)}


async def _open_on_the_wire(base: str, query: dict) -> tuple[set[str], set[str], bool]:
    """Open a session as a browser does on the wire (bench_load's client: GET, websocket,
    PULL-DOC, DocumentReady, then every PATCH-DOC): the labels of its first document, the
    labels once its page has come (or 30 s), and whether it came."""
    import asyncio

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_load import Client

    client = Client(base, query, {"errors": 0, "error_kinds": []}, timeout=30)
    await client.open()   # the document pulled; DocumentReady sent; patches listened to
    first = _wire_labels(client.models)
    for _ in range(300):
        if client.page_shown:
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)   # the page's own patches after its frame
    client.ws.close()
    return first, _wire_labels(client.models), client.page_shown


def test_serve_builds_a_session_for_a_link():
    """``python -m explorer serve``: a real Bokeh server answers the page and builds a whole
    session for a link (opened over the websocket as a browser does) without an error; a
    session opened together with another gets a first document without its sidebar and
    page, and both once it reports the document drawn. Before it listens, the warm-up says
    what it is doing and how long it took. The CI's lowest-versions step runs this as its app
    smoke test."""
    import asyncio

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tempfile.TemporaryFile(mode="w+b")
    server = subprocess.Popen([sys.executable, "-m", "explorer", "serve", "--warm", "--port",
                               str(port)],
                              env={**ENV, "PYTHONUNBUFFERED": "1"}, stdout=log,
                              stderr=subprocess.STDOUT)
    base = f"http://localhost:{port}"
    body, first, labels, shown = None, set(), set(), False
    deadline = time.monotonic() + 90
    try:
        while body is None and server.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(base + "/explorer", timeout=30) as response:
                    body = response.read().decode("utf-8", "replace")
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.25)   # the server is still starting
        if body is not None:
            # opened right after the page request above, this session opens together with
            # it (a class opening the link): the template first, then, once it reports the
            # document drawn, the sidebar and the page
            first, labels, shown = asyncio.run(
                _open_on_the_wire(base, {"page": "trees", "data_seed": "3"}))
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.seek(0)
        output = log.read().decode(errors="replace")
        log.close()
    assert body is not None, f"the server never answered:\n{output[-3000:]}"
    started = output.find("MTL Explorer: Compiling the numerical kernels")
    done = output.find("MTL Explorer: kernels compiled and pages warm in")
    assert 0 <= started < done, output[-3000:]
    if "Launching server" in output:   # Panel's address line comes after the warm-up
        assert done < output.index("Launching server")
    assert "<title>MTL Explorer</title>" in body
    assert not {"Hide the truth", "Data seed", "Max depth"} & first   # the template alone
    assert shown, output[-3000:]
    assert {"Hide the truth", "Data seed", "Max depth"} <= labels   # then sidebar and page
    assert "Traceback" not in output and "ERROR" not in output, output[-3000:]
