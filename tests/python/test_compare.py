"""compare.py: noise-aware verdicts (gpubench/regress/noise.py) from one or several baselines, files or folders; finds
planted changes, stays quiet on noise, says which machine/code case it is, lists what is missing or new, and
keeps its exit codes (0 nothing slower or missing, 1 slower, 2 unusable input, 3 missing). compare's main() runs
in-process (conftest.call); the tests of the exit codes 1, 2 and 3 run it as a user does (conftest.run)."""
import json

import pytest

from gpubench.regress import noise
from conftest import call, run

SLOWED = "smem_banks/throughput/width:4/stride:32/pad:0"
QUIET = 0.003  # repetitions' spread as on the committed H200 runs (0.01-0.5 %), so the contender is trusted


def off_clock():
    """Recorded benchmarks whose SM clock is more than 1 % under the run's highest (on the H200 the wgmma, HBM
    energy and two GEMM points drew enough power to lower it): compare calls them ambiguous, noise or not."""
    bs = __import__("synth").benchmarks()
    clock = lambda c: c.get("sm_clock_min_mhz", c.get("sm_clock_mhz", (0,)))[0]
    top = max(clock(c) for *_, c in bs)
    return {n for n, _, _, c in bs if 0 < clock(c) < 0.99 * top}


def assert_same_but_off_clock(stdout):
    """Every benchmark same, but the off-clock ones, which are ambiguous for that reason alone."""
    lines = stdout.splitlines()
    ambiguous = {l.split()[0] for l in lines if l.endswith("  ambiguous")}
    assert ambiguous == off_clock() and len(ambiguous) >= 1
    assert sum(l.endswith("  same") for l in lines) == len(__import__("synth").benchmarks()) - len(ambiguous)


def row(stdout, name):
    return next(l for l in stdout.splitlines() if l.split("  ")[0] == name)


def cells(stdout, name):
    """name, baseline, unit, contender, unit, change, threshold, verdict..."""
    return row(stdout, name).split()


def listed(stdout, title):
    """Names (first word of each entry) listed under 'title (N):' at the end of the output."""
    lines = stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(title + " (") or l.startswith(title + ":"))
    if lines[start].endswith(": none"):
        return []
    n = int(lines[start].split("(")[1].split(")")[0])
    return [l.split()[0].rstrip(":") for l in lines[start + 1:start + 1 + n]]


def with_context(path, **ctx):
    doc = json.loads(path.read_text())
    doc["context"].update(ctx)
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("shape", ["1.7.1", "1.8.3"])
def test_planted_slowdown_is_the_only_slower(make_json, shape):
    base = make_json("base.json", shape=shape, seed=0, noise=QUIET)
    cont = make_json("cont.json", shape=shape, seed=1, noise=QUIET, slow={SLOWED: 1.10})
    r = run("compare", base, cont)
    assert r.returncode == 1, r.stdout + r.stderr
    assert listed(r.stdout, "Slower") == [SLOWED]
    c = cells(r.stdout, SLOWED)
    assert 8 < float(c[5].rstrip("%")) < 12 and c[6] == f"{noise.FLOOR:.1%}" and c[7] == "slower"
    assert sum(l.endswith("  slower") for l in r.stdout.splitlines()) == 1


def test_noise_alone_flags_nothing(make_json):
    r = call("compare", make_json("a.json", seed=0), make_json("b.json", seed=7))
    assert r.returncode == 0 and listed(r.stdout, "Slower") == [] and listed(r.stdout, "Faster") == []
    assert_same_but_off_clock(r.stdout)


def test_improvement_is_faster_and_exit_0(make_json):
    name = "gemm/smem/m:2048/n:2048/k:2048"
    r = call("compare", make_json("a.json", noise=QUIET), make_json("b.json", seed=3, noise=QUIET, slow={name: 0.8}))
    assert r.returncode == 0
    assert listed(r.stdout, "Faster") == [name] and listed(r.stdout, "Slower") == []
    assert -21 < float(cells(r.stdout, name)[5].rstrip("%")) < -19 and cells(r.stdout, name)[7] == "faster"


