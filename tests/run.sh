#!/usr/bin/env bash
# Builds everything and runs every test: host tests, GPU tests (skipped, with the reason, when there is
# no GPU), and the Python tests of the plots, report, compare and run_all.sh. Works on a fresh machine:
# Python packages come from the python3 on PATH when it has them (the GPU machine: no network), else from
# a virtual environment .venv made here from requirements.txt (a stock Debian or Ubuntu python3, PEP 668).
# Without a GPU it compiles one CUDA architecture per launch-bounds class, not all of them (MH_ARCH_SET;
# tests/compile_all_archs.sh compiles every one, for a release); pytest runs on every core when
# pytest-xdist is installed, serially otherwise. docs/testing.md says more.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
NEED="import matplotlib, numpy, pytest"

command -v python3 >/dev/null || { echo "tests/run.sh: python3 not found: install python3 (apt-get install python3 python3-venv)" >&2; exit 2; }
PY=python3
if ! python3 -c "$NEED" 2>/dev/null; then
  PY=.venv/bin/python
  if ! { [[ -x $PY ]] && "$PY" -c "$NEED" 2>/dev/null; }; then
    echo "tests/run.sh: python3 lacks matplotlib/numpy/pytest: making .venv from requirements.txt"
    python3 -m venv .venv >/dev/null 2>&1 || { echo "tests/run.sh: cannot make a virtual environment: install python3-venv (apt-get install python3-venv), or matplotlib numpy pytest for python3" >&2; exit 2; }
    "$PY" -m pip install -q -r requirements.txt || { echo "tests/run.sh: pip could not install requirements.txt into .venv (no network?): install matplotlib numpy pytest for python3" >&2; exit 2; }
  fi
fi
PY_DIR=$(dirname "$("$PY" -c 'import sys; print(sys.executable)')")
export PATH="$PY_DIR:$PATH"  # the scripts and the tests call python3

JOBS=$(nproc)
# A user's CMAKE_CUDA_ARCHITECTURES (already in $BUILD_DIR) or CUDAARCHS wins over MH_ARCH_SET.
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DMH_ARCH_SET=classes
cmake --build "$BUILD_DIR" -j"$JOBS"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS"
# CTest shows a skipped test without its reason: show it.
grep -h "tests skipped: " "$BUILD_DIR"/Testing/Temporary/LastTest*.log 2>/dev/null | sort -u || true
PARALLEL=()
"$PY" -c "import xdist" 2>/dev/null && PARALLEL=(-n "$JOBS" --dist worksteal)  # the GPU machine's python3 may lack it; worksteal: no long test left for one worker at the end
# MH_PYTEST_ARGS: the test of this script runs a subset; `-n 0` in it runs serially.
"$PY" -m pytest -q "${PARALLEL[@]}" ${MH_PYTEST_ARGS:-tests/python}
