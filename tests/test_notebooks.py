"""Every teaching notebook runs top to bottom, is stored without outputs, and says something sane.

The kernel is this interpreter (``sys.executable``) through a throw-away kernelspec, so the test
uses the venv's ipykernel whether or not the venv is activated and whatever kernelspecs the user
has installed elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
# How long each notebook takes is measured by benchmarks/bench_notebooks.py (not here: a
# timed assertion fails on a busy machine, not on slow code).


def _kernel_manager(tmp_path: Path) -> AsyncKernelManager:
    spec_dir = tmp_path / "kernels" / "explorer-test"
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "explorer test kernel",
        "language": "python",
        # solvers are single-threaded by design; BLAS threads only fight each other
        "env": {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    specs = KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")])
    return AsyncKernelManager(kernel_name="explorer-test", kernel_spec_manager=specs)


def _text(nb) -> str:
    """All stream and text/plain output of the executed notebook, in order."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out["output_type"] == "stream":
                parts.append(out["text"])
            elif "data" in out and "text/plain" in out["data"]:
                parts.append(out["data"]["text/plain"])
    return "\n".join(parts)


#: Warnings of a library at the lowest versions the project declares, each with its reason;
#: only there (the installed versions print none). HoloViews' range code casts a list holding
#: NaN with NumPy 1.24, which warns "invalid value encountered in cast" (NumPy 1.25 on stays
#: silent; raising the floor is no way out: pandas 2.0 then warns of np.find_common_type).
KNOWN_AT_THE_FLOOR = [
    (lambda: np.lib.NumpyVersion(np.__version__) < "1.25.0",
     re.compile(r"holoviews/core/util\.py:\d+: RuntimeWarning: invalid value encountered in "
                r"cast\n\s*arr = np\.array\(values\)\n?")),
]


def _without_known(text: str) -> str:
    for applies, pattern in KNOWN_AT_THE_FLOOR:
        if applies():
            text = pattern.sub("", text)
    return text


def _warnings(nb) -> list[str]:
    """Every warning the executed notebook printed into its outputs (stderr streams that
    say "Warning" or "WARNING": Python's warnings, param's and Bokeh's log lines), with
    the cell it came from (less :data:`KNOWN_AT_THE_FLOOR`)."""
    return [f"cell {index}: {_without_known(out['text']).strip()}"
            for index, cell in enumerate(nb.cells) for out in cell.get("outputs", [])
            if out["output_type"] == "stream" and out["name"] == "stderr"
            and re.search(r"Warning|WARNING", _without_known(out["text"]))]


def _number(pattern: str, text: str) -> tuple[float, ...]:
    match = re.search(pattern, text)
    assert match, f"no line matching {pattern!r} in the notebook output:\n{text}"
    return tuple(float(g) for g in match.groups())


def _check_00(text: str) -> None:
    right, pairs = _number(r"RegularizedMTL similarity: signs right on (\d+) of (\d+)", text)
    assert right == pairs, "RegularizedMTL should read every related/negated pair's sign"
    right, pairs = _number(r"MT-KNN weights \(row / diagonal\): signs right on (\d+) of (\d+)",
                           text)
    assert right >= pairs - 2, "MT-KNN should read (almost) every related/negated pair's sign"
    stl, weak, strong = _number(r"negated task error: single-task ([\d.]+), coupling 0.01 "
                                r"([\d.]+), coupling 10 ([\d.]+)", text)
    assert strong > 0.5 > max(stl, weak), "forced sharing should wreck the negated task"
    assert re.search(r"^\| RegularizedMTL \|", text, flags=re.M), "the comparison table"


def _check_01(text: str) -> None:
    stl, shared = _number(r"related tasks, mean error: single-task ([\d.]+), "
                          r"lambda_deviation=0.1 ([\d.]+)",
                          text)
    assert shared < stl, "moderate sharing should help the related tasks"
    stl, pooled = _number(r"negated task error: single-task ([\d.]+), "
                          r"lambda_deviation=10 ([\d.]+)", text)
    assert pooled > 0.5 > stl, "strong sharing should wreck the negated task"


def _check_02(text: str) -> None:
    (f1,) = _number(r"outlier tasks: +precision [\d.]+ +recall [\d.]+ +F1 ([\d.]+)", text)
    assert f1 >= 0.8
    scores = {name: float(v) for name, v in
              re.findall(r"^(RobustMTFL|MultiTaskRidge|MultiTaskLassoL1|L21MTFL) +([\d.]+)$",
                         text, flags=re.M)}
    assert len(scores) == 4, text
    assert scores["RobustMTFL"] == min(scores.values()), scores


