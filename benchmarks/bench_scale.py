"""Peak memory and the largest problems: each fit in a fresh process, its memory read from the OS.

Prints two tables:

* peak memory above the data of L2,1 on a shared design (n=2000, d=5000, m=50, the
  MultiTaskLasso setting of ``bench_peers.py``): ``L21MTFL.fit_shared`` against scikit-learn,
  skglm and celer (target: at most 1.5x scikit-learn's);
* time and peak memory (the whole process, and above the data) of RobustMTFL and L21MTFL on
  per-task designs (m = 50 tasks of 200 rows, d up to 20,000; target: d = 20,000 within
  4 GB), of MT-DT on synthetic data with up to a million rows, of MT-KNN (hinge) on up to
  140,000 points (7 tasks, 16 features; target: within 60 s) and of TL-TF on up to 10,000
  tasks of 40 examples (target: within 60 s).

Each measurement runs in its own process: the kernels are loaded, the data built, then the
peak resident size is reset (``/proc/self/clear_refs``) and the fit timed; "above the data"
is the peak minus the resident size just before the fit (so it counts the solver's copies,
the BLAS buffers and numba's arrays alike, which ``tracemalloc`` would miss).

    python benchmarks/bench_scale.py [--quick] [--json]

``--quick`` stops the per-task designs at d = 10,000, MT-DT at 300,000 rows, MT-KNN at 70,000
points and TL-TF at 4,000 tasks. A measurement that runs past ``CHILD_TIMEOUT_S`` is reported
as such (the largest problem within a minute is what the targets ask).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

MB = 1 << 20
SHARED = (2000, 5000, 50)
PER_TASK_D = (5000, 10000, 20000)
TREE_N = (100_000, 300_000, 1_000_000)
KNN_N = (35_000, 70_000, 140_000)
TLTF_TASKS = (2_000, 4_000, 10_000)
CHILD_TIMEOUT_S = 600


def _status_kb(key: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{key} not in /proc/self/status")


def _shared_data(n, d, m, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, m)) * (rng.random(d) < 0.05)[:, None]
    Y = X @ W + rng.normal(size=(n, m))
    alpha = 0.1 * np.sqrt(np.sum((X.T @ Y) ** 2, axis=1)).max() / n
    return X, Y, alpha


def _per_task_data(m, d, n_per_task, seed=0):
    """m tasks of ``n_per_task`` rows, 5 % of the features shared; built task by task so
    the only large array is X itself."""
    rng = np.random.default_rng(seed)
    X = np.empty((m * n_per_task, d))
    y = np.empty(m * n_per_task)
    shared = rng.random(d) < 0.05
    for t in range(m):
        rows = slice(t * n_per_task, (t + 1) * n_per_task)
        X[rows] = rng.normal(size=(n_per_task, d))
        w = rng.normal(size=d) * shared
        y[rows] = X[rows] @ w + rng.normal(size=n_per_task)
    return X, y, np.repeat(np.arange(m), n_per_task)


def _tree_data(n, d=50, m=5, seed=0):
    from bench_mtdt import synthetic

    X, y, task, _ = synthetic(n=n, d=d, m=m, seed=seed)
    return X, y, task


def _knn_data(n, m=7, d=16, seed=0):
    """``bench_mtknn.py``'s letters-size setting with ``n`` points in all."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=d)
    X = rng.normal(size=(n, d))
    task = np.arange(n) % m
    coef = base[:, None] * np.where(np.arange(m) % 3 == 2, -1.0, 1.0) \
        + 0.5 * rng.normal(size=(d, m))
    f = np.einsum("ij,ji->i", X, coef[:, task])
    return X, (f > 0).astype(int), task


