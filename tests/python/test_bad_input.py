"""Every script turns an unusable input into one line on stderr and exit status 2."""
import json

import pytest

from conftest import ALL_SCRIPTS, run

BAD = {
    "not JSON": ("benchmarks.json: this is not json {", "not JSON"),
    "no benchmarks": (json.dumps({"context": {"suite": "gpu-memory-microbench"}}), 'no "benchmarks" list'),
    "another tool": (json.dumps({"context": {"host_name": "x", "library_build_type": "release"},
                                 "benchmarks": [{"name": "BM_foo", "run_type": "iteration", "real_time": 1,
                                                 "time_unit": "ns"}]}), "not from the suite"),
}


def args_for(script, bad, good):
    """compare gets the bad file on either side; the rest take it as their only input."""
    return [(bad, good), (good, bad)] if script == "compare" else [(bad,)]


@pytest.mark.parametrize("script", ALL_SCRIPTS)
@pytest.mark.parametrize("kind", BAD)
def test_bad_json(script, kind, write_json, make_json):
    content, reason = BAD[kind]
    bad = write_json(content)
    for args in args_for(script, bad, make_json(only={"ceiling"})):
        r = run(script, *args)
        assert r.returncode == 2, (r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"{script}: error: ") and reason in lines[0], r.stderr
        assert str(bad) in lines[0]
    assert not list(bad.parent.glob("*.png")) and not (bad.parent / "report.md").exists()


@pytest.mark.parametrize("script", ALL_SCRIPTS)
def test_missing_file(script, tmp_path, make_json):
    for args in args_for(script, tmp_path / "absent.json", make_json(only={"ceiling"})):
        r = run(script, *args)
        assert r.returncode == 2 and r.stderr.strip() == f"{script}: error: {tmp_path / 'absent.json'}: no such file"
