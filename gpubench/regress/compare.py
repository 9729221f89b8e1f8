#!/usr/bin/env python3
"""Compare a suite run (the contender, the last argument) with one or more baseline runs, benchmark by
benchmark, with a threshold per benchmark from its measured noise (gpubench/regress/noise.py, in the manner of nvbench's
robust compare; the verdict rules: gpubench/regress/verdict.py RULES).

  compare.py BASE.json CONTENDER.json
  compare.py BASE1.json BASE2.json BASE3.json CONTENDER.json
  compare.py results/baseline/ CONTENDER.json     (a folder: every benchmarks.json below it is a baseline)

The threshold of a benchmark is max(--floor, --k x sigma, the profile's range), sigma the largest of the noise inside one run
(robust, from the repetitions), the spread of the baselines' medians and, from the model's noise profile,
its spread between runs on GPUs of the model; the profile's range is the largest change already seen
between two healthy GPUs of the model on that benchmark. Give several baselines of the same code, run in separate
processes and ideally on separate machines: repetitions inside one process do not see what changes between
processes (where buffers land, clocks), and only the spread between baselines or the profile does.
Verdicts, change = contender median / median of the baselines' medians - 1:
  same       |change| within the threshold;
  slower     worse by more than the threshold (this fails: exit 1);
  faster     better by more than the threshold;
  ambiguous  beyond the threshold, but not to be trusted: a launch under --min-time on either side (launch-
             and placement-bound), the contender noisier than the threshold allows, fewer than 3 unthrottled
             repetitions on a side, a pageable copy (they move between processes on one machine far beyond
             their repetitions), a change the way the SM clock moved by more than 1 % (noise.CLOCK_TOL), or (contender
             on another GPU, the benchmark not in the profile) a host-bound benchmark: host copies and the
             chase through host memory measure the host too. Samples taken while the GPU throttled (NVML
             reported power or thermal slowdown and the SM clock fell more than 1 % under the run's own)
             are dropped first.
The output says which case the comparison is, from the JSON contexts: same GPU (gpu_uuid), same GPU model
(gpu_name) or different GPU; same code (git_commit, both clean), same benchmark code (bench_code: what
gpubench is built from is the same, the commits differ elsewhere), different code (git_commit or
suite_version) or unknown (keys absent, or a dirty tree). Benchmark names from before the barrier rename (syncthreads/...)
are read under the new names (sync/syncthreads/...), so old baselines still compare.

GPUs of one model differ by more than their repetitions show (groups of GPUs on HBM latency and large-stride
reads, cache-edge working sets, the chasing SM's distance to the L2; docs/regression-statistics.md), and two
processes on one GPU by more than one process's repetitions. The noise profile, each
benchmark's spread between runs on GPUs of the model (gpubench/regress/noise_profile.py), raises the sigma to
max(within, between runs, profile) whenever a baseline is of the contender's model: found at
results/<slug>/noise_profile.json in this repository (slug as run_all.sh names the folder, e.g. h200), or
given with --profile FILE; --no-profile leaves it out.

A same-GPU profile (noise_profile --same-gpu: each benchmark's spread between runs on one GPU, for a CI
machine's own comparisons) applies instead when the contender and every baseline ran on its GPU: given with
--profile FILE, or found as same_gpu_profile.json in a baseline's folder or the folder above it. The
threshold is then max(--k x noise, the same-GPU spread), with --floor only for benchmarks it lacks (marked *).
Across GPUs (the runs not all on one GPU of a same-GPU profile) the between-GPU profile is widened by the
current code's spread between processes (profile.with_process): a same-GPU profile, --process-profile FILE, else
one given or found beside the baselines, else results/<slug>/same_gpu_profile.json; --no-process-profile leaves it
out. Where both measured a benchmark, sigma and range are their root-sum-square and the floor is
--measured-floor (default 0.03; 0.05, the --floor, before 2026-12-03). Across GPUs the profile's sigma is taken x
--gpu-pair-factor (default sqrt(2)) and a one-SM latency chase's range takes the SM placement term (--sm-placement).

Output (--format): text (the runs, the summary: verdict counts and the threshold's median, p90 and max over
the judged benchmarks, the lists, then the full table), markdown (for a pull request: changed rows first) or
json (every verdict with its numbers); docs/compare-output.md describes them.

Exit status: 0 nothing slower and nothing missing; 1 something slower; 2 unusable input (a file that is not
suite JSON, a NaN or non-positive time, a metric no benchmark has, a folder without benchmarks.json, a
noise profile malformed or of another GPU model, a run marked FAILED by run_all.sh, a run -- contender or
baseline -- in which no benchmark ran: every one errored or was skipped, so there is nothing to compare; a
contender that lists none misses them all: 3); 3
nothing slower but benchmarks of the baselines are missing from the contender (--allow-missing: 0); 70 a bug
(a traceback). A closed stdout pipe (compare ... | head) ends it quietly by SIGPIPE (141 in the shell).
Folders are searched through symbolic links (a link loop is walked once).
"""
import argparse
import json
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from gpubench import families
from gpubench.regress import compare_output, noise, profile
from gpubench import suite_json

