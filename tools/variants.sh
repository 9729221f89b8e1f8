#!/usr/bin/env bash
# tools/variants.sh: real regressions on this GPU (issue 27, item 4): the unchanged tree and each variant patch, built and run the
# way results/experiments/gemm_extra_barrier/ was (./run_all.sh --filter on the GEMM kernels), then compared.
# Run from the repository root on the GPU machine; everything it keeps goes under "$OUT":
#   $OUT/variants_runs.tar   every run folder (runs/<name>/<gpu>/<UTC time>/), base = the unchanged tree, run
#                            first and again last (the second base run measures the drift over the call)
#   $OUT/compare/<name>.<profile>.{txt,json}   compare of each variant against the two base runs
#   $OUT/summary.txt         what is printed at the end (timings, the verdicts at 2048^3, 4092^3, 4096^3)
# The tree is copied once to /tmp (its own build folder inside; CMake's build tree holds absolute paths, so
# one copy serves every variant and only the translation units a patch touches rebuild): each patch is
# applied (git apply), built, run, and taken out again (git apply -R) before the next.
# gpu_tests is built too: run_all.sh self-checks every kernel on the GPU before it publishes a run (and a
# variant whose kernel computes wrong fails there). Variants: VARIANTS="a b" (results/experiments/<a>/variant.patch).
# Time: 146 s on an H200 with 16 cores (2026-12-02: the first build 27 s, each variant's rebuild 9-11 s, six runs
# of four kernels 15-27 s each, pictures and report included).
set -euo pipefail
ROOT=$PWD
: "${OUT:?set OUT to the folder for the results}"
VARIANTS=${VARIANTS:-"warptile_tuned_bk4 vectorized_lost_unroll blocktile_2d_k_guard"}
FILTER=${FILTER:-'^gemm/(blocktile_2d|vectorized|warptile|warptile_tuned)/'}  # the patched kernels and kernel 7 (untouched)
WORK=${TMPDIR:-/tmp}/gpubench-variants
T=$WORK/tree
START=$SECONDS
step() { printf '[%4ds] %s\n' $((SECONDS - START)) "$*" | tee -a "$OUT/summary.txt"; }

for v in $VARIANTS; do
  [[ -f results/experiments/$v/variant.patch ]] || { echo "variants.sh: no results/experiments/$v/variant.patch" >&2; exit 2; }
done
mkdir -p "$OUT/compare"
: >"$OUT/summary.txt"
rm -rf "$WORK" && mkdir -p "$T" "$WORK/runs"
# The copy: everything but runs, build folders and git (mtimes kept); which code it is goes in by MH_GIT_*.
tar -C "$ROOT" --exclude=./results --exclude='./build*' --exclude=./.git -cf - . | tar -C "$T" -xf -
COMMIT=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo "${MH_GIT_COMMIT:-}")
BASE_DIRTY=$(changes=$(git -C "$ROOT" status --porcelain -- . ':(exclude)results' ':(exclude)build*' 2>/dev/null) &&
             { [[ -z $changes ]] && echo false || echo true; } || echo unknown)
step "copied to $T (commit ${COMMIT:-unknown}, dirty $BASE_DIRTY)"

GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
cmake "${GEN[@]}" -S "$T" -B "$T/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$WORK/configure.log" 2>&1 ||
  { tail -30 "$WORK/configure.log"; exit 4; }
build() {  # name
  cmake --build "$T/build" -j16 --target gpubench gpu_tests >"$WORK/build-$1.log" 2>&1 || { tail -30 "$WORK/build-$1.log"; return 4; }
}
run() {  # name, dirty: the tree's run into $WORK/runs/<name>; prints its benchmarks.json
  local env=(MH_GIT_DIRTY="$2") rc=0
  [[ -n $COMMIT ]] && env+=(MH_GIT_COMMIT="$COMMIT")
  (cd "$T" && env "${env[@]}" ./run_all.sh --no-build --filter "$FILTER" --out "$WORK/runs/$1") >"$WORK/run-$1.log" 2>&1 || rc=$?
  [[ $rc == 0 ]] || { echo "variants.sh: run_all.sh for $1 exited $rc:" >&2; tail -5 "$WORK/run-$1.log" >&2; return 4; }
  find "$WORK/runs/$1" -name benchmarks.json | head -1
}

