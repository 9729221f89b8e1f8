"""Load and validate Google Benchmark JSON written by gpubench; give one tidy record per benchmark.

Every script in plots/ reads its input through load(), so the JSON assumptions live here only:
- top level {"context": {...}, "benchmarks": [...]}, context["suite"] == SUITE;
- Google Benchmark 1.7.x and 1.8.x entries: run_name, run_type ("iteration"/"aggregate"),
  aggregate_name, real_time in time_unit, user counters as extra numeric keys;
- manual time makes Google Benchmark append "/manual_time"; the logical name drops it;
- names from before a family rename are read under the current name (families.canonical);
- a skipped benchmark (1.8: "skipped" + "skip_message"; 1.7: an error whose message starts with
  "skipped: ", mh::kSkipPrefix) is not an error: Record.skipped holds the reason;
- a time that is NaN, infinite, zero or negative, any other number that is not finite (or too large for a
  float), a benchmark without time_unit or with one not known, a benchmark listed twice (also under two
  spellings of one name, stride:1 and stride:01), a name segment that looks like a number but is not plain
  ASCII digits, or a context key of the suite that is not a string (or a number where a number is meant)
  makes the file unusable: one line naming the file and the field (validate() is the one check);
- Google Benchmark's own cv aggregate may be NaN (a counter whose mean is 0): it is not checked;
- model predictions: a model.json beside the file ({"<name>": {"sectors_per_request": 4, ...}}, written by
  gpubench --model_out) fills Record.model; Record.get() falls back on it, so runs that carried the
  predictions as counters and runs with the side file read alike.
"""
import gzip
import json
import math
import re
import os
import statistics
import sys
from dataclasses import dataclass, field

from gpubench import families

SUITE = "gpu-memory-microbench"
TIME = "real_time"  # samples key for per-launch time, always in seconds
_TO_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# Numeric keys that Google Benchmark writes itself; every other number is a user counter.
_NOT_COUNTERS = {"family_index", "per_family_instance_index", "repetitions", "repetition_index",
                 "threads", "iterations", "real_time", "cpu_time"}
SKIP_PREFIX = "skipped: "  # mh::kSkipPrefix: how a skip reads under Google Benchmark 1.7
MODEL_FILE = "model.json"
MAX_DIGITS = 18  # a name segment's number: sizes and counts, far under 10**18
# Context keys gpubench writes (Google Benchmark's --benchmark_context and AddCustomContext write strings only);
# readers use them as text or, for CONTEXT_NUMBERS, as numbers. Google Benchmark's own keys (num_cpus, caches) are not checked.
CONTEXT_TEXT = ("suite", "gpu_name", "gpu_uuid", "compute_capability", "driver_version", "runtime_version",
                "git_commit", "git_dirty", "suite_version", "bench_code", "board_part_number", "vbios_version",
                "cublas_math", "clock_events_source", "link_info_source", "energy_source")
CONTEXT_NUMBERS = ("sm_count", "l2_bytes", "sm_clock_mhz", "mem_clock_mhz", "l1_smem_per_sm_bytes", "global_mem_bytes",
                   "pcie_gen", "pcie_width", "pcie_peak_bytes_per_second", "nvlink_count", "nvlink_peak_bytes_per_second",
                   "hierarchy_code_version", "hierarchy_placements", "idle_watts")
EXIT_UNUSABLE = 2
EXIT_CRASH = 70  # sysexits' EX_SOFTWARE: a bug in the tool (a traceback follows), never a verdict


class SuiteJsonError(Exception):
    """A file that is not usable suite JSON; the message is one line for the user."""


def parse_name(name):
    """'coalescing/read/hbm/stride:1' -> {'family': 'coalescing', 'op': 'read', 'level': 'hbm', 'stride': 1}.

    key:value segments become keys (int when numeric); other segments are positional, named by
    the family registry (gpubench/families.py) where the family is known and always kept in order under 'pos'.
    """
    family, *segments = name.split("/")
    fields, pos = {"family": family}, []
    for seg in segments:
        key, sep, value = seg.partition(":")
        if sep:
            fields[key] = _number_or_text(name, key, value)
        else:
            pos.append(seg)
    known = families.get(family)
    fields.update(zip(known.fields if known else (), pos))
    fields["pos"] = tuple(pos)
    return fields