def _check_03(text: str) -> None:
    (mt,) = _number(r"MT-Adaboost \(IG_M\) +accuracy: ([\d.]+)", text)
    assert mt > 0.9


def _check_04(text: str) -> None:
    right, pairs = _number(r"signs right: (\d+) of (\d+) related/negated pairs", text)
    assert right == pairs
    ratios = [float(v) for v in re.findall(r"paper variant: eigenvalue ratio ([\d.e+-]+)", text)]
    assert ratios and max(ratios) < 1e-3, ratios                  # the rank-1 collapse
    plain, armijo, mm = _number(r"rising loss \(lam=0.003\): plain (\d+)/\d+, armijo (\d+)/\d+, "
                                r"mm (\d+)/\d+", text)
    assert plain > 0 and armijo == 0 and mm == 0
    mt, anyboost = _number(r"related tasks, mean test error: MTBoost ([\d.]+), AnyBoost ([\d.]+)",
                           text)
    assert mt < anyboost


def _check_05(text: str) -> None:
    r12, r21 = _number(r"related +ours .* ratios ([-\d.]+) ([-\d.]+)", text)
    assert min(r12, r21) > 0.6
    n12, n21 = _number(r"negated +ours .* ratios ([-\d.]+) ([-\d.]+)", text)
    assert (n12, n21) == (-r12, -r21)
    assert "sum of votes equals f(x): True" in text
CHECKS = {"00": _check_00, "01": _check_01, "02": _check_02, "03": _check_03, "04": _check_04,
          "05": _check_05}


def _check_06(text: str) -> None:
    tf, mc, sc = _number(r"zero-shot mean AP: TL-TF ([\d.]+), TL-MC ([\d.]+), TL-SC ([\d.]+)",
                         text)
    assert tf > max(mc, sc) + 0.1, "task features should route new tasks to their clusters"
    assert "bound never decreases: True" in text
    printed, corrected = _number(r"printed Eq. 4 in (\d+) of \d+ tasks, corrected in (\d+)",
                                 text)
    assert printed > 0 and corrected == 0


CHECKS["06"] = _check_06


def _check_07(text: str) -> None:
    sign, rank = _number(r"agreement: sign ([\d.]+) rank ([-\d.]+)", text)
    assert sign == 1.0 and rank > 0.8, "the toy ridge should read the related/negated pairs"
    before, after = _number(r"most hurt at coupling 1.0: T\d \w+ \(([\d.]+) -> ([\d.]+)\)",
                            text)
    assert after > 2 * before, "the strong pull between wrongly-similar tasks should hurt one"


CHECKS["07"] = _check_07


def test_notebooks_found():
    assert len(NOTEBOOKS) >= 3, NOTEBOOKS
    assert set(CHECKS) <= {p.name[:2] for p in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name} cell {i} has stored outputs"
            assert cell.execution_count is None, f"{path.name} cell {i} has an execution count"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, km=_kernel_manager(tmp_path), timeout=120,
                            allow_errors=False, resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    env = dict(os.environ, MPLBACKEND="Agg")
    env.setdefault("EXPLORER_FAST", "1")   # notebooks that read it run their small versions
    # we own the kernel manager: make nbclient stop the channels and the kernel afterwards
    with client.setup_kernel(env=env, cleanup_kc=True):
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)  # raises CellExecutionError on any error
    warned = _warnings(nb)
    assert not warned, f"{path.name} printed warnings into its outputs:\n" + "\n".join(warned)
    check = CHECKS.get(path.name[:2])
    if check is not None:
        check(_text(nb))


def _check_08(text: str) -> None:
    (guess,) = _number(r"your guess: sign agreement ([\d.]+)", text)
    assert guess < 1.0, "the lesson's guess misses the negated task"
    for name in ("RegularizedMTL", "MT-KNN"):
        (sign,) = _number(rf"(?m)^{re.escape(name)} +([\d.]+) ", text)
        assert sign == 1.0, f"{name} should read every related/negated pair's sign"
    assert re.search(r"You took T0-T2 as related \(they are negated\)", text)
    assert "The model got all 6 pairs' signs right." in text


CHECKS["08"] = _check_08
