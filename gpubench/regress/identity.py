"""What a run is, from its suite JSON context: which GPU and which code ran it, the code version of a
benchmark's family, the board part number, and the results folder name of a GPU model. Pure functions over
context dicts; the verdicts (verdict.py) and the noise profiles (profile.py) build on them."""
import re

BOARD = "board_part_number"  # context key (gpubench, from NVML)


def _flag(ctx, key):
    """A yes/no context value as bool; None where absent or unreadable."""
    v = ctx.get(key)
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return v != 0
    if isinstance(v, str) and v.strip().lower() in ("true", "1", "yes", "dirty"):
        return True
    if isinstance(v, str) and v.strip().lower() in ("false", "0", "no", "clean"):
        return False
    return None


def same_code_and_machine(ctx_a, ctx_b):
    """-> (machine, code) for two suite JSON contexts.

    machine: "same GPU" (gpu_uuid equal), "same GPU model" (gpu_name equal), "different GPU", or "unknown"
    (no gpu_name on a side). code: "same code" (git_commit equal and neither dirty), else "same benchmark
    code" (bench_code equal: what gpubench is built from is the same, the commits differ elsewhere or a tree
    is dirty elsewhere), else "different code" (git_commit, suite_version or both bench_codes differ: what
    gpubench is built from differs, whatever the commits say), or "unknown" (keys
    absent, as in files older than these keys, or a dirty tree: uncommitted changes may differ)."""
    ua, ub = ctx_a.get("gpu_uuid"), ctx_b.get("gpu_uuid")
    na, nb = ctx_a.get("gpu_name"), ctx_b.get("gpu_name")
    if ua and ub and ua == ub:
        machine = "same GPU"
    elif na and nb:
        machine = "same GPU model" if na == nb else "different GPU"
    else:
        machine = "unknown"
    ca, cb = ctx_a.get("git_commit"), ctx_b.get("git_commit")
    va, vb = ctx_a.get("suite_version"), ctx_b.get("suite_version")
    same_version = not (va and vb and va != vb)
    if ca and cb and ca == cb and same_version and _flag(ctx_a, "git_dirty") is False and _flag(ctx_b, "git_dirty") is False:
        code = "same code"
    elif bench_code(ctx_a) and bench_code(ctx_a) == bench_code(ctx_b):
        code = "same benchmark code"
    elif (ca and cb and ca != cb) or not same_version or (bench_code(ctx_a) and bench_code(ctx_b)):
        code = "different code"
    else:
        code = "unknown"
    return machine, code


def bench_code(ctx):
    """The context's bench_code (run_all.sh: a hash of what gpubench is built from), or None where absent or
    "unknown"."""
    v = ctx.get("bench_code")
    return v if isinstance(v, str) and v and v != "unknown" else None


def slug(gpu_name):
    """The results folder name of a GPU model, as run_all.sh makes it: "NVIDIA H200" -> "h200"."""
    s = re.sub(r"^nvidia ", "", gpu_name.lower())
    return re.sub(r"[^a-z0-9]+", "-", s).strip("-")


def family_of(name):
    """A benchmark's family: its name's first segment ("hierarchy/read/ws:1" -> "hierarchy")."""
    return name.split("/", 1)[0]


def code_version(ctx, name):
    """The code version of a benchmark's family in a run's context: key "<family>_code_version" (e.g.
    hierarchy_code_version), "1" where absent (runs from before a family had one)."""
    return str(ctx.get(family_of(name) + "_code_version", "1"))


def _newest(versions):
    """The newest of some code versions (numeric strings: "10" > "9")."""
    return max(versions, key=lambda v: (len(v), v))
