"""The checks and conversions at the entry of every module of the package: node features, and
the graph in any of PyG's forms (``edge_index`` with an optional ``edge_weight``, a
``torch.sparse`` COO/CSR or ``torch_sparse.SparseTensor`` ``adj_t`` with row = target and values
= weights, or a :class:`~autogcn.graph.Graph`; ``docs/layer.md``), turned into a
:class:`~autogcn.graph.Graph` and an optional weight per edge without reading a value back from
the device, so that the conversion compiles into one graph.
"""

from __future__ import annotations

import math
import numbers

import torch
from torch import Tensor

from autogcn.graph import Graph, can_read_values
from autogcn.sparse import SPARSE_DTYPES

GraphInput = Tensor | Graph  # or a torch_sparse.SparseTensor, which is not imported here


def check_size(name: str, value: int, maximum: int | None = None, lazy: bool = False) -> int:
    """``value`` if it is a positive int (at most ``maximum``; ``-1``, a width set by the
    first input, where ``lazy``); a clear error naming ``name`` otherwise."""
    expected = "a positive int" + (" (or -1: taken from the first input)" if lazy else "")
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be {expected}, got {value!r}")
    if value < 1 and not (lazy and value == -1):
        raise ValueError(f"{name} must be {expected}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value}")
    return value


def check_float(name: str, value: float) -> float:
    """``value`` if it is a finite real number; a clear error naming ``name`` otherwise (a NaN
    hyperparameter would otherwise give NaN outputs without a word)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a finite number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")
    return float(value)


def check_features(x: Tensor, width: int, dtype: torch.dtype,
                   width_name: str = "in_channels", device: torch.device | None = None) -> None:
    """Refuse node features the sparse products would fail on deep inside torch: not a 2-D
    floating tensor, a width other than ``width``, a dtype other than the module's ``dtype``,
    a device other than the module's ``device``, or a dtype the CSR kernels lack on the
    tensor's device."""
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a tensor of node features, got {type(x).__name__}")
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D, (num_nodes, {width_name}={width}); got shape "
                         f"{tuple(x.shape)}")
    if x.shape[1] != width:
        raise ValueError(f"x has {x.shape[1]} columns but the module's {width_name} is {width}")
    if not x.is_floating_point():
        raise TypeError(f"x must be floating point, got {x.dtype}")
    if x.dtype != dtype:
        raise TypeError(f"x has dtype {x.dtype} but the module's parameters are {dtype}; "
                        f"convert one of them (e.g. module.to({x.dtype}))")
    if device is not None and x.device != device:
        raise ValueError(f"x is on {x.device} but the module's parameters are on {device}; "
                         f"move one of them (e.g. module.to({str(x.device)!r}))")
    supported = SPARSE_DTYPES.get(x.device.type)
    if supported is not None and x.dtype not in supported:
        names = ", ".join(str(d) for d in supported)
        raise TypeError(f"x has dtype {x.dtype}, which torch's sparse kernels lack on "
                        f"{x.device.type}; use one of {names}")


def to_graph(graph: GraphInput, num_nodes: int, edge_weight: Tensor | None = None,
             device: torch.device | None = None) -> tuple[Graph, Tensor | None]:
    """``graph`` in any accepted form (module docstring) as a :class:`Graph` of ``num_nodes``
    nodes and its edge weights (``edge_weight``, a sparse adjacency's values, or ``None``);
    ``device``: the features' device, which the graph must be on."""
    g, weight = _to_graph(graph, num_nodes, edge_weight)
    if device is not None and g.device != device:
        what = "the graph" if isinstance(graph, Graph) else "edge_index"
        raise ValueError(f"{what} is on {g.device} but x is on {device}; move the graph to "
                         f"x's device (e.g. edge_index.to({str(device)!r}))")
    return g, weight


def _to_graph(graph: GraphInput, num_nodes: int,
              edge_weight: Tensor | None) -> tuple[Graph, Tensor | None]:
    if isinstance(graph, Graph):
        if graph.num_nodes() != num_nodes:
            raise ValueError(f"the graph has {graph.num_nodes()} nodes but the features have "
                             f"{num_nodes} rows")
        return graph, edge_weight
    if type(graph).__name__ == "SparseTensor" and hasattr(graph, "coo"):  # torch_sparse's
        row, col, value = graph.coo()
        return _from_adjacency(row, col, value, tuple(graph.sizes()), num_nodes, edge_weight)
    if not isinstance(graph, Tensor):
        raise TypeError("edge_index must be a (2, num_edges) tensor, a torch.sparse adjacency "
                        f"or a SparseTensor; got {type(graph).__name__}")
    if graph.layout == torch.sparse_coo:
        adj = graph if graph.is_coalesced() else graph.coalesce()
        row, col = adj.indices()
        return _from_adjacency(row, col, adj.values(), tuple(adj.shape), num_nodes, edge_weight)
    if graph.layout == torch.sparse_csr:
        crow = graph.crow_indices()
        row = torch.repeat_interleave(torch.arange(graph.shape[0], device=crow.device),
                                      crow.diff(), output_size=graph.col_indices().numel())
        return _from_adjacency(row, graph.col_indices(), graph.values(), tuple(graph.shape),
                               num_nodes, edge_weight)
    if graph.layout != torch.strided:
        raise TypeError(f"a sparse adjacency must be COO or CSR, got layout {graph.layout}")
    if graph.is_floating_point() or graph.dtype == torch.bool or graph.is_complex():
        raise TypeError(f"edge_index must hold integer node ids, got dtype {graph.dtype}")
    # the (2, E) shape: checked by Graph.from_edge_index, with the same message
    return Graph.from_edge_index(graph, num_nodes, validate=can_read_values(graph)), edge_weight


def _from_adjacency(row: Tensor, col: Tensor, value: Tensor | None, shape: tuple,
                    num_nodes: int, edge_weight: Tensor | None) -> tuple[Graph, Tensor | None]:
    """The graph of a transposed adjacency (``row`` targets, ``col`` sources)."""
    if edge_weight is not None:
        raise ValueError("edge_weight must be None when the graph is a sparse adjacency: "
                         "its values are the edge weights")
    if shape != (num_nodes, num_nodes):
        raise ValueError(f"the sparse adjacency must be ({num_nodes}, {num_nodes}), one row and "
                         f"column per node of x, got {shape}")
    if value is not None and value.dim() != 1:
        raise ValueError(f"the sparse adjacency must hold one value per edge, got values of "
                         f"shape {tuple(value.shape)}")
    # ids of a sparse tensor lie inside its shape by construction: nothing to check
    return Graph(col, row, num_nodes, validate=False), value
