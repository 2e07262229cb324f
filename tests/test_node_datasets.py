"""Tests of the node datasets (data/node_datasets.py, one module per dataset) on small files
written in the real formats.

PubMed, YelpChi and Arxiv-year are not available offline, so their loaders are checked on tiny
fixtures (Planetoid pickles, a YelpChi.mat, a fake ``ogb`` module) against expectations built
independently here; Squirrel is also checked on the real file when it is present. The DGL
sources are tested in the DGL profile only; PyG's datasets are stood in for by fake modules.
"""

from __future__ import annotations

import pickle
import sys
import types
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import scipy.io as sio
import scipy.sparse as sp
import torch

from autogcn.graph import Graph
from data.arxiv_year import even_quantile_labels
from data.common import DataError
from data.loaders import load_node_dataset
from data.node_datasets import (
    NODE_DATASETS,
    NODE_SOURCES,
    SPLIT_RATIOS,
    NodeDataset,
    build_graph,
    get_split,
    random_split,
    with_edge_direction,
    with_row_normalised_features,
)
from data.squirrel import filtered_squirrel, outlink_copies
from data.yelpchi import merge_relations
from tests.helpers import fake_pyg_datasets


def edge_set(g: Graph) -> set[tuple[int, int]]:
    s, d = g.edges()
    return set(zip(s.tolist(), d.tolist(), strict=True))


def undirected(pairs) -> set[tuple[int, int]]:
    """Expected edge set: both directions of every non-loop pair."""
    out = set()
    for u, v in pairs:
        if u != v:
            out |= {(int(u), int(v)), (int(v), int(u))}
    return out


def check_graph(g: Graph, n: int) -> None:
    assert isinstance(g, Graph) and g.num_nodes() == n
    assert g.src.dtype == g.dst.dtype == torch.int64 and g.device == torch.device("cpu")
    es = edge_set(g)
    assert len(es) == g.num_edges(), "duplicate edges"
    assert all(u != v for u, v in es), "self-loop"
    assert all((v, u) in es for u, v in es), "not symmetric"


def check_partition(split, nodes: torch.Tensor) -> None:
    tr, va, te = split
    cat = torch.cat([tr, va, te])
    assert cat.numel() == torch.unique(cat).numel(), "splits overlap"
    assert torch.equal(torch.sort(cat).values, torch.sort(nodes).values), "splits miss nodes"


# ------------------------------------------------------------------------------ PubMed


def write_planetoid(folder: Path, seed: int = 0) -> dict:
    """Tiny Planetoid files (prefix pubmed) and the ground truth they encode."""
    rng = np.random.default_rng(seed)
    n, f, c, n_allx, n_train = 30, 6, 3, 22, 6
    x_true = rng.random((n, f)) * (rng.random((n, f)) < 0.5)
    x_true[3] = 0.0  # an all-zero row must stay zero after row normalisation
    labels = rng.integers(0, c, n)
    onehot = np.eye(c)[labels]
    test_ids = rng.permutation(np.arange(n_allx, n))  # test.index lists them shuffled
    parts = {
        "x": sp.csr_matrix(x_true[:n_train]),
        "y": onehot[:n_train],
        "allx": sp.csr_matrix(x_true[:n_allx]),
        "ally": onehot[:n_allx],
        # Row j of tx/ty belongs to node test.index[j].
        "tx": sp.csr_matrix(x_true[test_ids]),
        "ty": onehot[test_ids],
    }
    graph = defaultdict(list)
    pairs = [(0, 1), (1, 0), (2, 5), (2, 5), (7, 7), (9, 29), (29, 23), (15, 16)]
    for u, v in pairs:
        graph[u].append(v)
    parts["graph"] = graph
    folder.mkdir(parents=True, exist_ok=True)
    for name, obj in parts.items():
        with open(folder / f"ind.pubmed.{name}", "wb") as fh:
            pickle.dump(obj, fh)
    (folder / "ind.pubmed.test.index").write_text("\n".join(str(i) for i in test_ids) + "\n")
    sums = x_true.sum(1, keepdims=True)
    feats = np.divide(x_true, sums, out=np.zeros_like(x_true), where=sums != 0)
    return {
        "n": n,
        "features": feats,
        "labels": labels,
        "edges": undirected(pairs),
        "split": (np.arange(n_train), np.arange(n_train, n_allx), np.sort(test_ids)),
        "c": c,
    }


