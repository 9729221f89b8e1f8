"""compare.py: finds planted changes with the U test, stays quiet on noise, lists what is missing or new."""
import pytest

from conftest import run

SLOWED = "smem_banks/throughput/width:4/stride:32/pad:0"


def row(stdout, name):
    return next(l for l in stdout.splitlines() if l.split("  ")[0] == name)


def listed(stdout, title):
    """Names listed under 'title (N):' at the end of the output."""
    lines = stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(title))
    if lines[start].endswith(": none"):
        return []
    return [l.strip() for l in lines[start + 1:] if l.startswith("  ")][:int(lines[start].split("(")[1].split(")")[0])]


@pytest.mark.parametrize("shape", ["1.7.1", "1.8.3"])
def test_planted_slowdown_is_the_only_regression(make_json, shape):
    base = make_json("base.json", shape=shape, seed=0)
    cont = make_json("cont.json", shape=shape, seed=1, slow={SLOWED: 1.10})
    r = run("compare", base, cont)
    assert r.returncode == 1, r.stdout + r.stderr
    assert listed(r.stdout, "Regressions") == [SLOWED]
    assert r.stdout.count("REGRESSED") == 1 and "REGRESSED" in row(r.stdout, SLOWED)
    cells = row(r.stdout, SLOWED).split()  # name, baseline, unit, contender, unit, change, p-value, verdict
    assert 7 < float(cells[5].rstrip("%")) < 13 and float(cells[6]) < 0.05


def test_noise_alone_flags_nothing(make_json):
    r = run("compare", make_json("a.json", seed=0), make_json("b.json", seed=7))
    assert r.returncode == 0 and "REGRESSED" not in r.stdout


def test_improvement_is_reported_and_exit_0(make_json):
    name = "gemm/smem/m:2048/n:2048/k:2048"
    r = run("compare", make_json("a.json"), make_json("b.json", seed=3, slow={name: 0.8}))
    assert r.returncode == 0
    assert listed(r.stdout, "Improvements") == [name]
    assert -23 < float(row(r.stdout, name).split()[5].rstrip("%")) < -17  # change column, about -20%


def test_short_launches_are_shown_not_flagged(make_json):
    """A 10% slower 10 µs GEMM is marked '(short)' and exit 0 by default; --min-time 0 flags it."""
    name = "gemm/smem/m:256/n:256/k:256"
    base, cont = make_json("a.json"), make_json("b.json", seed=1, slow={name: 1.10})
    r = run("compare", base, cont)
    assert r.returncode == 0 and "(short)" in row(r.stdout, name) and listed(r.stdout, "Regressions") == []
    r = run("compare", base, cont, "--min-time", "0")
    assert r.returncode == 1 and listed(r.stdout, "Regressions") == [name]


def test_min_change_threshold(make_json):
    base, cont = make_json("a.json"), make_json("b.json", seed=1, slow={SLOWED: 1.10})
    assert run("compare", base, cont, "--min-change", "0.2").returncode == 0


def test_rate_metric_direction(make_json):
    """A 10% slower kernel is a 10% lower GB/s: still a regression when comparing a rate counter."""
    base, cont = make_json("a.json"), make_json("b.json", seed=1, slow={SLOWED: 1.10})
    r = run("compare", base, cont, "--metric", "bytes_per_second")
    assert r.returncode == 1 and listed(r.stdout, "Regressions") == [SLOWED]
    assert "coalescing/read/hbm/stride:1" not in r.stdout.split("Regressions")[0]  # has no bytes_per_second


def test_too_few_repetitions_fall_back_to_change_and_are_marked(make_json):
    base = make_json("a.json", reps=3)
    cont = make_json("b.json", reps=3, seed=1, slow={SLOWED: 1.10})
    r = run("compare", base, cont)
    assert r.returncode == 1 and listed(r.stdout, "Regressions") == [SLOWED]
    assert "n/a* (3 vs 3)" in row(r.stdout, SLOWED)
    assert "too few repetitions for the U test" in r.stdout
    one = run("compare", make_json("c.json", reps=1), make_json("d.json", reps=1, seed=2))
    assert one.returncode == 0 and "n/a* (1 vs 1)" in one.stdout


