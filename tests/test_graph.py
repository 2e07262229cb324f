"""The torch-native graph type: structure, batching, edits, devices, pickling."""

import pickle

import pytest
import torch

from autogcn.graph import Graph
from data.common import collate_graphs, graph_size_norm
from tests.helpers import rand_graph


def edge_list(g: Graph) -> list[tuple[int, int]]:
    return list(zip(g.src.tolist(), g.dst.tolist(), strict=True))


def test_sizes_degrees_and_default_node_count():
    g = Graph([0, 0, 2, 2], [1, 1, 0, 3])  # a repeated edge; node count from the largest id
    assert (g.num_nodes(), g.num_edges(), g.batch_size) == (4, 4, 1)
    assert g.in_degrees().tolist() == [1, 2, 0, 1]
    assert g.out_degrees().tolist() == [2, 0, 2, 0]
    assert Graph([], []).num_nodes() == 0
    with pytest.raises(ValueError, match="src has 2 entries but dst has 1"):
        Graph([0, 1], [1])


@pytest.mark.parametrize("kind", ["csc", "csr"])
def test_compressed_structure_lists_every_edge_once(kind):
    g = rand_graph(12, 40, seed=1)
    indptr, other, eids = getattr(g, kind)()
    rows = g.dst if kind == "csc" else g.src
    cols = g.src if kind == "csc" else g.dst
    assert sorted(eids.tolist()) == list(range(g.num_edges()))
    for v in range(g.num_nodes()):
        part = slice(int(indptr[v]), int(indptr[v + 1]))
        assert (rows[eids[part]] == v).all()
        assert torch.equal(other[part], cols[eids[part]])
        assert eids[part].tolist() == sorted(eids[part].tolist())  # edge order kept in a row


def test_batch_offsets_features_and_unbatch_round_trip():
    a = Graph([0, 1], [1, 2], 3, ndata={"feat": torch.arange(3)}, edata={"w": torch.ones(2, 1)})
    b = Graph([0], [0], 2, ndata={"feat": torch.arange(2) + 10}, edata={"w": torch.zeros(1, 1)})
    g = Graph.batch([a, b, a])
    assert g.batch_num_nodes().tolist() == [3, 2, 3]
    assert g.batch_num_edges().tolist() == [2, 1, 2]
    assert edge_list(g) == [(0, 1), (1, 2), (3, 3), (5, 6), (6, 7)]
    assert g.ndata["feat"].tolist() == [0, 1, 2, 10, 11, 0, 1, 2]
    assert g.node_graph_ids().tolist() == [0, 0, 0, 1, 1, 2, 2, 2]
    parts = g.unbatch()
    assert [edge_list(p) for p in parts] == [edge_list(a), edge_list(b), edge_list(a)]
    assert torch.equal(parts[1].edata["w"], b.edata["w"])
    with pytest.raises(ValueError, match="same node and edge features"):
        Graph.batch([a, Graph([0], [1], 2)])


def test_self_loop_edits_keep_each_member_graphs_edges_together():
    a = Graph([0, 1, 1], [1, 1, 0], 2, edata={"w": torch.tensor([[1.0], [2.0], [3.0]])})
    b = Graph([0], [2], 3, edata={"w": torch.tensor([[4.0]])})
    g = Graph.batch([a, b])
    looped = g.remove_self_loops().add_self_loops()
    assert looped.batch_num_edges().tolist() == [4, 4]
    assert [edge_list(p) for p in looped.unbatch()] == [
        [(0, 1), (1, 0), (0, 0), (1, 1)], [(0, 2), (0, 0), (1, 1), (2, 2)]]
    assert looped.edata["w"].reshape(-1).tolist() == [1, 3, 0, 0, 4, 0, 0, 0]  # new edges: 0


def test_collate_builds_targets_size_norm_and_structure():
    graphs = [rand_graph(n, 2 * n, seed=n) for n in (4, 1, 9)]
    g, targets, snorm_n = collate_graphs([(x, torch.tensor([float(i)])) for i, x in
                                          enumerate(graphs)])
    assert targets.tolist() == [0.0, 1.0, 2.0]
    expected = torch.cat([torch.full((n, 1), n ** -0.5) for n in (4, 1, 9)])
    torch.testing.assert_close(snorm_n, expected)
    torch.testing.assert_close(graph_size_norm(g), expected)
    assert {"csc", "csr", "in_degrees"} <= set(g._cache)  # built at collate time


def test_pickle_and_device_copies_keep_structure_but_not_derived_objects():
    g = rand_graph(6, 10).build_structure()
    g.cached("something", lambda: object())
    clone = pickle.loads(pickle.dumps(g))
    assert edge_list(clone) == edge_list(g) and clone._derived == {}
    assert torch.equal(clone.csc()[1], g.csc()[1])
    assert g.to("cpu") is g
    moved = g._map(lambda t: t.clone())
    assert moved._derived == {} and torch.equal(moved.in_degrees(), g.in_degrees())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_to_cuda_moves_every_tensor():
    g = rand_graph(6, 10).build_structure()
    g.ndata["feat"] = torch.randn(6, 2)
    moved = g.to("cuda")
    assert moved.src.is_cuda and moved.ndata["feat"].is_cuda and moved.csc()[0].is_cuda
    assert edge_list(moved.to("cpu")) == edge_list(g)


