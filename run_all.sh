#!/usr/bin/env bash
# Runs the whole suite on one GPU: build, GPU self-check, every benchmark family with repetitions,
# plots and report, into results/<gpu>/<UTC timestamp>/ (never overwritten).
set -euo pipefail
cd "$(dirname "$0")"

usage() {
  cat <<'EOF'
usage: ./run_all.sh [options]
  --quick              a short subset with fewer repetitions (about a minute)
  --filter REGEX       only benchmarks whose name matches REGEX (Google Benchmark's filter)
  --out DIR            results root (default: results); the run goes to DIR/<gpu>/<UTC timestamp>/
  --compare BASE.json  compare the new run with BASE.json (plots/compare.py); exit 1 on a regression
  --device N           the GPU to use (default 0)
  --no-build           use the existing build in $BUILD_DIR (default: build)
  --ncu                also profile the micro and GEMM kernels with Nsight Compute (ncu.md in the report)
  -h, --help           this text
EOF
}

die() { echo "run_all.sh: error: $*" >&2; exit 1; }
need_arg() { [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value (see --help)"; }

QUICK=0 FILTER="" OUT_ROOT=results COMPARE="" DEVICE=0 BUILD=1 NCU=0
BUILD_DIR=${BUILD_DIR:-build}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --filter) need_arg "$@"; FILTER=$2; shift ;;
    --out) need_arg "$@"; OUT_ROOT=$2; shift ;;
    --compare) need_arg "$@"; COMPARE=$2; shift ;;
    --device) need_arg "$@"; DEVICE=$2; shift ;;
    --no-build) BUILD=0 ;;
    --ncu) NCU=1 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
[[ $DEVICE =~ ^[0-9]+$ ]] || die "--device needs a non-negative integer, got '$DEVICE'"
[[ -z $COMPARE || -f $COMPARE ]] || die "--compare: no such file '$COMPARE'"

# No GPU: one line, exit 2, before anything else.
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "run_all.sh: no NVIDIA GPU visible (nvidia-smi lists none); nothing to measure" >&2
  exit 2
fi
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "$DEVICE" 2>/dev/null) ||
  { echo "run_all.sh: GPU $DEVICE does not exist (nvidia-smi -L lists $(nvidia-smi -L | wc -l))" >&2; exit 2; }
export CUDA_VISIBLE_DEVICES=$DEVICE

# Prerequisites: say each one that is missing.
[[ -d /usr/local/cuda/bin ]] && PATH=$PATH:/usr/local/cuda/bin
missing=()
if [[ $BUILD == 1 ]]; then
  command -v nvcc >/dev/null || missing+=("nvcc (the CUDA Toolkit, 12.x or 13.x)")
  command -v cmake >/dev/null || missing+=("cmake >= 3.24")
fi
command -v python3 >/dev/null || missing+=("python3")
for pkg in matplotlib numpy scipy; do
  python3 -c "import $pkg" 2>/dev/null || missing+=("python3 package $pkg (pip install -r requirements.txt)")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  for m in "${missing[@]}"; do echo "run_all.sh: missing prerequisite: $m" >&2; done
  exit 1
fi

START=$SECONDS
say() { printf '[%4ds] %s\n' $((SECONDS - START)) "$*"; }

if [[ $BUILD == 1 ]]; then
  say "building ($BUILD_DIR, Release)"
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >"/tmp/run_all_cmake.$$.log" 2>&1 ||
    { cat "/tmp/run_all_cmake.$$.log" >&2; die "CMake configure failed"; }
  cmake --build "$BUILD_DIR" -j"$(nproc)" >>"/tmp/run_all_cmake.$$.log" 2>&1 ||
    { tail -40 "/tmp/run_all_cmake.$$.log" >&2; die "build failed"; }
fi
BENCH=$BUILD_DIR/gpubench
[[ -x $BENCH ]] || die "$BENCH not found: build first (drop --no-build)"

# Self-check: every kernel verified on this GPU before any number is published.
say "GPU self-check (ctest -L gpu)"
if ! ctest --test-dir "$BUILD_DIR" -L gpu -j4 --output-on-failure >"/tmp/run_all_ctest.$$.log" 2>&1; then
  grep -E "Failed|FAILED|Error" "/tmp/run_all_ctest.$$.log" | head -20 >&2
  die "GPU self-check failed: refusing to publish numbers"
fi
if grep -q "Skipped" "/tmp/run_all_ctest.$$.log"; then
  die "GPU tests were skipped on a machine with a GPU: refusing to publish numbers"
