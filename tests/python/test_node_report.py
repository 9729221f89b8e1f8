"""gpubench/regress/node_report.py: GPUs side by side, a slow GPU or link flagged against its siblings' median, exit 0/1/2."""
import json
import math

import pytest

import link_synth
from gpubench import suite_json
from gpubench.regress import node_report
from conftest import ROOT, call, committed, run, run_file

SHAPES = ("1.7.1", "1.8.3")


def node(tmp_path, n=2, shape="1.8.3", scales=None, extras=None, **kw):
    """n per-GPU files (GPU i peers with GPU (i+1) % n); scales[i]: {name prefix: factor on that GPU's rates}."""
    paths = []
    for i in range(n):
        p = tmp_path / f"gpu{i}" / "benchmarks.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        link_synth.write(p, device=i, peer=(i + 1) % n if n > 1 else None, shape=shape, seed=i,
                         scale=(scales or {}).get(i), context_extra=(extras or {}).get(i), **kw)
        paths.append(p)
    return paths


@pytest.mark.parametrize("shape", SHAPES)
def test_healthy_node_flags_nothing(tmp_path, shape):
    paths = node(tmp_path, n=4, shape=shape)
    r = call("node_report", *paths)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Nothing flagged" in r.stdout
    assert "| GPU 0 |" in r.stdout and "| GPU 3 |" in r.stdout  # labelled by the peer records' device counter
    assert "link/peer/uni/sm/bytes:1073741824" in r.stdout      # the links, side by side
    assert "context: NVLinks" in r.stdout


@pytest.mark.parametrize("shape", SHAPES)
def test_slow_host_link_is_flagged_on_that_gpu_only(tmp_path, shape):
    paths = node(tmp_path, n=4, shape=shape, scales={2: {"link/h2d/pinned": 0.8}})
    r = call("node_report", *paths)
    assert r.returncode == 1, r.stdout + r.stderr
    flagged = r.stdout.split("## Flagged")[1].split("##")[0]
    rows = [line for line in flagged.splitlines() if line.startswith("| link/")]
    assert rows and all("| GPU 2 |" in line for line in rows)
    assert {line.split(" | ")[0][2:] for line in rows} >= {"link/h2d/pinned/ce/bytes:1073741824",
                                                            "link/h2d/pinned/sm/bytes:1073741824"}
    assert not any("d2h" in line for line in rows)
    assert "0.800" in flagged




def test_margin_threshold(tmp_path):
    # GPU 1's peer links 7 % slower: inside the default 10 %, outside 5 %.
    paths = node(tmp_path, n=3, scales={1: {"link/peer": 0.93}})
    assert call("node_report", *paths).returncode == 0
    r = call("node_report", "--margin", "5", *paths)
    assert r.returncode == 1
    assert "link/peer/uni/ce/bytes:1073741824" in r.stdout.split("## Flagged")[1]


def test_lower_is_better_counters(tmp_path):
    # A slower chase on GPU 0 means more cycles per load: flagged, not praised.
    paths = node(tmp_path, n=2)
    doc = json.loads(paths[0].read_text())
    for e in doc["benchmarks"]:
        if e["name"].startswith("latency/link/host"):
            e["cycles_per_load"] *= 1.5
    paths[0].write_text(json.dumps(doc))
    r = call("node_report", *paths)
    assert r.returncode == 1
    flagged = r.stdout.split("## Flagged")[1].split("##")[0]
    assert "latency/link/host | cycles_per_load | GPU 0" in flagged and "GPU 1" not in flagged


def test_degraded_pcie_width_in_context_is_flagged(tmp_path):
    paths = node(tmp_path, n=4, extras={3: {"pcie_width": "8", "pcie_peak_bytes_per_second": "31507692307"}})
    r = call("node_report", *paths)
    assert r.returncode == 1
    flagged = r.stdout.split("## Flagged")[1]
    assert "context: PCIe width | pcie_width | GPU 3" in flagged


def test_single_gpu_is_not_an_error(tmp_path):
    r = call("node_report", *node(tmp_path, n=1))
    assert r.returncode == 0, r.stderr
    assert "nothing to compare" in r.stdout


