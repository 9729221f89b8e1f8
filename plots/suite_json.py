"""Load and validate Google Benchmark JSON written by gpubench; give one tidy record per benchmark.

Every script in plots/ reads its input through load(), so the JSON assumptions live here only:
- top level {"context": {...}, "benchmarks": [...]}, context["suite"] == SUITE;
- Google Benchmark 1.7.x and 1.8.x entries: run_name, run_type ("iteration"/"aggregate"),
  aggregate_name, real_time in time_unit, user counters as extra numeric keys;
- manual time makes Google Benchmark append "/manual_time"; the logical name drops it.
"""
import json
import math
import statistics
import sys
from dataclasses import dataclass, field

SUITE = "gpu-memory-microbench"
TIME = "real_time"  # samples key for per-launch time, always in seconds
_TO_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# Numeric keys that Google Benchmark writes itself; every other number is a user counter.
_NOT_COUNTERS = {"family_index", "per_family_instance_index", "repetitions", "repetition_index",
                 "threads", "iterations", "real_time", "cpu_time"}
# Names for the positional segments after the family, so scripts can say fields["level"].
_POSITIONAL = {"coalescing": ("op", "level"), "ceiling": ("target",), "smem_banks": ("mode", "layout"),
               "gemm": ("kernel",)}


class SuiteJsonError(Exception):
    """A file that is not usable suite JSON; the message is one line for the user."""


def parse_name(name):
    """'coalescing/read/hbm/stride:1' -> {'family': 'coalescing', 'op': 'read', 'level': 'hbm', 'stride': 1}.

    key:value segments become keys (int when numeric); other segments are positional, named by
    _POSITIONAL where the family is known and always kept in order under 'pos'.
    """
    family, *segments = name.split("/")
    fields, pos = {"family": family}, []
    for seg in segments:
        key, sep, value = seg.partition(":")
        if sep:
            fields[key] = int(value) if value.lstrip("-").isdigit() else value
        else:
            pos.append(seg)
    fields.update(zip(_POSITIONAL.get(family, ()), pos))
    fields["pos"] = tuple(pos)
    return fields


def _cv(xs):
    """Coefficient of variation (sample stddev / mean), as Google Benchmark computes it."""
    if len(xs) < 2 or statistics.fmean(xs) == 0:
        return math.nan
    return statistics.stdev(xs) / statistics.fmean(xs)


@dataclass
class Record:
    name: str                                    # logical name, e.g. coalescing/read/hbm/stride:1
    fields: dict                                 # parse_name(name)
    samples: dict = field(default_factory=dict)  # counter -> per-repetition values (TIME in seconds)
    median: dict = field(default_factory=dict)   # counter -> median
    cv: dict = field(default_factory=dict)       # counter -> coefficient of variation (nan if unknown)
    error: str = None                            # Google Benchmark error/skip message; plots skip these

    def get(self, counter, default=math.nan):
        return self.median.get(counter, default)


class Suite:
    def __init__(self, path, context, records):
        self.path, self.context, self.records = path, context, records
        self.by_name = {r.name: r for r in records}

    @property
    def gpu_name(self):
        return self.context.get("gpu_name", "unknown GPU")

    def ok(self, *families):
        """Records without errors whose family is one of `families` (all when none given)."""
        return [r for r in self.records if not r.error and (not families or r.fields["family"] in families)]

    def value(self, name, counter):
        """Median of `counter` for benchmark `name`, or None when absent or errored."""
        r = self.by_name.get(name)
        v = r.get(counter) if r and not r.error else math.nan
        return None if math.isnan(v) else v


def logical_name(entry):
    run_name = entry.get("run_name")
    if run_name is None:  # very old Google Benchmark: aggregates carry the suffix in name only
        run_name = entry["name"]
        if entry.get("run_type") == "aggregate":
            run_name = run_name.removesuffix("_" + entry.get("aggregate_name", ""))
    return run_name.removesuffix("/manual_time")


def _values(entry):
    """Counter -> value for one entry, with real_time converted to seconds."""
    out = {k: float(v) for k, v in entry.items()
           if k not in _NOT_COUNTERS and isinstance(v, (int, float)) and not isinstance(v, bool)}
    if entry.get("aggregate_name") == "cv" or entry.get("aggregate_unit") == "percentage":
        out[TIME] = float(entry.get("real_time", math.nan))  # a fraction already, whatever time_unit says
    elif "real_time" in entry:
        unit = entry.get("time_unit", "ns")
        if unit not in _TO_SECONDS:
            raise SuiteJsonError(f"{entry.get('name')}: unknown time_unit {unit!r}")
        out[TIME] = float(entry["real_time"]) * _TO_SECONDS[unit]
    return out


def _record(name, entries):
    rec = Record(name, parse_name(name))
    errors = [e for e in entries if e.get("error_occurred") or e.get("skipped")]
    if errors:
        rec.error = errors[0].get("error_message") or errors[0].get("skip_message") or "error"
    good = [e for e in entries if e not in errors]
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


def load(path):
    """Read a suite JSON file; raise SuiteJsonError with a one-line message when it is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise SuiteJsonError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise SuiteJsonError(f"{path}: cannot read: {e}") from None
    except json.JSONDecodeError as e:
        raise SuiteJsonError(f"{path}: not JSON ({e.msg} at line {e.lineno})") from None
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
    return Suite(path, context, [_record(n, es) for n, es in grouped.items()])


def load_or_exit(path, prog):
    """load() for command-line scripts: a bad file is one line on stderr and exit status 2."""
    try:
        return load(path)
    except SuiteJsonError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
