#!/usr/bin/env python3
"""GEMM time bounds: the counting model's counts (model_* counters, model/gemm_model.hpp) times unit
costs measured by the micro benchmarks of the same run. The largest bound is the predicted binding
resource; measured / bound says how much the model leaves unexplained.

usage: bounds.py BENCHMARKS.json   (prints the Markdown table; report.py includes the same table)
Exit status: 0, or 2 for a file that is not usable suite JSON.
"""
import argparse
import math
import sys

from gpubench import suite_json
from gpubench import tables

# Each unit cost and the benchmark it is measured by (README "GEMM bounds").
UNITS = {
    "ffma_per_s": "ceiling/fma flops_per_second / 2",
    "l1_requests_per_s": "warp requests L1TEX accepts: the larger of coalescing/read/l1/stride:1 and "
                         "smem_banks/throughput/width:4/stride:1/pad:0, bytes/s / 128",
    "l1_lines_per_s": "coalescing/read/l1/stride:33: useful bytes/s / 128 x 32 lines per request",
    "l1_lines_per_s_pow2": "coalescing/read/l1/stride:32 (lanes a power of two of bytes apart), likewise",
    "l1_bytes_per_s": "ceiling/read/l1 bytes/s (older runs: coalescing/read/l1/*, the largest bus bytes/s; "
                      "roofline only)",
    "l2_bytes_per_s": "ceiling/read/l2 bytes/s (older runs: coalescing/read/l2/*, the largest bus bytes/s)",
    "hbm_bytes_per_s": "ceiling/read/hbm bytes/s (older runs: coalescing/read/hbm/stride:1 useful bytes/s)",
    "smem_wavefronts_per_s": "smem_banks/throughput/width:4/stride:1/pad:0 bytes/s / 128",
    "barrier_s": "sync/syncthreads/threads:1024/blocks_per_sm:2 ns_per_barrier",
}
KERNELS = ("naive", "coalesced", "smem", "smem_conflicted", "smem_padded",
           "blocktile_1d", "blocktile_2d", "vectorized", "warptile", "warptile_tuned")
# The BF16 tensor-core ladder (gemm/tc_gemm.cu, issue 30): gemm/<kernel>/... too, but not FP32 FFMA kernels.
TENSOR_CORE_KERNELS = ("cublas_bf16", "wmma", "mma_swizzled", "mma_conflicted", "cp_async", "cp_async_1stage",
                       "wgmma_tma", "wgmma_ws", "wgmma_persistent", "wgmma_multicast")
# Those with a counting model (model/tc_gemm_model.hpp): every kernel of ours, not cuBLAS.
TENSOR_CORE_MODELLED = tuple(k for k in TENSOR_CORE_KERNELS if k != "cublas_bf16")
RESOURCES = ("FMA", "L1 (requests, lines)", "L2", "HBM", "shared memory", "barriers")


def unit_costs(suite):
    """Unit -> value, from the run's medians; a unit whose benchmark is missing is left out."""
    v = suite.value
    u = {}
    if (f := v("ceiling/fma", "flops_per_second")):
        u["ffma_per_s"] = f / 2
    # Global and shared loads go through the same L1TEX request path; whichever benchmark drives it
    # harder measures its rate (the coalescing kernel spends issue slots on address arithmetic).
    req = [b / 128 for b in (v("coalescing/read/l1/stride:1", "useful_bytes_per_second"),
                             v("smem_banks/throughput/width:4/stride:1/pad:0", "bytes_per_second")) if b]
    if req:
        u["l1_requests_per_s"] = max(req)
    # L1 tag throughput depends on how far apart the lines are: 32 lines a power of two of bytes
    # apart went 1 per clock on the H200, 33-float strides faster (README "GEMM bounds").
    for key, stride in (("l1_lines_per_s", 33), ("l1_lines_per_s_pow2", 32)):
        if (b := v(f"coalescing/read/l1/stride:{stride}", "useful_bytes_per_second")):
            u[key] = b / 128 * 32
    # The roofs: the ceiling family's read kernels, built to reach each level's limit; runs from before
    # it existed fall back to the coalescing sweeps (their README numbers still reproduce).
    for level in ("l1", "l2"):
        bus = [r.get("bus_bytes_per_second") for r in suite.ok("coalescing")
               if r.fields.get("op") == "read" and r.fields.get("level") == level]
        if (b := v(f"ceiling/read/{level}", "bytes_per_second")):
            u[f"{level}_bytes_per_s"] = b
        elif bus:
            u[f"{level}_bytes_per_s"] = max(bus)
    if (b := v("ceiling/read/hbm", "bytes_per_second") or v("coalescing/read/hbm/stride:1", "useful_bytes_per_second")):
        u["hbm_bytes_per_s"] = b
    if (b := v("smem_banks/throughput/width:4/stride:1/pad:0", "bytes_per_second")):
        u["smem_wavefronts_per_s"] = b / 128
    if (ns := v("sync/syncthreads/threads:1024/blocks_per_sm:2", "ns_per_barrier")) is not None:
        u["barrier_s"] = ns * 1e-9
    return u


