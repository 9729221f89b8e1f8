"""Synthetic per-GPU gpubench JSON for the link plots and the node report: the link family (shaped like
micro/bench_link.cu's names and counters, H200-like rates) plus a few other families, in Google Benchmark
1.7.1 or 1.8.3 shape (tests/python/synth.py's entries), with the link context keys micro/link.cu writes.
"""
import json

import numpy as np

import synth

SIZES = [2**e for e in (10, 13, 16, 19, 22, 25, 28, 30)]
PAGEABLE_MAX = 32 << 20
PCIE_PEAK = 63.015e9
NVLINK_PEAK = 478.116e9


def _bw(size, peak, latency_s):
    """A link that costs latency_s per transfer and then runs at peak."""
    return size / (latency_s + size / peak)


def link_benchmarks(device=0, peer=1, scale=None):
    """(name, unit, seconds per launch, counters) like synth.benchmarks(); scale: {name prefix: factor on rate}."""
    scale = scale or {}
    out = []

    def add(name, moved, bw, extra=None):
        f = next((v for k, v in scale.items() if name.startswith(k)), 1.0)
        counters = {"bytes_per_second": (bw * f, True), "launches_per_sample": (10, False)}
        counters.update(extra or {})
        out.append((name, "us", moved / (bw * f), counters))

    for path, peak, bidir in (("h2d", 53.5e9, 1), ("d2h", 55.3e9, 1), ("bidir", 100e9, 2)):
        for size in SIZES:
            add(f"link/{path}/pinned/ce/bytes:{size}", bidir * size, _bw(bidir * size, peak, 8e-6))
            add(f"link/{path}/pinned/sm/bytes:{size}", bidir * size, _bw(bidir * size, peak * 0.97, 4e-6))
            if size <= PAGEABLE_MAX:
                add(f"link/{path}/pageable/ce/bytes:{size}", bidir * size, _bw(bidir * size, peak * 0.35, 12e-6))
    if peer is not None:
        ends = {"device": (device, False), "peer_device": (peer, False)}
        for mode, bidir in (("uni", 1), ("bidir", 2)):
            for method, eff in (("ce", 0.83), ("sm", 0.88)):
                for size in SIZES:
                    add(f"link/peer/{mode}/{method}/bytes:{size}", bidir * size,
                        _bw(bidir * size, NVLINK_PEAK * eff * bidir * 0.93 ** (bidir - 1), 10e-6), ends)
    for where, ns in (("host", 1050.0), ("peer", 820.0)):
        if where == "peer" and peer is None:
            continue
        extra = {"cycles_per_load": (ns * 1.98, False), "ns_per_load": (ns, False),
                 "working_set_bytes": (2 * 62914560, False)}
        if where == "peer":
            extra.update(ends)
        out.append((f"latency/link/{where}", "us", 1024 * ns * 1e-9, extra))
    return out


def node_doc(device=0, peer=1, scale=None, uuid=None, shape="1.8.3", reps=5, seed=0, noise=0.005,
             context_extra=None, gpu_name="NVIDIA H200"):
    """One GPU's benchmarks.json document: link family + coalescing/ceiling/sync from synth.benchmarks()."""
    rng = np.random.default_rng(seed)
    scale = scale or {}
    others = []
    for name, unit, t0, counters in synth.benchmarks():
        if name.split("/")[0] in ("ceiling", "syncthreads") or name.startswith("coalescing/read/hbm"):
            f = next((v for k, v in scale.items() if name.startswith(k)), 1.0)
            others.append((name, unit, t0 / f, {k: ((v * f) if rate else v, rate) for k, (v, rate) in counters.items()}))
    entries = []
    for fam, (name, unit, t0, counters) in enumerate(others + link_benchmarks(device, peer, scale)):
        ts = t0 * np.exp(rng.normal(0.0, noise, reps))
        for r, t in enumerate(ts):
            row = {k: (v * t0 / t if rate else v) for k, (v, rate) in counters.items()}
            entries.append(synth._entry(shape, name, "iteration", reps, fam, 0, unit, float(t), row, rep=r))
    ctx = synth.context(gpu_name, shape)
    ctx.update(gpu_uuid=uuid or f"GPU-0000000{device}-aaaa-bbbb-cccc-dddddddddddd", link_info_source="nvml",
               pcie_gen="5", pcie_width="16", pcie_peak_bytes_per_second=f"{PCIE_PEAK:.0f}",
               nvlink_count="18", nvlink_peak_bytes_per_second=f"{NVLINK_PEAK:.0f}")
    ctx.update(context_extra or {})
    return {"context": ctx, "benchmarks": entries}


def write(path, **kw):
    with open(path, "w") as f:
        json.dump(node_doc(**kw), f, indent=1)
    return path
