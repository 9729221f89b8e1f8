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
import gzip
import io
import sys
from typing import NamedTuple

from gpubench import families
from gpubench import suite_json
from gpubench import tables
from gpubench.analysis import bounds

TIME = "gpu__time_duration.sum"
LD_REQ, LD_SEC = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
ST_REQ, ST_SEC = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
SH_LD_WF, SH_LD_INST = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "smsp__sass_inst_executed_op_shared_ld.sum"
LDSM_INST = "smsp__sass_inst_executed_op_ldsm.sum"  # ldmatrix instructions (their wavefronts count as shared loads)
SH_ST_WF, SH_ST_INST = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "smsp__sass_inst_executed_op_shared_st.sum"
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
L2_FROM_L1 = "lts__t_sectors_srcunit_tex_op_read.sum"
DRAM_RD, DRAM_WR = "dram__bytes_read.sum", "dram__bytes_write.sum"
L1_HIT, L2_HIT = "l1tex__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct"
PERCENTAGES = (OCCUPANCY, L1_HIT, L2_HIT)  # averaged over a group's kernels, weighted by kernel time
SH_LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
# Warp instructions executed per pipe and cycles with an instruction issued (profiled since issue 28;
# older ncu.csv files lack them)
PIPE_FMA, PIPE_LSU, PIPE_ALU = ("smsp__inst_executed_pipe_fma.sum", "smsp__inst_executed_pipe_lsu.sum",
                                "smsp__inst_executed_pipe_alu.sum")
ISSUE_ACTIVE = "smsp__issue_active.sum"
# Tensor-pipe warp instructions (profiled since the tensor-core model, issue 30): HMMA for WMMA and mma.sync,
# GMMA for wgmma (each warp of a warpgroup issues it)
PIPE_HMMA, PIPE_GMMA = "smsp__inst_executed_pipe_tensor_op_hmma.sum", "smsp__inst_executed_pipe_tensor_op_gmma.sum"
MARKER = "mh_profile_marker"


class NcuError(Exception):
    pass


def read_groups(path):
    """The profiled kernels grouped per benchmark: [{metric: value summed over the group's kernels}]. A committed
    run may hold ncu.csv gzipped (ncu.csv.gz)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
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


def _agree(model, measured, rel=0.02, base=None):
    """Within rel of the model's value, or of `base` where a count is a small part of a larger one."""
    if model != model or measured != measured:
        return "n/a"
    return "yes" if abs(model - measured) <= rel * abs(model if base is None else base) + 1e-9 else "**no**"


def _fmt(x, digits=3):
    return tables.sig(x, digits)


class Tally:
    """How many compared patterns the model and ncu agree on, and which kinds disagree (with why)."""

    def __init__(self):
        self.agree = self.total = 0
        self.disagree = {}  # what -> (count, reason), in first-seen order

    def __call__(self, verdict, what="", reason=""):
        if verdict != "n/a":
            self.total += 1
            self.agree += verdict == "yes"
            if verdict != "yes":
                count, _ = self.disagree.get(what, (0, reason))
                self.disagree[what] = (count + 1, reason)
        return verdict

    def summary(self):
        """The agreement line: agreeing of compared, then each disagreeing kind, its count and reason."""
        line = f"The model and ncu agree (within 2 %) on {self.agree} of {self.total} compared patterns."
        if self.disagree:
            line += " They disagree on: " + "; ".join(
                f"{what} × {n} ({reason})" for what, (n, reason) in self.disagree.items()) + "."
        return line


def coalescing(pairs, tally):
    rows = []
    for r, g in pairs:
        # read and mix (coalescing/mix/*: broadcast + row loads) are loads
        measured = _ratio(g, ST_SEC, ST_REQ) if r.fields.get("op") == "write" else _ratio(g, LD_SEC, LD_REQ)
        model = r.get("sectors_per_request")
        rows.append([r.name, _fmt(model), _fmt(measured, 4),
                     tally(_agree(model, measured), "sectors per request", "see the global-load table"),
                     _fmt((g.get(DRAM_RD, 0) + g.get(DRAM_WR, 0)) / 1e6, 4)])
    return (["## Global loads and stores: sectors per request", "",
             "ncu: `l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum / l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st}.sum`.", ""]
            + tables.markdown(["benchmark", "model", "ncu", "agree", "DRAM read+write (MB)"], rows))


