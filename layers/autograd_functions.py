"""Hand-written autograd Functions behind :mod:`layers.propagation`: :class:`EdgeWeightedSum`
(attention and Gaussian-kernel weights, without one message per edge in the forward pass) and
:class:`SegmentMax` (deterministic maxima), on the CSR helpers of :mod:`autogcn.sparse`;
``tests/test_propagation.py`` checks them against dense computations and ``gradcheck``.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from autogcn.sparse import csr_matrix, sparse_mm


class EdgeWeightedSum(torch.autograd.Function):
    """``out[v, h] = Σ_{e: u→v} w[e, h] · x[u, h]`` for ``x`` (N, H, d) and ``w`` (E, H).

    ``structure`` is ``(csc, csr, src, dst)`` of the graph (see :meth:`autogcn.graph.Graph.csc`).
    Forward: one CSR product per head with the weights as values. Backward: ``Mᵀ g`` per head
    for ``x``, and ``∂w[e, h] = ⟨g[dst_e, h], x[src_e, h]⟩`` for the weights, one head at a time
    so that at most ``E × d`` values are gathered at once.
    """

    @staticmethod
    def forward(ctx, x: Tensor, w: Tensor, structure: tuple) -> Tensor:
        (in_ptr, in_idx, in_perm), (out_ptr, out_idx, out_perm), src, dst = structure
        n, heads, _ = x.shape
        out = torch.empty_like(x)
        matrices = []
        for h in range(heads):
            wh = w[:, h]
            m = csr_matrix(in_ptr, in_idx, wh[in_perm], n)
            mt = csr_matrix(out_ptr, out_idx, wh[out_perm], n)
            out[:, h] = sparse_mm(m, x[:, h].contiguous())
            matrices.append(mt)
        ctx.matrices, ctx.src, ctx.dst = matrices, src, dst
        ctx.save_for_backward(x)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad: Tensor):
        (x,) = ctx.saved_tensors
        grad_x = torch.empty_like(x) if ctx.needs_input_grad[0] else None
        grad_w = x.new_empty(ctx.src.numel(), x.shape[1]) if ctx.needs_input_grad[1] else None
        for h, mt in enumerate(ctx.matrices):
            g = grad[:, h].contiguous()
            if grad_x is not None:
                grad_x[:, h] = sparse_mm(mt, g)
            if grad_w is not None:
                grad_w[:, h] = (g[ctx.dst] * x[ctx.src, h]).sum(-1)
        return grad_x, grad_w, None


class SegmentMax(torch.autograd.Function):
    """``out[r] = max(values[e] for e in segment r)`` (0 for an empty segment), for ``values``
    (E, ...) sorted by segment: ``rows`` (E,) the segment of each entry, ``lengths`` (R,) the
    entries per segment. No atomics: a deterministic stand-in for
    ``zeros.scatter_reduce(0, rows, values, "amax", include_self=False)``.

    The backward is that call's, so that both train alike: each segment's gradient is shared
    equally by the entries equal to its maximum, and, as in torch, a maximum of exactly 0 also
    counts the 0 the output started from as one of them.
    """

    @staticmethod
    def forward(ctx, values: Tensor, rows: Tensor, lengths: Tensor) -> Tensor:
        out = torch.segment_reduce(values, "max", lengths=lengths, axis=0, unsafe=True)
        empty = (lengths == 0).view(-1, *([1] * (values.dim() - 1)))
        out = out.masked_fill(empty, 0)  # segment_reduce leaves -inf there
        ties = values == out[rows]
        counts = torch.segment_reduce(ties.to(values.dtype), "sum", lengths=lengths, axis=0,
                                      unsafe=True) + (out == 0)
        ctx.save_for_backward(ties, counts, rows)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad: Tensor):
        ties, counts, rows = ctx.saved_tensors
        return ties * (grad / counts)[rows], None, None
