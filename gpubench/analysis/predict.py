#!/usr/bin/env python3
"""GEMM time predictions: each GEMM kernel's time from the counting model's counts (model.json, written by
model/gemm_model.hpp through gemm/bench_gemm.cu) and unit costs measured by the micro families of the same
run (the issue family for FFMA, shared loads, their overlap and barriers; ceiling / coalescing for memory).
Every rule is stated once, below, and every number it needs is measured: nothing is fitted to the GEMM
kernels it predicts (docs/families/issue.md, "The time model").

  t = max((core + barriers) x tail + exposed, max(L2, HBM) x tail)
  w      = the warps resident on the busiest SM: min(blocks per SM, ceil(blocks / SMs)) blocks (a grid smaller
         than the SMs' room leaves fewer warps than the occupancy allows);
  issue  I = (FFMA + LDS + STS + LDG + STG warp instructions) x s_ffma(w): every counted warp instruction takes
         one issue slot, at the rate issue/ffma/warps:w measures (the largest measured <= w);
  L1TEX  P = (LDS + STS wavefronts) x s_wavefront (issue/lds/width:4/pattern:conflict_free) + L1, the global
         loads' L1 bound of gpubench/analysis/bounds.py: shared and global accesses go through one L1TEX unit;
         a kernel that loads its operands straight from global memory (no shared loads or stores: naive,
         coalesced) has its load requests charged at the rate of such a load mix whose L1 misses come from
         the level that serves them, not at the L1-resident rate: its misses hold the L1TEX pipe, a tiled
         kernel's few loads do not bind it. Per request, additively: each operand's requests at the mix of its
         own level, model_ld_requests_dram (the operands whose misses DRAM serves by the L2 reuse rule of
         model/gemm_model.hpp tile_reuse) x 1 / coalescing/mix/bcast_row/hbm + the rest x 1 / .../l2
         (coalescing/mix/bcast_row/split measures the rule: split_check). A model.json from before that
         count charges every request at the operands' level (the level rule of `exposed` below). Runs
         without those benchmarks fall back to the L1-resident rate (the rule before them; stderr says so);
  core   = max(I, P) + phi x min(I, P), phi measured by the issue/mix benchmark nearest the kernel's FFMA per
         L1TEX instruction: phi = (T_mix - max(I_mix, P_mix)) / min(I_mix, P_mix), 0 = the two overlap,
         1 = their times add;
  barriers = warp barriers x (T_mix_sync - T_mix) per barrier (issue/mix_sync at the same mix and warps);
  exposed = load rounds per block x ceil(blocks of the busiest SM / resident blocks) x latency: a load round is
         a tile whose global loads the block waits for at a barrier with nothing of its own to compute
         (model_load_rounds); the blocks resident on an SM start together and run the same loop, so their
         waits coincide and none covers another's; latency: the pointer chase's L2 plateau when the operands
         (the compulsory bytes A + B + C) fit in L2, else its DRAM plateau (latency/chase/ws:*/stride:128);
  L2, HBM: the bounds of gpubench/analysis/bounds.py (they overlap the SM's time: the larger one binds);
  tail = ceil(blocks / SMs) / (blocks / SMs): the busiest SM's share of the grid over the mean one.

The BF16 tensor-core ladder (kernels 9-15) has its own rules, gpubench/analysis/tc_predict.py; its rows have
the same fields (parts: seconds per term, the tail factor, one_stage).

usage: python3 -m gpubench predict RUN_DIR [-o FILE] [--force]   (writes RUN_DIR/predictions.json:
       {"<gemm benchmark>": {"measured_s", "predicted_s", "binding", "parts"}}, parts: seconds per term, phi and
       the tail factor; predicted_s and binding are
       null, and the missing unit costs are named on stderr, when the run lacks what a prediction needs)
Exit status: 0, or 2 for a folder without a usable benchmarks.json.
"""
import argparse
import json
import math
import os
import sys

from gpubench import suite_json
from gpubench.analysis import bounds
from gpubench.analysis import latency_levels
from gpubench.analysis import tc_predict

OUT_FILE = "predictions.json"
L1 = "L1 (requests, lines)"
MEMORY = ("L2", "HBM")
# The counts a prediction needs (gemm/bench_gemm.cu exports them; runs before the time model lack some).
COUNTS = ("model_ffma_warp", "model_lds_inst", "model_sts_inst", "model_ld_requests", "model_st_requests",
          "model_lds_wavefronts", "model_sts_wavefronts", "model_block_barriers", "model_load_rounds",
          "model_blocks", "model_blocks_per_sm", "model_threads_per_block", "model_dram_bytes")
