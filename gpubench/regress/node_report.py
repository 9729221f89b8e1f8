#!/usr/bin/env python3
"""Node report: the benchmarks.json files of one node run (one per GPU) side by side, as Markdown. Every
benchmark two or more GPUs measured is compared on its headline counter (bandwidth, FLOP/s: higher is
better; cycles, latency: lower is better), and so are the link facts of the context (PCIe generation and
width, NVLink count, their peaks). A GPU whose value is more than --margin percent worse than the median of
its siblings (the other GPUs) is flagged: a slow GPU, a slow host link, a slow or degraded peer link.

Only what tells about the hardware is judged: benchmarks whose per-launch time is at least --min-time on every
GPU, and of each link path only its largest transfer (the bandwidth the link delivers). A 1 KiB copy or a
128^3 GEMM is launch- and latency-bound: between two processes it scatters by tens of percent although each
run's repetitions agree, so comparing it across GPUs flags noise, not a bad GPU. Pageable copies are not
judged either: the CPU copies them through a staging buffer, so their rate is the host's (its memory, the
process's NUMA placement), not the link's; the pinned copies judge the same link. The others are still listed
with --all.

GPUs of one model differ by more than their repetitions show on some benchmarks (the L1-to-L2 slope of
hierarchy/read, L2-sized chases: 5-15 % between healthy H200s). Where the model has a noise profile
(results/<gpu>/noise_profile.json, gpubench/regress/noise_profile.py; --no-profile: none), a GPU is flagged only when it is
also worse by more than 3 x that benchmark's between-GPU sigma and more than its range (the largest change seen
between two healthy GPUs of the model).

Exit status: 0 nothing flagged, 1 something flagged, 2 unusable input (a bad file, the same GPU twice) or an
-o it refuses to write (an input, a committed file or a file in a committed run's folder without --force) or
cannot write; 70 a bug (a traceback); a closed stdout pipe ends it quietly (SIGPIPE, 141 in the shell)."""
import argparse
import math
import os
import statistics
import sys

from gpubench.regress import compare as compare_py
from gpubench.regress import noise
from gpubench import suite_json

PROG = "node_report"
# Headline counter per benchmark, first match wins: (counter, higher is better).
HEADLINE = (("bytes_per_second", True), ("useful_bytes_per_second", True), ("flops_per_second", True),
            ("cycles_per_load", False), ("cycles_per_barrier", False), ("cycles_per_access", False),
            ("cycles_per_request", False))
# Context entries that describe the links: (key, label); higher is better for each.
CONTEXT = (("pcie_gen", "PCIe generation"), ("pcie_width", "PCIe width"),
           ("pcie_peak_bytes_per_second", "PCIe peak (B/s)"), ("nvlink_count", "NVLinks"),
           ("nvlink_peak_bytes_per_second", "NVLink peak (B/s)"))


def fail(msg):
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    raise SystemExit(2)


def headline(rec):
    """(counter, value, higher_is_better, cv over repetitions) of a record, or None when it has no usable one."""
    for counter, higher in HEADLINE:
        v = rec.get(counter)
        if not math.isnan(v) and v > 0:
            return counter, v, higher, rec.cv.get(counter, math.nan)
    t = rec.get(suite_json.TIME)
    return (suite_json.TIME, t, False, rec.cv.get(suite_json.TIME, math.nan)) if not math.isnan(t) and t > 0 else None


def gpu_label(suite, index):
    """The device index the run used when the file tells it (context 'device', or a peer record's counter),
    else the file's position."""
    dev = suite.context.get("device")
    if dev is None:
        devs = {r.get("device") for r in suite.ok("link") if not math.isnan(r.get("device"))}
        dev = int(devs.pop()) if len(devs) == 1 else None
    return f"GPU {dev}" if dev is not None else f"file {index}"


def rows_of(suite):
    """name -> (counter, value, higher_is_better, cv, seconds per launch): every benchmark's headline, and the
    link context facts (no time: always judged)."""
    out = {}
    for r in suite.ok():
        h = headline(r)
        if h:
            out[r.name] = h + (r.get(suite_json.TIME),)
    for key, label in CONTEXT:
        try:
            v = float(suite.context.get(key, "nan"))
        except ValueError:
            continue
        if not math.isnan(v):
            out[f"context: {label}"] = (key, v, True, 0.0, math.inf)
    return out


def link_path(name):
    """(path, bytes) of a link transfer name (link/h2d/pinned/ce/bytes:1024 -> (link/h2d/pinned/ce, 1024)),
    else None."""
    base, _, size = name.rpartition("/bytes:")
    return (base, int(size)) if name.startswith("link/") and size.isdigit() else None


def is_largest(name, rows):
    """Whether name is the largest transfer of its link path among the compared rows."""
    base, size = link_path(name)
    return all(size >= lp[1] for lp in map(link_path, (r[0] for r in rows)) if lp and lp[0] == base)


