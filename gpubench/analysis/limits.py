"""The report's headline figures, each beside the physical limit the run's own context lets one derive.

A limit is computed only from facts the JSON context records (SM count, observed SM clock, memory clock and
bus width, PCIe or NVLink peak) and the small per-architecture tables below, whose sources are named;
where a limit cannot be derived it reads "—" with a footnote saying why, never a guess.
"""
import math
from dataclasses import dataclass

from gpubench.analysis import latency_levels, ladder

# FP32 fused multiply-adds per clock per SM, by compute capability: CUDA C++ Programming Guide, "Arithmetic
# Instructions", throughput of native arithmetic instructions (32-bit floating-point add, multiply,
# multiply-add; results per clock cycle per multiprocessor). sm_80 (A100) issues 64, not 128.
FP32_FMA_PER_CLOCK = {"5.0": 128, "5.2": 128, "5.3": 128, "6.0": 64, "6.1": 128, "6.2": 128,
                      "7.0": 64, "7.2": 64, "7.5": 64, "8.0": 64, "8.6": 128, "8.7": 128, "8.9": 128, "9.0": 128}
FP32_SOURCE = "CUDA C++ Programming Guide, throughput of native arithmetic instructions"
# L1 data bytes per clock per SM: since Volta (7.0) L1 and shared memory are one array, and the guide gives
# shared memory 32 banks of 4 bytes, each serving one access per clock: 32 x 4 B = 128 B per clock per SM.
L1_BYTES_PER_CLOCK = 128
L1_FROM_CC = (7, 0)
L1_SOURCE = "32 banks × 4 B per clock (CUDA C++ Programming Guide, shared memory; one array with L1 since 7.0)"
LINK_BYTES = 1 << 30  # link figures at the largest transfer the suite makes: 1 GiB
LINK_WAYS = {"h2d": "H2D", "d2h": "D2H", "peer": "Peer"}


@dataclass
class Figure:
    what: str            # row label, naming the benchmark
    measured: float      # in `unit`'s base (B/s, FLOP/s, cycles)
    shown: str           # measured, formatted
    limit: float = None  # same base as measured; None: not derivable (see why)
    limit_shown: str = ""  # how the limit is derived
    why: str = ""        # footnote when limit is None
    is_limit: bool = True  # False: the reference is another measurement (cuBLAS), not a physical limit

    @property
    def ratio(self):
        return self.measured / self.limit if self.limit and not math.isnan(self.measured) else None


def ctx_number(suite, key):
    """A positive number from the context, or None (absent, empty or not a number)."""
    try:
        v = float(suite.context.get(key, ""))
    except (TypeError, ValueError):
        return None
    return v if v > 0 and math.isfinite(v) else None


def _cc(suite):
    try:
        major, minor = (int(x) for x in str(suite.context.get("compute_capability", "")).split("."))
        return major, minor
    except ValueError:
        return None


def _tb(v):
    return f"{v / 1e12:.2f} TB/s"


def clock_and_sms(suite):
    """(observed SM clock in Hz, SM count, text 'N SMs × M MHz') or None when the context lacks either."""
    mhz, sms = ctx_number(suite, "sm_clock_observed_mhz") or ctx_number(suite, "sm_clock_mhz"), ctx_number(suite, "sm_count")
    return (mhz * 1e6, sms, f"{sms:.0f} SMs × {mhz:.0f} MHz") if mhz and sms else None


def hbm_peak(suite):
    """(bytes/s, formula) from memory clock × 2 (DDR) × bus width, or (None, why)."""
    mhz, bits = ctx_number(suite, "mem_clock_mhz"), ctx_number(suite, "mem_bus_bits")
    if not (mhz and bits):
        missing = " and ".join(k for k, v in (("mem_clock_mhz", mhz), ("mem_bus_bits", bits)) if not v)
        return None, f"the context has no {missing}: HBM peak = memory clock × 2 × bus width / 8"
    return mhz * 1e6 * 2 * bits / 8, f"{mhz:.0f} MHz × 2 × {bits:.0f} bit / 8"