def _child(spec: dict) -> dict:
    """Run one measurement in this (fresh) process."""
    import warnings

    warnings.simplefilter("ignore")
    kind = spec["kind"]
    if kind == "shared":
        from explorer.solvers import warm_up
        warm_up()
        X, Y, alpha = _shared_data(*SHARED)
        n, d, m = SHARED
        peer = spec["estimator"]
        if peer == "explorer":
            from explorer.models import L21MTFL

            def fit():
                L21MTFL(lambda_rows=2 * alpha / m, normalize=False, fit_intercept=False,
                        tol=1e-6, max_iter=100000).fit_shared(X, Y)
        elif peer == "celer":
            from bench_peers import CelerMTL

            def fit():
                CelerMTL(alpha=alpha, tol=1e-6, max_iter=10000).fit(X, Y)
        else:
            if peer == "scikit-learn":
                from sklearn.linear_model import MultiTaskLasso
            else:
                from skglm import MultiTaskLasso

            def fit():
                MultiTaskLasso(alpha=alpha, fit_intercept=False, tol=1e-6,
                               max_iter=10000).fit(X, Y)
    elif kind == "per_task":
        from explorer.models import L21MTFL, RobustMTFL
        from explorer.solvers import warm_up
        warm_up()
        X, y, task = _per_task_data(50, spec["d"], 200)
        cls = {"RobustMTFL": RobustMTFL, "L21MTFL": L21MTFL}[spec["estimator"]]

        def fit():
            return cls(tol=1e-4, max_iter=10000).fit(X, y, task)
    elif kind == "knn":
        from explorer.models import MTKNN
        from explorer.solvers import warm_up
        warm_up()
        X, y, task = _knn_data(spec["n"])

        def fit():
            return MTKNN().fit(X, y, task)
    elif kind == "tltf":
        from explorer.data.synthetic import make_clustered_tasks
        from explorer.models import TLTF
        ds = make_clustered_tasks(n_tasks=spec["tasks"], n_clusters=3, n_features=5,
                                  n_samples_per_task=40, centred=False, random_state=0)
        TLTF(n_clusters=3, max_iter=2, random_state=0).fit(  # compiled kernels, off the clock
            ds.X[:400], ds.y[:400], ds.task[:400], task_features=ds.task_features[:10])

        def fit():
            return TLTF(n_clusters=3, random_state=0).fit(ds.X, ds.y, ds.task,
                                                          task_features=ds.task_features)
    else:
        from explorer.models import MTDecisionTree
        from explorer.solvers.tree_split import warm_up
        warm_up()
        X, y, task = _tree_data(spec["n"])

        def fit():
            return MTDecisionTree(criterion="ig_m", max_depth=spec.get("depth")).fit(X, y, task)
    if kind == "shared":  # imports and compilation paid on tiny data, outside the measure
        X_full, Y_full = X, Y
        X, Y = X_full[:20, :30].copy(), Y_full[:20].copy()
        fit()
        X, Y = X_full, Y_full
        del X_full, Y_full
    gc.collect()
    before = _status_kb("VmRSS")
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # reset the peak resident size to the current one
    start = time.perf_counter()
    est = fit()
    seconds = time.perf_counter() - start
    peak = _status_kb("VmHWM")
    extra = {}
    if est is not None and hasattr(est, "solver_"):
        extra = {"solver": est.solver_, "iterations": int(est.n_iter_),
                 "converged": bool(est.converged_)}
    elif est is not None and hasattr(est, "n_nodes_"):
        extra = {"nodes": int(est.n_nodes_)}
    elif est is not None and hasattr(est, "n_iter_"):
        extra = {"iterations": int(est.n_iter_)}
    return {"seconds": seconds, "peak_mb": peak * 1024 / MB,
            "above_data_mb": (peak - before) * 1024 / MB, "data_mb": before * 1024 / MB,
            **extra}


