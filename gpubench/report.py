#!/usr/bin/env python3
"""Markdown report of one suite run, summary first: a verdict on the run's health, the run table (GPU, code,
start, self-check, counts, comparison, throttled samples), warnings (debug Google Benchmark, code from PTX),
the headline figures against the physical limits the context allows (gpubench/analysis/limits.py), the
compare.txt summary; then each family with its pictures and a compact (pivoted) table; skips grouped by
reason; last an appendix with every fact and every full table, so nothing measured is left out.

Each family names its section functions (defined here) and pictures in gpubench/families.py; the sections in
APPENDIX are full tables the body replaces by the family's COMPACT view. Families no section claims still
appear in a generic table.
Exit status: 0, or 2 for an unusable input or an output it refuses to write (its input, a committed file).
"""
import argparse
import math
import os
import re
import sys

from gpubench import families, suite_json, tables
from gpubench.analysis import bounds, copies, hierarchy, ladder, latency_levels, limits, tensor_core
from gpubench.analysis import energy as energy_levels
from gpubench.tables import MISSING, human_bytes, num, pivot

PROG = "report"
FACTS = (("GPU", "gpu_name"), ("Compute capability", "compute_capability"), ("SMs", "sm_count"),
         ("SM clock, rated (MHz)", "sm_clock_mhz"), ("SM clock, observed (MHz)", "sm_clock_observed_mhz"),
         ("Memory clock (MHz)", "mem_clock_mhz"), ("L2 (bytes)", "l2_bytes"), ("Driver", "driver_version"),
         ("CUDA runtime", "runtime_version"), ("Host", "host_name"), ("Date", "date"),
         ("Google Benchmark build", "library_build_type"), ("GPU UUID", "gpu_uuid"),
         ("Suite version", "suite_version"), ("Git commit", "git_commit"))
# Section functions (families.py `sections`) whose full tables go to the appendix: the body shows the
# family's COMPACT view instead (below).
APPENDIX = ("coalescing", "links", "smem_banks", "barriers", "gemm", "gemm_bounds")
# The run is 'healthy' when: no errors, at most this share of samples throttled, the observed SM clock at
# least this share of the rated one, and every measured roof and link at least this share of its limit.
HEALTH = {"throttled": 0.05, "clock": 0.95, "ratio": 0.80}
HEALTH_RULE = (f"(Healthy: no errors, at most {HEALTH['throttled'] * 100:.0f} % of samples throttled, SM clock "
               f"at least {HEALTH['clock'] * 100:.0f} % of rated, every roof and link with a limit at "
               f"{HEALTH['ratio']:.2f} of it or more.)")
CHANGE_LISTS = ("Slower", "Faster", "Regressions", "Improvements")  # compare.txt lists that name changes
COMPARE_EXAMPLES = 3
SKIP_EXAMPLES = 3


table = tables.markdown


def field(key):
    return lambda r: r.fields.get(key, "")


def counter(name, scale=1.0):
    return lambda r: num(r.get(name), scale)


def whole(name):
    """A counter that is a count or a size (stages, bytes, SM ids): no decimals."""
    return lambda r: MISSING if math.isnan(r.get(name)) else f"{r.get(name):,.0f}"


def family_table(recs, columns):
    """columns: (header, record -> cell). Time and its CV close every row: CV is the run-to-run noise of
    the per-launch time, which the rate counters derived from it share."""
    cv = lambda r: "–" if math.isnan(r.cv.get(suite_json.TIME, math.nan)) else f"{r.cv[suite_json.TIME] * 100:.1f}"
    columns = list(columns) + [("time (µs)", counter(suite_json.TIME, 1e6)), ("CV %", cv)]
    return table([h for h, _ in columns], [[fn(r) for _, fn in columns] for r in recs])


def section(title, recs, columns):
    return ["## " + title, ""] + family_table(recs, columns) if recs else []


def coalescing(suite):
    return section("Coalescing", suite.ok("coalescing"), [
        ("op", field("op")), ("level", field("level")), ("stride", field("stride")),
        ("useful GB/s", counter("useful_bytes_per_second", 1e-9)), ("bus GB/s", counter("bus_bytes_per_second", 1e-9)),
        ("sectors/request", counter("sectors_per_request")),
        ("G requests/s", counter("requests_per_second", 1e-9))])  # coalescing/mix/*: warp load instructions


# The energy benchmark measuring each ceiling's kernel (micro/bench_energy.cu), for the Ceilings table.
ENERGY_OF = {"ceiling/read/l1": "energy/read/l1", "ceiling/read/l2": "energy/read/l2",
             "ceiling/read/hbm": "energy/read/hbm/data:random", "ceiling/write/hbm": "energy/write/hbm",
             "ceiling/fma": "energy/fma/data:random"}