def test_short_launches_are_ambiguous_not_slower(make_json):
    """A 10% slower 10 µs GEMM is 'ambiguous (short)' and exit 0 by default; --min-time 0 calls it slower."""
    name = "gemm/smem/m:256/n:256/k:256"
    base, cont = make_json("a.json", noise=QUIET), make_json("b.json", seed=1, noise=QUIET, slow={name: 1.10})
    r = call("compare", base, cont)
    assert r.returncode == 0 and "ambiguous (short)" in row(r.stdout, name) and listed(r.stdout, "Slower") == []
    assert name in listed(r.stdout, "Ambiguous") and f"{name}: launch under 100 µs" in r.stdout
    r = call("compare", base, cont, "--min-time", "0")
    assert r.returncode == 1 and listed(r.stdout, "Slower") == [name]


def test_floor_and_k_set_the_threshold(make_json):
    base, cont = make_json("a.json", noise=QUIET), make_json("b.json", seed=1, noise=QUIET, slow={SLOWED: 1.10})
    r = call("compare", base, cont, "--floor", "0.2")
    assert r.returncode == 0 and cells(r.stdout, SLOWED)[6:8] == ["20.0%", "same"]
    r = call("compare", base, cont, "--floor", "0", "--k", "1000")  # 1000 x ~0.3 % noise: far above 10 %
    assert r.returncode == 0 and cells(r.stdout, SLOWED)[7] == "same"
    assert call("compare", base, cont, "--floor", "0.05").returncode == 1


@pytest.mark.parametrize("bad", ["-0.1", "x", "nan"])
def test_bad_floor_is_unusable(make_json, bad):
    r = call("compare", make_json("a.json"), make_json("b.json"), "--floor", bad)
    assert r.returncode == 2 and r.stdout == "" and "--floor" in r.stderr


def test_old_options_are_gone(make_json):
    for old in ("--alpha", "--min-change"):
        r = call("compare", make_json("a.json"), make_json("b.json"), old, "0.05")
        assert r.returncode == 2 and "unrecognized arguments" in r.stderr


def test_rate_metric_direction(make_json):
    """A 10% slower kernel is a 10% lower GB/s: still slower when comparing a rate counter."""
    base, cont = make_json("a.json", noise=QUIET), make_json("b.json", seed=1, noise=QUIET, slow={SLOWED: 1.10})
    r = call("compare", base, cont, "--metric", "bytes_per_second")
    assert r.returncode == 1 and listed(r.stdout, "Slower") == [SLOWED]
    assert "higher is better" in r.stdout
    assert "coalescing/read/hbm/stride:1 " not in r.stdout.split("Slower")[0]  # has no bytes_per_second


def test_too_few_repetitions_are_ambiguous(make_json):
    """With 2 repetitions nothing is decided (noise.MIN_SAMPLES = 3): ambiguous, with the reason, exit 0."""
    base = make_json("a.json", reps=2, noise=QUIET)
    cont = make_json("b.json", reps=2, seed=1, noise=QUIET, slow={SLOWED: 1.10})
    r = call("compare", base, cont)
    assert r.returncode == 0 and cells(r.stdout, SLOWED)[7] == "ambiguous"
    assert f"{SLOWED}: fewer than 3 unthrottled repetitions" in r.stdout
    three = call("compare", make_json("c.json", reps=3, noise=QUIET),
                make_json("d.json", reps=3, seed=1, noise=QUIET, slow={SLOWED: 1.10}))
    assert three.returncode == 1 and listed(three.stdout, "Slower") == [SLOWED]


# --- several baselines, folders -------------------------------------------------------------------------

def test_several_baselines_spread_lifts_the_threshold(make_json):
    """Baselines that disagree by 10 % on a benchmark (as HBM stride reads did between H200 instances) give it
    a threshold above 10 %: a 10 % change is 'same' against both, 'slower' against the fast one alone."""
    name = "coalescing/read/hbm/stride:64"
    b1 = make_json("b1.json", seed=0, noise=QUIET)
    b2 = make_json("b2.json", seed=1, noise=QUIET, slow={name: 1.10})
    cont = make_json("c.json", seed=2, noise=QUIET, slow={name: 1.10})
    one = call("compare", b1, cont)
    assert one.returncode == 1 and listed(one.stdout, "Slower") == [name]
    both = call("compare", b1, b2, cont)
    assert both.returncode == 0, both.stdout
    c = cells(both.stdout, name)
    assert float(c[6].rstrip("%")) > 10 and c[7] == "same"
    assert "noise from 2 baseline run(s)" in both.stdout
    assert both.stdout.count("baseline:  ") == 2


