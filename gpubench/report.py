#!/usr/bin/env python3
"""Markdown report of one suite run: device facts, a table per benchmark family, the pictures, headline ratios.

Each family names its section functions (defined here) and pictures in gpubench/families.py.
Families no section claims still appear in a generic table, so nothing measured is silently left out;
skipped benchmarks are listed with their reasons.
Exit status: 0, or 2 for an unusable input or an output it refuses to write (its input, a committed file).
"""
import argparse
import math
import os
import sys

from gpubench import families, suite_json, tables
from gpubench.analysis import bounds, hierarchy, ladder, latency_levels
from gpubench.tables import num

PROG = "report"
FACTS = (("GPU", "gpu_name"), ("Compute capability", "compute_capability"), ("SMs", "sm_count"),
         ("SM clock, rated (MHz)", "sm_clock_mhz"), ("SM clock, observed (MHz)", "sm_clock_observed_mhz"),
         ("Memory clock (MHz)", "mem_clock_mhz"), ("L2 (bytes)", "l2_bytes"), ("Driver", "driver_version"),
         ("CUDA runtime", "runtime_version"), ("Host", "host_name"), ("Date", "date"),
         ("Google Benchmark build", "library_build_type"), ("GPU UUID", "gpu_uuid"),
         ("Suite version", "suite_version"), ("Git commit", "git_commit"))
GEMM_HEADLINE = "m:4092/n:4092/k:4092"


table = tables.markdown


def field(key):
    return lambda r: r.fields.get(key, "")


def counter(name, scale=1.0):
    return lambda r: num(r.get(name), scale)


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
        ("sectors/request", counter("sectors_per_request"))])


def ceiling(suite):
    return section("Ceilings", suite.ok("ceiling"), [
        ("ceiling", lambda r: r.name.split("/", 1)[1]), ("GB/s", counter("bytes_per_second", 1e-9)),
        ("B/clk/SM", counter("bytes_per_clock_per_sm")), ("working set", counter("working_set_bytes")),
        ("GFLOP/s", counter("flops_per_second", 1e-9))])


def smem_banks(suite):
    layout = lambda r: "swizzle" if r.fields.get("layout") == "swizzle" else f"pad {r.fields.get('pad', 0)}"
    return section("Shared-memory banks", suite.ok("smem_banks"), [
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
    GFLOP/s its binding bound allows, that resource, and measured / bound."""
    n, steps, cublas = ladder.steps(suite)
    if not steps:
        return []
    rows = [[k, num(m, 1e-9), num(m / cublas * 100 if cublas else None), num(b, 1e-9) if b else "n/a",
             res or "n/a", f"{b / m:.2f}" if b and m else "n/a"] for k, m, b, res in steps]
    return ["## GEMM ladder", "",
            f"Each kernel at {n}×{n}×{n} (`ladder.png`); the bound is the binding row of the GEMM bounds table "
            "as GFLOP/s; time measured / bound > 1 is what the counting model leaves unexplained.", "",
            *table(["kernel", "GFLOP/s", "% of cuBLAS", "bound GFLOP/s", "binding resource", "measured / bound"],
                   rows)]


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


def sections():
    """The section functions the family registry names, in its order, then the catch-all."""
    return [globals()[name] for name in families.sections()] + [other]


def headlines(suite):
    """The few numbers worth reading first; a missing input reads 'n/a' and names what is missing."""
    rows = []
    hbm = suite.value("coalescing/read/hbm/stride:1", "useful_bytes_per_second")
    d2d = suite.value("ceiling/memcpy_d2d", "bytes_per_second")
    r = ratio(hbm, d2d)
    rows.append(["HBM read, stride 1 / memcpy D2D", f"{num(r, 100)} %" if r else
                 "n/a (needs coalescing/read/hbm/stride:1 and ceiling/memcpy_d2d)"])
    for w in sorted({r.fields["width"] for r in suite.ok("smem_banks") if "width" in r.fields}):
        base = f"smem_banks/throughput/width:{w}"
        pad0, pad1, swz = (suite.value(f"{base}/{t}", "cycles_per_request")
                           for t in ("stride:32/pad:0", "stride:32/pad:1", "swizzle/stride:32"))
        if pad0 is None:
            continue
        rows.append([f"smem {w}-byte, stride 32: cycles/request pad 0 / pad 1 / swizzle",
                     f"{num(pad0)} / {num(pad1)} / {num(swz)} (pad 0 is {num(ratio(pad0, pad1))}× pad 1, "
                     f"{num(ratio(pad0, swz))}× swizzle)"])
    for r in suite.ok("gemm"):
        if r.name.endswith("/" + GEMM_HEADLINE) and r.fields["kernel"] != "cublas":
            pct = pct_of_cublas(suite, r)
            rows.append([f"GEMM {r.fields['kernel']} at 4092³, % of cuBLAS",
                         f"{num(pct, 100)} %" if pct else "n/a (no gemm/cublas at 4092³)"])
    return ["## Headlines", ""] + table(["what", "value"], rows)


def facts(suite):
    rows = [[label, suite.context[key]] for label, key in FACTS if key in suite.context]
    return ["## Device", ""] + table(["fact", "value"], rows)


def pictures(suite, report_path):
    json_dir, out_dir = os.path.dirname(os.path.abspath(suite.path)), os.path.dirname(os.path.abspath(report_path))
    pngs = [os.path.join(json_dir, p + ".png") for p in families.plots() if os.path.exists(os.path.join(json_dir, p + ".png"))]
    if not pngs:
        scripts = ", ".join(f"plots/{p}.py" for p in families.plots())
        return ["## Pictures", "", f"None yet: run {scripts} on this JSON.", ""]
    return ["## Pictures", ""] + [f"![{os.path.basename(p)}]({os.path.relpath(p, out_dir)})\n" for p in pngs]


def attachments(suite):
    """What run_all.sh writes beside the JSON: the ncu cross-check (--ncu) and the comparison (--compare)."""
    out, folder = [], os.path.dirname(os.path.abspath(suite.path))
    ncu = os.path.join(folder, "ncu.md")
    if os.path.exists(ncu):
        with open(ncu, encoding="utf-8") as f:
            body = f.read().split("\n", 1)[1].strip().replace("## ", "### ")
            out += ["## Nsight Compute cross-check", "", body, ""]
    cmp = os.path.join(folder, "compare.txt")
    if os.path.exists(cmp):
        with open(cmp, encoding="utf-8") as f:
            out += ["## Comparison with the baseline run", "", "```", f.read().rstrip(), "```", ""]
    return out


def errors(suite):
    bad = suite.errors()
    return ["## Benchmarks that reported errors", ""] + table(["benchmark", "message"], [[r.name, r.error] for r in bad]) if bad else []


def skips(suite):
    out = suite.skips()
    return ["## Skipped on this GPU", ""] + table(["benchmark", "reason"], [[r.name, r.skipped] for r in out]) if out else []


def render(suite, report_path):
    lines = [f"# GPU memory-hierarchy microbenchmarks: {suite.gpu_name}", "",
             f"From `{os.path.basename(suite.path)}`: {len(suite.records)} benchmarks. "
             "Values are medians over repetitions; CV is the coefficient of variation of the per-launch time.", ""]
    lines += facts(suite) + headlines(suite)
    for family_section in sections():
        lines += family_section(suite)
    lines += pictures(suite, report_path) + attachments(suite) + errors(suite) + skips(suite)
    return "\n".join(lines).rstrip("\n") + "\n"


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
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"{PROG}: wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
