"""The guide's style rule for device code: no kernel (a __global__ function) over ~80 lines, counted from the
line that says __global__ to its closing brace. A kernel that grows past it splits into device functions, as
gemm/7_warptile.cuh's warptile_fetch / warptile_stash / warptile_compute do."""
import pytest

from conftest import ROOT

LIMIT = 80
SOURCES = sorted(p for d in ("gemm", "micro", "harness") for p in (ROOT / d).rglob("*.cu*"))


def kernel_lengths(text):
    """[(line number, lines)] of every __global__ function in text (braces counted; comments are not parsed)."""
    lines, out = text.split("\n"), []
    for i, line in enumerate(lines):
        if "__global__" not in line or line.lstrip().startswith("//"):
            continue
        depth, opened = 0, False
        for j in range(i, len(lines)):
            depth += lines[j].count("{") - lines[j].count("}")
            opened = opened or "{" in lines[j]
            if opened and depth == 0:
                out.append((i + 1, j - i + 1))
                break
    return out


def test_kernel_lengths_counts_a_kernel_to_its_closing_brace():
    src = "// __global__ in a comment\n__global__ void k(int n) {\n  if (n) {\n    n++;\n  }\n}\nint x;\n"
    assert kernel_lengths(src) == [(2, 5)]
    assert kernel_lengths("__global__ void\nlong_kernel() {\n" + "  ;\n" * 90 + "}\n") == [(1, 93)]


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_no_kernel_is_longer_than_the_limit(path):
    long = [(line, n) for line, n in kernel_lengths(path.read_text()) if n > LIMIT]
    assert not long, f"{path.relative_to(ROOT)}: kernels over {LIMIT} lines (line, lines): {long}"