def _short(text, n=100):
    """A name as an error message shows it: a hostile file's 5000-character name is cut."""
    return text if len(text) <= n else text[:n - 3] + "..."


def _number_or_text(name, key, value):
    """A segment's value as int when it is a plain number; ValueError (one line) when it looks like one but is
    not plain ASCII digits or is too long to be a size (int() would take '٣' and choke on 5000 digits)."""
    digits = value[1:] if value.startswith("-") else value
    if not digits.isdigit():
        return value
    if not (digits.isascii() and len(digits) <= MAX_DIGITS):
        raise ValueError(f"{_short(name)}: segment {_short(key + ':' + value, 40)} is not a plain number "
                         f"(ASCII digits, at most {MAX_DIGITS})")
    return int(value)


def _cv(xs):
    """Coefficient of variation (sample stddev / mean), as Google Benchmark computes it."""
    if len(xs) < 2 or not all(map(math.isfinite, xs)) or statistics.fmean(xs) == 0:
        return math.nan
    return statistics.stdev(xs) / statistics.fmean(xs)


@dataclass
class Record:
    name: str                                    # logical name, e.g. coalescing/read/hbm/stride:1
    fields: dict                                 # parse_name(name)
    samples: dict = field(default_factory=dict)  # counter -> per-repetition values (TIME in seconds)
    median: dict = field(default_factory=dict)   # counter -> median
    cv: dict = field(default_factory=dict)       # counter -> coefficient of variation (nan if unknown)
    error: str = None                            # Google Benchmark error message; plots leave these out
    skipped: str = None                          # why the benchmark was skipped (not an error); left out too
    model: dict = field(default_factory=dict)    # model predictions from model.json, counter -> value

    def get(self, counter, default=math.nan):
        """Median of a measured counter, else the model's prediction of that name, else default."""
        return self.median.get(counter, self.model.get(counter, default))

    def has(self, counter):
        return counter in self.median or counter in self.model


class Suite:
    def __init__(self, path, context, records):
        self.path, self.context, self.records = path, context, records
        self.by_name = {r.name: r for r in records}

    @property
    def gpu_name(self):
        return self.context.get("gpu_name", "unknown GPU")

    @property
    def gpu_uuid(self):
        return self.context.get("gpu_uuid")

    def ok(self, *names):
        """Records neither errored nor skipped whose family is one of `names` (all when none given)."""
        return [r for r in self.records
                if not r.error and not r.skipped and (not names or r.fields["family"] in names)]

    def skips(self):
        return [r for r in self.records if r.skipped]

    def errors(self):
        return [r for r in self.records if r.error]

    def value(self, name, counter):
        """Median of `counter` for benchmark `name`, or None when absent or errored."""
        r = self.by_name.get(name)
        v = r.get(counter) if r and not r.error and not r.skipped else math.nan
        return None if math.isnan(v) else v


def logical_name(entry):
    run_name = entry.get("run_name")
    if run_name is None:  # very old Google Benchmark: aggregates carry the suffix in name only
        run_name = entry["name"]
        if entry.get("run_type") == "aggregate":
            run_name = run_name.removesuffix("_" + entry.get("aggregate_name", ""))
    # Skips registered before 2026-11-30T23:00 carried Google Benchmark's "/iterations:1" (a fixed count).
    return families.canonical(re.sub(r"/iterations:1$", "", run_name.removesuffix("/manual_time")))


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_cv(entry):
    """Google Benchmark's cv aggregate: a fraction, NaN where a counter's mean is 0."""
    return entry.get("aggregate_name") == "cv" or entry.get("aggregate_unit") == "percentage"


def _check_numbers(path, name, entry):
    """Every number of an entry finite and within a float (an integer above 1e308 is not); time_unit known."""
    if _is_cv(entry):
        return
    for k, v in entry.items():
        if _is_number(v) and not (abs(v) <= sys.float_info.max if isinstance(v, int) else math.isfinite(v)):
            what = f"an integer of {len(str(abs(v)))} digits" if isinstance(v, int) else str(v)
            raise SuiteJsonError(f"{path}: {name}: {k} is {what}, not a finite number")
    if "real_time" in entry:
        if "time_unit" not in entry:
            raise SuiteJsonError(f"{path}: {name}: no time_unit (the unit of real_time)")
        if entry["time_unit"] not in _TO_SECONDS:
            raise SuiteJsonError(f"{path}: {name}: unknown time_unit {str(entry['time_unit'])[:24]!r} "
                                 f"(one of {', '.join(_TO_SECONDS)})")


