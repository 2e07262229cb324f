"""The filter figure (``diagnose --checkpoint``, :mod:`scripts.learned_filters`) and the dataset
report's filters (``diagnose --dataset ... --checkpoint``) for every model with a learned
spectral filter, and ChebNet's frequency response against a dense eigendecomposition."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from autogcn.graph import Graph
from autogcn.propagation import normalized_adjacency
from layers.cheb_layer import ChebLayer
from scripts import diagnose, learned_filters
from tests.data_writers import write_squirrel
from train import runner
from train.checkpoint import load_checkpoint, model_from_checkpoint
from train.tasks import NODE

FILTER_MODELS = ["AUTOGCN", "ChebNet", "GPRGNN", "BERNNET", "CHEBNETII", "JACOBICONV"]


# --------------------------------------------------------------------------- ChebNet's response
def undirected_with_isolated_node(n: int = 9, seed: int = 0) -> Graph:
    """A random undirected graph on nodes 0..n-2, plus an isolated node n-1."""
    rng = np.random.default_rng(seed)
    pairs = {(int(a), int(b)) for a, b in rng.integers(0, n - 1, (2 * n, 2)) if a != b}
    edges = sorted(pairs | {(b, a) for a, b in pairs})
    return Graph(torch.tensor([a for a, _ in edges]), torch.tensor([b for _, b in edges]), n)


def test_chebnet_response_matches_a_dense_eigendecomposition():
    """On an eigenvector u of the propagation (λ = 1 − μ), the layer maps x = u vᵀ to
    u vᵀ M(λ) + b, and the reported gain is ‖M(λ)‖_F / √in (float64)."""
    torch.manual_seed(0)
    g = undirected_with_isolated_node()
    n = g.num_nodes()
    layer = ChebLayer(4, 3, activation=None, graph_norm=False, batch_norm=False).double()
    torch.nn.init.normal_(layer.bias)
    op = normalized_adjacency(g)
    dense = op(torch.eye(n, dtype=torch.float64))  # columns: P e_j, i.e. P itself
    mu, vec = torch.linalg.eigh(dense)
    lam = 1.0 - mu
    m = layer.response_matrix(lam)
    v = torch.randn(4, dtype=torch.float64)
    for i in range(n):
        x = torch.outer(vec[:, i], v)
        want = torch.outer(vec[:, i], v @ m[i]) + layer.bias
        for order in ("propagate", "project"):
            layer.order = order
            torch.testing.assert_close(layer(g, x), want, rtol=1e-10, atol=1e-10)
    gain = layer.frequency_response(lam)["gain"]
    assert gain.shape == (1, n)
    torch.testing.assert_close(gain[0], m.flatten(1).norm(dim=1) / 2.0)
    assert (lam > 1 - 1e-9).any() and (lam < 1 + 1e-9).any()  # the isolated node: λ = 1


# --------------------------------------------------------------------------- trained checkpoints
@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    """A tiny Squirrel-format dataset and a checkpoint of a 2-epoch run of each filter model
    (and of GCN, which has no filter)."""
    root = tmp_path_factory.mktemp("figure")
    data = root / "squirrel"
    write_squirrel(data)
    ckpts = {}
    for model in [*FILTER_MODELS, "GCN"]:
        out = root / f"out_{model}"
        code = runner.main(NODE, ["--config", f"configs/node_classification_{model}_SQUIRREL.json",
                                  "--data_dir", str(data), "--epochs", "2", "--runs", "1",
                                  "--out_dir", str(out), "--use_gpu", "False"])
        assert code == 0, model
        (ckpts[model],) = out.glob("*/checkpoints/*.pt")
    return data, ckpts


def test_figure_of_every_model_over_the_label_energy(trained, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    data, ckpts = trained
    png = tmp_path / "fig" / "filters.png"
    args = [str(ckpts[m]) for m in FILTER_MODELS]
    assert diagnose.main(["--checkpoint", *args, "--out", str(png), "--data_dir", str(data),
                          "--points", "41"]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG" and png.stat().st_size > 20_000
    assert f"wrote {png}" in capsys.readouterr().out


def test_every_model_reports_its_filters_on_its_axis(trained):
    lam = torch.linspace(0, 2, 11, dtype=torch.float64)
    kinds = {}
    for model in FILTER_MODELS:
        net = model_from_checkpoint(load_checkpoint(trained[1][model]))
        responses = learned_filters.learned_responses(net, lam)
        kinds[model] = {(r.kind, r.axis) for r in responses}
        assert all(r.curves.shape[1] == lam.numel() for r in responses)
    assert kinds["AUTOGCN"] == {(k, "laplacian") for k in ("low", "mid", "high")}
    assert kinds["ChebNet"] == {("gain", "laplacian")}
    assert kinds["GPRGNN"] == {("filter", "self_loop_laplacian")}
    for model in ("BERNNET", "CHEBNETII", "JACOBICONV"):
        assert kinds[model] == {("filter", "laplacian")}
    # a decoupled net's filter is reported once, with its own response
    net = model_from_checkpoint(load_checkpoint(trained[1]["GPRGNN"]))
    (r,) = learned_filters.learned_responses(net, lam)
    torch.testing.assert_close(r.curves, net.filter.frequency_response(lam)["filter"].double())


def test_label_energy_on_each_axis(trained):
    data, _ = trained
    energy, note = learned_filters.label_energies(
        "SQUIRREL", {"data_dir": str(data)}, {"laplacian", "self_loop_laplacian"}, 10_000, 50, 1)
    assert note is None
    for axis in ("laplacian", "self_loop_laplacian"):
        assert sum(energy[axis]["bands"].values()) == pytest.approx(1.0)
    # self-loops shrink the spectrum: less label energy at the top of [0, 2]
    top = lambda e: np.asarray(e["histogram"]["energy"])[-5:].sum()  # noqa: E731
    assert top(energy["self_loop_laplacian"]) <= top(energy["laplacian"]) + 1e-12


def test_one_checkpoint_without_data_writes_beside_it(trained, tmp_path):
    pytest.importorskip("matplotlib")
    src = trained[1]["BERNNET"]
    ckpt = tmp_path / "b.pt"
    ckpt.write_bytes(src.read_bytes())
    assert diagnose.main(["--checkpoint", str(ckpt), "--points", "5"]) == 0
    assert (tmp_path / "b_filters.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("case, needle", [
    ("no filter", "no learned spectral filter"),
    ("several without --out", "--out"),
    ("datasets differ", "one dataset per figure"),
    ("missing data", "missing"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(case, needle, trained, tmp_path,
                                                          capsys):
    data, ckpts = trained
    out = tmp_path / "out" / "f.png"
    other = tmp_path / "other.pt"
    c = torch.load(ckpts["CHEBNETII"], weights_only=True)
    c["config"]["dataset"] = "SQUIRREL_FILTERED"
    torch.save(c, other)
    args = {
        "no filter": [str(ckpts["GCN"]), "--out", str(out)],
        "several without --out": [str(ckpts["GPRGNN"]), str(ckpts["BERNNET"])],
        "datasets differ": [str(ckpts["GPRGNN"]), str(other), "--out", str(out),
                            "--data_dir", str(data)],
        "missing data": [str(ckpts["GPRGNN"]), "--out", str(out), "--data_dir",
                         str(tmp_path / "missing")],
    }[case]
    before = sorted(p.name for p in tmp_path.iterdir())
    assert diagnose.main(["--checkpoint", *args]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], lines
    assert sorted(p.name for p in tmp_path.iterdir()) == before and not out.exists()


def test_diagnose_reports_a_successors_response(trained, tmp_path, capsys):
    data, ckpts = trained
    out = tmp_path / "diag"
    assert diagnose.main(["--dataset", "SQUIRREL", "--data_dir", str(data), "--out", str(out),
                          "--checkpoint", str(ckpts["GPRGNN"])]) == 0
    report = json.loads((out / "SQUIRREL_diagnostics.json").read_text())
    (layer,) = report["checkpoint"]["layers"]
    assert layer["axis"] == "self_loop_laplacian" and set(layer["response"]) == {"filter"}
    assert len(layer["response"]["filter"][0]) == len(report["checkpoint"]["lambda"])
    assert set(layer["band_mean_response"]["filter"]) == {"low", "mid", "high"}
    assert "own operator" in capsys.readouterr().out
    assert diagnose.main(["--dataset", "SQUIRREL", "--data_dir", str(data), "--out",
                          str(tmp_path / "d2"), "--checkpoint", str(ckpts["GCN"])]) == 2
    assert "no learned spectral filter" in capsys.readouterr().err