def smem_banks(pairs, tally):
    rows = []
    for r, g in pairs:
        mode = r.fields.get("mode", "")
        if mode == "ldmatrix":
            measured, model = _ratio(g, SH_LD_WF, LDSM_INST), r.get("wavefronts_per_instruction")
        else:
            measured = _ratio(g, SH_ST_WF, SH_ST_INST) if "store" in mode else _ratio(g, SH_LD_WF, SH_LD_INST)
            model = r.get("conflict_ways")
        rows.append([r.name, _fmt(model), _fmt(measured, 4),
                     tally(_agree(model, measured), "shared wavefronts per instruction", "see the shared-memory table")])
    return (["## Shared memory: wavefronts per instruction (conflict ways)", "",
             "ncu: `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum / smsp__sass_inst_executed_op_shared_{ld,st}.sum`; "
             "ldmatrix: shared-load wavefronts / `smsp__sass_inst_executed_op_ldsm.sum`, model `wavefronts_per_instruction`.", ""]
            + tables.markdown(["benchmark", "model", "ncu", "agree"], rows))


# What confirms that a roof measures its level (issue 13): as fractions of the bytes the launch moved.
ROOF_SLACK = 0.05   # "about zero": other-level traffic at most this fraction of the bytes moved
HBM_AGREE = 0.10    # HBM roofs: DRAM bytes within this fraction of the bytes moved


def roof_confirmed(level, op, moved, g):
    """'yes' / '**no**' / 'n/a': does ncu see the traffic at the level the roof claims to measure?
    L1: ~0 L2 sectors; L2: ~0 DRAM bytes, and for reads ~0 L1 hits and L2 sectors x 32 about the bytes moved; HBM: DRAM bytes (read, written, both for a copy)
    about the bytes moved."""
    l2_bytes = g.get(L2_FROM_L1, float("nan")) * 32
    dram = {"read": g.get(DRAM_RD, float("nan")), "write": g.get(DRAM_WR, float("nan")),
            "copy": g.get(DRAM_RD, float("nan")) + g.get(DRAM_WR, float("nan"))}.get(op, float("nan"))
    if not moved or moved != moved:
        return "n/a"
    if level == "l1":
        ok = l2_bytes <= ROOF_SLACK * moved
    elif level == "l2":
        # A read roof's bytes must also reach L2 as sectors: requests merged on the way (several warps asking
        # for a sector at once) are served without an L2 read, which the roof would count as L2 bandwidth.
        l1_hit = g.get(L1_HIT, float("nan"))
        ok = (dram <= ROOF_SLACK * moved) and (op != "read" or (l1_hit <= 100 * ROOF_SLACK
                                                                 and l2_bytes >= (1 - ROOF_SLACK) * moved))
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
                     _fmt(g.get(L2_FROM_L1, float("nan")) / 1e6, 4), _fmt(_div(g.get(L2_FROM_L1, float("nan")) * 32, moved)),
                     _fmt(g.get(L2_HIT, float("nan"))),
                     mb(g.get(DRAM_RD, float("nan"))), mb(g.get(DRAM_WR, float("nan"))),
                     tally(verdict, "roof level", "see the roofs table")])
    return (["## Roofs: where the ceiling kernels' bytes go", "",
             "Bytes moved: the run's `bytes_per_second` × its median time per launch. ncu: "
             f"`{L1_HIT}`, `{L2_FROM_L1}`, `{L2_HIT}`, `{DRAM_RD}`, `{DRAM_WR}`. The level is confirmed when "
             f"L1 roofs have L2 sectors × 32 B ≤ {ROOF_SLACK:.0%} of the bytes moved, L2 roofs DRAM bytes ≤ "
             f"{ROOF_SLACK:.0%} and, for reads, L1 hits ≤ {ROOF_SLACK:.0%} and L2 sectors × 32 B ≥ {1 - ROOF_SLACK:.0%} of "
             f"the bytes moved (requests merged before L2 are no L2 bandwidth), HBM roofs DRAM bytes (read, written, or "
             f"both for copy) within {HBM_AGREE:.0%} of the bytes moved.", ""]
            + tables.markdown(["benchmark", "working set (MB)", "bytes moved (MB)", "L1 hit %", "L2 sectors from L1 (M)",
                               "L2 sectors × 32 / moved", "L2 hit %", "DRAM read (MB)", "DRAM written (MB)", "level confirmed"], rows))