def _values(entry):
    """Counter -> value for one entry (checked by _check_numbers), with real_time converted to seconds."""
    out = {k: float(v) for k, v in entry.items() if k not in _NOT_COUNTERS and _is_number(v)}
    if _is_cv(entry):
        out[TIME] = float(entry.get("real_time", math.nan))  # a fraction already, whatever time_unit says
    elif "real_time" in entry:
        out[TIME] = float(entry["real_time"]) * _TO_SECONDS[entry["time_unit"]]
    return out


def _skip_reason(entry):
    if entry.get("skipped"):
        return entry.get("skip_message") or "skipped"
    message = entry.get("error_message") or ""
    return message[len(SKIP_PREFIX):] if entry.get("error_occurred") and message.startswith(SKIP_PREFIX) else None


def _check(path, name, entries):
    """Unusable: the same repetition or aggregate twice, or a time that cannot be a launch's duration."""
    seen = set()
    for e in entries:
        kind = e.get("run_type", "iteration")
        key = (kind, e.get("aggregate_name") if kind == "aggregate" else e.get("repetition_index"))
        if key in seen and (kind == "aggregate" or key[1] is not None):
            raise SuiteJsonError(f"{path}: {name} is listed twice ({kind} {key[1]}); one run per file")
        seen.add(key)
        if kind == "aggregate" and e.get("aggregate_name") not in ("mean", "median"):
            continue  # stddev and cv may be 0
        t = e.get("real_time")
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0:
            what = kind if kind == "aggregate" else f"repetition {e.get('repetition_index', 0)}"
            raise SuiteJsonError(f"{path}: {name}: real_time {t!r} ({what}) is not a positive number")
    iters = [e for e in entries if e.get("run_type", "iteration") == "iteration"]
    reps = entries[0].get("repetitions")
    if isinstance(reps, int) and reps > 0 and len(iters) > reps:
        raise SuiteJsonError(f"{path}: {name} is listed twice ({len(iters)} runs of {reps} repetitions)")


def _record(path, name, entries):
    try:
        rec = Record(name, parse_name(name))
    except ValueError as e:
        raise SuiteJsonError(f"{path}: {e}") from None
    skips = [r for r in map(_skip_reason, entries) if r is not None]
    errors = [e for e in entries if e.get("error_occurred") and _skip_reason(e) is None]
    if errors:
        rec.error = errors[0].get("error_message") or "error"
    elif skips:
        rec.skipped = skips[0]
    good = [e for e in entries if not e.get("error_occurred") and not e.get("skipped")]
    if not rec.error and not rec.skipped:
        _check(path, name, good)
    for e in good:
        _check_numbers(path, name, e)
    iters = [_values(e) for e in good if e.get("run_type", "iteration") == "iteration"]
    aggs = {e.get("aggregate_name"): _values(e) for e in good if e.get("run_type") == "aggregate"}
    if iters:
        for counter in iters[0]:
            rec.samples[counter] = [v[counter] for v in iters if counter in v]
    elif "median" in aggs:  # aggregates only (--benchmark_report_aggregates_only)
        rec.samples = {k: [v] for k, v in aggs["median"].items()}
    for counter, xs in rec.samples.items():
        rec.median[counter] = statistics.median(xs)
        rec.cv[counter] = _cv(xs)
        if math.isnan(rec.cv[counter]):  # single sample: fall back on Google Benchmark's own cv
            if "cv" in aggs:
                rec.cv[counter] = aggs["cv"].get(counter, math.nan)
            elif {"mean", "stddev"} <= aggs.keys() and aggs["mean"].get(counter):
                rec.cv[counter] = aggs["stddev"].get(counter, math.nan) / aggs["mean"][counter]
    return rec


def stored(path):
    """The file a run's JSON is stored in: the path itself, or, where only a compressed copy exists (the committed
    runs keep benchmarks.json.gz), that copy, so that results/<gpu>/<run>/benchmarks.json names a committed run too."""
    if not os.path.exists(path) and os.path.exists(os.fspath(path) + ".gz"):
        return type(path)(os.fspath(path) + ".gz") if not isinstance(path, str) else path + ".gz"
    return path