def ceiling(suite):
    columns = [("ceiling", lambda r: r.name.split("/", 1)[1]), ("GB/s", counter("bytes_per_second", 1e-9)),
               ("B/clk/SM", counter("bytes_per_clock_per_sm")),
               ("working set", lambda r: human_bytes(r.get("working_set_bytes")) if r.has("working_set_bytes") else "–"),
               ("GFLOP/s", counter("flops_per_second", 1e-9))]
    energy = {n: r for n, r in ((n, energy_levels.measured(suite, e)) for n, e in ENERGY_OF.items()) if r}
    if energy:  # the energy family ran: pJ per byte (per FLOP for fma) above idle, beside each level's rate
        columns.append(("pJ/B above idle", lambda r: num(energy_levels.pj(energy[r.name])) if r.name in energy else "–"))
    return section("Ceilings", suite.ok("ceiling"), columns)


def energy(suite):
    """The energy family: per byte or FLOP in total and above idle, the power, and the energy's own CV."""
    unit = lambda r: "FLOP" if r.has("joules_per_flop") else "B"
    cv = lambda r: next((f"{r.cv[c] * 100:.1f}" for c in ("joules_per_byte", "joules_per_flop")
                         if not math.isnan(r.cv.get(c, math.nan))), "–")
    return section("Energy", suite.ok("energy"), [
        ("benchmark", lambda r: r.name.split("/", 1)[1]), ("unit", unit),
        ("pJ per unit", lambda r: num(energy_levels.pj(r, above_idle=False))), ("above idle", lambda r: num(energy_levels.pj(r))),
        ("W", counter("watts")), ("idle W", counter("idle_watts")), ("SM MHz", counter("sm_clock_mhz")),
        ("throttled", counter("throttled")),
        ("source", lambda r: {1.0: "counter", 0.0: "power"}.get(r.get("energy_from_counter"), "–")),
        ("counter period (ms)", counter("energy_counter_period_ms")),
        ("energy CV %", cv)])


def energy_by_level(suite):
    """Each level's latency, bandwidth and energy per byte side by side (gpubench/analysis/energy.py), and
    whether the energy rises level by level as the physics says (issue 31)."""
    found = energy_levels.by_level(suite)
    if not found:
        return []
    lat = latency_levels.headline_levels(suite)
    idle, source = suite.context.get("idle_watts"), suite.context.get("energy_source")

    def latency_of(level):
        cyc, ns = lat.get(level.latency, (None, None))
        return f"{cyc:.0f} cycles ({ns:.0f} ns)" if cyc else "–"
    rows = [[level.label, latency_of(level), num(energy_levels.bytes_per_second(suite, level), 1e-9),
             num(energy_levels.pj_per_byte(suite, level, above_idle=False)), num(pj), f"`{level.benchmark}`"]
            for level, pj in found]
    holds, chain = energy_levels.ordering(suite)
    verdict = {True: "holds", False: "does not hold", None: "cannot be checked"}[holds]
    return ["## Energy by level", "",
            "Per byte at each level, beside its latency (pointer chase) and the bandwidth of the energy benchmark's own "
            "launches; the register level is an FFMA's energy per byte of its three 4-byte operands (arithmetic "
            "included: an upper bound), its GB/s the operand bytes FFMA reads. "
            f"Idle {num(float(idle)) + ' W' if idle else 'not in the context'}, source {source or 'not in the context'}.", "",
            *table(["level", "latency", "GB/s", "pJ/B in total", "pJ/B above idle", "measured by"], rows),
            f"Ordering per byte above idle (register < shared/L1 < L2 < HBM < PCIe) {verdict}: {chain}.", ""]


def banks_only(suite):
    """The bank-conflict benchmarks of smem_banks, without its ldmatrix ones (their own table, ldmatrix())."""
    return [r for r in suite.ok("smem_banks") if r.fields.get("mode") != "ldmatrix"]


def ldmatrix(suite):
    return section("ldmatrix", [r for r in suite.ok("smem_banks") if r.fields.get("mode") == "ldmatrix"], [
        ("matrices", field("x")), ("trans", field("trans")), ("layout", field("layout")),
        ("B/clk/SM", counter("bytes_per_clock_per_sm")), ("cycles/instruction", counter("cycles_per_instruction")),
        ("GB/s", counter("bytes_per_second", 1e-9)), ("wavefronts (model)", counter("wavefronts_per_instruction"))])


def smem_banks(suite):
    layout = lambda r: "swizzle" if r.fields.get("layout") == "swizzle" else f"pad {r.fields.get('pad', 0)}"
    return section("Shared-memory banks", banks_only(suite), [
        ("mode", field("mode")), ("width (B)", field("width")), ("layout", layout), ("stride", field("stride")),
        ("cycles/access", counter("cycles_per_access")), ("cycles/request", counter("cycles_per_request")),
        ("GB/s", counter("bytes_per_second", 1e-9)), ("conflict ways", counter("conflict_ways"))])


def barriers(suite):
    return section("Barriers", suite.ok("sync"), [
        ("primitive", field("primitive")), ("threads", field("threads")), ("blocks/SM", field("blocks_per_sm")),
        ("cycles/barrier", counter("cycles_per_barrier")), ("ns/barrier", counter("ns_per_barrier"))])


