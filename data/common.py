"""Containers, value checks, batching and fingerprints shared by every graph dataset.

Every batched loader returns a :class:`GraphDataset` (conventions: docs/data.md, "Containers");
:func:`collate_graphs` batches samples with the graph-size factors ``snorm_n = 1/sqrt(N_g)``.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn

import torch
from torch.utils.data import Dataset

from autogcn.graph import Graph

SPLITS = ("train", "val", "test")


class DataError(RuntimeError):
    """Data is missing or malformed; the message says what and how to get it."""


# Where datasets live when no --data_dir is given (SBM files are generated there, the others in
# a folder per dataset, PyG downloads under pyg/).
DEFAULT_DATA_ROOT = os.environ.get("AUTOGCN_DATA", "datasets")


def pick_source(dataset: str, source: str | None, valid: Sequence[str]) -> str:
    """``source`` if ``dataset`` offers it (``valid``, its default first; None: the default),
    else a DataError listing what it offers."""
    if source is None:
        return valid[0]
    if source not in valid:
        raise DataError(f"data_source {source!r} is not available for {dataset}; valid: "
                        f"{', '.join(valid)}")
    return source


def retired_command(module: str, args: str) -> NoReturn:
    """What ``python -m <module>`` says since its statistics moved to scripts/diagnose.py."""
    print(f"error: python -m {module} no longer runs; for the statistics: "
          f"python -m scripts.diagnose {args} --data_dir DIR", file=sys.stderr)
    sys.exit(2)


def one_line(exc: BaseException, limit: int = 160) -> str:
    """``Type: message`` of an exception on one bounded line (for the cause in a DataError)."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ----------------------------------------------------------------------------- value checks
# Run once per load on whole concatenated arrays (vectorised: milliseconds even for 10^5
# graphs), so that a bad value is one line naming the file and the item, not a crash or a
# silently wrong model many epochs later.


def _where_item(row: int, sizes: Sequence[int] | torch.Tensor | None, item: str) -> str:
    """``"<item> k"`` of the ``row``-th element when items hold ``sizes`` elements each."""
    if sizes is None:
        return f"{item} {row}"
    ends = torch.as_tensor(sizes, dtype=torch.int64).cumsum(0)
    return f"{item} {int(torch.searchsorted(ends, torch.tensor(row), right=True))}"


def _first_bad(values: torch.Tensor, bad: torch.Tensor) -> tuple[int, object]:
    """Row (first dimension) and value of the first ``True`` of ``bad``."""
    flat = int(bad.reshape(-1).nonzero()[0])
    row = flat // max(1, values[0].numel()) if values.dim() > 1 else flat
    return row, values.reshape(-1)[flat].item()


def check_finite(values, where: str, what: str, item: str = "item",
                 sizes: Sequence[int] | torch.Tensor | None = None) -> None:
    """DataError naming ``where`` and the first ``item`` whose ``what`` is NaN or infinite."""
    v = torch.as_tensor(values)
    if not v.is_floating_point() or v.numel() == 0:
        return
    bad = ~torch.isfinite(v)
    if bool(bad.any()):
        row, value = _first_bad(v, bad)
        raise DataError(f"{where}: {_where_item(row, sizes, item)} has {what} {value} (NaN or "
                        "infinite values cannot be trained on); fix or replace the file")


def check_range(values, low: int, high: int, where: str, what: str, item: str = "item",
                sizes: Sequence[int] | torch.Tensor | None = None, note: str = "") -> None:
    """DataError naming ``where`` and the first ``item`` whose ``what`` is not an integer in
    ``low..high - 1`` (class labels, vocabulary ids)."""
    v = torch.as_tensor(values)
    if v.numel() == 0:
        return
    bad = (v < low) | (v >= high)
    if v.is_floating_point():
        bad |= ~torch.isfinite(v) | (v != v.round())
    if bool(bad.any()):
        row, value = _first_bad(v, bad)
        raise DataError(f"{where}: {_where_item(row, sizes, item)} has {what} {value}, outside "
                        f"{low}..{high - 1}{note}")


def check_graph_split(split: GraphSplit, where: str, *, node_vocab: int | None = None,
                      edge_vocab: int | None = None, num_classes: int | None = None,
                      item: str = "graph", node_what: str = "node feature",
                      edge_what: str = "edge feature", label_what: str = "label") -> None:
    """Check a split's values once, as loaded: integer node/edge feature ids in
    ``0..vocab - 1`` (or finite float features), labels in ``0..num_classes - 1`` (or finite
    regression targets when ``num_classes`` is None). Node features live in
    ``g.ndata['feat']``, edge features (where present) in ``g.edata['feat']``."""
    if split is None or len(split) == 0:
        return
    for data, vocab, what in (("ndata", node_vocab, node_what), ("edata", edge_vocab, edge_what)):
        parts = [getattr(g, data).get("feat") for g in split.graphs]
        if any(p is None for p in parts):
            continue
        values = torch.cat([p.reshape(-1) for p in parts])
        sizes = [p.numel() for p in parts]
        if vocab is not None:
            check_range(values, 0, vocab, where, what, item, sizes)
        else:
            check_finite(values, where, what, item, sizes)
    labels = [torch.as_tensor(y).reshape(-1) for y in split.labels]
    values, sizes = torch.cat(labels), [y.numel() for y in labels]
    if num_classes is not None:
        check_range(values, 0, num_classes, where, label_what, item, sizes,
                    f" ({num_classes} classes)")
    else:
        check_finite(values, where, label_what, item, sizes)


