"""What a benchmark's figures need beside them to travel (issue 40, "Figures that travel").

A figure measured on one machine says little on another unless it comes with how fast that
machine was and how busy it was at the time. Every benchmark records:

* :func:`cpu_reference`: seconds of a fixed, deterministic workload (a pure-Python loop and a
  NumPy matmul and sort on one BLAS thread), the best of 3. Twice the seconds is a machine (or
  a moment) half as fast for this kind of work: divide a figure by the ratio of the two
  references before comparing it with the README's.
* :func:`machine_facts`: that reference, the load average, the CPU count and model, the
  versions of Python, NumPy, Panel and Bokeh, and the date. :func:`into_json` puts them into a
  benchmark's JSON object (``cpu_reference_s`` at the top level, the rest under
  ``"machine"``); :func:`header` is the one line a benchmark without ``--json`` prints first.

:class:`Handicap` runs N CPU-bound processes beside a benchmark (``--handicap N`` of
bench_app and bench_load): a teacher's laptop with a browser, a video call and an antivirus
is not a quiet machine.

Imported as ``from _reference import ...``: a benchmark run as ``python benchmarks/x.py`` has
``benchmarks/`` first on ``sys.path``.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
import time
from importlib import metadata

__all__ = ["Handicap", "cpu_reference", "header", "into_json", "machine_facts"]

#: The pure-Python part: iterations of an integer loop with a dict (interpreter speed).
PY_ITERATIONS = 4_000_000
#: The NumPy part: ``MATMUL_REPEATS`` products of two fixed N x N matrices, then a sort of
#: ``SORT_SIZE`` fixed floats (BLAS on one thread, memory bandwidth).
MATMUL_N, MATMUL_REPEATS, SORT_SIZE = 400, 60, 4_000_000


def _python_part() -> int:
    """A fixed integer loop (an LCG) counting residues in a dict; returns a checksum."""
    counts: dict[int, int] = {}
    x = 12345
    for _ in range(PY_ITERATIONS):
        x = (1103515245 * x + 12345) & 0x7FFFFFFF
        key = x % 97
        counts[key] = counts.get(key, 0) + 1
    return sum(k * v for k, v in counts.items())


def _numpy_part(a, b, values) -> float:
    """Fixed matrix products and a sort; returns a checksum."""
    import numpy as np

    c = a
    for _ in range(MATMUL_REPEATS):
        c = (c @ b) / MATMUL_N
    return float(c[0, 0]) + float(np.sort(values)[SORT_SIZE // 2])


def _reference_parts(repeats: int = 3) -> dict:
    """``{"total": best total, "python": ..., "numpy": ...}`` in seconds: the run of ``repeats``
    with the smallest total (its two parts beside it)."""
    import numpy as np

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((MATMUL_N, MATMUL_N)), rng.standard_normal((MATMUL_N, MATMUL_N))
    values = rng.standard_normal(SORT_SIZE)
    try:   # one BLAS thread: the reference measures one core, however many the BLAS would use
        from threadpoolctl import threadpool_limits
        limits = threadpool_limits(1)
    except ImportError:  # pragma: no cover -- scikit-learn brings threadpoolctl
        limits = None
    best = None
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            _python_part()
            t1 = time.perf_counter()
            _numpy_part(a, b, values)
            t2 = time.perf_counter()
            run = {"total": t2 - t0, "python": t1 - t0, "numpy": t2 - t1}
            if best is None or run["total"] < best["total"]:
                best = run
    finally:
        if limits is not None:
            limits.restore_original_limits()
    return {key: round(value, 3) for key, value in best.items()}


def cpu_reference(repeats: int = 3) -> float:
    """Seconds of the fixed pure-Python and NumPy workload, the best of ``repeats``."""
    return _reference_parts(repeats)["total"]


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def machine_facts(repeats: int = 3) -> dict:
    """The CPU reference and the facts a figure needs beside it (see the module docstring).

    Takes the reference's time (about 3 x 0.5-1 s); the load average is read before it, so
    it is the machine's, not the reference's."""
    load = os.getloadavg()
    parts = _reference_parts(repeats)
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover -- not Linux
        usable = os.cpu_count()
    return {"cpu_reference_s": parts["total"],
            "cpu_reference_parts_s": {"python": parts["python"], "numpy": parts["numpy"]},
            "loadavg_1m": round(load[0], 2), "loadavg_5m": round(load[1], 2),
            "loadavg_15m": round(load[2], 2),
            "cpu_count": os.cpu_count(), "cpu_usable": usable, "cpu_model": _cpu_model(),
            "python": platform.python_version(), "numpy": _version("numpy"),
            "panel": _version("panel"), "bokeh": _version("bokeh"),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def into_json(result: dict, facts: dict) -> dict:
    """``result`` with ``cpu_reference_s`` first at its top level and the other facts under
    ``"machine"`` (a new dict; ``result`` is left as it is)."""
    rest = {k: v for k, v in facts.items() if k != "cpu_reference_s"}
    return {"cpu_reference_s": facts["cpu_reference_s"], "machine": rest, **result}


def header(facts: dict) -> str:
    """The facts on one line, for a benchmark's printed header."""
    parts = facts["cpu_reference_parts_s"]
    return (f"machine: CPU reference {facts['cpu_reference_s']:.3f} s (Python "
            f"{parts['python']:.3f} s + NumPy {parts['numpy']:.3f} s, best of 3); load average "
            f"{facts['loadavg_1m']} {facts['loadavg_5m']} {facts['loadavg_15m']}; "
            f"{facts['cpu_usable']} of {facts['cpu_count']} CPUs, {facts['cpu_model']}; "
            f"Python {facts['python']}, NumPy {facts['numpy']}, Panel {facts['panel']}, "
            f"Bokeh {facts['bokeh']}; {facts['date']}")


