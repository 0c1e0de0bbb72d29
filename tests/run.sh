#!/usr/bin/env bash
# Install everything the project needs from nothing and run the whole test suite, then the
# non-browser suite again at the lowest versions pyproject allows (LOWEST=0 skips that step).
# This is the README's test command and what CI runs (.ci/run calls this file).
set -euo pipefail
cd "$(dirname "$0")/.."

# Headless Chromium for the browser tests (Debian package; Playwright cannot download
# browsers here, the tests launch /usr/bin/chromium directly).
if ! command -v chromium >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test,notebook]"   # notebook: JupyterLab, for tests/ui/test_jupyterlab.py

# Solvers are single-threaded by design (see docs/DESIGN.md); BLAS threads only fight each other
# on a 2-core machine.
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

status=0
if [ "${LOWEST:-1}" != "0" ]; then
    # The declared range is a tested range: every direct dependency at its ">=" bound (pip
    # has no lowest resolution; .ci/lowest_pins.py turns the bounds into constraints). The
    # non-browser suite runs there, with tests/test_cli.py's real `serve` as the app smoke test.
    if [ ! -x .venv-lowest/bin/python ]; then
        "$PYTHON" -m venv .venv-lowest
    fi
    .venv/bin/python .ci/lowest_pins.py > .venv-lowest/constraints.txt
    .venv-lowest/bin/python -m pip install -q --upgrade pip
    .venv-lowest/bin/python -m pip install -q -c .venv-lowest/constraints.txt -e ".[test]"
    echo "== the non-browser suite at the lowest declared versions: $(tr '\n' ' ' < .venv-lowest/constraints.txt)"
    # NumPy 1.24's OpenBLAS (0.3.21) does not know CPUs newer than itself and falls back to
    # its generic "Prescott" kernels there; their round-off took MTBoost's stored reference
    # fit (tests/speedup_reference.py) down another path on a CPU of late 2026. It gets the
    # kernels a current OpenBLAS picks for the same CPU (OPENBLAS_CORETYPE, unless set).
    coretype=""
    if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then coretype=SkylakeX
    elif grep -qw avx2 /proc/cpuinfo 2>/dev/null; then coretype=Haswell; fi
    OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-$coretype}" \
        .venv-lowest/bin/python -m pytest -m "not ui" -n 2 -q -p no:cacheprovider || status=$?   # both cores
    echo "== the whole suite at the installed versions"
fi
# One test at a time: run beside the other half of the suite on the second core, the browser
# tests ran 1.5-2x slower and JupyterLab's live refit missed its 30 s wait once in two runs.
.venv/bin/python -m pytest "$@" || status=$?
exit "$status"
