"""ZINC molecular graphs (the 12k subset used by benchmarking-gnns) as a :class:`GraphDataset`.

Two sources:

* ``source="raw"`` reads the benchmarking-gnns raw molecule format: per split a pickled list of
  dicts ``{num_atom, atom_type int8 [N], bond_type int8 [N, N] (0 = no bond),
  logP_SA_cycle_normalized float32 [1]}`` stored as ``train.pickle``, ``val.pickle``,
  ``test.pickle``. Unpickling needs torch (the entries are torch tensors). If a ``<split>.index``
  file sits next to a pickle that holds more molecules than it lists (the full-ZINC pickles of the
  ``molecules.zip`` release), the listed subset is taken, as benchmarking-gnns did.
* ``source="dgl"`` converts ``dgl.data.ZINCDataset`` (downloads ZINC12k.zip from data.dgl.ai;
  DGL profile) through :func:`data.interop.from_dgl`.
* ``source="pyg"`` converts ``torch_geometric.datasets.ZINC(subset=True)`` (the same 12k subset,
  downloaded into ``<data_dir>/pyg``; needs ``pip install torch_geometric``) through
  :func:`data.interop.from_pyg`. PyG builds its graphs from the same raw pickles with the same
  rule (``bond_type.nonzero()``, so the same edge order); its atom types come as ``x`` (N, 1)
  (``z`` (N,) in old PyG releases) and become ``(N,)`` here, bond types ``edge_attr`` (E,).

Graphs (:class:`~autogcn.graph.Graph`): ``g.ndata['feat']`` = atom type (int64 ``(N,)``,
vocabulary 28), one directed edge per nonzero entry of ``bond_type`` in row-major order (the
matrix is symmetric, so every bond appears in both directions, as the benchmark stored it),
``g.edata['feat']`` = bond type (int64 ``(E,)``, 1..3; vocabulary 4 with 0 = none). Targets are
float32 tensors of shape ``(1,)``. Every source gives this form.

Statistics: ``python -m scripts.diagnose --dataset ZINC --data_dir DIR``.
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
from data.common import DataError, GraphDataset, GraphSplit, check_graph_split, one_line
from data.interop import download, from_dgl, from_pyg, require_dgl, require_pyg

log = logging.getLogger(__name__)

NUM_ATOM_TYPES = 28
NUM_BOND_TYPES = 4
SPLITS = ("train", "val", "test")
SOURCES = ("raw", "dgl", "pyg")
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
        first = " ".join(str(exc).split())[:160]
        raise DataError(f"cannot unpickle {path} ({type(exc).__name__}: {first})") from exc
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
            raise DataError(f"{path}: molecule {i} is malformed ({type(exc).__name__}: "
                            f"{' '.join(str(exc).split())[:120]})") from exc
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


def _molecule(g: Graph, atoms: torch.Tensor | None, bonds: torch.Tensor | None,
              y) -> tuple[Graph, torch.Tensor]:
    """A converted molecule in our form: int64 (N,) atom types, int64 (E,) bond types."""
    if atoms is None or bonds is None:
        raise DataError("a converted ZINC graph lacks its atom or bond types")
    g = Graph(g.src, g.dst, g.num_nodes(), ndata={"feat": atoms.long().reshape(-1)},
              edata={"feat": bonds.long().reshape(-1)})
    return g, torch.as_tensor(y, dtype=torch.float32).reshape(1)


def _load_dgl_split(data_dir: Path, split: str, max_graphs: int | None) -> GraphSplit:
    dgl = require_dgl("ZINC with --data_source dgl")
    mode = {"train": "train", "val": "valid", "test": "test"}[split]
    ds = download(f"dgl.data.ZINCDataset(mode={mode!r}, raw_dir={str(data_dir)!r})",
                  lambda: dgl.data.ZINCDataset(mode=mode, raw_dir=str(data_dir)), _OFFLINE)
    n = len(ds) if max_graphs is None else min(max_graphs, len(ds))
    graphs, labels = [], []
    for i in range(n):
        g, y = ds[i]
        g = from_dgl(g)
        g, y = _molecule(g, g.ndata.get("feat"), g.edata.get("feat"), y)
        graphs.append(g)
        labels.append(y)
    return GraphSplit(graphs, labels)


def _load_pyg_split(data_dir: Path, split: str, max_graphs: int | None) -> GraphSplit:
    datasets = require_pyg("ZINC with --data_source pyg")
    root = data_dir / "pyg"
    ds = download(f"torch_geometric.datasets.ZINC(root={str(root)!r}, subset=True, "
                  f"split={split!r})",
                  lambda: datasets.ZINC(root=str(root), subset=True, split=split), _OFFLINE)
    n = len(ds) if max_graphs is None else min(max_graphs, len(ds))
    graphs, labels = [], []
    for i in range(n):
        data = ds[i]
        g = from_pyg(data)
        atoms = g.ndata.get("feat")
        if atoms is None:  # PyG releases before 2.0 stored the atom types as ``z``
            atoms = getattr(data, "z", None)
        g, y = _molecule(g, atoms, g.edata.get("feat"), data.y)
        graphs.append(g)
        labels.append(y)
    return GraphSplit(graphs, labels)



def zinc_statistics(ds: GraphDataset) -> dict:
    """Per split: graphs, mean nodes, mean directed edges, target mean and std."""
    out = {}
    for name, split in ds.splits().items():
        if split is None:
            continue
        stats = split.stats()
        y = torch.cat([t.reshape(-1) for t in split.labels]) if len(split) else torch.zeros(0)
        stats["target_mean"] = float(y.mean()) if y.numel() else 0.0
        stats["target_std"] = float(y.std()) if y.numel() > 1 else 0.0
        out[name] = stats
    return out


def load_zinc(
    data_dir: str | os.PathLike, max_graphs: int | None = None, source: str = "raw"
) -> GraphDataset:
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
    elif source == "dgl":
        splits = {s: _checked(_load_dgl_split(folder, s, max_graphs), f"dgl ZINC {s} split")
                  for s in SPLITS}
    elif source == "pyg":
        splits = {s: _checked(_load_pyg_split(folder, s, max_graphs), f"PyG ZINC {s} split")
                  for s in SPLITS}
    else:
        raise ValueError(f"unknown ZINC source {source!r}; use one of {', '.join(SOURCES)}")
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
    import sys

    print("error: python -m data.molecules no longer runs; for the statistics: "
          "python -m scripts.diagnose --dataset ZINC --data_dir DIR", file=sys.stderr)
    sys.exit(2)