L2_PEAK_PCT = "lts__throughput.avg.pct_of_peak_sustained_elapsed"  # profiled since issue 29; older ncu.csv lack it


def model_l2_bytes(r):
    """The L2 bytes a launch of an async benchmark reads, by the model: a TMA multicast tile is read from L2
    once per cluster (l2_read_bytes_per_second, the bytes delivered / C), every other copy once per block
    (the plan's bytes_per_launch, or the bytes delivered)."""
    t = r.get(suite_json.TIME)
    if r.has("l2_read_bytes_per_second"):
        return r.get("l2_read_bytes_per_second") * t
    return r.get("bytes_per_launch", r.get("bytes_per_second") * t)


UNICAST_REASON = ("TMA unicast: the C blocks of a cluster copy the same tile at about the same time and ncu "
                  "counts fewer L2 sectors than the bytes delivered (requests merged before L2); the model "
                  "counts every copy")


def async_copies(pairs, tally):
    rows = []
    for r, g in pairs:
        model, measured = model_l2_bytes(r), g.get(L2_FROM_L1, float("nan")) * 32
        delivered = r.get("bytes_per_second") * r.get(suite_json.TIME)
        unicast = r.fields.get("kind") == "unicast"
        what, why = (("TMA unicast L2 bytes", UNICAST_REASON) if unicast
                     else ("async-copy L2 bytes", "see the async-copy table"))
        rows.append([r.name, _fmt(delivered / 1e6, 4), _fmt(model / 1e6, 4), _fmt(measured / 1e6, 4),
                     tally(_agree(model, measured), what, why), _fmt(_div(measured, delivered)),
                     _fmt(g.get(DRAM_RD, float("nan")) / 1e6, 4), _fmt(g.get(L2_PEAK_PCT, float("nan")))])
    return (["## Asynchronous copies: L2 bytes read per launch", "",
             f"Bytes delivered: the run's `bytes_per_second` × its median time per launch. The model's L2 bytes: the "
             f"bytes delivered, divided by the cluster size for TMA multicast. ncu: `{L2_FROM_L1}` × 32 B (TMA and "
             f"cp.async requests count there too), `{DRAM_RD}`, `{L2_PEAK_PCT}`.", ""]
            + tables.markdown(["benchmark", "delivered (MB)", "model L2 read (MB)", "ncu L2 read (MB)", "agree",
                               "ncu L2 read / delivered", "DRAM read (MB)", "L2 % of peak"], rows))


class GemmColumn(NamedTuple):
    title: str
    model: object   # record -> the model's value, or None: ncu only
    ncu: object     # ncu group -> value
    metric: str     # the ncu metric it needs
    reason: str     # why the model may differ, for the agreement line
    newer: bool = False  # profiled since issue 28: left out when no group has its metric (an older ncu.csv)
    base: object = None  # record -> what the 2 % tolerance is taken of, when not the model's value itself
    counter: str = ""    # a model counter added since: left out when no record has it (an older model.json)


def _model(*keys, scale=1.0):
    """The model's value: the sum of the record's `keys`, divided by scale; nan when one is missing."""
    return lambda r: sum(r.get(k) for k in keys) / scale


def _ncu(metric, scale=1.0):
    return lambda g: g.get(metric, float("nan")) / scale