PROG = "compare"
EXIT_REGRESSED, EXIT_UNUSABLE, EXIT_MISSING = 1, 2, 3
RUN_FILE = "benchmarks.json"
RUN_FILES = (RUN_FILE, RUN_FILE + ".gz")  # a user's run, and a committed run as stored (compressed)
ROOT = Path(__file__).resolve().parents[2]
PROFILE_FILE = "noise_profile.json"
SAME_GPU_FILE = "same_gpu_profile.json"  # a same-GPU profile found beside the baselines
NOT_NEEDED = "noise profile: not used (no baseline of the contender's GPU model, by gpu_name, with a gpu_uuid on both sides)"


class InputError(Exception):
    """Unusable command line input; the message is one line."""


FAILED_FILE = "FAILED"  # run_all.sh leaves it in a run's folder (and a node run's) when the run did not finish


def run_files(folder):
    """Every benchmarks.json (or .gz) below `folder`, sorted, following symbolic links to folders (a run linked
    into a folder of baselines is one of them) but never into a folder already walked (a link loop)."""
    found, walked = [], set()
    for top, dirs, files in os.walk(folder, followlinks=True):
        real = os.path.realpath(top)
        if real in walked:
            dirs[:] = []
            continue
        walked.add(real)
        found += [Path(top) / f for f in files if f in RUN_FILES]
    return sorted(found)


def refuse_failed(path):
    """InputError when `path` is a run run_all.sh marked FAILED (in its folder, or a node run's above it): an
    unfinished run is no baseline, no contender, and no input of a noise profile."""
    folder = Path(path).parent
    for where in (folder, folder.parent):
        if (where / FAILED_FILE).is_file():
            raise InputError(f"{path}: its run failed ({where / FAILED_FILE} says why); not used")


def expand(arg, last):
    """A file as it is; a folder: every benchmarks.json (or benchmarks.json.gz) below it, sorted (exactly one for
    the contender); a run marked FAILED is refused (InputError)."""
    p = Path(arg)
    if not p.is_dir():
        refuse_failed(p)
        return [p]
    found = run_files(p)
    for f in found:
        refuse_failed(f)
    if not found:
        raise InputError(f"{arg}: a folder without any {RUN_FILE} below it")
    if last and len(found) != 1:
        raise InputError(f"{arg}: the contender (the last argument) must be one run, but this folder holds "
                         f"{len(found)} {RUN_FILE} files")
    return found


def split_paths(args):
    """-> (baseline paths, contender path): the last argument is the contender, the others baselines."""
    if len(args) < 2:
        raise InputError("give at least one baseline and the contender (the last argument)")
    contender = expand(args[-1], last=True)[0]
    bases, seen = [], set()
    for a in args[:-1]:
        for p in expand(a, last=False):
            key = os.path.realpath(p)
            if key == os.path.realpath(contender):
                continue  # a folder of runs that holds the contender too: it is not its own baseline
            if key in seen:
                raise InputError(f"{p}: given twice as a baseline (a copy would make the runs look alike)")
            seen.add(key)
            bases.append(p)
    if not bases:
        raise InputError(f"no baseline left: every baseline given is the contender {contender}")
    return bases, contender