# ------------------------------------------------------------------ validation at construction
@pytest.mark.parametrize("src,dst,n,match", [
    ([0, 1], [1, 5], 3, r"dst holds node id 5, outside \[0, 3\)"),
    ([-1, 0], [0, 1], 3, r"src holds node id -1, outside \[0, 3\)"),
    ([0, 3], [1, 2], 3, r"src holds node id 3"),
    ([0, 1], [1], 3, "src has 2 entries but dst has 1"),
    ([0.0, 1.0], [1, 2], 3, "src must hold integer node ids"),
    ([0, 1], torch.tensor([True, False]), 3, "dst must hold integer node ids"),
])
def test_bad_edge_lists_are_rejected_at_construction(src, dst, n, match):
    with pytest.raises(ValueError, match=match):
        Graph(src, dst, n)


def test_feature_and_member_counts_are_checked():
    with pytest.raises(ValueError, match=r"ndata\['feat'\] must have one row per node \(3\), "
                                         r"got \(2, 4\)"):
        Graph([0, 1], [1, 2], 3, ndata={"feat": torch.zeros(2, 4)})
    with pytest.raises(ValueError, match=r"edata\['w'\] must have one row per edge \(2\)"):
        Graph([0, 1], [1, 2], 3, edata={"w": torch.zeros(3)})
    with pytest.raises(ValueError, match=r"ndata\['x'\] must have one row per node"):
        Graph([0], [1], 2, ndata={"x": torch.tensor(1.0)})
    with pytest.raises(ValueError, match=r"batch_num_nodes \[1, 1\] must be non-negative counts "
                                         r"adding up to 3"):
        Graph([0], [1], 3, batch_num_nodes=torch.tensor([1, 1]))
    with pytest.raises(ValueError, match="batch_num_edges"):
        Graph([0], [1], 3, batch_num_edges=torch.tensor([2]))
    Graph([0, 1], [1, 2], 3, ndata={"feat": torch.zeros(3, 4)}, edata={"w": torch.zeros(2)})


def test_edge_index_round_trip_and_bad_shapes():
    edge_index = torch.tensor([[0, 1, 1, 3], [1, 0, 2, 2]])
    g = Graph.from_edge_index(edge_index, 5, ndata={"x": torch.zeros(5, 1)})
    assert (g.num_nodes(), g.num_edges()) == (5, 4)
    assert edge_list(g) == [(0, 1), (1, 0), (1, 2), (3, 2)]
    assert torch.equal(g.edge_index, edge_index) and g.edge_index.dtype == torch.int64
    assert Graph.from_edge_index(edge_index).num_nodes() == 4
    for bad in (torch.zeros(3, 2, dtype=torch.long), torch.zeros(4, dtype=torch.long),
                [[0, 1], [1, 0]]):
        with pytest.raises(ValueError, match=r"edge_index must be a \(2, num_edges\) tensor"):
            Graph.from_edge_index(bad, 2)
    with pytest.raises(ValueError, match=r"edge_index\[1\] \(targets\) holds node id 2"):
        Graph.from_edge_index(torch.tensor([[0], [2]]), 2)


# ------------------------------------------------------------------ devices
def test_batch_stays_on_the_graphs_device_cpu_twin():
    """The CPU twin of the CUDA test below: the batch is built where the graphs are."""
    parts = [rand_graph(5, 9, seed=s) for s in range(3)]
    g = Graph.batch(parts)
    assert g.device == parts[0].device and g.batch_num_nodes().device == g.device
    assert torch.equal(g.edge_index[:, :9], parts[0].edge_index)
    assert torch.equal(g.edge_index[:, 9:18], parts[1].edge_index + 5)


def test_batch_refuses_graphs_on_two_devices(monkeypatch):
    a, b = rand_graph(3, 4), rand_graph(3, 4)
    monkeypatch.setattr(Graph, "device", property(
        lambda self: torch.device("cuda", 1) if self is b else self.src.device))
    with pytest.raises(ValueError, match="graphs of a batch must be on one device"):
        Graph.batch([a, b])


@pytest.mark.parametrize("current,copies", [(0, True), (1, False)])
def test_to_compares_resolved_devices(monkeypatch, current, copies):
    """``"cuda"`` names the current CUDA device: a graph on cuda:1 is copied by ``to("cuda")``
    while cuda:0 is current, and returned as is while cuda:1 is (devices mocked)."""
    g = rand_graph(4, 6)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: current)
    monkeypatch.setattr(Graph, "device", property(lambda self: torch.device("cuda", 1)))
    copied = []
    monkeypatch.setattr(Graph, "_map", lambda self, fn: copied.append(fn) or "copy")
    assert (g.to("cuda") == "copy") is copies
    assert g.to("cuda:1") is g and g.to(torch.device("cuda", 1)) is g
    assert g.to("cuda:0") == "copy"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_batch_of_cuda_graphs_stays_on_cuda():
    parts = [rand_graph(5, 9, seed=s) for s in range(3)]
    g = Graph.batch([p.to("cuda") for p in parts])
    assert g.src.is_cuda and g.batch_num_nodes().is_cuda
    expected = Graph.batch(parts)
    assert edge_list(g.to("cpu")) == edge_list(expected)
    assert torch.equal(g.node_graph_ids().cpu(), expected.node_graph_ids())


def test_graphs_derived_from_checked_ones_are_not_checked_again(monkeypatch):
    # The check reads ids back to the host (a GPU sync): once, where a graph enters.
    g = Graph([0, 1, 2], [1, 2, 0], 4, edata={"w": torch.rand(3)})
    checks = []
    monkeypatch.setattr(Graph, "_validate", lambda self: checks.append(self))
    batch = Graph.batch([g, g])
    batch.unbatch()
    batch.add_self_loops().remove_self_loops()
    assert checks == []
    Graph([0], [1], 2)
    assert len(checks) == 1
    assert batch.edge_index.tolist() == [[0, 1, 2, 4, 5, 6], [1, 2, 0, 5, 6, 4]]
