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
    assert all(option in r.stdout for option in ("--class", "--class-db", "--class-ttl-hours"))


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
                              # two openings a moment apart count as together however
                              # busy the machine (the default window is 1 s)
                              env={**ENV, "PYTHONUNBUFFERED": "1", "MTL_TOGETHER_S": "60"},
                              stdout=log,
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


def _served_in_process(monkeypatch, argv):
    """``main(argv)`` with ``explorer.app.serve`` replaced (no server starts): its status,
    what it printed and what serve was given; the class store's environment restored."""
    import explorer.app
    from explorer.__main__ import main

    for name in ("MTL_CLASS_DB", "MTL_CLASS_TTL_HOURS"):   # restored at the end, set or not
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    served = {}
    monkeypatch.setattr(explorer.app, "serve", lambda **kwargs: served.update(kwargs))
    return main(argv), served


def test_serve_class_opens_a_class_and_prints_the_two_links(tmp_path, monkeypatch, capsys):
    """``serve --class SCENARIO --class-db PATH --class-ttl-hours H``: the class is in the
    store before the server starts, the students' link has its code and the teacher's its
    key; the app's processes find the store in the environment; the access log hides keys."""
    import logging
    import re

    from explorer.classroom import ClassStore, KeyRedactingFilter

    db = tmp_path / "classes" / "c.sqlite"
    status, served = _served_in_process(monkeypatch, [
        "serve", "--class", "negated_task", "--class-db", str(db), "--class-ttl-hours", "2",
        "--port", "5123", "--address", "127.0.0.1"])
    out, err = capsys.readouterr()
    assert status == 0, err
    students = re.search(r"students' link: (http://127\.0\.0\.1:5123/explorer\?class=(\w{8}))$",
                         out, re.M)
    teacher = re.search(r"teacher's link: (\S+)&key=([\w-]+)$", out, re.M)
    assert students and teacher, out
    code, key = students.group(2), teacher.group(2)
    assert teacher.group(1) == students.group(1) and len(key) >= 32
    assert "negated_task" in out and "3 tasks" in out
    assert served["port"] == 5123 and served["address"] == "127.0.0.1"
    assert os.environ["MTL_CLASS_DB"] == str(db) and float(os.environ["MTL_CLASS_TTL_HOURS"]) == 2
    with ClassStore(db) as store:
        state = store.class_state(code)
        assert (state.scenario, state.n_tasks, state.round, state.revealed) == (
            "negated_task", 3, 1, False)
        assert state.expires - state.created == 2 * 3600
        assert store.is_teacher(code, key)
    access = logging.getLogger("tornado.access")
    hider = [f for f in access.filters if isinstance(f, KeyRedactingFilter)]
    try:
        assert hider
        record = logging.LogRecord("tornado.access", logging.INFO, __file__, 1, "%d %s %.2fms",
                                   (200, f"GET /explorer?class={code}&key={key} (::1)", 1.0),
                                   None)
        assert hider[0].filter(record) and key not in record.getMessage()
        assert f"class={code}&key=<hidden>" in record.getMessage()
    finally:
        for f in hider:
            access.removeFilter(f)


def test_serve_class_refuses_a_scenario_without_a_truth(tmp_path, monkeypatch, capsys):
    db = tmp_path / "c.sqlite"
    for scenario, message in (("school_outliers", "has no true task relation to guess"),
                              ("nope", "name must be one of the scenarios")):
        status, served = _served_in_process(monkeypatch, [
            "serve", "--class", scenario, "--class-db", str(db)])
        err = capsys.readouterr().err
        assert status == 2 and message in err and "Traceback" not in err and not served
    status, served = _served_in_process(monkeypatch, ["serve", "--class-ttl-hours", "0"])
    assert status == 2 and "--class-ttl-hours must be a positive number" in capsys.readouterr().err


def test_serve_class_without_a_scenario_opens_the_default_one(tmp_path, monkeypatch, capsys):
    from explorer.__main__ import DEFAULT_CLASS_SCENARIO
    from explorer.classroom import ClassStore

    db = tmp_path / "c.sqlite"
    status, served = _served_in_process(monkeypatch, ["serve", "--class", "--class-db", str(db)])
    out = capsys.readouterr().out
    assert status == 0 and served["port"] == 5006
    code = out.split("?class=")[1][:8]
    with ClassStore(db) as store:
        assert store.class_state(code).scenario == DEFAULT_CLASS_SCENARIO