def measure(spec: dict) -> dict:
    """``_child(spec)`` in a fresh interpreter (its peak memory is its own)."""
    here = os.path.dirname(os.path.abspath(__file__))
    # a PYTHONPATH given by the caller comes first (to measure another checkout's code)
    path = [p for p in (os.environ.get("PYTHONPATH"), os.path.dirname(here), here) if p]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    try:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                               json.dumps(spec)], capture_output=True, text=True, env=env,
                              timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"error": f"not done within {CHILD_TIMEOUT_S} s"}
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["killed"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--only", choices=("shared", "per_task", "tree", "knn", "tltf"),
                        action="append", help="run only these tables")
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(json.loads(args.child))))
        return
    from _reference import header, into_json, machine_facts

    facts = machine_facts()   # the machine the figures were measured on (_reference.py)
    if not args.json:
        print(header(facts), flush=True)
    only = set(args.only or ("shared", "per_task", "tree", "knn", "tltf"))
    out = {"load_average_start": _load()}
    if "shared" in only:
        out["shared"] = {name: measure({"kind": "shared", "estimator": name})
                         for name in ("explorer", "scikit-learn", "skglm", "celer")}
    if "per_task" in only:
        out["per_task"] = [{"estimator": est, "d": d, **measure(
            {"kind": "per_task", "estimator": est, "d": d})}
            for d in (PER_TASK_D[:2] if args.quick else PER_TASK_D)
            for est in ("RobustMTFL", "L21MTFL")]
    if "tree" in only:
        out["tree"] = [{"n": n, "depth": depth, **measure({"kind": "tree", "n": n,
                                                          "depth": depth})}
                       for n in (TREE_N[:2] if args.quick else TREE_N) for depth in (None,)]
    if "knn" in only:
        out["knn"] = [{"n": n, **measure({"kind": "knn", "n": n})}
                      for n in (KNN_N[:2] if args.quick else KNN_N)]
    if "tltf" in only:
        out["tltf"] = [{"tasks": t, **measure({"kind": "tltf", "tasks": t})}
                       for t in (TLTF_TASKS[:2] if args.quick else TLTF_TASKS)]
    out["load_average_end"] = _load()
    if args.json:
        print(json.dumps(into_json(out, facts), indent=1))
        return
    print(f"load average {out['load_average_start']} (start), {out['load_average_end']} (end)")
    if "shared" in out:
        n, d, m = SHARED
        rows = out["shared"]
        sk = rows["scikit-learn"].get("above_data_mb", float("nan"))
        print(f"\nPeak memory above the data, L2,1 on a shared design n={n} d={d} m={m} "
              f"(X is {n * d * 8 / MB:.0f} MB):")
        for name, row in rows.items():
            if "error" in row:
                print(f"  {name:13s} failed: {row['error']}")
                continue
            print(f"  {name:13s} {row['above_data_mb']:7.0f} MB = "
                  f"{row['above_data_mb'] / sk:4.2f}x scikit-learn's   ({row['seconds']:.2f} s)")
    if "per_task" in out:
        print("\nPer-task designs, m=50 tasks x 200 rows (tol 1e-4): time, peak memory of the "
              "process / above the data")
        for row in out["per_task"]:
            head = f"  {row['estimator']:10s} d={row['d']:6d}"
            if "error" in row:
                print(f"{head}  failed: {row['error']}")
                continue
            print(f"{head}  {row['seconds']:7.1f} s  {row['peak_mb'] / 1024:5.2f} GB / "
                  f"{row['above_data_mb'] / 1024:5.2f} GB  ({row['solver']}, "
                  f"{row['iterations']} iterations, converged={row['converged']})")
    if "tree" in out:
        print("\nMT-DT (IG_M, unlimited depth), synthetic d=50, 5 tasks: time, peak memory of "
              "the process / above the data")
        for row in out["tree"]:
            head = f"  n={row['n']:8d}"
            if "error" in row:
                print(f"{head}  failed: {row['error']}")
                continue
            print(f"{head}  {row['seconds']:7.1f} s  {row['peak_mb'] / 1024:5.2f} GB / "
                  f"{row['above_data_mb'] / 1024:5.2f} GB  ({row['nodes']} nodes)")
    for key, what, size in (("knn", "MT-KNN (hinge, defaults), 7 tasks, d=16", "n"),
                            ("tltf", "TL-TF (defaults, H=3), 40 examples a task", "tasks")):
        if key not in out:
            continue
        print(f"\n{what}: time [target 60 s], peak memory of the process / above the data")
        for row in out[key]:
            head = f"  {size}={row[size]:7d}"
            if "error" in row:
                print(f"{head}  failed: {row['error']}")
                continue
            print(f"{head}  {row['seconds']:7.1f} s  {row['peak_mb'] / 1024:5.2f} GB / "
                  f"{row['above_data_mb'] / 1024:5.2f} GB"
                  + (f"  ({row['iterations']} iterations)" if "iterations" in row else ""))


if __name__ == "__main__":
    main()
