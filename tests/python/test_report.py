"""report.py: the summary first (run table, verdict, headline figures against limits derived from the context),
then each family with its picture and a pivoted table, skips grouped, the full tables in an appendix."""
import json
import re
from pathlib import Path

import pytest

import synth
from conftest import PLOT_SCRIPTS, ROOT, call, run
from gpubench import report as report_mod
from gpubench.analysis.bounds import TENSOR_CORE_KERNELS
from gpubench.suite_json import load, read_json
from gpubench.tables import MISSING, num, pivot

BODY = ["**Verdict:", "| run |", "## Headline figures against their limits", "## Coalescing", "## Ceilings",
        "## Shared-memory banks", "## Barriers", "## GEMM", "# Appendix: full tables"]
# Committed runs of the current code (ceilings, links, latency, compare.txt in one of them); .json or .json.gz.
COMMITTED = [p for run_dir in ("20261201T070708Z", "20261201T005211Z", "20261201T020915Z/gpu0")
             for p in sorted((ROOT / "results" / "h200" / run_dir).glob("benchmarks.json*"))[:1]]


def report(path, *args):
    """The report written (report.py's main() in-process; test_stdout_output runs the command line)."""
    r = call("report", path, *args)
    assert r.returncode == 0, r.stderr
    out = args[args.index("-o") + 1] if "-o" in args else path.parent / "report.md"
    return out.read_text()


def section(text, title):
    return text.split(title + "\n", 1)[1].split("\n#", 1)[0]


def row(text, first):
    """The cells of the Markdown table row whose first cell is `first`."""
    m = re.search(r"^\| " + re.escape(first) + r" \| (.*) \|$", text, re.M)
    assert m, f"no row {first!r}"
    return m.group(1).split(" | ")


def body(text):
    return text.split("# Appendix: full tables\n", 1)[0]


def edit(path, context=None, entry=None):
    """Rewrite a suite JSON: context keys set (None deletes), entry(e) applied to every benchmark entry."""
    doc = json.loads(path.read_text())
    for k, v in (context or {}).items():
        doc["context"].pop(k, None) if v is None else doc["context"].__setitem__(k, v)
    for e in doc["benchmarks"]:
        entry and entry(e)
    path.write_text(json.dumps(doc))
    return path


def test_summary_first_then_families_then_appendix(suite_file):
    text = report(suite_file)
    assert text.startswith("# GPU memory-hierarchy microbenchmarks: NVIDIA H200")
    positions = [text.index(s) for s in BODY]
    assert positions == sorted(positions)
    assert text.splitlines()[4].startswith("**Verdict: healthy**")
    names = [n for n, *_ in synth.benchmarks()]
    assert row(text, "Benchmarks") == [f"{len(names)}: {len(names)} measured, 0 skipped, 0 with errors"]
    assert row(text, "Started / duration")[0].startswith(synth.recorded()["context"]["date"] + " / unknown")
    # sizes in binary units: the L2 in the run table, every *_bytes fact in the appendix with its raw value
    assert ", 60 MiB L2;" in row(text, "GPU")[0]
    assert row(section(text, "## Device (all context facts)"), "L2 (bytes)") == ["60 MiB (62914560)"]


def test_debug_build_warning_and_ptx_note(make_json):
    path = make_json()
    assert "**WARNING**: Google Benchmark is a debug build" in report(path)  # the recorded run's build
    text = report(edit(path, {"library_build_type": "release", "code_from_ptx": "false"}))
    assert "debug build" not in text and "JIT" not in text
    assert "**Note**: the kernels ran from PTX the driver JIT-compiled" in report(edit(path, {"code_from_ptx": "true"}))


