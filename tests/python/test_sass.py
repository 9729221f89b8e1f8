"""gpubench/analysis/sass.py: the register-bank count of FFMA read from cuobjdump -sass text.

The fixture is cuobjdump -sass of gemm.cu's blocktile_2d_kernel and vectorized_kernel<true> (the 16-byte path
the 1024^3 and 4096^3 shapes take), built by run_all.sh on an H200 (nvcc 13.0, sm_90), encodings dropped."""
import gzip
import os

import pytest

from gpubench.analysis import sass

FIXTURE = os.path.join(os.path.dirname(__file__), "data", "sass_blocktile_2d_vectorized.txt.gz")
BLOCKTILE_2D = "_ZN2mh4gemm19blocktile_2d_kernelEiiifPKfS2_fPf"
VECTORIZED = "_ZN2mh4gemm17vectorized_kernelILb1EEEviiifPKfS3_fPf"


def ins(text, address=0):
    """One Instruction from 'OP a, b, c' text."""
    op, _, rest = text.partition(" ")
    return sass.Instruction(address, op, tuple(o.strip() for o in rest.split(",")) if rest else ())


@pytest.mark.parametrize("text, extra", [
    ("FFMA R1, R2, R4, R6", 2),           # three reads in bank 0
    ("FFMA R1, R2.reuse, R4, R6", 1),     # the reuse cache serves one
    ("FFMA R1, R2, R3, R5", 1),           # bank 1 twice
    ("FFMA R1, R2, R3, R4", 1),           # bank 0 twice (R2, R4)
    ("FFMA R1, R2, R3, RZ", 0),           # RZ is no read
    ("FFMA R1, R2.reuse, R4.reuse, R6", 0),
    ("FFMA R1, -R2, |R4|, R7", 1),        # modifiers do not hide a register
    ("FFMA R1, R2, c[0x0][0x10], R4", 1),  # a constant is no register read
    ("FFMA R1, R2, 0.5, R3", 0),
])
def test_extra_reads_follow_the_two_bank_rule(text, extra):
    assert sass.extra_reads(ins(text)) == extra


def test_parse_and_loops_of_a_small_listing():
    text = """
        Function : k
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   FFMA R2, R4, R6, R8 ;
        /*0020*/                   FFMA R3, R5.reuse, R7, R9 ;
        /*0030*/              @!P0 BRA 0x10 ;
        /*0040*/                   EXIT ;
        Function : plain
        /*0000*/                   FFMA R2, R4, R6, R8 ;
        /*0010*/                   EXIT ;
    """
    fns = sass.parse(text)
    assert list(fns) == ["k", "plain"]
    assert [i.opcode for i in fns["k"]] == ["MOV", "FFMA", "FFMA", "BRA", "EXIT"]
    assert sass.branch_target(fns["k"][3]) == 0x10
    assert sass.loops(fns["k"]) == [(1, 3)]
    assert sass.main_loop_counts(fns["k"]) == {"loop_ffma": 2, "loop_extra_reads": 3, "loop_instructions": 3}
    assert sass.main_loop_counts(fns["plain"]) is None  # no loop
    assert sass.summarize(text) == {"k": {"loop_ffma": 2, "loop_extra_reads": 3, "loop_instructions": 3}}


def test_kernel_5_reads_its_operands_from_one_bank_far_more_often_than_kernel_6():
    with gzip.open(FIXTURE, "rt") as f:
        counts = sass.summarize(f.read())
    # both loops: 8 k x 8 x 8 FFMA per tile; kernel 5's allocation puts 442 extra reads on them, kernel 6's 167
    assert counts[BLOCKTILE_2D] == {"loop_ffma": 512, "loop_extra_reads": 442, "loop_instructions": 621}
    assert counts[VECTORIZED] == {"loop_ffma": 512, "loop_extra_reads": 167, "loop_instructions": 579}


def test_cli_refuses_a_missing_binary_and_an_existing_output(tmp_path, capsys, monkeypatch):
    out = tmp_path / "banks.json"
    out.write_text("keep")
    assert sass.main([str(tmp_path / "none"), "-o", str(out)]) == 2
    assert "exists" in capsys.readouterr().err
    assert out.read_text() == "keep"
    monkeypatch.setattr(sass, "cuobjdump", lambda: None)
    assert sass.main([str(tmp_path / "none"), "-o", str(tmp_path / "new.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no cuobjdump" in err[0]
    assert not (tmp_path / "new.json").exists()
