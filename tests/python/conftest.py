"""Shared fixtures: suite JSON built from a recorded H200 run (tests/python/synth.py), runners for the tools and
the plots/ scripts (run: a subprocess, as a user runs them; call: main(argv) in this process), and the committed
runs read once per test process."""
import contextlib
import functools
import importlib
import io
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLOTS = ROOT / "plots"
RESULTS_DIR = ROOT / "results"

from gpubench import families
from gpubench import suite_json
from gpubench.__main__ import TOOLS as TOOL_MODULES
from gpubench.regress.compare import RUN_FILES, run_files  # noqa: F401 (run_files: the tests find runs as compare does)
import synth

PLOT_SCRIPTS = tuple(families.plots())  # every picture the family registry names
ALL_SCRIPTS = PLOT_SCRIPTS + ("report", "compare", "bounds", "check_errors")
SHAPES = ("1.7.1", "1.8.3")
# Tools of the package by name (python3 -m gpubench NAME); everything else is a picture script (python3 -m plots.NAME).
TOOLS = tuple(TOOL_MODULES)


def run(script, *args):
    """Run a tool (python3 -m gpubench SCRIPT) or a picture script (python3 -m plots.SCRIPT) as a user would, from
    the repository root; returns CompletedProcess with text stdout/stderr."""
    module = ["gpubench", script] if script in TOOLS else [f"plots.{script}"]
    return subprocess.run([sys.executable, "-m", *module, *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def call(script, *args):
    """What run() gives, from the tool's or picture script's main(argv) called in this process (from the
    repository root, stdout and stderr captured, a SystemExit taken for the exit status, warnings written to
    stderr as the interpreter would): no interpreter or matplotlib start-up per call. run() stays for one test
    per tool, which checks the real command line."""
    module = importlib.import_module(TOOL_MODULES[script] if script in TOOLS else f"plots.{script}")
    argv = [str(a) for a in args]
    out, err, here = io.StringIO(), io.StringIO(), os.getcwd()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        os.chdir(ROOT)
        try:
            code = module.main(argv)
        except SystemExit as e:
            code = e.code
        finally:
            os.chdir(here)
    for w in seen:
        err.write(warnings.formatwarning(w.message, w.category, w.filename, w.lineno))
    if code is not None and not isinstance(code, int):  # sys.exit("message"): the message and status 1
        err.write(f"{code}\n")
        code = 1
    return subprocess.CompletedProcess([script, *argv], code or 0, out.getvalue(), err.getvalue())


def run_file(folder):
    """The one run file directly in folder (benchmarks.json or benchmarks.json.gz)."""
    found = [Path(folder) / name for name in RUN_FILES if (Path(folder) / name).is_file()]
    assert len(found) == 1, f"{folder}: {len(found)} run files"
    return found[0]


_load = suite_json.load


@functools.lru_cache(maxsize=None)
def _committed(path):
    return _load(path)


def committed(path):
    """suite_json.load, but a committed run (below results/) is read once per test process: those files do not
    change, and the tests and the tools they call only read the Suite (about 4 MB each)."""
    return _committed(Path(path)) if RESULTS_DIR in Path(path).resolve().parents else _load(path)


@pytest.fixture
def committed_loads(monkeypatch):
    """Tools called in-process (call()) read committed runs through committed(): once, not once per tool."""
    monkeypatch.setattr(suite_json, "load", committed)


@pytest.fixture
def make_json(tmp_path):
    """make_json(name='benchmarks.json', subdir='', **synth.suite_json kwargs) -> path of the written file."""
    def make(name="benchmarks.json", subdir="", **kw):
        d = tmp_path / subdir
        d.mkdir(parents=True, exist_ok=True)
        return Path(synth.write(d / name, **kw))
    return make


@pytest.fixture(params=SHAPES)
def suite_file(request, make_json):
    """A full run (all families, 5 noisy repetitions) in each Google Benchmark version's shape."""
    return make_json(shape=request.param)


@pytest.fixture
def write_json(tmp_path):
    def write(doc, name="odd.json"):
        p = tmp_path / name
        p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
        return p
    return write


# compare / detection options that judge as before the rule split and the batch term (the in-process twin below).
SKIP_SPLIT_BATCH = ("--skip-rule", "split", "--skip-rule", "batch")


@pytest.fixture
def rules_before_split_batch(monkeypatch):
    """Judge in this process as before the rule split and the batch term (2026-12-03 14:00; compare --skip-rule does
    it on the command line): the figures of the docs measured before them."""
    from gpubench.regress import verdict
    monkeypatch.setattr(verdict, "RULES", verdict.rules_without(verdict.OPTIONAL_RULES))
    monkeypatch.setattr(verdict, "BATCH_TERM", False)
