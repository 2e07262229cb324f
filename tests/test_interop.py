"""data/interop.py and data/files.py: the PyG adapter on stand-in objects, the graph-pack file
format (round trip, atomic writes, damaged and foreign files), the DGL adapters (DGL profile
only), and the data-source checks of data/loaders.py with and without the optional packages."""

from __future__ import annotations

import errno
import os
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import torch

from autogcn.graph import Graph
from data import interop, loaders
from data.common import DataError
from data.files import (
    PackError,
    WriteError,
    pack_graphs,
    read_graph_pack,
    unpack_graphs,
    write_graph_pack,
)
from data.interop import MissingDependency, from_pyg


def _graphs() -> list[Graph]:
    gen = torch.Generator().manual_seed(0)
    out = []
    for n, e in ((3, 4), (1, 0), (5, 7)):
        src = torch.randint(0, n, (e,), generator=gen)
        dst = torch.randint(0, n, (e,), generator=gen)
        out.append(Graph(src, dst, n, ndata={"feat": torch.rand(n, 2, generator=gen),
                                             "label": torch.randint(0, 4, (n,), generator=gen)},
                         edata={"feat": torch.rand(e, 1, generator=gen)}))
    return out


def _same(g: Graph, h: Graph) -> bool:
    return (g.num_nodes() == h.num_nodes() and torch.equal(g.src, h.src)
            and torch.equal(g.dst, h.dst) and g.ndata.keys() == h.ndata.keys()
            and g.edata.keys() == h.edata.keys()
            and all(torch.equal(g.ndata[k], h.ndata[k]) for k in g.ndata)
            and all(torch.equal(g.edata[k], h.edata[k]) for k in g.edata)
            and torch.equal(g.batch_num_nodes(), h.batch_num_nodes())
            and torch.equal(g.batch_num_edges(), h.batch_num_edges()))


# --------------------------------------------------------------------------- from_pyg


def test_from_pyg_single_graph():
    x, pos = torch.rand(4, 3), torch.rand(4, 2)
    data = types.SimpleNamespace(x=x, pos=pos, edge_index=torch.tensor([[0, 1, 3], [1, 2, 0]]),
                                 edge_attr=torch.rand(3), y=torch.tensor([1]))
    g = from_pyg(data)
    assert (g.num_nodes(), g.num_edges(), g.batch_size) == (4, 3, 1)
    assert g.src.tolist() == [0, 1, 3] and g.dst.tolist() == [1, 2, 0]
    assert g.src.dtype == torch.int64
    assert g.ndata["feat"] is x and g.ndata["pos"] is pos and g.edata["feat"] is data.edge_attr
    assert set(g.ndata) == {"feat", "pos"} and set(g.edata) == {"feat"}  # y is the loader's


def test_from_pyg_without_features_and_isolated_nodes():
    data = types.SimpleNamespace(edge_index=torch.tensor([[0], [1]]), num_nodes=5)
    g = from_pyg(data)
    assert g.num_nodes() == 5 and g.ndata == {} and g.edata == {}
    assert from_pyg(types.SimpleNamespace(edge_index=None, x=torch.zeros(2, 1))).num_edges() == 0
    with pytest.raises(ValueError, match="2, E"):
        from_pyg(types.SimpleNamespace(edge_index=torch.zeros(3, 2, dtype=torch.long)))


def _pyg_batch(graphs: list[Graph], with_ptr: bool):
    """A PyG-style Batch of ``graphs``: offset edge_index, x, edge_attr, batch vector (+ ptr)."""
    sizes = torch.tensor([g.num_nodes() for g in graphs])
    offsets = torch.cumsum(sizes, 0) - sizes
    edge_index = torch.cat([torch.stack([g.src, g.dst]) + o for g, o in zip(graphs, offsets,
                                                                           strict=True)], 1)
    batch = torch.repeat_interleave(torch.arange(len(graphs)), sizes)
    data = types.SimpleNamespace(
        x=torch.cat([g.ndata["feat"] for g in graphs]), edge_index=edge_index,
        edge_attr=torch.cat([g.edata["feat"] for g in graphs]), batch=batch,
        num_graphs=len(graphs))
    if with_ptr:
        data.ptr = torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(sizes, 0)])
    return data


