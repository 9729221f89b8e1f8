"""The between-GPU noise profile (gpubench/regress/noise.py profile_spread(), gpubench/regress/noise_profile.py) and its use by
compare.py: sigma and range on constructed suites, the script's input checks, compare using it for baselines of
the contender's model, and the committed profile on the final runs: in sample (it holds them) and out of
sample (a profile from the other GPUs only)."""
import functools
import json
import math
from pathlib import Path

import pytest

from gpubench import families
from gpubench.regress import noise, profile
from conftest import SKIP_SPLIT_BATCH, call, committed, run, run_file
from test_bad_input import BAD
from test_compare import QUIET, SLOWED, cells, listed, with_context
from test_noise import reps, suite
from test_results import FINAL as FINAL_RUNS, HELD_OUT, NEW as NEW_RUNS, SAME_CODE

ROOT = Path(__file__).resolve().parents[2]
H200 = "NVIDIA H200"
# The final benchmark code's runs (d2cea90 and 9ef3d41): twelve H200s (different gpu_uuid) on twelve machines.
FINAL = tuple(run_file(ROOT / "results" / "h200" / r) for r in FINAL_RUNS)
COMMITTED = ROOT / "results" / "h200" / "noise_profile.json"
# The profile committed before 2026-12-03 (25 runs on 24 GPUs of 2cd99ce-9ef3d41): the figures of the final runs
# below were measured with it and the defaults of then (OLD_DEFAULTS).
LEGACY = ROOT / "results" / "h200" / "noise_profile_legacy.json"
OLD_DEFAULTS = ("--profile", LEGACY, "--measured-floor", "0.05", "--sm-placement", "off", "--gpu-pair-factor",
                "1") + SKIP_SPLIT_BATCH
HBM64 = "coalescing/read/hbm/stride:64"


def gpu_suite(uuid, medians, name=H200, throttled=None):
    """A suite of quiet benchmarks {name: median seconds} on the GPU `uuid`."""
    s = suite({n: {"real_time": reps(m, 0.002), **({"throttled": throttled[n]} if throttled and n in throttled else {})}
               for n, m in medians.items()}, {"gpu_name": name, "gpu_uuid": uuid, "git_commit": "a" * 40})
    s.path = f"{uuid}.json"
    return s


# --- profile() ------------------------------------------------------------------------------------------------

def test_profile_is_the_spread_of_one_median_per_gpu():
    runs = [gpu_suite("GPU-1", {"a": 1.0e-3, "b": 2e-3}), gpu_suite("GPU-2", {"a": 1.05e-3, "b": 2e-3}),
            gpu_suite("GPU-3", {"a": 1.1e-3, "b": 2e-3, "only_here": 1e-3})]
    sigma, spread = noise.profile_spread(runs)
    assert sigma["a"] == pytest.approx(0.05 / 1.05) and sigma["b"] == pytest.approx(0.0)  # sample sigma / median
    assert spread["a"] == pytest.approx(0.1) and spread["b"] == 0.0  # max / min - 1
    assert "only_here" not in sigma and "only_here" not in spread  # one GPU cannot tell a spread between GPUs
    assert noise.profile(runs) == sigma


def commit(s, sha):
    s.context["git_commit"] = sha
    return s


def test_commits_pool_within_unless_same_code():
    """Two commits, each on two GPUs, the second 2x slower (its code changed): pooled within commits the
    sigma is the GPUs' spread alone; --same-code takes the 2x for noise. The range is the widest in a commit."""
    runs = [commit(gpu_suite("GPU-1", {"a": 1.0e-3}), "1" * 40), commit(gpu_suite("GPU-2", {"a": 1.1e-3}), "1" * 40),
            commit(gpu_suite("GPU-3", {"a": 2.0e-3}), "2" * 40), commit(gpu_suite("GPU-4", {"a": 2.0e-3}), "2" * 40)]
    sigma, spread = noise.profile_spread(runs)
    # commit 1: relative 1/1.05, 1.1/1.05 about their mean: 2 x (0.05/1.05)^2 over 1 dof; commit 2: 0 over 1 dof
    assert sigma["a"] == pytest.approx(math.sqrt(2 * (0.05 / 1.05) ** 2 / 2)) and spread["a"] == pytest.approx(0.1)
    assert noise.profile(runs, same_code=True)["a"] > 0.3
    with pytest.raises(ValueError, match="two GPUs of one commit"):
        noise.profile([commit(gpu_suite("GPU-1", {"a": 1e-3}), "1" * 40), commit(gpu_suite("GPU-2", {"a": 1e-3}), "2" * 40)])


def test_one_bench_code_is_one_commit():
    """Runs that carry one bench_code (what gpubench is built from) are one code whatever their git_commit: two
    commits of one GPU each pool as two GPUs; another bench_code is another group."""
    runs = [commit(gpu_suite("GPU-1", {"a": 1.0e-3}), "1" * 40), commit(gpu_suite("GPU-2", {"a": 1.1e-3}), "2" * 40)]
    with pytest.raises(ValueError, match="two GPUs of one commit"):
        noise.profile(runs)
    for s in runs:
        s.context["bench_code"] = "f00d"
    assert noise.profile(runs)["a"] == pytest.approx(math.sqrt(2) * 0.05 / 1.05)
    runs[1].context["bench_code"] = "beef"
    with pytest.raises(ValueError, match="two GPUs of one commit"):
        noise.profile(runs)


def test_same_code_merges_only_runs_without_bench_code():
    """--same-code is the user's word for runs that lack a bench_code: two such commits (1.0 and 1.1 ms) become
    one group, while two GPUs of a bench_code at 2.0 ms (another code: twice as slow) stay a group of their own,
    so their level is not taken for spread between GPUs."""
    runs = [commit(gpu_suite("GPU-1", {"a": 1.0e-3}), "1" * 40), commit(gpu_suite("GPU-2", {"a": 1.1e-3}), "2" * 40),
            commit(gpu_suite("GPU-3", {"a": 2.0e-3}), "3" * 40), commit(gpu_suite("GPU-4", {"a": 2.0e-3}), "3" * 40)]
    for s in runs[2:]:
        s.context["bench_code"] = "f00d"
    sigma, spread = noise.profile_spread(runs, same_code=True)
    # legacy group: 2 x (0.05/1.05)^2 over 1 dof; bench_code group: 0 over 1 dof
    assert sigma["a"] == pytest.approx(math.sqrt(2 * (0.05 / 1.05) ** 2 / 2)) and spread["a"] == pytest.approx(0.1)


