"""Suite JSON for the Python tests, in the shape Google Benchmark 1.7.1 or 1.8.3 writes with
--benchmark_repetitions and manual time, built from a real H200 run: every benchmark, time and counter
comes from tests/python/data/h200_cut.json (cut from results/h200 by data/cut.py), with noisy repetitions
drawn around the recorded median. No model is recomputed here.

Run directly to get a file to look at: python3 tests/python/synth.py out.json [1.7.1|1.8.3]
"""
import json
import statistics
import sys
from pathlib import Path

import numpy as np

from gpubench.families import canonical  # (barriers as gpubench now names them: sync/<primitive>/...)

DATA = Path(__file__).parent / "data"
RECORDED = DATA / "h200_cut.json"
UNIT_SCALE = {"ns": 1e9, "us": 1e6, "ms": 1e3, "s": 1.0}
_NOT_COUNTERS = {"name", "run_name", "run_type", "repetitions", "repetition_index", "aggregate_name",
                 "aggregate_unit", "real_time", "time_unit", "family_index", "per_family_instance_index",
                 "threads", "iterations", "cpu_time", "error_occurred", "error_message"}
_recorded = None


def recorded():
    """The recorded run as a dict (loaded once)."""
    global _recorded
    if _recorded is None:
        with open(RECORDED) as f:
            _recorded = json.load(f)
    return _recorded


def context(gpu_name, shape, suite="gpu-memory-microbench"):
    ctx = {k: v for k, v in recorded()["context"].items() if k != "cut_from"}
    ctx.update(gpu_name=gpu_name, suite=suite)
    if shape == "1.8.3":
        ctx["json_schema_version"] = 1
    return ctx


def benchmarks():
    """(logical name, time unit, recorded median seconds per launch, {counter: (value, scales_with_1/time)})."""
    out = []
    for e in recorded()["benchmarks"]:
        if e.get("aggregate_name") != "median":
            continue
        counters = {k: (float(v), k.endswith("_per_second")) for k, v in e.items()
                    if k not in _NOT_COUNTERS and isinstance(v, (int, float)) and not isinstance(v, bool)}
        unit = e["time_unit"]
        out.append((canonical(e["run_name"].removesuffix("/manual_time")), unit, e["real_time"] / UNIT_SCALE[unit],
                    counters))
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


def suite_json(**kw):
    """The JSON document _build(**kw) makes (see there), a fresh copy: the caller may change it."""
    return json.loads(_text(**kw))


def write(path, **kw):
    with open(path, "w") as f:
        f.write(_text(**kw))
    return path


_texts = {}  # the last few documents made, as written: a test process asks for the same one often


def _text(**kw):
    """json.dumps(_build(**kw), indent=2), made once per process for each kw (a document depends on kw alone:
    its noise comes from a generator seeded with kw's seed). Each costs about 0.3 s to make."""
    key = json.dumps(kw, sort_keys=True, default=sorted)  # sets and lists of names as sorted lists
    if key not in _texts:
        if len(_texts) >= 24:  # about 4 MB each
            del _texts[next(iter(_texts))]
        _texts[key] = json.dumps(_build(**kw), indent=2)
    return _texts[key]


def _build(shape="1.8.3", reps=5, seed=0, gpu_name="NVIDIA H200", noise=0.01, slow=None, errors=None,
           skips=None, only=None, drop=(), aggregates_only=False, suite="gpu-memory-microbench", old_names=False):
    """Build the JSON document. slow: {name: factor on time}; errors: {name: message}; skips: {name: reason}
    (1.8.3: "skipped"; 1.7.1: an error "skipped: reason", as mh::skip_benchmark writes them);
    only: family names to keep; drop: benchmark names to leave out; old_names: barriers under their names
    from before the rename (syncthreads/... instead of sync/syncthreads/...)."""
    rng = np.random.default_rng(seed)
    slow, errors, skips = slow or {}, errors or {}, skips or {}
    out, families = [], {}
    for name, unit, t0, counters in benchmarks():
        fam_name = name.split("/")[0]
        if (only and fam_name not in only) or name in drop:
            continue
        fam = families.setdefault(fam_name, [len(families), 0])
        inst, fam[1] = fam[1], fam[1] + 1
        written = name.removeprefix("sync/") if old_names else name

        if name in errors or name in skips:  # errored or skipped repetitions, and no aggregates
            for r in range(reps):
                e = _entry(shape, written, "iteration", reps, fam[0], inst, unit, 0.0, {}, rep=r)
                if name in errors:
                    e.update(error_occurred=True, error_message=errors[name])
                elif shape == "1.8.3":
                    e.update(skipped=True, skip_message=skips[name])
                else:
                    e.update(error_occurred=True, error_message="skipped: " + skips[name])
                out.append(e)
            continue
        ts = t0 * slow.get(name, 1.0) * np.exp(rng.normal(0.0, noise, reps))
        rows = [{k: (v * t0 / t if rate else v) for k, (v, rate) in counters.items()} for t in ts]
        if not aggregates_only:
            out += [_entry(shape, written, "iteration", reps, fam[0], inst, unit, float(t), row, rep=r)
                    for r, (t, row) in enumerate(zip(ts, rows))]
        if reps > 1:  # no aggregates for a single repetition
            stats = {"mean": statistics.fmean, "median": statistics.median, "stddev": statistics.stdev}
            if shape == "1.8.3":  # cv aggregate absent in the older shape
                stats["cv"] = lambda xs: statistics.stdev(xs) / statistics.fmean(xs) if statistics.fmean(xs) else 0.0
            for agg, fn in stats.items():
                vals = {k: float(fn([row[k] for row in rows])) for k in counters}
                out.append(_entry(shape, written, "aggregate", reps, fam[0], inst, unit, float(fn(list(ts))), vals,
                                  agg=agg))
    return {"context": context(gpu_name, shape, suite), "benchmarks": out}



if __name__ == "__main__":
    write(sys.argv[1], **({"shape": sys.argv[2]} if len(sys.argv) > 2 else {}))
    print(sys.argv[1], "with", len(benchmarks()), "benchmarks", file=sys.stderr)
