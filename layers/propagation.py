r"""The benchmark's message passing over a :class:`~autogcn.graph.Graph` besides the normalised
propagation (:mod:`autogcn.propagation`): :func:`aggregate` (sum, mean or max of the neighbours:
GIN, GraphSAGE), :func:`weighted_aggregate` (a weight per edge and head: GAT, MoNet),
:func:`edge_softmax` (GAT's attention), :func:`aggregate_edges` and :func:`readout` (per-graph
pooling). Every maximum goes through :func:`scatter_amax`, deterministic under
``torch.use_deterministic_algorithms(True)`` (``--deterministic``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from autogcn.graph import Graph
from autogcn.propagation import Adjacency, factor_dtype
from layers.autograd_functions import EdgeWeightedSum, SegmentMax

READOUTS = ("mean", "sum", "max")


def aggregate(g: Graph, x: Tensor, how: str = "sum") -> Tensor:
    """Sum, mean or max of ``x`` over each node's in-neighbours (0 where there are none)."""
    if how == "sum":
        return g.cached(("adjacency", "sum"), lambda: Adjacency(g))(x)
    if how == "mean":
        def inverse_degree(dtype: torch.dtype) -> Tensor:
            return (1.0 / g.in_degrees().to(factor_dtype(dtype)).clamp(min=1)).to(dtype)

        return g.cached(("adjacency", "mean"), lambda: Adjacency(g, inverse_degree))(x)
    if how == "max":
        src, dst = g.edges()
        return scatter_amax(x[src], dst, g.num_nodes())
    raise ValueError(f"unknown aggregation {how!r}; use sum, mean or max")


def weighted_aggregate(g: Graph, x: Tensor, weight: Tensor) -> Tensor:
    """``out_v = Σ_{e: u→v} weight_e · x_u``: ``x`` (N, H, d) with ``weight`` (E, H), or
    ``x`` (N, d) with ``weight`` (E,)."""
    squeeze = x.dim() == 2
    if squeeze:
        x, weight = x.unsqueeze(1), weight.reshape(-1, 1)
    structure = (g.csc(), g.csr(), *g.edges())
    out = EdgeWeightedSum.apply(x.contiguous(), weight.to(x.dtype), structure)
    return out.squeeze(1) if squeeze else out


def edge_softmax(g: Graph, scores: Tensor) -> Tensor:
    """Softmax of per-edge ``scores`` (E, ...) over the incoming edges of each destination."""
    src, dst = g.edges()
    shape = (g.num_nodes(), *scores.shape[1:])
    # The shift only stabilises exp(): the result does not depend on it, so no gradient flows.
    peak = scatter_amax(scores.detach(), dst, g.num_nodes())
    exp = torch.exp(scores - peak[dst])
    return exp / exp.new_zeros(shape).index_add(0, dst, exp)[dst]


def readout(g: Graph, h: Tensor, how: str = "mean") -> Tensor:
    """One row per member graph of ``g``: the mean, sum or max of its nodes' ``h`` (0 for a
    graph without nodes)."""
    return _reduce(h, g.node_graph_ids(), g.batch_size, how, g.batch_num_nodes, "readout")


def aggregate_edges(g: Graph, messages: Tensor, how: str = "sum") -> Tensor:
    """Sum, mean or max over each node's incoming edges of per-edge ``messages`` (E, ...):
    ``(N, ...)``, 0 where a node has no incoming edge (e.g. MoNet's ``"max"`` aggregator)."""
    return _reduce(messages, g.edges()[1], g.num_nodes(), how, g.in_degrees, "aggregation")


def _reduce(values: Tensor, index: Tensor, num_rows: int, how: str,
            counts: Callable[[], Tensor], what: str) -> Tensor:
    """Sum, mean (over ``counts()`` entries, at least 1) or max of ``values`` (E, ...) per row
    ``index`` (E,): ``(num_rows, ...)``, 0 for a row no entry reaches."""
    if how not in READOUTS:
        raise ValueError(f"unknown {what} {how!r}; use one of {READOUTS}")
    if how == "max":
        return scatter_amax(values, index, num_rows)
    total = values.new_zeros((num_rows, *values.shape[1:])).index_add(0, index, values)
    if how == "sum":
        return total
    return total / counts().clamp(min=1).to(values.dtype).view(-1, *([1] * (values.dim() - 1)))


def scatter_amax(values: Tensor, index: Tensor, num_rows: int) -> Tensor:
    """``out[i] = max{values[e] : index[e] = i}`` of shape ``(num_rows, ...)``, 0 for a row no
    entry reaches; ``values`` is ``(E, ...)``, ``index`` ``(E,)``.

    Gradients go to the entries equal to their row's maximum, shared between ties as torch's
    backward shares them (:class:`~layers.autograd_functions.SegmentMax` says how). torch's
    ``scatter_reduce(..., "amax")`` has no deterministic CUDA kernel: under
    ``torch.use_deterministic_algorithms(True)`` it raises. With that setting on (any device, so
    the CPU tests exercise it), the entries are sorted by row and reduced per segment instead,
    which gives the same values and the same gradients.
    """
    if not torch.are_deterministic_algorithms_enabled():
        expanded = index.view(-1, *([1] * (values.dim() - 1))).expand_as(values)
        out = values.new_zeros((num_rows, *values.shape[1:]))
        return out.scatter_reduce(0, expanded, values, "amax", include_self=False)
    return _segment_amax(values, index, num_rows)


def _segment_amax(values: Tensor, index: Tensor, num_rows: int) -> Tensor:
    """:func:`scatter_amax` by sorting the entries by row and reducing each row's segment
    (:class:`~layers.autograd_functions.SegmentMax`); the row lengths come from
    ``searchsorted``, which, unlike ``bincount``, needs no host sync."""
    rows, order = torch.sort(index, stable=True)
    bounds = torch.searchsorted(rows, torch.arange(num_rows + 1, device=index.device))
    return SegmentMax.apply(values[order], rows, bounds[1:] - bounds[:-1])
