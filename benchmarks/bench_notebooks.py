"""How long each teaching notebook takes, cell execution only (kernel start excluded), with
``EXPLORER_FAST=1`` as the test suite runs them, against its budget (a lesson in class
should not keep students waiting).

    python benchmarks/bench_notebooks.py [--json] [notebooks/00_tour.ipynb ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
#: seconds of cell execution a notebook may take with EXPLORER_FAST=1 (default 20 s)
BUDGETS = {"07_debug_your_estimator": 60.0}
DEFAULT_BUDGET = 20.0


def kernel_manager(directory: Path) -> AsyncKernelManager:
    """A throw-away kernelspec on this interpreter (as tests/test_notebooks.py uses)."""
    spec_dir = directory / "kernels" / "explorer-bench"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "explorer bench kernel", "language": "python",
        "env": {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}}))
    specs = KernelSpecManager(kernel_dirs=[str(directory / "kernels")])
    return AsyncKernelManager(kernel_name="explorer-bench", kernel_spec_manager=specs)


def run(path: Path) -> float:
    """Seconds of cell execution of the notebook at ``path``."""
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as tmp:
        client = NotebookClient(nb, km=kernel_manager(Path(tmp)), timeout=300,
                                resources={"metadata": {"path": str(path.parent)}})
        env = dict(os.environ, MPLBACKEND="Agg", EXPLORER_FAST="1")
        with client.setup_kernel(env=env, cleanup_kc=True):
            start = time.perf_counter()
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
            return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    from _reference import header, into_json, machine_facts

    facts = machine_facts()   # the machine the figures were measured on (_reference.py)
    if not args.json:
        print(header(facts), flush=True)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    results = {}
    for path in paths:
        seconds, budget = run(path), BUDGETS.get(path.stem, DEFAULT_BUDGET)
        results[path.stem] = {"seconds": round(seconds, 2), "budget_s": budget,
                              "within_budget": seconds <= budget}
        if not args.json:
            print(f"{path.stem:32s} {seconds:6.1f} s  (budget {budget:.0f} s, "
                  f"{seconds / budget:.2f}x of it)")
    load = os.getloadavg()[0]
    if args.json:
        print(json.dumps(into_json({"notebooks": results, "load_average_1min": round(load, 2)},
                                   facts)))
    else:
        print(f"load average (1 min): {load:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
