"""Synthetic gpubench JSON for the Python tests: every family, plausible H200-like numbers, noisy repetitions,
in the shape Google Benchmark 1.7.1 or 1.8.3 writes with --benchmark_repetitions and manual time.

Run directly to get a file to look at: python3 tests/python/synth.py out.json
"""
import json
import statistics
import sys

import numpy as np

SM_CLOCK_HZ = 1.98e9
SM_COUNT = 132
UNIT_SCALE = {"ns": 1e9, "us": 1e6, "ms": 1e3, "s": 1.0}
GEMM_GFLOPS = {"naive": 900, "coalesced": 2800, "smem": 9500, "smem_conflicted": 6000, "smem_padded": 10500,
               "cublas": 52000}
GEMM_SIZES = (256, 512, 1024, 2048, 4092)


def context(gpu_name, shape, suite="gpu-memory-microbench"):
    ctx = {"date": "2025-06-01T12:00:00+00:00", "host_name": "gpu-box", "executable": "./build/gpubench",
           "num_cpus": 16, "mhz_per_cpu": 3000, "cpu_scaling_enabled": False,
           "caches": [{"type": "Data", "level": 1, "size": 49152, "num_sharing": 2}],
           "load_avg": [0.4, 0.3, 0.2], "library_build_type": "release",
           "suite": suite, "gpu_name": gpu_name, "compute_capability": "9.0", "sm_count": str(SM_COUNT),
           "sm_clock_mhz": "1980", "mem_clock_mhz": "2619", "l2_bytes": "52428800",
           "driver_version": "550.54.15", "runtime_version": "12.4", "sm_clock_observed_mhz": "1975"}
    if shape == "1.8.3":
        ctx["json_schema_version"] = 1
    return ctx


