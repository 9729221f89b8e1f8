"""Every script on every committed results/**/benchmarks.json: real GPU output must keep working."""
from pathlib import Path

import pytest

from conftest import PLOT_SCRIPTS, PLOTS, ROOT, run

RESULTS = sorted(ROOT.glob("results/**/benchmarks.json"))


@pytest.mark.skipif(not RESULTS, reason="no results/**/benchmarks.json committed yet")
@pytest.mark.parametrize("path", RESULTS, ids=[str(p.relative_to(ROOT)) for p in RESULTS])
def test_scripts_on_committed_results(path: Path, tmp_path):
    extra = ("roofline",) if (PLOTS / "roofline.py").exists() else ()
    for script in PLOT_SCRIPTS + extra:  # -o into tmp so the committed folder is left as it is
        r = run(script, path, "-o", tmp_path / f"{script}.png")
        assert r.returncode == 0, r.stderr
        assert (tmp_path / f"{script}.png").exists() or "no picture written" in r.stderr
    r = run("report", path, "-o", tmp_path / "report.md")
    assert r.returncode == 0, r.stderr
    assert "## Device" in (tmp_path / "report.md").read_text()
    r = run("compare", path, path)
    assert r.returncode == 0 and "Regressions: none" in r.stdout, r.stdout
    for script in ("bounds", "check_errors"):  # committed runs have no errors (run_all.sh refuses them)
        if (PLOTS / f"{script}.py").exists():
            r = run(script, path)
            assert r.returncode == 0, r.stdout + r.stderr
