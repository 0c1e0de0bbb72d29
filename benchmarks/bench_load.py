"""Load benchmark: N concurrent sessions against a real ``panel serve apps/explorer.py``.

Clients: raw Bokeh-protocol websocket clients, all in this one process on one asyncio loop
(no browser, so the 2-core machine's CPU goes to the server, not to 30 Chromium pages). Each
client does what a browser does on the wire: ``GET /explorer?...`` (the server builds the
session's document and returns the page with the session token), opens
``/explorer/ws`` with that token, sends ``PULL-DOC-REQ`` (the server serialises the whole
document), sends the ``document_ready`` event (Panel's ``onload`` callbacks run on it), then
patches widget values with ``PATCH-DOC`` ``ModelChanged`` events exactly as BokehJS does when
a user edits a field. Nothing is drawn: browser-side rendering cost is not in these numbers.

Two kinds of session (``--fitters``, default 1 in 6):

* **changers** (the rest) sit on a page (``--pages`` cycled over the sessions) and change the
  sidebar's *Data seed* field every ``--interval`` s (default 2) for ``--duration`` s
  (default 120). A change's **round trip** is: ``PATCH-DOC`` sent -> the server has sent the
  URL with the new ``data_seed`` (``Location.search``) *and* the sidebar's data summary has
  been rewritten without "building the new data..." (the data are built off the event loop
  and published on it), *and* no loading indicator spins (the app has none since Panel's is
  one per process). ``p95_s_by_page`` splits the round trips by the page the session is on.
  The next change is sent ``--interval`` s after the previous one was sent, or at once when
  its round trip took longer. A change
  without an answer within ``--timeout`` s (default 30) counts as a timeout (and the session
  moves on to its next change).
* **fitters** open the Outliers page on ``outlier_tasks`` data (catalog defaults, the page's
  smallest penalties: ``--fit-data``), set Speed to ``unthrottled``, press ``▶ Run``, and
  whenever the status says ``done`` press Reset and Run again: a live fit all the time. They
  report the patches (frames) they receive per second. They change no control.

Opening: every session starts at once (a class opening the link together). ``open_all_s`` /
``open_p95_s``: start -> every session (95 %) has its document (``PULL-DOC-REPLY``);
``page_all_s`` / ``page_p95_s``: -> its page's frame has arrived (the app sends a session's
first page once its first document is drawn: a page's figures may follow);
``server_cpu_s_per_open``: the server's CPU over that opening, per session. ``--burst N``: a
third into the load, N more sessions open at once while the others keep changing data;
``burst_*`` as above for them, and ``p95_during_burst_s`` of the changes sent meanwhile.

Printed: ``sessions``, ``p50_s`` / ``p95_s`` / ``max_s`` of the changers' round trips,
``changes``, ``errors`` (failed HTTP requests, closed websockets, ``ERROR`` replies, a page
that never arrived), ``timeouts``, the opening (above), the server's RSS (sum over
the ``panel serve`` process and its children, sampled every 0.5 s): ``memory_before_mb``
(after a warm-up load: ``--warm-up`` s of 6 sessions a process, 2 of them fitting, then
idle), ``memory_peak_mb``, ``memory_after_mb`` (``--after`` s, default 60, after every client
closed) and ``memory_after_ratio`` (after / before), the
server's CPU (cores used during the load) and the clients' own CPU (this process: cores used
during the load) so the numbers can be interpreted.

The figures travel with the machine (``benchmarks/_reference.py``): ``cpu_reference_s`` (a
fixed pure-Python and NumPy workload, seconds, best of 3, measured first) at the top level of
the JSON, and under ``machine`` the load average, the CPU count and model, the Python / NumPy /
Panel / Bokeh versions and the date. ``--handicap N``: N CPU-bound processes (Python busy
loops) run beside the server and the clients from before the server starts until the end
(stopped on an error or Ctrl-C too); ``handicap`` and ``handicap_cores`` (the CPU they got)
are in the JSON.

``--class N`` (issue 41) measures a class instead: ``python -m explorer serve --class
--class-db <a temporary SQLite file> --num-procs P`` on a free port; the class code and the
teacher's key are read from the links it prints. The teacher's Class page is opened in a
session, then N students' sessions on the student link, all at once, as browsers open it
(``"class_client": "sessions"``, the default): each clicks one to four pairs of its guess grid
(the grid's selection, as a click sets it), then all N click "Lock my guess" in the same
second, and a lock counts once the student's page says "Locked at" (the store committed it
before the page says so). ``--class-client store`` locks through ``ClassStore(url).lock_guess``
from N threads instead (the store alone, no session). JSON: ``class_stored`` (guesses in the
store), ``class_pages_said_locked`` (students' pages that said so), ``class_sessions_opened_s``
(the N sessions opened and ready), ``class_lock_spread_s``
(the clicks -> the last page said locked), ``class_lock_p50_s``, ``class_teacher_count_s`` (the
last lock -> the store's count, read with the teacher's key every 10 ms, said N),
``class_teacher_page_count_s`` (-> the teacher's page said "N locked"; the page asks the
store every ``POLL_S`` = 1 s), ``class_reveal_p50_s`` / ``class_reveal_max_s`` (the teacher's
"Reveal to the class" -> a student's session sent the guess scored against the truth; the
browser's drawing not included), ``errors`` (sessions' errors, locks never said, a count or a
page that never read N within ``--timeout`` s).

Run: ``.venv/bin/python benchmarks/bench_load.py [--sessions 30] [--num-procs 1] [--json]
[--handicap N]`` (about ``open + duration + after`` s, ~4 minutes at the defaults).
``--profile FILE`` runs the server under ``py-spy record`` (when installed; ``--num-procs 1``
only) and writes its flame graph (or, with a ``.txt`` name, the ``raw`` collapsed stacks)
there.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import psutil
from bokeh.protocol import Protocol
from bokeh.protocol.receiver import Receiver
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import websocket_connect

ROOT = Path(__file__).resolve().parents[1]
#: The sidebar's data seed: a :class:`explorer.app.widgets.Field`, whose label and value live
#: on its Panel data model (a Bokeh ``Spinner`` with this title before).
SEED_LABEL = "Data seed"
FIT_PAGE = "outliers"
#: the fitters' fit: Outliers' smallest penalties and largest iteration cap, a run of ~2 s
#: alone at the default outlier_tasks data (with the default penalties it ends in 42 steps)
FIT_DEFAULT = "outliers.rows=0.001&outliers.columns=0.001&outliers.max_iter=20000"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(num_procs: int, profile: str | None):
    port = free_port()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    from explorer.app import CHECK_SESSIONS_MS, SESSION_LIFETIME_MS

    # the session lifetimes of ``python -m explorer serve`` (and of the README's command)
    cmd = [sys.executable, "-m", "panel", "serve", "apps/explorer.py", "--warm",
           "--port", str(port), "--address", "127.0.0.1",
           f"--allow-websocket-origin=localhost:{port}",
           f"--allow-websocket-origin=127.0.0.1:{port}", "--num-procs", str(num_procs),
           "--unused-session-lifetime", str(SESSION_LIFETIME_MS),
           "--check-unused-sessions", str(CHECK_SESSIONS_MS)]
    if profile:
        spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        fmt = "raw" if profile.endswith(".txt") else "flamegraph"
        cmd = [spy, "record", "--subprocesses", "--threads", "--rate", "50", "--format", fmt,
               "-o", profile, "--"] + cmd
    log = open(f"/tmp/bench_load_server_{port}.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    import urllib.request

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"panel serve exited ({proc.returncode}); see {log.name}")
        try:
            with urllib.request.urlopen(base + "/explorer", timeout=30) as response:
                if response.status == 200:
                    return proc, base, log.name
        except OSError:
            time.sleep(0.3)
    proc.terminate()
    raise RuntimeError("panel serve did not start within 120 s")


def server_processes(proc) -> list[psutil.Process]:
    try:
        root = psutil.Process(proc.pid)
        return [root] + root.children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def server_rss_mb(proc) -> float:
    total = 0
    for p in server_processes(proc):
        try:
            if p.name().startswith("py-spy"):
                continue
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total / 2**20


def server_cpu_s(proc) -> float:
    total = 0.0
    for p in server_processes(proc):
        try:
            if p.name().startswith("py-spy"):
                continue
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def _walk(obj, out: dict) -> None:
    if isinstance(obj, dict):
        if obj.get("type") == "object" and "id" in obj:
            out[obj["id"]] = obj
        for value in obj.values():
            _walk(value, out)
    elif isinstance(obj, list):
        for value in obj:
            _walk(value, out)


class Client:
    """One session on the wire (see the module docstring)."""

    def __init__(self, base: str, query: dict, stats: dict, timeout: float):
        self.base, self.query, self.stats, self.timeout = base, query, stats, timeout
        self.models: dict = {}
        self.ws = None
        self.search = ""
        self.busy = False
        self.building = False
        self.summary_seq = 0
        self.status = ""
        self.status_id = None
        self.frames = 0
        self.changed = asyncio.Event()
        self.closed = False
        self.page = query.get("page", "tasks")
        self.page_shown = False
        #: called with every text a patch sets (the class benchmark reads the teacher's count)
        self.on_text = None
        #: index the models of every patch, not only until the page arrived (a student's
        #: guess block is made once the class's round is known)
        self.index_all = False
        #: called with every patch's content (a new model's text is not a ModelChanged)
        self.on_patch = None

    async def open(self) -> None:
        url = f"{self.base}/explorer?{urlencode(self.query)}"
        response = await AsyncHTTPClient().fetch(url, request_timeout=300)
        token = re.search(r'"token":"([^"]+)"', response.body.decode()).group(1)
        ws_url = self.base.replace("http", "ws", 1) + "/explorer/ws"
        request = HTTPRequest(ws_url, headers={"Origin": self.base}, request_timeout=300)
        self.ws = await websocket_connect(request, subprotocols=["bokeh", token],
                                          max_message_size=1 << 30)
        self.receiver = Receiver(Protocol())
        ack = await self.read()
        if ack is None or ack.msgtype != "ACK":
            raise RuntimeError(f"no ACK: {ack and ack.msgtype}")
        self.send("PULL-DOC-REQ", {})
        reply = await self.read()
        # as BokehJS does: a patch made before the document was pulled is in the document
        while reply is not None and reply.msgtype == "PATCH-DOC":
            reply = await self.read()
        if reply is None or reply.msgtype != "PULL-DOC-REPLY":
            raise RuntimeError(f"no PULL-DOC-REPLY: {reply and reply.msgtype}")
        self._take_models(reply.content)
        for model in self.models.values():
            attrs = model.get("attributes", {})
            if model.get("name", "").endswith("Location"):
                self.search = attrs.get("search", "")
        self.send_event("document_ready", [])
        asyncio.get_running_loop().create_task(self.listen())

    def _take_models(self, content) -> None:
        """Index the models a message defines; notes when the page's frame has arrived (the
        app sends a session's first page after its first document has been drawn)."""
        found: dict = {}
        _walk(content, found)
        self.models.update(found)
        marker = f"explorer-page-{self.page}"
        if not self.page_shown and any(
                marker in (model.get("attributes", {}).get("css_classes") or ())
                for model in found.values()):
            self.page_shown = True

    def find(self, **match) -> str:
        for mid, model in self.models.items():
            attrs = model.get("attributes", {})
            if all(attrs.get(k) == v for k, v in match.items()):
                return mid
        raise LookupError(f"no model with {match}")

    async def read(self):
        while True:
            fragment = await self.ws.read_message()
            if fragment is None:
                return None
            message = await self.receiver.consume(fragment)
            if message is not None:
                return message

    def send(self, msgtype: str, content) -> None:
        self.ws.write_message(json.dumps({"msgid": uuid.uuid4().hex, "msgtype": msgtype}))
        self.ws.write_message("{}")
        self.ws.write_message(json.dumps(content))

    def send_event(self, name: str, entries: list) -> None:
        self.send("PATCH-DOC", {"events": [{
            "kind": "MessageSent", "msg_type": "bokeh_event",
            "msg_data": {"type": "event", "name": name,
                         "values": {"type": "map", "entries": entries}}}]})

    def set_value(self, model_id: str, attr: str, value) -> None:
        self.send("PATCH-DOC", {"events": [{"kind": "ModelChanged", "model": {"id": model_id},
                                            "attr": attr, "new": value}]})

    def click(self, model_id: str) -> None:
        self.send_event("button_click", [["model", {"id": model_id}]])

    async def listen(self) -> None:
        try:
            while True:
                message = await self.read()
                if message is None:
                    break
                if message.msgtype == "ERROR":
                    self.stats["errors"] += 1
                    self.stats["error_kinds"].append(str(message.content)[:200])
                    continue
                if message.msgtype != "PATCH-DOC":
                    continue
                self.frames += 1
                if not self.page_shown or self.index_all:
                    self._take_models(message.content)
                if self.on_patch is not None:
                    self.on_patch(message.content)
                events = message.content.get("events", [])
                for event in events:
                    if event.get("kind") != "ModelChanged":
                        continue
                    attr, new = event.get("attr"), event.get("new")
                    if self.on_text is not None and attr in ("text", "html"):
                        self.on_text(str(new))
                    if attr == "search":
                        self.search = new
                    elif attr == "css_classes" and isinstance(new, list) and "loader" in new:
                        self.busy = "spin" in new
                    elif attr == "text" and "Data:" in str(new):
                        # the sidebar's data summary: "(building the new data...)" while
                        # the data are built off the event loop, then the new summary
                        self.summary_seq += 1
                        self.building = "building the new data" in str(new)
                    elif (attr in STATUS_ATTRS and self.status_id is not None
                          and (event.get("model", {}).get("id") == self.status_id
                               or (self.status_id == "any"
                                   and re.search(r"- step \d+", str(new))))):
                        self.status = str(new)
                self.changed.set()
        except Exception as exc:  # noqa: BLE001
            self.stats["error_kinds"].append(f"listen: {type(exc).__name__}: {exc}"[:200])
        if not self.closed:
            self.stats["errors"] += 1
            self.stats["error_kinds"].append("websocket closed by the server")
        self.closed = True
        self.changed.set()

    async def wait_for(self, predicate, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate():
            if self.closed:
                return False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except asyncio.TimeoutError:
                return predicate()
        return True

    def close(self) -> None:
        self.closed = True
        if self.ws is not None:
            self.ws.close()


async def run_changer(client: Client, end: float, interval: float, seed0: int) -> None:
    seed_id = client.find(label=SEED_LABEL)
    seed = seed0
    next_send = time.monotonic() + random.uniform(0, interval)
    while True:
        await asyncio.sleep(max(0.0, next_send - time.monotonic()))
        if time.monotonic() >= end or client.closed:
            return
        seed += 1
        key = f"data_seed={seed}&"
        sent = time.monotonic()
        next_send = sent + interval
        seq = client.summary_seq
        client.set_value(seed_id, "value", seed)
        ok = await client.wait_for(
            lambda k=key, n=seq: (k in client.search + "&" and not client.busy
                                  and client.summary_seq > n and not client.building),
            client.timeout)
        if ok:
            client.stats["round_trips"].append(time.monotonic() - sent)
            client.stats["round_trips_at"].append((sent, time.monotonic() - sent))
            client.stats["round_trips_by_page"].setdefault(client.page, []).append(
                time.monotonic() - sent)
        elif not client.closed:
            client.stats["timeouts"] += 1


#: Where the runner's status line keeps its text: a StatusLine's data model ("html"); "text"
#: was the Bokeh Div it replaced.
STATUS_ATTRS = ("html", "text")


async def run_fitter(client: Client, end: float) -> None:
    found = [mid for mid, m in client.models.items() for attr in STATUS_ATTRS
             if re.search(r"Ready\.|- step \d+", str(m.get("attributes", {}).get(attr, "")))]
    try:
        run_id, reset_id = client.find(label="▶ Run"), client.find(label="Reset")
    except LookupError:   # the page has no runner (e.g. it could not be built): an error
        client.stats["errors"] += 1
        texts = [str(m.get("attributes", {}).get("text", ""))[:80] for m in client.models.values()
                 if m.get("attributes", {}).get("text")]
        client.stats["error_kinds"].append(f"fitter: no Run button; texts {texts[:6]}")
        return
    if found:
        client.status_id = found[0]
    else:   # not seen in the pulled document: follow any status-like text
        client.stats["notes"].append("fitter: status line not in the pulled document")
        client.status_id = "any"
    client.set_value(client.find(title="Speed"), "value", "unthrottled")
    frames0, t0 = client.frames, time.monotonic()
    first = True
    while time.monotonic() < end and not client.closed:
        if not first:
            client.click(reset_id)
        first = False
        client.status = ""
        client.click(run_id)
        client.stats["fits_started"] += 1
        await client.wait_for(lambda: "done" in client.status or time.monotonic() >= end,
                              max(0.0, end - time.monotonic()))
    client.stats["fitter_frames_per_s"].append((client.frames - frames0)
                                               / max(time.monotonic() - t0, 1e-9))


async def open_session(base: str, query: dict, args, stats: dict, t_start: float,
                       into: str = "") -> Client | None:
    """Open one session as a browser does and wait for its page; records, under the keys
    prefixed ``into``, ``open_s`` (``t_start`` -> its document) and ``page_s`` (-> its page's
    frame, which the app sends once the first document has been drawn)."""
    client = Client(base, query, stats, args.timeout)
    try:
        await client.open()
    except Exception as exc:  # noqa: BLE001
        stats["errors"] += 1
        stats["error_kinds"].append(f"open: {type(exc).__name__}: {exc}"[:200])
        return None
    stats[into + "open_s"].append(time.monotonic() - t_start)
    if await client.wait_for(lambda: client.page_shown, args.timeout):
        stats[into + "page_s"].append(time.monotonic() - t_start)
    elif not client.closed:
        stats["errors"] += 1
        seen = sorted({c for m in client.models.values()
                       for c in (m.get("attributes", {}).get("css_classes") or ())
                       if str(c).startswith("explorer-page-")})
        stats["error_kinds"].append(f"open: no page {client.page!r} within {args.timeout:g} s "
                                    f"({len(client.models)} models; pages seen {seen})")
    return client


async def load(base: str, args, stats: dict, server_cpu=None) -> dict:
    """Open ``args.sessions`` at once, then let them change data / fit for ``args.duration``
    s; with ``args.burst``, that many more sessions open at once a third of the way in.
    ``server_cpu`` (a callable: the server's CPU seconds so far) measures the opening."""
    n_fit = args.fitters if args.fitters is not None else args.sessions // 6
    pages = args.pages.split(",")
    clients: list[Client] = []
    cpu0 = server_cpu() if server_cpu else 0.0
    t_start = time.monotonic()

    fitter_ids = {k * args.sessions // n_fit for k in range(n_fit)} if n_fit else set()

    async def open_one(i: int) -> Client | None:
        fitter = i in fitter_ids
        if fitter:
            query = {"page": FIT_PAGE, "data": "outlier_tasks", **args.fit_query}
        else:
            query = {"page": pages[i % len(pages)]}
        client = await open_session(base, query, args, stats, t_start)
        if client is not None:
            client.fitter = fitter
        return client

    # every session starts at once (a class opening the link together), a fitter spread among them
    order = list(range(args.sessions))
    opened = await asyncio.gather(*(open_one(i) for i in order))
    clients = [c for c in opened if c is not None]
    stats["open_all_s"] = max(stats["open_s"], default=float("nan"))
    stats["page_all_s"] = max(stats["page_s"], default=float("nan"))
    if server_cpu:
        stats["open_cpu_s"] = server_cpu() - cpu0
    load_t0 = time.monotonic()
    end = load_t0 + args.duration
    tasks = []
    for i, client in enumerate(clients):
        if client.fitter:
            tasks.append(run_fitter(client, end))
        else:
            tasks.append(run_changer(client, end, args.interval, 1000 * (i + 1)))
    burst: list[Client] = []
    if getattr(args, "burst", 0):
        async def open_burst() -> None:
            await asyncio.sleep(args.duration / 3)
            t_burst = time.monotonic()
            stats["burst_window"] = [t_burst, t_burst]
            opened = await asyncio.gather(*(
                open_session(base, {"page": pages[i % len(pages)]}, args, stats, t_burst,
                             into="burst_") for i in range(args.burst)))
            burst.extend(c for c in opened if c is not None)
            stats["burst_window"][1] = time.monotonic()

        tasks.append(open_burst())
    await asyncio.gather(*tasks)
    stats["load_s"] = time.monotonic() - load_t0
    for client in [*clients, *burst]:
        client.close()
    return stats


def new_stats() -> dict:
    return {"errors": 0, "timeouts": 0, "round_trips": [], "round_trips_at": [],
            "error_kinds": [], "round_trips_by_page": {}, "open_s": [], "page_s": [],
            "burst_open_s": [], "burst_page_s": [], "fitter_frames_per_s": [],
            "fits_started": 0, "notes": []}


def _p95(values) -> float | None:
    return round(float(np.percentile(values, 95)), 2) if len(values) else None


async def wait_until_idle(proc, limit_s: float, cores: float = 0.05) -> float:
    """Wait until the server uses under ``cores`` of CPU over two seconds in a row; returns
    the seconds waited (``limit_s`` at most)."""
    start, calm = time.monotonic(), 0
    while time.monotonic() - start < limit_s and calm < 2:
        before = server_cpu_s(proc)
        await asyncio.sleep(1.0)
        calm = calm + 1 if server_cpu_s(proc) - before < cores else 0
    return time.monotonic() - start


async def sample_memory(proc, out: list, stop: asyncio.Event) -> None:
    while not stop.is_set():
        out.append(server_rss_mb(proc))
        try:
            await asyncio.wait_for(stop.wait(), 0.5)
        except asyncio.TimeoutError:
            pass


async def main_async(args) -> dict:
    # tornado's default AsyncHTTPClient queues past 10 requests: a class opens all at once
    AsyncHTTPClient.configure(None, max_clients=10_000)
    proc, base, log_name = start_server(args.num_procs, args.profile)
    try:
        # warm-up: a short load of its own (every page, changes and fits, sessions enough to
        # reach every process), so "before" is a server that has served each path once:
        # imports, compiled kernels, thread pools and allocator arenas are one-time costs,
        # and "after" then shows what the sessions themselves leave behind
        if args.warm_up > 0:
            warm_args = argparse.Namespace(**{**vars(args), "sessions": 6 * args.num_procs,
                                              "fitters": 2 * args.num_procs,
                                              "duration": args.warm_up})
            await load(base, warm_args, new_stats())
        # the same wait as after the load: closed sessions are dropped after their lifetime
        await asyncio.sleep(args.after if args.warm_up > 0 else args.settle)
        # the server warms its compiled kernels up at start (every process, off the event
        # loop): "before" is taken once that is done, or the warm-up's memory counts as load
        quiet_s = await wait_until_idle(proc, limit_s=args.quiet_limit)
        memory_before = server_rss_mb(proc)
        stats = new_stats()
        samples: list[float] = []
        stop = asyncio.Event()
        sampler = asyncio.get_running_loop().create_task(sample_memory(proc, samples, stop))
        me = psutil.Process()
        cpu_me0, cpu_srv0, wall0 = sum(me.cpu_times()[:2]), server_cpu_s(proc), time.monotonic()
        await load(base, args, stats, server_cpu=lambda: server_cpu_s(proc))
        wall = time.monotonic() - wall0
        cpu_me = sum(me.cpu_times()[:2]) - cpu_me0
        cpu_srv = server_cpu_s(proc) - cpu_srv0
        stop.set()
        await sampler
        await asyncio.sleep(args.after)
        memory_after = server_rss_mb(proc)
        # further rounds on the same server tell a leak (memory after grows every round)
        # from memory the allocator keeps for reuse (it levels off)
        after_by_round = [memory_after]
        for _ in range(args.rounds - 1):
            await load(base, args, {**new_stats(), "errors": stats["errors"],
                                    "timeouts": stats["timeouts"]})
            await asyncio.sleep(args.after)
            after_by_round.append(server_rss_mb(proc))
    finally:
        if args.profile:
            # py-spy writes its output when the profiled program exits on SIGINT
            for p in server_processes(proc)[1:]:
                try:
                    p.send_signal(2)
                except psutil.NoSuchProcess:
                    pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.send_signal(2)   # py-spy itself: stop recording and write the file
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
        else:
            # the forked workers (--num-procs) first: terminating the parent alone left
            # them serving, holding their memory and CPU, after the benchmark had ended
            workers = server_processes(proc)[1:]
            for p in workers:
                try:
                    p.terminate()
                except psutil.NoSuchProcess:
                    pass
            psutil.wait_procs(workers, timeout=15)
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
    trips = stats["round_trips"]
    n_changes = len(trips) + stats["timeouts"]
    result = {
        "client": "raw Bokeh-protocol websocket clients (one asyncio process)",
        "sessions": args.sessions,
        "num_procs": args.num_procs,
        "fitters": args.fitters if args.fitters is not None else args.sessions // 6,
        "duration_s": args.duration,
        "interval_s": args.interval,
        "timeout_s": args.timeout,
        "sessions_opened": len(stats["open_s"]),
        "open_all_s": round(stats["open_all_s"], 2),
        "open_p50_s": round(statistics.median(stats["open_s"]), 2) if stats["open_s"] else None,
        "open_p95_s": _p95(stats["open_s"]),
        "page_all_s": round(stats["page_all_s"], 2),
        "page_p95_s": _p95(stats["page_s"]),
        "server_cpu_s_per_open": round(stats["open_cpu_s"] / max(len(stats["open_s"]), 1), 3),
        "changes": n_changes,
        "changes_per_s": round(len(trips) / max(stats["load_s"], 1e-9), 2),
        "p50_s": round(float(np.percentile(trips, 50)), 3) if trips else None,
        "p95_s": round(float(np.percentile(trips, 95)), 3) if trips else None,
        "max_s": round(max(trips), 3) if trips else None,
        "p95_s_by_page": {page: round(float(np.percentile(t, 95)), 3)
                          for page, t in stats["round_trips_by_page"].items()},
        "errors": stats["errors"],
        "timeouts": stats["timeouts"],
        "timeout_ratio": round(stats["timeouts"] / n_changes, 3) if n_changes else None,
        "fitter_patches_per_s": [round(x, 1) for x in stats["fitter_frames_per_s"]],
        "fits_started": stats["fits_started"],
        "memory_before_mb": round(memory_before, 1),
        "server_warm_up_wait_s": round(quiet_s, 1),
        "memory_peak_mb": round(max(samples), 1) if samples else None,
        "memory_after_mb": round(memory_after, 1),
        "memory_after_ratio": round(memory_after / memory_before, 3),
        "memory_after_by_round_mb": [round(m, 1) for m in after_by_round],
        **burst_results(args, stats),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "server_cpu_cores": round(cpu_srv / wall, 2),
        "client_cpu_cores": round(cpu_me / wall, 2),
        "client_cpu_s_per_change": round(cpu_me / max(n_changes, 1), 4),
        "error_kinds": sorted(set(stats["error_kinds"]))[:10],
        "notes": sorted(set(stats["notes"])),
        "server_log": log_name,
    }
    if args.profile:
        result["profile"] = args.profile
    return result


def start_class_server(num_procs: int, db_path: str):
    """``python -m explorer serve --class --class-db DB`` on a free port: (process, base URL,
    log file, class code, teacher key) once it serves ``/explorer``."""
    import urllib.request
    from urllib.parse import parse_qs, urlparse

    port = free_port()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "explorer", "serve", "--class", "--class-db", db_path,
           "--num-procs", str(num_procs), "--port", str(port), "--address", "127.0.0.1"]
    log_path = Path(f"/tmp/bench_load_class_{port}.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    code = key = None
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"explorer serve exited ({proc.returncode}); see {log_path}")
        if key is None:
            match = re.search(r"teacher's link: (\S+)", log_path.read_text(errors="replace"))
            if match:
                query = parse_qs(urlparse(match.group(1)).query)
                code, key = query["class"][0], query["key"][0]
        if key is not None:
            try:
                with urllib.request.urlopen(base + "/explorer", timeout=30) as response:
                    if response.status == 200:
                        return proc, base, str(log_path), code, key
            except OSError:
                pass
        time.sleep(0.3)
    stop_server(proc)
    raise RuntimeError(f"explorer serve --class did not start within 180 s; see {log_path}")


def stop_server(proc) -> None:
    """The parent first (tornado's fork_processes restarts a worker killed by a signal: a
    worker stopped first came back, orphaned, once the parent had gone), then its workers."""
    workers = server_processes(proc)[1:]
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for p in workers:
        try:
            p.terminate()
        except psutil.NoSuchProcess:
            pass
    for p in psutil.wait_procs(workers, timeout=15)[1]:
        p.kill()


def class_load(url: str, code: str, key: str, n_students: int, timeout: float) -> dict:
    """``n_students`` threads lock a guess at once through the store; the teacher's count is
    polled until it reads ``n_students`` (see the module docstring)."""
    import threading

    from explorer.classroom import ClassStore, Guess

    errors: list[str] = []
    with ClassStore(url) as teacher:
        state = teacher.class_state(code)
        if state is None:
            raise RuntimeError(f"class {code} is not in the store {url}")
        m = state.n_tasks
        rng = np.random.default_rng(0)
        guesses = []
        for _ in range(n_students):
            upper = np.triu(rng.choice([-1.0, 0.0, 1.0, np.nan], size=(m, m)), 1)
            relation = upper + upper.T + np.eye(m)
            guesses.append(Guess(relation))
        barrier = threading.Barrier(n_students + 1)
        started, done = [0.0] * n_students, [0.0] * n_students
        # one store (one connection pool) a student: thirty browsers' requests, not one pool
        stores = [ClassStore(url) for _ in range(n_students)]
        for store in stores:   # connected, as a serving process's store is
            store.class_state(code)

        def student(i: int) -> None:
            barrier.wait()
            started[i] = time.monotonic()
            try:
                stores[i].lock_guess(code, f"student-{i:03d}", guesses[i],
                                     nickname=f"student {i}")
            except Exception as exc:  # noqa: BLE001
                errors.append(f"lock: {type(exc).__name__}: {exc}"[:200])
            done[i] = time.monotonic()

        threads = [threading.Thread(target=student, args=(i,)) for i in range(n_students)]
        for thread in threads:
            thread.start()
        barrier.wait()
        for thread in threads:
            thread.join()
        last_lock = max(done)
        count, count_s = -1, None
        while time.monotonic() - last_lock < timeout:
            count = teacher.n_locked(code, key)
            if count >= n_students:
                count_s = time.monotonic() - last_lock
                break
            time.sleep(0.01)
        if count_s is None:
            errors.append(f"the teacher's count read {count}, not {n_students}, "
                          f"{timeout:g} s after the last lock")
        stored = len(teacher.guesses(code, key))
        for store in stores:
            store.close()
    return {"class_stored": stored,
            "class_lock_spread_s": round(last_lock - min(started), 3),
            "class_lock_max_s": round(max(d - s for s, d in zip(started, done, strict=True)), 3),
            "class_teacher_count_s": None if count_s is None else round(count_s, 3),
            "errors": len(errors), "error_kinds": sorted(set(errors))[:10],
            "_last_lock": last_lock}


async def open_teacher(base: str, code: str, key: str, args, stats: dict):
    """The teacher's Class page in a session over the websocket: ``(client, seen)``, where
    ``seen`` gets the time the page first said "N locked" (N = ``args.class_students``);
    ``client`` is None when the session could not be opened (counted in ``stats``)."""
    n = args.class_students
    seen: list[float] = []
    teacher = await open_session(base, {"page": "class", "class": code, "key": key}, args,
                                 stats, time.monotonic())
    if teacher is not None:
        teacher.index_all = True

        def on_text(text: str) -> None:
            # the pane's HTML arrives escaped: "&lt;b&gt;30 locked&lt;/b&gt;"
            if not seen and re.search(rf"(?<![\d.]){n} locked", text):
                seen.append(time.monotonic())

        teacher.on_text = on_text
    return teacher, seen


async def class_with_teacher_page(base: str, url: str, code: str, key: str, args) -> dict:
    """:func:`class_load` while the teacher's Class page is open in a session over the
    websocket: ``class_teacher_page_count_s`` (the last lock committed -> the page's text
    says N locked; the page asks the store every ``POLL_S`` seconds)."""
    AsyncHTTPClient.configure(None, max_clients=10_000)
    n = args.class_students
    stats = new_stats()
    teacher, seen = await open_teacher(base, code, key, args, stats)
    result = await asyncio.to_thread(class_load, url, code, key, n, args.timeout)
    last_lock = result.pop("_last_lock")
    if teacher is not None:
        await teacher.wait_for(lambda: bool(seen), args.timeout)
        teacher.close()
    page_s = round(seen[0] - last_lock, 3) if seen else None
    if teacher is not None and page_s is None:
        stats["errors"] += 1
        stats["error_kinds"].append(f"the teacher's page never said {n} locked")
    result["class_teacher_page_count_s"] = page_s
    result["errors"] += stats["errors"]
    result["error_kinds"] = sorted(set(result["error_kinds"] + stats["error_kinds"]))[:10]
    return result


LOCKED = re.compile(r"Locked(&lt;/b&gt;|</b>)? at \d\d:\d\d:\d\d")


async def open_student(base: str, code: str, args, stats: dict) -> Client | None:
    """A student's session on the class's link, ready to lock: its guess grid's selection
    and its "Lock my guess" button are known."""
    client = await open_session(base, {"class": code}, args, stats, time.monotonic())
    if client is None:
        return None
    client.index_all = True
    client.locked_at = None

    def seen(content) -> None:
        if client.locked_at is None and LOCKED.search(json.dumps(content)):
            client.locked_at = time.monotonic()

    client.on_patch = seen

    def ready() -> bool:
        try:
            client.lock_id = client.find(label="Lock my guess")
            source = next(mid for mid, m in client.models.items()
                          if "symbol" in str(m.get("attributes", {}).get("data", ""))
                          and m.get("attributes", {}).get("selected"))
            client.selection_id = client.models[source]["attributes"]["selected"]["id"]
        except (LookupError, StopIteration, KeyError, TypeError):
            return False
        return True

    if not await client.wait_for(ready, args.timeout):
        stats["errors"] += 1
        stats["error_kinds"].append("student: no guess grid or Lock button within "
                                    f"{args.timeout:g} s")
        client.close()
        return None
    return client


async def class_through_sessions(base: str, url: str, code: str, key: str, args) -> dict:
    """``args.class_students`` students' sessions on the class's link (as browsers open it,
    all at once) each click a few pairs of their guess grid, then all click "Lock my guess"
    within the same second; each lock counts once its page says "Locked at" (the store has
    committed it before). Meanwhile the teacher's Class page is open in a session and the
    store's count is read with the teacher's key."""
    from explorer.classroom import ClassStore

    AsyncHTTPClient.configure(None, max_clients=10_000)
    n = args.class_students
    stats = new_stats()
    teacher, seen = await open_teacher(base, code, key, args, stats)
    opened_at = time.monotonic()
    students = [c for c in await asyncio.gather(*(open_student(base, code, args, stats)
                                                  for _ in range(n))) if c is not None]
    opened_s = time.monotonic() - opened_at
    rng = random.Random(0)
    with ClassStore(url) as store:
        m = store.class_state(code).n_tasks
    for client in students:   # a few pairs each, as students click (one cell once each)
        pairs = rng.sample([(i, j) for i in range(m) for j in range(i + 1, m)], rng.randint(1, 4))
        for i, j in pairs:
            client.set_value(client.selection_id, "indices", [i * m + j])
            client.set_value(client.selection_id, "indices", [])
    await asyncio.sleep(1.0)   # the clicks answered (the server cycles each pair)
    clicked = time.monotonic()
    for client in students:   # all within the same second
        client.click(client.lock_id)
    await asyncio.gather(*(c.wait_for(lambda c=c: c.locked_at is not None, args.timeout)
                           for c in students))
    locked = [c.locked_at for c in students if c.locked_at is not None]
    errors: list[str] = []   # besides the sessions' own (stats)
    if len(locked) < n:
        errors.append(f"{n - len(locked)} of {n} students' pages never said locked")
    last_lock = max(locked) if locked else time.monotonic()
    count_s = None
    with ClassStore(url) as store:
        while time.monotonic() - last_lock < args.timeout:
            if store.n_locked(code, key) >= n:
                count_s = time.monotonic() - last_lock
                break
            await asyncio.sleep(0.01)
        stored = len(store.guesses(code, key))
    if count_s is None:
        errors.append(f"the store's count never read {n}")
    reveal_s: list[float] = []
    if teacher is not None:
        await teacher.wait_for(lambda: bool(seen), args.timeout)
        # the reveal: the teacher's button, then each student's page shows the guess
        # scored against the truth (a student's session checks the store every second)
        for client in students:
            client.revealed_at = None

            def revealed(content, client=client) -> None:
                if client.revealed_at is None and "against the truth" in json.dumps(content):
                    client.revealed_at = time.monotonic()

            client.on_patch = revealed
        try:
            button = teacher.find(label="Reveal to the class")
        except LookupError:
            errors.append("the teacher's page has no Reveal button")
        else:
            clicked_reveal = time.monotonic()
            teacher.click(button)
            await asyncio.gather(*(c.wait_for(lambda c=c: c.revealed_at is not None,
                                              args.timeout) for c in students))
            reveal_s = [c.revealed_at - clicked_reveal for c in students
                        if c.revealed_at is not None]
            if len(reveal_s) < len(students):
                errors.append(f"{len(students) - len(reveal_s)} students' pages never "
                              "showed the reveal")
        teacher.close()
    page_s = round(seen[0] - last_lock, 3) if seen else None
    if teacher is not None and page_s is None:
        errors.append(f"the teacher's page never said {n} locked")
    for client in students:
        client.close()
    return {"class_stored": stored,
            "class_reveal_p50_s": round(statistics.median(reveal_s), 2) if reveal_s else None,
            "class_reveal_max_s": round(max(reveal_s), 2) if reveal_s else None,
            "class_pages_said_locked": len(locked),
            "class_sessions_opened_s": round(opened_s, 2),
            "class_lock_spread_s": round(last_lock - clicked, 3) if locked else None,
            "class_lock_p50_s": round(statistics.median(t - clicked for t in locked), 3)
            if locked else None,
            "class_teacher_count_s": None if count_s is None else round(max(count_s, 0.0), 3),
            "class_teacher_page_count_s": page_s,
            "errors": stats["errors"] + len(errors),
            "error_kinds": sorted(set(errors + stats["error_kinds"]))[:10]}


def class_main(args) -> dict:
    """``--class N``: a class of N students on a real ``explorer serve --class``."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench_class_") as folder:
        db_path = str(Path(folder) / "classes.sqlite")
        proc, base, log_name, code, key = start_class_server(args.num_procs, db_path)
        try:
            measure = (class_through_sessions if args.class_client == "sessions"
                       else class_with_teacher_page)
            result = asyncio.run(measure(base, db_path, code, key, args))
        finally:
            stop_server(proc)
    return {"class_students": args.class_students, "class_client": args.class_client,
            "num_procs": args.num_procs, "class_db": "sqlite (temporary file)",
            **result, "load_average": [round(x, 2) for x in os.getloadavg()],
            "server_log": log_name}


def burst_results(args, stats: dict) -> dict:
    """The burst's sessions opening, and the open sessions' changes sent meanwhile."""
    if not args.burst or "burst_window" not in stats:
        return {}
    start, stop = stats["burst_window"]
    during = [took for sent, took in stats["round_trips_at"] if start <= sent <= stop]
    return {"burst": args.burst,
            "burst_open_all_s": round(max(stats["burst_open_s"], default=float("nan")), 2),
            "burst_open_p95_s": _p95(stats["burst_open_s"]),
            "burst_page_all_s": round(max(stats["burst_page_s"], default=float("nan")), 2),
            "burst_page_p95_s": _p95(stats["burst_page_s"]),
            "changes_during_burst": len(during),
            "p95_during_burst_s": _p95(during),
            "max_during_burst_s": round(max(during), 2) if during else None}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--num-procs", type=int, default=1)
    parser.add_argument("--duration", type=float, default=120.0,
                        help="seconds each session keeps changing (default 120)")
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--fitters", type=int, default=None,
                        help="sessions running live fits (default sessions // 6)")
    parser.add_argument("--fit-data", default=FIT_DEFAULT,
                        help="query of the fitters' page, e.g. add '&d.n_tasks=100&"
                             "d.n_features=500&d.n_samples_per_task=40' for large fits")
    parser.add_argument("--pages", default="tasks,shared_vs_separate,trees,outliers",
                        help="pages the changers sit on, cycled")
    parser.add_argument("--after", type=float, default=60.0,
                        help="seconds after every client closed before memory_after (default 60)")
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--quiet-limit", type=float, default=180.0,
                        help="longest wait (s) for the server to go idle before 'memory "
                             "before' (its kernels' warm-up; default 180; 0: no wait)")
    parser.add_argument("--warm-up", type=float, default=20.0,
                        help="s of a warm-up load (6 sessions a process, 2 fitting) before "
                             "'memory before' (0: one default session instead: none)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="load rounds on the same server (memory after each)")
    parser.add_argument("--burst", type=int, default=0,
                        help="that many more sessions open at once a third into the load")
    parser.add_argument("--profile", default=None, help="py-spy output file (see docstring)")
    parser.add_argument("--handicap", type=int, default=0, metavar="N",
                        help="N CPU-bound processes (Python busy loops) running beside the "
                             "server and the clients for the whole measurement (default 0)")
    parser.add_argument("--class", dest="class_students", type=int, default=0, metavar="N",
                        help="measure a class instead: N students lock a guess at once on "
                             "'explorer serve --class' (see the docstring)")
    parser.add_argument("--class-client", choices=("sessions", "store"), default="sessions",
                        help="how the students lock: their sessions' Lock button (default) "
                             "or ClassStore.lock_guess directly")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    args.fit_query = dict(p.split("=", 1) for p in args.fit_data.split("&") if "=" in p)
    from _reference import Handicap, header, into_json, machine_facts

    # the machine as it is, before the handicap starts (benchmarks/_reference.py)
    facts = machine_facts()
    if not args.json:
        print(header(facts), flush=True)
    handicap = Handicap(args.handicap)
    try:
        handicap.start()
        if args.class_students > 0:
            result = class_main(args)
        else:
            result = asyncio.run(main_async(args))
    finally:
        handicap.stop()
    result = into_json({**result, **handicap.facts()}, facts)
    if args.json:
        print(json.dumps(result))
        return
    if args.class_students > 0:
        print(f"a class of {result['class_students']} on explorer serve --class --num-procs "
              f"{result['num_procs']} (students lock through the {result['class_client']})")
        print(f"  stored {result['class_stored']} guesses; locks spread over "
              f"{result['class_lock_spread_s']} s (slowest "
              f"{result.get('class_lock_max_s', result['class_lock_spread_s'])} s); "
              f"the teacher's count read {result['class_students']} "
              f"{result['class_teacher_count_s']} s after the last lock, the teacher's page "
              f"after {result['class_teacher_page_count_s']} s; {result['errors']} errors "
              f"{result['error_kinds']}")
        return
    if args.handicap:
        print(f"handicap: {args.handicap} CPU-bound process(es) beside the server and the "
              f"clients (they used {result['handicap_cores']} cores)")
    print(f"{result['sessions']} sessions ({result['fitters']} running live fits), "
          f"--num-procs {result['num_procs']}, a change every {args.interval:g} s for "
          f"{args.duration:g} s; clients: {result['client']}")
    print(f"  every document after {result['open_all_s']} s (p50 {result['open_p50_s']} s, "
          f"p95 {result['open_p95_s']} s), every page after {result['page_all_s']} s (p95 "
          f"{result['page_p95_s']} s); server CPU {result['server_cpu_s_per_open']} s a session")
    if args.burst:
        print(f"  burst of {args.burst}: documents after {result['burst_open_all_s']} s, pages "
              f"after {result['burst_page_all_s']} s; open sessions' changes meanwhile: p95 "
              f"{result['p95_during_burst_s']} s over {result['changes_during_burst']}")
    print(f"  change round trip: p50 {result['p50_s']} s, p95 {result['p95_s']} s, max "
          f"{result['max_s']} s over {result['changes']} changes; {result['timeouts']} timeouts "
          f"(> {args.timeout:g} s), {result['errors']} errors {result['error_kinds']}")
    print(f"  fitters' patches/s: {result['fitter_patches_per_s']}")
    print(f"  server RSS: before {result['memory_before_mb']} MiB, peak "
          f"{result['memory_peak_mb']} MiB, {args.after:g} s after close "
          f"{result['memory_after_mb']} MiB (x{result['memory_after_ratio']})")
    print(f"  CPU during the load: server {result['server_cpu_cores']} cores, clients "
          f"{result['client_cpu_cores']} cores ({result['client_cpu_s_per_change']} s a change)")


if __name__ == "__main__":
    main()
