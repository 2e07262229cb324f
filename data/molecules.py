"""ZINC molecular graphs (the 12k subset used by benchmarking-gnns) as a :class:`GraphDataset`:
the benchmarking-gnns pickles (``source="raw"``), DGL's ``ZINCDataset`` or PyG's
``ZINC(subset=True)``, each converted to one form (atom types as ``ndata['feat']``, bond types as
``edata['feat']``, float32 ``(1,)`` targets). File format and sources: docs/data.md, "ZINC".
"""

from __future__ import annotations

import csv
import logging
import os
import pickle
import time
from pathlib import Path

import torch

from autogcn.graph import Graph
from data.common import SPLITS, DataError, GraphDataset, GraphSplit, check_graph_split, one_line
from data.interop import dataset_splits, from_dgl, from_pyg

log = logging.getLogger(__name__)

NUM_ATOM_TYPES = 28
NUM_BOND_TYPES = 4
MOLECULES_URL = "https://www.dropbox.com/s/feo9qle74kg48gy/molecules.zip?dl=1"
_HOW_TO_GET = (
    "Get the data with `--data_source dgl` (dgl.data.ZINCDataset, downloads ZINC12k from "
    "data.dgl.ai; DGL profile) or `--data_source pyg` (torch_geometric.datasets.ZINC), or "
    "download the benchmarking-gnns molecules release "
    f"({MOLECULES_URL}; with its train/val/test.index subset files) and unpack it into that folder."
)
_OFFLINE = "use --data_source raw with the benchmarking-gnns pickles"


def molecule_to_graph(mol: dict) -> tuple[Graph, torch.Tensor]:
    """One raw molecule dict to ``(graph, target)``; vectorised over atoms and bonds."""
    atoms = torch.as_tensor(mol["atom_type"])
    if atoms.dim() > 1 and tuple(atoms.shape[1:]) != (1,):  # (N,) or PyG's (N, 1) only
        raise DataError(f"atom_type has shape {tuple(atoms.shape)}; expected (atoms,)")
    atoms = atoms.reshape(-1)
    if atoms.is_floating_point() and not bool((atoms == atoms.round()).all()):
        raise DataError("atom_type holds non-integer values")  # .long() would truncate them
    atoms = atoms.long()
    bonds = torch.as_tensor(mol["bond_type"])
    if bonds.is_floating_point() and not bool((bonds == bonds.round()).all()):
        raise DataError("bond_type holds non-integer values")
    n = atoms.numel()
    if n == 0:
        raise DataError("it has no atoms")  # an empty graph has nothing to pool into a target
    num_atom = torch.as_tensor(mol["num_atom"])
    if num_atom.numel() != 1 or float(num_atom.reshape(-1)[0]) != n:
        raise DataError(f"num_atom is {num_atom.tolist()} but atom_type lists {n} atoms")
    if bonds.shape != (n, n):
        raise DataError(f"bond_type has shape {tuple(bonds.shape)} for {n} atoms; expected "
                        f"({n}, {n})")
    # nonzero() scans row-major, giving the same edge order as the benchmark's edge list.
    src, dst = bonds.nonzero(as_tuple=True)
    g = Graph(src, dst, n, ndata={"feat": atoms}, edata={"feat": bonds[src, dst].long()})
    target = torch.as_tensor(mol["logP_SA_cycle_normalized"], dtype=torch.float32).reshape(1)
    return g, target


