"""plots/ladder.py and the roofs gpubench/analysis/bounds.py takes from the ceiling family."""
import json

import pytest

from gpubench.analysis import bounds
from gpubench.analysis import ladder
from conftest import call
from gpubench.suite_json import load
from test_plots import check_png, figure


def with_kernel(path, new, like="smem", speedup=3.0):
    """Add gemm/<new>/... entries to a suite file, copied from gemm/<like>/... with time / speedup (the
    model counts stay those of <like>: enough to see the new kernel go through bounds and the ladder)."""
    doc = json.loads(path.read_text())
    extra = []
    for e in doc["benchmarks"]:
        if e["run_name"].startswith(f"gemm/{like}/"):
            c = {k: v.replace(f"gemm/{like}/", f"gemm/{new}/") if k in ("name", "run_name") else v for k, v in e.items()}
            if e.get("aggregate_name") != "cv":
                c["real_time"] = e["real_time"] / speedup
                c["flops_per_second"] = e["flops_per_second"] * speedup
            extra.append(c)
    doc["benchmarks"] += extra
    path.write_text(json.dumps(doc))
    return path


def test_ladder_png(make_json, monkeypatch, tmp_path):
    """The picture holds the run's numbers: one measured bar per kernel in ladder order, at its GFLOP/s, and
    cuBLAS's line."""
    path = with_kernel(make_json(), "warptile")
    r = call("ladder", path)
    assert r.returncode == 0, r.stderr
    check_png(path.parent / "ladder.png")
    s = load(path)
    shape = "m:4096/n:4096/k:4096"
    (ax,) = figure("ladder", path, monkeypatch, tmp_path).axes
    kernels = [t.get_text() for t in ax.get_xticklabels()]
    assert kernels == [k for k in bounds.KERNELS if k in kernels] and kernels[-1] == "warptile" and "smem" in kernels
    measured = [bar.get_height() for bar in ax.containers[0]]
    assert measured == pytest.approx([s.value(f"gemm/{k}/{shape}", "flops_per_second") / 1e9 for k in kernels])
    (cublas,) = [line for line in ax.get_lines() if line.get_label().startswith("cuBLAS")]
    assert cublas.get_ydata()[0] == pytest.approx(s.value(f"gemm/cublas/{shape}", "flops_per_second") / 1e9)


def test_ladder_no_gemm_writes_no_picture(make_json):
    path = make_json(only={"ceiling"})
    r = call("ladder", path)
    assert r.returncode == 0 and "no picture written" in r.stderr
    assert not (path.parent / "ladder.png").exists()


def test_ladder_steps_in_order_with_bounds_and_cublas(make_json):
    s = load(with_kernel(make_json(), "warptile"))
    n, steps, cublas = ladder.steps(s)
    assert n == 4096
    kernels = [k for k, *_ in steps]
    assert kernels == [k for k in bounds.KERNELS if k in kernels] and kernels[-1] == "warptile"
    shape = "m:4096/n:4096/k:4096"
    assert cublas == s.value(f"gemm/cublas/{shape}", "flops_per_second")
    k, measured, bound, res = steps[-1]
    assert measured == pytest.approx(s.value(f"gemm/warptile/{shape}", "flops_per_second"))
    # The copy keeps smem's counts, so its bound is smem's: same binding resource, same GFLOP/s.
    smem = dict((k, (b, r)) for k, _, b, r in steps)["smem"]
    assert res == smem[1] and bound == pytest.approx(smem[0])


def test_ladder_falls_back_to_4092(make_json):
    path = make_json()
    s = load(path)
    drop = [r.name for r in s.ok("gemm") if r.name.endswith("m:4096/n:4096/k:4096")]
    n, steps, _ = ladder.steps(load(make_json(name="b.json", drop=drop)))
    assert n == 4092 and steps


def test_roofs_from_the_ceiling_family_else_the_coalescing_sweeps(make_json):
    s = load(make_json())
    u = bounds.unit_costs(s)
    for level in ("l1", "l2", "hbm"):
        assert u[f"{level}_bytes_per_s"] == s.value(f"ceiling/read/{level}", "bytes_per_second")
    old = load(make_json(name="old.json", drop=[f"ceiling/read/{l}" for l in ("l1", "l2", "hbm")]))
    u = bounds.unit_costs(old)
    assert u["hbm_bytes_per_s"] == old.value("coalescing/read/hbm/stride:1", "useful_bytes_per_second")
    assert u["l2_bytes_per_s"] == max(r.get("bus_bytes_per_second") for r in old.ok("coalescing")
                                      if r.fields["op"] == "read" and r.fields["level"] == "l2")


def test_ladder_shows_the_time_models_predictions(make_json, monkeypatch, tmp_path):
    """Where predict.predictions has a prediction, the ladder's rows, the report's ladder table and the picture's
    markers show it: predicted GFLOP/s, predicted / measured and the binding resource (here 1.25 x each time)."""
    from gpubench import report
    from gpubench.analysis import predict
    path = make_json()
    s = load(path)
    n, found = ladder.headline(s)
    rows = {r.name: {"measured_s": r.get("real_time"), "predicted_s": 1.25 * r.get("real_time"), "binding": "issue"}
            for k, r in found.items() if k in bounds.KERNELS}
    monkeypatch.setattr(predict, "predictions", lambda suite: (rows, []))
    _, pred, missing = ladder.predicted(s)
    assert not missing and set(pred) == {k for k in found if k in bounds.KERNELS}
    assert all(p / m == pytest.approx(1.25) and b == "issue" for m, p, b in pred.values())
    text = "\n".join(report.gemm_ladder(s))
    assert "| 1.25 | issue |" in text and "No prediction" not in text
    (ax,) = figure("ladder", path, monkeypatch, tmp_path).axes
    (marks,) = [line for line in ax.get_lines() if line.get_label() == "predicted (time model)"]
    kernels = [t.get_text() for t in ax.get_xticklabels()]
    assert list(marks.get_ydata()) == pytest.approx([2.0 * n ** 3 / pred[k][1] / 1e9 for k in kernels])


def test_ladder_without_unit_costs_says_what_is_missing(make_json):
    """A synthetic run without the issue family: the report's ladder section names it and predicts nothing."""
    from gpubench import report
    path = make_json()
    doc = json.loads(path.read_text())
    doc["benchmarks"] = [e for e in doc["benchmarks"] if not e["run_name"].startswith("issue/")]
    path.write_text(json.dumps(doc))
    s = load(path)
    text = "\n".join(report.gemm_ladder(s))
    assert "No prediction: the run lacks issue/ffma/warps:*" in text
    assert all(p is None for _, p, _ in ladder.predicted(s)[1].values())