def test_one_code_merges_the_runs_with_a_bench_code():
    """--one-code is the user's word that runs of different bench_codes time alike: GPU-3 (bench_code f00d,
    2.0 ms) and GPU-4 (beef, 2.2 ms) become one group of two GPUs, which alone they are not; with --same-code too,
    the runs without a bench_code (1.0 and 1.1 ms) are a second group, not pooled with the first."""
    runs = [commit(gpu_suite("GPU-1", {"a": 1.0e-3}), "1" * 40), commit(gpu_suite("GPU-2", {"a": 1.1e-3}), "2" * 40),
            gpu_suite("GPU-3", {"a": 2.0e-3}), gpu_suite("GPU-4", {"a": 2.2e-3})]
    runs[2].context["bench_code"], runs[3].context["bench_code"] = "f00d", "beef"
    with pytest.raises(ValueError, match="two GPUs of one commit"):
        noise.profile(runs)
    sigma, spread = noise.profile_spread(runs[2:], same_code=profile.Codes(merged=("",)))
    assert sigma["a"] == pytest.approx(math.sqrt(2) * 0.1 / 2.1) and spread["a"] == pytest.approx(0.1)
    sigma, spread = noise.profile_spread(runs, same_code=profile.Codes(unrecorded=True, merged=("f0", "beef")))
    # two groups of two GPUs, each (0.05/1.05)^2 x 2 over 1 dof: a third group of all four would be far wider
    assert sigma["a"] == pytest.approx(math.sqrt(2) * 0.05 / 1.05) and spread["a"] == pytest.approx(0.1)
    doc = profile.profile_document(runs, ["w", "x", "y", "z"], same_code=profile.Codes(True, ("",)))
    assert "(--same-code)" in doc["derived"] and "(--one-code)" in doc["derived"]


def test_one_code_on_the_command_line(tmp_path):
    """noise_profile --one-code CODES: the runs of those bench_codes (named by their leading digits) are one group:
    GPU-3 and GPU-4 alone are two codes of one GPU each, too few; named together, two GPUs."""
    paths = []
    for i, (uuid, code) in enumerate((("GPU-3", "f00d"), ("GPU-4", "beef"))):
        doc = __import__("synth").suite_json(seed=i)
        doc["context"].update(gpu_uuid=uuid, bench_code=code)
        paths.append(tmp_path / f"{uuid}.json")
        paths[-1].write_text(json.dumps(doc))
    r = call("noise_profile", *paths, "-o", tmp_path / "p.json")
    assert r.returncode == 2 and "two GPUs of one commit" in r.stderr
    r = call("noise_profile", *paths, "-o", tmp_path / "p.json", "--one-code", "f0,be")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "p.json").read_text())
    assert doc["gpus"] == 2 and "the runs of bench_code f0, be taken as one code (--one-code)" in doc["derived"]
    # a code no run has is a typo, not a group
    r = call("noise_profile", *paths, "-o", tmp_path / "q.json", "--one-code", "f0,cafe")
    assert r.returncode == 2 and r.stderr == "noise_profile: error: --one-code cafe: no run has a bench_code that starts with it\n"
    assert not (tmp_path / "q.json").exists()


def test_runs_on_one_gpu_are_one_gpu():
    """Two runs of GPU-1 (1.0 and 1.2 ms) are one GPU at their median 1.1 ms: against GPU-2 at 1.1 ms, no spread;
    the spread between them is not between GPUs."""
    runs = [gpu_suite("GPU-1", {"a": 1.0e-3}), gpu_suite("GPU-1", {"a": 1.2e-3}), gpu_suite("GPU-2", {"a": 1.1e-3})]
    assert noise.profile(runs)["a"] == pytest.approx(0.0)
    assert noise.profile_document(runs, ["x", "y", "z"])["gpus"] == 2


def test_profile_drops_throttled_samples():
    slow = [2e-3] * 3 + [1e-3, 1e-3]  # throttled 2 ms, unthrottled as on GPU-1
    t = gpu_suite("GPU-2", {"a": 1e-3}, throttled={"a": [1, 1, 1, 0, 0]})
    t.by_name["a"].samples["real_time"] = slow
    assert noise.profile([gpu_suite("GPU-1", {"a": 1e-3}), t])["a"] == pytest.approx(0.0)


@pytest.mark.parametrize("runs, message", [
    ([gpu_suite("GPU-1", {"a": 1e-3}), gpu_suite("GPU-2", {"a": 1e-3}, name="NVIDIA H100")], "different GPU models"),
    ([gpu_suite("GPU-1", {"a": 1e-3}), gpu_suite("GPU-1", {"a": 1e-3})], "two GPUs of one commit"),
    ([gpu_suite("GPU-1", {"a": 1e-3}), gpu_suite("", {"a": 1e-3})], "no gpu_uuid")])
def test_profile_refuses(runs, message):
    with pytest.raises(ValueError, match=message):
        noise.profile(runs)


@pytest.mark.parametrize("gpu_name, expected", [("NVIDIA H200", "h200"), ("NVIDIA H100 80GB HBM3", "h100-80gb-hbm3"),
                                                ("Tesla V100-SXM2-16GB", "tesla-v100-sxm2-16gb")])
def test_slug_as_run_all_makes_it(gpu_name, expected):
    assert noise.slug(gpu_name) == expected


@pytest.mark.parametrize("doc, message", [([], "JSON object"), ({"gpu_name": H200}, "'metric'"),
                                          ({"gpu_name": H200, "metric": "real_time", "runs": [],
                                            "between_gpu_sigma": {"a": -0.1}}, ">= 0"),
                                          ({"gpu_name": H200, "metric": "real_time", "runs": [],
                                            "between_gpu_sigma": {"a": "x"}}, ">= 0")])
def test_profile_sigmas_checks_the_file(doc, message):
    with pytest.raises(ValueError, match=message):
        noise.profile_sigmas(doc)


def test_profile_ranges_are_optional_but_checked():
    doc = {"gpu_name": H200, "metric": "real_time", "runs": [], "between_gpu_sigma": {"a": 0.01}}
    assert noise.profile_ranges(doc) == {}  # a profile from before the range
    assert noise.profile_ranges({**doc, "between_gpu_range": {"a": 0.05}}) == {"a": 0.05}
    for bad in ({"a": -1}, {"a": float("inf")}, [0.1]):
        with pytest.raises(ValueError, match="between_gpu_range"):
            noise.profile_ranges({**doc, "between_gpu_range": bad})


# --- noise_profile.py ---------------------------------------------------------------------------------------------