def judged_names(tables, min_time):
    """The names the check judges: each link path's largest transfer (pageable ones never), and of the rest
    those that every GPU that ran them measured at >= min_time seconds per launch (the context facts always)."""
    largest = {}
    for t in tables:
        for name in t:
            lp = link_path(name)
            if lp and lp[1] > largest.get(lp[0], -1):
                largest[lp[0]] = lp[1]
    out = set()
    for name in {n for t in tables for n in t}:
        lp = link_path(name)
        if lp and (largest[lp[0]] != lp[1] or "/pageable/" in name):
            continue
        times = [t[name][4] for t in tables if name in t]
        if all(not math.isnan(x) and x >= min_time for x in times):
            out.add(name)
    return out


def compare(tables, judged):
    """tables: per GPU rows_of(). Returns [(name, counter, [value or None per GPU], [score or None per GPU],
    [cv per GPU], judged)], score = value relative to the median of the siblings (1 = the same, < 1 worse)."""
    names = sorted({n for t in tables for n in t})
    out = []
    for name in names:
        entries = [t.get(name) for t in tables]
        present = [e for e in entries if e]
        if len(present) < 2:
            continue
        counter, higher = present[0][0], present[0][2]
        values = [e[1] if e and e[0] == counter else None for e in entries]
        scores = []
        for i, v in enumerate(values):
            sib = [w for j, w in enumerate(values) if j != i and w is not None]
            if v is None or not sib:
                scores.append(None)
                continue
            med = statistics.median(sib)
            scores.append((v / med if higher else med / v) if med > 0 and v > 0 else None)
        out.append((name, counter, values, scores, [e[3] if e else math.nan for e in entries], name in judged))
    return out


def is_flagged(score, cv, threshold, judged=True, spread=0.0):
    """A judged entry worse than the margin allows, by more than 3 x the GPU's own run-to-run spread (a copy
    whose repetitions scatter by 20 % says nothing about the link), and by more than 3 x the spread between
    GPUs of the model (spread: max(the noise profile's sigma, its range / 3); 0 without one)."""
    return (judged and score is not None and score < threshold and not (cv > 0 and 1 - score < 3 * cv)
            and not (spread > 0 and 1 - score < 3 * spread))


def fmt(v, counter):
    if v is None:
        return "–"
    if counter.endswith("bytes_per_second"):
        return f"{v / 1e9:,.1f} GB/s"
    if counter == "flops_per_second":
        return f"{v / 1e12:,.2f} TFLOP/s"
    if counter == suite_json.TIME:
        return f"{v * 1e6:,.2f} us"
    if v == int(v):
        return f"{v:,.0f}"
    return f"{v:,.1f}" if abs(v) >= 10 else f"{v:.3g}"