def test_throttled_samples_counted_and_judged(make_json):
    """The per-repetition `throttled` / `sm_clock_min_mhz` / `settle_ms` counters summed over the run; more than
    5 % of samples throttled makes the verdict 'check'."""
    path = make_json(only={"ceiling", "coalescing"})
    reps = [e for e in json.loads(path.read_text())["benchmarks"] if e["run_type"] == "iteration"]
    marked = {(e["name"], e["repetition_index"]) for e in reps[:3]}

    def clocks(e):
        if e["run_type"] == "iteration":
            hot = (e["name"], e["repetition_index"]) in marked
            e.update(throttled=1.0 if hot else 0.0, sm_clock_min_mhz=1755.0 if hot else 1980.0,
                     settle_ms=40.0 if hot else 0.0)
    text = report(edit(path, entry=clocks))
    assert row(text, "Throttling") == [f"3 of {len(reps):,} samples ({3 / len(reps) * 100:.2g} %) throttled, lowest SM "
                                       "clock 1755 MHz; 3 repetitions waited for clocks to settle (longest 40 ms)"]
    assert "**Verdict: healthy**" in text
    marked |= {(e["name"], e["repetition_index"]) for e in reps[:len(reps) // 10]}
    text = report(edit(path, entry=clocks))
    assert text.splitlines()[4].startswith("**Verdict: check**: more than 5 % of samples throttled")


def limits_row(text, what):
    return row(section(text, "## Headline figures against their limits"), what)


def test_limits_from_context_facts(make_json):
    """L1: 128 B/clk/SM x SMs x observed clock; FMA: 2 x FMA/clk/SM (by compute capability) x SMs x clock; HBM
    only with a bus width in the context; each ratio recomputed here from the context and the medians."""
    path = make_json()
    s, text = load(path), report(path)
    ctx = synth.recorded()["context"]
    clock, sms = float(ctx["sm_clock_observed_mhz"]) * 1e6, float(ctx["sm_count"])
    l1 = s.value("ceiling/read/l1", "bytes_per_second")
    assert limits_row(text, "L1 read (`ceiling/read/l1`)")[1:] == [
        f"{128 * sms * clock / 1e12:.2f} TB/s = 128 B/clk/SM × {sms:.0f} SMs × {clock / 1e6:.0f} MHz", f"{l1 / (128 * sms * clock):.2f}"]
    fma = s.value("ceiling/fma", "flops_per_second")
    assert limits_row(text, "FP32 FMA (`ceiling/fma`)")[2] == f"{fma / (2 * 128 * sms * clock):.2f}"
    _, limit, ratio = limits_row(text, "HBM read (`ceiling/read/hbm`)")
    note = re.match(r"— \[(\d)\]", limit).group(1)
    assert ratio == "—" and f"[{note}] the context has no mem_bus_bits" in text
    text = report(edit(path, {"mem_bus_bits": "6144", "compute_capability": "8.0"}))
    hbm = s.value("ceiling/read/hbm", "bytes_per_second")
    assert limits_row(text, "HBM read (`ceiling/read/hbm`)")[2] == f"{hbm / (float(ctx['mem_clock_mhz']) * 1e6 * 2 * 6144 / 8):.2f}"
    assert limits_row(text, "FP32 FMA (`ceiling/fma`)")[2] == f"{fma / (2 * 64 * sms * clock):.2f}"  # A100: 64
    text = report(edit(path, {"compute_capability": "12.0"}))
    assert limits_row(text, "FP32 FMA (`ceiling/fma`)")[1].startswith("— [")
    assert "compute capability 12.0 is not in the FMA table" in text


def test_the_committed_runs_are_there():
    assert len(COMMITTED) == 3, "the committed runs test_committed_run_summary_and_limits reads have moved"


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(ROOT / "results" / "h200")))
def test_committed_run_summary_and_limits(path, tmp_path):
    """On real runs: at most 250 lines before the appendix; the first 40 say the verdict, the throttled count
    (counted here from the raw entries) and the limits table, whose L1, FMA and PCIe ratios are recomputed here."""
    text = report_mod.render(load(path), str(tmp_path / "report.md"))
    assert len(body(text).splitlines()) <= 250
    top = "\n".join(text.splitlines()[:40])
    assert "**Verdict: healthy**" in top and "| L1 latency (`latency/chase`) |" in top
    doc = read_json(path)
    ctx, reps = doc["context"], [e for e in doc["benchmarks"] if e.get("run_type") == "iteration"]
    flags = [e["throttled"] for e in reps if "throttled" in e]
    assert f"| Throttling | {sum(f > 0 for f in flags)} of {len(flags):,} samples" in top
    s = load(path)
    per_clock = float(ctx["sm_count"]) * float(ctx["sm_clock_observed_mhz"]) * 1e6
    for what, name, counter, limit in (
            ("L1 read (`ceiling/read/l1`)", "ceiling/read/l1", "bytes_per_second", 128 * per_clock),
            ("FP32 FMA (`ceiling/fma`)", "ceiling/fma", "flops_per_second", 2 * 128 * per_clock),
            ("H2D pinned/ce at 1 GiB (`link/h2d/pinned/ce`)", "link/h2d/pinned/ce/bytes:1073741824", "bytes_per_second",
             float(ctx["pcie_peak_bytes_per_second"]))):
        assert limits_row(top, what)[2] == f"{s.value(name, counter) / limit:.2f}", what