#: A CPU-bound process: a Python busy loop that ends by itself once its parent is gone (the
#: benchmark killed without its ``finally``), checking every ~10^6 iterations.
BUSY_LOOP = """
import os
parent = os.getppid()
while os.getppid() == parent:
    for _ in range(1_000_000):
        pass
"""


class Handicap:
    """``n`` CPU-bound processes beside a measurement: ``with Handicap(n) as h: ...``.

    Each is ``python -c BUSY_LOOP`` at the benchmark's own priority; :meth:`stop` (on leaving
    the block, also on an error or KeyboardInterrupt) terminates them, kills any that do not
    end within 5 s, and records the CPU they used (``cores``: CPU seconds over wall seconds,
    summed over the processes; ``n`` of them had a core each when it is close to ``n``)."""

    def __init__(self, n: int):
        if n < 0:
            raise ValueError(f"handicap must be >= 0; got {n}")
        self.n = int(n)
        self.procs: list[subprocess.Popen] = []
        self.started = self.cpu_s = self.wall_s = None

    def start(self) -> Handicap:
        self.started = time.monotonic()
        try:
            for _ in range(self.n):
                self.procs.append(subprocess.Popen([sys.executable, "-c", BUSY_LOOP],
                                                   stdin=subprocess.DEVNULL,
                                                   stdout=subprocess.DEVNULL))
        except BaseException:
            self.stop()   # the ones already started
            raise
        return self

    def _cpu(self) -> float:
        import psutil

        total = 0.0
        for proc in self.procs:
            try:
                times = psutil.Process(proc.pid).cpu_times()
                total += times.user + times.system
            except psutil.NoSuchProcess:
                pass
        return total

    def stop(self) -> None:
        if self.started is None or self.wall_s is not None:
            return
        self.wall_s = time.monotonic() - self.started
        try:
            self.cpu_s = self._cpu()
        except Exception:  # noqa: BLE001 -- the figures are a check; stopping comes first
            self.cpu_s = None
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)

    def facts(self) -> dict:
        """``{"handicap": n, "handicap_cores": CPU cores they used}`` (after :meth:`stop`)."""
        cores = (round(self.cpu_s / self.wall_s, 2)
                 if self.cpu_s is not None and self.wall_s else None)
        return {"handicap": self.n, "handicap_cores": cores if self.n else 0.0}

    def __enter__(self) -> Handicap:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
