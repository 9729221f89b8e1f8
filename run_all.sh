#!/usr/bin/env bash
# Runs the whole suite on one GPU: build, GPU self-check, every benchmark family with repetitions,
# plots and report, into results/<gpu>/<UTC timestamp>/ (never overwritten). --device all: every GPU of
# the node, one after the other, into <timestamp>/gpu<i>/, and a node report (node/) that sets them side by side.
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
  --compare BASE      compare the new run with BASE (python3 -m gpubench compare): a benchmarks.json, or a folder whose
                       benchmarks.json files below it are all baselines (several GPUs: see README); exit 1 on
                       a regression
  --device N|all       the GPU to use (default 0); all: every GPU of the node, one per-GPU run each (its
                       peer links to every other GPU included), then node/node.md and the peer matrices
  --margin PCT         with --device all: flag a GPU or link more than PCT % worse than its siblings (default 10)
  --no-build           use the existing build in $BUILD_DIR (default: build, in the repository)
  --ncu                also profile the micro and GEMM kernels with Nsight Compute (ncu.md in the report)
  -h, --help           this text
environment: MH_GIT_COMMIT, MH_GIT_DIRTY (true/false) name the code in the JSON context where the tree has no
  .git (default: git rev-parse HEAD, git status; else "unknown"; inside a git checkout they are ignored, with a
  line saying so, so a modified tree is never recorded as a clean commit); suite_version comes from the VERSION file.
exit status: 0 done, nothing regressed; 1 done, regressions against --compare; 2 unusable input (an option,
  --filter, --compare, --out, no GPU, a missing prerequisite); 3 done, benchmarks of --compare missing from
  the run; 4 the run failed (build, self-check, a benchmark, a tool that crashed, a full disk; RUN_DIR/FAILED
  says why); 5 another
  run_all.sh is using this GPU (--device all: one of the GPUs); 6 (--device all) done, the node report
  flagged a GPU or link (node/node.md); 130 interrupted (RUN_DIR/FAILED).
EOF
}

