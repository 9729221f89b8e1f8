#!/usr/bin/env bash
# Runs the whole suite on one GPU: build, GPU self-check, every benchmark family with repetitions,
# plots and report, into results/<gpu>/<UTC timestamp>/ (never overwritten).
# Everything it can check (options, GPU, prerequisites, --compare, --out, --filter) is checked before it
# builds; one run per GPU at a time (a lock); a run that fails or is interrupted leaves RUN_DIR/FAILED.
set -euo pipefail
CALLER=$PWD                      # --out and --compare are taken from where the user stands
cd "$(dirname "$0")"
ROOT=$PWD

usage() {
  cat <<'EOF'
usage: ./run_all.sh [options]
  --quick              a short subset with fewer repetitions (about a minute)
  --filter REGEX       only benchmarks whose name matches REGEX (Google Benchmark's filter)
  --out DIR            results root (default: results in the repository); the run goes to DIR/<gpu>/<UTC timestamp>/
  --compare BASE.json  compare the new run with BASE.json (plots/compare.py); exit 1 on a regression
  --device N           the GPU to use (default 0)
  --no-build           use the existing build in $BUILD_DIR (default: build, in the repository)
  --ncu                also profile the micro and GEMM kernels with Nsight Compute (ncu.md in the report)
  -h, --help           this text
environment: MH_GIT_COMMIT, MH_GIT_DIRTY (true/false) name the code in the JSON context where the tree has no
  .git (default: git rev-parse HEAD, git status; else "unknown"); suite_version comes from the VERSION file.
exit status: 0 done, nothing regressed; 1 done, regressions against --compare; 2 unusable input (an option,
  --filter, --compare, --out, no GPU, a missing prerequisite); 3 done, benchmarks of --compare missing from
  the run; 4 the run failed (build, self-check, a benchmark; RUN_DIR/FAILED says why); 5 another
  run_all.sh is using this GPU; 130 interrupted (RUN_DIR/FAILED).
EOF
}

EXIT_INPUT=2 EXIT_FAILED=4 EXIT_BUSY=5
bad_input() { echo "run_all.sh: error: $*" >&2; exit $EXIT_INPUT; }
need_arg() { [[ $# -ge 2 && -n "$2" ]] || bad_input "$1 needs a value (see --help)"; }
from_caller() { [[ $1 == /* ]] && echo "$1" || echo "$CALLER/$1"; }

QUICK=0 FILTER="" OUT_ROOT=$ROOT/results COMPARE="" DEVICE=0 BUILD=1 NCU=0
BUILD_DIR=${BUILD_DIR:-build}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --filter) need_arg "$@"; FILTER=$2; shift ;;
    --out) need_arg "$@"; OUT_ROOT=$(from_caller "$2"); shift ;;
    --compare) need_arg "$@"; COMPARE=$(from_caller "$2"); shift ;;
    --device) need_arg "$@"; DEVICE=$2; shift ;;
    --no-build) BUILD=0 ;;
    --ncu) NCU=1 ;;
    -h|--help) usage; exit 0 ;;
    *) bad_input "unknown option '$1' (see --help)" ;;
  esac
  shift
done
[[ $DEVICE =~ ^[0-9]{1,4}$ ]] || bad_input "--device needs a GPU index (0, 1, ...), got '$DEVICE'"

# No GPU: one line, exit 2, before anything else.
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "run_all.sh: no NVIDIA GPU visible (nvidia-smi lists none); nothing to measure" >&2
  exit $EXIT_INPUT
fi
GPU_INFO=$(nvidia-smi --query-gpu=name,uuid --format=csv,noheader -i "$DEVICE" 2>/dev/null) && [[ -n $GPU_INFO ]] ||
  bad_input "GPU $DEVICE does not exist (nvidia-smi -L lists $(nvidia-smi -L | grep -c '^GPU'))"
GPU_NAME=${GPU_INFO%%,*}
GPU_UUID=$(sed -E 's/^[^,]*,[[:space:]]*//; s/[^A-Za-z0-9-]+/_/g' <<<"$GPU_INFO")
[[ $GPU_INFO == *,* && -n $GPU_UUID ]] || GPU_UUID=index$DEVICE
export CUDA_VISIBLE_DEVICES=$DEVICE

# Prerequisites: say each one that is missing. Python: the one on PATH if it has the packages, else the
# virtual environment tests/run.sh makes (.venv).
[[ -d /usr/local/cuda/bin ]] && PATH=$PATH:/usr/local/cuda/bin
missing=()
if [[ $BUILD == 1 ]]; then
  command -v nvcc >/dev/null || missing+=("nvcc (the CUDA Toolkit, 12.x or 13.x)")
  command -v cmake >/dev/null || missing+=("cmake >= 3.24")
fi
command -v ctest >/dev/null || missing+=("ctest (comes with cmake)")
command -v flock >/dev/null || missing+=("flock (util-linux)")
PY=""
for candidate in python3 "$ROOT/.venv/bin/python3"; do
  if command -v "$candidate" >/dev/null && "$candidate" -c "import matplotlib, numpy" 2>/dev/null; then
    PY=$(command -v "$candidate"); break
  fi
done
[[ -n $PY ]] || missing+=("python3 with matplotlib and numpy (pip install -r requirements.txt, or run tests/run.sh, which makes .venv)")
if [[ ${#missing[@]} -gt 0 ]]; then
  for m in "${missing[@]}"; do echo "run_all.sh: missing prerequisite: $m" >&2; done
  exit $EXIT_INPUT
fi
PATH=$(dirname "$PY"):$PATH  # plots/ncu_profile.sh calls python3

# --compare: a readable suite JSON (check_errors.py exits 2, with one line, on anything else).
if [[ -n $COMPARE ]]; then
  why=$("$PY" plots/check_errors.py "$COMPARE" 2>&1 >/dev/null) || [[ $? -ne 2 ]] ||
    bad_input "--compare: ${why#check_errors: error: }"
fi
# --out: the nearest folder that exists must be writable (nothing is created yet).
probe=$OUT_ROOT
while [[ ! -e $probe ]]; do probe=$(dirname "$probe"); done
[[ -d $probe && -w $probe ]] || bad_input "--out $OUT_ROOT: $probe is not a writable folder"

# Which code this is, for the JSON context (compare.py tells same code from different code by it): git_commit,
# git_dirty (true/false: changes outside results/ and the build, untracked sources included, since CMake globs
# them) and suite_version (the VERSION file). A copy of the tree without .git (as sent to a GPU machine) gets
# them from MH_GIT_COMMIT / MH_GIT_DIRTY; otherwise "unknown".
GIT_COMMIT=unknown GIT_DIRTY=unknown SUITE_VERSION=unknown
if [[ $(git -C "$ROOT" rev-parse --show-toplevel 2>/dev/null) == "$(pwd -P)" ]]; then  # not a repository around a copy
  GIT_COMMIT=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null) || GIT_COMMIT=unknown
  outside=(. ':(exclude)results')
  [[ $BUILD_DIR == /* ]] || outside+=(":(exclude)$BUILD_DIR")
  if changes=$(git -C "$ROOT" status --porcelain -- "${outside[@]}" 2>/dev/null); then
    [[ -z $changes ]] && GIT_DIRTY=false || GIT_DIRTY=true
  fi
fi
GIT_COMMIT=${MH_GIT_COMMIT:-$GIT_COMMIT} GIT_DIRTY=${MH_GIT_DIRTY:-$GIT_DIRTY}
[[ $GIT_DIRTY =~ ^(true|false|unknown)$ ]] || bad_input "MH_GIT_DIRTY must be true or false, got '$GIT_DIRTY'"
[[ -r VERSION ]] && SUITE_VERSION=$(tr -d '[:space:]' <VERSION)
for pair in "MH_GIT_COMMIT=$GIT_COMMIT" "MH_GIT_DIRTY=$GIT_DIRTY" "VERSION=$SUITE_VERSION"; do
  [[ ${pair#*=} =~ ^[A-Za-z0-9._+-]+$ ]] || bad_input "${pair%%=*} '${pair#*=}' is not one plain word (letters, digits, . _ + -)"
done
CONTEXT=--benchmark_context=git_commit=$GIT_COMMIT,git_dirty=$GIT_DIRTY,suite_version=$SUITE_VERSION

if [[ $QUICK == 1 ]]; then
  REPS=3 MIN_TIME=0.005
  # A subset that still feeds every plot and headline ratio (plots/families.py).
  [[ -n $FILTER ]] || FILTER=$("$PY" plots/families.py --quick-filter)
else
  REPS=5 MIN_TIME=0.02
fi
FILTER=${FILTER:-.}
status=0
grep -qE -- "$FILTER" </dev/null 2>/dev/null || status=$?
[[ $status -ne 2 ]] || bad_input "--filter '$FILTER' is not a valid regular expression"
BENCH=$BUILD_DIR/gpubench
[[ $BUILD == 1 || -x $BENCH ]] || bad_input "$BENCH not found: build first (drop --no-build)"

# The benchmarks the filter selects on this GPU, and the skip reasons of those it names that this GPU skips.
check_filter() {
  local names
  names=$("$BENCH" --benchmark_list_tests=true 2>/dev/null) || {
    echo "run_all.sh: error: $BENCH --benchmark_list_tests failed on GPU $DEVICE" >&2; exit $EXIT_FAILED; }
  TOTAL=$(grep -cE -- "$FILTER" <<<"$names" || true)
  [[ $TOTAL -gt 0 ]] || bad_input "--filter '$FILTER' matches no benchmark on $GPU_NAME ($BENCH --benchmark_list_tests lists them)"
}
# One run per GPU: a second one refuses at once rather than contaminate both (or touch the GPU at all).
LOCK=${TMPDIR:-/tmp}/gpubench-$GPU_UUID.lock
exec 9>>"$LOCK" || bad_input "cannot open the lock file $LOCK"
flock -n 9 || { echo "run_all.sh: GPU $DEVICE ($GPU_NAME) is in use by another run_all.sh (lock $LOCK); try again when it is done" >&2; exit $EXIT_BUSY; }
[[ $BUILD == 1 ]] || check_filter


START=$SECONDS
say() { printf '[%4ds] %s\n' $((SECONDS - START)) "$*"; }
fail() { echo "run_all.sh: error: $*" >&2; exit $EXIT_FAILED; }

if [[ $BUILD == 1 ]]; then
  say "building ($BUILD_DIR, Release)"
  mkdir -p "$BUILD_DIR"
  log=$BUILD_DIR/run_all_build.log
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1 || { tail -40 "$log" >&2; fail "CMake configure failed (log: $log)"; }
  cmake --build "$BUILD_DIR" -j"$(nproc)" >>"$log" 2>&1 || { tail -40 "$log" >&2; fail "build failed (log: $log)"; }
  [[ -x $BENCH ]] || fail "the build made no $BENCH"
  check_filter
fi

SLUG=$(tr 'A-Z' 'a-z' <<<"$GPU_NAME" | sed -E 's/^nvidia //; s/[^a-z0-9]+/-/g; s/^-|-$//g')
RUN_DIR=$OUT_ROOT/$SLUG/$(date -u +%Y%m%dT%H%M%SZ)
[[ -e $RUN_DIR ]] && fail "$RUN_DIR exists; runs are never overwritten"
mkdir -p "$RUN_DIR" || bad_input "cannot create $RUN_DIR"
# From here on, anything but reaching the end leaves FAILED saying why: the run never looks finished.
STAGE="starting" DONE=0
on_exit() {
  local rc=$?
  [[ $DONE == 1 ]] || echo "run_all.sh stopped (exit $rc) during: $STAGE" >"$RUN_DIR/FAILED"
}
trap on_exit EXIT
trap 'STAGE="$STAGE (interrupted)"; exit 130' INT TERM HUP

# Self-check: every kernel verified on this GPU before any number is published.
STAGE="GPU self-check"
say "GPU self-check (ctest -L gpu)"
if ! ctest --test-dir "$BUILD_DIR" -L gpu -j4 --output-on-failure >"$RUN_DIR/selfcheck.log" 2>&1; then
  grep -E "Failed|FAILED|Error" "$RUN_DIR/selfcheck.log" | head -20 >&2
  STAGE="GPU self-check failed (selfcheck.log)"
  fail "GPU self-check failed: refusing to publish numbers ($RUN_DIR/selfcheck.log)"
fi
if grep -q "Skipped" "$RUN_DIR/selfcheck.log"; then
  why=$(grep -h "GPU tests skipped" "$BUILD_DIR"/Testing/Temporary/LastTest*.log 2>/dev/null | head -1)
  STAGE="GPU self-check skipped: ${why:-no reason logged}"
  fail "GPU tests were skipped on a machine with a GPU (${why:-no reason logged}): refusing to publish numbers"
fi
rm -f "$RUN_DIR/selfcheck.log"

# Google Benchmark 1.8 wants a unit on --benchmark_min_time ("0.02s"); 1.7 takes a plain number.
"$BENCH" --benchmark_min_time=${MIN_TIME}s --benchmark_list_tests=true --benchmark_filter=none_at_all >/dev/null 2>&1 &&
  MIN_TIME=${MIN_TIME}s
# Model predictions once per benchmark in model.json, where gpubench can write them.
MODEL_OUT=()
"$BENCH" --model_out=/dev/null --benchmark_list_tests=true --benchmark_filter=none_at_all >/dev/null 2>&1 &&
  MODEL_OUT=(--model_out="$RUN_DIR/model.json")

STAGE="benchmarks (gpubench)"
say "running $TOTAL benchmarks x $REPS repetitions on $GPU_NAME -> $RUN_DIR"
k=0 family=""
set +e
"$BENCH" --benchmark_filter="$FILTER" --benchmark_repetitions=$REPS --benchmark_min_time=$MIN_TIME \
  --benchmark_display_aggregates_only=true --benchmark_out="$RUN_DIR/benchmarks.json" \
  --benchmark_out_format=json "$CONTEXT" "${MODEL_OUT[@]}" 2>"$RUN_DIR/gpubench.stderr" |
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
  STAGE="benchmarks: gpubench exited with $status (gpubench.stderr)"
  fail "gpubench exited with $status"
fi
[[ -s $RUN_DIR/gpubench.stderr ]] || rm -f "$RUN_DIR/gpubench.stderr"

# A benchmark that failed its own verification is an error, not a number; a skip is not an error, but
# its reason is shown.
STAGE="checking for benchmark errors"
set +e
"$PY" plots/check_errors.py "$RUN_DIR/benchmarks.json" >"$RUN_DIR/skipped.txt"
status=$?
set -e
if [[ -s $RUN_DIR/skipped.txt ]]; then
  say "$(wc -l <"$RUN_DIR/skipped.txt") benchmarks skipped on this GPU (skipped.txt):"
  sed 's/^check_errors: skipped /  /' "$RUN_DIR/skipped.txt"
else
  rm -f "$RUN_DIR/skipped.txt"
fi
if [[ $status -ne 0 ]]; then
  STAGE="some benchmarks reported errors (run plots/check_errors.py on benchmarks.json)"
  fail "some benchmarks reported errors (listed above); $RUN_DIR is marked FAILED"
fi

if [[ $NCU == 1 ]]; then
  if ! command -v ncu >/dev/null; then
    say "ncu not found: skipping the ncu cross-check"
  else
    STAGE="ncu profiling"
    say "profiling with ncu"
    bash plots/ncu_profile.sh "$BENCH" "$RUN_DIR" || say "ncu profiling failed or is not permitted here: skipped (see $RUN_DIR/ncu.log)"
  fi
fi

rc=0
if [[ -n $COMPARE ]]; then
  STAGE="comparing with $COMPARE"
  say "comparing with $COMPARE"
  allow=()
  [[ $FILTER == . ]] || allow=(--allow-missing)  # a subset misses the rest of a full baseline by design
  set +e
  "$PY" plots/compare.py "${allow[@]}" "$COMPARE" "$RUN_DIR/benchmarks.json" >"$RUN_DIR/compare.txt"
  rc=$?
  set -e
  cat "$RUN_DIR/compare.txt"
  [[ $rc -eq 0 || $rc -eq 1 || $rc -eq 3 ]] || fail "compare.py exited with $rc on $RUN_DIR/benchmarks.json"
fi

STAGE="plots and report"
say "plots and report"
for script in $("$PY" plots/families.py --plots); do
  "$PY" "plots/$script.py" "$RUN_DIR/benchmarks.json" -o "$RUN_DIR/$script.png"
done
"$PY" plots/report.py "$RUN_DIR/benchmarks.json" -o "$RUN_DIR/report.md"

DONE=1
say "done: $RUN_DIR"
case $rc in
  1) echo "run_all.sh: regressions against $COMPARE (see $RUN_DIR/compare.txt)" >&2 ;;
  3) echo "run_all.sh: benchmarks of $COMPARE are missing from this run (see $RUN_DIR/compare.txt)" >&2 ;;
esac
exit $rc