def pct_of_cublas(suite, r):
    """GEMM kernel's GFLOP/s as % of cuBLAS at the same m/n/k, or None."""
    shape = r.name.split("/", 2)[2]
    return ratio(r.get("flops_per_second"), suite.value(f"gemm/cublas/{shape}", "flops_per_second"))


def gemm(suite):
    return section("GEMM", suite.ok("gemm"), [
        ("kernel", field("kernel")), ("m", field("m")), ("n", field("n")), ("k", field("k")),
        ("GFLOP/s", counter("flops_per_second", 1e-9)), ("% of cuBLAS", lambda r: num(pct_of_cublas(suite, r), 100)),
        ("max rel err", counter("max_rel_err"))])


def gemm_bounds(suite):
    """The counting model's time bounds at 4092^3 (gpubench/analysis/bounds.py), when the run has model_* counters."""
    if not bounds.rows(suite):
        return []
    return ["## GEMM bounds (model counts × measured unit costs)", "", bounds.markdown(suite, only_sizes={4092, 4096})]


def gemm_ladder(suite):
    """The GEMM ladder at the headline shape (plots/ladder.py): each kernel's GFLOP/s, % of cuBLAS, the
    GFLOP/s its binding bound allows, that resource, measured / bound, and the time model's prediction
    (gpubench/analysis/predict.py): predicted time, predicted / measured and the binding resource."""
    n, steps, cublas = ladder.steps(suite)
    if not steps:
        return []
    _, pred, missing = ladder.predicted(suite)
    ms = lambda t: f"{t * 1e3:.3g} ms" if t else "n/a"

    def model(k):
        measured, predicted, binding = pred.get(k, (None, None, None))
        return [ms(measured), ms(predicted), f"{predicted / measured:.2f}" if predicted and measured else "n/a", binding or "n/a"]
    rows = [[k, num(m, 1e-9), num(m / cublas * 100 if cublas else None), num(b, 1e-9) if b else "n/a",
             res or "n/a", f"{b / m:.2f}" if b and m else "n/a", *model(k)] for k, m, b, res in steps]
    why = (f" No prediction: the run lacks {'; '.join(missing)}." if missing else "")
    return ["## GEMM ladder", "",
            f"Each kernel at {n}×{n}×{n} (`ladder.png`); the bound is the binding row of the GEMM bounds table "
            "as GFLOP/s; time measured / bound > 1 is what the counting model leaves unexplained. The prediction "
            "is the time model's (`predictions.json`, docs/families/issue.md): model counts times unit costs of "
            f"this run, target 0.85-1.15 of measured at 4096³.{why}", "",
            *table(["kernel", "GFLOP/s", "% of cuBLAS", "bound GFLOP/s", "binding resource", "measured / bound",
                    "measured", "predicted", "predicted / measured", "predicted binding"], rows)]


# The families issue 29 and 30 added (async, dsm, tensor, the BF16 tensor-core ladder): each figure beside the
# physical limit its docs page names (gpubench/analysis/copies.py, tensor_core.py) and the ratio to it.

def async_bandwidth(suite):
    """async/<method>/<level>/bandwidth/... (TMA multicast and unicast: tma_multicast) against ceiling/read/<level>."""
    recs = [r for r in copies.async_records(suite, "bandwidth") if copies.method(r) not in CASTS]
    limit = {level: copies.ceiling(suite, level)[0] for level in copies.LEVELS}
    of_limit = lambda r: ratio(r.get("bytes_per_second"), limit.get(r.fields["level"]))
    return section("Asynchronous copies: bandwidth", recs, [
        ("method", copies.method), ("configuration", copies.config), ("level", field("level")),
        ("B/clk/SM", counter("bytes_per_clock_per_sm")), ("TB/s", counter("bytes_per_second", 1e-12)),
        ("ceiling/read/<level> TB/s", lambda r: num(limit.get(r.fields["level"]), 1e-12)),
        ("× ceiling", lambda r: num(of_limit(r))), ("stages", whole("stages"))])


def async_latency(suite):
    """One copy at a time, issue to completion, beside ld_st of the same bytes and level."""
    recs = copies.async_records(suite, "latency")
    base = {(r.fields["level"], r.get("bytes")): r.get("cycles") for r in recs if copies.method(r) == "ld_st"}
    return section("Asynchronous copies: latency", recs, [
        ("method", copies.method), ("configuration", copies.config), ("level", field("level")),
        ("bytes", whole("bytes")), ("cycles", counter("cycles")), ("cycles min", counter("cycles_min")),
        ("× ld_st, same bytes", lambda r: num(ratio(r.get("cycles"), base.get((r.fields["level"], r.get("bytes"))))))])


CASTS = ("tma multicast", "tma unicast")