def test_output_file_and_all(tmp_path):
    paths = node(tmp_path, n=2)
    out = tmp_path / "node.md"
    r = run("node_report", "--all", "-o", out, *paths)  # the real command line (python3 -m gpubench node_report)
    assert r.returncode == 0 and r.stderr == ""
    text = out.read_text()
    assert text.strip() == r.stdout.strip()
    # --all: one row for each benchmark both GPUs measured and each link fact of the context, nothing else
    table = text.split("## Every compared entry")[1]
    listed = {line.split(" | ")[0][2:].removesuffix(" (not judged)") for line in table.splitlines()
              if line.startswith("| ") and not line.startswith("| entry |")}
    both = set.intersection(*({r.name for r in suite_json.load(p).ok()} for p in paths))
    assert listed == both | {f"context: {label}" for _, label in node_report.CONTEXT} and "ceiling/fma" in listed


@pytest.mark.parametrize("bad, reason", [
    ("same file", "the same file is given twice"),
    ("same gpu", "are the same GPU"),
    ("not json", "not JSON"),
    ("absent", "no such file"),
    ("margin", "--margin must be"),
])
def test_unusable_input_exits_2_with_one_line(tmp_path, bad, reason):
    paths = node(tmp_path, n=2)
    args = list(paths)
    if bad == "same file":
        args = [paths[0], paths[1], paths[0]]
    elif bad == "same gpu":
        doc = json.loads(paths[1].read_text())
        doc["context"]["gpu_uuid"] = json.loads(paths[0].read_text())["context"]["gpu_uuid"]
        paths[1].write_text(json.dumps(doc))
    elif bad == "not json":
        paths[1].write_text("{ nope")
    elif bad == "absent":
        args = [paths[0], tmp_path / "absent.json"]
    elif bad == "margin":
        args = ["--margin", "150", *paths]
    r = call("node_report", *args)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("node_report: error: ") and reason in lines[0], r.stderr


def test_a_gap_inside_the_noise_is_not_flagged(tmp_path):
    # The same 15 % slower peer links: flagged from quiet repetitions, not from ones scattering by ~15 %.
    quiet = node(tmp_path / "quiet", n=2, scales={1: {"link/peer": 0.85}})
    assert call("node_report", *quiet).returncode == 1
    noisy = node(tmp_path / "noisy", n=2, scales={1: {"link/peer": 0.85}}, noise=0.15)
    r = call("node_report", *noisy)
    assert "link/peer/uni/ce/bytes:1073741824 | bytes_per_second" not in r.stdout


# ---- The committed two-H200 run (results/h200/20261130T223722Z): two identical, healthy GPUs ----

REAL = ROOT / "results" / "h200" / "20261130T223722Z"
RATES = ("bytes_per_second", "useful_bytes_per_second", "flops_per_second")


def real_files():
    if not REAL.is_dir():
        pytest.skip("the committed two-H200 run is not in this tree")
    return [run_file(REAL / f"gpu{i}") for i in (0, 1)]


def slowed(src, dst, name, factor):
    """A copy of src with benchmark `name` (every repetition and aggregate but the cv) running at factor x its
    rate: rates times factor, times divided by it."""
    doc = suite_json.read_json(src)
    hit = 0
    for e in doc["benchmarks"]:
        if e["name"].startswith(name + "/") and e.get("aggregate_name") != "cv":
            for k in RATES:
                if k in e:
                    e[k] *= factor
            for k in ("real_time", "cpu_time"):
                e[k] /= factor
            hit += 1
    assert hit >= 5, f"{name} not in {src}"
    dst.write_text(json.dumps(doc))
    return dst


def test_real_healthy_node_flags_nothing(committed_loads):
    # Before the judged-entries rule this pair flagged 34 entries: 1 KiB-512 KiB copies, 128^3 and 512^3 GEMMs.
    r = call("node_report", *real_files())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Nothing flagged" in r.stdout and "## Flagged" not in r.stdout
    # Those short entries are still listed, as not judged.
    r = call("node_report", "--all", *real_files())
    assert r.returncode == 0
    assert "| link/h2d/pinned/ce/bytes:1024 (not judged) |" in r.stdout
    assert "| gemm/cublas/m:128/n:128/k:128 (not judged) |" in r.stdout
    assert "| link/h2d/pinned/ce/bytes:1073741824 |" in r.stdout