def bounds(rec, units, sm_count):
    """Resource -> seconds for one GEMM record (only the resources whose unit cost is known)."""
    c = rec.get
    out = {}
    if "ffma_per_s" in units:
        out["FMA"] = c("model_ffma_thread") / units["ffma_per_s"]
    # The naive kernel's lanes are K floats apart: the power-of-two line rate applies when K is one.
    k = rec.fields.get("k", 0)
    lines_key = "l1_lines_per_s_pow2" if rec.fields.get("kernel") == "naive" and k & (k - 1) == 0 else "l1_lines_per_s"
    if {"l1_requests_per_s", lines_key} <= units.keys():
        out["L1 (requests, lines)"] = max(c("model_ld_requests") / units["l1_requests_per_s"],
                                          c("model_ld_lines") / units[lines_key])
    if "l2_bytes_per_s" in units:
        out["L2"] = c("model_l2_read_sectors") * 32 / units["l2_bytes_per_s"]
    if "hbm_bytes_per_s" in units:  # with the L2 reuse rule's bytes where the model.json has them
        dram = c("model_dram_bytes_reuse") if rec.has("model_dram_bytes_reuse") else c("model_dram_bytes")
        out["HBM"] = dram / units["hbm_bytes_per_s"]
    if "smem_wavefronts_per_s" in units:
        out["shared memory"] = (c("model_lds_wavefronts") + c("model_sts_wavefronts")) / units["smem_wavefronts_per_s"]
    if "barrier_s" in units and sm_count:
        # Barriers of the blocks resident on one SM overlap: charge them per resident block slot.
        slots = sm_count * c("model_blocks_per_sm")
        out["barriers"] = c("model_block_barriers") * units["barrier_s"] / slots
    return {k: v for k, v in out.items() if not math.isnan(v)}


def rows(suite):
    """[(record, bounds, binding resource, measured seconds)] for every modelled GEMM benchmark."""
    units = unit_costs(suite)
    sm = float(suite.context.get("sm_count", 0) or 0)
    out = []
    for r in suite.ok("gemm"):
        if r.fields.get("kernel") not in KERNELS or not r.has("model_ffma_thread"):
            continue
        b = bounds(r, units, sm)
        if b:
            out.append((r, b, max(b, key=b.get), r.get(suite_json.TIME)))
    return out


def markdown(suite, only_sizes=None):
    """The bounds table; only_sizes keeps shapes with m in it (e.g. {4092, 4096})."""
    units = unit_costs(suite)
    lines = ["Unit costs, measured in this run:", ""]
    for key, how in UNITS.items():
        if key in units:
            val = units[key]
            lines.append(f"- `{key}` = {val * 1e9:.3g} ns ({how})" if key == "barrier_s" else f"- `{key}` = {val:.4g} ({how})")
        else:
            lines.append(f"- `{key}`: not measured in this run ({how})")
    resources = RESOURCES
    ms = lambda t: f"{t * 1e3:.3g} ms"
    table = [[r.name] + [ms(b[k]) if k in b else "n/a" for k in resources]
             + [binding, ms(measured), f"{measured / b[binding]:.2f}" if b[binding] > 0 else "n/a"]
             for r, b, binding, measured in rows(suite) if not only_sizes or r.fields.get("m") in only_sizes]
    lines += [""] + tables.markdown(["benchmark", *resources, "binding", "measured", "measured / bound"], table)[:-1]
    return "\n".join(lines) + "\n"


@suite_json.cli("bounds")
def main(argv=None):
    p = argparse.ArgumentParser(prog="bounds", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("json", help="benchmarks.json written by gpubench --benchmark_out")
    suite = suite_json.load_or_exit(p.parse_args(argv).json, "bounds")
    print(markdown(suite))
    return 0


if __name__ == "__main__":
    sys.exit(main())