def test_script_writes_the_profile(make_json, tmp_path):
    a = with_context(make_json(subdir="runs/a", seed=0, noise=QUIET), gpu_uuid="GPU-1", git_commit="a" * 40)
    b = with_context(make_json(subdir="runs/b", seed=1, noise=QUIET, slow={HBM64: 1.1}), gpu_uuid="GPU-2",
                     git_commit="a" * 40)
    out = tmp_path / "profile.json"
    r = run("noise_profile", tmp_path / "runs", "-o", out)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["gpu_name"] == H200 and doc["metric"] == "real_time" and doc["gpus"] == 2
    assert [x["path"] for x in doc["runs"]] == [str(a), str(b)]
    assert [x["gpu_uuid"] for x in doc["runs"]] == ["GPU-1", "GPU-2"] and doc["runs"][0]["git_commit"] == "a" * 40
    assert doc["between_gpu_sigma"][HBM64] > 0.05 > max(v for n, v in doc["between_gpu_sigma"].items() if n != HBM64)
    assert noise.profile_sigmas(doc) == doc["between_gpu_sigma"]
    assert doc["between_gpu_range"][HBM64] == pytest.approx(0.1, abs=0.01) and noise.profile_ranges(doc) == doc["between_gpu_range"]
    # of two commits, one GPU each: no spread within a commit, unless --same-code says they are one code
    with_context(b, git_commit="b" * 40)
    assert call("noise_profile", tmp_path / "runs", "-o", out).returncode == 2
    r = call("noise_profile", tmp_path / "runs", "-o", out, "--same-code")
    assert r.returncode == 0 and "--same-code" in json.loads(out.read_text())["derived"]


def one_line_exit_2(r, *words):
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and all(w in lines[0] for w in words), r.stderr
    return lines[0]


def test_script_bad_input(make_json, tmp_path, write_json):
    one = with_context(make_json("a.json"), gpu_uuid="GPU-1")
    other = with_context(make_json("b.json", gpu_name="NVIDIA H100"), gpu_uuid="GPU-2")
    out = tmp_path / "p.json"
    one_line_exit_2(call("noise_profile", one, other, "-o", out), "noise_profile: error:", "different GPU models")
    one_line_exit_2(call("noise_profile", one, make_json("c.json"), "-o", out), "no gpu_uuid")
    one_line_exit_2(call("noise_profile", one, "-o", out), "at least two")
    one_line_exit_2(call("noise_profile", one, other, "-o", one), "refusing to write", "an input")
    one_line_exit_2(call("noise_profile", tmp_path / "nothing_here", "-o", out), "no such file")
    for content, reason in BAD.values():
        one_line_exit_2(call("noise_profile", one, write_json(content), "-o", out), reason)
    assert not out.exists()
    r = call("noise_profile", one)
    assert r.returncode == 2 and "-o" in r.stderr


def test_legacy_profile_is_what_the_script_makes(tmp_path, committed_loads):
    """results/h200/noise_profile_legacy.json is derived from the 25 same-code runs (24 GPUs), nothing else."""
    out = tmp_path / "p.json"
    paths = [p.relative_to(ROOT) for p in SAME_CODE]
    r = call("noise_profile", *paths, "-o", out, "--same-code")  # from the repository root, as the paths are
    assert r.returncode == 0, r.stderr
    assert_made_as_committed(out, LEGACY)


def assert_made_as_committed(made_path, committed_path):
    """The profile made equals the committed file but for the working directory its "derived" line names."""
    made, committed = json.loads(made_path.read_text()), json.loads(committed_path.read_text())
    assert made.pop("derived").split(" from ")[1:] == committed.pop("derived").split(" from ")[1:]
    assert made == committed


def test_committed_profile_is_what_the_script_makes(tmp_path, committed_loads):
    """results/h200/noise_profile.json is what the command docs/regression-tracking.md gives makes of the 25 legacy
    runs and every run committed from 2026-12-02 to 20261203T164733Z (49 GPUs), nothing else."""
    out = tmp_path / "p.json"
    runs = [p.relative_to(ROOT) for p in sorted((ROOT / "results" / "h200").glob("2026120[23]T*"))
            if p.name <= "20261203T164733Z"]
    r = call("noise_profile", "--same-code", "--one-code", "ed174294,56457c2c,a6d5f151",
             *[p.relative_to(ROOT) for p in SAME_CODE], *runs, "-o", out)
    assert r.returncode == 0, r.stderr
    assert_made_as_committed(out, COMMITTED)
    assert json.loads(COMMITTED.read_text())["gpus"] == 49


# --- compare.py with a profile --------------------------------------------------------------------------------

def profile_file(tmp_path, sigmas, gpu_name=H200, name="profile.json"):
    p = tmp_path / name
    p.write_text(json.dumps({"gpu_name": gpu_name, "metric": "real_time",
                             "runs": [{"path": "x", "gpu_uuid": "GPU-8"}, {"path": "y", "gpu_uuid": "GPU-9"}],
                             "between_gpu_sigma": sigmas}))
    return p


@pytest.fixture
def pair(make_json):
    """A baseline on GPU-1 and contenders with HBM64 10 % slower, on GPU-2 (same model) and on GPU-1."""
    base = with_context(make_json("base.json", noise=QUIET), gpu_uuid="GPU-1")
    other = with_context(make_json("other.json", seed=1, noise=QUIET, slow={HBM64: 1.1}), gpu_uuid="GPU-2")
    same = with_context(make_json("same.json", seed=1, noise=QUIET, slow={HBM64: 1.1}), gpu_uuid="GPU-1")
    return base, other, same


def test_profile_lifts_the_threshold_for_another_gpu_of_the_model(pair, tmp_path):
    base, other, same = pair
    prof = profile_file(tmp_path, {HBM64: 0.05})
    r = call("compare", base, other, "--profile", prof)
    assert r.returncode == 0, r.stdout
    assert cells(r.stdout, HBM64)[6:8] == ["21.2%", "same"]  # max(5 %, 3 x sqrt(2) x 5 %): two GPUs' draws
    assert f"noise profile: {prof} (NVIDIA H200, between-GPU sigma of 1 benchmarks from 2 GPUs)" in r.stdout
    assert "between two GPUs: the profile's sigma x 1.41 (--gpu-pair-factor)" in r.stdout
    assert "noise from 1 baseline run(s) and the profile" in r.stdout
    # the same GPU, another process: the profile applies too
    r = call("compare", base, same, "--profile", prof)
    assert r.returncode == 0 and cells(r.stdout, HBM64)[6:8] == ["15.0%", "same"]
    # --no-profile: the old verdict
    r = call("compare", base, other, "--no-profile")
    assert r.returncode == 1 and listed(r.stdout, "Slower") == [HBM64] and "noise profile: off" in r.stdout


