"""The energy family's figures by level, shared by plots/energy.py and report.py (docs/families/energy.md).

- pj(rec): a record's energy per byte or per FLOP in picojoules, in total or above idle;
- LEVELS: the levels of the hierarchy in the order the physics says a byte costs more (issue 31): a register
  operand of an FFMA, shared memory / L1, L2, HBM, PCIe; each with the energy benchmark that measures it;
- by_level(suite): those levels' pJ per byte as measured; ordering(): whether they rise in that order;
- roof(): the energy roofline, energy per FLOP at an arithmetic intensity.
"""
import math
from dataclasses import dataclass

# An FFMA (2 FLOP) reads three 4-byte register operands: its energy per operand byte is 2 / 12 of its energy per
# FLOP. The figure includes the arithmetic, so it bounds the register read from above.
FFMA_OPERAND_BYTES_PER_FLOP = 12 / 2


@dataclass(frozen=True)
class Level:
    label: str      # as the report and the picture name it
    benchmark: str  # the energy benchmark measuring it
    latency: str    # latency_levels.headline_levels' key, or "" when the chase has none


LEVELS = (
    Level("register (FFMA operand)", "energy/fma/data:random", ""),
    Level("shared / L1", "energy/read/l1", "L1"),
    Level("L2", "energy/read/l2", "L2"),
    Level("HBM", "energy/read/hbm/data:random", "DRAM"),
    Level("PCIe (host→device)", "energy/copy/h2d", ""),
)
# Compute units of the energy roofline: label -> the energy benchmark of one FLOP.
COMPUTE = {"FFMA": "energy/fma/data:random", "wgmma BF16": "energy/wgmma/bf16/data:random",
           "mma.sync BF16": "energy/mma/bf16/data:random"}


def pj(rec, above_idle=True):
    """A record's energy per byte (or per FLOP) in picojoules, above idle or in total; None when it has none."""
    tail = "_above_idle" if above_idle else ""
    for c in ("joules_per_byte" + tail, "joules_per_flop" + tail):
        if rec.has(c):
            return rec.get(c) * 1e12
    return None


def measured(suite, name):
    """The record of benchmark `name` when it was measured (not errored, not skipped), else None."""
    r = suite.by_name.get(name)
    return r if r and not r.error and not r.skipped else None


def pj_per_byte(suite, level, above_idle=True):
    """pJ per byte at `level` (an FFMA's per operand byte for the register level), or None."""
    r = measured(suite, level.benchmark)
    v = pj(r, above_idle) if r else None
    if v is None or math.isnan(v):
        return None
    return v / FFMA_OPERAND_BYTES_PER_FLOP if r.has("joules_per_flop") else v


def bytes_per_second(suite, level):
    """The rate of the level's energy benchmark in bytes per second (an FFMA's operand bytes), or None."""
    r = measured(suite, level.benchmark)
    if not r:
        return None
    if r.has("flops_per_second"):
        return r.get("flops_per_second") * FFMA_OPERAND_BYTES_PER_FLOP
    return r.get("bytes_per_second") if r.has("bytes_per_second") else None


def by_level(suite, above_idle=True):
    """[(Level, pJ per byte)] for the levels this run measured, in LEVELS order."""
    out = []
    for level in LEVELS:
        v = pj_per_byte(suite, level, above_idle)
        if v is not None:
            out.append((level, v))
    return out


def ordering(suite):
    """(holds, text): whether pJ per byte above idle rises level by level in LEVELS order, and the chain written
    out ("a 0.66 < b 8.5 ..."; a '≥' where it breaks); (None, why) with fewer than two levels measured."""
    found = by_level(suite)
    if len(found) < 2:
        return None, "fewer than two levels measured"
    text, holds = f"{found[0][0].label} {found[0][1]:.3g}", True
    for (_, a), (level, b) in zip(found, found[1:]):
        holds &= a < b
        text += f" {'<' if a < b else '≥'} {level.label} {b:.3g}"
    missing = [lv.label for lv in LEVELS if lv not in [f for f, _ in found]]
    return holds, text + (f" (not measured: {', '.join(missing)})" if missing else "")


def roof(pj_per_flop, pj_per_byte_, intensity):
    """Energy per FLOP (pJ) of a kernel at `intensity` FLOP per byte moved at a level: the operation's energy plus
    the level's per byte spread over the FLOPs of each byte."""
    return pj_per_flop + pj_per_byte_ / intensity