LATENCY_BENCH = "latency/chase/ws:*/stride:128 (its L2 and DRAM plateaus)"
# The load mix of kernels without shared-memory tiles, by the level their L1 misses come from (micro/load_mix.cuh).
DIRECT_BENCH = {"L2": "coalescing/mix/bcast_row/l2", "DRAM": "coalescing/mix/bcast_row/hbm"}
# Both levels at once: broadcasts from HBM, rows from L2 (kernel 2's A and B at 4096^3).
SPLIT_BENCH = "coalescing/mix/bcast_row/split"
# The load requests whose L1 misses DRAM serves (model/gemm_model.hpp tile_reuse; absent before it).
DRAM_REQUESTS = "model_ld_requests_dram"
DIRECT_FALLBACK = ("the L1TEX requests of kernels without shared-memory tiles are charged at the L1-resident rate "
                   "(the run lacks {})")
EXPOSED = "load latency"
WAVEFRONT_BENCH = "issue/lds/width:4/pattern:conflict_free/warps:32"


def _mixes(suite, kind):
    """{(ffma, lds, width, warps): record} of issue/<kind> benchmarks."""
    return {(r.fields["ffma"], r.fields["lds"], r.fields["width"], r.fields["warps"]): r
            for r in suite.ok("issue") if r.fields.get("kind") == kind}


def unit_costs(suite):
    """(units, missing): the measured unit costs (seconds of the whole chip per warp instruction, wavefront,
    warp-trip of a mix), and the benchmarks a prediction needs that the run lacks."""
    u = {"ffma_s": {}, "mix": {}, "mix_sync": {}}
    for r in suite.ok("issue"):
        if r.fields.get("kind") == "ffma" and r.get("ffma_per_second") > 0:
            u["ffma_s"][r.fields["warps"]] = 1 / r.get("ffma_per_second")
    if (wf := suite.value(WAVEFRONT_BENCH, "wavefronts_per_second")):
        u["wavefront_s"] = 1 / wf
    for kind in ("mix", "mix_sync"):
        for key, r in _mixes(suite, kind).items():
            if r.get("lds_per_second") > 0:  # seconds per warp-trip: lds loads per trip / loads per second
                u[kind][key] = {"trip_s": key[1] / r.get("lds_per_second"), "barriers_per_trip": r.get("barriers_per_trip", 0)}
    mem = bounds.unit_costs(suite)
    u["memory"] = mem
    levels = latency_levels.headline_levels(suite)
    u["latency_s"] = {lv: levels[lv][1] * 1e-9 for lv in ("L2", "DRAM") if lv in levels and levels[lv][1] > 0}
    u["l2_bytes"] = float(suite.context.get("l2_bytes", 0) or 0)
    u["direct_request_s"] = {lv: 1 / r for lv, name in DIRECT_BENCH.items()
                             if (r := suite.value(name, "requests_per_second"))}
    missing = [name for name, have in (("issue/ffma/warps:*", u["ffma_s"]), (WAVEFRONT_BENCH, "wavefront_s" in u),
                                       ("issue/mix/*", u["mix"]), ("issue/mix_sync/*", u["mix_sync"]),
                                       (LATENCY_BENCH, len(u["latency_s"]) == 2), ("context.l2_bytes", u["l2_bytes"]))
               if not have]
    missing += [f"{k} ({bounds.UNITS[k]})" for k in ("l1_requests_per_s", "l1_lines_per_s", "l2_bytes_per_s",
                                                    "hbm_bytes_per_s") if k not in mem]
    return u, missing


def nearest_warps(measured, warps):
    """The largest measured warps per SM <= warps (fewer warps hide less: never borrow a fuller SM's rate),
    else the smallest measured."""
    below = [w for w in measured if w <= warps]
    return max(below) if below else min(measured)


def overlap(trip_s, issue_s, shared_s):
    """phi of a measured mix: 0 when its time is the larger of its issue and shared-pipe times (they overlap),
    1 when it is their sum (they take turns), clamped to [0, 1]."""
    return tc_predict.added_share(trip_s, issue_s, shared_s)


def core_time(issue_s, shared_s, phi):
    """The SM-side time: the larger of issue and shared pipe, plus phi of the smaller."""
    return max(issue_s, shared_s) + phi * min(issue_s, shared_s)