@pytest.mark.parametrize("sub", ["", "pubmed"])
def test_pubmed_planetoid_reconstruction(tmp_path: Path, sub: str) -> None:
    truth = write_planetoid(tmp_path / sub if sub else tmp_path)
    ds = load_node_dataset("PUBMED", tmp_path)
    assert ds.name == "PUBMED" and ds.num_classes == truth["c"]
    assert ds.features.is_sparse and ds.features.dtype == torch.float32
    np.testing.assert_allclose(ds.features.to_dense().numpy(), truth["features"], rtol=1e-6)
    assert ds.labels.dtype == torch.int64
    assert torch.equal(ds.labels, torch.from_numpy(truth["labels"]))
    check_graph(ds.graph, truth["n"])
    assert edge_set(ds.graph) == truth["edges"]
    assert ds.info["self_loops_removed"] == 1
    assert ds.fixed_splits is not None and len(ds.fixed_splits) == 1
    for got, want in zip(ds.fixed_splits[0], truth["split"], strict=True):
        assert torch.equal(got, torch.from_numpy(want))


def test_pubmed_missing_files_raise_data_error(tmp_path: Path, monkeypatch) -> None:
    def offline(*args, **kwargs):
        raise ConnectionError("no network")

    if _have_dgl():  # the DGL profile: its download fails offline
        import dgl

        monkeypatch.setattr(dgl.data, "PubmedGraphDataset", offline)
    with pytest.raises(DataError, match="ind.pubmed.x") as err:
        load_node_dataset("PUBMED", tmp_path)
    assert "\n" not in str(err.value)
    with pytest.raises(DataError):
        load_node_dataset("PUBMED", None)


def _have_dgl() -> bool:
    try:
        import dgl  # noqa: F401
    except Exception:
        return False
    return True


def test_pubmed_missing_files_without_dgl(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "dgl", None)  # the default profile
    with pytest.raises(DataError, match="ind.pubmed.x") as err:
        load_node_dataset("PUBMED", tmp_path)
    msg = str(err.value)
    assert "\n" not in msg and "scripts/setup.sh --dgl" in msg and "torch_geometric" in msg
    with pytest.raises(DataError, match="scripts/setup.sh --dgl") as err:
        load_node_dataset("PUBMED", tmp_path, source="dgl")
    assert "\n" not in str(err.value)


def _dgl_pubmed_graph(dgl):
    g = dgl.graph((torch.tensor([0, 1, 2, 2]), torch.tensor([1, 0, 2, 4])), num_nodes=5)
    g.ndata["feat"] = torch.tensor([[0.5, 0.5], [1, 0], [0, 1], [0, 0], [0.25, 0.75]])
    g.ndata["label"] = torch.tensor([0, 1, 2, 1, 0])
    g.ndata["train_mask"] = torch.tensor([1, 1, 0, 0, 0], dtype=torch.bool)
    g.ndata["val_mask"] = torch.tensor([0, 0, 1, 0, 0], dtype=torch.bool)
    g.ndata["test_mask"] = torch.tensor([0, 0, 0, 1, 1], dtype=torch.bool)
    return g


def test_pubmed_dgl_source_conversion(monkeypatch, tmp_path) -> None:
    dgl = pytest.importorskip("dgl", reason="DGL's PubMed download needs the DGL profile")
    n = 5
    g = _dgl_pubmed_graph(dgl)

    class FakePubmed:
        def __init__(self, raw_dir=None, verbose=True):
            self.num_classes = 3

        def __getitem__(self, idx):
            return g

    monkeypatch.setattr(dgl.data, "PubmedGraphDataset", FakePubmed)
    write_planetoid(tmp_path)  # the raw files are ignored with source="dgl"
    ds = load_node_dataset("PUBMED", tmp_path, source="dgl")
    check_graph(ds.graph, n)
    assert edge_set(ds.graph) == {(0, 1), (1, 0), (2, 4), (4, 2)}
    assert ds.features.is_sparse
    assert torch.equal(ds.features.to_dense(), g.ndata["feat"])
    assert [t.tolist() for t in ds.fixed_splits[0]] == [[0, 1], [2], [3, 4]]
    assert ds.info["source"] == "dgl.data.PubmedGraphDataset"


@pytest.mark.parametrize("name", ["PUBMED", "YELPCHI"])
def test_missing_raw_files_never_start_a_download(monkeypatch, tmp_path, name) -> None:
    """Raw files absent: one line naming them and the sources that download; no download."""
    calls = []
    dgl_module = types.ModuleType("dgl")
    dgl_module.data = types.SimpleNamespace(
        PubmedGraphDataset=lambda *a, **k: calls.append("pubmed"),
        FraudYelpDataset=lambda *a, **k: calls.append("yelp"))
    monkeypatch.setitem(sys.modules, "dgl", dgl_module)
    with pytest.raises(DataError) as err:
        load_node_dataset(name, tmp_path / "empty")
    msg = str(err.value)
    assert "\n" not in msg and "--data_source dgl" in msg and calls == []
    assert ("ind.pubmed.graph" if name == "PUBMED" else "YelpChi.mat") in msg