def dsm_bandwidth(suite):
    """dsm/bandwidth/<read|write>/cluster_size:C against shared memory's 128 B/clk/SM."""
    limit = copies.SMEM_BYTES_PER_CLOCK_PER_SM
    return section("Distributed shared memory: bandwidth", copies.dsm_records(suite, "bandwidth"), [
        ("op", field("op")), ("cluster size", field("cluster_size")), ("B/clk/SM", counter("bytes_per_clock_per_sm")),
        ("TB/s", counter("bytes_per_second", 1e-12)), ("limit B/clk/SM", lambda r: str(limit)),
        ("× limit", lambda r: num(ratio(r.get("bytes_per_clock_per_sm"), limit))), ("SMs used", whole("sms_used"))])


def dsm_latency(suite):
    """dsm/latency/target:*, each beside the plain ld.shared chase (target:own_shared)."""
    own = suite.value("dsm/latency/target:own_shared", "cycles")
    return section("Distributed shared memory: latency", copies.dsm_records(suite, "latency"), [
        ("target", field("target")), ("cycles/load", counter("cycles")),
        ("× own_shared", lambda r: num(ratio(r.get("cycles"), own))), ("reader SM", whole("reader_sm")),
        ("owner SM", whole("owner_sm"))])


def cluster_barrier(suite):
    """dsm/barrier/*: cycles per barrier by cluster size, beside __syncthreads (no datasheet figure)."""
    ref = suite.value("dsm/barrier/syncthreads/cluster_size:1", "cycles_per_barrier")
    return section("Cluster barrier", copies.dsm_records(suite, "barrier"), [
        ("barrier", field("op")), ("cluster size", field("cluster_size")), ("cycles/barrier", counter("cycles_per_barrier")),
        ("× __syncthreads", lambda r: num(ratio(r.get("cycles_per_barrier"), ref))),
        ("clusters", whole("active_clusters"))])


def tma_multicast(suite):
    """async/tma/l2/bandwidth/kind:<multicast|unicast>: bytes delivered and read from L2 against ceiling/read/l2."""
    recs = [r for r in copies.async_records(suite, "bandwidth", "l2") if copies.method(r) in CASTS]
    l2 = copies.ceiling(suite, "l2")[0]
    return section("TMA multicast", sorted(recs, key=lambda r: r.fields.get("cluster_size", 0)), [
        ("kind", field("kind")), ("cluster size", field("cluster_size")),
        ("delivered B/clk/SM", counter("bytes_per_clock_per_sm")), ("delivered TB/s", counter("bytes_per_second", 1e-12)),
        ("L2 read TB/s", counter("l2_read_bytes_per_second", 1e-12)), ("ceiling/read/l2 TB/s", lambda r: num(l2, 1e-12)),
        ("delivered × ceiling", lambda r: num(ratio(r.get("bytes_per_second"), l2))),
        ("L2 read × ceiling", lambda r: num(ratio(r.get("l2_read_bytes_per_second"), l2)))])


def tensor_cores(suite):
    """tensor/<mma|wgmma>/... throughput against the type's dense peak per clock per SM."""
    recs = [r for r in suite.ok("tensor") if "data" in r.fields]
    peak = lambda r: tensor_core.peak_per_clock_per_sm(suite, r)
    return section("Tensor cores: throughput", recs, [
        ("instruction", field("kind")), ("type", field("dtype")), ("form", lambda r: r.fields.get("mode", "")),
        ("N", field("n")), ("data", field("data")), ("FLOP/clk/SM", counter("flops_per_clock_per_sm")),
        ("TFLOP/s", counter("flops_per_second", 1e-12)), ("peak FLOP/clk/SM", lambda r: num(peak(r))),
        ("% of peak", lambda r: num(ratio(r.get("flops_per_clock_per_sm"), peak(r)), 100)),
        ("SM MHz", counter("sm_clock_mhz"))])


def tensor_latency(suite):
    return section("Tensor cores: latency", [r for r in suite.ok("tensor") if r.fields.get("mode") == "latency"], [
        ("instruction", field("kind")), ("type", field("dtype")), ("cycles per dependent mma", counter("cycles"))])


def issue_rates(suite):
    """The issue family (docs/families/issue.md): instructions per clock per SM of FFMA, LDS and their mixes,
    the unit costs the GEMM time model (gpubench predict) reads, and ffma_banks' two register assignments."""
    return section("Instruction issue", suite.ok("issue"), [
        ("kind", field("kind")), ("pattern", field("pattern")), ("ffma", field("ffma")), ("lds", field("lds")),
        ("width (B)", field("width")),
        ("warps/SM", field("warps")), ("instructions/clk/SM", counter("inst_per_clk_sm")),
        ("FFMA/clk/SM", counter("ffma_per_clk_sm")), ("LDS/clk/SM", counter("lds_per_clk_sm")),
        ("cycles/trip", counter("cycles_per_trip"))])