def test_benchmarks_missing_from_the_profile_keep_the_old_rule(pair, tmp_path):
    base, other, _ = pair
    r = call("compare", base, other, "--profile", profile_file(tmp_path, {"ceiling/fma": 0.5}))
    assert r.returncode == 1 and cells(r.stdout, HBM64)[6:8] == [f"{noise.FLOOR:.1%}", "slower"]


def test_files_without_gpu_uuid_do_not_use_it(make_json, tmp_path):
    """Runs from before gpu_uuid cannot say whether they ran on one GPU: no profile."""
    r = call("compare", make_json("a.json", noise=QUIET), make_json("b.json", seed=1, noise=QUIET, slow={HBM64: 1.1}),
            "--profile", profile_file(tmp_path, {HBM64: 0.05}))
    assert r.returncode == 1 and "noise profile: not used" in r.stdout


def test_the_committed_profile_is_found_by_the_gpu_name(pair):
    base, other, _ = pair
    r = call("compare", base, other, "--no-process-profile")
    doc = json.loads(COMMITTED.read_text())
    assert f"noise profile: {COMMITTED} (NVIDIA H200" in r.stdout and f"from {doc['gpus']} GPUs" in r.stdout
    sigma, spread = doc["between_gpu_sigma"][HBM64], doc["between_gpu_range"][HBM64]
    # two GPUs: the profile's sigma x sqrt(2) (a difference of two GPUs' draws)
    assert cells(r.stdout, HBM64)[6] == f"{max(noise.FLOOR, noise.K_SIGMA * noise.GPU_PAIR * sigma, spread):.1%}"


def test_no_profile_for_the_model_is_said(make_json):
    base = with_context(make_json("a.json", gpu_name="NVIDIA B300", noise=QUIET), gpu_uuid="GPU-1")
    r = call("compare", base, with_context(make_json("b.json", seed=1, gpu_name="NVIDIA B300", noise=QUIET),
                                          gpu_uuid="GPU-2"))
    assert r.returncode == 0 and f"noise profile: none at {ROOT / 'results' / 'b300' / 'noise_profile.json'}" in r.stdout


def test_profile_of_another_model_is_unusable(pair, tmp_path):
    base, other, same = pair
    h100 = profile_file(tmp_path, {HBM64: 0.05}, gpu_name="NVIDIA H100")
    for cont in (other, same):  # given, it is checked even where the comparison does not need it
        one_line_exit_2(call("compare", base, cont, "--profile", h100), "compare: error:", "'NVIDIA H100'", "'NVIDIA H200'")


@pytest.mark.parametrize("content, reason", [("{not json", "not JSON"), ("[1, 2]", "not a noise profile"),
                                             (json.dumps({"gpu_name": H200, "metric": "real_time", "runs": [],
                                                          "between_gpu_sigma": {HBM64: float("nan")}}), "not a number")])
def test_malformed_profile_is_unusable(pair, tmp_path, content, reason):
    base, other, same = pair
    bad = tmp_path / "bad_profile.json"
    bad.write_text(content)
    for cont in (other, same):  # a bad file given is bad input whether or not this comparison needs it
        one_line_exit_2(call("compare", base, cont, "--profile", bad), f"compare: error: {bad}", reason)
    one_line_exit_2(call("compare", base, other, "--profile", tmp_path / "absent.json"), "no such file")
    r = call("compare", base, other, "--profile", bad, "--no-profile")
    assert r.returncode == 2 and "not allowed with" in r.stderr


# --- the final runs ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def final():
    return [committed(p) for p in FINAL]


@functools.lru_cache(maxsize=1)
def same_code_runs():
    return tuple(committed(p) for p in SAME_CODE)


def profile_without(uuids):
    """The profile made as the committed one is (SAME_CODE, --same-code), but without the runs of the GPUs
    `uuids`: what compare would know of those GPUs had they not been measured before."""
    runs = same_code_runs()
    rest = [(p, s) for p, s in zip(SAME_CODE, runs) if s.context["gpu_uuid"] not in uuids]
    return noise.profile_document([s for _, s in rest], [p for p, _ in rest], same_code=True)


@pytest.fixture(scope="module")
def new_and_before(final):
    """The six NEW runs and the profile committed before them (the 19 runs on 18 GPUs without them)."""
    new = [s for s in final if Path(s.path).parent.name in NEW_RUNS]
    assert len(new) == 6 and len({s.context["gpu_uuid"] for s in final}) == 12
    return new, profile_without({s.context["gpu_uuid"] for s in new})


def test_final_pairs_are_clean_with_the_committed_profile(final, committed_loads):
    """As a user runs compare: every ordered pair of the six runs of 9ef3d41 (one commit, six machines), and
    each of them against a run of d2cea90 (the same benchmark code; compare says "different code", the commits
    differ) both ways: exit 0, nothing slower or faster. In sample: the committed profile holds these GPUs and
    its range is the largest change seen between two of them (the next tests measure GPUs it has not seen).
    Without a profile some pair fails."""
    d2 = [c.path for c in final if Path(c.path).parent.name not in NEW_RUNS]
    new = [c.path for c in final if Path(c.path).parent.name in NEW_RUNS]
    pairs = [(a, b, "same code") for a in new for b in new if a != b]
    pairs += [(a, b, "different code") for x, y in zip(d2, new) for a, b in ((x, y), (y, x))]
    for a, b, code in pairs:
        r = call("compare", a, b)
        assert r.returncode == 0 and listed(r.stdout, "Slower") == listed(r.stdout, "Faster") == [], (a, b)
        assert f"noise profile: {COMMITTED}" in r.stdout and f"case: same GPU model; {code}" in r.stdout
    assert 1 in {call("compare", d2[0], b, "--no-profile").returncode for b in new}


KW = dict(host_bound=families.host_bound, unjudged=families.unjudged)  # as compare.py between GPUs


def flagged(configs, profile_doc=None, **kw):
    """(comparisons with something slower or faster, benchmarks so flagged) over configs (noise.configurations),
    the profile applied as compare.py applies it (its board's part when every run names the same board)."""
    per = [sum(r.verdict in (noise.SLOWER, noise.FASTER)
               for r in noise.compare_suites(b, c, **noise._with_profile(kw, profile_doc, b, c)))
           for b, c in configs]
    return sum(n > 0 for n in per), sum(per)


