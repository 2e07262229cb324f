"""The node update every graph layer of the benchmark applies after aggregation (the release
wrote it into each layer), ``h_out = dropout(act(BN(h * snorm_n)) + h_in)``, each step
switchable; and :class:`GraphLayer`, the layers' base. BatchNorm is always allocated, as in the
release, so that parameter counts match the published ones whether or not it is used.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

#: A layer's activation: ``torch.relu``, ``F.elu``, ... or ``None`` (an output layer).
Activation = Callable[[torch.Tensor], torch.Tensor] | None


def activation_name(fn: Callable | None) -> str:
    """``relu``, ``elu``, ... or ``None`` (for printed modules)."""
    return "None" if fn is None else getattr(fn, "__name__", type(fn).__name__)


class PostProcess(nn.Module):
    r"""Graph-size norm, batch norm, activation, residual and dropout, in the release's order.

    Args:
        in_dim: width of the layer input (the residual is dropped when it differs from ``out_dim``).
        out_dim: width of the aggregated features.
        activation: applied after normalisation; ``None`` for an output layer.
        dropout: dropout probability applied last.
        graph_norm: multiply by ``snorm_n = 1/sqrt(N_g)`` (graph-size normalisation).
        batch_norm: apply ``BatchNorm1d(out_dim)``.
        residual: add the layer input (only when ``in_dim == out_dim``; dense or sparse COO).
    """

    # Not a compiled region (train/compilation.py): compiled, it measured slower than torch's
    # own kernels on the CPU and on an H200 GPU (docs/performance.md).

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        activation: Activation = torch.relu,
        dropout: float = 0.0,
        graph_norm: bool = True,
        batch_norm: bool = True,
        residual: bool = False,
    ) -> None:
        super().__init__()
        self.graph_norm = graph_norm
        self.batch_norm = batch_norm
        self.residual = residual and in_dim == out_dim
        self.activation = activation
        self.batchnorm_h = nn.BatchNorm1d(out_dim)
        # p = 0 (most published configs) skips the dropout kernel entirely
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()

    def reset_parameters(self) -> None:
        self.batchnorm_h.reset_parameters()

    def extra_repr(self) -> str:
        unused = "" if self.batch_norm else " (batchnorm_h allocated for the release's count)"
        return (f"graph_norm={self.graph_norm}, batch_norm={self.batch_norm}{unused}, "
                f"activation={activation_name(self.activation)}, residual={self.residual}")

    def forward(
        self, h_in: torch.Tensor, h: torch.Tensor, snorm_n: torch.Tensor | None = None
    ) -> torch.Tensor:
        if self.graph_norm and snorm_n is not None:
            h = h * snorm_n
        if self.batch_norm:
            h = self.batchnorm_h(h)
        if self.activation is not None:
            h = self.activation(h)
        if self.residual:  # a sparse input (bag-of-words features) is added as a dense tensor
            h = (h_in.to_dense() if h_in.is_sparse else h_in) + h
        return self.dropout(h)


class GraphLayer(nn.Module):
    """Base of the benchmark's layers, ``layer(g, feat, snorm_n)``: :meth:`reset_parameters`
    re-initialises every child as it initialises itself and zeroes the layer's own parameters
    (its biases, GIN's ε)."""

    def reset_parameters(self) -> None:
        _reset_children(self)
        for param in self._parameters.values():
            nn.init.zeros_(param)


def _reset_children(module: nn.Module) -> None:
    for child in module.children():
        if hasattr(child, "reset_parameters"):
            child.reset_parameters()
        else:  # a container (nn.Sequential): its members
            _reset_children(child)