@pytest.mark.parametrize("with_ptr", [True, False])
def test_from_pyg_batch(with_ptr):
    graphs = [Graph(g.src, g.dst, g.num_nodes(), ndata={"feat": g.ndata["feat"]},
                    edata={"feat": g.edata["feat"]}) for g in _graphs()]
    g = from_pyg(_pyg_batch(graphs, with_ptr))
    assert _same(g, Graph.batch(graphs))
    assert g.batch_num_nodes().tolist() == [3, 1, 5] and g.batch_num_edges().tolist() == [4, 0, 7]
    assert all(_same(a, b) for a, b in zip(g.unbatch(), graphs, strict=True))


def test_from_pyg_batch_orders_edges_by_member():
    graphs = [Graph(g.src, g.dst, g.num_nodes(), ndata={"feat": g.ndata["feat"]},
                    edata={"feat": g.edata["feat"]}) for g in _graphs()]
    data = _pyg_batch(graphs, with_ptr=True)
    perm = torch.randperm(data.edge_index.shape[1], generator=torch.Generator().manual_seed(1))
    data.edge_index, data.edge_attr = data.edge_index[:, perm], data.edge_attr[perm]
    g = from_pyg(data)
    assert g.batch_num_edges().tolist() == [4, 0, 7]
    for member, ref in zip(g.unbatch(), graphs, strict=True):
        got = sorted(zip(member.src.tolist(), member.dst.tolist(),
                         member.edata["feat"].reshape(-1).tolist()))
        want = sorted(zip(ref.src.tolist(), ref.dst.tolist(),
                          ref.edata["feat"].reshape(-1).tolist()))
        assert got == want


def test_from_pyg_batch_errors():
    data = types.SimpleNamespace(edge_index=torch.tensor([[0], [2]]), x=torch.zeros(3, 1),
                                 batch=torch.tensor([0, 0, 1]), num_graphs=2)
    with pytest.raises(ValueError, match="joins two member graphs"):
        from_pyg(data)
    data = types.SimpleNamespace(edge_index=torch.zeros(2, 0, dtype=torch.long),
                                 x=torch.zeros(3, 1), batch=torch.tensor([1, 0, 1]))
    with pytest.raises(ValueError, match="not sorted"):
        from_pyg(data)
    data = types.SimpleNamespace(edge_index=torch.zeros(2, 0, dtype=torch.long),
                                 x=torch.zeros(3, 1), ptr=torch.tensor([0, 2]))
    with pytest.raises(ValueError, match="holds 2 nodes"):
        from_pyg(data)


# --------------------------------------------------------------------------- graph packs


def test_pack_round_trip_and_prefix(tmp_path):
    graphs = _graphs()
    path = tmp_path / "g.npz"
    pack = pack_graphs(graphs, node_keys=("feat", "label"), edge_keys=("feat",))
    pack.graph["target"] = np.arange(3, dtype=np.int64)
    assert pack.src.dtype == np.uint8
    write_graph_pack(path, pack, "test-format", 3)
    with np.load(path, allow_pickle=False) as z:  # the documented layout
        assert str(z["format"]) == "test-format" and int(z["version"]) == 3
        assert z["num_nodes"].tolist() == [3, 1, 5] and z["num_edges"].tolist() == [4, 0, 7]
        keys = {"src", "dst", "node_feat", "node_label", "edge_feat", "graph_target"}
        assert keys <= set(z.files)
    back = read_graph_pack(path, "test-format", 3)
    assert back.graph["target"].tolist() == [0, 1, 2]
    out = unpack_graphs(back)
    assert all(_same(a, b) for a, b in zip(out, graphs, strict=True))
    head = unpack_graphs(read_graph_pack(path, "test-format", 3, take=2))
    assert len(head) == 2 and all(_same(a, b) for a, b in zip(head, graphs, strict=False))
    cast = unpack_graphs(read_graph_pack(path, "test-format", 3),
                         node_dtypes={"feat": torch.float64})
    assert cast[0].ndata["feat"].dtype == torch.float64


def test_pack_wide_ids(tmp_path):
    g = Graph(torch.tensor([0, 299]), torch.tensor([299, 0]), 300)
    pack = pack_graphs([g, Graph([], [], 0)])
    assert pack.src.dtype == np.uint16
    write_graph_pack(tmp_path / "w.npz", pack, "f", 1)
    out = unpack_graphs(read_graph_pack(tmp_path / "w.npz", "f", 1))
    assert _same(out[0], g) and out[1].num_nodes() == 0
    empty = pack_graphs([])
    write_graph_pack(tmp_path / "e.npz", empty, "f", 1)
    assert unpack_graphs(read_graph_pack(tmp_path / "e.npz", "f", 1)) == []