build base || exit 4
step "built the unchanged tree (gpubench, gpu_tests)"
BASE1=$(run base "$BASE_DIRTY") || exit 4
step "ran the unchanged tree: $BASE1"
declare -A RUN
for v in $VARIANTS; do
  patch=$ROOT/results/experiments/$v/variant.patch
  (cd "$T" && git apply "$patch") || { step "$v: the patch does not apply; skipped"; continue; }
  if build "$v"; then
    step "built $v"
    RUN[$v]=$(run "$v" true) && step "ran $v: ${RUN[$v]}" || step "$v: its run failed (log in the tar)"
  else
    step "$v: the build failed; skipped"
  fi
  (cd "$T" && git apply -R "$patch")
done
build base2 || exit 4
BASE2=$(run base2 "$BASE_DIRTY") || exit 4
step "ran the unchanged tree again: $BASE2"
cp "$WORK"/*.log "$WORK/runs/" 2>/dev/null || true
tar -C "$WORK" -cf "$OUT/variants_runs.tar" runs

# Same GPU: the committed same-GPU profile where this GPU is its GPU, else one made from the two base runs
# (2 runs: compare calls it a rough guess). Across GPUs: the committed between-GPU profile of the model.
SAME=results/h200/same_gpu_profile.json
if ! python3 -c "import json, sys; from gpubench import suite_json; d = json.load(open('$SAME')); sys.exit(suite_json.load('$BASE1').context.get('gpu_uuid') not in d['by_gpu'])"; then
  SAME=$OUT/compare/same_gpu_profile_from_base_runs.json
  python3 -m gpubench noise_profile --same-gpu "$BASE1" "$BASE2" -o "$SAME" >/dev/null
fi
{
  echo
  echo "Each variant against the two runs of the unchanged tree (one process each, this GPU); controls: the kernels it does not touch."
  for v in $VARIANTS; do
    [[ -n ${RUN[$v]:-} ]] || continue
    for prof in same-gpu between-gpu; do
      file=$SAME
      [[ $prof == between-gpu ]] && file=results/h200/noise_profile.json
      rc=0
      python3 -m gpubench compare "$BASE1" "$BASE2" "${RUN[$v]}" --allow-missing --profile "$file" --format json \
        >"$OUT/compare/$v.$prof.json" 2>/dev/null || rc=$?
      python3 -m gpubench compare "$BASE1" "$BASE2" "${RUN[$v]}" --allow-missing --profile "$file" \
        >"$OUT/compare/$v.$prof.txt" 2>&1 || true
      python3 - "$OUT/compare/$v.$prof.json" "$v" "$prof" "$rc" <<'EOF'
import json, re, sys
doc = json.load(open(sys.argv[1]))
print(f"\n{sys.argv[2]}, {sys.argv[3]} profile (exit {sys.argv[4]}): {doc['profile']['line'].splitlines()[-1]}")
for b in doc["benchmarks"]:
    m = re.match(r"gemm/(\w+)/m:(\d+)/n:(\d+)/k:(\d+)$", b["name"])
    if m and m.group(2) == m.group(3) == m.group(4) and m.group(2) in ("2048", "4092", "4096"):
        ch = "n/a" if b["change"] is None else f"{b['change']:+.2%}"
        print(f"  {m.group(1):15s} {m.group(2)}^3  change {ch:>8s}  threshold {b['threshold']:.2%} "
              f"({b['threshold_from']})  {b['verdict']}{' (' + '; '.join(b['reasons']) + ')' if b['reasons'] else ''}")
EOF
    done
  done
} | tee -a "$OUT/summary.txt"
step "done"
