"""AutoGCNConv inside PyTorch Geometric: a PyG model on PyG data, PyG's own normalisation, and
the example ``examples/pyg_autogcn.py`` on the real PubMed files (skipped without them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from autogcn.propagation import normalized_adjacency
from autogcn.sparse import csr_matrix
from layers.autogcn_layer import AutoGCNConv, AutoGCNLayer
from tests.conftest import real_data_dir
from tests.helpers import rand_graph, run_in_own_group
from tests.test_autogcn_layer import bare, dense_filters, random_symmetric_graph

pyg = pytest.importorskip("torch_geometric", reason="needs torch_geometric "
                                                    "(pip install -r requirements.txt)")
from torch_geometric.data import Batch, Data  # noqa: E402
from torch_geometric.nn import Sequential  # noqa: E402
from torch_geometric.nn.conv.gcn_conv import gcn_norm  # noqa: E402
from torch_geometric.utils import to_dense_adj  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def pyg_model() -> Sequential:
    torch.manual_seed(3)
    model = Sequential("x, edge_index", [
        (AutoGCNConv(5, 8), "x, edge_index -> x"),
        torch.nn.ReLU(),
        (AutoGCNConv(8, 3, mode="single", single_a_init=0.3), "x, edge_index -> x"),
    ]).double()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return model


def test_conv_in_a_pyg_model_equals_the_layers_without_post_processing():
    g = rand_graph(14, 40, seed=2)  # directed, with nodes that receive nothing
    data = Data(x=torch.randn(14, 5, dtype=torch.float64), edge_index=g.edge_index)
    model = pyg_model()
    out = model(data.x, data.edge_index)
    layers = []
    for conv in (model[0], model[2]):
        layer = bare(AutoGCNLayer(conv.in_channels, conv.out_channels, mode=conv.mode,
                                  single_a_init=conv.single_a_init)).double()
        layer.load_state_dict(conv.state_dict(), strict=False)
        layers.append(layer)
    expected = layers[1](g, torch.relu(layers[0](g, data.x)))
    torch.testing.assert_close(out, expected, rtol=1e-12, atol=1e-12)


def test_conv_on_a_pyg_mini_batch_equals_each_graph_alone():
    graphs = [rand_graph(n, 3 * n, seed=n) for n in (6, 1, 9)]
    datas = [Data(x=torch.randn(g.num_nodes(), 5, dtype=torch.float64), edge_index=g.edge_index)
             for g in graphs]
    batch = Batch.from_data_list(datas)
    model = pyg_model()
    out = model(batch.x, batch.edge_index)
    expected = torch.cat([model(d.x, d.edge_index) for d in datas])
    torch.testing.assert_close(out, expected, rtol=1e-12, atol=1e-12)


def test_conv_on_pyg_data_equals_the_eigendecomposition():
    g, _ = random_symmetric_graph(12, 0.35, 1)
    data = Data(x=torch.randn(12, 4, dtype=torch.float64), edge_index=g.edge_index)
    torch.manual_seed(0)
    conv = AutoGCNConv(4, 3).double()
    with torch.no_grad():
        conv.gamma.uniform_(-0.2, 1.0)
    torch.testing.assert_close(conv(data.x, data.edge_index),
                               dense_filters(conv, data.edge_index, 12, data.x),
                               rtol=1e-10, atol=1e-10)


def dense_operator(edge_index: torch.Tensor, n: int, weight: torch.Tensor | None) -> torch.Tensor:
    """AutoGCN's normalised adjacency as a dense ``(N, N)`` matrix (rows: destinations)."""
    from autogcn.graph import Graph

    op = normalized_adjacency(Graph.from_edge_index(edge_index, n), edge_weight=weight)
    return csr_matrix(*op.parts(torch.float64)[0], n).to_dense()


def pyg_operator(edge_index: torch.Tensor, n: int, weight: torch.Tensor | None) -> torch.Tensor:
    """PyG's ``gcn_norm`` without self-loops, as a dense matrix with rows = destinations."""
    index, value = gcn_norm(edge_index, weight, n, add_self_loops=False, dtype=torch.float64)
    return to_dense_adj(index, edge_attr=value, max_num_nodes=n)[0].T