def busiest(blocks, sm_count):
    """Blocks the busiest SM runs over the kernel: ceil(blocks / SMs)."""
    return math.ceil(blocks / sm_count - 1e-9)


def tail(blocks, sm_count):
    """The busiest SM's blocks over the mean: a grid of 1.5 blocks per SM takes as long as 2."""
    return busiest(blocks, sm_count) / (blocks / sm_count)


def resident_blocks(rec, sm_count):
    """Blocks resident together on the busiest SM: its share of the grid, at most what fits."""
    return min(rec.get("model_blocks_per_sm"), busiest(rec.get("model_blocks"), sm_count))


def operand_level(rec, u):
    """Where the loads that miss L1 are served: "L2" when the operands (the compulsory bytes A + B + C) fit in
    L2, else "DRAM"."""
    return "L2" if rec.get("model_dram_bytes") <= u["l2_bytes"] else "DRAM"


def exposed_latency(rec, u, sm_count):
    """Seconds the busiest SM waits on tile loads with nothing to compute: load rounds per block x the rounds of
    resident blocks it runs (their waits coincide) x the latency of the level holding A, B and C."""
    c = rec.get
    rounds_per_block = c("model_load_rounds") / c("model_blocks")
    waves = math.ceil(busiest(c("model_blocks"), sm_count) / resident_blocks(rec, sm_count) - 1e-9)
    return rounds_per_block * waves * u["latency_s"][operand_level(rec, u)]


def direct_loads(rec):
    """Whether the kernel loads its operands straight from global memory: no shared loads or stores."""
    return rec.get("model_lds_inst") == 0 and rec.get("model_sts_inst") == 0


def direct_requests(rec, u):
    """{level: load requests whose L1 misses that level serves} of a kernel that loads straight from global
    memory: model_ld_requests_dram at "DRAM", the rest at "L2"; all at operand_level without that count."""
    total = rec.get("model_ld_requests")
    if not rec.has(DRAM_REQUESTS):
        return {operand_level(rec, u): total}
    dram = rec.get(DRAM_REQUESTS)
    return {lv: n for lv, n in (("L2", total - dram), ("DRAM", dram)) if n > 0}


def request_seconds(requests, s):
    """The additive rule: every request at the per-request time of its own level's mix (s: {level: seconds})."""
    return sum(n * s[lv] for lv, n in requests.items())


def memory_units(rec, u):
    """The memory unit costs for rec: bounds.unit_costs' (u["memory"]), with the L1TEX request rate of the load
    mixes of its levels (request_seconds) for a kernel that loads straight from global memory (when the run
    measured them)."""
    if not direct_loads(rec):
        return u["memory"]
    s, requests = u.get("direct_request_s", {}), direct_requests(rec, u)
    if not requests or any(lv not in s for lv in requests):
        return u["memory"]
    return {**u["memory"], "l1_requests_per_s": rec.get("model_ld_requests") / request_seconds(requests, s)}


def split_check(suite):
    """(measured, predicted) requests per second of coalescing/mix/bcast_row/split (broadcasts from HBM, rows
    from L2, one of each per warp step), predicted from the l2 and hbm mixes by the additive rule; None when
    the run lacks one of the three."""
    measured = suite.value(SPLIT_BENCH, "requests_per_second")
    u = {"direct_request_s": {lv: 1 / r for lv, name in DIRECT_BENCH.items()
                              if (r := suite.value(name, "requests_per_second"))}}
    if not measured or len(u["direct_request_s"]) < 2:
        return None
    return measured, 2 / request_seconds({"L2": 1, "DRAM": 1}, u["direct_request_s"])


def mix_for(mixes, ratio, warps):
    """The mix key at `warps` whose FFMA per load is nearest `ratio` (by factor), or None."""
    at = [k for k in mixes if k[3] == warps]
    return min(at, key=lambda k: abs(math.log(k[0] / k[1] / ratio))) if at and ratio > 0 else None


