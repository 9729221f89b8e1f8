"""run_all.sh without a GPU: stand-ins for nvidia-smi, the build (a gpubench script and a CTest file) and the
compiler put on PATH, so that its argument handling, its checks before building, the lock, the FAILED marker
and the exit codes can be exercised (issue 10)."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import link_synth
import synth
from conftest import ROOT

RUN_ALL = ROOT / "run_all.sh"
UUID = "GPU-0a1b2c3d"


def gpu_uuid(i):
    return UUID if i == 0 else f"{UUID}-{i}"


def nvidia_smi(n):
    """Stand-in nvidia-smi: n H200s, indices 0 .. n-1."""
    listing = "\n".join(f"GPU {i}: NVIDIA H200 (UUID: {gpu_uuid(i)})" for i in range(n))
    query = "".join(f'*"-i {i}"*) echo "NVIDIA H200, {gpu_uuid(i)}" ;; ' for i in range(n))
    return f"""#!/bin/sh
# Stand-in: {n} H200(s).
case "$*" in
  -L) printf '%s\\n' "{listing}" ;;
  *query-gpu*) case "$*" in {query}*) echo "No devices were found" >&2; exit 6 ;; esac ;;
esac
"""


NVIDIA_SMI = nvidia_smi(1)
# Stand-in gpubench: lists the names in $FAKE_NAMES; a run copies $FAKE_JSON (with $FAKE_JSON_DIR:
# gpu<--device>-peer<MH_PEER_DEVICE or none>.json from there) to --benchmark_out, prints median lines, sleeps
# $FAKE_SLEEP seconds and exits $FAKE_RC. $FAKE_LOG: the last run's flags; $FAKE_LOG.all: every run's, after
# its MH_PEER_DEVICE.
GPUBENCH = """#!/bin/bash
out="" dev=0
for a in "$@"; do
  case $a in
    --benchmark_list_tests=true) list=1 ;;
    --benchmark_filter=none_at_all) none=1 ;;
    --benchmark_out=*) out=${a#--benchmark_out=} ;;
    --model_out=*) model=${a#--model_out=} ;;
    --device=*) dev=${a#--device=} ;;
  esac
done
if [[ -n ${list:-} ]]; then [[ -n ${none:-} ]] || cat "$FAKE_NAMES"; exit 0; fi
echo "$@" >"$FAKE_LOG"
echo "MH_PEER_DEVICE=${MH_PEER_DEVICE:-none} $*" >>"$FAKE_LOG.all"
src=$FAKE_JSON
[[ -z ${FAKE_JSON_DIR:-} ]] || src=$FAKE_JSON_DIR/gpu$dev-peer${MH_PEER_DEVICE:-none}.json
cp "$src" "$out"
while read -r n; do echo "${n}_median 1 us"; done <"$FAKE_NAMES"
sleep "${FAKE_SLEEP:-0}"
exit "${FAKE_RC:-0}"
"""
SELFCHECK_PASS = 'add_test(gpu_tests "/bin/true")\nset_tests_properties(gpu_tests PROPERTIES LABELS gpu)\n'
SELFCHECK_SKIP = ('add_test(gpu_tests "/bin/sh" "-c" "echo gpu_tests: GPU tests skipped: no CUDA device in the stand-in; exit 77")\n'
                  'set_tests_properties(gpu_tests PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)\n')


def executable(path, text):
    path.write_text(text)
    path.chmod(0o755)


@pytest.fixture
def env(tmp_path):
    """A PATH with the stand-ins, a fake build dir, and the run's inputs; returns (environ, tmp_path)."""
    if not shutil.which("ctest") or not shutil.which("flock"):
        pytest.skip("run_all.sh needs ctest and flock")
    bin_dir, build = tmp_path / "bin", tmp_path / "build"
    bin_dir.mkdir()
    build.mkdir()
    executable(bin_dir / "nvidia-smi", NVIDIA_SMI)
    for tool in ("nvcc", "cmake"):  # a build must never start in these tests: the stand-ins leave a mark
        executable(bin_dir / tool, f"#!/bin/sh\ntouch {tmp_path}/built\nexit 1\n")
    executable(bin_dir / "python3", f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # a link would leave a venv
    executable(build / "gpubench", GPUBENCH)
    (build / "CTestTestfile.cmake").write_text(SELFCHECK_PASS)
    run_json = tmp_path / "run.json"
    synth.write(run_json, only={"ceiling", "sync"})
    names = [e["run_name"] for e in json.loads(run_json.read_text())["benchmarks"] if e["run_type"] == "iteration"]
    (tmp_path / "names.txt").write_text("\n".join(dict.fromkeys(names)) + "\n")
    e = dict(os.environ, PATH=f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", BUILD_DIR=str(build), TMPDIR=str(tmp_path),
             FAKE_NAMES=str(tmp_path / "names.txt"), FAKE_JSON=str(run_json), FAKE_LOG=str(tmp_path / "gpubench.args"))
    ctest = shutil.which("ctest")
    if os.path.dirname(ctest) not in e["PATH"].split(":"):
        e["PATH"] += ":" + os.path.dirname(ctest)
    return e, tmp_path


def run_all(env, *args, cwd=None, **kw):
    return subprocess.run(["bash", str(RUN_ALL), *map(str, args)], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=300, **kw)


def one_line(r):
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def runs(root):
    return sorted(Path(root).glob("h200/*/"))


def test_no_gpu_is_one_line_exit_2(env):
    e, tmp = env
    (tmp / "bin" / "nvidia-smi").unlink()
    r = run_all(e, "--out", tmp / "out")
    assert r.returncode == 2 and "no NVIDIA GPU visible" in one_line(r)


@pytest.mark.parametrize("args, says", [
    (["--bogus"], "unknown option '--bogus'"),
    (["--device", "-1"], "--device needs a GPU index"),
    (["--device", "4294967295"], "--device needs a GPU index"),
    (["--device", "3"], "GPU 3 does not exist"),
    (["--filter"], "--filter needs a value"),
    (["--filter", "gemm/(smem"], "is not a valid regular expression"),
])
def test_bad_arguments_are_one_line_exit_2_before_building(env, args, says):
    e, tmp = env
    r = run_all(e, "--out", tmp / "out", *args)
    assert r.returncode == 2 and says in one_line(r)
    assert not (tmp / "built").exists() and not (tmp / "out").exists()


def test_unreadable_compare_is_refused_before_building(env):
    e, tmp = env
    bad = tmp / "base.json"
    bad.write_text("{ not json")
    r = run_all(e, "--compare", bad, "--out", tmp / "out")
    assert r.returncode == 2 and "--compare" in one_line(r) and str(bad) in r.stderr and "not JSON" in r.stderr
    nan = tmp / "nan.json"  # a NaN time is unusable too
    doc = synth.suite_json(only={"ceiling"})
    doc["benchmarks"][0]["real_time"] = float("nan")
    nan.write_text(json.dumps(doc))
    r = run_all(e, "--compare", nan, "--out", tmp / "out")
    assert r.returncode == 2 and "not a positive number" in one_line(r)
    assert not (tmp / "built").exists() and not (tmp / "out").exists()


def test_unwritable_out_is_refused_before_building(env):
    e, tmp = env
    (tmp / "a_file").write_text("x")
    r = run_all(e, "--out", tmp / "a_file" / "results")
    assert r.returncode == 2 and "is not a writable folder" in one_line(r)
    assert not (tmp / "built").exists()


def test_filter_matching_nothing_is_refused_before_anything_is_written(env):
    e, tmp = env
    r = run_all(e, "--no-build", "--filter", "^gemm/", "--out", tmp / "out")
    assert r.returncode == 2 and "matches no benchmark on NVIDIA H200" in one_line(r)
    assert not (tmp / "out").exists()


def test_relative_paths_are_taken_from_the_callers_folder(env):
    e, tmp = env
    synth.write(tmp / "base.json", only={"ceiling", "sync"}, seed=3)
    r = run_all(e, "--no-build", "--out", "rel", "--compare", "base.json", cwd=tmp)
    assert r.returncode == 0, r.stdout + r.stderr
    (run,) = runs(tmp / "rel")
    assert {"benchmarks.json", "report.md", "compare.txt", "sync.png"} <= {p.name for p in run.iterdir()}
    assert not (run / "FAILED").exists()
    assert f"--model_out={run}/model.json" in (tmp / "gpubench.args").read_text()


def test_compare_exit_codes_pass_through(env):
    e, tmp = env
    slow = "sync/syncthreads/threads:1024/blocks_per_sm:1"
    synth.write(tmp / "fast.json", only={"ceiling", "sync"}, seed=3, slow={slow: 0.8})
    r = run_all(e, "--no-build", "--out", tmp / "o1", "--compare", tmp / "fast.json")
    assert r.returncode == 1 and "regressions against" in r.stderr and slow in r.stdout
    synth.write(tmp / "more.json", only={"ceiling", "sync", "gemm"}, seed=3)
    r = run_all(e, "--no-build", "--out", tmp / "o3", "--compare", tmp / "more.json")
    assert r.returncode == 3 and "missing from this run" in r.stderr
    (run,) = runs(tmp / "o3")
    assert (run / "report.md").exists() and not (run / "FAILED").exists()


def test_compare_takes_a_folder_of_baselines(env):
    """--compare DIR: every benchmarks.json below DIR is a baseline (the README's recipe: keep several GPUs' runs); a folder
    without one, or with one that is not suite JSON, is refused before building."""
    e, tmp = env
    slow = "sync/syncthreads/threads:1024/blocks_per_sm:1"
    for i in range(2):
        (tmp / "bases" / f"run{i}").mkdir(parents=True)
        synth.write(tmp / "bases" / f"run{i}" / "benchmarks.json", only={"ceiling", "sync"}, seed=3 + i,
                    slow={slow: 0.8})
    r = run_all(e, "--no-build", "--out", tmp / "o1", "--compare", tmp / "bases")
    assert r.returncode == 1 and slow in r.stdout and "regressions against" in r.stderr
    assert "noise from 2 baseline run(s)" in r.stdout, r.stdout
    (tmp / "empty").mkdir()
    r = run_all(e, "--no-build", "--out", tmp / "o2", "--compare", tmp / "empty")
    assert r.returncode == 2 and "a folder without any benchmarks.json" in one_line(r)
    (tmp / "bases" / "run2").mkdir()
    (tmp / "bases" / "run2" / "benchmarks.json").write_text("{ not json")
    r = run_all(e, "--no-build", "--out", tmp / "o3", "--compare", tmp / "bases")
    assert r.returncode == 2 and "not JSON" in one_line(r) and "run2" in r.stderr
    assert not (tmp / "o2").exists() and not (tmp / "o3").exists()


def test_failed_benchmark_run_leaves_FAILED_and_exit_4(env):
    e, tmp = env
    r = run_all(dict(e, FAKE_RC="1"), "--no-build", "--out", tmp / "out")
    assert r.returncode == 4 and "gpubench exited with 1" in r.stderr
    (run,) = runs(tmp / "out")
    assert "gpubench exited with 1" in (run / "FAILED").read_text() and not (run / "report.md").exists()


def test_benchmark_error_leaves_FAILED_and_exit_4(env):
    e, tmp = env
    synth.write(tmp / "run.json", only={"ceiling", "sync"}, errors={"ceiling/fma": "checksum mismatch"})
    r = run_all(e, "--no-build", "--out", tmp / "out")
    assert r.returncode == 4 and "ceiling/fma: checksum mismatch" in r.stderr
    (run,) = runs(tmp / "out")
    assert "errors" in (run / "FAILED").read_text()


def test_skip_reasons_are_shown_and_do_not_fail(env):
    e, tmp = env
    reason = "needs 4 blocks of 1024 threads per SM; this GPU holds 2"
    synth.write(tmp / "run.json", only={"ceiling", "sync"}, skips={"sync/syncwarp/threads:1024/blocks_per_sm:2": reason})
    r = run_all(e, "--no-build", "--out", tmp / "out")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"sync/syncwarp/threads:1024/blocks_per_sm:2: {reason}" in r.stdout
    (run,) = runs(tmp / "out")
    assert reason in (run / "report.md").read_text() and reason in (run / "skipped.txt").read_text()


def test_self_check_skipped_on_a_gpu_machine_shows_why(env):
    e, tmp = env
    (tmp / "build" / "CTestTestfile.cmake").write_text(SELFCHECK_SKIP)
    r = run_all(e, "--no-build", "--out", tmp / "out")
    assert r.returncode == 4 and "no CUDA device in the stand-in" in r.stderr
    (run,) = runs(tmp / "out")
    assert "no CUDA device in the stand-in" in (run / "FAILED").read_text()


def test_no_build_with_no_tests_fails(env):
    """Issue 25: --no-build on a build folder without the GPU tests passed the self-check ("No tests were
    found") and published."""
    e, tmp = env
    (tmp / "build" / "CTestTestfile.cmake").unlink()
    r = run_all(e, "--no-build", "--out", tmp / "out")
    assert r.returncode == 4 and "no GPU tests found" in r.stderr
    (run,) = runs(tmp / "out")
    assert "no GPU tests in" in (run / "FAILED").read_text() and not (run / "report.md").exists()


def crash_in(e, tmp, tool):
    """An environment in which `python3 -m gpubench TOOL` crashes with a traceback (a bug's stand-in): a
    sitecustomize makes suite_json.load raise TypeError in that tool only."""
    (tmp / "crash").mkdir(exist_ok=True)
    (tmp / "crash" / "sitecustomize.py").write_text(
        "import sys\n"
        f"if sys.argv[1:2] == [{tool!r}]:\n"
        "    import gpubench.suite_json as s\n"
        "    def load(path):\n"
        "        raise TypeError('a stand-in bug')\n"
        "    s.load = load\n")
    return dict(e, PYTHONPATH=f"{ROOT}:{tmp / 'crash'}")


def test_compare_crash_is_exit_4_not_regressions(env):
    """Issue 25: a crash inside compare (a traceback, exit 1) was reported as "regressions ... see compare.txt"
    with an empty compare.txt."""
    e, tmp = env
    synth.write(tmp / "base.json", only={"ceiling", "sync"}, seed=3)
    r = run_all(crash_in(e, tmp, "compare"), "--no-build", "--out", tmp / "out", "--compare", tmp / "base.json")
    assert r.returncode == 4, r.stdout + r.stderr
    assert "regressions" not in r.stderr and "TypeError: a stand-in bug" in r.stderr
    (run,) = runs(tmp / "out")
    failed = (run / "FAILED").read_text()
    assert "compare failed (exit 70" in failed and "a stand-in bug" in failed and "compare.stderr" in failed
    assert "Traceback" in (run / "compare.stderr").read_text()


def test_check_errors_crash_is_not_benchmark_errors(env):
    e, tmp = env
    r = run_all(crash_in(e, tmp, "check_errors"), "--no-build", "--out", tmp / "out")
    assert r.returncode == 4 and "check_errors failed (exit 70" in (runs(tmp / "out")[0] / "FAILED").read_text()


@pytest.mark.skipif(not shutil.which("unshare") or os.geteuid() != 0, reason="needs root and unshare (a tmpfs)")
def test_full_disk_leaves_FAILED_that_says_why(env):
    """Issue 25: a full disk under --out must still end with a FAILED file saying why. --out is a tmpfs of a
    few pages in a private mount namespace: gpubench's JSON fills it."""
    e, tmp = env
    out = tmp / "small"
    out.mkdir()
    big = tmp / "big.json"
    synth.write(big, only={"ceiling", "sync", "gemm", "coalescing"})
    script = (f'mount -t tmpfs -o size=32k tmpfs {out} || {{ echo "no mount"; exit 99; }}; '
              f'bash {RUN_ALL} --no-build --out {out}; rc=$?; echo "== FAILED:"; cat {out}/h200/*/FAILED; exit $rc')
    r = subprocess.run(["unshare", "-m", "bash", "-c", script], env=dict(e, FAKE_JSON=str(big)), capture_output=True,
                       text=True, timeout=300)
    if "no mount" in r.stdout:
        pytest.skip("cannot mount a tmpfs here")
    assert r.returncode == 4, r.stdout + r.stderr
    failed = r.stdout.split("== FAILED:")[1].strip()
    assert failed.startswith("run_all.sh stopped (exit 4) during: checking for benchmark errors: check_errors failed"), r.stdout
    assert "the disk under --out is full" in failed


def test_runs_started_in_the_same_second_get_their_own_folders(env):
    """Issue 25: ./run_all.sh --device 0 & ./run_all.sh --device 1 & on two GPUs of one model started in the same
    second: one failed "exists; runs are never overwritten". A stand-in date gives both the same second."""
    e, tmp = env
    executable(tmp / "bin" / "nvidia-smi", nvidia_smi(2))
    executable(tmp / "bin" / "date", "#!/bin/sh\necho 20260101T000000Z\n")
    procs = [subprocess.Popen(["bash", str(RUN_ALL), "--no-build", "--device", str(d), "--out", str(tmp / "out")],
                              env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for d in (0, 1)]
    results = [p.communicate(timeout=300) + (p.returncode,) for p in procs]
    assert [rc for _, _, rc in results] == [0, 0], results
    assert sorted(p.name for p in runs(tmp / "out")) == ["20260101T000000Z", "20260101T000000Z-2"]
    assert all((p / "report.md").exists() and not (p / "FAILED").exists() for p in runs(tmp / "out"))
    r = run_all(e, "--no-build", "--out", tmp / "out")  # and a third, later, in that second too
    assert r.returncode == 0 and (tmp / "out" / "h200" / "20260101T000000Z-3" / "report.md").exists()


def test_second_run_on_the_same_gpu_refuses(env):
    e, tmp = env
    holder = subprocess.Popen(["flock", str(tmp / f"gpubench-{UUID}.lock"), "sleep", "60"])
    try:
        time.sleep(0.5)
        r = run_all(e, "--no-build", "--out", tmp / "out")
        assert r.returncode == 5 and "in use by another run_all.sh" in one_line(r)
        assert not (tmp / "out").exists()
    finally:
        holder.kill()
        holder.wait()


def test_interrupted_run_leaves_FAILED(env):
    e, tmp = env
    p = subprocess.Popen(["bash", str(RUN_ALL), "--no-build", "--out", str(tmp / "out")], env=dict(e, FAKE_SLEEP="30"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         # SIGINT as a terminal leaves it: a signal ignored when bash starts cannot be trapped, and
                         # a test worker may ignore it (seen under pytest-xdist after in-process tool calls)
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 60
    while not (tmp / "gpubench.args").exists() and time.time() < deadline:
        time.sleep(0.2)
    os.killpg(p.pid, signal.SIGINT)  # as Ctrl-C does: the whole foreground group
    p.communicate(timeout=60)
    assert p.returncode != 0
    (run,) = runs(tmp / "out")
    assert "interrupted" in (run / "FAILED").read_text()


def context_flag(tmp):
    """The --benchmark_context=... argument the stand-in gpubench was run with, as a dict."""
    flags = [a for a in (tmp / "gpubench.args").read_text().split() if a.startswith("--benchmark_context=")]
    assert len(flags) == 1, flags
    return dict(kv.split("=", 1) for kv in flags[0].removeprefix("--benchmark_context=").split(","))


def bench_code(root):
    """The definition of bench_code (docs/reference.md), written again: SHA-256 over the sha256sum lines of every file under
    what gpubench is built from, sorted by path; 16 hex digits."""
    import hashlib
    files = sorted(str(p.relative_to(root)) for top in ("CMakeLists.txt", "cmake", "harness", "micro", "gemm", "model")
                   for p in ([root / top] if (root / top).is_file() else (root / top).rglob("*")) if p.is_file())
    lines = "".join(f"{hashlib.sha256((root / f).read_bytes()).hexdigest()}  {f}\n" for f in files)
    assert any(f.startswith("micro/") for f in files) and not any(f.startswith("plots/") for f in files)
    return hashlib.sha256(lines.encode()).hexdigest()[:16]


def copy_without_git(tmp):
    """The tree as sent to a GPU machine: what run_all.sh uses, no .git."""
    copy = tmp / "copy"
    copy.mkdir()
    for name in ("run_all.sh", "VERSION", "CMakeLists.txt", "cmake", "harness", "micro", "gemm", "model", "gpubench",
                 "plots"):
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy2)(ROOT / name, copy / name)
    return copy


def test_code_identity_from_the_environment_goes_to_the_json_context(env):
    """A copy of the tree without .git (the GPU machine's) names its code with MH_GIT_COMMIT/MH_GIT_DIRTY;
    Google Benchmark's own --benchmark_context puts them, the VERSION file and bench_code (a hash of the
    files gpubench is built from, whatever git says) in the JSON context."""
    e, tmp = env
    commit = "0123456789abcdef0123456789abcdef01234567"
    copy = copy_without_git(tmp)
    r = subprocess.run(["bash", str(copy / "run_all.sh"), "--no-build", "--out", str(tmp / "out")], capture_output=True,
                       text=True, timeout=300, env=dict(e, MH_GIT_COMMIT=commit, MH_GIT_DIRTY="true"))
    assert r.returncode == 0, r.stdout + r.stderr
    version = (ROOT / "VERSION").read_text().strip()
    assert context_flag(tmp) == {"git_commit": commit, "git_dirty": "true", "suite_version": version,
                                 "bench_code": bench_code(ROOT)}
    assert version.count(".") == 2


@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
def test_code_identity_from_git_when_the_environment_is_silent(env):
    e, tmp = env
    e = {k: v for k, v in e.items() if k not in ("MH_GIT_COMMIT", "MH_GIT_DIRTY")}
    e["PATH"] += ":" + os.path.dirname(shutil.which("git"))
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("the tree under test is not a git checkout")
    r = run_all(e, "--no-build", "--out", tmp / "out")
    assert r.returncode == 0, r.stdout + r.stderr
    ctx = context_flag(tmp)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", ".", ":(exclude)results"],
                           capture_output=True, text=True).stdout != ""
    assert ctx["git_commit"] == head.stdout.strip() and ctx["git_dirty"] == str(dirty).lower()


@pytest.mark.parametrize("var, value", [("MH_GIT_COMMIT", "abc,git_dirty=false"), ("MH_GIT_DIRTY", "maybe")])
def test_bad_code_identity_is_one_line_exit_2(env, var, value):
    e, tmp = env
    copy = copy_without_git(tmp)
    r = subprocess.run(["bash", str(copy / "run_all.sh"), "--no-build", "--out", str(tmp / "out")], capture_output=True,
                       text=True, timeout=300, env=dict(e, **{var: value}))
    assert r.returncode == 2 and var in one_line(r)
    assert not (tmp / "out").exists()


@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
def test_code_identity_from_the_environment_is_ignored_in_a_checkout(env):
    """Issue 25: MH_GIT_COMMIT/MH_GIT_DIRTY overrode git inside a real checkout (a modified tree recorded as a
    clean commit); the help says they apply where there is no .git."""
    e, tmp = env
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("the tree under test is not a git checkout")
    r = run_all(dict(e, MH_GIT_COMMIT="0" * 40, MH_GIT_DIRTY="false"), "--no-build", "--out", tmp / "out")
    assert r.returncode == 0, r.stdout + r.stderr
    assert context_flag(tmp)["git_commit"] == head.stdout.strip()
    assert "MH_GIT_COMMIT ignored: this is a git checkout" in r.stderr


# ---- --device all: every GPU of the node, a node report, the peer matrices (issue 17) ----

PEER_RE = re.compile(r"^(link/peer|latency/link/peer)/")


def node(env, n, scales=None):
    """Turn the env fixture into an n-GPU node: nvidia-smi lists n H200s, and gpubench --device i with
    MH_PEER_DEVICE=j writes a link_synth run of GPU i peering with j (scales[i]: that GPU's rate factors)."""
    e, tmp = env
    executable(tmp / "bin" / "nvidia-smi", nvidia_smi(n))
    (tmp / "node").mkdir()
    names = {}
    for i in range(n):
        for j in [j for j in range(n) if j != i] or [None]:
            doc = link_synth.write(tmp / "node" / f"gpu{i}-peer{'none' if j is None else j}.json", device=i, peer=j,
                                   seed=i, scale=(scales or {}).get(i))
            names.update(dict.fromkeys(x["run_name"] for x in json.loads(Path(doc).read_text())["benchmarks"]))
    (tmp / "names.txt").write_text("\n".join(names) + "\n")
    # The self-check records which devices it saw.
    (tmp / "build" / "CTestTestfile.cmake").write_text(
        f'add_test(gpu_tests "/bin/sh" "-c" "echo $CUDA_VISIBLE_DEVICES >>{tmp}/selfcheck.devices")\n'
        'set_tests_properties(gpu_tests PROPERTIES LABELS gpu)\n')
    return dict(e, FAKE_JSON_DIR=str(tmp / "node")), tmp, list(names)


def gpubench_runs(tmp):
    """(MH_PEER_DEVICE, {flag: value}) of every gpubench run, in order."""
    out = []
    for line in (tmp / "gpubench.args.all").read_text().splitlines():
        peer, *flags = line.split()
        out.append((peer.removeprefix("MH_PEER_DEVICE="), dict(f.split("=", 1) for f in flags if "=" in f)))
    return out


def test_node_run_two_gpus(env):
    e, tmp, _ = node(env, 2)
    r = run_all(e, "--device", "all", "--no-build", "--out", tmp / "out")
    assert r.returncode == 0, r.stdout + r.stderr
    (run,) = runs(tmp / "out")
    assert not (run / "FAILED").exists()
    for i in (0, 1):
        assert {"benchmarks.json", "report.md", "links.png"} <= {p.name for p in (run / f"gpu{i}").iterdir()}
        assert not list((run / f"gpu{i}").glob("peer*.json"))  # two GPUs: each run already has the pair
    # Each GPU self-checked as CUDA device 0, its sibling next; each ran once, peering with the other.
    assert (tmp / "selfcheck.devices").read_text().split() == ["0,1", "1,0"]
    assert [(p, f["--device"]) for p, f in gpubench_runs(tmp)] == [("1", "0"), ("0", "1")]
    assert [f["--model_out"] for _, f in gpubench_runs(tmp)] == [f"{run}/gpu{i}/model.json" for i in (0, 1)]
    md = (run / "node" / "node.md").read_text()
    assert "Node report: 2 GPU(s)" in md and "gpu0/benchmarks.json" in md and "gpu1/benchmarks.json" in md
    assert "Nothing flagged" in md and "within 10 % of its siblings" in md
    assert (run / "node" / "peer_matrix_uni.png").stat().st_size > 0
    assert (run / "node" / "peer_matrix_bidir.png").stat().st_size > 0


def test_node_run_flags_a_slow_gpu_with_exit_6(env):
    e, tmp, _ = node(env, 2, scales={1: {"link/h2d/pinned": 0.8}})
    r = run_all(e, "--device", "all", "--no-build", "--out", tmp / "out")
    assert r.returncode == 6 and "flags a GPU or link" in r.stderr, r.stdout + r.stderr
    (run,) = runs(tmp / "out")
    assert not (run / "FAILED").exists()  # the run is complete: the node is what failed the check
    flagged = (run / "node" / "node.md").read_text().split("## Flagged")[1].split("##")[0]
    assert "link/h2d/pinned/ce/bytes:1073741824 | bytes_per_second | GPU 1" in flagged and "GPU 0" not in flagged
    r = run_all(e, "--device", "all", "--no-build", "--margin", "25", "--out", tmp / "wide")
    assert r.returncode == 0, r.stdout + r.stderr
    (run,) = runs(tmp / "wide")
    assert "within 25 %" in (run / "node" / "node.md").read_text()


def test_node_run_one_gpu(env):
    e, tmp, _ = node(env, 1)
    r = run_all(e, "--device", "all", "--no-build", "--out", tmp / "out")
    assert r.returncode == 0, r.stdout + r.stderr
    (run,) = runs(tmp / "out")
    assert (run / "gpu0" / "report.md").exists() and not (run / "FAILED").exists()
    assert [(p, f["--device"]) for p, f in gpubench_runs(tmp)] == [("none", "0")]
    assert "One GPU: nothing to compare" in (run / "node" / "node.md").read_text()
    assert not list((run / "node").glob("*.png"))


def test_node_run_three_gpus_measures_every_pair(env):
    from plots import peer_matrix
    from gpubench import suite_json
    e, tmp, _ = node(env, 3)
    r = run_all(e, "--device", "all", "--no-build", "--out", tmp / "out")
    assert r.returncode == 0, r.stdout + r.stderr
    (run,) = runs(tmp / "out")
    # Own run with i+1, the peer subset again with the remaining GPU.
    assert [(p, f["--device"]) for p, f in gpubench_runs(tmp)] == [
        ("1", "0"), ("2", "0"), ("2", "1"), ("0", "1"), ("0", "2"), ("1", "2")]
    pair_filters = {f["--benchmark_filter"] for p, f in gpubench_runs(tmp)[1::2]}
    assert pair_filters == {PEER_RE.pattern}
    files = [run / f"gpu{i}" / "benchmarks.json" for i in range(3)] + \
        [run / "gpu0" / "peer2.json", run / "gpu1" / "peer0.json", run / "gpu2" / "peer1.json"]
    cells = peer_matrix.cells([suite_json.load(f) for f in files], "uni")
    assert set(cells) == {(i, j) for i in range(3) for j in range(3) if i != j}
    assert (run / "node" / "peer_matrix_uni.png").exists()


def test_node_run_pair_filter_keeps_to_the_users_filter(env):
    e, tmp, names = node(env, 3)
    user = "^(ceiling/|link/peer/uni/ce/)"
    r = run_all(e, "--device", "all", "--no-build", "--filter", user, "--out", tmp / "out")
    assert r.returncode == 0, r.stdout + r.stderr
    pair = gpubench_runs(tmp)[1][1]["--benchmark_filter"]
    wanted = {n for n in names if re.search(user, n) and PEER_RE.search(n)}
    assert wanted and {n for n in names if re.search(pair, n)} == wanted


def test_node_run_takes_every_gpus_lock(env):
    e, tmp, _ = node(env, 2)
    p = subprocess.Popen(["bash", str(RUN_ALL), "--device", "all", "--no-build", "--out", str(tmp / "out")],
                         env=dict(e, FAKE_SLEEP="30"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        deadline = time.time() + 60
        while not (tmp / "gpubench.args").exists() and time.time() < deadline:
            time.sleep(0.2)
        for i in (0, 1):
            held = subprocess.run(["flock", "-n", str(tmp / f"gpubench-{gpu_uuid(i)}.lock"), "true"])
            assert held.returncode == 1, f"GPU {i}'s lock is free during a node run"
        r = run_all(e, "--device", "1", "--no-build", "--out", tmp / "single")
        assert r.returncode == 5 and "GPU 1" in one_line(r)
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        p.communicate(timeout=60)


def test_node_run_refuses_when_one_gpu_is_busy(env):
    e, tmp, _ = node(env, 2)
    holder = subprocess.Popen(["flock", str(tmp / f"gpubench-{gpu_uuid(1)}.lock"), "sleep", "60"])
    try:
        time.sleep(0.5)
        r = run_all(e, "--device", "all", "--no-build", "--out", tmp / "out")
        assert r.returncode == 5 and "GPU 1 (NVIDIA H200) is in use" in one_line(r)
        assert not (tmp / "out").exists() and not (tmp / "gpubench.args").exists()
    finally:
        holder.kill()
        holder.wait()


def test_node_run_failure_leaves_FAILED(env):
    e, tmp, _ = node(env, 2)
    r = run_all(dict(e, FAKE_RC="1"), "--device", "all", "--no-build", "--out", tmp / "out")
    assert r.returncode == 4 and "gpubench exited with 1" in r.stderr
    (run,) = runs(tmp / "out")
    assert "GPU 0: benchmarks: gpubench exited with 1" in (run / "FAILED").read_text()
    assert (run / "gpu0" / "FAILED").exists() and not (run / "gpu1").exists()


@pytest.mark.parametrize("args, says", [
    (["--device", "all", "--compare", "BASE"], "--compare takes one GPU's run, not --device all"),
    (["--margin", "5"], "--margin applies to --device all only"),
    (["--device", "all", "--margin", "0"], "--margin needs a percentage"),
    (["--device", "all", "--margin", "abc"], "--margin needs a percentage"),
    (["--device", "al"], "--device needs a GPU index (0, 1, ...) or 'all'"),
])
def test_node_run_bad_arguments(env, args, says):
    e, tmp, _ = node(env, 2)
    synth.write(tmp / "BASE", only={"ceiling"})
    r = run_all(e, "--no-build", "--out", tmp / "out", *args, cwd=tmp)
    assert r.returncode == 2 and says in one_line(r)
    assert not (tmp / "out").exists()
