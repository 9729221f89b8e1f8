"""Shared fixtures: suite JSON built from a recorded H200 run (tests/python/synth.py) and a runner for the
plots/ scripts."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLOTS = ROOT / "plots"
# Tools of the package by name (python3 -m gpubench NAME); everything else is a picture script (python3 -m plots.NAME).
TOOLS = ("compare", "node_report", "noise_profile", "check_errors", "report", "bounds", "ncu_table", "families")

from gpubench import families
import synth

PLOT_SCRIPTS = tuple(families.plots())  # every picture the family registry names
ALL_SCRIPTS = PLOT_SCRIPTS + ("report", "compare", "bounds", "check_errors")
SHAPES = ("1.7.1", "1.8.3")


def run(script, *args):
    """Run a tool (python3 -m gpubench SCRIPT) or a picture script (python3 -m plots.SCRIPT) as a user would, from
    the repository root; returns CompletedProcess with text stdout/stderr."""
    module = ["gpubench", script] if script in TOOLS else [f"plots.{script}"]
    return subprocess.run([sys.executable, "-m", *module, *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


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