def pinned(configs, profile_doc):
    """(comparisons flagged, flags, planted 10 % slowdowns caught of 2000): seed 1, 100 trials of 20 random
    benchmarks >= 100 µs, the configurations in turn."""
    rate, hit, total = noise.detection_rate([], configs, 0.10, planted=20, trials=100, seed=1,
                                            profile_doc=profile_doc, **KW)
    assert total == 2000
    return flagged(configs, profile_doc, **KW) + (hit,)


# Measured on the twelve final runs (docs/regression-tracking.md, "Measured"), pinned here:
# - in sample: the committed profile (24 GPUs, these twelve among them), every ordered pair (132);
IN_SAMPLE = (0, 0, 1918)
# - the six NEW GPUs against the profile committed before they were measured (18 GPUs): with the six d2cea90
#   runs as baselines (the recipe of the README and the docs), and with one d2cea90 run as the baseline (36 ordered pairs);
NEW_SIX_BASELINES, NEW_ONE_BASELINE = (1, 3, 1931), (17, 54, 1944)
# - leave one GPU out: each of the twelve against the other eleven, with a profile without its GPU (23 GPUs);
LEAVE_ONE_OUT = (4, 14, 1917)
# - the three HELD_OUT GPUs, which the committed profile has never seen, with the twelve final runs as baselines,
#   with one final run as the baseline (36 ordered pairs), and between themselves (6 ordered pairs);
HELD_TWELVE_BASELINES, HELD_ONE_BASELINE, HELD_PAIRS = (1, 1, 1919), (11, 11, 1931), (3, 3, 1920)
# - no profile, every ordered pair.
NONE = (115, 568, 1892)


@pytest.fixture(scope="module")
def committed_doc():
    return json.loads(LEGACY.read_text())


_rates = {}


@pytest.fixture
def shared_rates(monkeypatch):
    """noise.detection_rate remembered by what it computes (the comparisons, by their runs' paths, and every other
    argument): the in-sample planted trials below and the detection table's +10 % cell over every benchmark are the
    same 2000 trials, computed once."""
    import inspect
    real = noise.detection_rate
    sig = inspect.signature(real)

    def remembered(*args, **kw):
        bound = sig.bind(*args, **kw)
        bound.apply_defaults()
        a = dict(bound.arguments)
        configs = tuple((tuple(b.path for b in bases), cont.path) for bases, cont in noise.configurations(a.pop("runs"), a.pop("mode")))
        doc = a.pop("profile_doc")
        key = (configs, id(doc), tuple(sorted(a.pop("kw").items())), tuple(sorted(a.items())))
        if key not in _rates:
            _rates[key] = (doc, real(*args, **kw))  # the doc kept, so that its id stays its own
        return _rates[key][1]

    from gpubench.regress import detection
    monkeypatch.setattr(noise, "detection_rate", remembered)
    monkeypatch.setattr(detection, "detection_rate", remembered)  # detection_table calls it from its own module


@pytest.mark.usefixtures("rules_before_split_batch")
def test_planted_ten_percent_with_the_committed_profile_reaches_95_percent(final, committed_doc, shared_rates):
    configs = noise.configurations(final, "pairs")
    assert pinned(configs, committed_doc) == IN_SAMPLE and IN_SAMPLE[2] >= 1900


# docs/regression-tracking.md: detection power by slowdown size and launch time, the twelve final runs, one baseline (every ordered pair),
# the committed profile.
DETECTION_TABLE = """| launch time | benchmarks | +2% | +5% | +10% | +20% |
|---|---|---|---|---|---|
| 100 µs-1 ms | 196 | 1.7% | 47.5% | 93.6% | 96.5% |
| 1-10 ms | 306 | 2.5% | 49.6% | 97.5% | 99.0% |
| >= 10 ms | 47 | 2.3% | 48.8% | 96.0% | 99.1% |
| all >= 100 µs | 549 | 2.2% | 48.2% | 95.9% | 97.7% |"""


@pytest.mark.usefixtures("rules_before_split_batch")
def test_detection_table_as_the_docs_give_it(final, committed_doc, shared_rates):
    table = noise.detection_table(final, "pairs", trials=100, seed=1, profile_doc=committed_doc, **KW)
    assert table == DETECTION_TABLE
    assert DETECTION_TABLE in (ROOT / "docs" / "regression-tracking.md").read_text(), "the docs publish another table"


@pytest.mark.usefixtures("rules_before_split_batch")
def test_new_gpus_against_the_profile_from_before_them(final, new_and_before):
    """Out of sample: GPUs neither the profile nor the baselines had seen. With six baselines one of the six
    flags (three pinned copies of 256 MiB-1 GiB through its host, 5-16 %); with one baseline about half."""
    new, before = new_and_before
    d2 = [s for s in final if s not in new]
    assert pinned([(d2, c) for c in new], before) == NEW_SIX_BASELINES
    assert pinned([([b], c) for b in d2 for c in new], before) == NEW_ONE_BASELINE


@pytest.mark.usefixtures("rules_before_split_batch")
def test_leave_one_gpu_out(final):
    """Each final run against the eleven others, judged with a profile made without its GPU: the GPUs that
    flag are each the only one of the 24 with that behaviour (a host's chase, a host's pinned copies, one
    GPU's cache edges)."""
    profiles = {s.context["gpu_uuid"]: profile_without({s.context["gpu_uuid"]}) for s in final}
    configs = noise.configurations(final, "leave-one-out")
    assert pinned(configs, lambda bases, cont: profiles[cont.context["gpu_uuid"]]) == LEAVE_ONE_OUT


@pytest.mark.usefixtures("rules_before_split_batch")
def test_held_out_gpus_against_the_committed_profile(final):
    """The committed profile on three GPUs it has never seen (one of board -000, two of -001): with the twelve
    final runs as baselines two of three flag nothing, the third one benchmark (1 GiB pinned host reads through
    the SMs, 6.5 % slower: its host, like two of the 24 profile GPUs' hosts, is 6-7 % slow there); with one
    baseline, or between the three, that benchmark is all that flags, on the same GPU."""
    held = [committed(run_file(ROOT / "results" / "h200" / r)) for r in HELD_OUT]
    assert not {s.context["gpu_uuid"] for s in held} & {r["gpu_uuid"] for r in json.loads(LEGACY.read_text())["runs"]}
    doc = json.loads(LEGACY.read_text())
    assert pinned([(final, c) for c in held], doc) == HELD_TWELVE_BASELINES
    assert pinned([([b], c) for b in final for c in held], doc) == HELD_ONE_BASELINE
    assert pinned(noise.configurations(held, "pairs"), doc) == HELD_PAIRS
    assert {r.name for b, c in noise.configurations(held, "pairs")
            for r in noise.compare_suites(b, c, **noise._with_profile(KW, doc, b, c))
            if r.verdict in (noise.SLOWER, noise.FASTER)} == {"link/h2d/pinned/sm/bytes:1073741824"}