def tc_gemm_ladder(suite):
    """The BF16 tensor-core ladder (plots/tc_ladder.py): TFLOP/s, % of cuBLAS BF16 and of the BF16 peak, and
    measured over the 128×128 tile's L2 bound."""
    n, steps, cublas = tensor_core.ladder(suite)
    if not steps and not cublas:
        return []
    peak, formula = tensor_core.bf16_peak(suite)
    l2 = tensor_core.l2_tile_bound(suite)
    pred, missing = tensor_core.predicted(suite, n)
    us = lambda t: f"{t * 1e6:.4g} µs" if t else "n/a"

    def model(k):
        measured, predicted, binding = pred.get(k, (None, None, None))
        return [us(measured), us(predicted), f"{predicted / measured:.2f}" if predicted and measured else "n/a",
                binding or "n/a"]
    rows = [[k, num(f, 1e-12), num(ratio(f, cublas), 100), num(ratio(f, peak), 100), num(ratio(f, l2)), *model(k)]
            for k, f in ([("cublas_bf16", cublas)] if cublas else []) + steps]
    limits_line = (f"BF16 dense peak {num(peak, 1e-12)} TFLOP/s ({formula})" if peak else formula) + \
        (f"; L2 bound of a 128×128 tile {num(l2, 1e-12)} TFLOP/s (ceiling/read/l2 × 64 FLOP/B)" if l2 else "")
    why = ("" if not missing else f" No prediction: the run lacks {'; '.join(missing)}."
           if not any(p[1] for p in pred.values()) else f" Where n/a: the run lacks {'; '.join(missing)}.")
    return ["## Tensor-core GEMM ladder (BF16)", "",
            f"Each kernel at {n}×{n}×{n} (`tc_ladder.png`, under Tensor cores). {limits_line}. The prediction is the "
            "tensor-core time model's (`predictions.json`, gpubench/analysis/tc_predict.py, docs/families/tc-gemm.md): "
            "the counts of model/tc_gemm_model.hpp times unit costs of this run (tensor/, smem_banks/ldmatrix/, "
            f"async/, ceiling/), target 0.80-1.20 of measured at 4096³.{why}", "",
            *table(["kernel", "TFLOP/s", "% of cuBLAS BF16", "% of BF16 peak", "× L2 tile bound", "measured",
                    "predicted", "predicted / measured", "predicted binding"], rows)]


def other(suite):
    """Families no section knows: name, time and every counter, so new benchmarks still show up."""
    known = {f.name for f in families.FAMILIES if f.sections}
    counters = lambda r: ", ".join(f"{k}={num(v)}" for k, v in r.median.items() if k != suite_json.TIME)
    return section("Other benchmarks", [r for r in suite.ok() if r.fields["family"] not in known],
                   [("benchmark", lambda r: r.name), ("counters", counters)])


def ratio(a, b):
    return a / b if a is not None and not (isinstance(a, float) and math.isnan(a)) and b else None


def hierarchy_edges(suite):
    """The plateaus and cliffs gpubench/analysis/edges.py finds in hierarchy/read/ws:*, beside the sizes the device reports."""
    ws, bw = hierarchy.curve(suite)
    if len(ws) < 3:
        return []
    sizes = ", ".join(f"{label} {hierarchy.human(v)}" for label, v in hierarchy.device_sizes(suite)) or "none in the context"
    lines = hierarchy.edge_lines(ws, bw) or ["no cliff between two plateaus"]
    return ["## Bandwidth by working set", "", f"Edges of `hierarchy/read/ws:*` (device reports: {sizes}); "
            "an edge is where the curve crosses the geometric mean of two neighbouring plateaus:", ""] + \
        [f"- {line}" for line in lines] + [""]


def latency(suite):
    """The levels the pointer chase finds (gpubench/analysis/latency_levels.py), beside what the device reports."""
    return latency_levels.report_section(suite)


def links(suite):
    return section("Host and peer links", suite.ok("link"), [
        ("path", lambda r: "/".join(r.fields["pos"][:-1]) if r.fields["pos"] else ""),
        ("method", lambda r: r.fields["pos"][-1] if r.fields["pos"] else ""), ("bytes", field("bytes")),
        ("GB/s", counter("bytes_per_second", 1e-9)),
        # NVML's NVLink transmit counters over the timed launches (peer paths, where NVML gives them): the
        # payload, and the payload with the protocol, against which the link's signalling rate is the limit.
        ("NVLink TX GB/s", counter("nvlink_tx_bytes_per_second", 1e-9)),
        ("NVLink raw TX GB/s", counter("nvlink_raw_tx_bytes_per_second", 1e-9))])


def wide(title, note, recs, **kw):
    """A family's compact view: its title, a line saying what the cells are, and a pivot table."""
    if not recs:
        return []
    headers, rows = pivot(recs, **kw)
    return ["## " + title, "", note, ""] + table(headers, rows)


