#!/usr/bin/env python3
"""Nsight Compute counters next to the model's predictions, one row per profiled benchmark.

usage: ncu_table.py NCU.csv ORDER.txt BENCHMARKS.json [-o ncu.md]

NCU.csv is `ncu --csv --page raw` of `MH_PROFILE=1 gpubench` (tools/ncu_profile.sh): each
benchmark's measured launch follows one mh_profile_marker kernel, in the order of ORDER.txt
(`gpubench --benchmark_list_tests` with the same filter). The model's numbers come from the
run's BENCHMARKS.json (counters sectors_per_request, conflict_ways, model_*, or its model.json).
Exit status: 0, or 2 for unusable input (files that do not match, not suite JSON, no ncu table).
"""
import argparse
import csv
import io
import sys

from gpubench import families
from gpubench import suite_json
from gpubench import tables

TIME = "gpu__time_duration.sum"
LD_REQ, LD_SEC = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
ST_REQ, ST_SEC = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
SH_LD_WF, SH_LD_INST = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "smsp__sass_inst_executed_op_shared_ld.sum"
SH_ST_WF, SH_ST_INST = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "smsp__sass_inst_executed_op_shared_st.sum"
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
L2_FROM_L1 = "lts__t_sectors_srcunit_tex_op_read.sum"
DRAM_RD, DRAM_WR = "dram__bytes_read.sum", "dram__bytes_write.sum"
L1_HIT, L2_HIT = "l1tex__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct"
PERCENTAGES = (OCCUPANCY, L1_HIT, L2_HIT)  # averaged over a group's kernels, weighted by kernel time
MARKER = "mh_profile_marker"


class NcuError(Exception):
    pass