EXIT_INPUT=2 EXIT_FAILED=4 EXIT_BUSY=5 EXIT_FLAGGED=6
bad_input() { echo "run_all.sh: error: $*" >&2; exit $EXIT_INPUT; }
need_arg() { [[ $# -ge 2 && -n "$2" ]] || bad_input "$1 needs a value (see --help)"; }
from_caller() { [[ $1 == /* ]] && echo "$1" || echo "$CALLER/$1"; }

QUICK=0 FILTER="" OUT_ROOT=$ROOT/results COMPARE="" DEVICE=0 BUILD=1 NCU=0 MARGIN=""
BUILD_DIR=${BUILD_DIR:-build}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --filter) need_arg "$@"; FILTER=$2; shift ;;
    --out) need_arg "$@"; OUT_ROOT=$(from_caller "$2"); shift ;;
    --compare) need_arg "$@"; COMPARE=$(from_caller "$2"); shift ;;
    --device) need_arg "$@"; DEVICE=$2; shift ;;
    --margin) need_arg "$@"; MARGIN=$2; shift ;;
    --no-build) BUILD=0 ;;
    --ncu) NCU=1 ;;
    -h|--help) usage; exit 0 ;;
    *) bad_input "unknown option '$1' (see --help)" ;;
  esac
  shift
done
[[ $DEVICE =~ ^([0-9]{1,4}|all)$ ]] || bad_input "--device needs a GPU index (0, 1, ...) or 'all', got '$DEVICE'"
NODE=0
[[ $DEVICE == all ]] && NODE=1
if [[ -n $MARGIN ]]; then
  [[ $NODE == 1 ]] || bad_input "--margin applies to --device all only"
  if ! [[ $MARGIN =~ ^[0-9]+([.][0-9]+)?$ ]] || ! awk -v m="$MARGIN" 'BEGIN { exit !(m > 0 && m < 100) }'; then
    bad_input "--margin needs a percentage between 0 and 100, got '$MARGIN'"
  fi
fi
MARGIN=${MARGIN:-10}
# A node run is a run per GPU: one baseline cannot stand for all of them.
[[ $NODE == 1 && -n $COMPARE ]] &&
  bad_input "--compare takes one GPU's run, not --device all (compare a GPU's gpu<i>/benchmarks.json with python3 -m gpubench compare)"

# No GPU: one line, exit 2, before anything else.
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "run_all.sh: no NVIDIA GPU visible (nvidia-smi lists none); nothing to measure" >&2
  exit $EXIT_INPUT
fi
# Name and UUID (for the lock) of GPU $1 into GPU_NAME, GPU_UUID.
gpu_info() {
  local info
  info=$(nvidia-smi --query-gpu=name,uuid --format=csv,noheader -i "$1" 2>/dev/null) && [[ -n $info ]] ||
    bad_input "GPU $1 does not exist (nvidia-smi -L lists $(nvidia-smi -L | grep -c '^GPU'))"
  GPU_NAME=${info%%,*}
  GPU_UUID=$(sed -E 's/^[^,]*,[[:space:]]*//; s/[^A-Za-z0-9-]+/_/g' <<<"$info")
  [[ $info == *,* && -n $GPU_UUID ]] || GPU_UUID=index$1
}
if [[ $NODE == 0 ]]; then
  gpu_info "$DEVICE"
  export CUDA_VISIBLE_DEVICES=$DEVICE
else
  # Every GPU visible, in nvidia-smi's (PCI bus) order, so that CUDA's index i, gpubench --device i and
  # MH_PEER_DEVICE=i all name nvidia-smi's GPU i.
  mapfile -t GPUS < <(nvidia-smi -L | sed -nE 's/^GPU ([0-9]+):.*/\1/p')
  NAMES=() UUIDS=()
  for i in "${GPUS[@]}"; do
    gpu_info "$i"
    NAMES+=("$GPU_NAME") UUIDS+=("$GPU_UUID")
  done
  GPU_NAME=${NAMES[0]} DEVICE=${GPUS[0]}  # for what is checked once (the filter, gpubench's flags)
  unset CUDA_VISIBLE_DEVICES
  export CUDA_DEVICE_ORDER=PCI_BUS_ID
fi

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
PATH=$(dirname "$PY"):$PATH  # tools/ncu_profile.sh calls python3
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"  # the gpubench package and plots/, from any folder

# --compare: a readable suite JSON, or a folder of them (check_errors.py exits 2, with one line, on anything else).
if [[ -n $COMPARE ]]; then
  why=$("$PY" -m gpubench check_errors "$COMPARE" 2>&1 >/dev/null) || [[ $? -ne 2 ]] ||
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
  # git knows: the environment must not record a modified tree as a clean commit
  for var in MH_GIT_COMMIT MH_GIT_DIRTY; do
    [[ -z ${!var:-} ]] || echo "run_all.sh: $var ignored: this is a git checkout, git says which code it is" >&2
    unset "$var"
  done
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
# bench_code: what gpubench is built from (CMakeLists.txt, cmake/, harness/, micro/, gemm/, model/), hashed file by
# file (sha256sum of each, sorted by path, then of that list; 16 hex digits). Two commits that change only scripts,
# tests or docs give the same bench_code, and compare.py calls their runs the same benchmark code. It is computed
# from the files themselves, so a dirty tree or a copy without .git has one too.
BENCH_CODE=unknown
if sums=$(find CMakeLists.txt cmake harness micro gemm model -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum); then
  BENCH_CODE=$(sha256sum <<<"$sums" | cut -c1-16)
fi
CONTEXT=--benchmark_context=git_commit=$GIT_COMMIT,git_dirty=$GIT_DIRTY,suite_version=$SUITE_VERSION,bench_code=$BENCH_CODE

# The peer benchmarks: with --device all, GPU i's own run peers with GPU i+1, and these run again for every other GPU.
PEER_RE='^(link/peer|latency/link/peer)/'
if [[ $QUICK == 1 ]]; then
  REPS=3 MIN_TIME=0.005
  # A subset that still feeds every plot and headline ratio (gpubench/families.py); a node run adds the peer links.
  if [[ -z $FILTER ]]; then
    FILTER=$("$PY" -m gpubench families --quick-filter)
    [[ $NODE == 0 ]] || FILTER="$FILTER|$PEER_RE"
  fi
else
  # 10 ms of launches per repetition: the within-run spread of launches >= 100 us stayed at 0.1-0.5 %
  # with 20 ms (the committed runs before this), far under the spread between GPUs of up to 10 %.
  REPS=5 MIN_TIME=0.01
fi
FILTER=${FILTER:-.}
status=0
grep -qE -- "$FILTER" </dev/null 2>/dev/null || status=$?
[[ $status -ne 2 ]] || bad_input "--filter '$FILTER' is not a valid regular expression"
BENCH=$BUILD_DIR/gpubench
[[ $BUILD == 1 || -x $BENCH ]] || bad_input "$BENCH not found: build first (drop --no-build)"

# The benchmarks the filter selects on this GPU (LISTED: all of them), and the skip reasons of those it
# names that this GPU skips.
check_filter() {
  LISTED=$("$BENCH" --benchmark_list_tests=true 2>/dev/null) || {
    echo "run_all.sh: error: $BENCH --benchmark_list_tests failed on GPU $DEVICE" >&2; exit $EXIT_FAILED; }
  TOTAL=$(grep -cE -- "$FILTER" <<<"$LISTED" || true)
  [[ $TOTAL -gt 0 ]] || bad_input "--filter '$FILTER' matches no benchmark on $GPU_NAME ($BENCH --benchmark_list_tests lists them)"
}
# One run per GPU: a second one refuses at once rather than contaminate both (or touch the GPU at all).
# --device all takes every GPU's lock, in index order (two node runs never each hold one and wait).
lock_gpu() {  # index, name, UUID
  local lock=${TMPDIR:-/tmp}/gpubench-$3.lock fd
  exec {fd}>>"$lock" || bad_input "cannot open the lock file $lock"
  flock -n "$fd" || { echo "run_all.sh: GPU $1 ($2) is in use by another run_all.sh (lock $lock); try again when it is done" >&2; exit $EXIT_BUSY; }
}
if [[ $NODE == 0 ]]; then
  lock_gpu "$DEVICE" "$GPU_NAME" "$GPU_UUID"
else
  for k in "${!GPUS[@]}"; do lock_gpu "${GPUS[$k]}" "${NAMES[$k]}" "${UUIDS[$k]}"; done
fi
[[ $BUILD == 1 ]] || check_filter


START=$SECONDS
say() { printf '[%4ds] %s\n' $((SECONDS - START)) "$*"; }
fail() { echo "run_all.sh: error: $*" >&2; exit $EXIT_FAILED; }
# The one mapping of a Python tool's exit status to this script's: a status the tool documents as a verdict
# passes (the caller acts on it); anything else -- unusable input (2), a bug (70, or a traceback under any
# status), a signal -- fails the run (exit 4) with the tool's last stderr line in FAILED. Its stderr is shown
# and kept in ERR when it said anything.
tool_ok() {  # name, status, stderr file, verdict statuses...
  local name=$1 status=$2 err=$3 why
  shift 3
  [[ -s $err ]] && cat "$err" >&2
  if [[ " $* " == *" $status "* ]] && ! grep -q '^Traceback (most recent call last)' "$err" 2>/dev/null; then
    [[ -s $err ]] || rm -f "$err"
    return 0
  fi
  why=$(grep -v '^[[:space:]]*$' "$err" 2>/dev/null | tail -1 | cut -c1-300) || true  # empty or unreadable: none
  STAGE="$STAGE: $name failed (exit $status${why:+: $why}; $(basename "$err"))"
  fail "$name exited with $status (${why:-no message}); see $err"
}

if [[ $BUILD == 1 ]]; then
  say "building ($BUILD_DIR, Release)"
  mkdir -p "$BUILD_DIR"
  log=$BUILD_DIR/run_all_build.log
  # Ninja where there is one and the folder is new (a folder keeps its generator): it compiles every
  # target's objects at once, where Makefiles wait for each library to link first (37 s -> 22-30 s on the H200s).
  gen=()
  [[ ! -f $BUILD_DIR/CMakeCache.txt ]] && command -v ninja >/dev/null && gen=(-G Ninja)
  cmake "${gen[@]}" -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1 || { tail -40 "$log" >&2; fail "CMake configure failed (log: $log)"; }
  # What the run uses: the runner and the GPU self-check (the host tests are tests/run.sh's).
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target gpubench gpu_tests >>"$log" 2>&1 || { tail -40 "$log" >&2; fail "build failed (log: $log)"; }
  [[ -x $BENCH ]] || fail "the build made no $BENCH"
  check_filter
fi

slug() { tr 'A-Z' 'a-z' <<<"$1" | sed -E 's/^nvidia //; s/[^a-z0-9]+/-/g; s/^-|-$//g'; }
if [[ $NODE == 0 ]]; then
  SLUG=$(slug "$GPU_NAME")
else  # the node's GPU models, joined by '+' where they differ
  SLUG=$(for n in "${NAMES[@]}"; do slug "$n"; done | sort -u | paste -sd+)
fi
# The run's folder, made atomically (mkdir without -p fails if it exists): runs of one model started in the
# same second (two GPUs of a node) get <timestamp>, <timestamp>-2, ...; runs are never overwritten.
mkdir -p "$OUT_ROOT/$SLUG" || bad_input "cannot create $OUT_ROOT/$SLUG"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
TOP_DIR="" k=1
while [[ -z $TOP_DIR && $k -le 100 ]]; do
  candidate=$OUT_ROOT/$SLUG/$STAMP
  [[ $k == 1 ]] || candidate=$candidate-$k
  if mkdir "$candidate" 2>/dev/null; then
    TOP_DIR=$candidate
  else
    [[ -e $candidate ]] || bad_input "cannot create $candidate"
  fi
  k=$((k + 1))
done
[[ -n $TOP_DIR ]] || fail "no free run folder name under $OUT_ROOT/$SLUG for $STAMP (100 taken)"
RUN_DIR=$TOP_DIR  # one GPU's folder: the run's own, or (--device all) TOP_DIR/gpu<i>
WHO=""            # "GPU i: " in a node run's stages
# From here on, anything but reaching the end leaves FAILED saying why: the run never looks finished. Its
# space is taken now (4 KiB, hidden until needed), so that a disk that fills during the run still gets it.
RESERVE=$TOP_DIR/.failed-reserve
head -c 4096 /dev/zero | tr '\0' ' ' >"$RESERVE" 2>/dev/null || rm -f "$RESERVE"
STAGE="starting" DONE=0
write_failed() {  # message: into the reserved space (rewritten in place, then cut), else an ordinary write
  local msg=$1 bytes
  bytes=$(printf '%s' "$msg" | wc -c)
  if [[ -f $RESERVE && $bytes -lt 4096 ]] && mv -f "$RESERVE" "$TOP_DIR/FAILED" 2>/dev/null &&
     printf '%s\n' "$msg" 1<>"$TOP_DIR/FAILED" 2>/dev/null && truncate -s $((bytes + 1)) "$TOP_DIR/FAILED" 2>/dev/null; then
    return 0
  fi
  printf '%s\n' "$msg" >"$TOP_DIR/FAILED"
}
on_exit() {
  local rc=$? msg avail
  if [[ $DONE != 1 ]]; then
    msg="run_all.sh stopped (exit $rc) during: $STAGE"
    avail=$(df -Pk "$TOP_DIR" 2>/dev/null | awk 'NR == 2 { print $4 }')
    [[ $avail != 0 ]] || msg="$msg; the disk under --out is full (df: 0 KiB available on $(df -P "$TOP_DIR" | awk 'NR == 2 { print $6 }'))"
    write_failed "$msg"
    [[ $RUN_DIR == "$TOP_DIR" || ! -d $RUN_DIR ]] || cp "$TOP_DIR/FAILED" "$RUN_DIR/FAILED" 2>/dev/null || true
  fi
  rm -f "$RESERVE"
}
trap on_exit EXIT
trap 'STAGE="$STAGE (interrupted)"; exit 130' INT TERM HUP

# Self-check: every kernel verified on this GPU before any number is published.
selfcheck() {  # log file, [CUDA_VISIBLE_DEVICES for the tests]
  local log=$1 pre=() why
  [[ -z ${2:-} ]] || pre=(env "CUDA_VISIBLE_DEVICES=$2")
  STAGE="${WHO}GPU self-check"
  say "${WHO}GPU self-check (ctest -L gpu)"
  # --no-tests=error: a build folder without the GPU tests (--no-build on a bare one) must not pass as checked
  if ! "${pre[@]}" ctest --test-dir "$BUILD_DIR" -L gpu -j4 --no-tests=error --output-on-failure >"$log" 2>&1; then
    grep -E "Failed|FAILED|Error|No tests were found" "$log" | head -20 >&2
    if grep -q "No tests were found" "$log"; then
      STAGE="${WHO}GPU self-check: no GPU tests in $BUILD_DIR (build gpu_tests, or drop --no-build)"
      fail "no GPU tests found in $BUILD_DIR: refusing to publish numbers unchecked"
    fi
    STAGE="${WHO}GPU self-check failed ($(basename "$log"))"
    fail "GPU self-check failed: refusing to publish numbers ($log)"
  fi
  if grep -q "Skipped" "$log"; then
    why=$(grep -h "GPU tests skipped" "$BUILD_DIR"/Testing/Temporary/LastTest*.log 2>/dev/null | head -1)
    STAGE="${WHO}GPU self-check skipped: ${why:-no reason logged}"
    fail "GPU tests were skipped on a machine with a GPU (${why:-no reason logged}): refusing to publish numbers"
  fi
  rm -f "$log"
}
if [[ $NODE == 0 ]]; then
  selfcheck "$RUN_DIR/selfcheck.log"
else
  # On each GPU: it is CUDA device 0 of the tests, the others follow (the peer tests' peer).
  for i in "${GPUS[@]}"; do
    WHO="GPU $i: "
    selfcheck "$TOP_DIR/selfcheck-gpu$i.log" "$(printf '%s\n' "$i" "${GPUS[@]}" | awk '!seen[$0]++' | paste -sd,)"
  done
  WHO=""
fi

# Google Benchmark 1.8 wants a unit on --benchmark_min_time ("0.02s"); 1.7 takes a plain number.
"$BENCH" --benchmark_min_time=${MIN_TIME}s --benchmark_list_tests=true --benchmark_filter=none_at_all >/dev/null 2>&1 &&
  MIN_TIME=${MIN_TIME}s
# Model predictions once per benchmark in model.json, where gpubench can write them.
MODEL_OUT=0
"$BENCH" --model_out=/dev/null --benchmark_list_tests=true --benchmark_filter=none_at_all >/dev/null 2>&1 && MODEL_OUT=1

GPU_INDEX=""  # a node run's GPU, every GPU being visible (gpubench --device); one GPU: CUDA_VISIBLE_DEVICES picks it
PEER=""       # a node run's MH_PEER_DEVICE
# gpubench over a filter into a JSON file with the run's repetitions, showing which family runs and how far along.
run_bench() {  # JSON, filter, how many benchmarks it selects, stderr file, [more gpubench flags]
  local out=$1 filter=$2 count=$3 err=$4 pre=() dev=() k=0 family="" status
  shift 4
  [[ -z $PEER ]] || pre=(env "MH_PEER_DEVICE=$PEER")
  [[ -z $GPU_INDEX ]] || dev=(--device="$GPU_INDEX")
  set +e
  "${pre[@]}" "$BENCH" "${dev[@]}" --benchmark_filter="$filter" --benchmark_repetitions=$REPS \
    --benchmark_min_time=$MIN_TIME --benchmark_display_aggregates_only=true --benchmark_out="$out" \
    --benchmark_out_format=json "$CONTEXT" "$@" 2>"$err" |
    while IFS= read -r line; do
      [[ $line == *_median* ]] || continue
      k=$((k + 1))
      name=${line%%/manual_time_median*}
      [[ ${name%%/*} != "$family" ]] && family=${name%%/*} && say "family $family"
      printf '[%4ds] %4d/%d  %s\n' $((SECONDS - START)) "$k" "$count" "$name"
    done
  status=${PIPESTATUS[0]}
  set -e
  if [[ $status -ne 0 ]]; then
    cat "$err" >&2
    STAGE="${WHO}benchmarks: gpubench exited with $status ($(basename "$err"))"
    fail "gpubench exited with $status"
  fi
  [[ -s $err ]] || rm -f "$err"
}

# A benchmark that failed its own verification is an error, not a number; a skip is not an error, but
# its reason is shown.
check_run() {  # JSON, file for the skip reasons
  local json=$1 skipped=$2 status
  STAGE="${WHO}checking for benchmark errors"
  set +e
  "$PY" -m gpubench check_errors "$json" >"$skipped" 2>"$skipped.stderr"
  status=$?
  set -e
  # 1 with the errors listed on stderr: benchmark errors; 2 (an unusable file: a disk full under gpubench?), a
  # crash, or 1 with nothing said (it could not even write its stderr): the check itself failed
  if [[ $status -ne 1 || ! -s $skipped.stderr ]]; then
    tool_ok check_errors "$status" "$skipped.stderr" 0
  else
    cat "$skipped.stderr" >&2
    rm -f "$skipped.stderr"
  fi
  if [[ -s $skipped ]]; then
    say "$(wc -l <"$skipped") benchmarks skipped on this GPU ($(basename "$skipped")):"
    sed 's/^check_errors: skipped /  /' "$skipped"
  else
    rm -f "$skipped"
  fi
  if [[ $status -ne 0 ]]; then
    STAGE="${WHO}some benchmarks reported errors (run python3 -m gpubench check_errors on $(basename "$json"))"
    fail "some benchmarks reported errors (listed above); $TOP_DIR is marked FAILED"
  fi
}

# One GPU's run into RUN_DIR: benchmarks, errors, ncu, --compare, plots, report.
rc=0
run_gpu() {  # how the GPU is named in the progress line
  local model=() pre=()
  [[ $MODEL_OUT == 0 ]] || model=(--model_out="$RUN_DIR/model.json")
  STAGE="${WHO}benchmarks (gpubench)"
  say "running $TOTAL benchmarks x $REPS repetitions on $1 -> $RUN_DIR"
  run_bench "$RUN_DIR/benchmarks.json" "$FILTER" "$TOTAL" "$RUN_DIR/gpubench.stderr" "${model[@]}"
  check_run "$RUN_DIR/benchmarks.json" "$RUN_DIR/skipped.txt"

  if [[ $NCU == 1 ]]; then
    if ! command -v ncu >/dev/null; then
      say "ncu not found: skipping the ncu cross-check"
    else
      STAGE="${WHO}ncu profiling"
      say "${WHO}profiling with ncu"
      # In a node run the GPU is made CUDA device 0, the one ncu_profile.sh profiles.
      [[ -z $GPU_INDEX ]] || pre=(env "CUDA_VISIBLE_DEVICES=$GPU_INDEX")
      "${pre[@]}" bash tools/ncu_profile.sh "$BENCH" "$RUN_DIR" ||
        say "ncu profiling failed or is not permitted here: skipped (see $RUN_DIR/ncu.log)"
    fi
  fi

  if [[ -n $COMPARE ]]; then
    STAGE="comparing with $COMPARE"
    say "comparing with $COMPARE"
    allow=()
    [[ $FILTER == . ]] || allow=(--allow-missing)  # a subset misses the rest of a full baseline by design
    set +e
    "$PY" -m gpubench compare "${allow[@]}" "$COMPARE" "$RUN_DIR/benchmarks.json" >"$RUN_DIR/compare.txt" \
      2>"$RUN_DIR/compare.stderr"
    rc=$?
    set -e
    cat "$RUN_DIR/compare.txt"
    tool_ok compare "$rc" "$RUN_DIR/compare.stderr" 0 1 3  # 1 regressions, 3 missing: verdicts
  fi

  STAGE="${WHO}plots and report"
  say "${WHO}plots and report"
  # One process per picture, all at once (each is mostly matplotlib's start-up), then the report that
  # embeds them.
  local pids=() scripts=() k
  for script in $("$PY" -m gpubench families --plots); do
    "$PY" -m "plots.$script" "$RUN_DIR/benchmarks.json" -o "$RUN_DIR/$script.png" &
    pids+=($!) scripts+=("$script")
  done
  for k in "${!pids[@]}"; do
    wait "${pids[$k]}" || fail "plots.${scripts[$k]} failed on $RUN_DIR/benchmarks.json"
  done
  "$PY" -m gpubench predict "$RUN_DIR" || fail "gpubench predict failed on $RUN_DIR"
  "$PY" -m gpubench report "$RUN_DIR/benchmarks.json" -o "$RUN_DIR/report.md"
}

if [[ $NODE == 0 ]]; then
  run_gpu "$GPU_NAME"
  DONE=1
  say "done: $RUN_DIR"
  case $rc in
    1) echo "run_all.sh: regressions against $COMPARE (see $RUN_DIR/compare.txt)" >&2 ;;
    3) echo "run_all.sh: benchmarks of $COMPARE are missing from this run (see $RUN_DIR/compare.txt)" >&2 ;;
  esac
  exit $rc
fi

# --device all: GPU i's own run peers with GPU i+1 (the node report compares those links GPU by GPU); with
# more than two GPUs the peer benchmarks the filter selects run again for every other GPU j (gpu<i>/peer<j>.json),
# so that the peer matrices have every pair.
unset MH_PEER_DEVICE
N=${#GPUS[@]}
PAIR_NAMES=$(grep -E -- "$FILTER" <<<"$LISTED" | grep -E -- "$PEER_RE" || true)
PAIR_TOTAL=$(grep -c . <<<"$PAIR_NAMES" || true)
if [[ $PAIR_TOTAL -eq $(grep -cE -- "$PEER_RE" <<<"$LISTED" || true) ]]; then
  PAIR_FILTER=$PEER_RE
else  # the filter takes some of them: exactly those, by name
  PAIR_FILTER="^($(sed 's/[].[*^$+?(){}|\\]/\\&/g' <<<"$PAIR_NAMES" | paste -sd'|'))\$"
fi
JSONS=() PEER_JSONS=()
for k in "${!GPUS[@]}"; do
  i=${GPUS[$k]} GPU_NAME=${NAMES[$k]} WHO="GPU ${GPUS[$k]}: "
  RUN_DIR=$TOP_DIR/gpu$i GPU_INDEX=$i PEER=""
  [[ $N -lt 2 ]] || PEER=${GPUS[$(((k + 1) % N))]}
  mkdir -p "$RUN_DIR"
  say "GPU $i ($GPU_NAME)${PEER:+, peer GPU $PEER}"
  run_gpu "GPU $i ($GPU_NAME)"
  JSONS+=("gpu$i/benchmarks.json")
  [[ $N -gt 2 && $PAIR_TOTAL -gt 0 ]] || continue
  first_peer=$PEER
  for j in "${GPUS[@]}"; do
    [[ $j != "$i" && $j != "$first_peer" ]] || continue
    PEER=$j STAGE="GPU $i: peer benchmarks with GPU $j"
    say "GPU $i: $PAIR_TOTAL peer benchmarks with GPU $j -> $RUN_DIR/peer$j.json"
    run_bench "$RUN_DIR/peer$j.json" "$PAIR_FILTER" "$PAIR_TOTAL" "$RUN_DIR/peer$j.stderr"
    check_run "$RUN_DIR/peer$j.json" "$RUN_DIR/skipped-peer$j.txt"
    PEER_JSONS+=("gpu$i/peer$j.json")
  done
done
RUN_DIR=$TOP_DIR WHO=""

# The node report: the GPUs side by side, anything more than MARGIN % worse than its siblings flagged.
STAGE="node report"
NODE_DIR=$TOP_DIR/node
mkdir -p "$NODE_DIR"
say "node report ($N GPUs, margin $MARGIN %) -> $NODE_DIR/node.md"
set +e
(cd "$TOP_DIR" && "$PY" -m gpubench node_report --margin "$MARGIN" "${JSONS[@]}" -o node/node.md >/dev/null \
  2>node/node_report.stderr)
node_rc=$?
set -e
tool_ok node_report "$node_rc" "$NODE_DIR/node_report.stderr" 0 1  # 1: flagged, a verdict
if [[ $N -gt 1 ]]; then
  STAGE="peer matrices"
  for mode in uni bidir; do
    (cd "$TOP_DIR" && "$PY" -m plots.peer_matrix --mode $mode "${JSONS[@]}" "${PEER_JSONS[@]}" \
      -o "node/peer_matrix_$mode.png") || fail "peer_matrix.py --mode $mode failed on ${JSONS[*]} ${PEER_JSONS[*]}"
  done
fi

DONE=1
say "done: $TOP_DIR"
if [[ $node_rc -eq 1 ]]; then
  echo "run_all.sh: the node report flags a GPU or link more than $MARGIN % worse than its siblings (see $NODE_DIR/node.md)" >&2
  exit $EXIT_FLAGGED
fi
exit 0