@pytest.mark.parametrize("name", ["link/h2d/pinned/ce/bytes:1073741824", "gemm/cublas/m:4096/n:4096/k:4096"])
def test_real_node_with_one_slow_entry_is_flagged(tmp_path, name, committed_loads):
    gpu0, gpu1 = real_files()
    seconds = committed(gpu1).by_name[name].get(suite_json.TIME)
    assert seconds >= 1e-3  # the slowed entry is a long one, that the rule judges
    slow = slowed(gpu1, tmp_path / "gpu1.json", name, 0.8)
    r = call("node_report", gpu0, slow)
    assert r.returncode == 1, r.stdout + r.stderr
    flagged = r.stdout.split("## Flagged")[1].split("##")[0]
    rows = [line for line in flagged.splitlines() if line.startswith("| ") and not line.startswith(("| benchmark", "|---"))]
    assert len(rows) == 1 and rows[0].startswith(f"| {name} |") and "| GPU 1 |" in rows[0], flagged


@pytest.mark.parametrize("name", ["link/h2d/pinned/ce/bytes:65536", "link/h2d/pageable/ce/bytes:33554432"])
def test_real_slow_small_or_pageable_transfer_is_not_judged(tmp_path, name, committed_loads):
    # The same 20 % on a 64 KiB copy (launch-bound, ~4 us) is inside what such copies scatter between runs; a
    # pageable copy runs at the host CPU's pace (the two GPUs of this run differ by ~10 % there).
    gpu0, gpu1 = real_files()
    slow = slowed(gpu1, tmp_path / "gpu1.json", name, 0.8)
    r = call("node_report", gpu0, slow)
    assert r.returncode == 0, r.stdout + r.stderr


def test_min_time_option(tmp_path, committed_loads):
    # A cuBLAS 512^3 GEMM at half its rate (still well under 100 us) is judged only when --min-time lets it in.
    gpu0, gpu1 = real_files()
    name = "gemm/cublas/m:512/n:512/k:512"
    assert committed(gpu1).by_name[name].get(suite_json.TIME) < 100e-6
    slow = slowed(gpu1, tmp_path / "gpu1.json", name, 0.5)
    assert call("node_report", gpu0, slow).returncode == 0
    # (without the profile: small GEMMs differ by 24-38 % between H200s, more than this 50 % x 1/3)
    r = call("node_report", "--min-time", "1", "--no-profile", gpu0, slow)
    assert r.returncode == 1 and f"| {name} | flops_per_second | GPU 1 |" in r.stdout
    r = call("node_report", "--min-time", "-3", gpu0, slow)
    assert r.returncode == 2 and "--min-time must be" in r.stderr


def test_the_models_profile_spares_what_gpus_of_the_model_differ_by(tmp_path, committed_loads):
    # The committed two-H200 node run of 2cd99ce flagged the L1-to-L2 slope of hierarchy/read on GPU 1 (0.849
    # of its sibling at 2.5 MiB, exit 6): healthy H200s differ that much there. The committed profile describes
    # hierarchy_code_version 2 (placements), which these runs predate, so its hierarchy entries do not apply to
    # them (noise.matching) and those two points stay flagged; the rest of the profile applies (in sample).
    run_dir = ROOT / "results" / "h200" / "20261201T003600Z"
    files = [run_file(run_dir / "gpu0"), run_file(run_dir / "gpu1")]
    r = call("node_report", *files)
    assert r.returncode == 1 and "Noise profile: results/h200/noise_profile.json" in r.stdout, r.stdout[-2000:]
    flagged = [l for l in r.stdout.splitlines() if "| GPU 1 |" in l and "bytes_per_second" in l]
    assert len(flagged) == 2 and all(l.startswith("| hierarchy/read/ws:") for l in flagged), flagged
    r = call("node_report", "--no-profile", *files)
    assert r.returncode == 1 and "| hierarchy/read/ws:2572288 | bytes_per_second | GPU 1 |" in r.stdout
    assert "Noise profile: off" in r.stdout
    # A GPU 30 % slow on the HBM read roof is still flagged with the profile (the H200s agree there within 1 %).
    slow = slowed(files[1], tmp_path / "gpu1.json", "ceiling/read/hbm", 0.7)
    r = call("node_report", files[0], slow)
    assert r.returncode == 1 and "| ceiling/read/hbm | bytes_per_second | GPU 1 |" in r.stdout


