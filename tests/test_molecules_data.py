"""ZINC loader: raw-format pickles written here, plus a check on the real validation split.
The DGL source is tested in the DGL profile only; PyG is stood in for by a fake module."""

from __future__ import annotations

import logging
import sys
import types
from pathlib import Path

import pytest
import torch

from autogcn.graph import Graph
from data.common import DataError, collate_graphs
from data.molecules import load_zinc, molecule_to_graph, zinc_statistics
from tests.data_writers import molecule as _molecule
from tests.data_writers import write_zinc as _write
from tests.helpers import fake_pyg_datasets


@pytest.fixture()
def zinc_dir(tmp_path: Path) -> tuple[Path, dict[str, list[dict]]]:
    gen = torch.Generator().manual_seed(0)
    data = {s: [_molecule(gen, n) for n in sizes]
            for s, sizes in {"train": (5, 9, 1, 12), "val": (7, 3), "test": (4, 10, 6)}.items()}
    for split, mols in data.items():
        _write(tmp_path, split, mols)
    return tmp_path, data


def test_graphs_match_dense_bond_matrices(zinc_dir):
    folder, data = zinc_dir
    ds = load_zinc(folder)
    assert (ds.name, ds.in_dim, ds.num_classes, ds.num_edge_types) == ("ZINC", 28, 1, 4)
    for split_name, mols in data.items():
        split = ds.splits()[split_name]
        assert len(split) == len(mols)
        for (g, y), mol in zip(split, mols, strict=True):
            n = mol["num_atom"]
            assert g.num_nodes() == n
            assert g.ndata["feat"].dtype == torch.int64
            assert torch.equal(g.ndata["feat"], mol["atom_type"].long())
            # Independent reconstruction: scatter the edges back into a dense matrix.
            src, dst = g.edges()
            dense = torch.zeros(n, n, dtype=torch.int64)
            dense[src, dst] = g.edata["feat"]
            assert g.edata["feat"].dtype == torch.int64
            assert torch.equal(dense, mol["bond_type"].long())
            assert g.num_edges() == int((mol["bond_type"] != 0).sum())
            assert bool((g.edata["feat"] > 0).all())
            # both directions of each bond are present
            assert g.num_edges() % 2 == 0
            assert y.dtype == torch.float32 and y.shape == (1,)
            assert torch.equal(y, mol["logP_SA_cycle_normalized"])


def test_batching_and_statistics(zinc_dir):
    folder, data = zinc_dir
    ds = load_zinc(folder)
    batch, targets, snorm_n = collate_graphs([ds.train[i] for i in range(4)])
    assert targets.shape == (4,)
    assert batch.num_nodes() == 5 + 9 + 1 + 12
    assert isinstance(batch, Graph) and batch.batch_size == 4
    assert snorm_n.shape == (batch.num_nodes(), 1)
    assert batch.edata["feat"].dtype == torch.int64
    stats = zinc_statistics(ds)
    assert stats["val"]["graphs"] == 2
    assert stats["val"]["mean_nodes"] == pytest.approx(5.0)
    ys = torch.cat([m["logP_SA_cycle_normalized"] for m in data["test"]])
    assert stats["test"]["target_mean"] == pytest.approx(float(ys.mean()), abs=1e-6)
    assert ds.info["splits"]["train"]["graphs"] == 4


def test_max_graphs(zinc_dir):
    folder, data = zinc_dir
    ds = load_zinc(folder, max_graphs=2)
    assert [len(s) for s in ds.splits().values()] == [2, 2, 2]
    assert torch.equal(ds.test[1][0].ndata["feat"], data["test"][1]["atom_type"].long())


def test_missing_optional_split_warns(zinc_dir, caplog):
    folder, _ = zinc_dir
    (folder / "test.pickle").unlink()
    (folder / "val.pickle").unlink()
    with caplog.at_level(logging.WARNING, logger="data.molecules"):
        ds = load_zinc(folder)
    assert ds.val is None and ds.test is None and len(ds.train) == 4
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(messages) == 2
    assert any("test.pickle" in m and "skipped" in m for m in messages)


def test_missing_train_or_folder_raises(tmp_path):
    with pytest.raises(DataError, match="does not exist") as err:
        load_zinc(tmp_path / "nowhere")
    assert "train.pickle" in str(err.value) and "--data_source dgl" in str(err.value)
    assert "--data_source pyg" in str(err.value)
    with pytest.raises(DataError, match="train.pickle"):
        load_zinc(tmp_path)


def test_index_file_selects_subset(zinc_dir):
    folder, data = zinc_dir
    (folder / "train.index").write_text("3,0\n")
    ds = load_zinc(folder)
    assert [g.num_nodes() for g in ds.train.graphs] == [12, 5]


def test_unknown_source(zinc_dir):
    with pytest.raises(ValueError):
        load_zinc(zinc_dir[0], source="bogus")