def coalescing_wide(suite):
    return wide("Coalescing", "Useful GB/s by stride (words between neighbouring lanes); bus GB/s and sectors "
                "per request in the appendix.", [r for r in suite.ok("coalescing") if "stride" in r.fields],
                row=lambda r: f"{r.fields['op']} {r.fields['level']}", col=lambda r: r.fields["stride"],
                cell=lambda r: num(r.get("useful_bytes_per_second"), 1e-9), corner="op, level \\ stride")


def links_wide(suite):
    return wide("Host and peer links", "GB/s by transfer size; NVLink counters and times in the appendix.",
                suite.ok("link"), row=lambda r: "/".join(r.fields["pos"]), col=lambda r: r.fields.get("bytes", 0),
                cell=lambda r: num(r.get("bytes_per_second"), 1e-9), corner="path \\ bytes", col_label=human_bytes)


def smem_banks_wide(suite):
    layout = lambda r: "swizzle" if r.fields.get("layout") == "swizzle" else f"pad {r.fields.get('pad', 0)}"
    cycles = lambda r: r.get("cycles_per_request") if r.has("cycles_per_request") else r.get("cycles_per_access")
    return wide("Shared-memory banks", "Cycles per request (throughput modes) or per access (latency mode) by "
                "stride in words; all counters in the appendix.", banks_only(suite),
                row=lambda r: f"{r.fields['mode']}, {r.fields['width']} B, {layout(r)}", col=lambda r: r.fields["stride"],
                cell=lambda r: num(cycles(r)), corner="mode, width, layout \\ stride")


def barriers_wide(suite):
    return wide("Barriers", "Cycles per barrier by threads per block; ns per barrier in the appendix.", suite.ok("sync"),
                row=lambda r: f"{r.fields['primitive']}, {plural(r.fields['blocks_per_sm'], 'block')}/SM",
                col=lambda r: r.fields["threads"], cell=lambda r: num(r.get("cycles_per_barrier")),
                corner="primitive, blocks/SM \\ threads")


def plural(n, word):
    return f"{n} {word}{'s' * (n != 1)}"


def _shape(r):
    m, n, k = (r.fields[x] for x in "mnk")
    return m * n * k, (f"{m}³" if m == n == k else f"{m}×{n}×{k}")


def gemm_wide(suite):
    return wide("GEMM", "GFLOP/s by kernel and shape m×n×k; % of cuBLAS and errors in the appendix.", suite.ok("gemm"),
                row=lambda r: r.fields["kernel"], col=_shape, cell=lambda r: num(r.get("flops_per_second"), 1e-9),
                corner="kernel \\ shape", col_label=lambda s: s[1])


# The compact view of each family whose full tables are in APPENDIX.
COMPACT = {"coalescing": coalescing_wide, "link": links_wide, "smem_banks": smem_banks_wide, "sync": barriers_wide,
           "gemm": gemm_wide}


def _compare_file(suite):
    """compare.txt's lines (run_all.sh --compare writes it beside the JSON), or None."""
    path = os.path.join(os.path.dirname(os.path.abspath(suite.path)), "compare.txt")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def compare_counts(lines):
    """'Slower 4, Faster 6, ...' from compare.txt's list headings ('Slower (4):'), for the run table."""
    found = [re.match(r"^([A-Z][\w ,]*?) \((\d+)\):$", l) for l in lines]
    return ", ".join(f"{m.group(1)} {m.group(2)}" for m in found if m) or "no changes listed"


def compare_summary(suite):
    """compare.txt shortened: its header, then each verdict list's heading with the first few names of the
    lists that name changes; the full file stays beside the report."""
    lines = _compare_file(suite)
    if lines is None:
        return []
    head = lines[:lines.index("")] if "" in lines else lines[:5]
    rule = next((i for i, l in enumerate(lines) if l.startswith("----")), len(lines))
    tail_start = next((i for i in range(rule, len(lines)) if not lines[i].strip()), len(lines))
    out, listing, shown = [], False, 0
    for line in lines[tail_start + 1:]:
        if not line.startswith(" "):
            out.append(line)
            listing, shown = line.startswith(CHANGE_LISTS), 0
        elif listing and shown < COMPARE_EXAMPLES:
            out.append(line)
            shown += 1
    body = [l for l in head + out if l.strip()]
    return ["## Comparison with the baseline run (`compare.txt`, shortened)", "", "```", *body, "```", ""]


def throttle_stats(suite):
    """Per-repetition clock counters summed over the run (harness/bench.cuh run_timed): samples with the
    `throttled` counter, how many were throttled, the lowest `sm_clock_min_mhz`, settle waits (`settle_ms`)."""
    flags = [v for r in suite.records for v in r.samples.get("throttled", [])]
    mins = [v for r in suite.records for v in r.samples.get("sm_clock_min_mhz", [])]
    waits = [v for r in suite.records for v in r.samples.get("settle_ms", []) if v > 0]
    return dict(samples=len(flags), throttled=sum(1 for v in flags if v > 0), min_clock=min(mins) if mins else None,
                waits=len(waits), max_wait=max(waits) if waits else None)