def test_missing_benchmarks_fail_with_exit_3_unless_allowed(make_json):
    gone, new = "sync/syncwarp/threads:64/blocks_per_sm:2", "gemm/cublas/m:256/n:256/k:256"
    base, cont = make_json("a.json", drop=[new]), make_json("b.json", seed=1, drop=[gone])
    r = run("compare", base, cont)
    assert r.returncode == 3 and "missing from the contender" in r.stderr
    assert listed(r.stdout, "Missing from contender") == [gone]
    assert listed(r.stdout, "New in contender") == [new]
    assert run("compare", base, cont, "--allow-missing").returncode == 0
    assert run("compare", make_json("c.json", drop=[new, gone]), cont).returncode == 0  # new ones are no failure


def test_contender_that_lost_everything_fails(make_json, write_json):
    """Issue 10 case 2: an empty contender listed 377 missing benchmarks and exited 0."""
    import json
    empty = write_json(json.dumps(dict(json.loads(make_json("b.json").read_text()), benchmarks=[])), "empty.json")
    r = run("compare", make_json("a.json"), empty)
    assert r.returncode == 3 and len(listed(r.stdout, "Missing from contender")) == len(__import__("synth").benchmarks())


def test_misspelt_metric_is_unusable_input(make_json):
    """Issue 10 case 1: --metric tmie on a 25 % slowdown gave an empty table, 'Regressions: none', exit 0."""
    base, cont = make_json("a.json"), make_json("b.json", seed=1, slow={SLOWED: 1.25})
    r = run("compare", base, cont, "--metric", "tmie")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "compare: error: --metric 'tmie'" in r.stderr and "cycles_per_request" in r.stderr


@pytest.mark.parametrize("bad", [float("nan"), 0.0])
def test_nan_or_zero_time_is_unusable_not_a_change(make_json, write_json, bad):
    """Issue 10 case 3: a NaN time gave a traceback and exit 1 (the regression code); a 0 time read as a
    100 % improvement."""
    import json
    doc = json.loads(make_json("b.json", seed=1).read_text())
    entry = next(e for e in doc["benchmarks"] if e["run_name"].startswith(SLOWED + "/") and e["run_type"] == "iteration")
    entry["real_time"] = bad
    cont = write_json(json.dumps(doc), "cont.json")
    r = run("compare", make_json("a.json"), cont)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1
    assert f"{cont}: {SLOWED}: real_time" in r.stderr and "Traceback" not in r.stderr


def test_old_barrier_names_compare_with_the_new(make_json):
    """Baselines from before the rename (syncthreads/...) compare with runs that write sync/syncthreads/...."""
    name = "sync/syncthreads/threads:256/blocks_per_sm:2"
    r = run("compare", make_json("old.json", old_names=True), make_json("new.json", seed=1, slow={name: 1.3}))
    assert r.returncode == 1 and listed(r.stdout, "Regressions") == [name]
    assert listed(r.stdout, "Missing from contender") == [] and listed(r.stdout, "New in contender") == []


def test_skipped_benchmarks_are_listed_with_reasons(make_json):
    name = "sync/syncwarp/threads:1024/blocks_per_sm:2"
    r = run("compare", make_json("a.json"), make_json("b.json", seed=1, skips={name: "does not fit"}))
    assert r.returncode == 0 and listed(r.stdout, "Skipped, not compared") == [f"{name}: does not fit"]


def test_errored_benchmarks_are_listed_not_compared(make_json):
    name = "gemm/naive/m:4092/n:4092/k:4092"
    r = run("compare", make_json("a.json"), make_json("b.json", errors={name: "timeout"}))
    assert r.returncode == 0 and listed(r.stdout, "Errored, not compared") == [name]
    assert not any(l.startswith(name + " ") for l in r.stdout.splitlines())


def test_gpu_mismatch_is_warned(make_json):
    r = run("compare", make_json("a.json"), make_json("b.json", gpu_name="NVIDIA A100-SXM4-80GB"))
    assert "WARNING: different GPUs" in r.stderr and "NVIDIA A100-SXM4-80GB" in r.stderr
    assert "WARNING: different GPUs" in r.stdout
    assert "WARNING" not in run("compare", make_json("a.json"), make_json("c.json", seed=2)).stdout
