"""Issue 25, items 3 and 4: compare's input handling. A run in which nothing ran does not pass, a run marked
FAILED is no baseline (nor a noise profile's input), runs linked into a folder of baselines are found, and a
malformed noise profile is one line, exit 2."""
import json
import os

import pytest

import synth
from conftest import run

ONLY = {"ceiling", "sync"}


def names(only=ONLY):
    return list(dict.fromkeys(e["run_name"].removesuffix("/manual_time")
                              for e in synth.suite_json(only=only)["benchmarks"]))


@pytest.mark.parametrize("how", ["errors", "skips"])
def test_contender_in_which_nothing_ran_does_not_pass(how, make_json):
    """Every benchmark of the contender errored or was skipped: exit 0 ("nothing slower") before."""
    base = make_json("base.json", only=ONLY)
    cont = make_json("cont.json", only=ONLY, **{how: {n: "checksum mismatch" for n in names()}})
    r = run("compare", base, cont)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.strip() == (f"compare: error: {cont}: no benchmark of the contender ran ("
                                + ("59 errored, 0 skipped" if how == "errors" else "0 errored, 59 skipped")
                                + "): nothing to compare")


def test_baseline_in_which_nothing_ran_is_unusable(make_json):
    base = make_json("base.json", only=ONLY, errors={n: "checksum mismatch" for n in names()})
    r = run("compare", base, make_json("cont.json", only=ONLY))
    assert r.returncode == 2 and "no benchmark of the baseline ran" in r.stderr


def test_a_failed_run_is_no_baseline(make_json, tmp_path):
    """run_all.sh leaves FAILED in a failed run's folder; such a run was taken as a baseline without a word."""
    good = make_json(subdir="runs/a", only=ONLY)
    bad = make_json(subdir="runs/b", only=ONLY, seed=2)
    (bad.parent / "FAILED").write_text("run_all.sh stopped (exit 4) during: benchmarks\n")
    cont = make_json("cont.json", only=ONLY, seed=3)
    for args in ([tmp_path / "runs", cont], [good, bad, cont], [bad, cont]):
        r = run("compare", *args)
        assert r.returncode == 2 and r.stdout == "", r.stdout
        assert r.stderr.strip() == f"compare: error: {bad}: its run failed ({bad.parent / 'FAILED'} says why); not used"
    node = make_json(subdir="node/gpu0", only=ONLY)  # a node run: FAILED in the run's folder above gpu<i>/
    (tmp_path / "node" / "FAILED").write_text("stopped\n")
    assert run("compare", node, cont).returncode == 2


def two_gpus(tmp_path):
    """Runs of two GPUs (gpu_uuid GPU-0, GPU-1) in runs/0 and runs/1: enough for a noise profile."""
    paths = []
    for i in range(2):
        doc = synth.suite_json(only=ONLY, seed=i)
        doc["context"]["gpu_uuid"] = f"GPU-{i}"
        (tmp_path / "runs" / str(i)).mkdir(parents=True)
        paths.append(tmp_path / "runs" / str(i) / "benchmarks.json")
        paths[-1].write_text(json.dumps(doc))
    return paths


def test_a_failed_run_is_no_noise_profile_input(tmp_path):
    runs = two_gpus(tmp_path)
    r = run("noise_profile", tmp_path / "runs", "-o", tmp_path / "profile.json", "--same-code")
    assert r.returncode == 0 and (tmp_path / "profile.json").exists(), r.stderr  # the same runs, unmarked
    (tmp_path / "profile.json").unlink()
    (runs[1].parent / "FAILED").write_text("stopped\n")
    r = run("noise_profile", tmp_path / "runs", "-o", tmp_path / "profile.json", "--same-code")
    assert r.returncode == 2 and "its run failed" in r.stderr and not (tmp_path / "profile.json").exists()


def test_runs_linked_into_a_folder_of_baselines_are_found(make_json, tmp_path):
    """Path.rglob does not follow symbolic links: a run linked into the --compare folder was silently left out."""
    elsewhere = make_json(subdir="elsewhere/run", only=ONLY, seed=1)
    make_json(subdir="bases/a", only=ONLY, seed=2)
    os.symlink(elsewhere.parent, tmp_path / "bases" / "linked")
    os.symlink(tmp_path / "bases", tmp_path / "bases" / "a" / "loop")  # a loop is walked once
    r = run("compare", tmp_path / "bases", make_json("cont.json", only=ONLY, seed=3))
    assert r.returncode == 0, r.stderr
    assert "noise from 2 baseline run(s)" in r.stdout and "linked/benchmarks.json" in r.stdout


@pytest.mark.parametrize("profile", [
    {"gpu_name": "NVIDIA H200", "metric": "real_time", "runs": [1, 2], "between_gpu_sigma": {}},
    {"gpu_name": "NVIDIA H200", "metric": "real_time", "runs": [{"gpu_uuid": ["a"]}], "between_gpu_sigma": {}},
    {"gpu_name": "NVIDIA H200", "metric": "real_time", "runs": [], "between_gpu_sigma": {"x": 10 ** 400}},
])
def test_malformed_profile_is_one_line(profile, make_json, tmp_path):
    """compare --profile with a malformed file was a traceback (exit 1)."""
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(profile))
    doc = synth.suite_json(only=ONLY)
    doc["context"]["gpu_uuid"] = "GPU-a"
    base = tmp_path / "base.json"
    base.write_text(json.dumps(doc))
    doc["context"]["gpu_uuid"] = "GPU-b"
    cont = tmp_path / "cont.json"
    cont.write_text(json.dumps(doc))
    r = run("compare", "--profile", path, base, cont)
    assert r.returncode == 2, r.stdout + r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith(f"compare: error: {path}: ")