# Where the model has a count, cells read model / ncu and the pair counts in the agreement line.
GEMM_COLUMNS = [
    GemmColumn("ld sectors/req", lambda r: _div(r.get("model_ld_sectors"), r.get("model_ld_requests")),
               lambda g: _ratio(g, LD_SEC, LD_REQ), LD_REQ, "global-load sectors per request"),
    GemmColumn("smem wavefronts/ld", lambda r: _div(r.get("model_lds_wavefronts"), r.get("model_lds_inst")),
               lambda g: _ratio(g, SH_LD_WF, SH_LD_INST), SH_LD_INST,
               "shared-load wavefronts: runs before the LDS.128 pair rule of model/gemm_model.hpp "
               "(gemm_lds_wavefronts) model kernel 8 as 2.67 per load where ncu counts 3.33"),
    GemmColumn("bank conflicts (M)", None, _ncu(SH_LD_CONFLICTS, 1e6), SH_LD_CONFLICTS, ""),
    GemmColumn("occupancy %", _model("model_occupancy_pct"), _ncu(OCCUPANCY), OCCUPANCY,
               "occupancy: the model's is theoretical, ncu's achieved (tail blocks, launch ramp)"),
    GemmColumn("FFMA (G)", _model("model_ffma_thread", scale=1e9), _ncu(FFMA, 1e9), FFMA, "FFMA thread instructions"),
    GemmColumn("FMA pipe (G warp inst)", _model("model_ffma_thread", scale=32e9), _ncu(PIPE_FMA, 1e9), PIPE_FMA,
               "FMA-pipe warp instructions: the model counts its FFMA / 32; the pipe also runs IMAD, FMUL, FADD", newer=True),
    GemmColumn("LSU pipe (M warp inst)",
               _model("model_ld_requests", "model_st_requests", "model_lds_inst", "model_sts_inst", scale=1e6),
               _ncu(PIPE_LSU, 1e6), PIPE_LSU,
               "LSU-pipe warp instructions: the model counts global and shared loads and stores only", newer=True),
    GemmColumn("ALU pipe (G warp inst)", None, _ncu(PIPE_ALU, 1e9), PIPE_ALU, "", newer=True),
    GemmColumn("issue active (G cycles)", None, _ncu(ISSUE_ACTIVE, 1e9), ISSUE_ACTIVE, "", newer=True),
    GemmColumn("L2 sectors from L1 (M)", _model("model_l2_read_sectors", scale=1e6), _ncu(L2_FROM_L1, 1e6), L2_FROM_L1,
               "L2 sectors read by L1: the model fetches each block's tiles once, while L1 also serves blocks "
               "sharing an SM (fewer) and refetches lines it evicted (more)"),
    GemmColumn("DRAM bytes (MB)", _model("model_dram_bytes", scale=1e6),
               lambda g: (g.get(DRAM_RD, float("nan")) + g.get(DRAM_WR, float("nan"))) / 1e6, DRAM_RD,
               "DRAM bytes: the model is compulsory only (A and B read once, C written once, no L2 reuse model); "
               "ncu adds the re-reads of tiles L2 evicted"),
    GemmColumn("DRAM bytes with L2 reuse (MB)", _model("model_dram_bytes_reuse", scale=1e6),
               lambda g: (g.get(DRAM_RD, float("nan")) + g.get(DRAM_WR, float("nan"))) / 1e6, DRAM_RD,
               "DRAM bytes with L2 reuse: kernels 1-3 re-read an operand from DRAM when its re-read distance in "
               "launch order exceeds L2 (model/gemm_model.hpp tile_reuse), which misses what blocks resident "
               "together share; kernels 4-8 keep the compulsory count", counter="model_dram_bytes_reuse"),
]


def _ldsm_extra(r):
    """Bank conflicts the model predicts: ldmatrix wavefronts beyond 4 an instruction (.x4, conflict-free)."""
    return (r.get("model_ldmatrix_wavefronts") - 4 * r.get("model_ldmatrix_inst")) / 1e6


def _smem_load_wavefronts(r):
    return (r.get("model_ldmatrix_wavefronts") + r.get("model_wmma_load_wavefronts")
            + r.get("model_wmma_stage_wavefronts") / 2) / 1e6