def _throttle_line(t, source):
    if not t["samples"]:
        return f"not recorded ({source or 'no NVML clock-event counters in this run'})"
    text = f"{t['throttled']:,} of {t['samples']:,} samples ({t['throttled'] / t['samples'] * 100:.2g} %) throttled"
    if t["min_clock"] is not None:
        text += f", lowest SM clock {t['min_clock']:.0f} MHz"
    if t["waits"]:
        text += f"; {plural(t['waits'], 'repetition')} waited for clocks to settle (longest {t['max_wait']:.0f} ms)"
    return text


def health(suite, t):
    """(verdict, reasons): 'healthy' when every HEALTH rule holds, else 'check' and the rules that failed."""
    bad = []
    if suite.errors():
        bad.append(f"{len(suite.errors())} benchmarks reported errors")
    if t["samples"] and t["throttled"] / t["samples"] > HEALTH["throttled"]:
        bad.append(f"more than {HEALTH['throttled'] * 100:.0f} % of samples throttled")
    rated, seen = limits.ctx_number(suite, "sm_clock_mhz"), limits.ctx_number(suite, "sm_clock_observed_mhz")
    if rated and seen and seen < HEALTH["clock"] * rated:
        bad.append(f"observed SM clock {seen:.0f} MHz below {HEALTH['clock'] * 100:.0f} % of the rated {rated:.0f}")
    span = limits.healthy_span(suite)
    if span and span[0] < HEALTH["ratio"]:
        bad.append(f"a measured roof or link below {HEALTH['ratio']:.2f} of its limit")
    return ("check" if bad else "healthy"), bad


def run_rows(suite, t):
    """The run table: GPU, code, start, self-check, counts, comparison, throttling."""
    c, skips = suite.context, suite.skips()
    reasons, cmp = len({r.skipped for r in skips}), _compare_file(suite)
    dirty = {"true": "dirty (uncommitted changes)", "false": "clean"}.get(c.get("git_dirty"), "dirty: not recorded")
    source = c.get("clock_events_source", "")
    return [
        ["GPU", f"{suite.gpu_name}, compute capability {c.get('compute_capability', '?')}, {c.get('sm_count', '?')} SMs, "
                f"SM clock {c.get('sm_clock_observed_mhz', '?')} MHz observed / {c.get('sm_clock_mhz', '?')} rated, "
                f"{human_bytes(limits.ctx_number(suite, 'l2_bytes'))} L2; {c.get('gpu_uuid', 'UUID not recorded')}"],
        ["Code", f"commit {c.get('git_commit', 'not recorded')[:12]}, {dirty}, bench_code {c.get('bench_code', 'not recorded')}, "
                 f"suite {c.get('suite_version', '?')}; driver {c.get('driver_version', '?')}, CUDA runtime {c.get('runtime_version', '?')}"],
        # Google Benchmark's context `date` is when the run started; nothing records its end.
        ["Started / duration", f"{c.get('date', 'unknown')} / unknown (the JSON records the start, not the end)"],
        ["Self-check", c.get("self_check", "not recorded in the JSON (run_all.sh publishes a run only after "
                                           "`ctest -L gpu` passed on its GPU)")],
        ["Benchmarks", f"{len(suite.records)}: {len(suite.ok())} measured, {len(skips)} skipped"
                       + (f" ({plural(reasons, 'reason')})" if skips else "") + f", {len(suite.errors())} with errors"],
        *([["Comparison", compare_counts(cmp) + " (summary below the headline figures)"]] if cmp is not None else []),
        ["Throttling", _throttle_line(t, source if source != "nvml" else "")]]


def verdict_line(suite, t):
    """'**Verdict: healthy**: ...' or '**Verdict: check**: <what failed>', with how close the roofs are and the rule."""
    verdict, bad = health(suite, t)
    span = limits.healthy_span(suite)
    if span:
        lo, hi = f"{span[0]:.2f}", f"{span[1]:.2f}"
        close = f"measured roofs and links at {lo if lo == hi else lo + '–' + hi} of their physical limits"
    else:
        close = "no measured figure has a derivable limit"
    return f"**Verdict: {verdict}**: " + "; ".join(bad + [close] if bad else ["no errors", close]) + ". " + HEALTH_RULE


def run_summary(suite):
    """The run's identity and health: the first lines of the report."""
    c, t = suite.context, throttle_stats(suite)
    lines = [verdict_line(suite, t), ""] + table(["run", ""], run_rows(suite, t))
    if c.get("library_build_type") == "debug":
        lines += ["**WARNING**: Google Benchmark is a debug build (`library_build_type: debug`): its own bookkeeping "
                  "is slower; the times are CUDA-event manual times, but rebuild it in Release for published runs.", ""]
    if c.get("code_from_ptx") == "true":
        lines += ["**Note**: the kernels ran from PTX the driver JIT-compiled (`code_from_ptx`): the binary has no "
                  "SASS for this GPU, so the code measured is the driver's compilation, not nvcc's.", ""]
    failed = os.path.join(os.path.dirname(os.path.abspath(suite.path)), "FAILED")
    if os.path.exists(failed):
        with open(failed, encoding="utf-8") as f:
            lines += [f"**WARNING**: the run folder has FAILED: {f.read().strip()}", ""]
    return lines


