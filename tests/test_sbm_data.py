"""Tests of the SBM_CLUSTER / SBM_PATTERN generator and loader (data/sbm.py).

Statistics are checked against the spec's parameters (section 4) by recomputing them from the
graphs' adjacency and labels; file handling is checked on tiny prefixes in ``tmp_path``. The DGL
data source is tested only where DGL is installed (the DGL profile); PyG is stood in for by a
fake module.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import logging
import os
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import torch

from autogcn.graph import Graph
from data import sbm
from data.common import DataError, collate_graphs
from data.files import WriteError, read_graph_pack, write_graph_pack
from data.sbm import (
    SBM_NAMES,
    generate_sbm_sample,
    generate_sbm_split,
    load_sbm_dataset,
    pattern_instance,
    sbm_config,
    sbm_statistics,
)
from tests.helpers import fake_pyg_datasets


def dense(g: Graph) -> np.ndarray:
    """Adjacency counts (duplicates would show up as 2)."""
    n = g.num_nodes()
    src, dst = (t.numpy() for t in g.edges())
    a = np.zeros((n, n), dtype=np.int64)
    np.add.at(a, (src, dst), 1)
    return a


def same_graph(g: Graph, h: Graph) -> bool:
    return (
        g.num_nodes() == h.num_nodes()
        and np.array_equal(dense(g), dense(h))
        and torch.equal(g.ndata["feat"], h.ndata["feat"])
        and torch.equal(g.ndata["label"], h.ndata["label"])
    )


def check_basic_format(g: Graph, y: torch.Tensor) -> np.ndarray:
    """Shared format checks; returns the dense adjacency."""
    assert isinstance(g, Graph)
    assert g.src.dtype == torch.int64 and g.dst.dtype == torch.int64
    assert g.ndata["feat"].dtype == torch.int64 and g.ndata["feat"].shape == (g.num_nodes(),)
    assert g.ndata["label"].dtype == torch.int64 and torch.equal(g.ndata["label"], y)
    assert g.edata == {}  # no edge features: no net reads them
    a = dense(g)
    assert a.max() <= 1, "duplicate edges"
    assert np.array_equal(a, a.T), "not symmetric"
    assert np.all(np.diag(a) == 0), "self-loop"
    return a


# ------------------------------------------------------------------------------------------
# Generator statistics
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster_split():
    return generate_sbm_split("SBM_CLUSTER", "train", 300, seed=0)


@pytest.fixture(scope="module")
def pattern_split():
    # 300 graphs = instances 0..99, three graphs each (graph i uses instance i % 100)
    return generate_sbm_split("SBM_PATTERN", "train", 300, seed=0)


def test_cluster_matches_spec(cluster_split):
    sizes, intra, intra_pairs, inter, inter_pairs = [], 0, 0, 0, 0
    unsorted = 0
    for g, y in cluster_split:
        a = check_basic_format(g, y)
        lab = y.numpy()
        feat = g.ndata["feat"].numpy()
        counts = np.bincount(lab, minlength=6)
        assert lab.max() <= 5 and len(counts) == 6
        sizes.extend(counts.tolist())
        upper = np.triu(np.ones_like(a, dtype=bool), 1)
        same = lab[:, None] == lab[None, :]
        intra += a[same & upper].sum()
        intra_pairs += (same & upper).sum()
        inter += a[~same & upper].sum()
        inter_pairs += (~same & upper).sum()
        # exactly one nonzero feature per community, with value community + 1
        assert np.count_nonzero(feat) == 6
        for r in range(6):
            f = feat[lab == r]
            assert np.count_nonzero(f) == 1 and f.max() == r + 1
        unsorted += int(np.any(np.diff(lab) < 0))
    sizes = np.array(sizes)
    assert sizes.min() >= 5 and sizes.max() < 35
    assert sizes.min() <= 6 and sizes.max() >= 33  # the whole range is used
    assert abs(sizes.mean() - 19.5) < 0.8  # 1800 sizes, sd 8.66 -> se 0.2
    assert abs(intra / intra_pairs - 0.55) < 0.01
    assert abs(inter / inter_pairs - 0.25) < 0.01
    assert unsorted == len(cluster_split)  # nodes are permuted, not grouped by community


def test_pattern_matches_spec(pattern_split):
    cfg = sbm_config("SBM_PATTERN")
    cc_intra = cc_intra_pairs = cc_inter = cc_inter_pairs = 0
    pc = pc_pairs = pp = pp_pairs = 0
    for i, (g, y) in enumerate(pattern_split):
        a = check_basic_format(g, y)
        lab = y.numpy()
        feat = g.ndata["feat"].numpy()
        assert set(np.unique(feat)) <= {0, 1, 2} and set(np.unique(lab)) == {0, 1}
        pat = lab == 1
        assert 5 <= pat.sum() < 35
        # pattern <-> community links and pattern-internal links, from labels alone
        pc += a[np.ix_(pat, ~pat)].sum()
        pc_pairs += pat.sum() * (~pat).sum()
        pp += a[np.ix_(pat, pat)].sum() / 2
        pp_pairs += pat.sum() * (pat.sum() - 1) / 2
        # community-community: the generator reports the community of each node
        s = generate_sbm_sample(cfg, 0, "train", i)
        assert np.array_equal(s.src, g.edges()[0].numpy())
        blk = s.block[s.perm]
        assert np.array_equal(blk == cfg.n_communities, pat)
        comm_sizes = np.bincount(blk[~pat], minlength=5)
        assert comm_sizes.min() >= 5 and comm_sizes.max() < 35 and len(comm_sizes) == 5
        sub = a[np.ix_(~pat, ~pat)]
        b = blk[~pat]
        upper = np.triu(np.ones_like(sub, dtype=bool), 1)
        same = b[:, None] == b[None, :]
        cc_intra += sub[same & upper].sum()
        cc_intra_pairs += (same & upper).sum()
        cc_inter += sub[~same & upper].sum()
        cc_inter_pairs += (~same & upper).sum()
    assert abs(cc_intra / cc_intra_pairs - 0.5) < 0.01
    assert abs(cc_inter / cc_inter_pairs - 0.35) < 0.01
    assert abs(pc / pc_pairs - 0.5) < 0.01
    assert abs(pp / pp_pairs - 0.5) < 0.02  # 100 instances, ~20k distinct pairs


def test_pattern_instances_are_fixed_and_distinct(pattern_split):
    cfg = sbm_config("SBM_PATTERN")
    sizes = []
    for k in range(100):
        adj0, feat0 = pattern_instance(cfg, 0, k)
        sizes.append(len(feat0))
        degs = []
        for i in (k, k + 100, k + 200):  # three graphs of instance k
            g, y = pattern_split[i]
            pat = y.numpy() == 1
            a = dense(g)[np.ix_(pat, pat)]
            # invariant that needs no node correspondence: sorted (feature, degree) pairs
            feats = g.ndata["feat"].numpy()[pat]
            degs.append(sorted(zip(feats.tolist(), a.sum(1).tolist(), strict=True)))
            # exact check through the permutation the generator used
            s = generate_sbm_sample(cfg, 0, "train", i)
            n_comm = s.num_nodes - len(feat0)
            idx = np.flatnonzero(pat)
            pos = s.perm[idx] - n_comm  # position of each pattern node inside the instance
            assert np.array_equal(np.sort(pos), np.arange(len(feat0)))
            assert np.array_equal(a, adj0[np.ix_(pos, pos)])
            assert np.array_equal(feats, feat0[pos])
        assert degs[0] == degs[1] == degs[2]
    assert min(sizes) >= 5 and max(sizes) < 35 and len(set(sizes)) > 20


def test_one_pattern_variant():
    split = generate_sbm_split("SBM_PATTERN", "train", 60, variant="PATTERN_EASY")  # an alias
    cfg = sbm_config("SBM_PATTERN", "q20-one-pattern")
    assert cfg.q == 0.2 and cfg is sbm_config("SBM_PATTERN", "PATTERN_EASY")
    adj0, feat0 = pattern_instance(cfg, 0, 0)
    for g, y in split:
        check_basic_format(g, y)
        pat = y.numpy() == 1
        assert pat.sum() == 20
        a = dense(g)[np.ix_(pat, pat)]
        assert sorted(a.sum(1).tolist()) == sorted(adj0.sum(1).tolist())
    with pytest.raises(ValueError):
        sbm_config("SBM_CLUSTER", "PATTERN_EASY")


@pytest.mark.parametrize("variant,q,size", [("q20-size20", 0.2, 20), ("q35-size20", 0.35, 20)])
def test_hundred_pattern_variants(variant, q, size):
    """100 patterns of ``size`` nodes, each with its own graph; q between communities."""
    cfg = sbm_config("SBM_PATTERN", variant)
    assert (cfg.q, cfg.pattern_size, cfg.n_patterns) == (q, size, 100)
    split = generate_sbm_split("SBM_PATTERN", "train", 200, variant=variant)
    instances = set()
    for i, (g, y) in enumerate(split):
        check_basic_format(g, y)
        assert int((y == 1).sum()) == size
        adj0, _ = pattern_instance(cfg, 0, i % 100)
        instances.add(adj0.tobytes())
    assert len(instances) > 90  # the patterns differ (one shared pattern would give 1)
    default = sbm_config("SBM_PATTERN", "q35-size5to34")
    assert default is sbm_config("SBM_PATTERN") is sbm_config("SBM_PATTERN", "final")


# ------------------------------------------------------------------------------------------
# Determinism
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SBM_NAMES)
def test_deterministic_and_prefix_consistent(name):
    a = generate_sbm_split(name, "val", 5, seed=3)
    sbm._pattern_instance.cache_clear()  # the PATTERN instances must not depend on the cache
    b = generate_sbm_split(name, "val", 25, seed=3)
    assert len(a) == 5 and len(b) == 25
    assert all(same_graph(g, h) for g, h in zip(a.graphs, b.graphs[:5], strict=True))
    c = generate_sbm_split(name, "val", 5, seed=4)
    assert not any(same_graph(g, h) for g, h in zip(a.graphs, c.graphs, strict=True))
    # splits use different streams
    t = generate_sbm_split(name, "test", 5, seed=3)
    assert not any(same_graph(g, h) for g, h in zip(a.graphs, t.graphs, strict=True))


# ------------------------------------------------------------------------------------------
# Files and the public loader
# ------------------------------------------------------------------------------------------


def _forbid_generation(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("generator called although the files exist")

    monkeypatch.setattr(sbm, "generate_sbm_sample", boom)


def _mtimes(root):
    return {p.name: p.stat().st_mtime_ns for p in root.iterdir()}


def test_max_graphs_round_trip(tmp_path, monkeypatch):
    ds = load_sbm_dataset("SBM_CLUSTER", tmp_path, max_graphs=8, progress=False)
    root = tmp_path / "SBM_CLUSTER"
    names = {p.name for p in root.iterdir()}
    assert names == {"train_first8.npz", "val_first8.npz", "test_first8.npz", "meta_first8.json"}
    assert (ds.name, ds.in_dim, ds.num_classes) == ("SBM_CLUSTER", 7, 6)
    assert [len(s) for s in (ds.train, ds.val, ds.test)] == [8, 8, 8]
    ref = generate_sbm_split("SBM_CLUSTER", "val", 8)
    assert all(same_graph(g, h) for g, h in zip(ds.val.graphs, ref.graphs, strict=True))
    for g, y in ds.train:
        check_basic_format(g, y)
    meta = json.loads((root / "meta_first8.json").read_text())
    assert meta["seed"] == 0 and meta["params"]["p"] == 0.55 and meta["max_graphs"] == 8
    assert (meta["format"], meta["format_version"]) == ("autogcn-sbm", sbm.FORMAT_VERSION)
    assert meta["statistics"]["train"]["graphs"] == 8

    before = _mtimes(root)
    _forbid_generation(monkeypatch)
    again = load_sbm_dataset("SBM_CLUSTER", tmp_path, max_graphs=8, progress=False)
    assert _mtimes(root) == before
    assert all(same_graph(g, h) for g, h in zip(again.train.graphs, ds.train.graphs, strict=True))
    # a prefix is never taken for another prefix or for the full data
    with pytest.raises(AssertionError, match="generator called"):
        load_sbm_dataset("SBM_CLUSTER", tmp_path, max_graphs=5, progress=False)
    with pytest.raises(AssertionError, match="generator called"):
        load_sbm_dataset("SBM_CLUSTER", tmp_path, progress=False)
    assert not (root / "meta.json").exists() and not (root / "train.npz").exists()

    # the batch the training code builds
    batch, targets, snorm_n = collate_graphs([again.train[0], again.train[1]])
    assert targets.shape == (batch.num_nodes(),) and snorm_n.shape == (batch.num_nodes(), 1)


def test_full_files_serve_max_graphs(tmp_path, monkeypatch):
    # a small "full" dataset: the per-graph RNGs do not depend on the split sizes
    key = ("SBM_PATTERN", None)
    small = dataclasses.replace(sbm._CONFIGS[key], split_sizes=(12, 4, 4), n_patterns=4)
    monkeypatch.setitem(sbm._CONFIGS, key, small)
    ds = load_sbm_dataset("SBM_PATTERN", tmp_path, progress=False)
    root = tmp_path / "SBM_PATTERN"
    assert {p.name for p in root.iterdir()} == {"train.npz", "val.npz", "test.npz", "meta.json"}
    assert [len(s) for s in (ds.train, ds.val, ds.test)] == [12, 4, 4]
    assert (ds.in_dim, ds.num_classes) == (3, 2)
    assert ds.info["statistics"]["train"] == sbm_statistics(ds.train)
    before = _mtimes(root)
    _forbid_generation(monkeypatch)
    head = load_sbm_dataset("SBM_PATTERN", tmp_path, max_graphs=3, progress=False)
    assert [len(s) for s in (head.train, head.val, head.test)] == [3, 3, 3]
    pairs = zip(head.train.graphs, ds.train.graphs[:3], strict=True)
    assert all(same_graph(g, h) for g, h in pairs)
    assert _mtimes(root) == before  # loaded from the full files, no prefix files written
    # other settings in the same folder are refused, not silently mixed
    meta = json.loads((root / "meta.json").read_text())
    meta["params"]["q"] = 0.2
    (root / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(DataError, match="other settings"):
        load_sbm_dataset("SBM_PATTERN", tmp_path, progress=False)


def test_interrupted_save_leaves_nothing_trusted(tmp_path, monkeypatch):
    real = Path.write_bytes
    written = []

    def full_disk_on_val(self, data):  # the val split: half a file, then the disk is full
        written.append(self.name)
        if self.name.startswith(".val_first4.npz.tmp"):
            real(self, bytes(data)[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", full_disk_on_val)
    with pytest.raises(WriteError) as err:
        load_sbm_dataset("SBM_CLUSTER", tmp_path, max_graphs=4, progress=False)
    root = tmp_path / "SBM_CLUSTER"
    assert str(err.value).startswith(f"no space left on device writing {root} (val_first4.npz)")
    assert "--data_dir" in str(err.value) and "\n" not in str(err.value)
    assert {p.name for p in root.iterdir()} == {"train_first4.npz"}  # no temp file, no meta
    assert written[0].startswith(".train_first4.npz.tmp")  # written under a temporary name
    monkeypatch.setattr(Path, "write_bytes", real)
    ds = load_sbm_dataset("SBM_CLUSTER", tmp_path, max_graphs=4, progress=False)
    assert len(ds.val) == 4 and (root / "meta_first4.json").exists()
    ref = generate_sbm_split("SBM_CLUSTER", "val", 4)
    assert all(same_graph(g, h) for g, h in zip(ds.val.graphs, ref.graphs, strict=True))


def _sbm_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "data.sbm" and r.levelno >= logging.WARNING]


def test_other_format_version_is_regenerated(tmp_path, monkeypatch, caplog):
    load_sbm_dataset("SBM_CLUSTER", tmp_path, max_graphs=2, progress=False)
    root = tmp_path / "SBM_CLUSTER"
    monkeypatch.setattr(sbm, "FORMAT_VERSION", sbm.FORMAT_VERSION + 1)
    with caplog.at_level(logging.INFO, logger="data.sbm"):
        ds = load_sbm_dataset("SBM_CLUSTER", tmp_path, max_graphs=2, progress=False)
    warnings = _sbm_warnings(caplog)
    assert len(warnings) == 1 and "version 1 (this code reads" in warnings[0]
    meta = json.loads((root / "meta_first2.json").read_text())
    assert meta["format_version"] == sbm.FORMAT_VERSION
    assert len(ds.train) == 2


@pytest.mark.parametrize("damage", ["truncate", "garbage", "version", "meta"])
def test_unreadable_files_are_regenerated(tmp_path, caplog, damage):
    load_sbm_dataset("SBM_CLUSTER", tmp_path, max_graphs=3, progress=False)
    root = tmp_path / "SBM_CLUSTER"
    path = root / ("meta_first3.json" if damage == "meta" else "val_first3.npz")
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage in ("garbage", "meta"):
        path.write_bytes(os.urandom(2000))
    else:  # a pack of another version under a current meta json: never misread
        pack = read_graph_pack(path, sbm.FORMAT_NAME, sbm.FORMAT_VERSION)
        write_graph_pack(path, pack, sbm.FORMAT_NAME, sbm.FORMAT_VERSION + 7)
    # a command that must not write (checkpoint evaluation): one line naming the file
    with pytest.raises(DataError) as err:
        load_sbm_dataset("SBM_CLUSTER", tmp_path, max_graphs=3, progress=False, generate=False)
    assert path.name in str(err.value) and "\n" not in str(err.value)
    # any other: regenerated, with one log line naming the folder
    with caplog.at_level(logging.INFO, logger="data.sbm"):
        ds = load_sbm_dataset("SBM_CLUSTER", tmp_path, max_graphs=3, progress=False)
    warnings = _sbm_warnings(caplog)
    assert len(warnings) == 1 and str(root) in warnings[0] and "\n" not in warnings[0]
    ref = generate_sbm_split("SBM_CLUSTER", "val", 3)
    assert all(same_graph(g, h) for g, h in zip(ds.val.graphs, ref.graphs, strict=True))


def test_seed_gets_its_own_folder(tmp_path):
    ds = load_sbm_dataset("SBM_CLUSTER", tmp_path, max_graphs=2, seed=7, progress=False)
    assert (tmp_path / "SBM_CLUSTER_seed7" / "meta_first2.json").exists()
    ref = generate_sbm_split("SBM_CLUSTER", "train", 2, seed=7)
    assert all(same_graph(g, h) for g, h in zip(ds.train.graphs, ref.graphs, strict=True))
    easy = load_sbm_dataset("SBM_PATTERN", tmp_path, max_graphs=2, variant="q20-one-pattern",
                            progress=False)
    assert (tmp_path / "SBM_PATTERN_q20-one-pattern" / "meta_first2.json").exists()
    assert easy.name == "SBM_PATTERN_q20-one-pattern"


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError) as err:
        load_sbm_dataset("SBM_FOO", tmp_path)
    assert "SBM_CLUSTER" in str(err.value) and "SBM_PATTERN" in str(err.value)
    with pytest.raises(ValueError):
        load_sbm_dataset("SBM_CLUSTER", tmp_path, variant="PATTERN_EASY")
    with pytest.raises(ValueError):
        load_sbm_dataset("SBM_CLUSTER", tmp_path, source="web")
    with pytest.raises(ValueError):
        load_sbm_dataset("SBM_CLUSTER", tmp_path, max_graphs=0)
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    with pytest.raises(DataError, match="cannot create"):
        load_sbm_dataset("SBM_CLUSTER", blocker / "sub", max_graphs=2, progress=False)
    assert os.listdir(tmp_path) == ["a_file"]


def test_sbm_statistics_by_hand():
    g1 = Graph(torch.tensor([0, 1]), torch.tensor([1, 0]), num_nodes=3)
    g2 = Graph(torch.tensor([0, 1, 1, 2]), torch.tensor([1, 0, 2, 1]), num_nodes=5)
    y1, y2 = torch.tensor([0, 1, 1]), torch.tensor([0, 0, 0, 1, 0])
    stats = sbm_statistics(sbm.GraphSplit([g1, g2], [y1, y2]))
    assert stats["graphs"] == 2 and stats["mean_nodes"] == 4.0
    assert (stats["min_nodes"], stats["max_nodes"]) == (3, 5) and stats["mean_edges"] == 3.0
    assert stats["class_balance"] == pytest.approx([5 / 8, 3 / 8])


def test_dgl_source_mapping_and_errors(tmp_path, monkeypatch):
    # DGL's copy cannot be downloaded here: stand in for it with graphs in DGL's stored format
    # (int32 ids, int16 labels) and check the mapping onto ours, and the offline error.
    dgl = pytest.importorskip("dgl", reason="the DGL data source needs the DGL profile")
    seen = []

    class FakeCluster:
        def __init__(self, mode, raw_dir, verbose):
            seen.append((mode, raw_dir))
            g = dgl.graph((torch.tensor([0, 1]), torch.tensor([1, 0])), num_nodes=3,
                          idtype=torch.int32)
            g.ndata["feat"] = torch.tensor([0, 3, 0])
            g.ndata["label"] = torch.tensor([2, 2, 5], dtype=torch.int16)
            g.edata["feat"] = torch.ones(2, 1)
            self.graphs = [g] * 4

        def __len__(self):
            return len(self.graphs)

        def __getitem__(self, i):
            return self.graphs[i]

    monkeypatch.setattr(dgl.data, "CLUSTERDataset", FakeCluster)
    ds = load_sbm_dataset("SBM_CLUSTER", tmp_path, max_graphs=2, source="dgl", progress=False)
    assert [m for m, _ in seen] == ["train", "valid", "test"]
    assert all(d == str(tmp_path) for _, d in seen)
    assert [len(s) for s in (ds.train, ds.val, ds.test)] == [2, 2, 2]
    assert (ds.in_dim, ds.num_classes, ds.info["source"]) == (7, 6, "dgl")
    for g, y in ds.train:
        check_basic_format(g, y)
        assert y.tolist() == [2, 2, 5]

    class Offline:
        def __init__(self, *args, **kwargs):
            raise ConnectionError("no route to host")

    monkeypatch.setattr(dgl.data, "PATTERNDataset", Offline)
    with pytest.raises(DataError, match="failed.*needs internet.*generate"):
        load_sbm_dataset("SBM_PATTERN", tmp_path, source="dgl", progress=False)


def test_dgl_source_without_dgl_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "dgl", None)  # as in the default profile
    monkeypatch.setitem(sys.modules, "dgl.data", None)
    with pytest.raises(DataError) as err:
        load_sbm_dataset("SBM_CLUSTER", tmp_path, source="dgl", progress=False)
    msg = str(err.value)
    assert "\n" not in msg and "scripts/setup.sh --dgl" in msg and "dgl" in msg.lower()


def test_pyg_source_mapping(tmp_path, monkeypatch):
    # PyG's GNNBenchmarkDataset stands in as a fake: one-hot float features of width 7, int64
    # node labels, an edge_index; it must become our graphs (ids, no edge features).
    seen = []

    class FakeBenchmark:
        def __init__(self, root, name, split):
            seen.append((root, name, split))
            ids = torch.tensor([0, 3, 0, 6])
            self.item = types.SimpleNamespace(
                x=torch.nn.functional.one_hot(ids, 7).float(),
                edge_index=torch.tensor([[0, 1, 2, 2], [1, 0, 3, 1]]),
                edge_attr=torch.ones(4, 1), y=torch.tensor([2, 2, 5, 0]), num_nodes=4)

        def __len__(self):
            return 3

        def __getitem__(self, i):
            return self.item

    fake_pyg_datasets(monkeypatch, GNNBenchmarkDataset=FakeBenchmark)
    ds = load_sbm_dataset("SBM_CLUSTER", tmp_path, max_graphs=2, source="pyg", progress=False)
    assert seen == [(str(tmp_path / "pyg"), "CLUSTER", s) for s in ("train", "val", "test")]
    assert [len(s) for s in (ds.train, ds.val, ds.test)] == [2, 2, 2]
    assert (ds.in_dim, ds.num_classes, ds.info["source"]) == (7, 6, "pyg")
    g, y = ds.train[0]
    assert g.ndata["feat"].tolist() == [0, 3, 0, 6] and g.ndata["feat"].dtype == torch.int64
    assert y.tolist() == [2, 2, 5, 0] and y.dtype == torch.int64
    assert g.src.tolist() == [0, 1, 2, 2] and g.dst.tolist() == [1, 0, 3, 1] and g.edata == {}
    batch, targets, _ = collate_graphs(list(ds.train))
    assert batch.num_nodes() == 8 and targets.shape == (8,)


def test_pyg_feature_conventions():
    assert sbm.feature_ids(torch.tensor([[2], [0], [1]]), 3).tolist() == [2, 0, 1]
    assert sbm.feature_ids(torch.tensor([2.0, 0.0]), 3).tolist() == [2, 0]
    one_hot = torch.tensor([[0.0, 0, 1], [1, 0, 0]])
    assert sbm.feature_ids(one_hot, 3).tolist() == [2, 0]
    for bad in (torch.tensor([[0.5, 0.5, 0]]), torch.tensor([[0.0, 0, 1, 0]]),
                torch.tensor([3]), torch.tensor([0.5])):
        with pytest.raises(DataError):
            sbm.feature_ids(bad, 3)


def test_pyg_source_without_pyg_and_offline(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_geometric", None)
    with pytest.raises(DataError, match="pip install torch_geometric") as err:
        load_sbm_dataset("SBM_PATTERN", tmp_path, source="pyg", progress=False)
    assert "\n" not in str(err.value)

    class Offline:
        def __init__(self, *args, **kwargs):
            raise ConnectionError("no route to host")

    fake_pyg_datasets(monkeypatch, GNNBenchmarkDataset=Offline)
    with pytest.raises(DataError, match="failed.*needs internet.*generate"):
        load_sbm_dataset("SBM_PATTERN", tmp_path, source="pyg", progress=False)
