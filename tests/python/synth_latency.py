"""Synthetic latency/* benchmarks for the tests: chase curves with known levels, in gpubench's JSON shape.

A chase through working set ws is served by level k with probability h_k - h_(k-1), h_k = min(1, C_k / ws)
(inclusive caches losing hits as C / ws past their capacity), so each level is a plateau up to C_k.

Run directly to get a file to look at: python3 tests/python/synth_latency.py out.json
"""
import json
import math
import sys

import numpy as np

import synth

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
CLOCK_GHZ = 1.98
# (capacity, cycles): the last level's capacity is infinite.
CACHE_LEVELS = ((224 * KIB, 33.0), (40 * MIB, 270.0), (math.inf, 650.0))
L2_LEVELS = ((40 * MIB, 270.0), (math.inf, 650.0))
CARVEOUT_LEVELS = {"min": ((224 * KIB, 33.0), (math.inf, 270.0)), "max": ((24 * KIB, 33.0), (math.inf, 270.0))}
# One load per page: L2 hits throughout, plus the TLB misses past each reach.
TLB_LEVELS = {2 * MIB: ((64 * MIB, 270.0), (8 * GIB, 390.0), (math.inf, 900.0)),
              64 * KIB: ((4 * MIB, 270.0), (512 * MIB, 330.0), (math.inf, 700.0))}
GRANULE = {"l1": (32, 33.0, 270.0), "l2": (64, 270.0, 650.0)}  # bytes, cycles hit, cycles miss
SM_COUNT = 132


def chase_latency(ws, levels):
    lat, h_prev = 0.0, 0.0
    for cap, cycles in levels:
        h = 1.0 if math.isinf(cap) else min(1.0, cap / ws)
        lat += max(0.0, h - h_prev) * cycles
        h_prev = max(h_prev, h)
    return lat


def log_sizes(lo, hi, per_octave, stride):
    out = []
    for i in range(int(math.log2(hi / lo) * per_octave + 1e-9) + 1):
        ws = max(stride, round(lo * 2 ** (i / per_octave) / stride) * stride)
        if ws <= hi and (not out or ws > out[-1]):
            out.append(ws)
    return out


def benchmarks(top=4 * GIB):
    """(name, {counter: value}) of a latency run without noise."""
    out = []

    def point(name, ws, stride, cycles):
        out.append((name, {"cycles_per_load": cycles, "ns_per_load": cycles / CLOCK_GHZ, "working_set_bytes": ws,
                           "stride_bytes": stride, "loads": 16384, "sm_clock_mhz": CLOCK_GHZ * 1e3}))

    for ws in log_sizes(KIB, top, 3, 128):
        point(f"latency/chase/ws:{ws}/stride:128", ws, 128, chase_latency(ws, CACHE_LEVELS))
    for ws in log_sizes(KIB, top, 2, 128):
        point(f"latency/chase/l2only/ws:{ws}/stride:128", ws, 128, chase_latency(ws, L2_LEVELS))
    for stride, levels in TLB_LEVELS.items():
        for ws in log_sizes(2 * stride, 32 * GIB if stride == 2 * MIB else top, 2, stride):
            point(f"latency/chase/l2only/ws:{ws}/stride:{stride}", ws, stride, chase_latency(ws, levels))
    for cv, levels in CARVEOUT_LEVELS.items():
        for ws in log_sizes(4 * KIB, 512 * KIB, 2, 128):
            point(f"latency/chase/carveout:{cv}/ws:{ws}/stride:128", ws, 128, chase_latency(ws, levels))
    for level, (g, hit, miss) in GRANULE.items():
        for s in (8, 16, 32, 64, 128, 256):
            point(f"latency/stride_sweep/{level}/ws:{MIB}/stride:{s}", MIB, s, hit + (miss - hit) * min(1.0, s / g))
    for ws in (128, 4096 * 128):
        per_sm = {f"sm{i}_cycles": (264.0 if i % 2 == 0 else 480.0) if ws == 128 else 372.0 + i % 5
                  for i in range(SM_COUNT)}
        vals = sorted(per_sm.values())
        out.append((f"latency/sm_spread/ws:{ws}/stride:128",
                    {"cycles_min": vals[0], "cycles_median": vals[len(vals) // 2], "cycles_p95": vals[int(0.95 * (len(vals) - 1))],
                     "cycles_max": vals[-1], "ns_median": vals[len(vals) // 2] / CLOCK_GHZ, "sms": SM_COUNT,
                     "working_set_bytes": ws, **per_sm}))
    return out


def suite_json(shape="1.8.3", reps=5, noise=0.01, seed=0, gpu_name="NVIDIA H200"):
    rng = np.random.default_rng(seed)
    out = []
    for inst, (name, counters) in enumerate(benchmarks()):
        t = counters.get("cycles_per_load", 300) * 16384 / CLOCK_GHZ * 1e-9
        rows = [{k: v * float(np.exp(rng.normal(0, noise))) if k.startswith(("cycles", "ns", "sm")) and k != "sms" else v
                 for k, v in counters.items()} for _ in range(reps)]
        out += [synth._entry(shape, name, "iteration", reps, 0, inst, "us", t, row, rep=r) for r, row in enumerate(rows)]
    ctx = synth.context(gpu_name, shape)
    ctx.update(l2_bytes=str(60 * MIB), l1_smem_per_sm_bytes=str(256 * KIB), global_mem_bytes=str(141 * 10**9))
    return {"context": ctx, "benchmarks": out}


def write(path, **kw):
    with open(path, "w") as f:
        json.dump(suite_json(**kw), f)
    return path


if __name__ == "__main__":
    write(sys.argv[1])
    print(sys.argv[1], "with", len(benchmarks()), "latency benchmarks", file=sys.stderr)