def predict(rec, u, sm_count):
    """(seconds, binding, parts) of one GEMM record with its model counts; parts: seconds per term (issue, shared
    memory, L1, barriers, load latency, L2, HBM), and the mix's phi and the tail factor."""
    c = rec.get
    warps_per_sm = resident_blocks(rec, sm_count) * c("model_threads_per_block") / 32
    w = nearest_warps(u["ffma_s"], warps_per_sm)
    s_ffma, s_wf = u["ffma_s"][w], u["wavefront_s"]
    l1tex_inst = c("model_lds_inst") + c("model_sts_inst") + c("model_ld_requests") + c("model_st_requests")
    issue = (c("model_ffma_warp") + l1tex_inst) * s_ffma
    memory = bounds.bounds(rec, memory_units(rec, u), sm_count)
    shared = (c("model_lds_wavefronts") + c("model_sts_wavefronts")) * s_wf
    l1 = memory.pop(L1, 0.0)
    memory = {k: v for k, v in memory.items() if k in MEMORY}
    ratio = c("model_ffma_warp") / l1tex_inst if l1tex_inst else 0
    phi, barrier = 0.0, 0.0
    if ratio > 0:
        mw = nearest_warps({k[3] for k in u["mix"]}, warps_per_sm)
        f, lds, width, _ = key = mix_for(u["mix"], ratio, mw)
        phi = overlap(u["mix"][key]["trip_s"], (f + lds) * u["ffma_s"][nearest_warps(u["ffma_s"], mw)],
                      lds * width / 4 * s_wf)
    if c("model_block_barriers") > 0:
        sw = nearest_warps({k[3] for k in u["mix_sync"]}, warps_per_sm)
        key = mix_for(u["mix_sync"], ratio or 1.0, sw)
        synced, plain = u["mix_sync"][key], u["mix"].get(key)
        if plain and synced["barriers_per_trip"] > 0:
            per_barrier = max(0.0, synced["trip_s"] - plain["trip_s"]) / synced["barriers_per_trip"]
            barrier = c("model_block_barriers") * c("model_threads_per_block") / 32 * per_barrier
    parts = {"issue": issue, "shared memory": shared, L1: l1, "phi": phi, "barriers": barrier, **memory,
             "tail": tail(c("model_blocks"), sm_count), EXPOSED: exposed_latency(rec, u, sm_count)}
    core = core_time(issue, shared + l1, phi) + barrier
    sm_time = core * parts["tail"] + parts[EXPOSED]
    mem_time = max(memory.values(), default=0.0) * parts["tail"]
    if mem_time > sm_time:
        binding = max(memory, key=memory.get)
    elif parts[EXPOSED] > core * parts["tail"]:
        binding = EXPOSED
    else:
        binding = "issue" if issue >= shared + l1 else "shared memory" if shared >= l1 else L1
    return max(sm_time, mem_time), binding, parts


def predictions(suite):
    """({gemm benchmark: {"measured_s", "predicted_s", "binding", "parts"}}, missing unit costs and counts)."""
    u, missing = unit_costs(suite)
    sm = float(suite.context.get("sm_count", 0) or 0)
    if not sm:
        missing.append("context.sm_count")
    out, lacking = {}, {}
    for r in suite.ok("gemm"):
        if r.fields.get("kernel") not in bounds.KERNELS or not r.has("model_ffma_thread"):
            continue
        lacks = [k for k in COUNTS if not r.has(k)]
        row = {"measured_s": r.get(suite_json.TIME), "predicted_s": None, "binding": None}
        for k in lacks:
            lacking[k] = lacking.get(k, 0) + 1
        if not lacks and not missing:
            row["predicted_s"], row["binding"], row["parts"] = predict(r, u, sm)
        out[r.name] = row
    if lacking:
        missing.append("model counts " + ", ".join(f"{k} ({n} GEMM benchmarks)" for k, n in lacking.items())
                       + ": model.json from before the time model")
    if lacking and not missing[:-1]:  # counts missing for some benchmarks only: predict none of them
        for row in out.values():
            row.update(predicted_s=None, binding=None)
            row.pop("parts", None)
    tc_rows, tc_missing = tc_predictions(suite, sm)
    out.update(tc_rows)
    return out, missing + tc_missing


def fallback_note(suite, rows):
    """The line predict prints when predicted kernels without shared-memory tiles fell back to the L1-resident
    request rate (the run lacks a load-mix benchmark), else None. Not printed by predictions(): the report
    calls it too and stays quiet."""
    u, _ = unit_costs(suite)
    fallback = [f"{DIRECT_BENCH[lv]} ({n} GEMM benchmarks)" for lv, n in direct_fallbacks(suite, u).items()]
    if fallback and any(row.get("parts") for row in rows.values()):
        return "predict: note: " + DIRECT_FALLBACK.format(", ".join(fallback))
    return None