# ---- The rules at their edges (each test fails when its rule is changed: tools/mutants_python.json) ----

def row(seconds):
    """A rows_of() entry: (counter, value, higher is better, cv, seconds per launch)."""
    return ("bytes_per_second", 1e9, True, 0.0, seconds)


def test_min_time_is_inclusive():
    """--min-time is the shortest launch judged: a benchmark at exactly that time on every GPU is judged, one a
    hair shorter on one GPU is not."""
    at, under = 1e-4, math.nextafter(1e-4, 0)
    tables = [{"gemm/a": row(at), "gemm/b": row(at)}, {"gemm/a": row(at), "gemm/b": row(under)}]
    assert node_report.judged_names(tables, 1e-4) == {"gemm/a"}


def test_largest_pageable_copy_is_not_judged():
    """Of each link path only the largest transfer is judged, and of a pageable path none."""
    tables = [{"link/h2d/pinned/ce/bytes:1024": row(1), "link/h2d/pinned/ce/bytes:1073741824": row(1),
               "link/h2d/pageable/ce/bytes:1073741824": row(1)}] * 2
    assert node_report.judged_names(tables, 1e-4) == {"link/h2d/pinned/ce/bytes:1073741824"}


# 1/16 and its multiples are exact in binary, so 1 - score lands exactly on 3 x 1/16.
EDGE = 0.0625


@pytest.mark.parametrize("own", [True, False], ids=["own cv", "model spread"])
def test_flagged_from_three_times_the_spread(own):
    """Worse than the margin, a GPU is flagged once it is worse by 3 x its own cv (or 3 x the model's
    between-GPU spread) or more: at exactly 3 x, flagged; a hair inside it, not; 2 x is inside."""
    flagged = lambda score: node_report.is_flagged(score, EDGE if own else 0.0, 0.9, True, 0.0 if own else EDGE)
    assert flagged(1 - 3 * EDGE)
    assert not flagged(math.nextafter(1 - 3 * EDGE, 1))
    assert not flagged(1 - 2 * EDGE)
    assert not node_report.is_flagged(1 - 3 * EDGE, 0.0, 0.9, False, 0.0)  # an entry not judged never is


def test_slow_pageable_copy_is_not_flagged(tmp_path):
    """GPU 1's pageable copies 30 % slow (its host's pace, not its link's), outside the margin and each GPU's own
    spread, and no profile to cover them: nothing flagged, listed as not judged; its pinned copies so slow are."""
    paths = node(tmp_path / "pageable", n=3, scales={1: {"link/h2d/pageable": 0.7}})
    r = call("node_report", "--no-profile", "--all", *paths)
    assert r.returncode == 0 and "Nothing flagged" in r.stdout, r.stdout
    assert "| link/h2d/pageable/ce/bytes:33554432 (not judged) |" in r.stdout
    pinned = node(tmp_path / "pinned", n=3, scales={1: {"link/h2d/pinned/ce": 0.7}})
    r = call("node_report", "--no-profile", *pinned)
    assert r.returncode == 1 and "| link/h2d/pinned/ce/bytes:1073741824 | bytes_per_second | GPU 1 |" in r.stdout


def test_real_largest_pageable_copy_is_not_judged(tmp_path, committed_loads):
    """The committed two-H200 run: its largest pageable host-to-device copy (32 MiB; larger ones are skipped)
    30 % slow on GPU 1, without the profile (whose range for pageable copies is wide): not flagged."""
    gpu0, gpu1 = real_files()
    sizes = [int(r.name.rpartition(":")[2]) for r in committed(gpu1).ok("link")
             if r.name.startswith("link/h2d/pageable/ce/bytes:")]
    name = f"link/h2d/pageable/ce/bytes:{max(sizes)}"
    slow = slowed(gpu1, tmp_path / "gpu1.json", name, 0.7)
    r = call("node_report", "--no-profile", gpu0, slow)
    assert r.returncode == 0 and "Nothing flagged" in r.stdout, r.stdout