def read_groups(path):
    """The profiled kernels grouped per benchmark: [{metric: value summed over the group's kernels}]."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    start = text.find('"ID",')
    if start < 0:
        raise NcuError(f"{path}: no ncu CSV table in it (did ncu run?)")
    rows = list(csv.DictReader(io.StringIO(text[start:])))
    groups = []
    for row in rows:
        if not row.get("ID"):  # the units row
            continue
        if MARKER in row.get("Kernel Name", ""):
            groups.append({"kernels": 0})
            continue
        if not groups:
            raise NcuError(f"{path}: a kernel before the first {MARKER}")
        g = groups[-1]
        g["kernels"] += 1
        t = _num(row.get(TIME))
        for key, value in row.items():
            v = _num(value)
            if v is None or not key or "__" not in key or key.startswith("device__"):
                continue
            if key in PERCENTAGES:
                g[key + "@w"] = g.get(key + "@w", 0.0) + v * (t or 1.0)
            else:
                g[key] = g.get(key, 0.0) + v
        g["@t"] = g.get("@t", 0.0) + (t or 1.0)
    for g in groups:
        for key in PERCENTAGES:
            if key + "@w" in g:
                g[key] = g.pop(key + "@w") / g["@t"]
    return groups


def _num(s):
    try:
        return float(str(s).replace(",", ""))
    except (TypeError, ValueError):
        return None


def _div(a, b):
    return a / b if b else float("nan")


def _ratio(g, a, b):
    return g[a] / g[b] if g.get(b) else float("nan")


def _agree(model, measured, rel=0.02):
    if model != model or measured != measured:
        return "n/a"
    return "yes" if abs(model - measured) <= rel * abs(model) + 1e-9 else "**no**"


def _fmt(x, digits=3):
    return tables.sig(x, digits)


class Tally:
    """How many compared patterns the model and ncu agree on."""

    def __init__(self):
        self.agree = self.total = 0

    def __call__(self, verdict):
        if verdict != "n/a":
            self.total += 1
            self.agree += verdict == "yes"
        return verdict


def coalescing(pairs, tally):
    rows = []
    for r, g in pairs:
        measured = _ratio(g, LD_SEC, LD_REQ) if r.fields.get("op") == "read" else _ratio(g, ST_SEC, ST_REQ)
        model = r.get("sectors_per_request")
        rows.append([r.name, _fmt(model), _fmt(measured, 4), tally(_agree(model, measured)),
                     _fmt((g.get(DRAM_RD, 0) + g.get(DRAM_WR, 0)) / 1e6, 4)])
    return (["## Global loads and stores: sectors per request", "",
             "ncu: `l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum / l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st}.sum`.", ""]
            + tables.markdown(["benchmark", "model", "ncu", "agree", "DRAM read+write (MB)"], rows))


def smem_banks(pairs, tally):
    rows = []
    for r, g in pairs:
        store = "store" in r.fields.get("mode", "")
        measured = _ratio(g, SH_ST_WF, SH_ST_INST) if store else _ratio(g, SH_LD_WF, SH_LD_INST)
        model = r.get("conflict_ways")
        rows.append([r.name, _fmt(model), _fmt(measured, 4), tally(_agree(model, measured))])
    return (["## Shared memory: wavefronts per instruction (conflict ways)", "",
             "ncu: `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum / smsp__sass_inst_executed_op_shared_{ld,st}.sum`.", ""]
            + tables.markdown(["benchmark", "model", "ncu", "agree"], rows))


# What confirms that a roof measures its level (issue 13): as fractions of the bytes the launch moved.
ROOF_SLACK = 0.05   # "about zero": other-level traffic at most this fraction of the bytes moved
HBM_AGREE = 0.10    # HBM roofs: DRAM bytes within this fraction of the bytes moved


def roof_confirmed(level, op, moved, g):
    """'yes' / '**no**' / 'n/a': does ncu see the traffic at the level the roof claims to measure?
    L1: ~0 L2 sectors; L2: ~0 L1 hits and ~0 DRAM bytes; HBM: DRAM bytes (read, written, both for a copy)
    about the bytes moved."""
    l2_bytes = g.get(L2_FROM_L1, float("nan")) * 32
    dram = {"read": g.get(DRAM_RD, float("nan")), "write": g.get(DRAM_WR, float("nan")),
            "copy": g.get(DRAM_RD, float("nan")) + g.get(DRAM_WR, float("nan"))}.get(op, float("nan"))
    if not moved or moved != moved:
        return "n/a"
    if level == "l1":
        ok = l2_bytes <= ROOF_SLACK * moved
    elif level == "l2":
        l1_hit = g.get(L1_HIT, float("nan"))
        ok = (dram <= ROOF_SLACK * moved) and (op != "read" or l1_hit <= 100 * ROOF_SLACK)
    elif level == "hbm":
        ok = abs(dram - moved) <= HBM_AGREE * moved
    else:
        return "n/a"
    return "yes" if ok else "**no**"


def ceiling(pairs, tally):
    rows = []
    for r, g in pairs:
        op, level = r.fields.get("op"), r.fields.get("level")
        moved = (r.get("bytes_per_second") or float("nan")) * (r.get(suite_json.TIME) or float("nan"))
        mb = lambda x: _fmt(x / 1e6, 4)
        checks = [g.get(L1_HIT), g.get(L2_FROM_L1), g.get(DRAM_RD), g.get(DRAM_WR)]
        verdict = roof_confirmed(level, op, moved, g) if all(c is not None for c in checks) else "n/a"
        rows.append([r.name, mb(r.get("working_set_bytes")), mb(moved), _fmt(g.get(L1_HIT, float("nan"))),
                     _fmt(g.get(L2_FROM_L1, float("nan")) / 1e6, 4), _fmt(g.get(L2_HIT, float("nan"))),
                     mb(g.get(DRAM_RD, float("nan"))), mb(g.get(DRAM_WR, float("nan"))), tally(verdict)])
    return (["## Roofs: where the ceiling kernels' bytes go", "",
             "Bytes moved: the run's `bytes_per_second` × its median time per launch. ncu: "
             f"`{L1_HIT}`, `{L2_FROM_L1}`, `{L2_HIT}`, `{DRAM_RD}`, `{DRAM_WR}`. The level is confirmed when "
             f"L1 roofs have L2 sectors × 32 B ≤ {ROOF_SLACK:.0%} of the bytes moved, L2 roofs L1 hits ≤ "
             f"{ROOF_SLACK:.0%} (reads) and DRAM bytes ≤ {ROOF_SLACK:.0%}, HBM roofs DRAM bytes (read, written, or "
             f"both for copy) within {HBM_AGREE:.0%} of the bytes moved.", ""]
            + tables.markdown(["benchmark", "working set (MB)", "bytes moved (MB)", "L1 hit %", "L2 sectors from L1 (M)",
                               "L2 hit %", "DRAM read (MB)", "DRAM written (MB)", "level confirmed"], rows))


def gemm(pairs, tally):
    # (column, model value from the record or None, ncu value)
    cols = [("ld sectors/req", lambda r: _div(r.get("model_ld_sectors"), r.get("model_ld_requests")),
             lambda g: _ratio(g, LD_SEC, LD_REQ)),
            ("smem wavefronts/ld", lambda r: _div(r.get("model_lds_wavefronts"), r.get("model_lds_inst")),
             lambda g: _ratio(g, SH_LD_WF, SH_LD_INST)),
            ("bank conflicts (M)", None,
             lambda g: g.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", float("nan")) / 1e6),
            ("occupancy %", lambda r: r.get("model_occupancy_pct"), lambda g: g.get(OCCUPANCY, float("nan"))),
            ("FFMA (G)", lambda r: r.get("model_ffma_thread") / 1e9, lambda g: g.get(FFMA, float("nan")) / 1e9),
            ("L2 sectors from L1 (M)", lambda r: r.get("model_l2_read_sectors") / 1e6,
             lambda g: g.get(L2_FROM_L1, float("nan")) / 1e6),
            ("DRAM bytes (MB)", lambda r: r.get("model_dram_bytes") / 1e6,
             lambda g: (g.get(DRAM_RD, 0) + g.get(DRAM_WR, 0)) / 1e6)]
    rows = []
    for r, g in pairs:
        cells = [r.name]
        for _, model_of, get in cols:
            model = model_of(r) if model_of else float("nan")
            cells.append(f"{_fmt(model, 4)} / {_fmt(get(g), 4)}" if model == model else _fmt(get(g), 4))
        rows.append(cells)
    return (["## GEMM kernels: model / ncu", "",
             "Global-load sectors per request, shared-load wavefronts per instruction, shared-load bank "
             "conflicts, achieved occupancy, FFMA thread instructions, L2 sectors read by L1, DRAM bytes. "
             "Cells read model / ncu; the model's values are the `model_*` predictions of the same run (cuBLAS has none).", ""]
            + tables.markdown(["benchmark"] + [c[0] for c in cols], rows))


def tables_md(pairs):
    """Markdown for the (record, ncu group) pairs, one section per family that names an ncu_section in
    gpubench/families.py; returns (text, agreeing, compared)."""
    out, tally = [], Tally()
    for fam in families.FAMILIES:
        mine = [(r, g) for r, g in pairs if r.fields["family"] == fam.name]
        if fam.ncu_section and mine:
            out += globals()[fam.ncu_section](mine, tally)
    return "\n".join(out), tally.agree, tally.total


def main(argv=None):
    ap = argparse.ArgumentParser(prog="ncu_table", description=__doc__.splitlines()[0])
    ap.add_argument("ncu_csv")
    ap.add_argument("order")
    ap.add_argument("benchmarks_json")
    ap.add_argument("-o", "--output")
    ap.add_argument("--force", action="store_true", help="overwrite the output even when git tracks it")
    args = ap.parse_args(argv)
    if args.output:
        suite_json.check_output(args.output, [args.ncu_csv, args.order, args.benchmarks_json], "ncu_table", args.force)
    try:
        suite = suite_json.load(args.benchmarks_json)
        groups = read_groups(args.ncu_csv)
        with open(args.order) as f:
            names = [families.canonical(line.strip().removesuffix("/manual_time")) for line in f if line.strip()]
        if len(groups) != len(names):
            raise NcuError(f"{len(groups)} profiled benchmarks in {args.ncu_csv} but {len(names)} names in {args.order}")
    except (suite_json.SuiteJsonError, NcuError, OSError) as e:
        print(f"ncu_table: error: {e}", file=sys.stderr)
        return 2
    pairs = [(suite.by_name[n], g) for n, g in zip(names, groups) if n in suite.by_name]
    body, agree, total = tables_md(pairs)
    text = (f"# Nsight Compute cross-check ({suite.gpu_name})\n\n"
            f"One profiled launch per benchmark (`ncu --clock-control none`). The model and ncu agree "
            f"(within 2 %) on {agree} of {total} compared patterns.\n\n" + body)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
