"""Bad data values, by class: each is found once, when the data is loaded, and reported in one
line naming the file and the item; a main script exits with code 2 and writes nothing.

Classes: vocabulary ids out of range (ZINC atom and bond types, SBM feature ids), bad or
out-of-range ``*.index`` entries, labels outside the dataset's classes (or negative), NaN or
infinite features and targets, empty training splits (an empty file, a split ratio that rounds to
zero nodes), fixed split masks that overlap or do not fit the node count. And the superpixel cache,
which must not serve graphs built from other images.
"""

from __future__ import annotations

import logging
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

import data.superpixels as sp
import train.runner as runner
from data.common import DataError
from data.files import read_graph_pack
from data.sbm import FORMAT_NAME, FORMAT_VERSION, load_sbm_dataset
from tests.data_writers import molecule, write_idx, write_mnist, write_squirrel, write_zinc
from train.tasks import NODE, SBM, SUPERPIXELS, ZINC

TINY = ["--epochs", "1", "--L", "2", "--hidden_dim", "8", "--batch_size", "4", "--use_gpu", "False"]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def run_main(task, args: list[str]) -> int:
    try:
        return runner.main(task, args)
    except SystemExit as exit_:
        return int(exit_.code)


def expect_bad_data(task, data: Path, out: Path, capsys, *names: str,
                    extra: tuple[str, ...] = ()) -> str:
    """Run a main script on ``data``: exit code 2, one line naming ``names``, nothing written
    (no run folder, the data folder unchanged)."""
    before = snapshot(data)
    code = run_main(task, ["--data_dir", str(data), "--out_dir", str(out), *TINY, *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert len(err) == 1 and err[0].startswith("error: "), err
    for name in names:
        assert name in err[0], (name, err[0])
    assert not out.exists()
    assert snapshot(data) == before
    return err[0]


# --------------------------------------------------------------------------- ZINC
def _zinc(folder: Path, change=None, n: int = 6) -> Path:
    gen = torch.Generator().manual_seed(0)
    for split in ("train", "val", "test"):
        mols = [molecule(gen, 6) for _ in range(n)]
        if change is not None and split == "train":
            change(mols)
        write_zinc(folder, split, mols)
    return folder


def _set(key: str, index, value):
    def change(mols):
        mols[1][key][index] = value
    return change


@pytest.mark.parametrize("change,names", [
    (_set("atom_type", 2, 28), ["atom type 28", "0..27"]),
    (_set("atom_type", 0, -3), ["atom type -3"]),
    (lambda m: m[1].update(bond_type=torch.full((6, 6), 7, dtype=torch.int8)),
     ["bond type 7", "0..3"]),
    (_set("logP_SA_cycle_normalized", 0, float("nan")), ["target nan"]),
    (_set("logP_SA_cycle_normalized", 0, float("inf")), ["target inf"]),
    (lambda m: m[1].update(atom_type=torch.full((6,), 2.5)), ["molecule 1 is malformed",
                                                              "non-integer"]),
    (lambda m: m[1].update(num_atom=99), ["molecule 1 is malformed", "num_atom is 99",
                                          "atom_type lists 6 atoms"]),
    (lambda m: m[1].update(num_atom=torch.tensor([6, 6])), ["molecule 1", "num_atom is [6, 6]"]),
    (lambda m: m[1].update(num_atom=0, atom_type=torch.zeros(0, dtype=torch.int8),
                           bond_type=torch.zeros(0, 0, dtype=torch.int8)),
     ["molecule 1 is malformed", "no atoms"]),
    (lambda m: m[1].update(bond_type=torch.zeros(6, 5, dtype=torch.int8)),
     ["molecule 1", "bond_type has shape (6, 5) for 6 atoms", "expected (6, 6)"]),
    (lambda m: m[1].update(bond_type=torch.zeros(36, dtype=torch.int8)),
     ["molecule 1", "bond_type has shape (36,)"]),
    (lambda m: m[1].update(atom_type=m[1]["atom_type"].reshape(2, 3)),
     ["molecule 1", "atom_type has shape (2, 3)"]),
])
def test_zinc_values(change, names, tmp_path, capsys):
    data = _zinc(tmp_path / "zinc", change)
    expect_bad_data(ZINC, data, tmp_path / "out", capsys, "train.pickle", "molecule 1", *names)


@pytest.mark.parametrize("index,names", [
    ("0,99\n", ["entry 1 is 99", "outside the 6 molecules"]),
    ("-1\n", ["entry 0 is -1"]),
    ("0,x,2\n", ["entry 1", "'x'", "not a molecule index"]),
    ("", ["lists no molecules"]),
])
def test_zinc_index_entries(index, names, tmp_path, capsys):
    data = _zinc(tmp_path / "zinc")
    (data / "train.index").write_text(index)
    expect_bad_data(ZINC, data, tmp_path / "out", capsys, "train.index", *names)


def test_zinc_empty_training_split(tmp_path, capsys):
    data = _zinc(tmp_path / "zinc", lambda mols: mols.clear())
    expect_bad_data(ZINC, data, tmp_path / "out", capsys, "training split holds no graphs")


# --------------------------------------------------------------------------- SBM files
@pytest.mark.parametrize("key,value,names", [
    ("node_label", 7, ["node label 7", "0..1"]),
    ("node_label", -1, ["node label -1"]),
    ("node_feat", 3, ["node feature id 3", "0..2"]),
])
def test_sbm_file_values(key, value, names, tmp_path, capsys):
    data = tmp_path / "sbm"
    load_sbm_dataset("SBM_PATTERN", data, max_graphs=4, progress=False)
    path = data / "SBM_PATTERN" / "val_first4.npz"
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    sizes = read_graph_pack(path, FORMAT_NAME, FORMAT_VERSION).num_nodes
    arrays[key][int(sizes[0]) + 2] = value  # a node of graph 1
    np.savez(path, **arrays)
    expect_bad_data(SBM, data, tmp_path / "out", capsys, str(path), "graph 1", *names,
                    extra=("--dataset", "SBM_PATTERN", "--max_graphs", "4"))


# --------------------------------------------------------------------------- node datasets
def _squirrel(folder: Path, **change) -> Path:
    write_squirrel(folder)
    path = folder / "squirrel_directed.npz"
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    for key, fn in change.items():
        arrays[key] = fn(arrays[key])
    np.savez(path, **arrays)
    return folder


def _at(index, value):
    def fn(a):
        a = a.copy()
        a[index] = value
        return a
    return fn


@pytest.mark.parametrize("change,names", [
    ({"node_labels": _at(7, 50)}, ["node 7 has label 50", "SQUIRREL has 5 classes"]),
    ({"node_labels": _at(3, -1)}, ["node 3 has label -1"]),
    ({"node_features": _at((4, 2), np.nan)}, ["node 4 has a feature nan"]),
    ({"node_features": _at((5, 0), np.inf)}, ["node 5 has a feature inf"]),
    ({"val_masks": lambda m: m | np.roll(m, 0, 1) | m[:, ::-1]},
     ["fixed split", "is in both"]),
    ({"test_masks": lambda m: m[:, :-1]}, ["test_masks has shape", "for the 60 nodes"]),
    ({"train_masks": lambda m: np.concatenate([m, m], 1)}, ["train_masks has shape"]),
    ({"val_masks": lambda m: m[:1]}, ["hold [3, 1, 3] splits"]),
    ({"val_masks": lambda m: m.astype(float) * 2}, ["val_masks holds float64 values"]),
    ({"train_masks": lambda m: np.zeros_like(m), "val_masks": lambda m: m},
     ["fixed split 0 has no training nodes"]),
    # flattened into pairs, an (E, 1) or (E, 3) edge array would join endpoints of other edges
    ({"edges": lambda e: e[:, :1]}, ["edges has shape (300, 1)", "expected (edges, 2)"]),
    ({"edges": lambda e: e.reshape(200, 3)}, ["edges has shape (200, 3)"]),
    ({"edges": lambda e: e.reshape(-1)}, ["edges has shape (600,)"]),
    ({"edges": lambda e: e.reshape(2, 150, 2)}, ["edges has shape (2, 150, 2)"]),
    # one class in the whole file: nothing to classify, whatever the split
    ({"node_labels": lambda y: np.full_like(y, 3)}, ["1 distinct label(s) [3]",
                                                     "at least 2 classes"]),
])
def test_squirrel_values(change, names, tmp_path, capsys):
    data = _squirrel(tmp_path / "squirrel", **change)
    expect_bad_data(NODE, data, tmp_path / "out", capsys, "squirrel_directed.npz", *names,
                    extra=("--dataset", "SQUIRREL"))


@pytest.mark.parametrize("train,valid,names", [
    ([0, 1, 2], [2, 3], ["node 2 is in both train and val"]),
    ([0, 1, 99], [3], ["node id 99, outside 0..59"]),
    ([], [3], ["has no training nodes"]),
])
def test_linkx_split_files(train, valid, names, tmp_path, capsys):
    data = _squirrel(tmp_path / "squirrel")
    split = {"train": np.array(train, dtype=np.int64), "valid": np.array(valid), "test": [5]}
    np.save(data / "squirrel-splits.npy", np.array([split], dtype=object), allow_pickle=True)
    expect_bad_data(NODE, data, tmp_path / "out", capsys, "squirrel-splits.npy", *names,
                    extra=("--dataset", "SQUIRREL"))


def test_squirrel_edges_in_edge_index_layout_are_the_same_graph(tmp_path):
    """A (2, E) array (PyG's edge_index) is read as its columns, not flattened into pairs."""
    from data.squirrel import load_squirrel

    rows = load_squirrel(_squirrel(tmp_path / "rows"))
    cols = load_squirrel(_squirrel(tmp_path / "cols", edges=lambda e: e.T.copy()))
    assert torch.equal(rows.graph.src, cols.graph.src)
    assert torch.equal(rows.graph.dst, cols.graph.dst)
    assert torch.equal(rows.edges_as_given[0], cols.edges_as_given[0])


def test_squirrel_label_outside_classes_is_not_a_wider_model(tmp_path):
    from data.squirrel import load_squirrel

    write_squirrel(tmp_path, classes=3)  # labels 0..2 only: still Squirrel's 5 classes
    assert load_squirrel(tmp_path).num_classes == 5


@pytest.mark.parametrize("ratio,names", [
    ("0.01,0.495,0.495", ["train 0.01 gives 0 of its 60 labelled nodes"]),
    ("0.98,0.01,0.01", ["val 0.01 gives 0"]),
])
def test_split_ratio_rounding_to_zero_nodes(ratio, names, tmp_path, capsys):
    data = _squirrel(tmp_path / "squirrel")
    expect_bad_data(NODE, data, tmp_path / "out", capsys, "SQUIRREL", "--split_ratio", *names,
                    extra=("--dataset", "SQUIRREL", "--split_ratio", ratio))


@pytest.mark.parametrize("label,feature,names", [
    (2, 0.5, ["node 4 has label 2", "YELPCHI has 2 classes"]),
    (1, np.nan, ["node 4 has a feature nan"]),
    (None, 0.5, ["1 distinct label(s) [0]", "at least 2 classes"]),  # every review honest
])
def test_yelpchi_values(label, feature, names, tmp_path, capsys):
    from scipy import io as sio
    from scipy import sparse

    n = 12
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, n)
    if label is None:
        labels[:] = 0
    else:
        labels[4] = label
    feats = rng.random((n, 4))
    feats[4, 1] = feature
    adj = sparse.csr_matrix((rng.random((n, n)) < 0.3).astype(float))
    data = tmp_path / "yelp"
    data.mkdir()
    sio.savemat(data / "YelpChi.mat", {"features": sparse.csr_matrix(feats), "label": labels,
                                       "net_rsr": adj, "net_rtr": adj, "net_rur": adj})
    expect_bad_data(NODE, data, tmp_path / "out", capsys, "YelpChi.mat", *names,
                    extra=("--dataset", "YELPCHI"))


def test_pubmed_with_another_class_count(tmp_path, capsys):
    from tests.test_node_datasets import write_planetoid

    data = tmp_path / "pubmed"
    write_planetoid(data)
    for part in ("y", "ally", "ty"):  # one-hot over 7 classes instead of PubMed's 3
        path = data / f"ind.pubmed.{part}"
        onehot = pickle.loads(path.read_bytes())
        path.write_bytes(pickle.dumps(np.hstack([onehot, np.zeros((len(onehot), 4))])))
    expect_bad_data(NODE, data, tmp_path / "out", capsys, "ind.pubmed", "7 classes",
                    "PubMed has 3", extra=("--dataset", "PUBMED"))


# --------------------------------------------------------------------------- MNIST
@pytest.mark.parametrize("stem,index,value", [
    ("train-labels-idx1-ubyte", 3, 10),
    ("t10k-labels-idx1-ubyte", 1, 200),
])
def test_mnist_labels(stem, index, value, tmp_path, capsys):
    data = tmp_path / "mnist"
    arrays = write_mnist(data, 6, 3, gz=False)
    labels = arrays[stem].astype(np.uint8)
    labels[index] = value
    write_idx(data / stem, labels)
    expect_bad_data(SUPERPIXELS, data, tmp_path / "out", capsys, stem, f"image {index}",
                    f"label {value}", "0..9",
                    extra=("--dataset", "MNIST", "--cache_dir", str(tmp_path / "cache")))
    assert not (tmp_path / "cache").exists()


# --------------------------------------------------------------------------- superpixel cache
def _load(folder: Path, cache: Path):
    return sp.load_superpixels("MNIST", folder, cache_dir=cache, workers=1, progress=False)


def test_superpixel_cache_is_not_reused_for_other_images(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(sp, "NUM_VAL", 2)
    cache = tmp_path / "cache"
    first, other, copy = tmp_path / "first", tmp_path / "other", tmp_path / "copy"
    write_mnist(first, 4, 2)
    built = _load(first, cache)
    assert built.info["from_cache"] is False
    # other images (another folder, other pixels): rebuilt, with one log line saying why
    write_mnist(other, 4, 2)
    write_idx(other / "train-images-idx3-ubyte.gz",
              255 - sp.read_idx(first / "train-images-idx3-ubyte.gz"))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="data.superpixels"):
        rebuilt = _load(other, cache)
    assert rebuilt.info["from_cache"] is False
    why = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(why) == 1 and "built from other images" in why[0] and str(other) in why[0]
    feats = [g.ndata["feat"] for g in rebuilt.train.graphs]
    assert not all(torch.equal(a, g.ndata["feat"]) for a, g in zip(feats, built.train.graphs,
                                                                    strict=True))
    assert _load(other, cache).info["from_cache"] is True  # the new build is reused
    # the same files in another folder: the cache serves (identity is the files' content)
    shutil.copytree(other, copy)
    assert _load(copy, cache).info["from_cache"] is True
    # the same folder with changed images: rebuilt
    write_idx(copy / "t10k-images-idx3-ubyte.gz",
              sp.read_idx(first / "t10k-images-idx3-ubyte.gz")[::-1].copy())
    assert _load(copy, cache).info["from_cache"] is False


def test_value_checks_raise_data_error_directly():
    """The loaders' checks are plain functions: usable by tools without the main scripts."""
    from data.common import check_finite, check_range

    with pytest.raises(DataError, match=r"f: graph 1 has label 5, outside 0\.\.2"):
        check_range(torch.tensor([0, 1, 2, 5]), 0, 3, "f", "label", item="graph",
                    sizes=[1, 3])
    with pytest.raises(DataError, match="f: row 1 has x nan"):
        check_finite(torch.tensor([[0.0, 1.0], [2.0, float("nan")]]), "f", "x", item="row")
    check_range(torch.zeros(0), 0, 1, "f", "label")  # empty: nothing to check