def identity(ctx):
    """Short description of a run's code and GPU from its context."""
    commit = ctx.get("git_commit")
    code = "commit unknown" if not commit or commit == "unknown" else f"commit {commit[:10]}"
    if str(ctx.get("git_dirty", "")).lower() in ("true", "1", "yes"):
        code += " (dirty)"
    if ctx.get("suite_version"):
        code += f", suite {ctx['suite_version']}"
    uuid = ctx.get("gpu_uuid")
    gpu = ctx.get("gpu_name", "unknown GPU") + (f" {uuid}" if uuid else "")
    return f"{gpu}; {code}"


def case_lines(bases, cont):
    """One line per baseline saying which case it is against the contender, and a summary line."""
    cases = [tuple(what if what != "unknown" else f"{kind} unknown" for what, kind in
                   zip(noise.same_code_and_machine(b.context, cont.context), ("GPU", "code"))) for b in bases]
    lines = [f"baseline:  {b.path} ({identity(b.context)}): {m}, {c}" for b, (m, c) in zip(bases, cases)]
    lines.append(f"contender: {cont.path} ({identity(cont.context)})")
    boards = sorted({str(r.context.get(noise.BOARD)) for r in list(bases) + [cont] if r.context.get(noise.BOARD)})
    if len(boards) > 1:
        lines.append(f"boards: {', '.join(boards)}: one model, several board part numbers (on H200s they tell two HBM "
                     "behaviours apart, 8-10 % on large-stride HBM reads); the model's profile over all boards applies")
    machines, codes = sorted({m for m, _ in cases}), sorted({c for _, c in cases})
    lines.append(f"case: {' / '.join(machines)}; {' / '.join(codes)}"
                 + (" (the baselines differ; see each above)" if len(cases) > 1 and len(set(cases)) > 1 else ""))
    return lines, cases


def read_profile(path):
    """A noise profile file -> its dict, checked (noise.profile_sigmas); InputError with one line if unusable."""
    try:
        doc = suite_json.read_json(path)
        if profile.is_same_gpu(doc):
            profile.check_same_gpu(doc)
            return doc
        noise.profile_sigmas(doc)
        noise.profile_ranges(doc)
        for board in doc.get("by_board") or {}:
            noise.profile_for_board(doc, board)
        bad = next((r for r in doc["runs"] if not isinstance(r, dict) or not isinstance(r.get("gpu_uuid", ""), str)), None)
        if bad is not None:
            raise ValueError(f"not a noise profile: a run {json.dumps(bad)[:60]} without a gpu_uuid string")
    except suite_json.SuiteJsonError as e:
        raise InputError(str(e)) from None
    except ValueError as e:
        raise InputError(f"{path}: {e}") from None
    except (TypeError, KeyError, AttributeError, OverflowError) as e:  # malformed in a way not checked above
        raise InputError(f"{path}: not a noise profile ({type(e).__name__}: {e})") from None
    return doc


def profile_path(gpu_name):
    """Where a GPU model's noise profile lives in this repository: results/<slug>/noise_profile.json."""
    return ROOT / "results" / noise.slug(gpu_name) / PROFILE_FILE


def profile_gpus(doc):
    """How many GPUs (distinct gpu_uuid) a checked noise profile was made from."""
    return len({r.get("gpu_uuid") for r in doc["runs"] if isinstance(r, dict)})


def same_model(base, cont):
    """True when both runs name their GPU (gpu_uuid) and its model is the same: the same GPU or another of the
    model. Files from before gpu_uuid are left out: the profile describes runs that say where they ran."""
    name = cont.context.get("gpu_name")
    return bool(name and base.context.get("gpu_name") == name and base.context.get("gpu_uuid")
                and cont.context.get("gpu_uuid"))


