"""Every script turns an unusable input into one line on stderr and exit status 2, writes nothing then,
and never overwrites its input or a committed file unless told to (issue 10). The scripts' main() is called
in-process (conftest.call: the same exit status, stdout and stderr); test_bad_json_command_line and
test_committed_results_are_not_overwritten_without_force run each script as a user does."""
import json
import shutil
import subprocess

import pytest

import synth
from conftest import ALL_SCRIPTS, PLOT_SCRIPTS, call, run


def _with(change):
    doc = synth.suite_json(only={"ceiling", "gemm"})
    change(doc["benchmarks"])
    return json.dumps(doc)


def _nan_time(entries):
    entries[0]["real_time"] = float("nan")


def _zero_time(entries):
    next(e for e in entries if e.get("aggregate_name") == "median")["real_time"] = 0


def _duplicate(entries):
    entries += entries[:3]

def _first(entries, run_type="iteration", family="ceiling/"):
    return next(e for e in entries if e["run_type"] == run_type and e["run_name"].startswith(family))


def _nan_counter(entries):  # issue 25: a NaN bandwidth read as "+nan %" faster
    next(e for e in entries if "bytes_per_second" in e and e["run_type"] == "iteration")["bytes_per_second"] = float("nan")


def _no_time_unit(entries):  # issue 25: read as nanoseconds
    del _first(entries)["time_unit"]


def _odd_time_unit(entries):
    _first(entries)["time_unit"] = "fortnight"


def _huge_integer(entries):  # above 1e308: float() overflows
    _first(entries)["iterations"] = 10 ** 400


def _rename(entries, old, new):
    for e in entries:
        if e["run_name"].startswith(old):
            e["run_name"], e["name"] = (x.replace(old, new, 1) for x in (e["run_name"], e["name"]))


def _first_gemm(entries):
    return _first(entries, family="gemm/")["run_name"].split("/manual_time")[0]


def _non_ascii_digit(entries):  # '٣' is a digit to str.isdigit
    name = _first_gemm(entries)
    _rename(entries, name, name.replace("m:", "m:\u0663", 1))


def _many_digits(entries):  # int() refuses 5000 digits
    name = _first_gemm(entries)
    _rename(entries, name, name.replace("m:", "m:" + "9" * 5000, 1))


def _same_size_twice(entries):  # m:4092 and m:04092 are one benchmark: the point twice on a curve
    name = _first_gemm(entries)
    entries += [dict(e, run_name=e["run_name"].replace("m:", "m:0", 1), name=e["name"].replace("m:", "m:0", 1))
                for e in entries if e["run_name"].startswith(name + "/")]


def _context(key, value):
    doc = synth.suite_json(only={"ceiling", "gemm"})
    doc["context"][key] = value
    return json.dumps(doc)


BAD = {
    "not JSON": ("benchmarks.json: this is not json {", "not JSON"),
    "no benchmarks": (json.dumps({"context": {"suite": "gpu-memory-microbench"}}), 'no "benchmarks" list'),
    "another tool": (json.dumps({"context": {"host_name": "x", "library_build_type": "release"},
                                 "benchmarks": [{"name": "BM_foo", "run_type": "iteration", "real_time": 1,
                                                 "time_unit": "ns"}]}), "not from the suite"),
    "NaN time": (_with(_nan_time), "is not a positive number"),
    "zero time": (_with(_zero_time), "is not a positive number"),
    "duplicate entries": (_with(_duplicate), "is listed twice"),
    # issue 25: every number, every required field, the context's types, names that look like numbers
    "NaN counter": (_with(_nan_counter), "bytes_per_second is nan, not a finite number"),
    "no time_unit": (_with(_no_time_unit), "ceiling/fma: no time_unit"),
    "unknown time_unit": (_with(_odd_time_unit), "ceiling/fma: unknown time_unit 'fortnight'"),
    "integer above 1e308": (_with(_huge_integer), "iterations is an integer of 401 digits, not a finite number"),
    "non-ASCII digit": (_with(_non_ascii_digit), "is not a plain number"),
    "5000 digits": (_with(_many_digits), "is not a plain number"),
    "one size twice": (_with(_same_size_twice), "are the same benchmark"),
    "gpu_name null": (_context("gpu_name", None), "context gpu_name is null, not a string"),
    "gpu_name number": (_context("gpu_name", 7), "context gpu_name is 7, not a string"),
    "gpu_name list": (_context("gpu_name", ["H200"]), "context gpu_name is [\"H200\"], not a string"),
    "bench_code list": (_context("bench_code", ["abc"]), "context bench_code is [\"abc\"], not a string"),
    "sm_count text": (_context("sm_count", "many"), "context sm_count is 'many', not a number"),
    "l2_bytes text": (_context("l2_bytes", "50 MB"), "context l2_bytes is '50 MB', not a number"),
}