def test_compare_summary_at_the_top(make_json):
    """compare.txt beside the JSON: its counts in the run table, its header and lists (a few names each) after
    the headline figures, not its 900-line table."""
    path = make_json()
    lines = ["baseline:  a.json (NVIDIA H200)", "contender: b.json (NVIDIA H200)", "metric: time", "",
             "benchmark  baseline  contender", "---------  --------  ---------",
             *[f"ceiling/fma  {i} µs  {i} µs" for i in range(50)], "",
             "Slower (5):", *[f"  gemm/naive/m:{i}/n:{i}/k:{i} (+4%)" for i in range(5)],
             "Faster: none", "Ambiguous (2):", "  x: launch under 100 µs", "  y: launch under 100 µs",
             "Missing from contender: none"]
    (path.parent / "compare.txt").write_text("\n".join(lines) + "\n")
    text = report(path)
    assert row(text, "Comparison") == ["Slower 5, Ambiguous 2 (summary below the headline figures)"]
    block = section(text, "## Comparison with the baseline run (`compare.txt`, shortened)")
    assert "baseline:  a.json (NVIDIA H200)" in block and "ceiling/fma  3 µs" not in block
    assert block.count("gemm/naive") == 3 and "Faster: none" in block and "  x: launch" not in block
    assert text.index("## Headline figures") < text.index("## Comparison") < text.index("## Coalescing")


def test_pivoted_tables_with_the_measured_values(suite_file):
    """Long families are wide tables (a row per configuration, a column per stride / size / shape) whose cells
    are the medians; the appendix keeps every row of every counter."""
    s, text = load(suite_file), report(suite_file)
    banks = section(text, "## Shared-memory banks")
    assert len([l for l in banks.splitlines() if l.startswith("|")]) <= 30
    head = row(banks, "mode, width, layout \\ stride")
    cells = dict(zip(head, row(banks, "throughput, 4 B, pad 0")))
    assert cells["32"] == num(s.value("smem_banks/throughput/width:4/stride:32/pad:0", "cycles_per_request"))
    cells = dict(zip(row(text, "kernel \\ shape"), row(section(text, "## GEMM"), "smem")))
    assert cells["4092³"] == num(s.value("gemm/smem/m:4092/n:4092/k:4092", "flops_per_second"), 1e-9)
    cells = dict(zip(row(text, "op, level \\ stride"), row(section(text, "## Coalescing"), "read hbm")))
    assert cells["1"] == num(s.value("coalescing/read/hbm/stride:1", "useful_bytes_per_second"), 1e-9)
    full = section(text, "## Coalescing (all rows)")
    assert len([l for l in full.splitlines() if l.startswith(("| read", "| write"))]) == 60
    assert row(section(text, "## Ceilings"), "read/l1")[2] == "64 KiB"  # working set in binary units
    assert "## GEMM bounds (model counts × measured unit costs)" in text.split("# Appendix")[1]
    assert "## Benchmarks that reported errors" not in text and "## Other benchmarks" not in text


def test_pictures_inline_with_their_family(make_json, tmp_path):
    path = make_json(subdir="run")
    assert "![" not in report(path)
    assert call("stride", path).returncode == 0
    text = report(path)
    assert section(text, "## Coalescing").startswith("\n![stride.png](stride.png)\n") and text.count("![") == 1
    for script in PLOT_SCRIPTS:
        assert call(script, path).returncode == 0
    out = tmp_path / "docs" / "r.md"
    out.parent.mkdir()
    links = re.findall(r"!\[.*?\]\((.*?)\)", report(path, "-o", out))
    assert sorted(links) == sorted(f"../run/{p}.png" for p in PLOT_SCRIPTS)
    assert "![banks.png](../run/banks.png)" in section(out.read_text(), "## Shared-memory banks")


def test_partial_run_and_errors(make_json):
    path = make_json(only={"gemm", "smem_banks"}, errors={"gemm/naive/m:512/n:512/k:512": "CUDA error: too slow"})
    text = report(path)
    assert "## Coalescing" not in text and "## Barriers" not in text and "## GEMM" in text
    assert "**Verdict: check**: 1 benchmarks reported errors" in text
    assert row(text, "Benchmarks")[0].endswith(", 1 with errors")
    errors = section(text, "## Benchmarks that reported errors")
    assert "| gemm/naive/m:512/n:512/k:512 | CUDA error: too slow |" in errors
    cells = dict(zip(row(text, "kernel \\ shape"), row(section(text, "## GEMM"), "naive")))
    assert cells["512³"] == "–" and cells["1024³"] != "–"
    assert "| naive | 512 |" not in section(text, "## GEMM (all rows)")


