#!/usr/bin/env bash
# Builds everything and runs every test: host tests, GPU tests (skipped with the reason when there
# is no GPU), and the Python tests of the plots, report and compare. Works on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}

# Python packages: install the pinned ones unless what is installed already imports (the GPU machine
# has them and no network).
if ! python3 -c "import matplotlib, numpy, scipy, pytest" 2>/dev/null; then
  python3 -m pip install -q -r requirements.txt
fi

cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" -j"$(nproc)"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)"
python3 -m pytest -q tests/python