def test_real_zinc_val(tmp_path, real_data):
    # Only val is linked in, so the test does not pay for converting 10k training molecules.
    (tmp_path / "train.pickle").symlink_to(real_data("zinc", "val.pickle") / "val.pickle")
    ds = load_zinc(tmp_path)
    stats = zinc_statistics(ds)["train"]
    assert stats["graphs"] == 1000
    assert stats["mean_nodes"] == pytest.approx(23.08, abs=0.01)
    assert stats["mean_edges"] == pytest.approx(49.69, abs=0.01)
    assert max(int(g.ndata["feat"].max()) for g in ds.train.graphs) < 28
    assert max(int(g.edata["feat"].max()) for g in ds.train.graphs) <= 3


def _reference(mol: dict) -> tuple[Graph, torch.Tensor]:
    return molecule_to_graph(mol)


def _same(g: Graph, h: Graph) -> bool:
    return (g.num_nodes() == h.num_nodes() and torch.equal(g.src, h.src)
            and torch.equal(g.dst, h.dst) and torch.equal(g.ndata["feat"], h.ndata["feat"])
            and torch.equal(g.edata["feat"], h.edata["feat"])
            and g.ndata["feat"].dtype == g.edata["feat"].dtype == torch.int64)


@pytest.mark.parametrize("atoms_as", ["x", "z"])
def test_pyg_source_mapping(tmp_path, zinc_dir, monkeypatch, atoms_as):
    # PyG's ZINC as a fake: built from the same molecules the way PyG documents it
    # (x (N, 1) long atom types -- z (N,) in old releases --, edge_attr (E,), y (1,)).
    _, data = zinc_dir
    seen = []

    class FakeZINC:
        def __init__(self, root, subset, split):
            seen.append((root, subset, split))
            self.items = []
            for mol in data[split]:
                adj = mol["bond_type"]
                edge_index = adj.nonzero().t()
                atoms = mol["atom_type"].long()
                item = types.SimpleNamespace(
                    edge_index=edge_index, edge_attr=adj[edge_index[0], edge_index[1]].long(),
                    y=mol["logP_SA_cycle_normalized"], num_nodes=atoms.numel())
                if atoms_as == "x":
                    item.x = atoms.view(-1, 1)
                else:
                    item.z = atoms
                self.items.append(item)

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return self.items[i]

    fake_pyg_datasets(monkeypatch, ZINC=FakeZINC)
    ds = load_zinc(tmp_path / "somewhere", source="pyg", max_graphs=3)
    assert seen == [(str(tmp_path / "somewhere" / "pyg"), True, s)
                    for s in ("train", "val", "test")]
    assert ds.info["source"] == "pyg" and (ds.in_dim, ds.num_edge_types) == (28, 4)
    for split_name, mols in data.items():
        split = ds.splits()[split_name]
        assert len(split) == min(3, len(mols))
        for (g, y), mol in zip(split, mols, strict=False):
            ref, ref_y = _reference(mol)
            assert _same(g, ref) and torch.equal(y, ref_y) and y.shape == (1,)


def test_dgl_source_mapping(tmp_path, zinc_dir, monkeypatch):
    dgl = pytest.importorskip("dgl", reason="the DGL data source needs the DGL profile")
    _, data = zinc_dir

    class FakeZINCDataset:  # DGL's stored form: feat (N,) and (E,) int64, label (1,) float
        def __init__(self, mode, raw_dir):
            split = {"train": "train", "valid": "val", "test": "test"}[mode]
            self.items = []
            for mol in data[split]:
                adj = mol["bond_type"]
                src, dst = adj.nonzero(as_tuple=True)
                g = dgl.graph((src.int(), dst.int()), num_nodes=mol["num_atom"],
                              idtype=torch.int32)
                g.ndata["feat"] = mol["atom_type"].long()
                g.edata["feat"] = adj[src, dst].long()
                self.items.append((g, mol["logP_SA_cycle_normalized"]))

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return self.items[i]

    monkeypatch.setattr(dgl.data, "ZINCDataset", FakeZINCDataset)
    ds = load_zinc(tmp_path, source="dgl")
    assert ds.info["source"] == "dgl"
    for split_name, mols in data.items():
        for (g, y), mol in zip(ds.splits()[split_name], mols, strict=True):
            ref, ref_y = _reference(mol)
            assert isinstance(g, Graph) and _same(g, ref) and torch.equal(y, ref_y)


def test_optional_sources_missing(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "dgl", None)
    monkeypatch.setitem(sys.modules, "torch_geometric", None)
    with pytest.raises(DataError, match="scripts/setup.sh --dgl") as err:
        load_zinc(tmp_path, source="dgl")
    assert "\n" not in str(err.value)
    with pytest.raises(DataError, match="pip install torch_geometric") as err:
        load_zinc(tmp_path, source="pyg")
    assert "\n" not in str(err.value)