def read_json(path):
    """A JSON file's content, gzip-compressed when its name ends in .gz (committed runs are stored so);
    SuiteJsonError with a one-line message when it cannot be read or parsed."""
    path = stored(path)
    try:
        opener = gzip.open if os.fspath(path).endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise SuiteJsonError(f"{path}: no such file") from None
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise SuiteJsonError(f"{path}: cannot read: {e}") from None
    except json.JSONDecodeError as e:
        raise SuiteJsonError(f"{path}: not JSON ({e.msg} at line {e.lineno})") from None
    except (ValueError, RecursionError) as e:  # an integer of more than 4300 digits, nesting too deep
        raise SuiteJsonError(f"{path}: not usable JSON ({_short(str(e), 80)})") from None


def load(path):
    """Read a suite JSON file; raise SuiteJsonError with a one-line message when it is not one."""
    doc = read_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise SuiteJsonError(f"{path}: no \"benchmarks\" list; not Google Benchmark JSON")
    context = doc.get("context") if isinstance(doc.get("context"), dict) else {}
    if context.get("suite") != SUITE:
        raise SuiteJsonError(f"{path}: not from the suite (context.suite is {context.get('suite')!r}, "
                             f"expected {SUITE!r})")
    grouped = {}  # logical name -> entries, in file order
    for entry in doc["benchmarks"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise SuiteJsonError(f"{path}: a benchmark entry without a name")
        grouped.setdefault(logical_name(entry), []).append(entry)
    _check_context(path, context)
    records = [_record(path, n, es) for n, es in grouped.items()]
    _check_distinct(path, records)
    model = _model(os.path.join(os.path.dirname(os.fspath(path)), MODEL_FILE))
    for r in records:
        r.model = model.get(r.name, {})
    return Suite(path, context, records)


def _check_context(path, context):
    """The suite's context keys are strings (numbers where CONTEXT_NUMBERS says): a null gpu_name or a list for
    bench_code would otherwise fail deep inside a tool."""
    for key in CONTEXT_TEXT + CONTEXT_NUMBERS:
        v = context.get(key)
        if key in context and not isinstance(v, str):
            raise SuiteJsonError(f"{path}: context {key} is {json.dumps(v)[:40]}, not a string")
        if key in CONTEXT_NUMBERS and key in context:
            try:
                ok = math.isfinite(float(v))
            except ValueError:
                ok = False
            if not ok:
                raise SuiteJsonError(f"{path}: context {key} is {v[:40]!r}, not a number")


def _check_distinct(path, records):
    """Two names that read as one benchmark (stride:1 and stride:01: a working set measured twice) are unusable."""
    seen = {}
    for r in records:
        key = tuple(sorted((k, repr(v)) for k, v in r.fields.items()))
        if key in seen:
            raise SuiteJsonError(f"{path}: {seen[key]} and {r.name} are the same benchmark (listed twice); one run per file")
        seen[key] = r.name


def _model(path):
    """{benchmark name: {counter: value}} from a model.json, {} when there is none."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SuiteJsonError(f"{path}: not a readable model file ({e})") from None
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise SuiteJsonError(f"{path}: not a model file (expected {{\"<benchmark>\": {{\"<counter>\": value}}}})")
    bad = next(((k, c) for k, d in doc.items() for c, v in d.items()
                if _is_number(v) and not (abs(v) <= sys.float_info.max and math.isfinite(v))), None)
    if bad:
        raise SuiteJsonError(f"{path}: {_short(bad[0])}: {bad[1]} is not a finite number")
    return {families.canonical(k.removesuffix("/manual_time")): {c: float(v) for c, v in d.items() if _is_number(v)}
            for k, d in doc.items()}


def load_or_exit(path, prog):
    """load() for command-line scripts: a bad file is one line on stderr and exit status 2."""
    try:
        return load(path)
    except SuiteJsonError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


def _git(folder, *args):
    """git's stdout in `folder`, or None outside a repository or without git."""
    import subprocess
    try:
        r = subprocess.run(["git", "-C", folder, *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout if r.returncode == 0 else None


def committed(path):
    """Why writing `path` would change committed results, or None: git tracks the file (the real one, a link
    followed), or it lies in a folder under a repository's results/ that git tracks files of (a committed run:
    a new picture there changes what the run shows)."""
    real = os.path.realpath(path)
    folder, name = os.path.split(real)
    if os.path.exists(real) and _git(folder, "ls-files", "--error-unmatch", "--", name) is not None:
        return "it is a committed file (pass --force to overwrite it)"
    prefix = _git(folder, "rev-parse", "--show-prefix")
    if prefix and prefix.startswith("results/") and _git(folder, "ls-files", "--", ".") not in (None, ""):
        return f"it is in a committed run's folder {folder} (pass --force to write there)"
    return None


def check_output(out, inputs, prog, force=False):
    """The one rule for every tool that writes a file: exit 2 with one line, before anything is written, when
    `out` is one of the inputs, a committed file or in a committed run's folder (force=True allows those two),
    or in a folder that does not exist or cannot be written."""
    out_abs = os.path.abspath(out)
    folder = os.path.dirname(out_abs)
    problem = None
    if any(os.path.abspath(i) == out_abs or (os.path.exists(out_abs) and os.path.exists(i) and os.path.samefile(i, out_abs))
           for i in inputs):
        problem = "it is an input of this command"
    elif not os.path.isdir(folder):
        problem = f"no such folder {folder}"
    elif not os.access(folder, os.W_OK) or (os.path.exists(out_abs) and not os.access(out_abs, os.W_OK)):
        problem = "not writable"
    elif os.path.isdir(out_abs):
        problem = "it is a folder"
    elif not force and (why := committed(out_abs)):
        problem = why
    if problem:
        print(f"{prog}: error: refusing to write {out}: {problem}", file=sys.stderr)
        raise SystemExit(EXIT_UNUSABLE)


def write_text(path, text, prog):
    """Write a tool's output file (text or bytes); a failure while writing (a full disk, an I/O error) is one
    line, exit 2, and no half-written file is left."""
    try:
        with open(path, "wb" if isinstance(text, bytes) else "w", **({} if isinstance(text, bytes) else {"encoding": "utf-8"})) as f:
            f.write(text)
    except OSError as e:
        _remove_partial(path)
        print(f"{prog}: error: cannot write {path}: {e.strerror or e}", file=sys.stderr)
        raise SystemExit(EXIT_UNUSABLE) from None


def save_figure(fig, path, prog, **kw):
    """fig.savefig through write_text: rendered in memory first (matplotlib does not report every failed write),
    in the format the file's extension names (png without one); an unknown one is one line, exit 2."""
    import io
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format=os.path.splitext(os.fspath(path))[1][1:].lower() or "png", **kw)
    except ValueError as e:
        print(f"{prog}: error: cannot write {path}: {_short(str(e), 160)}", file=sys.stderr)
        raise SystemExit(EXIT_UNUSABLE) from None
    write_text(path, buf.getvalue(), prog)


def _remove_partial(path):
    """Remove what a failed write left, if it is a plain file (never a device such as /dev/full)."""
    try:
        if os.path.isfile(path) and not os.path.islink(path):
            os.remove(path)
    except OSError:
        pass


def cli(prog):
    """Decorator for a tool's main(): stdout closed early (`... | head -1`) ends it quietly as cat or grep end,
    by SIGPIPE (status 141 in the shell), and an exception that escapes (a bug, not bad input: bad input is
    one line and exit 2) is said so, with its traceback, as exit EXIT_CRASH (70): never 1, which means a
    verdict (slower, flagged, errors) to compare, node_report and check_errors."""
    import functools
    import signal
    import traceback

    def wrap(main):
        @functools.wraps(main)
        def run(argv=None):
            if hasattr(signal, "SIGPIPE"):
                signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            try:
                return main(argv)
            except (SystemExit, KeyboardInterrupt):
                raise
            except Exception as e:  # noqa: BLE001: the point is to catch what nothing else did
                traceback.print_exc()
                print(f"{prog}: internal error (a bug, exit {EXIT_CRASH}): {type(e).__name__}: {_short(str(e), 200)}",
                      file=sys.stderr)
                return EXIT_CRASH
        return run
    return wrap