@dataclass
class Chosen:
    """The noise profile a comparison uses, and the header line that says so."""
    line: str
    sigmas: dict = None       # {name: sigma}, None for no profile
    ranges: dict = None       # {name: range}
    same_gpu: bool = False    # a same-GPU profile: no floor where it measured
    unfloored: frozenset = frozenset()  # the same-GPU profile's names (no floor), or the names both terms measured
    measured_floor: float = None  # the floor of the names both measured (None: no floor, a same-GPU profile)
    placed: int = 0           # one-SM latency benchmarks whose range took the SM placement term


def find_same_gpu(bases):
    """A same-GPU profile beside the baselines: SAME_GPU_FILE in a baseline's folder or the folder above it
    (where the run folders are); None when there is none."""
    for b in bases:
        for d in list(Path(b.path).parents)[:2]:
            if (d / SAME_GPU_FILE).is_file():
                return d / SAME_GPU_FILE
    return None


def choose_same_gpu(doc, path, bases, cont, metric):
    """-> (Chosen or None, a line saying why not). A same-GPU profile applies when the contender and every
    baseline ran on one GPU the file has; one of another model is unusable input (InputError)."""
    if doc["gpu_name"] != cont.gpu_name:
        raise InputError(f"{path}: a noise profile of {doc['gpu_name']!r}, but the runs are {cont.gpu_name!r}")
    if doc["metric"] != metric:
        return None, f"same-GPU profile: not used ({path} is for {doc['metric']}, the metric is {metric})"
    part = profile.same_gpu_for_runs(doc, bases, cont)
    if part is None:
        return None, f"same-GPU profile: not used ({path}: the runs are not all on one GPU it has)"
    sigmas, ranges, runs = part
    guess = " (a rough guess from 2 runs: build it from more)" if runs < 3 else ""
    return Chosen(f"noise profile: {path} (same GPU {cont.context['gpu_uuid']}: the spread between {runs} runs of "
                  f"{len(sigmas)} benchmarks{guess}); the floor only for benchmarks it has not measured "
                  f"(marked {compare_output.FLOOR_MARK})", sigmas, ranges, True, frozenset(sigmas)), None


def choose_profile(args, bases, cont, metric):
    """-> Chosen. A same-GPU profile (--profile FILE, or found beside the baselines) where every run is on its
    GPU; else the model's between-GPU profile, which applies when a baseline ran on a GPU of the contender's
    model, the same GPU or another: every baseline is another process, and the profile's spread is between
    processes on GPUs of the model. A profile for another model is unusable input (InputError)."""
    if args.no_profile:
        return Chosen("noise profile: off (--no-profile)")
    doc = read_profile(args.profile) if args.profile is not None else None
    same_path = Path(args.profile) if profile.is_same_gpu(doc) else None if doc else find_same_gpu(bases)
    note = None
    if same_path:
        chosen, note = choose_same_gpu(doc or read_profile(same_path), same_path, bases, cont, metric)
        if chosen:
            return chosen
        doc = None if doc and profile.is_same_gpu(doc) else doc  # the model's profile, as without --profile
    chosen = choose_between_gpu(doc, Path(args.profile) if doc else profile_path(cont.gpu_name), bases, cont, metric)
    if chosen.sigmas is not None:
        chosen = add_process(args, chosen, same_path, bases, cont, metric)
        if args.sm_placement != "off":
            chosen = add_placement(chosen, bases, cont, args.sm_placement == ANY)
        chosen = gpu_pair(chosen, bases, cont, args.gpu_pair_factor)
    if note:
        chosen.line = note + "\n" + chosen.line
    return chosen


def process_path(args, same_path, gpu_name):
    """The same-GPU profile whose spread between processes joins the between-GPU profile's: --process-profile,
    else a same-GPU profile given or found beside the baselines (it did not apply as such), else this
    repository's results/<slug>/same_gpu_profile.json; None when there is none or --no-process-profile."""
    if args.no_process_profile:
        return None
    if args.process_profile is not None:
        return Path(args.process_profile)
    default = ROOT / "results" / noise.slug(gpu_name) / SAME_GPU_FILE
    return same_path or (default if default.is_file() else None)