def report(files, suites, labels, rows, margin, min_time, show_all, spreads=None, profile_line=""):
    threshold = 1 - margin / 100
    spreads = spreads or {}
    flagged = [(name, counter, values, scores, i) for name, counter, values, scores, cvs, judged in rows
               for i, (s, cv) in enumerate(zip(scores, cvs))
               if is_flagged(s, cv, threshold, judged, spreads.get(name, 0.0))]
    n_judged = sum(1 for r in rows if r[5])
    lines = [f"# Node report: {len(suites)} GPU(s)", ""]
    names = sorted({s.gpu_name for s in suites})
    if len(names) > 1:
        lines += [f"Warning: the files come from different GPU models ({', '.join(names)}); differences between "
                  "them are not faults.", ""]
    lines += [f"A GPU is flagged where its headline counter is more than {margin:g} % worse than the median of "
              "its siblings (the other GPUs), and by more than 3 x its own coefficient of variation. Judged: "
              f"the largest transfer of each link path, and the benchmarks that take at least {min_time * 1e6:g} us "
              f"per launch on every GPU ({n_judged} of {len(rows)} compared entries; shorter ones are launch- or "
              "latency-bound and scatter between processes; pageable copies run at the host CPU's pace).",
              ""] + ([profile_line, ""] if profile_line else [])
    lines += ["| GPU | model | UUID | file | judged | flagged | worst judged (relative to siblings) |", "|---|---|---|---|---|---|---|"]
    for i, (f, s, label) in enumerate(zip(files, suites, labels)):
        mine = [(r[3][i], r[0]) for r in rows if r[3][i] is not None and r[5]]
        worst = min(mine) if mine else None
        n_flag = sum(1 for x in flagged if x[4] == i)
        lines.append(f"| {label} | {s.gpu_name} | {s.context.get('gpu_uuid', '–')} | {f} | {len(mine)} | {n_flag} | "
                     + (f"{worst[0]:.3f} ({worst[1]})" if worst else "–") + " |")
    lines.append("")
    if len(suites) < 2:
        lines += ["One GPU: nothing to compare it with.", ""]
    if flagged:
        lines += ["## Flagged", "", "| benchmark | counter | GPU | value | siblings' median | relative |", "|---|---|---|---|---|---|"]
        for name, counter, values, scores, i in sorted(flagged, key=lambda x: x[3][x[4]]):
            med = statistics.median([v for j, v in enumerate(values) if j != i and v is not None])
            lines.append(f"| {name} | {counter} | {labels[i]} | {fmt(values[i], counter)} | {fmt(med, counter)} | "
                         f"{scores[i]:.3f} |")
        lines.append("")
    elif len(suites) >= 2:
        lines += [f"Nothing flagged: on all {n_judged} judged entries every GPU is within {margin:g} % of its siblings, "
                  "or within 3 x its own or the model's between-GPU spread.", ""]
    # The links side by side: the largest size of each link path, and the link facts.
    shown = [r for r in rows if show_all] or [r for r in rows if link_path(r[0]) and is_largest(r[0], rows)] + \
        [r for r in rows if r[0].startswith(("context:", "latency/link/"))]
    if shown:
        lines += ["## " + ("Every compared entry" if show_all else "Links side by side (largest transfer of each path)"), "",
                  "| entry | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
        for name, counter, values, scores, cvs, judged in shown:
            cells = [fmt(v, counter) + (" **(flagged)**" if is_flagged(s, cv, threshold, judged, spreads.get(name, 0.0)) else "")
                     for v, s, cv in zip(values, scores, cvs)]
            lines.append(f"| {name}{'' if judged else ' (not judged)'} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines), flagged


def model_profile(suites, off):
    """({name: max(between-GPU sigma, range / 3)}, a line for the report) from the GPUs' model's noise profile, where it has
    one and the node is of one model; an unusable profile file is unusable input (exit 2)."""
    names = {s.gpu_name for s in suites}
    if off or len(names) != 1:
        return {}, "Noise profile: off (--no-profile)." if off else ""
    name = names.pop()
    path = compare_py.profile_path(name)
    if not path.is_file():
        return {}, f"Noise profile: none for {name} ({path} absent): only the margin and each GPU's own spread count."
    try:
        doc = compare_py.read_profile(path)
    except compare_py.InputError as e:
        fail(str(e))
    if doc["gpu_name"] != name or doc["metric"] != suite_json.TIME:
        fail(f"{path}: a noise profile of {doc['gpu_name']!r} for {doc['metric']}, not of {name!r} for {suite_json.TIME}")
    # 3 x this "spread" covers both the profile's sigma and its range (the largest change seen between two
    # healthy GPUs of the model), as compare.py's threshold does.
    # entries of a family whose code version differs from these runs' are left out (noise.matching)
    ranges = noise.matching(doc, noise.profile_ranges(doc), suites)
    spreads = {n: max(v, ranges.get(n, 0.0) / 3) for n, v in noise.matching(doc, noise.profile_sigmas(doc), suites).items()}
    return spreads, (f"Noise profile: {path.relative_to(compare_py.ROOT)} (between-GPU sigma and range of "
                                       f"{len(doc['between_gpu_sigma'])} benchmarks from {compare_py.profile_gpus(doc)} "
                                       "GPUs of this model).")


@suite_json.cli(PROG)
def main(argv=None):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("json", nargs="+", help="benchmarks.json of each GPU of the node")
    p.add_argument("--margin", type=float, default=10.0, help="percent worse than the siblings' median that "
                   "flags a GPU or link (default 10)")
    p.add_argument("--min-time", type=float, default=100.0, help="judge only benchmarks that take at least this "
                   "many microseconds per launch (median real_time) on every GPU (default 100)")
    p.add_argument("--all", action="store_true", help="list every compared benchmark, not only the links")
    p.add_argument("--no-profile", action="store_true", help="judge without the model's noise profile")
    p.add_argument("-o", "--output", help="also write the Markdown here")
    p.add_argument("--force", action="store_true", help="write -o even where git tracks it (a committed report)")
    args = p.parse_args(argv)
    if not 0 < args.margin < 100:
        fail(f"--margin must be a percentage between 0 and 100, got {args.margin:g}")
    if not (args.min_time >= 0 and math.isfinite(args.min_time)):
        fail(f"--min-time must be a number of microseconds >= 0, got {args.min_time:g}")
    real = [os.path.realpath(f) for f in args.json]
    if len(set(real)) != len(real):
        fail("the same file is given twice")
    if args.output:
        suite_json.check_output(args.output, args.json, PROG, args.force)
    suites = [suite_json.load_or_exit(f, PROG) for f in args.json]
    uuids = {}
    for f, s in zip(args.json, suites):
        u = s.context.get("gpu_uuid")
        if u and u in uuids:
            fail(f"{uuids[u]} and {f} are the same GPU ({u}); give one file per GPU")
        uuids[u] = f
    labels = [gpu_label(s, i) for i, s in enumerate(suites)]
    if len(set(labels)) != len(labels):  # two files claim one device index (different hosts?): use positions
        labels = [f"file {i}" for i in range(len(suites))]
    tables = [rows_of(s) for s in suites]
    min_time = args.min_time * 1e-6
    rows = compare(tables, judged_names(tables, min_time))
    spreads, profile_line = model_profile(suites, args.no_profile)
    text, flagged = report(args.json, suites, labels, rows, args.margin, min_time, args.all, spreads, profile_line)
    if args.output:
        suite_json.write_text(args.output, text + "\n", PROG)
    print(text)
    return 1 if flagged else 0


if __name__ == "__main__":
    raise SystemExit(main())
