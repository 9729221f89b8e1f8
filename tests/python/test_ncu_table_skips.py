"""ncu_table on the committed --ncu run of 2026-12-02: benchmarks the run skipped (the BF16 kernels at 4092,
K % 8 != 0) launched nothing under the profiler, so they have no group in ncu.csv; the table pairs the rest."""
from conftest import RESULTS_DIR, call

RUN = RESULTS_DIR / "h200" / "20261202T075839Z"


def test_skipped_benchmarks_have_no_profiled_group(tmp_path):
    out = tmp_path / "ncu.md"
    assert call("ncu_table", RUN / "ncu.csv.gz", RUN / "ncu_order.txt", RUN / "benchmarks.json.gz", "-o", out).returncode == 0
    text = out.read_text()
    # paired in order: ldmatrix's measured wavefronts per instruction equal the model's (1, 2, 4; 8, 16, 32 conflicted)
    assert "| smem_banks/ldmatrix/x:4/trans:1/layout:conflicted | 32 | 32 | yes |" in text
    assert "| smem_banks/ldmatrix/x:1/trans:0/layout:padded | 1 | 1 | yes |" in text
