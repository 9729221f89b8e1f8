#!/usr/bin/env python3
"""Register-bank reads of the FFMA in each kernel's main loop, read from the SASS (cuobjdump -sass).

The register file of an SM sub-partition has two banks (register index mod 2, sm_70 and later). An FFMA
reads up to three source registers; a source marked .reuse comes from the operand reuse cache instead, and
RZ is no read. When n of the read sources sit in one bank the instruction needs n - 1 extra read cycles
(`extra_reads`): the cost the issue/ffma_banks benchmarks measure (docs/families/issue.md, "Register
banks"). The model counts FFMA from the source; this module says, per kernel, how many extra reads the
compiler's register allocation adds per FFMA of the loop that does the work (the loop with the most FFMA).

usage: python3 -m gpubench sass BINARY [-o FILE] [--force]   (runs cuobjdump -sass BINARY; writes FILE,
       default register_banks.json: {"<mangled function>": {"loop_ffma", "loop_extra_reads",
       "loop_instructions"}})
Exit status: 0; 2 for a missing or unreadable binary, no cuobjdump, or an existing FILE without --force.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

PROG = "sass"
OUT_FILE = "register_banks.json"
BANKS = 2
_FUNCTION = re.compile(r"^\s*Function : (\S+)")
_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")
_REGISTER = re.compile(r"^-?\|?R(\d+)(\.reuse)?\|?$")


@dataclass(frozen=True)
class Instruction:
    address: int
    opcode: str       # with modifiers: "FFMA", "LDS.128", "BRA"
    operands: tuple   # as printed, destination first


def parse(text):
    """cuobjdump -sass text -> {function: [Instruction]} in address order."""
    out, current = {}, None
    for line in text.splitlines():
        if (m := _FUNCTION.match(line)):
            current = out.setdefault(m.group(1), [])
        elif current is not None and (m := _INSTRUCTION.match(line)):
            operands = tuple(o.strip() for o in m.group(4).split(",")) if m.group(4).strip() else ()
            current.append(Instruction(int(m.group(1), 16), m.group(3), operands))
    return out


def branch_target(ins):
    """The address a BRA jumps to, or None."""
    if ins.opcode.split(".")[0] != "BRA" or not ins.operands:
        return None
    m = re.match(r"`?\(?\.?L?_?x?_?(0x[0-9a-f]+)", ins.operands[-1])
    return int(m.group(1), 16) if m else None


def loops(instructions):
    """[(first, last)] instruction index ranges closed by a backward branch."""
    index = {ins.address: i for i, ins in enumerate(instructions)}
    out = []
    for i, ins in enumerate(instructions):
        target = branch_target(ins)
        if target is not None and target <= ins.address and target in index:
            out.append((index[target], i))
    return out


def is_ffma(ins):
    return ins.opcode.split(".")[0] == "FFMA"


def extra_reads(ins):
    """Extra register-read cycles of one instruction: for its source registers read from the file (not
    .reuse, not RZ), the most in one bank minus one."""
    per_bank = [0] * BANKS
    for operand in ins.operands[1:]:
        m = _REGISTER.match(operand)
        if m and not m.group(2):
            per_bank[int(m.group(1)) % BANKS] += 1
    return max(0, max(per_bank) - 1)


def main_loop_counts(instructions):
    """{"loop_ffma", "loop_extra_reads", "loop_instructions"} of the loop with the most FFMA (an innermost
    one where loops nest: the fewest instructions among those tied), or None when no loop has an FFMA."""
    best = None
    for first, last in loops(instructions):
        body = instructions[first:last + 1]
        ffma = [ins for ins in body if is_ffma(ins)]
        key = (len(ffma), -len(body))
        if ffma and (best is None or key > best[0]):
            best = (key, {"loop_ffma": len(ffma), "loop_extra_reads": sum(map(extra_reads, ffma)),
                          "loop_instructions": len(body)})
    return best[1] if best else None


def summarize(text):
    """{function: main_loop_counts} of every function with an FFMA loop."""
    return {name: c for name, ins in parse(text).items() if (c := main_loop_counts(ins))}


def cuobjdump():
    """The cuobjdump beside nvcc (PATH, then CUDA_HOME / CUDA_PATH, then /usr/local/cuda), or None."""
    found = shutil.which("cuobjdump")
    if found:
        return found
    nvcc = shutil.which("nvcc")
    roots = [os.path.dirname(nvcc)] if nvcc else []
    roots += [os.path.join(os.environ[k], "bin") for k in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(k)]
    roots.append("/usr/local/cuda/bin")
    return next((p for r in roots if os.access(p := os.path.join(r, "cuobjdump"), os.X_OK)), None)


def disassemble(binary):
    """cuobjdump -sass BINARY's text; ValueError (one line) when it cannot be had."""
    tool = cuobjdump()
    if tool is None:
        raise ValueError("no cuobjdump (looked on PATH, beside nvcc, in CUDA_HOME, CUDA_PATH, /usr/local/cuda)")
    if not os.path.isfile(binary):
        raise ValueError(f"{binary}: no such file")
    done = subprocess.run([tool, "-sass", binary], capture_output=True, text=True)
    if done.returncode != 0:
        raise ValueError(f"{tool} -sass {binary} failed: {done.stderr.strip().splitlines()[-1:] or done.returncode}")
    return done.stdout


def main(argv=None):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("binary")
    p.add_argument("-o", "--output", default=OUT_FILE)
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")
    args = p.parse_args(argv)
    if os.path.exists(args.output) and not args.force:
        print(f"{PROG}: error: {args.output} exists (--force overwrites it)", file=sys.stderr)
        return 2
    try:
        counts = summarize(disassemble(args.binary))
    except ValueError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    with open(args.output, "w") as f:
        json.dump(counts, f, indent=1, sort_keys=True)
    print(f"{PROG}: {len(counts)} functions with an FFMA loop -> {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