def smem_ways(width, stride, pad=0, swizzle=False):
    """Bank conflict ways of one warp reading element i*stride (width bytes each) from shared memory."""
    words, per_phase = width // 4, 128 // width  # 4-byte banks touched per element; threads per 128-byte phase
    worst = 1
    for phase in range(32 // per_phase):
        banks = {}
        for t in range(phase * per_phase, (phase + 1) * per_phase):
            e = t * stride
            row, col = divmod(e, 32)
            col = (col ^ (row % 32)) if swizzle else col
            word = (row * (32 + pad) + col) * words
            for w in range(words):
                banks.setdefault((word + w) % 32, set()).add(word + w)
        worst = max(worst, max(len(s) for s in banks.values()))
    return worst


def benchmarks():
    """(logical name, time unit, seconds per launch, {counter: (value, scales_with_1/time)})."""
    out = []
    for op in ("read", "write"):
        for level, peak, nbytes in (("hbm", 4.0e12, 2**28), ("l2", 11e12, 2**24), ("l1", 28e12, 2**22)):
            for s in (1, 2, 3, 4, 8, 16, 32, 64, 128):
                sectors = min(4 * s, 32)
                bus = peak * (0.92 if op == "read" else 0.85) * (1 if s == 1 else 0.97)
                useful = bus * 4 / sectors
                out.append((f"coalescing/{op}/{level}/stride:{s}", "us", nbytes / useful,
                            {"useful_bytes_per_second": (useful, True), "bus_bytes_per_second": (bus, True),
                             "sectors_per_request": (sectors, False), "launches_per_sample": (20, False)}))
    out.append(("ceiling/memcpy_d2d", "us", 2**29 / 3.9e12, {"bytes_per_second": (3.9e12, True)}))
    out.append(("ceiling/fma", "us", 2**32 / 60e12, {"flops_per_second": (60e12, True)}))
    for target, bw in (("smem", 30e12), ("l1", 27e12), ("l2", 11e12), ("hbm", 4.1e12)):
        out.append((f"ceiling/{target}_read", "us", 2**26 / bw, {"bytes_per_second": (bw, True)}))
    strides = (0, 1, 2, 3, 4, 8, 16, 32, 33, 64)
    for width in (4, 8, 16):
        layouts = [(f"stride:{s}/pad:{p}", s, p, False) for p in (0, 1) for s in strides]
        layouts += [(f"swizzle/stride:{s}", s, 0, True) for s in strides]
        for mode in ("latency", "throughput", "store_throughput"):
            for tail, s, pad, swz in layouts:
                if swz and mode == "store_throughput":
                    continue
                ways = smem_ways(width, s, pad, swz)
                cycles = ways * width / 4 * 1.05 + 0.2
                name = f"smem_banks/{mode}/width:{width}/{tail}"
                if mode == "latency":
                    lat = 29 + 2.0 * (ways - 1) * width / 4
                    out.append((name, "us", 4096 * lat / SM_CLOCK_HZ,
                                {"cycles_per_access": (lat, False), "conflict_ways": (ways, False)}))
                else:
                    t = 2**20 * cycles / SM_CLOCK_HZ / 4
                    bw = 32 * width * SM_COUNT * SM_CLOCK_HZ / cycles / 4
                    out.append((name, "us", t, {"bytes_per_second": (bw, True),
                                                "cycles_per_request": (cycles, False), "conflict_ways": (ways, False)}))
    for prim, base, per_warp in (("syncthreads", 20, 2.2), ("syncwarp", 4, 0.0), ("named_barrier", 24, 2.4)):
        for threads in (32, 64, 128, 256, 512, 1024):
            for b in (1, 2, 4):
                if threads * b > 2048:
                    continue
                cyc = base + per_warp * threads / 32 * (1 + 0.15 * (b - 1))
                out.append((f"{prim}/threads:{threads}/blocks_per_sm:{b}", "us", 1e4 * cyc / SM_CLOCK_HZ,
                            {"cycles_per_barrier": (cyc, False), "ns_per_barrier": (cyc / SM_CLOCK_HZ * 1e9, False)}))
    for kernel, gflops in GEMM_GFLOPS.items():
        for n in GEMM_SIZES:
            f = gflops * 1e9 * min(1.0, (n / 2048) ** 0.5)
            out.append((f"gemm/{kernel}/m:{n}/n:{n}/k:{n}", "ms", 2 * n**3 / f,
                        {"flops_per_second": (f, True), "max_rel_err": (3e-6 if kernel != "cublas" else 1e-6, False)}))
    return out


def _entry(shape, name, run_type, reps, fam, inst, unit, t, values, rep=None, agg=None):
    e = {"name": name + "/manual_time" + (f"_{agg}" if agg else "")}
    if shape == "1.8.3":
        e.update(family_index=fam, per_family_instance_index=inst)
    e.update(run_name=name + "/manual_time", run_type=run_type, repetitions=reps)
    if rep is not None:
        e["repetition_index"] = rep
    if shape == "1.8.3":
        e["threads"] = 1
    if agg:
        e["aggregate_name"] = agg
        if shape == "1.8.3":
            e["aggregate_unit"] = "percentage" if agg == "cv" else "time"
    e.update(iterations=reps if agg else 200, real_time=t * (1 if agg == "cv" else UNIT_SCALE[unit]),
             cpu_time=(t * 0.05 + 4e-6) * (1 if agg == "cv" else UNIT_SCALE[unit]), time_unit=unit)
    e.update(values)
    return e


def suite_json(shape="1.8.3", reps=5, seed=0, gpu_name="NVIDIA H200", noise=0.01, slow=None, errors=None,
               only=None, drop=(), aggregates_only=False, suite="gpu-memory-microbench"):
    """Build the JSON document. slow: {name: factor on time}; errors: {name: message};
    only: family names to keep; drop: benchmark names to leave out."""
    rng = np.random.default_rng(seed)
    slow, errors = slow or {}, errors or {}
    out, families = [], {}
    for name, unit, t0, counters in benchmarks():
        fam_name = name.split("/")[0]
        if (only and fam_name not in only) or name in drop:
            continue
        fam = families.setdefault(fam_name, [len(families), 0])
        inst, fam[1] = fam[1], fam[1] + 1

        if name in errors:  # Google Benchmark reports errored repetitions and computes no aggregates
            for r in range(reps):
                e = _entry(shape, name, "iteration", reps, fam[0], inst, unit, 0.0, {}, rep=r)
                e.update(error_occurred=True, error_message=errors[name])
                out.append(e)
            continue
        ts = t0 * slow.get(name, 1.0) * np.exp(rng.normal(0.0, noise, reps))
        rows = [{k: (v * t0 / t if rate else v) for k, (v, rate) in counters.items()} for t in ts]
        if not aggregates_only:
            out += [_entry(shape, name, "iteration", reps, fam[0], inst, unit, float(t), row, rep=r)
                    for r, (t, row) in enumerate(zip(ts, rows))]
        if reps > 1:  # no aggregates for a single repetition
            stats = {"mean": statistics.fmean, "median": statistics.median, "stddev": statistics.stdev}
            if shape == "1.8.3":  # cv aggregate absent in the older shape
                stats["cv"] = lambda xs: statistics.stdev(xs) / statistics.fmean(xs)
            for agg, fn in stats.items():
                vals = {k: float(fn([row[k] for row in rows])) for k in counters}
                out.append(_entry(shape, name, "aggregate", reps, fam[0], inst, unit, float(fn(list(ts))), vals,
                                  agg=agg))
    return {"context": context(gpu_name, shape, suite), "benchmarks": out}


def write(path, **kw):
    with open(path, "w") as f:
        json.dump(suite_json(**kw), f, indent=2)
    return path


if __name__ == "__main__":
    write(sys.argv[1], **({"shape": sys.argv[2]} if len(sys.argv) > 2 else {}))
    print(sys.argv[1], "with", len(benchmarks()), "benchmarks", file=sys.stderr)
