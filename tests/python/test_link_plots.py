"""plots/links.py and plots/peer_matrix.py: PNGs with the measured numbers, peaks from the context, exit 2 on bad input."""
import importlib

import numpy as np
import pytest

import link_synth
from conftest import call, run
from gpubench.suite_json import load
from test_plots import check_png

SHAPES = ("1.7.1", "1.8.3")


def write(tmp_path, name="benchmarks.json", **kw):
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    return link_synth.write(p, **kw)


def saved_figure(module_name, monkeypatch, argv):
    module = importlib.import_module(f"plots.{module_name}")
    saved = []
    real_savefig = module.plt.Figure.savefig

    def keep(fig, *a, **k):
        saved.append(fig)
        return real_savefig(fig, *a, **k)

    monkeypatch.setattr(module.plt.Figure, "savefig", keep)
    assert module.main([str(a) for a in argv]) == 0
    return saved[0]


@pytest.mark.parametrize("shape", SHAPES)
def test_links_png(tmp_path, shape):
    p = write(tmp_path, shape=shape)
    r = call("links", p)
    assert r.returncode == 0, r.stderr
    check_png(tmp_path / "links.png")


def test_links_content(tmp_path, monkeypatch):
    p = write(tmp_path)
    fig = saved_figure("links", monkeypatch, [p, "-o", tmp_path / "l.png"])
    titles = [a.get_title() for a in fig.axes]
    assert titles == ["Host, pinned memory (PCIe)", "Host, pageable memory", "Peer GPU memory"]
    s = load(p)
    lines = {l.get_label(): l for l in fig.axes[0].get_lines()}
    h2d = lines["h2d copy engine"]
    assert list(h2d.get_xdata()) == link_synth.SIZES
    assert h2d.get_ydata()[-1] == pytest.approx(s.value("link/h2d/pinned/ce/bytes:1073741824", "bytes_per_second") / 1e9)
    assert lines["d2h SM copy"].get_linestyle() == "--"
    peak = [l for label, l in lines.items() if label.startswith("PCIe peak")]
    assert peak and peak[0].get_ydata()[0] == pytest.approx(link_synth.PCIE_PEAK / 1e9)
    peer = {l.get_label(): l for l in fig.axes[2].get_lines()}
    assert any(label.startswith("NVLink peak") for label in peer)
    assert peer["bidir SM copy"].get_ydata()[-1] == pytest.approx(
        s.value("link/peer/bidir/sm/bytes:1073741824", "bytes_per_second") / 1e9)


def test_links_without_peer_or_link_data(tmp_path, make_json):
    r = call("links", write(tmp_path, peer=None))
    assert r.returncode == 0 and "peer gpu memory benchmarks" in r.stderr.lower()
    check_png(tmp_path / "links.png")
    other = make_json(name="other.json", subdir="o", only={"ceiling"})
    r = call("links", other)
    assert r.returncode == 0 and "no link/* benchmarks" in r.stderr
    assert not (other.parent / "links.png").exists()


def test_peer_matrix_of_a_four_gpu_node(tmp_path, monkeypatch):
    # Four GPUs, each file with its links to one peer; GPU 2 -> GPU 3 slow.
    paths = [write(tmp_path, f"gpu{i}.json", device=i, peer=(i + 1) % 4, seed=i,
                   scale={"link/peer": 0.5} if i == 2 else None) for i in range(4)]
    r = run("peer_matrix", *paths)  # the real command line (python3 -m plots.peer_matrix); the rest call main()
    assert r.returncode == 0 and r.stdout == f"peer_matrix: wrote {tmp_path / 'peer_matrix.png'}\n", r.stderr
    check_png(tmp_path / "peer_matrix.png")
    fig = saved_figure("peer_matrix", monkeypatch, [*paths, "-o", tmp_path / "m.png"])
    grid = fig.axes[0].get_images()[0].get_array()
    assert grid.shape == (4, 4)
    s2 = load(paths[2])
    best = max(s2.value(f"link/peer/uni/{m}/bytes:1073741824", "bytes_per_second") for m in ("ce", "sm"))
    assert grid[2, 3] == pytest.approx(best / 1e9)
    assert np.ma.is_masked(grid[0, 0]) and np.ma.is_masked(grid[0, 2])  # never measured: blank
    assert grid[2, 3] < 0.6 * grid[0, 1]
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any("of peak" in t for t in texts)


def test_peer_matrix_bidir_and_no_peer_data(tmp_path):
    a, b = write(tmp_path, "a.json", device=0, peer=1), write(tmp_path, "b.json", device=1, peer=0, seed=1)
    r = call("peer_matrix", "--mode", "bidir", a, b, "-o", tmp_path / "bidir.png")
    assert r.returncode == 0, r.stderr
    check_png(tmp_path / "bidir.png")
    lone = write(tmp_path / "lone", peer=None)
    r = call("peer_matrix", lone)
    assert r.returncode == 0 and "no link/peer/uni/* results" in r.stderr
    assert not (lone.parent / "peer_matrix.png").exists()


@pytest.mark.parametrize("script", ["links", "peer_matrix"])
def test_bad_input_one_line_exit_2(tmp_path, script):
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    good = write(tmp_path / "g")
    r = call(script, *([bad] if script == "links" else [good, bad]))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{script}: error: ") and "not JSON" in lines[0]
