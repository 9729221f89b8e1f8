#!/usr/bin/env python3
"""Links: bandwidth against transfer size (1 KiB .. 1 GiB) for every path of link/*: host pinned, host pageable
and peer GPU, one panel each; colour = direction, solid = copy engine, dotted = the copy split over several
streams (ce_split), dashed = SM copy kernel. The peaks the
device reported (PCIe generation x width, NVLink count x rate; per direction, and twice that for bidir) are
drawn as grey lines, so the distance to them is read off the picture."""
import math

from plots.plotting import log_values_axis, note, nothing_to_plot, parse_args, plt, save

PROG = "links"
PANELS = (("pinned", "Host, pinned memory (PCIe)", "pcie_peak_bytes_per_second", ("h2d", "d2h", "bidir")),
          ("pageable", "Host, pageable memory", "pcie_peak_bytes_per_second", ("h2d", "d2h", "bidir")),
          ("peer", "Peer GPU memory", "nvlink_peak_bytes_per_second", ("uni", "bidir")))
COLORS = {"h2d": "C0", "d2h": "C1", "bidir": "C2", "uni": "C0"}
STYLES = {"ce": "-", "ce_split": ":", "sm": "--"}
METHODS = {"ce": "copy engine", "ce_split": "copies on several streams", "sm": "SM copy"}


def human_bytes(v):
    for unit, div in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if v >= div:
            return f"{v / div:g}{unit}"
    return f"{v:g}"


def series(recs):
    """(panel, direction, method) -> sorted [(bytes, GB/s)] from link/<path...>/bytes:N records."""
    out = {}
    for r in recs:
        pos, size, bw = r.fields["pos"], r.fields.get("bytes"), r.get("bytes_per_second")
        if len(pos) != 3 or not isinstance(size, int) or math.isnan(bw):
            continue
        if pos[0] == "peer":
            key = ("peer", pos[1], pos[2])
        else:
            key = (pos[1], pos[0], pos[2])
        out.setdefault(key, []).append((size, bw / 1e9))
    return {k: sorted(v) for k, v in out.items()}


def peak(suite, key):
    try:
        v = float(suite.context.get(key, "nan"))
    except ValueError:
        return None
    return v / 1e9 if v > 0 else None


def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    data = series(suite.ok("link"))
    if not data:
        return nothing_to_plot(PROG, suite, "link/*")
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # here: plotting.plt says why
    panels = [p for p in PANELS if any(k[0] == p[0] for k in data)]
    for p in PANELS:
        if p not in panels:
            note(PROG, f"no {p[1].lower()} benchmarks; that panel is left out")
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.8), squeeze=False)
    for ax, (panel, title, peak_key, directions) in zip(axes[0], panels):
        sizes = set()
        for d in directions:
            for m, style in STYLES.items():
                pts = data.get((panel, d, m))
                if pts:
                    sizes.update(s for s, _ in pts)
                    ax.plot([s for s, _ in pts], [g for _, g in pts], style, color=COLORS[d], marker="o", ms=3,
                            label=f"{d} {METHODS[m]}")
        p = peak(suite, peak_key)
        if p:
            link = "NVLink" if panel == "peer" else "PCIe"
            ax.axhline(p, color="grey", lw=1, ls=":", label=f"{link} peak per direction, {p:.1f} GB/s")
            if "bidir" in directions:
                ax.axhline(2 * p, color="grey", lw=1, ls="-.", label=f"2 x {link} peak (bidir)")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(FixedLocator(sorted(sizes)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: human_bytes(v)))
        ax.xaxis.set_minor_locator(NullLocator())
        log_values_axis(ax)
        ax.set(title=title, xlabel="transfer size (bytes)", ylabel="GB/s (both directions summed for bidir)")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize="x-small", loc="lower right")
    return save(fig, suite, "Link bandwidth against transfer size", out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