def test_held_out_gpus_with_todays_defaults(final, committed_loads):
    """The same three GPUs, still in no committed profile, judged as compare judges today (the 49-GPU profile,
    the rules and terms since 2026-12-03): with the twelve final runs as baselines the same one flag; with one
    baseline 9 flags in 9 of 36 comparisons (11 in 11 before); between themselves 2 in 2 (3 in 3)."""
    held = [run_file(ROOT / "results" / "h200" / r) for r in HELD_OUT]
    finals = [s.path for s in final]
    assert not {committed(h).context["gpu_uuid"] for h in held} & {
        r["gpu_uuid"] for r in json.loads(COMMITTED.read_text())["runs"]}

    def flags(*runs):
        out = call("compare", *runs).stdout
        return listed(out, "Slower") + listed(out, "Faster")

    assert [flags(*finals, h) for h in held] == [[], ["link/h2d/pinned/sm/bytes:1073741824"], []]
    one = [flags(b, h) for h in held for b in finals]
    assert (sum(map(bool, one)), sum(map(len, one))) == (9, 9)
    between = [flags(a, b) for a in held for b in held if a != b]
    assert (sum(map(bool, between)), sum(map(len, between))) == (2, 2)


@pytest.mark.usefixtures("rules_before_split_batch")
def test_without_profile(final):
    assert pinned(noise.configurations(final, "pairs"), None) == NONE


def test_board_part_number_picks_the_boards_profile(final, committed_loads):
    """Both runs of board 692-2G520-0282-000: that board's part of the profile (3 GPUs); a run of each board:
    the whole model's, and the header names both boards."""
    same = [s for s in final if s.context[noise.BOARD] == final[0].context[noise.BOARD]]
    other = next(s for s in final if s.context[noise.BOARD] != final[0].context[noise.BOARD])
    r = call("compare", same[0].path, same[1].path, *OLD_DEFAULTS)
    assert r.returncode == 0 and f"board {final[0].context[noise.BOARD]}: between-GPU sigma" in r.stdout
    assert "from 3 GPUs of that board" in r.stdout and "boards:" not in r.stdout
    r = call("compare", final[0].path, other.path, *OLD_DEFAULTS)
    assert r.returncode == 0 and "boards: 692-2G520-0282-000, 692-2G520-0282-001" in r.stdout
    assert "from 24 GPUs)" in r.stdout
    doc = json.loads(LEGACY.read_text())
    assert noise.profile_for_runs(doc, [final[0]], other)[2] is None


@pytest.mark.parametrize("by_board, message", [([1], "by_board is not an object"),
                                                ({"b": {"between_gpu_sigma": {}}}, "lacks its GPU count")])
def test_malformed_board_profile_is_refused(by_board, message):
    doc = {"gpu_name": H200, "metric": "real_time", "runs": [], "between_gpu_sigma": {}, "by_board": by_board}
    with pytest.raises(ValueError, match=message):
        noise.profile_for_board(doc, "b")


def test_profile_never_lowers_a_threshold(final):
    doc = json.loads(LEGACY.read_text())
    a, b = final[0], final[1]
    plain = {r.name: r.threshold for r in noise.compare_suites([a], b)}
    lifted = {r.name: r.threshold for r in noise.compare_suites([a], b, profile=noise.profile_sigmas(doc),
                                                                 profile_range=noise.profile_ranges(doc))}
    assert plain.keys() == lifted.keys() and all(lifted[n] >= plain[n] for n in plain)
    assert sum(lifted[n] > plain[n] for n in plain) > 100
    assert not any(math.isnan(v) for v in lifted.values())


# --- the same-GPU profile (issue 27) -------------------------------------------------------------------------------

def test_same_gpu_spread_is_between_the_runs_of_one_gpu():
    """Three runs on GPU-1 (1.00, 1.02, 1.04 ms) and one on GPU-2: the spread is GPU-1's between its runs; a GPU
    with one run has none; no GPU with two runs is refused."""
    runs = [gpu_suite("GPU-1", {"a": m, "b": 2e-3}) for m in (1.00e-3, 1.02e-3, 1.04e-3)]
    runs.append(gpu_suite("GPU-2", {"a": 5e-3, "b": 2e-3}))
    out = profile.same_gpu_spread(runs)
    assert list(out) == ["GPU-1"]
    sigma, spread, n = out["GPU-1"]
    assert n == 3 and spread["a"] == pytest.approx(0.04) and spread["b"] == pytest.approx(0.0)
    assert sigma["a"] == pytest.approx(0.02 / 1.02)  # sample sigma of 1.00, 1.02, 1.04 relative to 1.02
    with pytest.raises(ValueError, match="two runs of one commit"):
        profile.same_gpu_spread([gpu_suite("GPU-1", {"a": 1e-3}), gpu_suite("GPU-2", {"a": 1e-3})])


@pytest.fixture
def same_gpu_runs(make_json, tmp_path):
    """Three runs on GPU-1 (runs/r0..r2) with HBM64 at 1.00, 1.04 and 1.08 and `absent` only in r0 (the last
    benchmark: leaving it out draws the others' samples as without), and their same-GPU profile beside them
    (runs/same_gpu_profile.json)."""
    absent = __import__("synth").benchmarks()[-1][0]
    paths = [with_context(make_json(subdir=f"runs/r{i}", seed=i, noise=QUIET, slow={HBM64: 1 + 0.04 * i},
                                    drop=[absent] if i else []), gpu_uuid="GPU-1", git_commit="a" * 40)
             for i in range(3)]
    prof = tmp_path / "runs" / "same_gpu_profile.json"
    r = call("noise_profile", "--same-gpu", tmp_path / "runs", "-o", prof)
    assert r.returncode == 0, r.stderr
    return paths, prof, absent