def add_process(args, chosen, same_path, bases, cont, metric):
    """chosen (a between-GPU profile's part) with the current code's spread between processes from a same-GPU
    profile (profile.with_process): where both measured a benchmark, their root-sum-square and no floor. A
    same-GPU profile of another model is unusable input (InputError); one of another metric is not used."""
    path = process_path(args, same_path, cont.gpu_name)
    if path is None:
        return chosen
    doc = read_profile(path)
    if not profile.is_same_gpu(doc):
        raise InputError(f"{path}: not a same-GPU profile (noise_profile --same-gpu makes one)")
    if doc["gpu_name"] != cont.gpu_name:
        raise InputError(f"{path}: a noise profile of {doc['gpu_name']!r}, but the runs are {cont.gpu_name!r}")
    if doc["metric"] != metric:
        chosen.line += f"\nprocess spread: not used ({path} is for {doc['metric']}, the metric is {metric})"
        return chosen
    psig, prange = profile.process_spread(doc, list(bases) + [cont])
    sigmas, ranges, both = profile.with_process(chosen.sigmas, chosen.ranges or {}, psig, prange, families.host_bound)
    floor = args.floor if args.measured_floor is None else args.measured_floor
    line = (f"{chosen.line}\nprocess spread: {path} (the spread between processes of {len(psig)} benchmarks on "
            f"{len(doc['by_gpu'])} GPU(s)), root-sum-square with the between-GPU part; {len(both)} benchmarks have "
            f"both, their floor {floor:g} (--measured-floor)")
    return Chosen(line, sigmas, ranges, False, frozenset(both), floor)


def on_another_gpu(bases, cont):
    """Whether a baseline ran on another GPU (gpu_uuid) than the contender."""
    return any(b.context.get("gpu_uuid") != cont.context.get("gpu_uuid") for b in bases)


def add_placement(chosen, bases, cont, unnamed=True):
    """chosen with the SM placement term (profile.with_placement) where a baseline ran on another GPU than the
    contender: a one-SM latency chase moves with the SM it lands on, by the difference of the chasing SMs' L2
    latency where the runs say which SM (`smid`), else (unnamed: --sm-placement any) by up to the per-SM spread
    the runs measure."""
    if not on_another_gpu(bases, cont):
        return chosen
    ranges, raised, known = profile.with_placement(chosen.ranges or {}, list(bases) + [cont], unnamed)
    if not raised:
        return chosen
    chosen.line += (f"\nSM placement: {len(raised)} one-SM latency benchmarks add to their range (root-sum-square) "
                    f"the L2 latency of their chasing SMs ({profile.SM_SPREAD}): {len(known)} the difference "
                    f"between the SMs they ran on (smid), {len(raised) - len(known)} the per-SM spread")
    chosen.ranges, chosen.placed = ranges, len(raised)
    return chosen


def gpu_pair(chosen, bases, cont, factor):
    """chosen with its sigmas x factor where a baseline ran on another GPU than the contender: the profile's sigma
    is one GPU's about the model's mean, a change between two GPUs the difference of two such draws."""
    if factor == 1 or not on_another_gpu(bases, cont):
        return chosen
    chosen.sigmas = {n: v * factor for n, v in chosen.sigmas.items()}
    chosen.line += f"\nbetween two GPUs: the profile's sigma x {factor:.3g} (--gpu-pair-factor)"
    return chosen