fi

SLUG=$(tr 'A-Z' 'a-z' <<<"$GPU_NAME" | sed -E 's/^nvidia //; s/[^a-z0-9]+/-/g; s/^-|-$//g')
RUN_DIR=$OUT_ROOT/$SLUG/$(date -u +%Y%m%dT%H%M%SZ)
[[ -e $RUN_DIR ]] && die "$RUN_DIR exists; runs are never overwritten"
mkdir -p "$RUN_DIR"

if [[ $QUICK == 1 ]]; then
  REPS=3 MIN_TIME=0.005
  # A subset that still feeds every plot and headline ratio.
  [[ -n $FILTER ]] || FILTER='^(ceiling/|coalescing/read/|smem_banks/throughput/width:4/|syncthreads/threads:(32|256|1024)/|gemm/(smem|cublas)/m:(1024|4092)/)'
else
  REPS=5 MIN_TIME=0.02
fi
FILTER=${FILTER:-.}
# Google Benchmark 1.8 wants a unit on --benchmark_min_time ("0.02s"); 1.7 takes a plain number.
"$BENCH" --benchmark_min_time=${MIN_TIME}s --benchmark_list_tests=true --benchmark_filter=none_at_all >/dev/null 2>&1 &&
  MIN_TIME=${MIN_TIME}s
TOTAL=$("$BENCH" --benchmark_list_tests=true --benchmark_filter="$FILTER" | wc -l)
[[ $TOTAL -gt 0 ]] || die "--filter '$FILTER' matches no benchmark (./$BENCH --benchmark_list_tests lists them)"

say "running $TOTAL benchmarks x $REPS repetitions on $GPU_NAME -> $RUN_DIR"
k=0 family=""
set +e
"$BENCH" --benchmark_filter="$FILTER" --benchmark_repetitions=$REPS --benchmark_min_time=$MIN_TIME \
  --benchmark_display_aggregates_only=true --benchmark_out="$RUN_DIR/benchmarks.json" \
  --benchmark_out_format=json 2>"$RUN_DIR/gpubench.stderr" |
  while IFS= read -r line; do
    [[ $line == *_median* ]] || continue
    k=$((k + 1))
    name=${line%%/manual_time_median*}
    [[ ${name%%/*} != "$family" ]] && family=${name%%/*} && say "family $family"
    printf '[%4ds] %4d/%d  %s\n' $((SECONDS - START)) "$k" "$TOTAL" "$name"
  done
status=${PIPESTATUS[0]}
set -e
if [[ $status -ne 0 ]]; then
  cat "$RUN_DIR/gpubench.stderr" >&2
  die "gpubench exited with $status"
fi
[[ -s $RUN_DIR/gpubench.stderr ]] || rm -f "$RUN_DIR/gpubench.stderr"

# A benchmark that failed its own verification is an error, not a number.
if ! python3 plots/check_errors.py "$RUN_DIR/benchmarks.json"; then
  touch "$RUN_DIR/FAILED"
  die "some benchmarks reported errors (listed above); $RUN_DIR is marked FAILED"
fi

if [[ $NCU == 1 ]]; then
  if ! command -v ncu >/dev/null; then
    say "ncu not found: skipping the ncu cross-check"
  else
    say "profiling with ncu"
    bash plots/ncu_profile.sh "$BENCH" "$RUN_DIR" || say "ncu profiling failed or is not permitted here: skipped (see $RUN_DIR/ncu.log)"
  fi
fi

rc=0
if [[ -n $COMPARE ]]; then
  say "comparing with $COMPARE"
  set +e
  python3 plots/compare.py "$COMPARE" "$RUN_DIR/benchmarks.json" | tee "$RUN_DIR/compare.txt"
  rc=${PIPESTATUS[0]}
  set -e
  [[ $rc -le 1 ]] || die "compare.py could not read $COMPARE"
fi

say "plots and report"
for script in stride banks sync gemm roofline hierarchy; do
  python3 "plots/$script.py" "$RUN_DIR/benchmarks.json" -o "$RUN_DIR/$script.png"
done
python3 plots/report.py "$RUN_DIR/benchmarks.json" -o "$RUN_DIR/report.md"

say "done: $RUN_DIR"
[[ $rc -eq 0 ]] || echo "run_all.sh: regressions against $COMPARE (see $RUN_DIR/compare.txt)" >&2
exit $rc