def test_several_baselines_still_catch_a_slowdown(make_json):
    bases = [make_json(f"b{i}.json", seed=i, noise=QUIET) for i in range(3)]
    r = call("compare", *bases, make_json("c.json", seed=9, noise=QUIET, slow={SLOWED: 1.10}))
    assert r.returncode == 1 and listed(r.stdout, "Slower") == [SLOWED]


def test_folder_of_baselines(make_json, tmp_path):
    """A folder: every benchmarks.json below it, sorted, is a baseline; a contender inside it is left out."""
    for i, run_dir in enumerate(("runs/h200/2", "runs/h200/1", "runs/other/3")):
        make_json(subdir=run_dir, seed=i, noise=QUIET)
    cont = make_json(subdir="runs/h200/9", seed=9, noise=QUIET, slow={SLOWED: 1.10})
    r = call("compare", tmp_path / "runs", cont)
    assert r.returncode == 1 and listed(r.stdout, "Slower") == [SLOWED]
    named = [l.split()[1] for l in r.stdout.splitlines() if l.startswith("baseline:  ")]
    assert named == [str(tmp_path / "runs" / d / "benchmarks.json") for d in ("h200/1", "h200/2", "other/3")]
    assert "noise from 3 baseline run(s)" in r.stdout


def test_folder_as_contender_needs_exactly_one_run(make_json, tmp_path):
    base = make_json("base.json", noise=QUIET)
    make_json(subdir="one/run", seed=1, noise=QUIET, slow={SLOWED: 1.10})
    r = call("compare", base, tmp_path / "one")
    assert r.returncode == 1 and listed(r.stdout, "Slower") == [SLOWED]
    make_json(subdir="one/run2", seed=2)
    r = call("compare", base, tmp_path / "one")
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1
    assert "must be one run" in r.stderr and "holds 2" in r.stderr