@pytest.mark.parametrize("weighted", [False, True])
def test_normalisation_is_gcn_norm_without_self_loops_where_every_sender_receives(weighted):
    """The docstring's claim, checked against PyG: equal on an undirected graph; on a directed
    one, equal except on the edges out of zero-in-degree nodes (PyG scales them by 0, AutoGCN
    by the receiver's factor alone)."""
    g, _ = random_symmetric_graph(10, 0.4, 2)
    w = torch.rand(g.num_edges(), dtype=torch.float64) + 0.1 if weighted else None
    torch.testing.assert_close(dense_operator(g.edge_index, 10, w),
                               pyg_operator(g.edge_index, 10, w), rtol=1e-12, atol=1e-14)
    d = rand_graph(12, 30, seed=4)
    w = torch.rand(d.num_edges(), dtype=torch.float64) + 0.1 if weighted else None
    ours, theirs = dense_operator(d.edge_index, 12, w), pyg_operator(d.edge_index, 12, w)
    silent = d.in_degrees() == 0  # senders that receive nothing
    assert (silent & (d.out_degrees() > 0)).any()
    torch.testing.assert_close(ours[:, ~silent], theirs[:, ~silent], rtol=1e-12, atol=1e-14)
    assert not theirs[:, silent].any() and ours[:, silent].any()


# ------------------------------------------------------------------ the example
def run_example(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """The example in its own process group, killed whole on timeout."""
    return run_in_own_group([sys.executable, "-m", "examples.pyg_autogcn", *args], timeout,
                            cwd=ROOT)


def test_example_refuses_a_root_without_the_raw_files(tmp_path):
    (tmp_path / "PubMed" / "raw").mkdir(parents=True)
    (tmp_path / "PubMed" / "raw" / "ind.pubmed.x").write_bytes(b"")
    done = run_example("--root", str(tmp_path), "--epochs", "1", timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "ind.pubmed.tx" in lines[0]
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["PubMed", "ind.pubmed.x", "raw"]


@pytest.mark.parametrize("content", [b"", b"\x80\x04garbage", b"not a pickle at all"])
def test_example_reports_unreadable_raw_files_in_one_line(tmp_path, content):
    raw = tmp_path / "PubMed" / "raw"
    raw.mkdir(parents=True)
    for name in ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index"):
        (raw / f"ind.pubmed.{name}").write_bytes(content)
    done = run_example("--root", str(tmp_path), "--epochs", "1", timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot read the PubMed files in ")


def test_example_trains_on_the_real_pubmed_with_learned_edge_weights_and_explains(tmp_path):
    """One run (the example is slow to start): both models with learned edge weights, then
    GNNExplainer on the AutoGCNConv model."""
    source = real_data_dir("pubmed", "ind.pubmed.x", "ind.pubmed.graph")
    raw = tmp_path / "PubMed" / "raw"
    raw.mkdir(parents=True)
    for f in source.glob("ind.pubmed.*"):
        (raw / f.name).symlink_to(f.resolve())
    done = run_example("--root", str(tmp_path), "--epochs", "3", "--log-every", "1",
                       "--learn-edge-weights", "--explain", "7", "--explain-epochs", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("PubMed, random split: 11830 train, 3943 validation, 3944 test")
    assert lines[0].endswith(", learned edge weights")
    explained = lines.pop()
    assert explained.startswith("AutoGCNConv  GNNExplainer on node 7 (2 epochs): ")
    assert " of 88648 edges weighed; top: " in explained
    assert int(explained.split(": ")[1].split()[0]) > 0  # the mask reached some edges
    for i, name in enumerate(("AutoGCNConv", "GCNConv")):
        epochs = lines[1 + 3 * i: 4 + 3 * i]
        assert [line.split()[:3] for line in epochs] == [[name, "epoch", str(e)]
                                                         for e in (1, 2, 3)]
        val = [float(line.split()[8]) for line in epochs]
        best = val.index(max(val))
        assert lines[7 + i] == (f"{name:<12} best validation accuracy {val[best]:.4f} at epoch "
                                f"{best + 1}: test accuracy {float(epochs[best].split()[10]):.4f}")
    assert (tmp_path / "PubMed" / "processed").is_dir()  # PyG processed the raw files itself

