"""compare's output in its three formats: text (the default, for a person), markdown (a table a CI job can post
on a pull request) and json (every verdict with its numbers; the schema is docs/compare-output.md). One Report
holds what all three show; compare.py builds it and prints report.render(format)."""
import json
import math
from dataclasses import dataclass, field

from gpubench import suite_json
from gpubench import tables
from gpubench.regress.verdict import AMBIGUOUS, FASTER, SAME, SLOWER

FORMATS = ("text", "markdown", "json")
SCHEMA_VERSION = 1
VERDICTS = (SLOWER, FASTER, AMBIGUOUS, SAME)  # the order changed rows come in (markdown)
FLOOR_MARK = "*"  # after a threshold the floor set where a same-GPU profile applies


def percentile(xs, q):
    """The nearest-rank q-quantile of xs (the smallest value with at least q of them at or below it); nan for
    none."""
    xs = sorted(xs)
    return xs[max(0, math.ceil(q * len(xs)) - 1)] if xs else math.nan


@dataclass
class Summary:
    compared: int
    counts: dict           # verdict -> how many
    judged: int            # same, slower or faster: the threshold decided
    threshold_median: float
    threshold_p90: float
    threshold_max: float
    floor_used: int        # judged benchmarks whose threshold is the floor (nothing measured set it higher)


def summarize(rows):
    judged = [r.threshold for r in rows if r.verdict != AMBIGUOUS]
    return Summary(len(rows), {v: sum(r.verdict == v for r in rows) for v in (SAME, SLOWER, FASTER, AMBIGUOUS)},
                   len(judged), percentile(judged, 0.5), percentile(judged, 0.9), max(judged, default=math.nan),
                   sum(r.threshold_from == "floor" for r in rows if r.verdict != AMBIGUOUS))


