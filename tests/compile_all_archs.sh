#!/usr/bin/env bash
# Compile-only check for a release: configures a build folder of its own for every CUDA architecture the
# installed nvcc lists (MH_ARCH_SET=nvcc, GPU or not; a CUDAARCHS or earlier CMAKE_CUDA_ARCHITECTURES does
# not narrow it) and builds every target; runs no test. tests/run.sh (CI) compiles only one architecture
# per launch-bounds class; this catches what ptxas of another architecture alone would refuse. 570 to 850
# CPU seconds for 12 architectures (docs/testing.md). Output goes to a log; the last line says what
# happened, and a failure exits 1 with the first error in that line.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-all-archs}
me=tests/compile_all_archs.sh
mkdir -p "$BUILD_DIR"
log=$BUILD_DIR/compile_all_archs.log
start=$SECONDS

fail() {  # $1: the step; the first error of the log (CMake's with its message) in one line
  local why
  why=$(sed -n '/CMake Error/,/^$/{/Call Stack/q;p}' "$log" | head -6)
  [[ -n $why ]] || why=$(grep -m1 -E "[Ee]rror" "$log" || tail -1 "$log")
  echo "$me: $1 failed: $(tr -s '[:space:]' ' ' <<<"$why")(log: $log)" >&2
  exit 1
}

env -u CUDAARCHS cmake -S . -B "$BUILD_DIR" -UCMAKE_CUDA_ARCHITECTURES -DMH_ARCH_SET=nvcc \
  -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1 || fail "configure"
archs=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")
cmake --build "$BUILD_DIR" -j"$(nproc)" >>"$log" 2>&1 || fail "build for CUDA architectures $archs"
echo "$me: every target compiled for CUDA architectures $archs in $((SECONDS - start)) s"
