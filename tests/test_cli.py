import os
import subprocess
import sys

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
    r = _run("generate", "task_family", "--param", "n_samples_per_task=20", "--seed", "3",
             "--out", str(out))
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
