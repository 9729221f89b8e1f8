#!/usr/bin/env python3
"""Peer matrix: GPU x GPU bandwidth of link/peer/* over the benchmarks.json files of one node (one or more per
GPU, e.g. one per peer with MH_PEER_DEVICE). A cell (row i, column j) is the best method's bytes_per_second
of the largest transfer from GPU i's memory to GPU j's (--mode uni), or both ways at once (--mode bidir),
with its fraction of GPU i's NVLink peak when the context has one. Each record names its two ends in its
counters device and peer_device. Cells never measured stay blank."""
import argparse
import math
import os
import sys

import numpy as np

from plots.plotting import plt
from gpubench import suite_json

PROG = "peer_matrix"


def fail(msg):
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    raise SystemExit(2)


def cells(suites, mode):
    """(src, dst) -> (GB/s, size, method, fraction of peak or None); later files win on a repeated pair."""
    out = {}
    for s in suites:
        try:
            peak = float(s.context.get("nvlink_peak_bytes_per_second", "nan"))
        except ValueError:
            peak = math.nan
        best = {}  # (src, dst) -> (size, bw, method)
        for r in s.ok("link"):
            pos = r.fields["pos"]
            if len(pos) != 3 or pos[:2] != ("peer", mode) or not isinstance(r.fields.get("bytes"), int):
                continue
            src, dst, bw = r.get("device"), r.get("peer_device"), r.get("bytes_per_second")
            if any(math.isnan(v) for v in (src, dst, bw)):
                continue
            key, cand = (int(src), int(dst)), (r.fields["bytes"], bw, pos[2])
            if key not in best or cand[:2] > best[key][:2]:  # largest size first, then the faster method
                best[key] = cand
        for key, (size, bw, method) in best.items():
            if key in out:
                print(f"{PROG}: GPU {key[0]} -> GPU {key[1]} measured again in {s.path}; that one is used",
                      file=sys.stderr)
            out[key] = (bw / 1e9, size, method, bw / (peak * (2 if mode == "bidir" else 1)) if peak > 0 else None)
    return out


@suite_json.cli(PROG)
def main(argv=None):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__)
    p.add_argument("json", nargs="+", help="benchmarks.json files written by gpubench, one or more per GPU")
    p.add_argument("--mode", choices=("uni", "bidir"), default="uni", help="link/peer/<mode>/* (default uni)")
    p.add_argument("-o", "--output", help="PNG to write (default: <dir of the first JSON>/peer_matrix.png)")
    p.add_argument("--force", action="store_true",
                   help="write the output even where git tracks it or its folder (a committed run)")
    args = p.parse_args(argv)
    out = args.output or os.path.join(os.path.dirname(os.path.abspath(args.json[0])), PROG + ".png")
    suite_json.check_output(out, args.json, PROG, args.force)
    suites = [suite_json.load_or_exit(path, PROG) for path in args.json]
    got = cells(suites, args.mode)
    if not got:
        print(f"{PROG}: no link/peer/{args.mode}/* results with device and peer_device in the input; "
              "no picture written", file=sys.stderr)
        return 0
    n = 1 + max(max(k) for k in got)
    if n > 1024:
        fail(f"device index {n - 1} in the peer results is not a plausible GPU index")
    grid = np.full((n, n), np.nan)
    for (i, j), (gbs, *_rest) in got.items():
        grid[i, j] = gbs
    fig, ax = plt.subplots(figsize=(max(6.5, 2.2 + 1.1 * n), max(5.0, 1.6 + 1.0 * n)))
    im = ax.imshow(np.ma.masked_invalid(grid), cmap="viridis", vmin=0)
    for (i, j), (gbs, size, method, frac) in got.items():
        text = f"{gbs:.0f}\n{method}" + (f"\n{frac:.0%} of peak" if frac else "")
        ax.text(j, i, text, ha="center", va="center", fontsize="small",
                color="white" if gbs < 0.6 * np.nanmax(grid) else "black")
    ax.set_xticks(range(n), [f"GPU {j}" for j in range(n)])
    ax.set_yticks(range(n), [f"GPU {i}" for i in range(n)])
    ax.set(xlabel="to (destination memory)", ylabel="from (source memory)")
    fig.colorbar(im, ax=ax, label="GB/s" + (" (both directions summed)" if args.mode == "bidir" else ""))
    sizes = sorted({size for _, size, _, _ in got.values()})
    names = sorted({s.gpu_name for s in suites})
    fig.suptitle(f"Peer bandwidth, {args.mode}directional, largest transfer "
                 f"({', '.join(f'{s / 2**20:g} MiB' for s in sizes)})\n{', '.join(names)}")
    fig.tight_layout()
    suite_json.save_figure(fig, out, PROG, dpi=110)
    plt.close(fig)
    print(f"{PROG}: wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
