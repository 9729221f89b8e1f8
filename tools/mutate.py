#!/usr/bin/env python3
"""Mutation check: applies each mutant of tools/mutants.json in turn to a copy of the tree, runs the
test command that must catch it, and prints a table (killed / survived). Exit 0 when every mutant was
killed, 1 when one survived, 2 when the check itself could not run (a snippet not found once, a test
command that fails on the unmutated tree).

The real tree is never written: its tracked and untracked (not ignored) files are copied to a work folder
(default /tmp/mh-mutate-<user>/<tree name>), only files whose content changed since the last run, so a
build folder kept there between runs and between mutants rebuilds incrementally. Each mutant is undone in
the copy as soon as its command ends, Ctrl-C included.

tools/mutants.json:
  {"setup": {"<name>": "<shell command run once in the copy before the mutants that name it>"},
   "mutants": [{"name": "...", "file": "path/in/tree", "original": "exact text, found exactly once",
                "replacement": "...", "command": "<shell command; nonzero exit = killed>",
                "setup": "<name>" (optional), "why": "what it stands for" (optional)}]}
Commands run in the copy with {tree} (the copy) and {build} (its build folder) substituted; a Python
mutant's command runs pytest, e.g. "{python} -m pytest -q tests/python/test_x.py -k name" ({python}: this
interpreter, or MH_MUTATE_PYTHON).

usage: tools/mutate.py [--only NAME ...] [--work DIR] [--list] [--timeout S]
"""
import argparse
import getpass
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load(path):
    spec = json.loads(Path(path).read_text())
    for m in spec["mutants"]:
        missing = {"name", "file", "original", "replacement", "command"} - m.keys()
        if missing:
            sys.exit(f"mutate.py: {path}: mutant {m.get('name', '?')} lacks {sorted(missing)}")
        if m.get("setup") and m["setup"] not in spec.get("setup", {}):
            sys.exit(f"mutate.py: {path}: mutant {m['name']}: no setup named {m['setup']!r}")
    return spec


def sync(tree):
    """Copies the tree's tracked and untracked files into `tree`, rewriting only those that differ, and
    removes what the tree no longer has (CMake globs the sources)."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "-co", "--exclude-standard"],
                            check=True, capture_output=True).stdout.decode().split("\0")
    keep = set(filter(None, listed))
    for path in [p for p in tree.rglob("*") if p.is_file() and not p.is_symlink()]:
        if str(path.relative_to(tree)) not in keep:
            path.unlink()
    for rel in keep:
        src, dst = ROOT / rel, tree / rel
        if not src.is_file():
            continue  # deleted but still tracked, or a submodule
        data = src.read_bytes()
        if not dst.is_file() or dst.read_bytes() != data:
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(data)


def run(command, tree, build, timeout):
    cmd = command.format(tree=tree, build=build, python=os.environ.get("MH_MUTATE_PYTHON", sys.executable))
    try:
        p = subprocess.run(cmd, shell=True, cwd=tree, capture_output=True, text=True, timeout=timeout)
        return p.returncode, (p.stdout + p.stderr)[-2000:]
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"


def check_mutant(m, tree, build, timeout):
    """Applies m to the copy, runs its command, undoes it (always); returns (result, seconds, tail)."""
    path = tree / m["file"]
    original = path.read_text()
    if original.count(m["original"]) != 1:
        return f"error: snippet found {original.count(m['original'])} times", 0.0, ""
    start = time.time()
    try:
        path.write_text(original.replace(m["original"], m["replacement"]))
        rc, tail = run(m["command"], tree, build, timeout)
    finally:
        path.write_text(original)
    result = "killed" if rc != 0 else "survived"
    if rc is None:
        result = "killed (timeout)"
    return result, time.time() - start, tail


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", default=str(ROOT / "tools" / "mutants.json"))
    ap.add_argument("--only", nargs="*", help="names of the mutants to run (default: all)")
    ap.add_argument("--work", help="work folder (the copy and its build folder)")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per command")
    a = ap.parse_args()
    spec = load(a.mutants)
    mutants = [m for m in spec["mutants"] if not a.only or m["name"] in a.only]
    if a.only and len(mutants) != len(set(a.only)):
        sys.exit(f"mutate.py: no mutant named {sorted(set(a.only) - {m['name'] for m in mutants})}")
    if a.list:
        for m in mutants:
            print(f"{m['name']:32} {m['file']:32} {m.get('why', '')}")
        return 0
    work = Path(a.work or f"/tmp/mh-mutate-{getpass.getuser()}/{ROOT.name}")
    tree, build = work / "tree", work / "build"
    tree.mkdir(parents=True, exist_ok=True)
    sync(tree)

    # Each setup once, then each distinct command on the unmutated copy: it must pass, or a "killed"
    # would mean nothing.
    for name in dict.fromkeys(m["setup"] for m in mutants if m.get("setup")):
        rc, tail = run(spec["setup"][name], tree, build, a.timeout)
        if rc != 0:
            print(f"mutate.py: setup {name} failed:\n{tail}", file=sys.stderr)
            return 2
    for command in dict.fromkeys(m["command"] for m in mutants):
        rc, tail = run(command, tree, build, a.timeout)
        if rc != 0:
            print(f"mutate.py: the unmutated tree fails `{command}`:\n{tail}", file=sys.stderr)
            return 2

    rows = []
    for m in mutants:
        result, seconds, tail = check_mutant(m, tree, build, a.timeout)
        rows.append((m["name"], m["file"], result, seconds))
        print(f"{m['name']}: {result} ({seconds:.0f} s)", file=sys.stderr, flush=True)
        if result.startswith("error"):
            return 2
    # The copy's build holds the last mutant's objects: rebuild unmutated ones next time (the files
    # were restored with a new mtime, so make does).
    width = max(len(r[0]) for r in rows)
    print(f"| {'mutant':{width}} | {'file':30} | result           | s    |")
    print(f"|-{'-' * width}-|-{'-' * 30}-|------------------|------|")
    for name, file, result, seconds in rows:
        print(f"| {name:{width}} | {file:30} | {result:16} | {seconds:4.0f} |")
    survived = [r[0] for r in rows if r[2] == "survived"]
    print(f"{len(rows) - len(survived)} of {len(rows)} killed" + (f"; survived: {', '.join(survived)}" if survived else ""))
    return 1 if survived else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # the mutant was undone by check_mutant's finally
        sys.exit(130)