def test_edge_direction_as_given_keeps_the_stored_edges(tmp_path) -> None:
    write_squirrel(tmp_path)
    ds = load_node_dataset("SQUIRREL", tmp_path)
    given = with_edge_direction(ds, "as_given")
    stored = np.load(tmp_path / "squirrel_directed.npz")["edges"]
    assert sorted(zip(given.graph.src.tolist(), given.graph.dst.tolist(), strict=True)) == \
        sorted(map(tuple, stored.tolist()))  # as stored: loops and repeats kept, no reverses
    assert given.info["nodes_without_in_edges"] == int((given.graph.in_degrees() == 0).sum())
    assert with_edge_direction(ds, "symmetrised") is ds
    with pytest.raises(ValueError, match="edge_direction"):
        with_edge_direction(ds, "reversed")


def expected_normalised(x: np.ndarray) -> np.ndarray:
    """PyG's NormalizeFeatures, written out per row in float64."""
    return np.stack([row / max(row.sum(), 1.0) for row in x.astype(np.float64)])


@pytest.mark.parametrize("sparse", [True, False])
def test_row_normalised_features_follow_normalize_features(sparse) -> None:
    x = np.array([[1, 0, 1, 1], [0, 0, 0, 0], [0.2, 0.3, 0, 0], [0, 5, 0, 0]], np.float32)
    feats = torch.tensor(x).to_sparse() if sparse else torch.tensor(x)
    g = Graph([0, 1], [1, 0], 4)
    ds = NodeDataset("X", g, feats, torch.zeros(4, dtype=torch.long), 2, info={"a": 1})
    out = with_row_normalised_features(ds)
    assert out.features.is_sparse == sparse and out.graph is g and out.info["a"] == 1
    got = out.features.to_dense() if sparse else out.features
    # rows summing to more than 1 sum to 1; an empty row and one summing to 0.5 stay as they are
    np.testing.assert_allclose(got.numpy(), expected_normalised(x), rtol=1e-6)
    assert ds.features is feats  # the input dataset is left as it was


def test_row_normalising_pubmed_changes_nothing(real_data) -> None:
    """PubMed's features are row-normalised by the loader already, so the successors' configs
    (which normalise every dataset, as their code does) see the same PubMed as every other."""
    ds = load_node_dataset("PUBMED", real_data("pubmed", "ind.pubmed.x"))
    again = with_row_normalised_features(ds).features.coalesce()
    before = ds.features.coalesce()
    assert torch.equal(again.indices(), before.indices())
    torch.testing.assert_close(again.values(), before.values(), rtol=1e-6, atol=0)