def tc_fallback_note(suite, rows):
    """The lines predict prints when predicted tensor-core kernels fell back to an older rule, else None: cp.async
    kernels to the overlap rule without phi_copy (the run lacks the copy kinds of tensor/mma_ldmatrix at their
    stages); kernel 12's TMA loop to the L2 roof for its TMA bytes (the run lacks the GEMM-tile stream at its key)."""
    u, _ = tc_predict.unit_costs(suite)
    recs = [r for r in suite.ok("gemm") if (rows.get(r.name) or {}).get("parts")]
    notes = []
    if (names := tc_predict.copy_fallbacks(recs, u)):
        notes.append(f"predict: note: {len(names)} cp.async tensor-core GEMM benchmarks keep max(compute, copy) / "
                     f"copy + compute for their copies (the run lacks {tc_predict.COPY_UNIT})")
    if (names := tc_predict.tile_stream_fallbacks(recs, u)):
        notes.append(f"predict: note: {len(names)} TMA GEMM benchmarks of kernel 12's loop keep ceiling/read/l2 for "
                     f"their TMA bytes (the run lacks {tc_predict.TILES_UNIT} at their shape, tile, stages and "
                     f"residency): {', '.join(names)}")
    return "\n".join(notes) or None


def direct_fallbacks(suite, u):
    """{operand level: GEMM benchmarks without shared-memory tiles whose load-mix rate the run lacks}."""
    out = {}
    for r in suite.ok("gemm"):
        if r.fields.get("kernel") in bounds.KERNELS and r.has("model_lds_inst") and r.has("model_dram_bytes") \
                and direct_loads(r):
            for lv in direct_requests(r, u):
                if lv not in u["direct_request_s"]:
                    out[lv] = out.get(lv, 0) + 1
    return out


def tc_predictions(suite, sm):
    """({tensor-core GEMM benchmark: row}, missing): the ladder's kernels with model counts (cuBLAS has none)."""
    recs = [r for r in suite.ok("gemm") if r.fields.get("kernel") in bounds.TENSOR_CORE_MODELLED and r.has("model_flops")]
    if not recs:
        return {}, []
    u, missing = tc_predict.unit_costs(suite)
    lacks = sorted({k for r in recs for k in tc_predict.COUNTS if not r.has(k)})
    if lacks:
        missing.append("tensor-core model counts " + ", ".join(lacks))
    out, lacking = {}, []
    for r in recs:
        row = {"measured_s": r.get(suite_json.TIME), "predicted_s": None, "binding": None}
        need = tc_predict.lacks(r, u)  # what this kernel's rule needs beyond the common units (left unpredicted)
        lacking += [n for n in need if n not in lacking]
        if not missing and not need and sm:
            row["predicted_s"], row["binding"], row["parts"] = tc_predict.predict(r, u, sm)
        out[r.name] = row
    return out, missing + lacking


def _run_file(folder):
    return suite_json.stored(os.path.join(folder, "benchmarks.json"))


@suite_json.cli("predict")
def main(argv=None):
    p = argparse.ArgumentParser(prog="predict", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", help="a run folder: benchmarks.json (or .json.gz) and model.json")
    p.add_argument("-o", "--out", help=f"output file (default RUN_DIR/{OUT_FILE})")
    p.add_argument("--force", action="store_true", help="write even into a committed run's folder or over a committed file")
    args = p.parse_args(argv)
    if not os.path.isdir(args.run_dir):
        print(f"predict: error: {args.run_dir}: not a folder", file=sys.stderr)
        return suite_json.EXIT_UNUSABLE
    out = args.out or os.path.join(args.run_dir, OUT_FILE)
    inputs = [_run_file(args.run_dir), os.path.join(args.run_dir, suite_json.MODEL_FILE)]
    suite_json.check_output(out, inputs, "predict", args.force)
    suite = suite_json.load_or_exit(inputs[0], "predict")
    rows, missing = predictions(suite)
    if missing:
        print("predict: benchmarks left unpredicted: the run lacks " + "; ".join(missing), file=sys.stderr)
    if (note := fallback_note(suite, rows)):
        print(note, file=sys.stderr)
    if (note := tc_fallback_note(suite, rows)):
        print(note, file=sys.stderr)
    if (check := split_check(suite)):
        print(f"predict: {SPLIT_BENCH}: measured {check[0] / 1e9:.1f} G requests/s, the additive rule from "
              f"{DIRECT_BENCH['L2']} and {DIRECT_BENCH['DRAM']} predicts {check[1] / 1e9:.1f} "
              f"(time predicted / measured {check[0] / check[1]:.3f})", file=sys.stderr)
    suite_json.write_text(out, json.dumps(rows, indent=1, sort_keys=True) + "\n", "predict")
    return 0


if __name__ == "__main__":
    sys.exit(main())