def test_same_gpu_profile_replaces_the_floor_where_it_measured(make_json, same_gpu_runs):
    """On GPU-1: a 3 % slowdown, under the 5 % floor, is caught where the profile measured the spread between
    processes to be small; HBM64, 8 % apart between GPU-1's own runs, is same at +6 %, which the floor alone calls
    slower; the benchmark the profile lacks keeps the floor, marked *."""
    (r0, _, _), prof, absent = same_gpu_runs
    doc = json.loads(prof.read_text())
    assert doc["kind"] == "same-gpu" and doc["by_gpu"]["GPU-1"]["runs"] == 3 and absent not in doc["by_gpu"]["GPU-1"]["same_gpu_range"]
    # a quieter contender than the baselines, so that no threshold this small finds it too noisy to judge
    cont = with_context(make_json("cont.json", seed=1, noise=QUIET / 10, slow={HBM64: 1.06, SLOWED: 1.03}),
                        gpu_uuid="GPU-1", git_commit="a" * 40)
    for args in (("--profile", prof), ()):  # given, or found beside the baseline
        r = call("compare", r0, cont, *args)
        assert r.returncode == 1 and listed(r.stdout, "Slower") == [SLOWED], r.stdout
        assert f"noise profile: {prof} (same GPU GPU-1: the spread between 3 runs" in r.stdout
        assert cells(r.stdout, HBM64)[7] == "same" and float(cells(r.stdout, HBM64)[6].rstrip("%")) > 7
        assert cells(r.stdout, absent)[6] == f"{noise.FLOOR:.1%}*" and "*: the floor" in r.stdout
        assert sum(l.split()[-2].endswith("*") for l in r.stdout.splitlines() if l.endswith("  same")) == 1
    r = call("compare", r0, cont, "--no-profile")
    assert r.returncode == 1 and listed(r.stdout, "Slower") == [HBM64]


def test_same_gpu_profile_is_not_used_for_another_gpu(make_json, same_gpu_runs):
    (r0, _, _), prof, _ = same_gpu_runs
    cont = with_context(make_json("cont.json", seed=1, noise=QUIET), gpu_uuid="GPU-2", git_commit="a" * 40)
    r = call("compare", r0, cont, "--profile", prof)
    assert r.returncode == 0 and "same-GPU profile: not used" in r.stdout and "(marked *)" not in r.stdout
    assert f"noise profile: {COMMITTED}" in r.stdout  # the model's profile, as without --profile


def test_same_gpu_profile_bad_input(make_json, same_gpu_runs, tmp_path):
    (r0, r1, _), prof, _ = same_gpu_runs
    one_line_exit_2(call("noise_profile", "--same-gpu", r0, with_context(make_json("x.json"), gpu_uuid="GPU-2"),
                        "-o", tmp_path / "p.json"), "noise_profile: error:", "two runs of one commit")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"kind": "same-gpu", "gpu_name": H200, "metric": "real_time", "runs": [],
                               "by_gpu": {"GPU-1": {"runs": 2, "same_gpu_sigma": {HBM64: -1}, "same_gpu_range": {}}}}))
    one_line_exit_2(call("compare", r0, r1, "--profile", bad), "compare: error:", "same_gpu_sigma", ">= 0")


def test_same_gpu_profile_from_the_one_committed_pair(tmp_path, committed_loads):
    """The only committed runs on one GPU (one gpu_uuid): a profile from two runs works, and compare says it is a
    rough guess. In sample: every change between the two lies within their own spread."""
    pair = [run_file(ROOT / "results" / "h200" / r) for r in ("20261201T005024Z", "20261201T005211Z")]
    out = tmp_path / "same_gpu.json"
    r = call("noise_profile", "--same-gpu", *pair, "-o", out)
    assert r.returncode == 0, r.stderr
    [entry] = json.loads(out.read_text())["by_gpu"].values()
    assert entry["runs"] == 2
    r = call("compare", *pair, "--profile", out)
    assert r.returncode == 0 and "a rough guess from 2 runs" in r.stdout and listed(r.stdout, "Slower") == []


# --- the process spread across GPUs (profile.with_process, compare --process-profile / --measured-floor) ----------

def test_with_process_adds_the_spreads_root_sum_square():
    """Between GPUs = between processes + between boards: where both measured a benchmark, the root-sum-square of
    sigma and of range, and it is among those the measured floor applies to; where one measured it, that one; a
    host-bound benchmark takes the process term only where the between-GPU profile has it, and is never 'both'."""
    host = "link/h2d/pinned/sm/bytes:1073741824"
    sig, rng, both = profile.with_process({"a": 0.03, "b": 0.01, host: 0.02}, {"a": 0.04, "b": 0.02, host: 0.05},
                                          {"a": 0.04, "c": 0.01, host: 0.1, "link/d2h/pinned/sm/bytes:1024": 0.2},
                                          {"a": 0.03, "c": 0.02, host: 0.3, "link/d2h/pinned/sm/bytes:1024": 0.4},
                                          families.host_bound)
    assert sig["a"] == pytest.approx(0.05) and rng["a"] == pytest.approx(0.05)
    assert sig["b"] == 0.01 and rng["b"] == 0.02 and sig["c"] == 0.01 and rng["c"] == 0.02
    assert rng[host] == pytest.approx(math.hypot(0.05, 0.3)) and "link/d2h/pinned/sm/bytes:1024" not in rng
    assert both == {"a"}


def test_process_spread_takes_the_widest_gpu_and_the_code_version():
    doc = {"kind": "same-gpu", "gpu_name": H200, "metric": "real_time", "runs": [], "code_versions": {"a": "2"},
           "by_gpu": {"G1": {"runs": 3, "same_gpu_sigma": {"a/x": 0.01, "b/y": 0.03}, "same_gpu_range": {"a/x": 0.02, "b/y": 0.05}},
                      "G2": {"runs": 3, "same_gpu_sigma": {"a/x": 0.02, "b/y": 0.01}, "same_gpu_range": {"a/x": 0.01, "b/y": 0.02}}}}
    new = gpu_suite("GPU-1", {"a/x": 1e-3}); new.context["a_code_version"] = "2"
    assert profile.process_spread(doc, [new]) == ({"a/x": 0.02, "b/y": 0.03}, {"a/x": 0.02, "b/y": 0.05})
    # a run of family a's older code: a's entries describe other code
    assert profile.process_spread(doc, [gpu_suite("GPU-1", {"a/x": 1e-3})]) == ({"b/y": 0.03}, {"b/y": 0.05})


@pytest.fixture
def cross_gpu(make_json, tmp_path):
    """A baseline on GPU-1, a contender on GPU-2 with HBM64 6 % and SLOWED 3 % slower, a between-GPU profile that
    puts both at sigma 1 %, range 4 %, and a same-GPU profile (GPU-7) whose process range is 3 % on HBM64 and 1 %
    on SLOWED (sigmas 0.5 %)."""
    base = with_context(make_json("base.json", noise=QUIET), gpu_uuid="GPU-1")
    cont = with_context(make_json("cont.json", seed=1, noise=QUIET / 10, slow={HBM64: 1.06, SLOWED: 1.03}),
                        gpu_uuid="GPU-2")
    prof = tmp_path / "between.json"
    prof.write_text(json.dumps({"gpu_name": H200, "metric": "real_time", "runs": [{"path": "x", "gpu_uuid": "GPU-8"}],
                                "between_gpu_sigma": {HBM64: 0.01, SLOWED: 0.01},
                                "between_gpu_range": {HBM64: 0.04, SLOWED: 0.01}}))
    proc = tmp_path / "proc.json"
    proc.write_text(json.dumps({"kind": "same-gpu", "gpu_name": H200, "metric": "real_time", "runs": [],
                                "by_gpu": {"GPU-7": {"runs": 3, "same_gpu_sigma": {HBM64: 0.005, SLOWED: 0.005},
                                                     "same_gpu_range": {HBM64: 0.03, SLOWED: 0.01}}}}))
    return base, cont, prof, proc