def test_real_planetoid_pickles_load_without_scipy_deprecation_warnings(real_data) -> None:
    # their matrices name scipy.sparse.csr, a module scipy deprecates (and 2.0 removes)
    folder = real_data("pubmed", "ind.pubmed.x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = load_node_dataset("PUBMED", folder)
    assert ds.num_nodes == 19717


def test_row_normalised_squirrel_rows_sum_to_one(real_data) -> None:
    ds = load_node_dataset("SQUIRREL", real_data("squirrel", "squirrel_directed.npz"))
    raw = ds.features.to_dense().numpy()
    assert raw.sum(1).max() > 1  # binary bag-of-words: the option changes them
    got = with_row_normalised_features(ds).features.to_dense().numpy()
    np.testing.assert_allclose(got, expected_normalised(raw), rtol=1e-6)


def test_split_ratio_option() -> None:
    labels = torch.zeros(100, dtype=torch.long)
    fake = types.SimpleNamespace(name="SQUIRREL", num_nodes=100, labels=labels,
                                 fixed_splits=None)
    sizes = [t.numel() for t in get_split(fake, 0, 1)]
    assert sizes == [50, 25, 25]  # LINKX's 2:1:1 by default
    sizes = [t.numel() for t in get_split(fake, 0, 1, ratios=(0.6, 0.2, 0.2))]
    assert sizes == [60, 20, 20]  # the release's 60/20/20


def test_pubmed_from_pyg_matches_raw(tmp_path: Path, monkeypatch) -> None:
    # PyG's Planetoid, faked from the same ground truth: raw (unnormalised) features, the
    # directed graph dict as edge_index, masks; it must give what the raw files give.
    truth = write_planetoid(tmp_path)
    rng = np.random.default_rng(5)
    scale = rng.random((truth["n"], 1)) + 0.5  # PyG keeps the raw TF-IDF scale
    raw_edges = sorted(truth["edges"]) + [(7, 7)]
    masks = {k: torch.zeros(truth["n"], dtype=torch.bool) for k in ("train", "val", "test")}
    for k, idx in zip(masks, truth["split"], strict=True):
        masks[k][torch.from_numpy(idx)] = True
    data = types.SimpleNamespace(
        x=torch.from_numpy(truth["features"] * scale).float(),
        edge_index=torch.tensor(raw_edges).t(), y=torch.from_numpy(truth["labels"]),
        train_mask=masks["train"], val_mask=masks["val"], test_mask=masks["test"])
    calls = fake_pyg_datasets(monkeypatch, Planetoid=lambda root, name: [data])
    ds = load_node_dataset("PUBMED", tmp_path, source="pyg")
    assert calls == [("Planetoid", (), {"root": str(tmp_path / "pyg"), "name": "PubMed"})]
    ref = load_node_dataset("PUBMED", tmp_path)
    check_graph(ds.graph, truth["n"])
    assert torch.equal(ds.graph.src, ref.graph.src) and torch.equal(ds.graph.dst, ref.graph.dst)
    np.testing.assert_allclose(ds.features.to_dense().numpy(), ref.features.to_dense().numpy(),
                               rtol=1e-5, atol=1e-7)
    assert torch.equal(ds.labels, ref.labels) and ds.num_classes == ref.num_classes
    assert all(torch.equal(a, b)
               for a, b in zip(ds.fixed_splits[0], ref.fixed_splits[0], strict=True))
    assert ds.info["self_loops_removed"] == 1


# ------------------------------------------------------------------------------ Squirrel


def write_squirrel(folder: Path, splits_file: str | None = "match") -> dict:
    n, f = 7, 5
    rng = np.random.default_rng(1)
    x = (rng.random((n, f)) < 0.4).astype(np.float32)
    y = np.array([0, 1, 2, 0, 1, 2, 0])
    edges = np.array(
        [[0, 1], [1, 0], [0, 1], [2, 2], [2, 3], [4, 5], [5, 6], [6, 5], [3, 3], [1, 6]]
    )
    train = np.zeros((2, n), bool)
    val = np.zeros((2, n), bool)
    test = np.zeros((2, n), bool)
    train[0, [0, 1, 2]], val[0, [3, 4]], test[0, [5, 6]] = True, True, True
    train[1, [4, 5, 6]], val[1, [0]], test[1, [1, 2, 3]] = True, True, True
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(
        folder / "squirrel_directed.npz",
        node_features=x,
        node_labels=y,
        edges=edges,
        train_masks=train,
        val_masks=val,
        test_masks=test,
    )
    if splits_file is not None:
        linkx = []
        for i in range(2):
            tr = np.flatnonzero(train[i])
            if splits_file == "differ" and i == 1:
                tr = tr[:-1]
            linkx.append(
                {
                    "train": tr.tolist(),
                    "valid": np.flatnonzero(val[i]).tolist(),
                    "test": np.flatnonzero(test[i]).tolist(),
                }
            )
        np.save(folder / "squirrel-splits.npy", np.array(linkx, dtype=object), allow_pickle=True)
    return {
        "n": n,
        "x": x,
        "y": y,
        "edges": undirected(edges.tolist()),
        "masks": (train, val, test),
    }


def test_squirrel_tiny(tmp_path: Path) -> None:
    truth = write_squirrel(tmp_path / "squirrel")
    ds = load_node_dataset("squirrel", tmp_path)
    check_graph(ds.graph, truth["n"])
    assert edge_set(ds.graph) == truth["edges"]
    assert ds.info["self_loops_removed"] == 2
    assert ds.info["undirected_edges"] == len(truth["edges"]) // 2
    assert ds.features.is_sparse and ds.features.dtype == torch.float32
    assert torch.equal(ds.features.to_dense(), torch.from_numpy(truth["x"]))
    # the class count is Squirrel's (5), not the largest label in the file plus one
    assert torch.equal(ds.labels, torch.from_numpy(truth["y"])) and ds.num_classes == 5
    assert len(ds.fixed_splits) == 2
    for i, split in enumerate(ds.fixed_splits):
        for got, mask in zip(split, truth["masks"], strict=True):
            assert got.tolist() == np.flatnonzero(mask[i]).tolist()
    assert ds.info["linkx_splits_match"] is True


def test_squirrel_linkx_mismatch_warns(tmp_path: Path) -> None:
    write_squirrel(tmp_path, splits_file="differ")
    with pytest.warns(UserWarning, match="differs"):
        ds = load_node_dataset("SQUIRREL", tmp_path)
    assert ds.info["linkx_splits_match"] is False


def test_squirrel_missing_raises(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="squirrel_directed.npz"):
        load_node_dataset("SQUIRREL", tmp_path)
    with pytest.raises(DataError, match="squirrel_directed.npz"):
        load_node_dataset("SQUIRREL", None)


def test_squirrel_from_pyg_matches_npz(tmp_path: Path, monkeypatch) -> None:
    # PyG's WikipediaNetwork (geom-gcn) faked from the same data: dense features, the directed
    # edge list coalesced (sorted, duplicates dropped, self-loops kept), masks as (N, 10) columns.
    truth = write_squirrel(tmp_path, splits_file=None)
    pairs = sorted({(int(u), int(v)) for u, v in
                    np.load(tmp_path / "squirrel_directed.npz")["edges"].tolist()})
    data = types.SimpleNamespace(
        x=torch.from_numpy(truth["x"]), y=torch.from_numpy(truth["y"]),
        edge_index=torch.tensor(pairs).t(),
        train_mask=torch.from_numpy(truth["masks"][0].T), val_mask=torch.from_numpy(
            truth["masks"][1].T), test_mask=torch.from_numpy(truth["masks"][2].T))
    calls = fake_pyg_datasets(
        monkeypatch, WikipediaNetwork=lambda root, name, geom_gcn_preprocess: [data])
    ds = load_node_dataset("SQUIRREL", tmp_path, source="pyg")
    assert calls[0][2] == {"root": str(tmp_path / "pyg"), "name": "squirrel",
                           "geom_gcn_preprocess": True}
    ref = load_node_dataset("SQUIRREL", tmp_path)
    check_graph(ds.graph, truth["n"])
    assert torch.equal(ds.graph.src, ref.graph.src) and torch.equal(ds.graph.dst, ref.graph.dst)
    assert ds.features.is_sparse and torch.equal(ds.features.to_dense(), ref.features.to_dense())
    assert torch.equal(ds.labels, ref.labels) and ds.num_classes == ref.num_classes
    assert len(ds.fixed_splits) == len(ref.fixed_splits) == 2
    for a, b in zip(ds.fixed_splits, ref.fixed_splits, strict=True):
        assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert ds.info["undirected_edges"] == ref.info["undirected_edges"]


def test_pyg_source_without_pyg(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "torch_geometric", None)
    for name in ("SQUIRREL", "PUBMED"):
        with pytest.raises(DataError, match="pip install torch_geometric") as err:
            load_node_dataset(name, tmp_path, source="pyg")
        assert "\n" not in str(err.value)


def test_pyg_download_failure_is_one_line(tmp_path: Path, monkeypatch) -> None:
    def offline(**kwargs):
        raise ConnectionError("no route\nto host")

    fake_pyg_datasets(monkeypatch, WikipediaNetwork=offline)
    with pytest.raises(DataError, match="WikipediaNetwork.*internet") as err:
        load_node_dataset("SQUIRREL", tmp_path, source="pyg")
    assert "\n" not in str(err.value)


def test_source_validation() -> None:
    assert NODE_SOURCES["ARXIV_YEAR"] == ("raw",)
    for name, source in (("ARXIV_YEAR", "pyg"), ("SQUIRREL", "dgl"), ("YELPCHI", "pyg"),
                         ("PUBMED", "web")):
        with pytest.raises(DataError, match=f"not available for {name}"):
            load_node_dataset(name, None, source=source)


def test_squirrel_real_file(real_data) -> None:
    folder = real_data("squirrel", "squirrel_directed.npz", "squirrel-splits.npy")
    ds = load_node_dataset("SQUIRREL", folder)
    check_graph(ds.graph, 5201)
    assert ds.info["input_edges"] == 217073
    assert ds.info["self_loops_removed"] == 140
    assert ds.info["input_edges_unique"] == 216933  # the paper's count, no duplicates
    assert ds.info["undirected_edges"] == 198353
    assert ds.features.shape == (5201, 2089) and ds.features.is_sparse
    assert ds.num_classes == 5
    assert len(ds.fixed_splits) == 10
    for split in ds.fixed_splits:
        assert [t.numel() for t in split] == [2496, 1664, 1041]
        check_partition(split, torch.arange(5201))
    assert ds.info["linkx_splits_match"] is True


def test_filtered_squirrel_real_file(real_data) -> None:
    """The counts of the released ``squirrel_filtered.npz`` (Platonov et al. 2023)."""
    folder = real_data("squirrel", "squirrel_directed.npz")
    ds = load_node_dataset("SQUIRREL_FILTERED", folder)
    check_graph(ds.graph, 2223)
    assert ds.graph.num_edges() == 2 * 46998
    assert ds.edges_as_given[0].numel() == 65718
    assert ds.info["filtered_removed_nodes"] == 5201 - 2223
    assert len(ds.fixed_splits) == 10


# ------------------------------------------------------------------------------ YelpChi


def tiny_yelp_relations() -> dict:
    return {
        ("review", "net_rsr", "review"): ([0, 1, 2, 3, 3], [1, 0, 3, 2, 3]),
        ("review", "net_rtr", "review"): ([0, 4], [1, 5]),
        ("review", "net_rur", "review"): ([5, 2], [4, 0]),
    }


def test_merge_relations() -> None:
    rel = tiny_yelp_relations()
    src, dst, counts = merge_relations(
        {k[1]: (torch.tensor(s), torch.tensor(d)) for k, (s, d) in rel.items()})
    g, stats = build_graph(src, dst, 7)
    check_graph(g, 7)  # node 6 is isolated and must survive
    expected = undirected(p for s, d in rel.values() for p in zip(s, d, strict=True))
    assert edge_set(g) == expected
    assert stats["self_loops_removed"] == 1
    assert counts == {"net_rsr": 5, "net_rtr": 2, "net_rur": 2}


def test_yelpchi_from_mat(tmp_path: Path) -> None:
    n = 7
    rel = tiny_yelp_relations()
    rng = np.random.default_rng(2)
    feats = rng.random((n, 32))
    label = np.array([[0, 1, 0, 0, 1, 0, 0]])
    mat = {"features": sp.csc_matrix(feats), "label": label}
    for (_, name, _), (s, d) in rel.items():
        mat[name] = sp.csc_matrix((np.ones(len(s)), (s, d)), shape=(n, n))
    mat["homo"] = sum(mat[r] for r in ("net_rsr", "net_rtr", "net_rur"))
    sio.savemat(tmp_path / "YelpChi.mat", mat)
    splits = [{"train": [0, 1, 2], "valid": [3, 4], "test": [5, 6]}]
    np.save(tmp_path / "yelp-chi-splits.npy", np.array(splits, dtype=object), allow_pickle=True)

    ds = load_node_dataset("YELPCHI", tmp_path)
    check_graph(ds.graph, n)
    # LINKX's graph is the 'homo' adjacency: the merged graph must equal its symmetrisation.
    homo = sp.coo_matrix(mat["homo"])
    assert edge_set(ds.graph) == undirected(zip(homo.row, homo.col, strict=True))
    assert ds.features.dtype == torch.float32 and not ds.features.is_sparse
    np.testing.assert_allclose(ds.features.numpy(), feats, rtol=1e-6)
    assert ds.labels.tolist() == label[0].tolist() and ds.num_classes == 2
    assert [t.tolist() for t in ds.fixed_splits[0]] == [[0, 1, 2], [3, 4], [5, 6]]


def test_yelpchi_download_failure(tmp_path: Path, monkeypatch) -> None:
    dgl = pytest.importorskip("dgl", reason="DGL's YelpChi download needs the DGL profile")

    def offline(*args, **kwargs):
        raise ConnectionError("no network")

    monkeypatch.setattr(dgl.data, "FraudYelpDataset", offline)
    with pytest.raises(DataError, match="YelpChi.mat") as err:
        load_node_dataset("YELPCHI", tmp_path)
    assert "\n" not in str(err.value)


def test_yelpchi_missing_without_dgl(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "dgl", None)
    with pytest.raises(DataError, match="YelpChi.mat") as err:
        load_node_dataset("YELPCHI", tmp_path)
    assert "scripts/setup.sh --dgl" in str(err.value) and "\n" not in str(err.value)


def test_yelpchi_from_dgl_heterograph(tmp_path: Path, monkeypatch) -> None:
    dgl = pytest.importorskip("dgl", reason="DGL's YelpChi download needs the DGL profile")
    rel = tiny_yelp_relations()
    hg = dgl.heterograph(
        {k: (torch.tensor(s), torch.tensor(d)) for k, (s, d) in rel.items()},
        num_nodes_dict={"review": 7},
    )
    hg.ndata["feature"] = torch.rand(7, 32, dtype=torch.float64)
    hg.ndata["label"] = torch.tensor([0, 1, 0, 0, 1, 0, 0], dtype=torch.int32)
    monkeypatch.setattr(dgl.data, "FraudYelpDataset", lambda raw_dir, verbose: [hg])
    ds = load_node_dataset("YELPCHI", tmp_path, source="dgl")
    check_graph(ds.graph, 7)
    expected = undirected(p for s, d in rel.values() for p in zip(s, d, strict=True))
    assert edge_set(ds.graph) == expected
    assert ds.info["relations"] == {"net_rsr": 5, "net_rtr": 2, "net_rur": 2}
    assert ds.features.dtype == torch.float32 and ds.labels.dtype == torch.int64


# ------------------------------------------------------------------------------ Arxiv-year


def linkx_reference(vals: np.ndarray, k: int) -> np.ndarray:
    """LINKX's bucketing spelled out as a loop over half-open quantile intervals."""
    out = -np.ones(len(vals), dtype=np.int64)
    lower = -np.inf
    for c in range(k - 1):
        upper = np.nanquantile(vals, (c + 1) / k)
        out[(vals >= lower) & (vals < upper)] = c
        lower = upper
    out[vals >= lower] = k - 1
    return out


def test_even_quantile_labels() -> None:
    rng = np.random.default_rng(3)
    # Skewed integer years as in ogbn-arxiv (most papers recent).
    years = np.clip(2020 - rng.geometric(0.15, 20000) + 1, 1971, 2020)
    labels = even_quantile_labels(years, 5)
    assert labels.dtype == np.int64 and set(labels.tolist()) == set(range(5))
    assert np.array_equal(labels, linkx_reference(years.astype(float), 5))
    # Monotone: every year of class k precedes every year of class k+1.
    for c in range(4):
        assert years[labels == c].max() < years[labels == c + 1].min()
    counts = np.bincount(labels)
    assert counts.min() > 0.5 * len(years) / 5 and counts.max() < 1.6 * len(years) / 5
    # Without ties the classes are equal to within one element.
    cont = rng.random(1003)
    counts = np.bincount(even_quantile_labels(cont, 5))
    assert counts.max() - counts.min() <= 1
    with_nan = np.array([1.0, np.nan, 2.0, 3.0])
    assert even_quantile_labels(with_nan, 2)[1] == -1


def test_arxiv_year_with_fake_ogb(tmp_path: Path, monkeypatch) -> None:
    n = 40
    rng = np.random.default_rng(4)
    years = rng.integers(2000, 2020, n).reshape(-1, 1)
    edge_index = np.stack([rng.integers(0, n, 100), rng.integers(0, n, 100)])
    graph = {
        "edge_index": edge_index,
        "edge_feat": None,
        "node_feat": rng.random((n, 128)).astype(np.float32),
        "node_year": years,
        "num_nodes": n,
    }
    seen = {}

    class FakeNodePropPredDataset:
        def __init__(self, name, root="dataset"):
            seen.update(name=name, root=root)

        def __getitem__(self, idx):
            return graph, np.zeros((n, 1), dtype=np.int64)

    ogb = types.ModuleType("ogb")
    nodeprop = types.ModuleType("ogb.nodeproppred")
    nodeprop.NodePropPredDataset = FakeNodePropPredDataset
    ogb.nodeproppred = nodeprop
    monkeypatch.setitem(sys.modules, "ogb", ogb)
    monkeypatch.setitem(sys.modules, "ogb.nodeproppred", nodeprop)

    ds = load_node_dataset("arxiv-year", tmp_path)
    assert seen == {"name": "ogbn-arxiv", "root": str(tmp_path)}
    check_graph(ds.graph, n)
    assert edge_set(ds.graph) == undirected(edge_index.T.tolist())
    assert ds.features.shape == (n, 128) and ds.features.dtype == torch.float32
    assert torch.equal(ds.labels, torch.from_numpy(even_quantile_labels(years.ravel(), 5)))
    assert ds.num_classes == 5 and ds.fixed_splits is None


def test_arxiv_year_without_ogb(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ogb", None)
    monkeypatch.setitem(sys.modules, "ogb.nodeproppred", None)
    with pytest.raises(DataError, match="pip install ogb"):
        load_node_dataset("ARXIV_YEAR", None)


# ------------------------------------------------------------------------------ splits


@pytest.mark.parametrize(
    "n, ratios, sizes",
    [(19717, (0.6, 0.2, 0.2), (11830, 3943, 3944)), (5201, (0.5, 0.25, 0.25), (2600, 1300, 1301))],
)
def test_random_split(n: int, ratios, sizes) -> None:
    split = random_split(n, ratios, seed=4565)
    assert tuple(t.numel() for t in split) == sizes
    assert all(t.dtype == torch.int64 for t in split)
    check_partition(split, torch.arange(n))
    again = random_split(n, ratios, seed=4565)
    assert all(torch.equal(a, b) for a, b in zip(split, again, strict=True))
    other = random_split(n, ratios, seed=7432)
    assert not torch.equal(split[0], other[0])


def test_random_split_skips_unlabelled() -> None:
    labels = torch.tensor([0, -1, 1, 1, -1, 0, 2, 2, 0, 1])
    split = random_split(10, (0.5, 0.25, 0.25), seed=0, labels=labels)
    check_partition(split, torch.nonzero(labels >= 0).flatten())
    with pytest.raises(ValueError):
        random_split(10, (0.5, 0.25, 0.5), seed=0)


def _toy_dataset(name: str, fixed) -> NodeDataset:
    g = Graph(torch.tensor([0, 1]), torch.tensor([1, 0]), num_nodes=20)
    return NodeDataset(name, g, torch.zeros(20, 3), torch.zeros(20, dtype=torch.int64), 1, fixed)


def test_get_split_modes() -> None:
    fixed = [(torch.tensor([i]), torch.tensor([i + 5]), torch.tensor([i + 10])) for i in range(3)]
    ds = _toy_dataset("SQUIRREL", fixed)
    for run in range(7):
        assert get_split(ds, run, seed=1, mode="fixed") is fixed[run % 3]
    rnd = get_split(ds, 0, seed=1)
    assert tuple(t.numel() for t in rnd) == (10, 5, 5)
    assert all(torch.equal(a, b) for a, b in zip(rnd, get_split(ds, 3, seed=1), strict=True))
    pub = get_split(_toy_dataset("PUBMED", None), 0, seed=1)
    assert tuple(t.numel() for t in pub) == (12, 4, 4) and SPLIT_RATIOS["PUBMED"][0] == 0.6
    with pytest.raises(DataError):
        get_split(_toy_dataset("YELPCHI", None), 0, seed=1, mode="fixed")
    with pytest.raises(ValueError):
        get_split(ds, 0, seed=1, mode="bogus")


# ------------------------------------------------------------------------------ entry points


def test_unknown_name() -> None:
    with pytest.raises(ValueError) as err:
        load_node_dataset("CORA", None)
    assert all(name in str(err.value) for name in NODE_DATASETS)


def test_filtered_squirrel_is_a_dataset(tmp_path) -> None:
    """SQUIRREL_FILTERED loads from Squirrel's files: an induced subgraph with the splits
    restricted to the kept nodes (the derivation itself: the tests below)."""
    write_squirrel(tmp_path)
    full = load_node_dataset("SQUIRREL", tmp_path)
    ds = load_node_dataset("SQUIRREL_FILTERED", tmp_path)
    assert ds.name == "SQUIRREL_FILTERED" and ds.num_nodes <= full.num_nodes
    assert len(ds.fixed_splits) == len(full.fixed_splits)
    for split in ds.fixed_splits:
        assert all(t.numel() == 0 or int(t.max()) < ds.num_nodes for t in split)


# ------------------------------------------------------------------------------ filtered Squirrel
def outlink_example():
    """Directed graph in which nodes 6, 7 copy node 0 (no in-edges, same out-links and label),
    8 copies 0's out-links with another label, 9 and 10 copy each other but nothing links to
    either, and node 11 copies 1 (which has in-edges) with the same label."""
    edges = [(0, 1), (0, 2), (1, 3), (2, 0), (3, 0), (4, 1), (5, 4), (1, 5), (3, 4),
             (6, 1), (6, 2), (7, 2), (7, 1), (7, 1), (8, 1), (8, 2),
             (9, 3), (10, 3), (11, 3), (11, 5)]
    labels = [0, 1, 2, 0, 1, 2, 0, 0, 1, 2, 2, 1]
    return np.asarray(edges), np.asarray(labels)


def test_outlink_copies():
    edges, labels = outlink_example()
    removed = outlink_copies(edges[:, 0], edges[:, 1], labels, len(labels))
    assert np.flatnonzero(removed).tolist() == [6, 7, 11]


def write_squirrel_npz(folder: Path, edges: np.ndarray, labels: np.ndarray) -> None:
    n = len(labels)
    rng = np.random.default_rng(0)
    masks = np.zeros((3, 2, n), bool)  # (train, val, test) x 2 splits
    for i in range(2):
        part = rng.permutation(n) % 3
        for k in range(3):
            masks[k, i] = part == k
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(folder / "squirrel_directed.npz",
             node_features=np.eye(n, 5, dtype=np.float32) + np.arange(n)[:, None] % 2,
             node_labels=labels, edges=edges, train_masks=masks[0], val_masks=masks[1],
             test_masks=masks[2])


def test_filtered_squirrel_counts(tmp_path):
    edges, labels = outlink_example()
    write_squirrel_npz(tmp_path, edges, labels)
    ds = load_node_dataset("SQUIRREL", tmp_path)
    f = filtered_squirrel(ds, (torch.from_numpy(edges[:, 0]), torch.from_numpy(edges[:, 1])))
    kept = [v for v in range(12) if v not in (6, 7, 11)]
    assert f.name == "SQUIRREL_FILTERED" and f.num_nodes == 9
    assert f.info["filtered_removed_nodes"] == 3
    # the induced subgraph, symmetrised: count the undirected edges among the kept nodes
    und = {(min(u, v), max(u, v)) for u, v in edges.tolist()
           if u != v and u in kept and v in kept}
    assert f.graph.num_edges() == 2 * len(und)
    assert f.labels.tolist() == labels[kept].tolist()
    assert torch.equal(f.features.to_dense(), ds.features.to_dense()[kept])
    new = {v: i for i, v in enumerate(kept)}
    for old_split, new_split in zip(ds.fixed_splits, f.fixed_splits, strict=True):
        for o, nw in zip(old_split, new_split, strict=True):
            assert nw.tolist() == sorted(new[v] for v in o.tolist() if v in new)
    assert filtered_squirrel(ds).num_nodes == 9  # from the edge list the loader keeps