def roofs(suite):
    """Figures for ceiling/read/l1, read/l2, write/l2, read/hbm, write/hbm and ceiling/fma (those the run has)."""
    out, clk = [], clock_and_sms(suite)
    cc = _cc(suite)
    for op, level in (("read", "l1"), ("read", "l2"), ("write", "l2"), ("read", "hbm"), ("write", "hbm")):
        name = f"ceiling/{op}/{level}"
        v = suite.value(name, "bytes_per_second")
        if v is None:
            continue
        per = suite.value(name, "bytes_per_clock_per_sm")
        f = Figure(f"{level.upper()} {op} (`{name}`)", v, _tb(v) + (f" = {per:.1f} B/clk/SM" if per else ""))
        if level == "l1":
            if not clk:
                f.why = "the context lacks the SM count or clock"
            elif not cc or cc < L1_FROM_CC:
                f.why = "L1 bytes per clock are derived only for compute capability 7.0 and later"
            else:
                f.limit = L1_BYTES_PER_CLOCK * clk[0] * clk[1]
                f.limit_shown = f"{_tb(f.limit)} = {L1_BYTES_PER_CLOCK} B/clk/SM × {clk[2]}"
        elif level == "l2":
            f.why = "NVIDIA documents no L2 bytes per clock to derive a limit from"
        else:
            f.limit, text = hbm_peak(suite)
            f.limit_shown, f.why = (f"{_tb(f.limit)} = {text}", "") if f.limit else ("", text)
        out.append(f)
    copy, d2d = suite.value("ceiling/copy/hbm", "bytes_per_second"), suite.value("ceiling/memcpy_d2d", "bytes_per_second")
    if copy is not None and d2d:
        out.append(Figure("HBM copy, read + written (`ceiling/copy/hbm`)", copy, _tb(copy), d2d,
                          f"`ceiling/memcpy_d2d` {_tb(d2d)}", is_limit=False))
    if (v := suite.value("ceiling/fma", "flops_per_second")) is not None:
        f = Figure("FP32 FMA (`ceiling/fma`)", v, f"{v / 1e12:.1f} TFLOP/s")
        per = FP32_FMA_PER_CLOCK.get(suite.context.get("compute_capability", ""))
        if clk and per:
            f.limit = 2 * per * clk[0] * clk[1]
            f.limit_shown = f"{f.limit / 1e12:.1f} TFLOP/s = 2 × {per} FMA/clk/SM × {clk[2]}"
        else:
            f.why = "the context lacks the SM count or clock" if not clk else \
                f"compute capability {suite.context.get('compute_capability', '?')} is not in the FMA table"
        out.append(f)
    return out


def latencies(suite):
    """The chase's L1, L2 and DRAM plateaus (cycles, ns); a latency has no physical limit to set beside it."""
    found = latency_levels.headline_levels(suite)
    return [Figure(f"{level} latency (`latency/chase`)", cyc, f"{cyc:.0f} cycles ({ns:.0f} ns)",
                   why="a latency has no published limit", is_limit=False)
            for level, (cyc, ns) in ((k, found[k]) for k in ("L1", "L2", "DRAM") if k in found)]


def links(suite):
    """Pinned copies at 1 GiB (copy engine) against the PCIe peak, and peer copies against the NVLink peak."""
    out = []
    pcie = ctx_number(suite, "pcie_peak_bytes_per_second")
    gen, width = suite.context.get("pcie_gen_current") or suite.context.get("pcie_gen"), suite.context.get("pcie_width")
    nvl = ctx_number(suite, "nvlink_peak_bytes_per_second")
    for path, peak, label, why in (
            ("h2d/pinned/ce", pcie, f"PCIe Gen{gen} ×{width}", "the context has no pcie_peak_bytes_per_second"),
            ("d2h/pinned/ce", pcie, f"PCIe Gen{gen} ×{width}", "the context has no pcie_peak_bytes_per_second"),
            ("peer/uni/ce", nvl, f"NVLink, {suite.context.get('nvlink_count', '?')} links",
             "the context has no nvlink_peak_bytes_per_second")):
        name = f"link/{path}/bytes:{LINK_BYTES}"
        if (v := suite.value(name, "bytes_per_second")) is None:
            continue
        way, rest = path.split("/", 1)
        out.append(Figure(f"{LINK_WAYS[way]} {rest} at 1 GiB (`link/{path}`)", v,
                          f"{v / 1e9:.1f} GB/s", peak, f"{peak / 1e9:.1f} GB/s {label} per direction" if peak else "",
                          "" if peak else why))
    return out


def gemm(suite):
    """The fastest of the suite's own GEMM kernels at the headline shape against cuBLAS there."""
    n, steps, cublas = ladder.steps(suite)
    mine = [(m, k) for k, m, _, _ in steps if m and not math.isnan(m)]
    if not mine:
        return []
    best, kernel = max(mine)
    return [Figure(f"best GEMM, {kernel} at {n}³ (`gemm/{kernel}`)", best, f"{best / 1e12:.1f} TFLOP/s", cublas,
                   f"cuBLAS {cublas / 1e12:.1f} TFLOP/s" if cublas else "", "" if cublas else "the run has no cuBLAS there",
                   is_limit=False)]


def figures(suite):
    return roofs(suite) + latencies(suite) + links(suite) + gemm(suite)


def markdown(suite):
    """The headline table and its footnotes (Markdown lines); [] when the run has none of the figures."""
    figs = figures(suite)
    if not figs:
        return []
    notes, rows = [], []
    for f in figs:
        if f.limit:
            limit = f.limit_shown
        else:
            if f.why not in notes:
                notes.append(f.why)
            limit = f"— [{notes.index(f.why) + 1}]"
        rows.append([f.what, f.shown, limit, f"{f.ratio:.2f}" if f.ratio else "—"])
    lines = ["| what | measured | physical limit (or reference) | ratio |", "| --- | --- | --- | --- |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows] + [""]
    notes = [f"[{i}] {why}" for i, why in enumerate(notes, 1)]
    return lines + ["; ".join(notes + [f"limits: FP32 from the {FP32_SOURCE}, L1 from {L1_SOURCE}, at the SM clock "
                                       "the run observed."]), ""]


def healthy_span(suite):
    """(lowest, highest) ratio of the figures with a physical limit, or None."""
    r = [f.ratio for f in figures(suite) if f.is_limit and f.ratio]
    return (min(r), max(r)) if r else None