def choose_between_gpu(doc, path, bases, cont, metric):
    """-> Chosen for the model's between-GPU profile: doc, given with --profile, or the file at path."""
    needed = any(same_model(b, cont) for b in bases)
    if doc is None and not (needed and path.is_file()):
        return Chosen(NOT_NEEDED if not needed else
                      f"noise profile: none at {path} (gpubench/regress/noise_profile.py makes one)")
    doc = doc or read_profile(path)  # a file given is checked even where this comparison does not need it
    if doc["gpu_name"] != cont.gpu_name:
        raise InputError(f"{path}: a noise profile of {doc['gpu_name']!r}, but the runs are {cont.gpu_name!r}")
    if not needed:
        return Chosen(NOT_NEEDED)
    if doc["metric"] != metric:
        return Chosen(f"noise profile: not used ({path} is for {doc['metric']}, the metric is {metric})")
    # the board's part where every run shares one, and without entries of another code version (noise.matching)
    sigmas, ranges, board, gpus = noise.profile_for_runs(doc, [b for b in bases if same_model(b, cont)], cont)
    if board:
        return Chosen(f"noise profile: {path} ({doc['gpu_name']}, board {board}: between-GPU sigma of "
                      f"{len(sigmas)} benchmarks from {gpus} GPUs of that board), for the baseline(s) of "
                      "the contender's model and board", sigmas, ranges)
    return Chosen(f"noise profile: {path} ({doc['gpu_name']}, between-GPU sigma of "
                  f"{len(doc['between_gpu_sigma'])} benchmarks from {profile_gpus(doc)} GPUs), for the "
                  "baseline(s) of the contender's model", sigmas, ranges)


ANY = "any"  # --sm-placement's default: the chasing SMs where the runs name them, else the per-SM spread


def add_process_options(p):
    """--process-profile / --no-process-profile (compare and detection)."""
    proc = p.add_mutually_exclusive_group()
    proc.add_argument("--process-profile", metavar="FILE",
                      help="a same-GPU profile whose spread between processes joins the between-GPU profile "
                           "when the runs are not all on its GPU (default: a same-GPU profile given or found "
                           f"beside the baselines, else results/<slug>/{SAME_GPU_FILE} in this repository)")
    proc.add_argument("--no-process-profile", action="store_true",
                      help="the between-GPU profile alone (as before the process spread)")
    p.add_argument("--measured-floor", type=non_negative, default=noise.MEASURED_FLOOR,
                   help="the floor where the between-GPU profile and the process spread both measured a benchmark "
                        f"(default {noise.MEASURED_FLOOR:g}; 0.05 was the default before 2026-12-03; "
                        "docs/regression-tracking.md measures both)")
    p.add_argument("--sm-placement", choices=("named", "any", "off"), default=ANY, nargs="?", const=ANY,
                   help="across GPUs, add to each one-SM latency chase's range the difference of L2 latency between "
                        f"the SMs the runs' chases ran on ({profile.SM_SPREAD}, counter smid): any (default, or the "
                        "bare flag) where every run says its chasing SM, else the whole per-SM spread; named only "
                        "where every run says it; off "
                        "never (the default before 2026-12-03) (docs/regression-tracking.md, 'The chasing SM')")
    p.add_argument("--skip-rule", action="append", choices=noise.OPTIONAL_RULES, default=[], metavar="RULE",
                   help="judge without the rule split or without the batch term of the thresholds (both added on "
                        "2026-12-03; repeat for both): the judgement of before them (docs/regression-statistics.md)")
    p.add_argument("--gpu-pair-factor", type=non_negative, default=noise.GPU_PAIR,
                   help=f"across GPUs, the profile's sigma times this (default sqrt(2) = {noise.GPU_PAIR:.4g}: a "
                        "change between two GPUs; 1 was the default before 2026-12-03)")


def non_negative(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text!r}")
    return v