# The BF16 tensor-core ladder's counts (model/tc_gemm_model.hpp) against ncu. A WMMA m16n16k16 is two HMMA
# m16n8k16; a wgmma is one GMMA per warp of its warpgroup, and ncu's HMMA counter counts the GMMA too (its
# description: "HMMA/HFMA2.MMA/HGMMA/QGMMA ops"). Bank conflicts are extra shared-load wavefronts: they agree
# within 2 % of the shared-load wavefronts.
TC_COLUMNS = [
    GemmColumn("HMMA (M warp inst)", lambda r: (r.get("model_mma_m16n8k16") + 2 * r.get("model_wmma_m16n16k16")
                                                + 4 * r.get("model_wgmma")) / 1e6,
               _ncu(PIPE_HMMA, 1e6), PIPE_HMMA,
               "HMMA warp instructions: WMMA counted as two m16n8k16, a wgmma as its four GMMA", newer=True),
    GemmColumn("GMMA (M warp inst)", lambda r: 4 * r.get("model_wgmma") / 1e6, _ncu(PIPE_GMMA, 1e6), PIPE_GMMA,
               "GMMA warp instructions: the model counts 4 per warpgroup wgmma", newer=True),
    GemmColumn("ldmatrix (M)", _model("model_ldmatrix_inst", scale=1e6), _ncu(LDSM_INST, 1e6), LDSM_INST,
               "ldmatrix instructions"),
    GemmColumn("smem load wavefronts (M)", _smem_load_wavefronts, _ncu(SH_LD_WF, 1e6), SH_LD_WF,
               "shared-load wavefronts: WMMA's fragment loads are the compiler's (modelled as 128 bytes a wavefront)"),
    GemmColumn("smem store wavefronts (M)",
               lambda r: ((r.get("model_smem_fill_wavefronts") if r.get("model_sts_inst") > 0 else 0)
                          + r.get("model_wmma_stage_wavefronts") / 2) / 1e6, _ncu(SH_ST_WF, 1e6), SH_ST_WF,
               "shared-store wavefronts: st.shared only (cp.async and TMA write shared memory outside the LSU's stores)"),
    GemmColumn("bank conflicts (M)", _ldsm_extra, _ncu(SH_LD_CONFLICTS, 1e6), SH_LD_CONFLICTS,
               "shared-load bank conflicts: the model's are ldmatrix wavefronts beyond 4 an instruction",
               base=_smem_load_wavefronts),
    GemmColumn("L2 sectors read (M)", _model("model_l2_read_bytes", scale=32e6), _ncu(L2_FROM_L1, 1e6), L2_FROM_L1,
               "L2 sectors read by the SMs: the model reads each block's tiles once (L1 serves co-resident blocks "
               "sharing a tile for ld.global; TMA reads are counted under srcunit tex only in part)"),
    GemmColumn("DRAM bytes (MB)", _model("model_dram_bytes", scale=1e6),
               lambda g: (g.get(DRAM_RD, float("nan")) + g.get(DRAM_WR, float("nan"))) / 1e6, DRAM_RD,
               "DRAM bytes: the model is compulsory only; ncu adds the re-reads of tiles L2 evicted"),
]


def gemm(pairs, tally):
    fp32 = [(r, g) for r, g in pairs if r.fields.get("kernel") not in bounds.TENSOR_CORE_MODELLED]
    tc = [(r, g) for r, g in pairs if r.fields.get("kernel") in bounds.TENSOR_CORE_MODELLED]
    out = gemm_fp32(fp32, tally) if fp32 else []
    if tc:
        out += ["", "## BF16 tensor-core GEMM kernels: model / ncu", "",
                "Cells read model / ncu (`model_*` of model/tc_gemm_model.hpp); each pair counts in the agreement line "
                "(within 2 %). ncu: tensor-pipe warp instructions (HMMA, GMMA), ldmatrix instructions, shared-load "
                "and -store wavefronts, shared-load bank conflicts, L2 sectors read by the SMs, DRAM bytes.", ""]
        out += _gemm_rows(TC_COLUMNS, tc, tally)
    return out