def test_single_repetition_has_no_cv(make_json):
    text = report(make_json(reps=1))
    assert row(section(text, "## Ceilings"), "memcpy_d2d")[-1] == "–"


def test_unknown_family_gets_generic_table(make_json):
    path = make_json(only={"ceiling"})
    doc = json.loads(path.read_text())
    extra = dict(doc["benchmarks"][0], name="tlb/stride:4096/manual_time", run_name="tlb/stride:4096/manual_time")
    extra["bytes_per_second"] = 1.5e11
    doc["benchmarks"].append(extra)
    path.write_text(json.dumps(doc))
    other = section(report(path), "## Other benchmarks")
    assert "| tlb/stride:4096 |" in other and "bytes_per_second=150,000,000,000" in other


def test_stdout_output(make_json):
    r = run("report", make_json(), "-o", "-")
    assert r.returncode == 0 and r.stdout.startswith("# GPU memory-hierarchy microbenchmarks")


def test_gemm_bounds_section_only_with_model_predictions(make_json):
    """gpubench/analysis/bounds.py's table (appendix) appears when the GEMM benchmarks carry the counting model's
    model_* predictions (the recorded run has them), one row per modelled kernel and shape with m = 4092 or 4096."""
    path = make_json()
    s = load(path)
    fp32 = [r for r in s.ok("gemm") if r.fields["kernel"] not in TENSOR_CORE_KERNELS]  # no counting model for BF16 yet
    expected = [r.name for r in fp32 if r.fields["kernel"] != "cublas" and r.fields["m"] in (4092, 4096)]
    bounds = section(report(path), "## GEMM bounds (model counts × measured unit costs)")
    assert [l.split(" | ")[0].lstrip("| ") for l in bounds.splitlines() if l.startswith("| gemm/")] == expected
    assert len(expected) == 15
    edit(path, entry=lambda e: [e.pop(k) for k in [k for k in e if k.startswith("model_")]])
    assert "## GEMM bounds" not in report(path)


def test_skips_grouped_by_reason(make_json):
    """One line per reason with its count and at most three names; the barrier table leaves them out."""
    many = [f"sync/syncwarp/threads:{t}/blocks_per_sm:2" for t in (64, 128, 256, 512, 1024)]
    skips = {n: "needs 2 resident blocks" for n in many} | {"ceiling/fma": "no FMA today"}
    text = report(make_json(skips=skips))
    lines = [l for l in section(text, "## Skipped on this GPU (6)").splitlines() if l.startswith("- ")]
    assert lines == [f"- 5 × needs 2 resident blocks (e.g. {', '.join(many[:3])}, … 2 more)",
                     "- 1 × no FMA today (e.g. ceiling/fma)"]
    n = len(synth.benchmarks())
    assert row(text, "Benchmarks") == [f"{n}: {n - 6} measured, 6 skipped (2 reasons), 0 with errors"]
    assert row(section(text, "## Barriers"), "syncwarp, 2 blocks/SM")[-1] == "–"


def test_pivot_sorts_columns_and_marks_gaps():
    """Columns by key whatever order the records come in (the GEMM shapes came 1000³ first); rows by first
    appearance; a combination not measured reads MISSING."""
    recs = [("b", (1000, "1000³"), 3), ("a", (4096, "4096³"), 1), ("a", (128, "128³"), 2)]
    headers, rows = pivot(recs, row=lambda r: r[0], col=lambda r: r[1], cell=lambda r: r[2], corner="k",
                          col_label=lambda c: c[1])
    assert headers == ["k", "128³", "1000³", "4096³"]
    assert rows == [["b", MISSING, 3, MISSING], ["a", 2, MISSING, 1]]


def test_load_mix_rows_in_the_coalescing_sections(make_json):
    """coalescing/mix/* (no stride) stay out of the compact by-stride pivot, which indexes every row by stride,
    and appear in the appendix table with their requests per second."""
    from test_predict import with_load_mix
    s = load(with_load_mix(make_json(), {"l1": 2.5e11, "l2": 2e11}))
    wide = "\n".join(report_mod.coalescing_wide(s))
    assert "bcast_row" not in wide and "stride" in wide
    full = "\n".join(report_mod.coalescing(s))
    assert "| coalescing/mix/bcast_row/l2 " in full or "bcast_row" in full
    assert "G requests/s" in full and "200" in full