def header(args, bases, cont, metric, chosen):
    """The lines before the verdicts: the runs and their case, warnings, the profile used, the threshold rule."""
    out, cases = case_lines(bases, cont)
    if any(m == "different GPU" for m, _ in cases):
        names = sorted({b.gpu_name for b in bases} - {cont.gpu_name})
        warning = (f"WARNING: different GPUs (baseline {', '.join(map(repr, names))}, contender {cont.gpu_name!r}): "
                   "changes may come from the hardware, not the code")
        print(f"{PROG}: {warning}", file=sys.stderr)
        out.append(warning)
    commits = {b.context.get("git_commit") for b in bases}
    codes = {noise.bench_code(b.context) for b in bases}
    if len(bases) > 1 and len(commits) > 1 and None not in commits and (len(codes) > 1 or None in codes):
        out.append("WARNING: the baselines are from different commits: their spread is not noise alone")
    out.append(chosen.line)
    direction = "higher" if metric.endswith("_per_second") else "lower"
    if chosen.same_gpu:
        rule = f"max({args.k:g} x noise, the same-GPU spread; {args.floor:g} only where it has no measurement)"
    elif chosen.unfloored:
        placed = " (+) SM placement" if chosen.placed else ""
        rule = (f"max({args.k:g} x noise, the profile's range (+) the process range{placed}, the floor: "
                f"{chosen.measured_floor:g} where both measured, {args.floor:g} elsewhere)")
    else:
        rule = f"max({args.floor:g}, {args.k:g} x noise" + (", the profile's range" if chosen.ranges else "") + ")"
    out.append(f"metric: {args.metric} ({direction} is better); threshold = {rule}, "
               f"noise from {len(bases)} baseline run(s)" + (" and the profile" if chosen.sigmas else "")
               + ("" if len(bases) > 1 else
                  " (one baseline knows only the noise inside its own run: give several for the spread between runs)"))
    return out, cases


def judge(args, bases, cont, metric, chosen):
    """compare's verdicts (noise.compare_suites rows) of cont against bases with the profile chosen
    (choose_profile) and the settings of args (min_time, floor, k); detection.py judges planted copies by it."""
    # Another GPU may sit in another host: what measures the host (host copies, the host chase) is not judged then.
    other_gpu = on_another_gpu(bases, cont)
    return noise.compare_suites(bases, cont, args.min_time, args.floor, args.k, metric, profile=chosen.sigmas,
                                profile_range=chosen.ranges,
                                host_bound=families.host_bound if other_gpu else None, unjudged=families.unjudged,
                                unfloored=dict.fromkeys(chosen.unfloored, chosen.measured_floor or 0.0),
                                rules=noise.rules_without(args.skip_rule), batch="batch" not in args.skip_rule)


def build_report(args, bases, cont, metric, chosen):
    """The comparison's verdicts and everything its output shows (compare_output.Report)."""
    lines, cases = header(args, bases, cont, metric, chosen)
    rows = judge(args, bases, cont, metric, chosen)
    base_names = list(dict.fromkeys(n for b in bases for n in b.by_name))
    skipped = sorted({(r.name, r.skipped) for s in bases + [cont] for r in s.records if r.skipped},
                     key=lambda e: f"{e[0]}: {e[1]}")
    ident = lambda s: {k: s.context.get(k) for k in ("gpu_name", "gpu_uuid", "git_commit", "bench_code")}
    meta = {"metric": metric, "higher_is_better": metric.endswith("_per_second"),
            "settings": {"floor": args.floor, "k": args.k, "min_time": args.min_time,
                         "measured_floor": chosen.measured_floor, "gpu_pair_factor": args.gpu_pair_factor,
                         "skipped_rules": sorted(set(args.skip_rule))},
            "baselines": [{"path": str(b.path), **ident(b), "machine": m, "code": c} for b, (m, c) in zip(bases, cases)],
            "contender": {"path": str(cont.path), **ident(cont)},
            "profile": {"line": chosen.line, "sm_placement": chosen.placed, "kind": None if chosen.sigmas is None else
                        "same-gpu" if chosen.same_gpu else "between-gpu+process" if chosen.unfloored else
                        "between-gpu"}}
    return compare_output.Report(
        lines, rows, metric, args.min_time, missing=[n for n in base_names if n not in cont.by_name],
        new=[n for n in cont.by_name if n not in set(base_names)],
        errored=sorted({r.name for s in bases + [cont] for r in s.records if r.error}), skipped=skipped,
        mark_floor=chosen.same_gpu, meta=meta)