def _gemm_rows(columns, pairs, tally):
    """The model / ncu table of `columns` (those an older ncu.csv lacks left out), one row per pair."""
    cols = [c for c in columns if (not c.newer or any(c.metric in g for _, g in pairs))
            and (not c.counter or any(r.has(c.counter) for r, _ in pairs))]
    rows = []
    for r, g in pairs:
        cells, off, compared = [r.name], [], False
        for col in cols:
            model, measured = (col.model(r) if col.model else float("nan")), col.ncu(g)
            verdict = tally(_agree(model, measured, base=col.base(r) if col.base else None), "GEMM " + col.title,
                            col.reason)
            compared |= verdict != "n/a"
            if verdict == "**no**":
                off.append(col.title)
            cells.append(f"{_fmt(model, 4)} / {_fmt(measured, 4)}" if model == model else _fmt(measured, 4))
        rows.append(cells + [", ".join(off) or ("–" if compared else "n/a")])
    return tables.markdown(["benchmark"] + [c.title for c in cols] + ["disagree"], rows)


def gemm_fp32(pairs, tally):
    return (["## GEMM kernels: model / ncu", "",
             "Cells read model / ncu; the model's values are the `model_*` predictions of the same run (cuBLAS has "
             "none). Every model / ncu pair counts in the agreement line (within 2 %); the last column names the "
             "pairs that disagree. ncu metrics: global-load sectors per request, shared-load wavefronts per "
             "instruction, shared-load bank conflicts, achieved occupancy, FFMA thread instructions, warp "
             "instructions executed per pipe (FMA, LSU, ALU) and issue-active cycles (runs from before these were "
             "profiled lack those columns), L2 sectors read by L1, DRAM bytes read + written.", "",
             "The model's DRAM bytes are compulsory only: A and B read once and C written once, as if L2 kept "
             "every reuse, so where ncu counts more (about 8.5 GB against 201 MB for kernels 1-3 at 4096³) that "
             "is L2 misses the count leaves out, not an error in the other counts. Runs since the L2 reuse rule "
             "add `DRAM bytes with L2 reuse`: for kernels 1-3 an operand whose re-read distance in launch order "
             "exceeds L2 comes from DRAM once per block (A at 4096³: 8.7 GB); kernels 4-8 stay compulsory.", ""]
            + _gemm_rows(GEMM_COLUMNS, pairs, tally))


def tables_md(pairs):
    """Markdown for the (record, ncu group) pairs, one section per family that names an ncu_section in
    gpubench/families.py; returns (text, the Tally of the compared patterns)."""
    out, tally = [], Tally()
    for fam in families.FAMILIES:
        mine = [(r, g) for r, g in pairs if r.fields["family"] == fam.name]
        if fam.ncu_section and mine:
            out += globals()[fam.ncu_section](mine, tally)
    return "\n".join(out), tally


@suite_json.cli("ncu_table")
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
        # A benchmark the run skipped (e.g. a kernel that needs K % 8 == 0 at 4092) launches nothing under
        # the profiler either, not even its marker: it has no group.
        skipped = {r.name for r in suite.skips()}
        names = [n for n in names if n not in skipped]
        if len(groups) != len(names):
            raise NcuError(f"{len(groups)} profiled benchmarks in {args.ncu_csv} but {len(names)} names in {args.order}")
    except (suite_json.SuiteJsonError, NcuError, OSError) as e:
        print(f"ncu_table: error: {e}", file=sys.stderr)
        return 2
    pairs = [(suite.by_name[n], g) for n, g in zip(names, groups) if n in suite.by_name]
    body, tally = tables_md(pairs)
    text = (f"# Nsight Compute cross-check ({suite.gpu_name})\n\n"
            f"One profiled launch per benchmark (`ncu --clock-control none`). {tally.summary()}\n\n" + body)
    if args.output:
        suite_json.write_text(args.output, text, "ncu_table")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