def test_empty_folder_and_lone_argument_are_unusable(make_json, tmp_path):
    (tmp_path / "empty").mkdir()
    r = call("compare", tmp_path / "empty", make_json("c.json"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "without any benchmarks.json" in r.stderr
    r = call("compare", make_json("c.json"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "at least one baseline" in r.stderr
    same = make_json("d.json")
    r = call("compare", same, same)
    assert r.returncode == 2 and "no baseline left" in r.stderr
    r = call("compare", make_json("a.json"), make_json("a.json"), same)
    assert r.returncode == 2 and "given twice" in r.stderr


# --- which case ---------------------------------------------------------------------------------------------

CLEAN = {"git_commit": "a" * 40, "git_dirty": "false", "suite_version": "0.3.0", "gpu_uuid": "GPU-1"}


@pytest.mark.parametrize("base_ctx, cont_ctx, case", [
    (CLEAN, CLEAN, "case: same GPU; same code"),
    (CLEAN, dict(CLEAN, gpu_uuid="GPU-2"), "case: same GPU model; same code"),
    (CLEAN, dict(CLEAN, git_commit="b" * 40), "case: same GPU; different code"),
    (CLEAN, dict(CLEAN, git_dirty="true"), "case: same GPU; code unknown"),
    (CLEAN, dict(CLEAN, suite_version="0.4.0"), "case: same GPU; different code"),
    ({}, {}, "case: same GPU model; code unknown"),  # files from before these keys
    (dict(CLEAN, bench_code="f00d"), dict(CLEAN, git_commit="b" * 40, bench_code="f00d"),
     "case: same GPU; same benchmark code"),
    (CLEAN, dict(CLEAN, gpu_uuid="GPU-2", gpu_name="NVIDIA A100-SXM4-80GB"), "case: different GPU; same code"),
])
def test_case_line(make_json, base_ctx, cont_ctx, case):
    base = with_context(make_json("a.json"), **base_ctx)
    cont = with_context(make_json("b.json", seed=1), **cont_ctx)
    r = call("compare", base, cont)
    # one synthetic run drawn twice (seeds 0 and 1): every benchmark same, whatever the case
    assert r.returncode == 0, r.stdout + r.stderr
    assert_same_but_off_clock(r.stdout)
    assert case in r.stdout.splitlines()
    baseline = next(l for l in r.stdout.splitlines() if l.startswith("baseline:  "))
    assert baseline.endswith(case.removeprefix("case: ").replace(";", ","))


def test_case_line_with_mixed_baselines(make_json):
    b1 = with_context(make_json("a.json"), **CLEAN)
    b2 = with_context(make_json("b.json", seed=1), **dict(CLEAN, gpu_uuid="GPU-2"))
    r = call("compare", b1, b2, with_context(make_json("c.json", seed=2), **CLEAN))
    assert "case: same GPU / same GPU model; same code (the baselines differ; see each above)" in r.stdout
    assert f"commit {'a' * 10}, suite 0.3.0" in r.stdout


def test_baselines_from_different_commits_are_warned(make_json):
    b1 = with_context(make_json("a.json"), **CLEAN)
    b2 = with_context(make_json("b.json", seed=1), **dict(CLEAN, git_commit="c" * 40))
    r = call("compare", b1, b2, with_context(make_json("c.json", seed=2), **CLEAN))
    assert "WARNING: the baselines are from different commits" in r.stdout
    r = call("compare", b1, with_context(make_json("d.json", seed=3), **CLEAN), make_json("e.json", seed=4))
    assert "different commits" not in r.stdout
    # commits that differ outside what gpubench is built from (one bench_code): their spread is noise
    b1, b2 = (with_context(make_json(f"{n}.json", seed=i), **dict(CLEAN, git_commit=n * 40, bench_code="f00d"))
              for i, n in enumerate("fg"))
    r = call("compare", b1, b2, with_context(make_json("h.json", seed=2), **CLEAN))
    assert "different commits" not in r.stdout


def test_gpu_mismatch_is_warned(make_json):
    r = call("compare", make_json("a.json"), make_json("b.json", gpu_name="NVIDIA A100-SXM4-80GB"))
    assert "WARNING: different GPUs" in r.stderr and "NVIDIA A100-SXM4-80GB" in r.stderr
    assert "WARNING: different GPUs" in r.stdout and "case: different GPU;" in r.stdout
    assert "WARNING" not in call("compare", make_json("a.json"), make_json("c.json", seed=2)).stdout


# --- listings and exit codes --------------------------------------------------------------------------------

def test_missing_benchmarks_fail_with_exit_3_unless_allowed(make_json):
    gone, new = "sync/syncwarp/threads:64/blocks_per_sm:2", "gemm/cublas/m:256/n:256/k:256"
    base, cont = make_json("a.json", drop=[new]), make_json("b.json", seed=1, drop=[gone])
    r = run("compare", base, cont)
    assert r.returncode == 3 and "missing from the contender" in r.stderr
    assert listed(r.stdout, "Missing from contender") == [gone]
    assert listed(r.stdout, "New in contender") == [new]
    assert run("compare", base, cont, "--allow-missing").returncode == 0
    assert run("compare", make_json("c.json", drop=[new, gone]), cont).returncode == 0  # new ones are no failure


def test_missing_from_any_baseline_counts(make_json):
    """With several baselines, a benchmark that only one of them has is still missing from the contender."""
    gone = "sync/syncwarp/threads:64/blocks_per_sm:2"
    r = call("compare", make_json("a.json", drop=[gone]), make_json("b.json", seed=1),
            make_json("c.json", seed=2, drop=[gone]))
    assert r.returncode == 3 and listed(r.stdout, "Missing from contender") == [gone]


def test_slower_wins_over_missing(make_json):
    gone = "sync/syncwarp/threads:64/blocks_per_sm:2"
    r = call("compare", make_json("a.json", noise=QUIET),
            make_json("b.json", seed=1, noise=QUIET, drop=[gone], slow={SLOWED: 1.2}))
    assert r.returncode == 1 and listed(r.stdout, "Missing from contender") == [gone]


def test_contender_that_lost_everything_fails(make_json, write_json):
    """Issue 10 case 2: an empty contender listed 377 missing benchmarks and exited 0."""
    empty = write_json(json.dumps(dict(json.loads(make_json("b.json").read_text()), benchmarks=[])), "empty.json")
    r = call("compare", make_json("a.json"), empty)
    assert r.returncode == 3 and len(listed(r.stdout, "Missing from contender")) == len(__import__("synth").benchmarks())


def test_misspelt_metric_is_unusable_input(make_json):
    """Issue 10 case 1: --metric tmie on a 25 % slowdown gave an empty table, 'Regressions: none', exit 0."""
    base, cont = make_json("a.json"), make_json("b.json", seed=1, slow={SLOWED: 1.25})
    r = call("compare", base, cont, "--metric", "tmie")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "compare: error: --metric 'tmie'" in r.stderr and "cycles_per_request" in r.stderr


@pytest.mark.parametrize("bad", [float("nan"), 0.0])
def test_nan_or_zero_time_is_unusable_not_a_change(make_json, write_json, bad):
    """Issue 10 case 3: a NaN time gave a traceback and exit 1 (the regression code); a 0 time read as a
    100 % improvement. In any position: the contender, or the second of two baselines."""
    doc = json.loads(make_json("b.json", seed=1).read_text())
    entry = next(e for e in doc["benchmarks"] if e["run_name"].startswith(SLOWED + "/") and e["run_type"] == "iteration")
    entry["real_time"] = bad
    broken = write_json(json.dumps(doc), "broken.json")
    for args in ((make_json("a.json"), broken), (make_json("a.json"), broken, make_json("c.json", seed=2))):
        r = run("compare", *args)
        assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1
        assert f"{broken}: {SLOWED}: real_time" in r.stderr and "Traceback" not in r.stderr


def test_old_barrier_names_compare_with_the_new(make_json):
    """Baselines from before the rename (syncthreads/...) compare with runs that write sync/syncthreads/...."""
    name = "sync/syncthreads/threads:256/blocks_per_sm:2"
    r = call("compare", make_json("old.json", old_names=True, noise=QUIET),
            make_json("new.json", seed=1, noise=QUIET, slow={name: 1.3}))
    assert r.returncode == 1 and listed(r.stdout, "Slower") == [name]
    assert listed(r.stdout, "Missing from contender") == [] and listed(r.stdout, "New in contender") == []


def test_skipped_benchmarks_are_listed_with_reasons(make_json):
    name = "sync/syncwarp/threads:1024/blocks_per_sm:2"
    r = call("compare", make_json("a.json"), make_json("b.json", seed=1, skips={name: "does not fit"}))
    assert r.returncode == 0
    assert r.stdout.split("Skipped, not compared (1):\n")[1].splitlines()[0] == f"  {name}: does not fit"


def test_errored_benchmarks_are_listed_not_compared(make_json):
    name = "gemm/naive/m:4092/n:4092/k:4092"
    r = call("compare", make_json("a.json"), make_json("b.json", errors={name: "timeout"}))
    assert r.returncode == 0 and listed(r.stdout, "Errored, not compared") == [name]
    assert not any(l.startswith(name + " ") for l in r.stdout.splitlines())


def test_host_bound_benchmark_across_gpus_is_ambiguous(make_json):
    """A pinned host copy 20 % slower on another GPU of the model (maybe another host), no profile: not called
    slower but ambiguous as host-bound, exit 0; on the same GPU (gpu_uuid) the same change is slower, exit 1."""
    host = "link/h2d/pinned/ce/bytes:268435456"
    base = with_context(make_json("a.json", noise=QUIET), gpu_uuid="GPU-1")
    other = with_context(make_json("b.json", seed=1, noise=QUIET, slow={host: 1.2}), gpu_uuid="GPU-2")
    r = call("compare", base, other, "--no-profile")
    assert r.returncode == 0 and cells(r.stdout, host)[7] == "ambiguous", r.stdout
    assert f"{host}: host-bound" in r.stdout and listed(r.stdout, "Slower") == []
    same = with_context(make_json("c.json", seed=1, noise=QUIET, slow={host: 1.2}), gpu_uuid="GPU-1")
    r = call("compare", base, same, "--no-profile")
    assert r.returncode == 1 and listed(r.stdout, "Slower") == [host]


# --- output: the summary first, markdown, json (issue 27) -------------------------------------------------------

def test_percentile_is_the_nearest_rank():
    from gpubench.regress.compare_output import percentile
    assert percentile(range(1, 11), 0.9) == 9 and percentile([4, 1, 3, 2], 0.5) == 2 and percentile([7], 0.9) == 7
    assert percentile(range(1, 11), 1.0) == 10 and percentile([], 0.5) != percentile([], 0.5)  # nan for none


def test_summary_and_verdict_lists_come_before_the_table(make_json):
    """The counts and the threshold distribution first, then the lists, then the full table. Two baselines 10 %
    apart on one benchmark lift its threshold: the max shows it while the median stays the floor."""
    name = "coalescing/read/hbm/stride:64"
    b1, b2 = make_json("b1.json", noise=QUIET), make_json("b2.json", seed=1, noise=QUIET, slow={name: 1.10})
    r = call("compare", b1, b2, make_json("c.json", seed=2, noise=QUIET, slow={SLOWED: 1.10}))
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    at = lambda prefix: next(i for i, l in enumerate(lines) if l.startswith(prefix))
    assert at("summary: ") < at("threshold (") < at("Slower (1):") < at("Skipped, not compared") < at("benchmark  ")
    n = len(__import__("synth").benchmarks())
    counts = lines[at("summary: ")]
    judged = n - int(counts.split(", ")[-1].split()[0])
    assert counts.startswith(f"summary: {n} compared: ") and " 1 slower, 0 faster, " in counts
    threshold = lines[at("threshold (")]
    c = cells(r.stdout, name)
    assert f"over the {judged} judged" in threshold and "median 5.0%," in threshold and f"max {c[6]};" in threshold
    assert float(c[6].rstrip("%")) > 10


def test_markdown_lists_changed_rows_first(make_json):
    name = "gemm/smem/m:256/n:256/k:256"  # short: ambiguous
    base = make_json("a.json", noise=QUIET)
    cont = make_json("b.json", seed=1, noise=QUIET, slow={SLOWED: 1.10, name: 1.10})
    r = call("compare", base, cont, "--format", "markdown")
    assert r.returncode == 1
    rows = [l for l in r.stdout.splitlines() if l.startswith("| `")]
    assert rows[0].startswith(f"| `{SLOWED}` |") and "**slower**" in rows[0]
    assert rows[1].startswith(f"| `{name}` |") and "ambiguous (short)" in rows[1] and "launch under 100 µs" in rows[1]
    k = 2 + len(off_clock())  # then the off-clock ones, ambiguous, still before the same rows
    assert all("ambiguous" in l for l in rows[2:k])
    assert len(rows) == len(__import__("synth").benchmarks()) and all("| same |" in l for l in rows[k:])
    assert r.stdout.index(rows[k - 1]) < r.stdout.index(" same</summary>") < r.stdout.index(rows[k])  # same rows folded


def test_json_has_every_verdict_with_its_numbers(make_json):
    name = "gemm/smem/m:256/n:256/k:256"
    gone = "sync/syncwarp/threads:64/blocks_per_sm:2"
    base = make_json("a.json", noise=QUIET)
    cont = make_json("b.json", seed=1, noise=QUIET, slow={SLOWED: 1.10, name: 1.10}, drop=[gone])
    r = call("compare", base, cont, "--format", "json")
    assert r.returncode == 1  # the exit codes do not depend on the format
    doc = json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    assert doc["schema_version"] == 1 and doc["metric"] == "real_time" and doc["higher_is_better"] is False
    by = {b["name"]: b for b in doc["benchmarks"]}
    assert len(by) == len(__import__("synth").benchmarks()) - 1
    for b in doc["benchmarks"]:
        assert {"name", "baseline", "contender", "change", "threshold", "verdict", "reasons"} <= b.keys()
    slow = by[SLOWED]
    assert slow["verdict"] == "slower" and slow["reasons"] == [] and slow["threshold"] == noise.FLOOR
    assert slow["change"] == pytest.approx(slow["contender"] / slow["baseline"] - 1) and 0.08 < slow["change"] < 0.12
    assert by[name]["verdict"] == "ambiguous" and by[name]["reasons"] == ["launch under 100 µs"]
    s = doc["summary"]
    assert s["counts"]["slower"] == 1 and sum(s["counts"].values()) == s["compared"] == len(by)
    assert s["threshold"] == {"median": noise.FLOOR, "p90": noise.FLOOR, "max": noise.FLOOR} and s["missing"] == [gone]
    r = call("compare", base, make_json("c.json", seed=1, noise=QUIET, drop=[gone]), "--format", "json")
    assert r.returncode == 3 and json.loads(r.stdout)["summary"]["missing"] == [gone]


def test_a_longer_launch_is_redefined_not_slower():
    """ceiling/fma's launch grew from 4096 to 16384 FMAs a chain between two committed runs: its time is 3.9 x,
    its rate the same, so compare calls it ambiguous (redefined), not slower; judged by its rate it is same."""
    base, cont = "results/h200/20261202T080735Z/benchmarks.json.gz", "results/h200/20261202T112923Z/benchmarks.json.gz"
    r = call("compare", base, cont)
    line = next(l for l in r.stdout.splitlines() if l.strip().startswith("ceiling/fma:"))
    assert "the work per launch changed by +300.0%" in line and "redefined" in line
    assert "ceiling/fma" not in listed(r.stdout, "Slower")
    r = call("compare", base, cont, "--metric", "flops_per_second")
    row = next(l for l in r.stdout.splitlines() if l.startswith("ceiling/fma "))
    assert row.split()[-1] == "same"