def test_process_spread_widens_a_threshold_across_gpus(cross_gpu):
    """Where both measured, the floor is --measured-floor (default 3 %): HBM64's 4 % (+) 3 % = 5 % and, the
    sigma as it is (--gpu-pair-factor 1), SLOWED's 3 x (1 % (+) 0.5 %) = 3.4 %; with the default factor sqrt(2),
    4.7 %. The header and the JSON say which profiles applied; --no-process-profile is the between-GPU profile
    alone (the floor 5 % everywhere)."""
    base, cont, prof, proc = cross_gpu
    r = call("compare", base, cont, "--profile", prof, "--process-profile", proc, "--gpu-pair-factor", "1")
    assert f"process spread: {proc} (the spread between processes of 2 benchmarks on 1 GPU(s))" in r.stdout
    assert cells(r.stdout, HBM64)[6] == "5.0%" and cells(r.stdout, SLOWED)[6] == "3.4%"
    r = call("compare", base, cont, "--profile", prof, "--process-profile", proc, "--format", "json")
    doc = json.loads(r.stdout)
    assert doc["profile"]["kind"] == "between-gpu+process" and doc["settings"]["measured_floor"] == 0.03
    assert {b["name"]: round(b["threshold"], 4) for b in doc["benchmarks"]}[SLOWED] == \
        pytest.approx(3 * 2 ** 0.5 * math.hypot(0.01, 0.005), abs=1e-4)
    r = call("compare", base, cont, "--profile", prof, "--no-process-profile", "--format", "json")
    assert json.loads(r.stdout)["profile"]["kind"] == "between-gpu"


def test_measured_floor_applies_only_where_both_measured(cross_gpu, tmp_path):
    """--measured-floor 0.02: both benchmarks were measured by both profiles, so their threshold is max(2 %,
    3 x sigma, the combined range): SLOWED 3 x (1 % (+) 0.5 %) = 3.35 % (its +3 % is same), HBM64 4 % (+) 3 % = 5 %
    (its +6 % is slower; max() of the two ranges would give 4 %). Without the process profile the floor stays
    5 % for every benchmark: --measured-floor changes nothing there."""
    base, cont, prof, proc = cross_gpu
    r = call("compare", base, cont, "--profile", prof, "--process-profile", proc, "--measured-floor", "0.02",
             "--gpu-pair-factor", "1")
    hbm, slowed = cells(r.stdout, HBM64), cells(r.stdout, SLOWED)
    assert hbm[6] == "5.0%" and hbm[7] == "slower"
    assert float(slowed[6].rstrip("%")) == pytest.approx(100 * 3 * math.hypot(0.01, 0.005), abs=0.06)
    assert slowed[7] == "same"  # +3 % within 3 x 1.12 %
    assert r.returncode == 1 and listed(r.stdout, "Slower") == [HBM64]
    r = call("compare", base, cont, "--profile", prof, "--no-process-profile", "--measured-floor", "0.02")
    assert cells(r.stdout, SLOWED)[6] == "5.0%" and cells(r.stdout, HBM64)[6:8] == ["5.0%", "slower"]
    # a same-GPU profile of another model is unusable input
    other = tmp_path / "other.json"
    other.write_text(proc.read_text().replace(H200, "NVIDIA H100"))
    one_line_exit_2(call("compare", base, cont, "--profile", prof, "--process-profile", other),
                    "compare: error:", "NVIDIA H100")


# The rows above with the process spread compare adds by default (results/h200/same_gpu_profile.json, the
# measured floor at the 5 % floor), and with --measured-floor 0.03 (docs/regression-tracking.md, "Across GPUs"):
# (comparisons flagged, flags) for in sample, six baselines, one baseline, leave one out, held out x 3.
WITH_PROCESS = {0.05: ((0, 0), (1, 2), (11, 32), (4, 13), (1, 1), (11, 11), (3, 3)),
                0.03: ((0, 0), (2, 3), (19, 71), (5, 16), (1, 1), (12, 19), (3, 4))}


@pytest.mark.usefixtures("rules_before_split_batch")
def test_old_rows_with_the_process_spread(final, new_and_before, committed_doc):
    """The default flags no more than before in any row (it only widens); a measured floor of 3 % flags more in
    five of the seven, so it is not the default."""
    new, before = new_and_before
    d2 = [s for s in final if s not in new]
    held = [committed(run_file(ROOT / "results" / "h200" / r)) for r in HELD_OUT]
    profiles = {s.context["gpu_uuid"]: profile_without({s.context["gpu_uuid"]}) for s in final}
    same_gpu = json.loads((ROOT / "results" / "h200" / "same_gpu_profile.json").read_text())
    rows = ((noise.configurations(final, "pairs"), committed_doc), ([(d2, c) for c in new], before),
            ([([b], c) for b in d2 for c in new], before),
            (noise.configurations(final, "leave-one-out"), lambda b, c: profiles[c.context["gpu_uuid"]]),
            ([(final, c) for c in held], committed_doc), ([([b], c) for b in final for c in held], committed_doc),
            (noise.configurations(held, "pairs"), committed_doc))
    for floor, expected in WITH_PROCESS.items():
        got = []
        for configs, doc in rows:
            per = [sum(r.verdict in (noise.SLOWER, noise.FASTER) for r in noise.compare_suites(
                b, c, **noise._with_profile(KW, doc, b, c, (same_gpu, floor)))) for b, c in configs]
            got.append((sum(n > 0 for n in per), sum(per)))
        assert tuple(got) == expected, floor
    before_rows = ((0, 0), NEW_SIX_BASELINES[:2], NEW_ONE_BASELINE[:2], LEAVE_ONE_OUT[:2], HELD_TWELVE_BASELINES[:2],
                   HELD_ONE_BASELINE[:2], HELD_PAIRS[:2])
    assert all(d[1] <= b[1] for d, b in zip(WITH_PROCESS[0.05], before_rows))
