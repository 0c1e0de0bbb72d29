"""``benchmarks/bench_load.py`` drives a real ``panel serve`` over the Bokeh protocol: it finds
the app's widgets by what they show on the wire, so a widget that changes its model breaks it
(the data seed's ``Spinner`` became a ``Field`` whose label lives on a Panel data model, and
every changer failed at once without a test noticing). Two sessions for a few seconds, one
changing the data seed, one fitting: the figures are not judged here, only that the
benchmark's clients did their work without an error (no wait for the server's warm-up to end:
the memory is not judged here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_load_benchmark_changes_data_and_fits_on_a_real_server():
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_load.py"), "--sessions", "2",
         "--fitters", "1", "--duration", "8", "--interval", "1", "--after", "1",
         "--settle", "1", "--warm-up", "0", "--quiet-limit", "0", "--pages", "trees", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["errors"] == 0, result["error_kinds"]
    assert result["changes"] >= 3          # the changer's seeds answered (one a second)
    assert result["fits_started"] >= 1 and result["fitter_patches_per_s"][0] > 0