def headline_figures(suite):
    body = limits.markdown(suite)
    return ["## Headline figures against their limits", ""] + body if body else []


def facts(suite):
    """Every device fact the context holds (appendix); byte sizes in binary units."""
    fmt = lambda k, v: f"{human_bytes(float(v))} ({v})" if k.endswith("_bytes") and str(v).isdigit() else v
    rows = [[label, fmt(key, suite.context[key])] for label, key in FACTS if key in suite.context]
    return ["## Device (all context facts)", ""] + table(["fact", "value"], rows)


def pictures(suite, family, report_path):
    """Image lines for the family's pictures that exist beside the JSON, linked relative to the report."""
    json_dir, out_dir = os.path.dirname(os.path.abspath(suite.path)), os.path.dirname(os.path.abspath(report_path))
    pngs = [os.path.join(json_dir, p + ".png") for p in family.plots]
    return [f"![{os.path.basename(p)}]({os.path.relpath(p, out_dir)})" for p in pngs if os.path.exists(p)]


def family_body(suite, family, report_path):
    """A family's part of the report: its compact view (COMPACT) or its sections, its pictures after the first
    heading; the sections in APPENDIX go to the appendix instead."""
    lines = COMPACT[family.name](suite) if family.name in COMPACT else []
    for name in family.sections:
        if name not in APPENDIX:
            lines += globals()[name](suite)
    pics = pictures(suite, family, report_path)
    if lines and pics:
        lines[2:2] = pics + [""]
    return lines


def ncu(suite):
    """The Nsight Compute cross-check run_all.sh --ncu writes beside the JSON (appendix)."""
    path = os.path.join(os.path.dirname(os.path.abspath(suite.path)), "ncu.md")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        body = f.read().split("\n", 1)[1].strip().replace("## ", "### ")
    return ["## Nsight Compute cross-check", "", body, ""]


def errors(suite):
    bad = suite.errors()
    return ["## Benchmarks that reported errors", ""] + table(["benchmark", "message"], [[r.name, r.error] for r in bad]) if bad else []


def skips(suite):
    """One line per skip reason: how many, and a few of the benchmarks."""
    by_reason = {}
    for r in suite.skips():
        by_reason.setdefault(r.skipped, []).append(r.name)
    if not by_reason:
        return []
    lines = [f"## Skipped on this GPU ({len(suite.skips())})", ""]
    for reason, names in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        more = f", … {len(names) - SKIP_EXAMPLES} more" if len(names) > SKIP_EXAMPLES else ""
        lines.append(f"- {len(names)} × {reason} (e.g. {', '.join(names[:SKIP_EXAMPLES])}{more})")
    return lines + [""]


def appendix(suite, taken):
    """The full tables the body shows pivoted or leaves out, so nothing measured is dropped; a heading the body
    already has (`taken`) gets ' (all rows)'."""
    lines = []
    for name in families.sections():
        if name in APPENDIX:
            lines += [l + " (all rows)" if l in taken else l for l in globals()[name](suite)]
    return ["# Appendix: full tables", ""] + facts(suite) + lines + ncu(suite)


def render(suite, report_path):
    lines = [f"# GPU memory-hierarchy microbenchmarks: {suite.gpu_name}", "",
             f"From `{os.path.basename(suite.path)}`. Values are medians over repetitions; CV is the coefficient "
             "of variation of the per-launch time; full tables in the appendix.", ""]
    lines += run_summary(suite) + headline_figures(suite) + compare_summary(suite) + errors(suite)
    for family in families.FAMILIES:
        lines += family_body(suite, family, report_path)
    lines += other(suite) + skips(suite)
    lines += appendix(suite, {l for l in lines if l.startswith("## ")})
    return "\n".join(lines).rstrip("\n") + "\n"


@suite_json.cli(PROG)
def main(argv=None):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__)
    p.add_argument("json", help="benchmarks.json written by gpubench --benchmark_out")
    p.add_argument("-o", "--output", help="Markdown file to write (default: <json dir>/report.md; - for stdout)")
    p.add_argument("--force", action="store_true", help="overwrite the output even when git tracks it")
    args = p.parse_args(argv)
    suite = suite_json.load_or_exit(args.json, PROG)
    default = os.path.join(os.path.dirname(os.path.abspath(args.json)), "report.md")
    out = args.output or default
    if out != "-":
        suite_json.check_output(out, [args.json], PROG, args.force)
    text = render(suite, default if out == "-" else out)  # on stdout, links as for the default place
    if out == "-":
        sys.stdout.write(text)
    else:
        suite_json.write_text(out, text, PROG)
        print(f"{PROG}: wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
