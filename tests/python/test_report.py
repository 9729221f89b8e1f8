"""report.py: the Markdown has the expected sections, right headline numbers, and links only existing PNGs."""
import json
import re

from conftest import PLOT_SCRIPTS, run
from suite_json import load

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
    assert "| Compute capability | 9.0 |" in facts and "| SMs | 132 |" in facts and "| Driver | 550.54.15 |" in facts
    # one row per benchmark: 2 ops x 3 levels x 9 strides
    assert len([l for l in section(text, "## Coalescing").splitlines() if l.startswith("| read") or
                l.startswith("| write")]) == 54
    assert "## Benchmarks that reported errors" not in text and "## Other benchmarks" not in text


def test_headline_numbers(suite_file):
    s, text = load(suite_file), report(suite_file)
    hbm = s.value("coalescing/read/hbm/stride:1", "useful_bytes_per_second") / s.value("ceiling/memcpy_d2d", "bytes_per_second")
    assert headline(text, "HBM read, stride 1 / memcpy D2D") == f"{hbm * 100:.2f} %"
    smem = headline(text, "smem 4-byte, stride 32: cycles/request pad 0 / pad 1 / swizzle")
    pad0 = s.value("smem_banks/throughput/width:4/stride:32/pad:0", "cycles_per_request")
    pad1 = s.value("smem_banks/throughput/width:4/stride:32/pad:1", "cycles_per_request")
    assert smem.startswith(f"{pad0:.2f} / {pad1:.2f} / ") and f"pad 0 is {pad0 / pad1:.2f}× pad 1" in smem
    shape = "m:4092/n:4092/k:4092"
    for kernel in ("naive", "coalesced", "smem", "smem_conflicted", "smem_padded"):
        pct = s.value(f"gemm/{kernel}/{shape}", "flops_per_second") / s.value(f"gemm/cublas/{shape}", "flops_per_second")
        assert headline(text, f"GEMM {kernel} at 4092³, % of cuBLAS") == f"{pct * 100:.2f} %"


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


def test_gemm_bounds_section_only_with_model_counters(make_json):
    """plots/bounds.py's table appears once the GEMM benchmarks carry the counting model's model_* counters."""
    path = make_json()
    assert "## GEMM bounds" not in report(path)
    doc = json.loads(path.read_text())
    for e in doc["benchmarks"]:
        if e["run_name"].startswith("gemm/") and "/cublas/" not in e["run_name"]:
            n = int(e["run_name"].split("/m:")[1].split("/")[0])
            e.update(model_ffma_thread=n**3, model_ld_requests=n**3 / 16, model_ld_lines=n**3 / 8,
                     model_l2_read_sectors=n**3 / 32, model_dram_bytes=12 * n * n, model_lds_wavefronts=n**3 / 16,
                     model_sts_wavefronts=n * n / 4, model_blocks_per_sm=2, model_block_barriers=n**3 / 4096)
    path.write_text(json.dumps(doc))
    bounds = section(report(path), "## GEMM bounds (model counts × measured unit costs)")
    rows = [l for l in bounds.splitlines() if l.startswith("| gemm/")]
    assert len(rows) == 5 and all("/m:4092/" in l for l in rows)