def args_for(script, bad, good):
    """compare gets the bad file on either side (node_report, noise_profile too: every reader goes through one
    check); the rest take it as their only input."""
    if script == "noise_profile":
        return [(bad, good, "-o", good.parent / "profile.json"), (good, bad, "-o", good.parent / "profile.json")]
    return [(bad, good), (good, bad)] if script in ("compare", "node_report") else [(bad,)]


READERS = ALL_SCRIPTS + ("node_report", "noise_profile", "peer_matrix")


def check_bad_json(runner, script, kind, write_json, make_json):
    content, reason = BAD[kind]
    bad = write_json(content)
    for args in args_for(script, bad, make_json(only={"ceiling"})):
        r = runner(script, *args)
        assert r.returncode == 2, (r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"{script}: error: ") and reason in lines[0], r.stderr
        assert str(bad) in lines[0]
    assert not list(bad.parent.glob("*.png")) and not (bad.parent / "report.md").exists()


@pytest.mark.parametrize("script", READERS)
@pytest.mark.parametrize("kind", BAD)
def test_bad_json(script, kind, write_json, make_json):
    check_bad_json(call, script, kind, write_json, make_json)


@pytest.mark.parametrize("script", READERS)
def test_bad_json_command_line(script, write_json, make_json):
    """One kind through python3 -m ... as a user (and run_all.sh) runs it: the interpreter adds nothing to the one
    line (no traceback, no warning) and exits 2. One of the last checks a file passes (two names, one benchmark)."""
    check_bad_json(run, script, "one size twice", write_json, make_json)


@pytest.mark.parametrize("kind", BAD)
def test_bad_json_in_a_folder_of_baselines(kind, tmp_path, make_json):
    """compare.py reads every benchmarks.json below a folder argument: one bad run among good ones is one line,
    exit 2, naming that file."""
    make_json(subdir="runs/a", only={"ceiling"})
    bad = tmp_path / "runs" / "b" / "benchmarks.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(BAD[kind][0])
    make_json(subdir="runs/c", only={"ceiling"})
    r = call("compare", tmp_path / "runs", make_json("cont.json", only={"ceiling"}))
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"compare: error: {bad}") and BAD[kind][1] in lines[0]


@pytest.mark.parametrize("script", ALL_SCRIPTS)
def test_missing_file(script, tmp_path, make_json):
    for args in args_for(script, tmp_path / "absent.json", make_json(only={"ceiling"})):
        r = call(script, *args)
        assert r.returncode == 2 and r.stderr.strip() == f"{script}: error: {tmp_path / 'absent.json'}: no such file"


WRITERS = PLOT_SCRIPTS + ("report",)


def out_name(script):
    return "report.md" if script == "report" else f"{script}.png"


@pytest.mark.parametrize("script", WRITERS)
def test_output_equal_to_input_is_refused(script, make_json):
    """Issue 10 case 8: report.py X.json -o X.json overwrote its input with Markdown."""
    path = make_json(only={"ceiling", "gemm"})
    before = path.read_bytes()
    r = call(script, path, "-o", path)
    assert r.returncode == 2 and r.stderr.strip() == f"{script}: error: refusing to write {path}: it is an input of this command"
    assert path.read_bytes() == before


@pytest.mark.parametrize("script", WRITERS)
def test_output_into_a_missing_folder_is_one_line(script, make_json, tmp_path):
    r = call(script, make_json(only={"ceiling", "gemm"}), "-o", tmp_path / "no" / "such" / out_name(script))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "no such folder" in r.stderr


@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
@pytest.mark.parametrize("script", WRITERS)
def test_committed_results_are_not_overwritten_without_force(script, make_json):
    """Issue 10 case 8: run on a committed run, the default output beside the JSON rewrote committed files."""
    path = make_json(subdir="repo/results/gpu/run")
    repo = path.parents[3]
    committed = path.parent / out_name(script)
    committed.write_text("committed")
    git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "results")
    r = run(script, path)
    assert r.returncode == 2 and "it is a committed file (pass --force to overwrite it)" in r.stderr
    assert committed.read_bytes() == b"committed"
    r = call(script, path, "--force")
    assert r.returncode == 0, r.stderr
    assert committed.read_bytes() != b"committed"