@suite_json.cli(PROG)
def main(argv=None):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", metavar="BASE.json ... CONTENDER.json",
                   help="baseline runs (files or folders), then the contender (the last argument)")
    p.add_argument("--min-time", type=non_negative, default=noise.MIN_TIME,
                   help=f"seconds per launch (baseline or contender median) below which nothing is called slower or faster, "
                        f"only ambiguous (default {noise.MIN_TIME:g})")
    p.add_argument("--floor", type=non_negative, default=noise.FLOOR,
                   help=f"smallest threshold, relative (default {noise.FLOOR:g}: noise.FLOOR)")
    p.add_argument("--k", type=non_negative, default=noise.K_SIGMA,
                   help=f"threshold in measured sigmas (default {noise.K_SIGMA:g}: noise.K_SIGMA)")
    p.add_argument("--metric", default="time",
                   help="'time' (real_time per launch, the default) or a counter name; counters ending in "
                        "_per_second are higher-is-better, all others lower-is-better")
    prof = p.add_mutually_exclusive_group()
    prof.add_argument("--profile", metavar="FILE",
                      help="noise profile to use when a baseline is of the contender's GPU model (default: "
                           f"results/<slug>/{PROFILE_FILE} in this repository, when there is one), or a same-GPU "
                           f"profile (noise_profile --same-gpu; default: {SAME_GPU_FILE} beside the baselines)")
    prof.add_argument("--no-profile", action="store_true", help="use no noise profile")
    add_process_options(p)
    p.add_argument("--format", choices=compare_output.FORMATS, default="text",
                   help="text (default), markdown (a table for a pull request, changed rows first) or json (every "
                        "verdict with its numbers; docs/compare-output.md)")
    p.add_argument("--allow-missing", action="store_true",
                   help="benchmarks of the baselines missing from the contender do not fail (exit 0, not 3)")
    args = p.parse_args(argv)
    try:
        base_paths, cont_path = split_paths(args.runs)
    except InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_UNUSABLE
    bases = [suite_json.load_or_exit(b, PROG) for b in base_paths]
    cont = suite_json.load_or_exit(cont_path, PROG)
    # A run whose benchmarks all errored or were skipped compares as "nothing slower" and would pass: unusable
    # input (exit 2, not 3: nothing is missing by name, the run is no measurement). A contender that lists no
    # benchmark at all misses every one of the baselines' (exit 3, as before); a baseline that lists none is 2.
    for side, suite in [("baseline", b) for b in bases] + [("contender", cont)]:
        if not suite.ok() and (suite.records or side == "baseline"):
            print(f"{PROG}: error: {suite.path}: no benchmark of the {side} ran ({len(suite.errors())} errored, "
                  f"{len(suite.skips())} skipped): nothing to compare", file=sys.stderr)
            return EXIT_UNUSABLE
    metric = suite_json.TIME if args.metric == "time" else args.metric
    for side, suite in [("baseline", b) for b in bases] + [("contender", cont)]:
        if suite.ok() and not any(metric in r.samples for r in suite.ok()):
            known = sorted({k for r in suite.ok() for k in r.samples} - {suite_json.TIME})
            print(f"{PROG}: error: --metric {args.metric!r}: no benchmark in the {side} {suite.path} has it "
                  f"(use 'time' or one of: {', '.join(known)})", file=sys.stderr)
            return EXIT_UNUSABLE

    try:
        chosen = choose_profile(args, bases, cont, metric)
    except InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_UNUSABLE
    report = build_report(args, bases, cont, metric, chosen)
    slower = [r for r in report.rows if r.verdict == noise.SLOWER]
    missing = report.missing
    print(report.render(args.format))
    if slower:
        return EXIT_REGRESSED
    if missing and not args.allow_missing:
        print(f"{PROG}: {len(missing)} benchmark(s) of the baseline missing from the contender "
              "(exit 3; --allow-missing accepts that)", file=sys.stderr)
        return EXIT_MISSING
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