@dataclass
class Report:
    header: list           # lines: the runs, their case, warnings, the profile used, the metric
    rows: list             # verdict.Row, in the contender's order
    metric: str            # as given (time or a counter)
    min_time: float
    missing: list = field(default_factory=list)
    new: list = field(default_factory=list)
    errored: list = field(default_factory=list)
    skipped: list = field(default_factory=list)   # (name, reason)
    mark_floor: bool = False  # a same-GPU profile applies: say where the floor set the threshold
    meta: dict = field(default_factory=dict)      # runs, settings and profile for json

    def render(self, fmt):
        return {"text": self.text, "markdown": self.markdown, "json": self.json}[fmt]()

    # --- pieces shared by text and markdown ---

    def show(self, v):
        return tables.seconds(v) if self.metric in ("time", suite_json.TIME) else tables.sig(v, 4)

    def threshold_cell(self, r):
        return f"{r.threshold:.1%}" + (FLOOR_MARK if self.mark_floor and r.threshold_from == "floor" else "")

    def verdict_cell(self, r):
        return r.verdict + (" (short)" if r.short and r.verdict == AMBIGUOUS else "")

    def summary_lines(self):
        s = summarize(self.rows)
        counts = ", ".join(f"{s.counts[v]} {v}" for v in (SAME, SLOWER, FASTER, AMBIGUOUS))
        lines = [f"summary: {s.compared} compared: {counts}"]
        if s.judged:
            lines.append(f"threshold (the smallest change this comparison could call) over the {s.judged} judged "
                         f"(same, slower, faster): median {s.threshold_median:.1%}, p90 {s.threshold_p90:.1%}, "
                         f"max {s.threshold_max:.1%}; the floor set {s.floor_used} of them")
        else:
            lines.append("threshold: no benchmark judged (every one ambiguous)")
        return lines

    def listings(self):
        """(title, entries) of the verdict and presence lists, in the order the text shows them."""
        by = lambda v: [r for r in self.rows if r.verdict == v]
        changed = lambda v: [f"{r.name} ({r.change:+.1%}, threshold {r.threshold:.1%})" for r in by(v)]
        return [("Slower", changed(SLOWER)), ("Faster", changed(FASTER)),
                ("Ambiguous", [f"{r.name}: {r.reason}" for r in by(AMBIGUOUS)]),
                ("Missing from contender", self.missing), ("New in contender", self.new),
                ("Errored, not compared", self.errored),
                ("Skipped, not compared", [f"{n}: {why}" for n, why in self.skipped])]

    def notes(self):
        out = []
        if any(r.short for r in self.rows):
            out.append(f"(short): launches under {self.min_time * 1e6:g} µs are never called slower or faster "
                       "(--min-time)")
        if any(r.dropped for r in self.rows):
            out.append(f"{sum(r.dropped for r in self.rows)} sample(s) taken while the GPU throttled were dropped")
        if self.mark_floor and any(r.threshold_from == "floor" for r in self.rows):
            out.append(f"{FLOOR_MARK}: the floor, for a benchmark the same-GPU profile has no measurement of")
        return out

    # --- the formats ---

    def text(self):
        out = list(self.header) + [""] + self.summary_lines() + [""]
        for title, entries in self.listings():
            out += [f"{title} ({len(entries)}):"] + [f"  {e}" for e in entries] if entries else [f"{title}: none"]
        table = [[r.name, self.show(r.baseline), self.show(r.contender), f"{r.change:+.1%}", self.threshold_cell(r),
                  self.verdict_cell(r)] for r in self.rows]
        out += [""] + tables.text(["benchmark", "baseline", "contender", "change", "threshold", "verdict"], table)
        return "\n".join(out + self.notes())

    def markdown(self):
        icon = {SLOWER: "**slower**", FASTER: "faster", AMBIGUOUS: "ambiguous", SAME: "same"}
        out = ["### gpubench compare", ""] + [f"- {l}" for l in self.summary_lines()]
        out += [f"- {title}: {len(entries)}" for title, entries in self.listings()[3:] if entries]
        out += ["", "<details><summary>runs</summary>", "", "```"] + list(self.header) + ["```", "</details>", ""]
        head = ["| benchmark | baseline | contender | change | threshold | verdict | reason |",
                "|---|---|---|---|---|---|---|"]
        row = lambda r: "| " + " | ".join(
            [f"`{r.name}`", self.show(r.baseline), self.show(r.contender), f"{r.change:+.1%}", self.threshold_cell(r),
             icon[r.verdict] + (" (short)" if r.short and r.verdict == AMBIGUOUS else ""),
             r.reason.replace("|", "\\|")]) + " |"
        changed = sorted((r for r in self.rows if r.verdict != SAME), key=lambda r: VERDICTS.index(r.verdict))
        out += head + [row(r) for r in changed] if changed else ["Nothing slower, faster or ambiguous."]
        same = [r for r in self.rows if r.verdict == SAME]
        if same:  # folded: a pull request comment shows the changes
            out += ["", f"<details><summary>{len(same)} same</summary>", ""] + head + [row(r) for r in same]
            out += ["", "</details>"]
        return "\n".join(out + [""] + self.notes())

    def json(self):
        s = summarize(self.rows)
        doc = {"schema_version": SCHEMA_VERSION, **self.meta,
               "summary": {"compared": s.compared, "counts": s.counts, "judged": s.judged,
                           "threshold": {"median": s.threshold_median, "p90": s.threshold_p90,
                                         "max": s.threshold_max},
                           "floor_used": s.floor_used, "missing": self.missing, "new": self.new,
                           "errored": self.errored,
                           "skipped": [{"name": n, "reason": why} for n, why in self.skipped]},
               "benchmarks": [{"name": r.name, "baseline": r.baseline, "contender": r.contender, "change": r.change,
                               "threshold": r.threshold, "threshold_from": r.threshold_from, "batch_term": r.batch_term,
                               "verdict": r.verdict,
                               "reasons": [r.reason] if r.reason else [], "rule": r.rule, "short": r.short,
                               "dropped": r.dropped, "clock_change": r.clock_change} for r in self.rows]}
        return json.dumps(_finite(doc), indent=1)


def _finite(v):
    """v with every nan or infinite number as None (JSON has no NaN)."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_finite(x) for x in v]
    return v
