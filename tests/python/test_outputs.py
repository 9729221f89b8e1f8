"""Issue 25, item 1 and 3: one rule for every tool that writes a file (suite_json.check_output: never its own
input, a committed file or a file in a committed run's folder without --force; one line, exit 2), a write
that fails is one line and exit 2, a closed stdout pipe ends a tool quietly (SIGPIPE), and a bug is exit 70,
never a verdict's 1."""
import shutil
import signal
import subprocess
import sys

import pytest

import link_synth

from conftest import ROOT, run
from gpubench import suite_json
from test_ncu_table import profiled  # noqa: F401 (a fixture: a suite file, an ncu CSV and its order file)

needs_git = pytest.mark.skipif(not shutil.which("git"), reason="needs git")


def node_files(tmp_path, subdir=""):
    """Two GPUs' runs (links, peers, coalescing, ceilings): every writer here has something to write from them."""
    (tmp_path / subdir).mkdir(parents=True, exist_ok=True)
    return [link_synth.write(tmp_path / subdir / f"gpu{i}.json", device=i, peer=1 - i, seed=i) for i in range(2)]


def args_of(tool, inputs, out):
    """A command line of `tool` that writes `out` from `inputs` (suite JSON files; for ncu_table, its three)."""
    if tool == "noise_profile":
        return [*inputs, "-o", out, "--same-code"]
    if tool == "stride":
        return [inputs[0], "-o", out]
    return [*inputs, "-o", out]


WRITERS = ("node_report", "noise_profile", "peer_matrix", "stride")


@pytest.mark.parametrize("tool", WRITERS)
def test_output_onto_an_input_is_refused(tool, tmp_path):
    """node_report A.json B.json -o A.json replaced its input with Markdown and exited 0."""
    inputs = node_files(tmp_path)
    before = inputs[0].read_bytes()
    r = run(tool, *args_of(tool, inputs, inputs[0]))
    assert r.returncode == 2 and r.stderr.strip() == f"{tool}: error: refusing to write {inputs[0]}: it is an input of this command"
    assert inputs[0].read_bytes() == before


def committed_run(tmp_path):
    """Two runs committed under repo/results/gpu/run/, with a committed report.md and picture beside them."""
    inputs = node_files(tmp_path, subdir="repo/results/gpu/run")
    for name in ("report.md", "stride.png", "profile.json"):
        (inputs[0].parent / name).write_text("committed")
    git = lambda *a: subprocess.run(["git", "-C", str(tmp_path / "repo"), *a], check=True, capture_output=True)
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "results")
    return inputs


@needs_git
@pytest.mark.parametrize("tool", WRITERS)
def test_committed_file_is_not_overwritten_without_force(tool, tmp_path):
    """node_report -o onto a committed report.md modified it; peer_matrix -o onto a committed picture replaced it."""
    inputs = committed_run(tmp_path)
    target = inputs[0].parent / {"node_report": "report.md", "noise_profile": "profile.json"}.get(tool, "stride.png")
    r = run(tool, *args_of(tool, inputs, target))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "it is a committed file (pass --force to overwrite it)" in r.stderr
    assert target.read_text() == "committed"
    link = tmp_path / "link.out"  # the same file reached through a symbolic link
    link.symlink_to(target)
    r = run(tool, *args_of(tool, inputs, link))
    assert r.returncode == 2 and "it is a committed file" in r.stderr and target.read_text() == "committed"
    r = run(tool, *args_of(tool, inputs, target), "--force")
    assert r.returncode == 0, r.stderr
    assert target.read_bytes() != b"committed"


@needs_git
@pytest.mark.parametrize("tool", WRITERS)
def test_new_file_in_a_committed_run_is_refused_without_force(tool, tmp_path):
    inputs = committed_run(tmp_path)
    target = inputs[0].parent / ("new.png" if tool in ("peer_matrix", "stride") else "new.out")
    r = run(tool, *args_of(tool, inputs, target))
    assert r.returncode == 2 and "in a committed run's folder" in r.stderr and "--force" in r.stderr
    assert not target.exists()
    assert run(tool, *args_of(tool, inputs, target), "--force").returncode == 0 and target.exists()


@pytest.mark.skipif(not shutil.os.path.exists("/dev/full"), reason="needs /dev/full (every write: no space left)")
@pytest.mark.parametrize("tool", WRITERS + ("ncu_table",))
def test_a_failed_write_is_one_line_exit_2(tool, tmp_path, profiled):  # noqa: F811
    """A full disk under -o was a traceback (exit 1)."""
    if tool == "ncu_table":
        path, ncu, order = profiled
        r = run(tool, ncu, order, path, "-o", "/dev/full")
    else:
        r = run(tool, *args_of(tool, node_files(tmp_path), "/dev/full"))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.strip().splitlines()[-1] == f"{tool}: error: cannot write /dev/full: No space left on device"
    assert "Traceback" not in r.stderr and shutil.os.path.exists("/dev/full")


@pytest.mark.parametrize("tool", ("compare", "node_report", "bounds", "stride"))
def test_closed_stdout_pipe_ends_quietly(tool, tmp_path):
    """python3 -m gpubench compare A B | head -1 printed a BrokenPipeError traceback."""
    a, b = node_files(tmp_path)
    module = ["gpubench", tool] if tool != "stride" else ["plots.stride"]
    args = {"compare": [a, b], "node_report": [a, b], "bounds": [a],
            "stride": [a, "-o", a.parent / "s.png"]}[tool]
    p = subprocess.Popen([sys.executable, "-m", *module, *map(str, args)], cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    p.stdout.close()  # the reader is gone before anything is written
    err = p.stderr.read()
    assert p.wait(timeout=120) == -signal.SIGPIPE and "Traceback" not in err and "Error" not in err


def test_a_bug_is_exit_70_not_a_verdict(capsys):
    @suite_json.cli("tool")
    def main(argv=None):
        raise TypeError("an unexpected type")
    assert main([]) == suite_json.EXIT_CRASH == 70
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().splitlines()[-1] == (
        "tool: internal error (a bug, exit 70): TypeError: an unexpected type")
