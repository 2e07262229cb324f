"""PyG's explainers (``torch_geometric.explain``) on the package's modules, without importing
PyG: once PyG is loaded, each module carries parameter-free ``MessagePassing`` children that
receive the edge mask (:class:`Explainable`; why and how: ``docs/layer.md``, *Explaining with PyG*).
"""

from __future__ import annotations

import functools
import sys

import torch
from torch import Tensor, nn

from autogcn.graph import compiling

#: The module PyG defines ``MessagePassing`` in; looked up, never imported, here.
PYG_MESSAGE_PASSING = "torch_geometric.nn.conv.message_passing"


@functools.cache
def _hook_class(message_passing: type) -> type:
    class PyGExplainHook(message_passing):
        """Where PyG's explainers set their edge mask for an ``autogcn`` module: no parameters,
        never called (the module applies the mask, :mod:`autogcn.explain`)."""

        def __init__(self) -> None:
            super().__init__(aggr=None)

        def forward(self, *args, **kwargs):
            raise RuntimeError("PyGExplainHook only holds PyG's explanation mask for its parent")

    # a name pickle finds again (module __getattr__ below): whole pickled models load
    PyGExplainHook.__module__, PyGExplainHook.__qualname__ = __name__, "PyGExplainHook"
    return PyGExplainHook


def __getattr__(name: str) -> type:
    """``PyGExplainHook``, made on first use (it needs PyG, which this module never imports
    by itself): the name unpickling a whole model looks up."""
    if name == "PyGExplainHook":
        from torch_geometric.nn import MessagePassing

        return _hook_class(MessagePassing)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Explainable(nn.Module):
    """Base of the package's modules: PyG's explanation hooks (module docstring).

    Subclasses give :meth:`explain_hops` and call :meth:`explained_weight` on the edge weights
    of the graph they were given, before any edit of their own.
    """

    #: Whether the module takes PyG's explanation masks (the benchmark's layers do not).
    pyg_explainable = True

    def explain_hops(self) -> int:
        """Hops of the receptive field: how far one call carries a node's features."""
        return 1

    def attach_explain_hooks(self) -> None:
        """Add the ``MessagePassing`` children PyG's explainers look for, once PyG is loaded."""
        base = getattr(sys.modules.get(PYG_MESSAGE_PASSING), "MessagePassing", None)  # no import
        if base is None or not self.pyg_explainable or "pyg_explain" in self._modules:
            return
        hook = _hook_class(base)
        self.pyg_explain = nn.ModuleList(hook() for _ in range(self.explain_hops()))

    def explained_weight(self, edge_weight: Tensor | None, graph: object,
                         like: Tensor) -> Tensor | None:
        """``edge_weight`` (``None``: 1 per edge) times the edge mask a PyG explainer has set,
        if one is set; else ``edge_weight`` unchanged. ``graph``: the graph as the module got
        it; ``like``: a tensor of the features' dtype."""
        if not compiling():
            self.attach_explain_hooks()
        hooks = self._modules.get("pyg_explain")
        if hooks is None or not hooks[0].explain or hooks[0]._edge_mask is None:
            return edge_weight
        mask = hooks[0]._edge_mask
        num_edges = _num_edges(graph)
        if mask.dim() != 1 or mask.shape[0] != num_edges:
            raise ValueError(f"the explainer's edge mask has shape {tuple(mask.shape)} but "
                             f"{type(self).__name__} got {num_edges} edges: give the model's "
                             "edge_index to the module unchanged")
        if hooks[0]._apply_sigmoid:
            mask = mask.sigmoid()
        mask = mask.to(like.dtype)
        return mask if edge_weight is None else edge_weight * mask.view(edge_weight.shape)

    def __repr__(self) -> str:
        """``nn.Module``'s layout, without the explanation hooks."""
        children = [f"({name}): " + repr(child).replace("\n", "\n  ")
                    for name, child in self._modules.items() if name != "pyg_explain"]
        extra = self.extra_repr()
        if not children:
            return f"{type(self).__name__}({extra})"
        lines = ([extra] if extra else []) + children
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


def _num_edges(graph: object) -> int:
    """Edges of a ``Graph`` or a ``(2, E)`` ``edge_index``; PyG's explainers mask only those."""
    if isinstance(graph, Tensor) and graph.layout == torch.strided and graph.dim() == 2:
        return graph.shape[1]
    if hasattr(graph, "num_edges") and callable(graph.num_edges):
        return graph.num_edges()
    raise ValueError("PyG's explainers mask the edges of an edge_index: give the module the "
                     "graph as edge_index (not a sparse adjacency) to explain it")