class GraphSplit(Dataset):
    """One split of a graph dataset: a list of graphs and their targets."""

    def __init__(self, graphs: Sequence[Graph], labels: Sequence[torch.Tensor]):
        if len(graphs) != len(labels):
            raise ValueError(f"{len(graphs)} graphs but {len(labels)} labels")
        self.graphs = list(graphs)
        self.labels = list(labels)

    def __len__(self) -> int:
        return len(self.graphs)

    def __getitem__(self, idx: int) -> tuple[Graph, torch.Tensor]:
        return self.graphs[idx], self.labels[idx]

    def with_self_loops(self) -> GraphSplit:
        """A copy whose graphs carry one self-loop per node (edge features zero-filled)."""
        graphs = [g.remove_self_loops().add_self_loops() for g in self.graphs]
        return GraphSplit(graphs, self.labels)

    def stats(self) -> dict[str, float]:
        """:func:`size_stats` of the split's graphs."""
        return size_stats([g.num_nodes() for g in self.graphs],
                          [g.num_edges() for g in self.graphs])


def size_stats(nodes: Sequence[int], edges: Sequence[int]) -> dict[str, float]:
    """Graph count, mean / min / max nodes and mean directed edges per graph, from the graphs'
    node and edge counts."""
    n = len(nodes)
    if n == 0:
        return {"graphs": 0, "mean_nodes": 0.0, "min_nodes": 0, "max_nodes": 0, "mean_edges": 0.0}
    return {"graphs": n, "mean_nodes": int(sum(nodes)) / n, "min_nodes": int(min(nodes)),
            "max_nodes": int(max(nodes)), "mean_edges": int(sum(edges)) / n}


@dataclass
class GraphDataset:
    """A benchmark dataset: splits plus the input/output sizes the nets are built from.

    ``in_dim`` is the vocabulary size for integer node features (SBM, ZINC) or the feature width
    for float features (superpixels). ``num_classes`` is 1 for regression.
    """

    name: str
    train: GraphSplit
    val: GraphSplit | None
    test: GraphSplit | None
    in_dim: int
    num_classes: int
    num_edge_types: int = 1
    info: dict = field(default_factory=dict)

    def splits(self) -> dict[str, GraphSplit | None]:
        return {"train": self.train, "val": self.val, "test": self.test}

    def with_self_loops(self) -> GraphDataset:
        return replace(self, **{name: split.with_self_loops() if split is not None else None
                                for name, split in self.splits().items()}, info=dict(self.info))


def graph_size_norm(g: Graph) -> torch.Tensor:
    """``snorm_n = 1/sqrt(N_g)`` per node of a batched graph, ``(nodes, 1)``."""
    sizes = g.batch_num_nodes()
    return torch.repeat_interleave(sizes.float().clamp(min=1).rsqrt(), sizes,
                                   output_size=g.num_nodes()).unsqueeze(1)


def collate_graphs(
    samples: Sequence[tuple[Graph, torch.Tensor]],
) -> tuple[Graph, torch.Tensor, torch.Tensor]:
    """Batch ``(graph, target)`` samples into ``(graph, targets, snorm_n)``.

    The batch's index structure (degrees, in- and out-edge groupings) is built here, so that in
    a data-loader worker it is built off the training process and travels with the batch.
    """
    graphs, labels = zip(*samples)
    batched = Graph.batch(list(graphs)).build_structure()
    targets = torch.cat([torch.as_tensor(y).reshape(-1) if y.dim() == 0 else y for y in labels])
    return batched, targets, graph_size_norm(batched)


# ------------------------------------------------------------------------ fingerprints
#: Graphs of each split whose features and edges enter the data hash (with every graph's
#: size and label): enough to tell another dataset or another preprocessing, cheap on 60k graphs.
HASHED_GRAPHS = 32


def _dense_parts(t: torch.Tensor) -> list[torch.Tensor]:
    """A sparse tensor (features of some node datasets) as its indices and values."""
    if t.layout == torch.strided:
        return [t]
    t = t.to_sparse_coo().coalesce()
    return [t.indices(), t.values()]


def _hash(parts: Iterable[torch.Tensor]) -> str:
    digest = hashlib.sha256()
    for t in (piece for part in parts for piece in _dense_parts(part)):
        t = t.detach().cpu().contiguous().reshape(-1)
        digest.update(f"{t.dtype}{t.numel()};".encode())
        digest.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return digest.hexdigest()[:16]


def graph_data_fingerprint(splits: dict[str, Any]) -> dict[str, Any]:
    """Per split: graphs, nodes and edges, and a hash of every graph's size and label plus the
    features and edges of the first and last :data:`HASHED_GRAPHS` graphs."""
    out: dict[str, Any] = {}
    for name, split in splits.items():
        if split is None:
            continue
        graphs = split.graphs
        nodes = torch.tensor([g.num_nodes() for g in graphs], dtype=torch.int64)
        edges = torch.tensor([g.num_edges() for g in graphs], dtype=torch.int64)
        labels = [torch.as_tensor(y).reshape(-1) for y in split.labels]
        sample = graphs[:HASHED_GRAPHS] + graphs[max(HASHED_GRAPHS, len(graphs) - HASHED_GRAPHS):]
        parts = [nodes, edges, *labels]
        for g in sample:
            parts += [g.src, g.dst, *(g.ndata[k] for k in sorted(g.ndata))]
        out[name] = {"graphs": len(graphs), "nodes": int(nodes.sum()),
                     "edges": int(edges.sum()), "sha256": _hash(parts)}
    return out


def node_data_fingerprint(graph, features: torch.Tensor, labels: torch.Tensor) -> dict[str, Any]:
    """Nodes, edges, feature width and a hash of the edges, features and labels."""
    return {"nodes": graph.num_nodes(), "edges": graph.num_edges(),
            "features": int(features.shape[1]),
            "sha256": _hash([graph.src, graph.dst, features, labels])}