def test_pack_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "g.npz"
    pack = pack_graphs(_graphs(), node_keys=("feat",))
    write_graph_pack(path, pack, "f", 1)
    before = path.read_bytes()
    real = Path.write_bytes

    def full_disk(self, data):  # half a file, then the disk is full
        real(self, bytes(data)[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))

    monkeypatch.setattr(Path, "write_bytes", full_disk)
    with pytest.raises(WriteError) as err:
        write_graph_pack(path, pack_graphs(_graphs()[:1]), "f", 1, remedy="try elsewhere")
    assert str(err.value) == f"no space left on device writing {tmp_path} (g.npz): try elsewhere"
    assert path.read_bytes() == before  # the old file is untouched
    assert sorted(os.listdir(tmp_path)) == ["g.npz"]  # and no temporary file is left
    with pytest.raises(WriteError):
        write_graph_pack(tmp_path / "new.npz", pack, "f", 1)
    assert sorted(os.listdir(tmp_path)) == ["g.npz"]


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "pickle", "npy"])
def test_unreadable_pack_is_a_one_line_pack_error(tmp_path, damage):
    path = tmp_path / "g.npz"
    write_graph_pack(path, pack_graphs(_graphs(), node_keys=("feat",)), "f", 1)
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[:300])
    elif damage == "garbage":
        path.write_bytes(os.urandom(1000))
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "pickle":
        import pickle

        path.write_bytes(pickle.dumps({"format": "f", "version": 1}))
    else:
        with path.open("wb") as f:
            np.save(f, np.arange(3))
    with pytest.raises(PackError) as err:
        read_graph_pack(path, "f", 1)
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    assert isinstance(err.value, DataError)


def test_pack_format_version_and_consistency(tmp_path):
    path = tmp_path / "g.npz"
    pack = pack_graphs(_graphs(), node_keys=("feat",))
    write_graph_pack(path, pack, "f", 1)
    with pytest.raises(PackError, match="version 1, expected 'f' version 2"):
        read_graph_pack(path, "f", 2)
    with pytest.raises(PackError, match="expected 'other'"):
        read_graph_pack(path, "other", 1)
    np.savez(path, src=pack.src, dst=pack.dst)  # no format entry
    with pytest.raises(PackError, match="no format"):
        read_graph_pack(path, "f", 1)
    arrays = {"format": np.array("f"), "version": np.array(1), "num_nodes": pack.num_nodes,
              "num_edges": pack.num_edges, "src": pack.src, "dst": pack.dst,
              "node_feat": pack.node["feat"]}
    bad = dict(arrays, src=pack.src + 4)  # endpoints outside their graph
    np.savez(path, **bad)
    with pytest.raises(PackError, match="outside its graph"):
        read_graph_pack(path, "f", 1)
    np.savez(path, **dict(arrays, node_feat=pack.node["feat"][:-1]))
    with pytest.raises(PackError, match="node_feat"):
        read_graph_pack(path, "f", 1)
    np.savez(path, **dict(arrays, num_edges=pack.num_edges + 1))
    with pytest.raises(PackError, match="edge arrays"):
        read_graph_pack(path, "f", 1)


# --------------------------------------------------------------------------- DGL


def test_to_dgl_without_dgl_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "dgl", None)
    with pytest.raises(MissingDependency) as err:
        interop.to_dgl(_graphs()[0])
    msg = str(err.value)
    assert "bash scripts/setup.sh --dgl" in msg and "\n" not in msg
    assert isinstance(err.value, ImportError) and isinstance(err.value, DataError)


