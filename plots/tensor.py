#!/usr/bin/env python3
"""Tensor cores: FLOP (int8: ops) per clock per SM of mma.sync by data type (tensor/mma/<dtype>/throughput, zero and
random operands side by side) and of wgmma by N (tensor/wgmma/<dtype>/<ss|rs>/n:N, random solid, zero dashed),
each type's dense peak as a black tick or dotted line (the model's peak_flops_per_clock_per_sm where model.json
gives it, else docs/families/tensor.md's Hopper figures; none on other GPUs), and the FP32 FMA roof measured by
ceiling/fma of the same run for scale. Log y axis: the FP32 roof is 16-32x below the tensor cores'."""
from gpubench.analysis.tensor_core import fp32_roof_per_clock_per_sm, peak_per_clock_per_sm
from plots.plotting import log2_axis, log_values_axis, note, nothing_to_plot, parse_args, plt, save

PROG = "tensor"
DATA = {"zero": ("C7", "--"), "random": ("C0", "-")}  # data:<...> -> (bar colour, wgmma line style)


def throughput(suite, kind):
    return [r for r in suite.ok("tensor") if r.fields.get("kind") == kind and "data" in r.fields
            and r.has("flops_per_clock_per_sm")]


def fp32_roof(ax, suite):
    roof = fp32_roof_per_clock_per_sm(suite)
    if roof:
        ax.axhline(roof, color="C3", ls="-.", lw=1.2, label=f"FP32 FMA roof (ceiling/fma) {roof:.0f}")
    else:
        note(PROG, "no ceiling/fma in the run: the FP32 roof is left out")


def mma_panel(ax, suite, recs):
    dtypes = list(dict.fromkeys(r.fields["dtype"] for r in recs))
    w = 0.38
    for i, (data, (color, _)) in enumerate(DATA.items()):
        pts = [(x, r) for x, d in enumerate(dtypes) for r in recs if r.fields["dtype"] == d and r.fields["data"] == data]
        ax.bar([x + (i - 0.5) * w for x, _ in pts], [r.get("flops_per_clock_per_sm") for _, r in pts], w,
               color=color, label=f"data:{data}")
    for x, d in enumerate(dtypes):
        peak = peak_per_clock_per_sm(suite, next(r for r in recs if r.fields["dtype"] == d))
        if peak:
            ax.hlines(peak, x - w, x + w, color="k", lw=2, label="dense peak" if x == 0 else None)
            ax.text(x, peak, f"{peak:.0f}", ha="center", va="bottom", fontsize="x-small")
    ax.set_xticks(range(len(dtypes)), dtypes)
    ax.set(title="mma.sync (one warp's m16n8k*)", xlabel="data type", ylabel="FLOP (int8: ops) per clock per SM")


def wgmma_panel(ax, suite, recs):
    forms = list(dict.fromkeys((r.fields["dtype"], r.fields["mode"]) for r in recs))
    colors = {f: f"C{i + 1}" for i, f in enumerate(forms)}
    for (dtype, mode), color in colors.items():
        for data, (_, style) in DATA.items():
            pts = sorted((r for r in recs if (r.fields["dtype"], r.fields["mode"]) == (dtype, mode)
                          and r.fields["data"] == data), key=lambda r: r.fields["n"])
            if pts:
                ax.plot([r.fields["n"] for r in pts], [r.get("flops_per_clock_per_sm") for r in pts], style,
                        marker="o", ms=4, color=color, label=f"{dtype} {mode}, {data}")
    for dtype in dict.fromkeys(d for d, _ in forms):
        peak = peak_per_clock_per_sm(suite, next(r for r in recs if r.fields["dtype"] == dtype))
        if peak:
            ax.axhline(peak, color="k", ls=":", lw=1)
            ax.text(min(r.fields["n"] for r in recs), peak, f" {dtype} peak {peak:.0f}", va="bottom", fontsize="x-small")
    log2_axis(ax, {r.fields["n"] for r in recs})
    ax.set(title="wgmma (one warpgroup's m64nNk*)", xlabel="N", ylabel="FLOP per clock per SM")


def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    mma, wgmma = throughput(suite, "mma"), throughput(suite, "wgmma")
    if not mma and not wgmma:
        return nothing_to_plot(PROG, suite, "tensor/<mma|wgmma>/... throughput")
    parts = [(draw, recs) for draw, recs in ((mma_panel, mma), (wgmma_panel, wgmma)) if recs]
    fig, axes = plt.subplots(1, len(parts), figsize=(6.8 * len(parts), 5.2), squeeze=False)
    for ax, (draw, recs) in zip(axes[0], parts):
        draw(ax, suite, recs)
        fp32_roof(ax, suite)
        log_values_axis(ax)
        ax.grid(True, axis="y", which="major", alpha=0.3)
        # below the panel: the bars and lines fill the panel from the FP32 roof to the peaks
        ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3)
    return save(fig, suite, "Tensor-core throughput by data type and N against each type's peak", out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
