"""report.py: the Markdown has the expected sections, right headline numbers, and links only existing PNGs."""
import json
import re

import synth
from conftest import PLOT_SCRIPTS, run
from gpubench.suite_json import load
from gpubench.tables import num

SECTIONS = ["## Device", "## Headlines", "## Coalescing", "## Ceilings", "## Shared-memory banks", "## Barriers",
            "## GEMM", "## Pictures"]


def report(path, *args):
    r = run("report", path, *args)
    assert r.returncode == 0, r.stderr
    out = args[args.index("-o") + 1] if "-o" in args else path.parent / "report.md"
    return out.read_text()


def section(text, title):
    return text.split(title + "\n", 1)[1].split("\n## ", 1)[0]


def headline(text, what):
    m = re.search(r"^\| " + re.escape(what) + r" \| (.*) \|$", text, re.M)
    assert m, f"no headline {what!r}"
    return m.group(1)


def test_sections_and_device_facts(suite_file):
    text = report(suite_file)
    assert text.startswith("# GPU memory-hierarchy microbenchmarks: NVIDIA H200")
    positions = [text.index(s + "\n") for s in SECTIONS]
    assert positions == sorted(positions)
    facts = section(text, "## Device")
    driver = synth.recorded()["context"]["driver_version"]
    assert "| Compute capability | 9.0 |" in facts and "| SMs | 132 |" in facts and f"| Driver | {driver} |" in facts
    # one row per benchmark
    coalescing = [n for n, *_ in synth.benchmarks() if n.startswith("coalescing/")]
    assert len([l for l in section(text, "## Coalescing").splitlines() if l.startswith("| read") or
                l.startswith("| write")]) == len(coalescing) == 60
    assert "## Benchmarks that reported errors" not in text and "## Other benchmarks" not in text


def test_headline_numbers(suite_file):
    s, text = load(suite_file), report(suite_file)
    hbm = s.value("coalescing/read/hbm/stride:1", "useful_bytes_per_second") / s.value("ceiling/memcpy_d2d", "bytes_per_second")
    assert headline(text, "HBM read, stride 1 / memcpy D2D") == f"{num(hbm, 100)} %"
    smem = headline(text, "smem 4-byte, stride 32: cycles/request pad 0 / pad 1 / swizzle")
    pad0 = s.value("smem_banks/throughput/width:4/stride:32/pad:0", "cycles_per_request")
    pad1 = s.value("smem_banks/throughput/width:4/stride:32/pad:1", "cycles_per_request")
    assert smem.startswith(f"{num(pad0)} / {num(pad1)} / ") and f"pad 0 is {num(pad0 / pad1)}× pad 1" in smem
    shape = "m:4092/n:4092/k:4092"
    for kernel in ("naive", "coalesced", "smem", "smem_conflicted", "smem_padded"):
        pct = s.value(f"gemm/{kernel}/{shape}", "flops_per_second") / s.value(f"gemm/cublas/{shape}", "flops_per_second")
        assert headline(text, f"GEMM {kernel} at 4092³, % of cuBLAS") == f"{num(pct, 100)} %"


def test_pictures_link_only_existing_pngs(make_json, tmp_path):
    path = make_json(subdir="run")
    assert "None yet" in section(report(path), "## Pictures")
    assert run("stride", path).returncode == 0
    pics = section(report(path), "## Pictures")
    assert "![stride.png](stride.png)" in pics and "banks.png" not in pics
    for script in PLOT_SCRIPTS:
        assert run(script, path).returncode == 0
    out = tmp_path / "docs" / "r.md"
    out.parent.mkdir()
    pics = section(report(path, "-o", out), "## Pictures")
    assert re.findall(r"\]\((.*?)\)", pics) == [f"../run/{p}.png" for p in PLOT_SCRIPTS]


def test_partial_run_and_errors(make_json):
    path = make_json(only={"gemm", "smem_banks"}, errors={"gemm/naive/m:512/n:512/k:512": "CUDA error: too slow"})
    text = report(path)
    assert "## Coalescing" not in text and "## Barriers" not in text and "## GEMM" in text
    assert headline(text, "HBM read, stride 1 / memcpy D2D").startswith("n/a (needs")
    errors = section(text, "## Benchmarks that reported errors")
    assert "| gemm/naive/m:512/n:512/k:512 | CUDA error: too slow |" in errors
    assert "| naive | 512 |" not in section(text, "## GEMM")


def test_single_repetition_has_no_cv(make_json):
    text = report(make_json(reps=1))
    row = next(l for l in section(text, "## Ceilings").splitlines() if l.startswith("| memcpy_d2d"))
    assert row.endswith("| – |")


def test_unknown_family_gets_generic_table(make_json):
    path = make_json(only={"ceiling"})
    doc = json.loads(path.read_text())
    extra = dict(doc["benchmarks"][0], name="tlb/stride:4096/manual_time", run_name="tlb/stride:4096/manual_time")
    extra["bytes_per_second"] = 1.5e11
    doc["benchmarks"].append(extra)
    path.write_text(json.dumps(doc))
    other = section(report(path), "## Other benchmarks")
    assert "| tlb/stride:4096 |" in other and "bytes_per_second=150,000,000,000" in other


def test_stdout_output(make_json):
    r = run("report", make_json(), "-o", "-")
    assert r.returncode == 0 and r.stdout.startswith("# GPU memory-hierarchy microbenchmarks")


def test_gemm_bounds_section_only_with_model_predictions(make_json):
    """gpubench/analysis/bounds.py's table appears when the GEMM benchmarks carry the counting model's model_* predictions
    (the recorded run has them), one row per modelled kernel and shape with m = 4092 or 4096."""
    path = make_json()
    s = load(path)
    expected = [r.name for r in s.ok("gemm") if r.fields["kernel"] != "cublas" and r.fields["m"] in (4092, 4096)]
    bounds = section(report(path), "## GEMM bounds (model counts × measured unit costs)")
    assert [l.split(" | ")[0].lstrip("| ") for l in bounds.splitlines() if l.startswith("| gemm/")] == expected
    assert len(expected) == 15
    doc = json.loads(path.read_text())
    for e in doc["benchmarks"]:
        for k in [k for k in e if k.startswith("model_")]:
            del e[k]
    path.write_text(json.dumps(doc))
    assert "## GEMM bounds" not in report(path)


def test_skipped_benchmarks_are_listed_with_reasons(make_json):
    name = "sync/syncwarp/threads:1024/blocks_per_sm:2"
    text = report(make_json(skips={name: "needs 2 resident blocks of 1024 threads"}))
    assert f"| {name} | needs 2 resident blocks of 1024 threads |" in section(text, "## Skipped on this GPU")
    assert "## Benchmarks that reported errors" not in text
    assert f"| syncwarp | 1024 | 2 |" not in section(text, "## Barriers")
