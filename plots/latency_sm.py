#!/usr/bin/env python3
"""L2 latency seen from each SM (latency/sm_spread/*): cycles per load of an ld.global.cg chase run on every SM
in turn, by SM id; one series per ring (one line lives in one L2 partition, so SMs split into near and far; a
larger ring mixes both), with the median and p95 over SMs."""
import re

from plots.plotting import note, nothing_to_plot, parse_args, plt, save
from gpubench.analysis import latency_levels as lv

PROG = "latency_sm"
SM_COUNTER = re.compile(r"^sm(\d+)_cycles$")


def per_sm(rec):
    """{smid: cycles per load} from the record's sm<id>_cycles counters."""
    return {int(m.group(1)): v for k, v in rec.median.items() if (m := SM_COUNTER.match(k))}


def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    recs = sorted((r for r in suite.ok("latency") if r.name.startswith("latency/sm_spread/")), key=lambda r: r.fields.get("ws", 0))
    recs = [r for r in recs if per_sm(r)]
    if not recs:
        return nothing_to_plot(PROG, suite, "latency/sm_spread/* (with sm<id>_cycles counters)")
    fig, ax = plt.subplots(figsize=(11, 5))
    for i, r in enumerate(recs):
        sms = per_sm(r)
        ids = sorted(sms)
        ws = r.fields.get("ws", 0)
        what = "one line" if ws <= 128 else f"{lv.human_bytes(ws)} ring"
        ax.plot(ids, [sms[k] for k in ids], "o", ms=4, color=f"C{i}", label=f"{what}: median {r.get('cycles_median'):.0f}, "
                f"p95 {r.get('cycles_p95'):.0f}, min {r.get('cycles_min'):.0f}, max {r.get('cycles_max'):.0f}")
        ax.axhline(r.get("cycles_median"), color=f"C{i}", lw=1, ls="-", alpha=0.6)
        ax.axhline(r.get("cycles_p95"), color=f"C{i}", lw=1, ls="--", alpha=0.6)
        if len(ids) != r.get("sms"):
            note(PROG, f"{r.name}: {len(ids)} per-SM counters for {r.get('sms'):.0f} SMs")
    ax.set(xlabel="SM id (%smid)", ylabel="cycles per load (ld.global.cg chase)", title="L2 latency by SM (solid: median, dashed: p95)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    return save(fig, suite, "L2 latency from every SM", out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
