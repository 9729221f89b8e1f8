#!/usr/bin/env python3
"""Load latency against working set (pointer chase, log-x): through L1, L2 only, the TLB series (one load per
64 KiB or 2 MiB) and the L1 at both shared-memory carve-outs, plateaus labelled with the level, its latency and
the capacity detected (gpubench/analysis/latency_levels.py); dotted lines at the sizes the device reports. Right panel:
the stride sweep, whose knee is the fill granule."""
import math

from gpubench.analysis import latency_levels as lv
from plots.plotting import log_values_axis, note, nothing_to_plot, parse_args, plt, save

PROG = "latency"
# (prefix, stride, label, style): the curves of the left panel.
CURVES = (("chase/", 128, "through L1 (ld.global), 128 B stride", dict(color="C0", lw=2, marker="o", ms=3)),
          ("chase/l2only/", 128, "L2 only (ld.global.cg), 128 B stride", dict(color="C1", lw=1.5, marker="s", ms=3)),
          ("chase/l2only/", 65536, "L2 only, one load per 64 KiB (TLB)", dict(color="C2", lw=1.2, ls="--", marker="^", ms=3)),
          ("chase/l2only/", 2 << 20, "L2 only, one load per 2 MiB (TLB)", dict(color="C3", lw=1.2, ls="--", marker="v", ms=3)),
          ("chase/carveout:min/", 128, "through L1, carve-out min (most L1)", dict(color="C4", lw=1, ls=":")),
          ("chase/carveout:max/", 128, "through L1, carve-out max (least L1)", dict(color="C5", lw=1, ls=":")))
LABELLED = {("chase/", 128), ("chase/l2only/", 2 << 20)}  # plateaus named on the picture


def bytes_axis(ax, lo, hi):
    """Log2 x axis ticked every power of 4 (1 KiB, 4 KiB, ...) with human-readable sizes."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # here: plotting.plt says why
    ax.set_xscale("log", base=2)
    ticks = [4 ** k for k in range(int(math.log(max(lo, 1), 4)), int(math.log(hi, 4)) + 2) if lo / 1.5 <= 4 ** k <= hi * 1.5]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: lv.human_bytes(v).replace(" ", "\n")))
    ax.xaxis.set_minor_locator(NullLocator())


def label_plateaus(ax, ws, cyc, names, color, above=True):
    for name, p in zip(names, lv.find_plateaus(ws, cyc)):
        ax.plot([p.start_ws, p.end_ws], [p.latency] * 2, color=color, lw=7, alpha=0.18, solid_capstyle="butt")
        cap = "" if math.isnan(p.next_ws) else f"\nup to {lv.human_bytes(p.end_ws)}"
        ax.annotate(f"{name}: {p.latency:.0f} cyc{cap}", (math.sqrt(p.start_ws * p.end_ws), p.latency),
                    xytext=(0, 9 if above else -9), textcoords="offset points", ha="center",
                    va="bottom" if above else "top", fontsize="small", color=color)


def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    if not suite.ok("latency"):
        return nothing_to_plot(PROG, suite, "latency/*")
    from matplotlib.ticker import FuncFormatter  # here: plotting.plt says why
    l1, l2 = (lv._ctx_int(suite, k) for k in ("l1_smem_per_sm_bytes", "l2_bytes"))
    fig, (ax, sweep) = plt.subplots(1, 2, figsize=(13, 6), gridspec_kw={"width_ratios": [3.2, 1]})
    lo, hi = math.inf, 0
    for prefix, stride, label, style in CURVES:
        ws, cyc, _ = lv.curve(suite, prefix, stride)
        if not ws:
            note(PROG, f"no latency/{prefix}ws:*/stride:{stride} benchmarks; that curve is left out")
            continue
        lo, hi = min(lo, ws[0]), max(hi, ws[-1])
        ax.plot(ws, cyc, label=label, **style)
        if (prefix, stride) in LABELLED:
            names = lv.name_cache_levels(lv.find_plateaus(ws, cyc), l1, l2) if stride == 128 else \
                ["TLB hit" if i == 0 else f"TLB miss {i}" for i in range(len(lv.find_plateaus(ws, cyc)))]
            label_plateaus(ax, ws, cyc, names, style["color"], above=stride == 128)
    if hi == 0:
        plt.close(fig)
        return nothing_to_plot(PROG, suite, "latency/chase/*")
    for size, what in ((l1, "L1 + shared per SM"), (l2, "L2 (device)")):
        if size:
            ax.axvline(size, color="grey", ls=":", lw=1)
            ax.annotate(f"{what} {lv.human_bytes(size)}", (size, 0.02), xycoords=("data", "axes fraction"),
                        rotation=90, ha="right", va="bottom", fontsize="x-small", color="grey")
    bytes_axis(ax, lo, hi)
    log_values_axis(ax)
    ax.set(xlabel="working set", ylabel="cycles per load (clock64)", title="Latency against working set")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left")

    drew = False
    for level, style, label in (("l1", "o-", "ld.global, L2-warm, L1-cold"), ("l2", "s-", "ld.global.cg, L2 flushed")):
        recs = sorted((r for r in suite.ok("latency") if r.name.startswith(f"latency/stride_sweep/{level}/")),
                      key=lambda r: r.fields["stride"])
        if recs:
            xs, ys = [r.fields["stride"] for r in recs], [r.get("cycles_per_load") for r in recs]
            g = lv.granule(xs, ys)
            sweep.plot(xs, ys, style, ms=4, label=f"{label}: knee {lv.human_bytes(g)}")
            drew = True
    if drew:
        sweep.set_xscale("log", base=2)
        sweep.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        log_values_axis(sweep)
        sweep.set(xlabel="stride (bytes), sequential, one pass", ylabel="cycles per load", title="Fill granule")
        sweep.grid(True, which="major", alpha=0.3)
        sweep.legend(fontsize="x-small")
    else:
        sweep.set_axis_off()
    return save(fig, suite, "Load latency by pointer chase", out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
