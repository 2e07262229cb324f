r"""Degree-normalised propagation shared by AutoGCN and ChebNet.

.. math::
    P(x)_v = s_v \sum_{u \to v} s_u\, x_u, \qquad s_v = \max(\deg^{in}(v), 1)^{-1/2}

The in-degree is used on both sides, as in the authors' release (DGL 0.4 era). On a symmetric
graph without self-loops this is :math:`\tilde A = D^{-1/2} A D^{-1/2}`. On a directed graph
(superpixel kNN graphs) every node is normalised by its *in*-degree; nodes without incoming
edges get ``s = 1`` and an all-zero propagated signal instead of a division by zero.
"""

from __future__ import annotations

import dgl
import torch


def sym_norm(g: dgl.DGLGraph) -> torch.Tensor:
    """Per-node factor ``s = max(indeg, 1)^-1/2`` as a column ``(N, 1)``.

    Compute it once per (batched) graph and pass it to every layer: it depends only on the graph.
    """
    return g.in_degrees().float().clamp(min=1).rsqrt().unsqueeze(1)


def propagate(g: dgl.DGLGraph, x: torch.Tensor, norm: torch.Tensor) -> torch.Tensor:
    """``P(x)``: one normalised sum over incoming edges. ``x`` is ``(N, d)`` or ``(N, b, d)``."""
    shape = (-1,) + (1,) * (x.dim() - 1)
    s = norm.reshape(shape)
    return dgl.ops.copy_u_sum(g, x * s) * s