def _read_index(path: Path, count: int) -> list[int]:
    """The molecule indices on the first line of a benchmarking-gnns ``<split>.index`` file,
    each checked to be an integer in ``0..count - 1`` (a negative one would silently pick a
    molecule from the end)."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"cannot read {path} ({one_line(exc)})") from exc
    entries = rows[0] if rows else []
    if not entries:
        raise DataError(f"{path} lists no molecules; expected one line of comma-separated "
                        "indices (the benchmarking-gnns subset files)")
    index = []
    for k, text in enumerate(entries):
        try:
            i = int(text)
        except ValueError:
            raise DataError(f"{path}: entry {k} ({text.strip()[:40]!r}) is not a molecule "
                            "index") from None
        if not 0 <= i < count:
            raise DataError(f"{path}: entry {k} is {i}, outside the {count} molecules "
                            f"(0..{count - 1}) of the pickle it selects from")
        index.append(i)
    return index


def _load_raw_split(folder: Path, split: str, max_graphs: int | None) -> GraphSplit | None:
    path = folder / f"{split}.pickle"
    if not path.is_file():
        log.warning("ZINC: %s is missing; the %s split is skipped", path, split)
        return None
    try:
        with open(path, "rb") as f:
            molecules = pickle.load(f)
    except Exception as exc:  # a truncated/foreign file: say which one
        raise DataError(f"cannot unpickle {path} ({one_line(exc)})") from exc
    if not isinstance(molecules, (list, tuple)):
        raise DataError(f"{path} holds a {type(molecules).__name__}; expected a list of molecule "
                        "dicts (num_atom, atom_type, bond_type, logP_SA_cycle_normalized), the "
                        "benchmarking-gnns format")
    index_path = folder / f"{split}.index"
    where = str(path)
    if index_path.is_file():
        index = _read_index(index_path, len(molecules))
        if len(molecules) > len(index):
            where = f"{path} (molecules as listed in {index_path.name})"
            # Full-ZINC pickles plus the benchmark's subset indices: take the 12k subset.
            log.info("ZINC: selecting %d of %d %s molecules via %s",
                     len(index), len(molecules), split, index_path)
            molecules = [molecules[i] for i in index]
    if max_graphs is not None:
        molecules = molecules[:max_graphs]
    graphs, labels = [], []
    for i, mol in enumerate(molecules):
        try:
            g, y = molecule_to_graph(mol)
        except (KeyError, TypeError, ValueError, RuntimeError, DataError) as exc:
            raise DataError(f"{path}: molecule {i} is malformed ({one_line(exc)})") from exc
        graphs.append(g)
        labels.append(y)
    return _checked(GraphSplit(graphs, labels), where)


def _checked(split: GraphSplit, where: str) -> GraphSplit:
    """``split`` after one vectorised check of its values: atom types in the 28-type
    vocabulary, bond types 0..3, finite targets."""
    check_graph_split(split, where, node_vocab=NUM_ATOM_TYPES, edge_vocab=NUM_BOND_TYPES,
                      item="molecule", node_what="atom type", edge_what="bond type",
                      label_what="target")
    return split


def _downloaded(source: str, folder: Path, max_graphs: int | None) -> dict[str, GraphSplit]:
    """ZINC's splits from DGL's ``ZINCDataset`` or PyG's ``ZINC(subset=True)`` (downloaded into
    ``folder``, PyG's under ``folder/pyg``), in our form and checked."""
    purpose = f"ZINC with --data_source {source}"
    if source == "dgl":
        splits = dataset_splits("dgl", "ZINCDataset", purpose, _OFFLINE, max_graphs,
                                raw_dir=str(folder))
    else:
        splits = dataset_splits("pyg", "ZINC", purpose, _OFFLINE, max_graphs,
                                root=str(folder / "pyg"), subset=True)
    convert = {"dgl": lambda s: (from_dgl(s[0]), s[1]), "pyg": lambda s: (from_pyg(s), s.y)}
    out = {}
    for split, samples in splits:
        graphs, labels = [], []
        for sample in samples:
            g, y = convert[source](sample)
            # PyG releases before 2.0 stored the atom types as ``z``
            atoms, bonds = g.ndata.get("feat", getattr(sample, "z", None)), g.edata.get("feat")
            if atoms is None or bonds is None:
                raise DataError("a converted ZINC graph lacks its atom or bond types")
            graphs.append(Graph(g.src, g.dst, g.num_nodes(),
                                ndata={"feat": atoms.long().reshape(-1)},
                                edata={"feat": bonds.long().reshape(-1)}))
            labels.append(torch.as_tensor(y, dtype=torch.float32).reshape(1))
        name = {"dgl": "dgl", "pyg": "PyG"}[source]
        out[split] = _checked(GraphSplit(graphs, labels), f"{name} ZINC {split} split")
    return out


def zinc_statistics(ds: GraphDataset) -> dict:
    """Per split: graphs, mean nodes, mean directed edges, target mean and std."""
    def stats(split: GraphSplit) -> dict:
        y = torch.cat([t.reshape(-1) for t in split.labels]) if len(split) else torch.zeros(0)
        return {**split.stats(), "target_mean": float(y.mean()) if y.numel() else 0.0,
                "target_std": float(y.std()) if y.numel() > 1 else 0.0}

    return {name: stats(split) for name, split in ds.splits().items() if split is not None}


def load_zinc(data_dir: str | os.PathLike, max_graphs: int | None = None,
              source: str = "raw") -> GraphDataset:
    """Load ZINC (12k subset) from raw benchmarking-gnns pickles, DGL's or PyG's copy.

    ``max_graphs`` converts only the first N molecules of every split. A missing val/test pickle
    is logged and returned as None; a missing train pickle or folder raises :class:`DataError`.
    """
    folder = Path(data_dir).expanduser()
    t0 = time.perf_counter()
    if source == "raw":
        expected = ", ".join(f"{s}.pickle" for s in SPLITS)
        if not folder.is_dir():
            raise DataError(f"ZINC data folder {folder} does not exist (expected {expected}). "
                            + _HOW_TO_GET)
        if not (folder / "train.pickle").is_file():
            raise DataError(f"ZINC: {folder / 'train.pickle'} is missing (expected {expected} "
                            f"in {folder}). " + _HOW_TO_GET)
        splits = {s: _load_raw_split(folder, s, max_graphs) for s in SPLITS}
    elif source in ("dgl", "pyg"):
        splits = _downloaded(source, folder, max_graphs)
    else:
        raise ValueError(f"unknown ZINC source {source!r}; use one of raw, dgl, pyg")
    ds = GraphDataset(
        name="ZINC",
        train=splits["train"],
        val=splits["val"],
        test=splits["test"],
        in_dim=NUM_ATOM_TYPES,
        num_classes=1,
        num_edge_types=NUM_BOND_TYPES,
    )
    ds.info = {"source": source, "data_dir": str(folder), "max_graphs": max_graphs,
               "load_time_s": time.perf_counter() - t0, "splits": zinc_statistics(ds)}
    return ds


if __name__ == "__main__":  # it printed statistics once; scripts/diagnose.py does that now
    from data.common import retired_command

    retired_command("data.molecules", "--dataset ZINC")