def test_require_pyg_without_pyg(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_geometric", None)
    with pytest.raises(MissingDependency, match="pip install torch_geometric"):
        interop.require_pyg("a test")


def test_dgl_round_trip():
    dgl = pytest.importorskip("dgl", reason="from_dgl/to_dgl are tested in the DGL profile")
    graphs = _graphs()
    for g in (graphs[0], Graph.batch(graphs)):
        h = interop.to_dgl(g)
        assert isinstance(h, dgl.DGLGraph) and h.idtype == torch.int64
        assert h.batch_size == g.batch_size
        assert h.batch_num_nodes().tolist() == g.batch_num_nodes().tolist()
        assert h.batch_num_edges().tolist() == g.batch_num_edges().tolist()
        s, d = h.edges()
        assert torch.equal(s, g.src) and torch.equal(d, g.dst)
        assert torch.equal(h.ndata["feat"], g.ndata["feat"])
        assert torch.equal(h.in_degrees(), g.in_degrees())
        assert _same(interop.from_dgl(h), g)
    # a DGL batch built by DGL itself, int32 ids
    parts = []
    for g in graphs:
        h = dgl.graph((g.src.int(), g.dst.int()), num_nodes=g.num_nodes(), idtype=torch.int32)
        h.ndata["feat"], h.edata["feat"] = g.ndata["feat"], g.edata["feat"]
        parts.append(h)
    back = interop.from_dgl(dgl.batch(parts))
    assert back.src.dtype == torch.int64 and back.batch_num_nodes().tolist() == [3, 1, 5]
    assert [m.num_edges() for m in back.unbatch()] == [4, 0, 7]
    hetero = dgl.heterograph({("a", "r", "a"): ([0], [1]), ("a", "s", "a"): ([1], [0])})
    with pytest.raises(ValueError, match="homogeneous"):
        interop.from_dgl(hetero)


# --------------------------------------------------------------------------- data sources


def test_source_matrix():
    assert loaders.data_sources("SBM_CLUSTER") == ("generate", "dgl", "pyg")
    for name in ("ZINC", "MNIST", "CIFAR10", "PUBMED"):
        assert loaders.data_sources(name) == ("raw", "dgl", "pyg")
    assert loaders.data_sources("squirrel") == ("raw", "pyg")
    assert loaders.resolve_data_source("ZINC", None) == "raw"
    assert loaders.resolve_data_source("SBM_PATTERN", None) == "generate"
    assert set().union(*loaders.DATA_SOURCES.values()) == set(loaders.SOURCE_CHOICES)
    for name, source in (("ZINC", "generate"), ("SBM_CLUSTER", "raw"), ("YELPCHI", "pyg"),
                         ("ARXIV_YEAR", "dgl")):
        with pytest.raises(DataError, match=f"not available for {name}"):
            loaders.resolve_data_source(name, source)
    with pytest.raises(DataError, match="unknown dataset"):
        loaders.data_sources("CORA")


@pytest.mark.parametrize("dataset", ["SBM_CLUSTER", "ZINC", "MNIST", "CIFAR10"])
def test_dgl_source_without_dgl(tmp_path, monkeypatch, dataset):
    monkeypatch.setitem(sys.modules, "dgl", None)  # the default profile
    monkeypatch.setitem(sys.modules, "dgl.data", None)
    cfg = {"data_dir": str(tmp_path), "data_source": "dgl", "max_graphs": 2}
    with pytest.raises(DataError) as err:
        loaders.load_graph_dataset(dataset, cfg)
    msg = str(err.value)
    assert "\n" not in msg and "scripts/setup.sh --dgl" in msg and "DGL profile" in msg
    monkeypatch.setitem(sys.modules, "torch_geometric", None)
    with pytest.raises(DataError, match="pip install torch_geometric") as err:
        loaders.load_graph_dataset(dataset, dict(cfg, data_source="pyg"))
    assert "\n" not in str(err.value)


def test_node_sources_through_loaders(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "dgl", None)
    for name in ("PUBMED", "YELPCHI"):
        with pytest.raises(DataError, match="scripts/setup.sh --dgl") as err:
            loaders.load_node_data(name, {"data_dir": str(tmp_path), "data_source": "dgl"})
        assert "\n" not in str(err.value)
    with pytest.raises(DataError, match="not available for SQUIRREL"):
        loaders.load_node_data("SQUIRREL", {"data_source": "dgl"})


def test_sbm_variant_needs_generate(tmp_path):
    with pytest.raises(DataError, match="sbm_variant"):
        loaders.load_graph_dataset("SBM_PATTERN", {"data_dir": str(tmp_path),
                                                   "data_source": "pyg",
                                                   "sbm_variant": "PATTERN_EASY"})
