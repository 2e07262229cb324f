"""Hand-written autograd Functions behind the message-passing primitives, and the two CSR
helpers they are built on.

Each Function is the plain formula with a hand-written backward (the sparse products reuse a
stored transpose instead of transposing per call); :mod:`layers.propagation` wraps them, and
``tests/test_propagation.py`` checks them against dense computations and
``torch.autograd.gradcheck``.

* :func:`csr_matrix` — builds every CSR tensor the layers use (32-bit indices where they fit).
* :func:`sparse_mm` — the single place that multiplies a CSR matrix by a dense one.
* :class:`SparseProduct` — ``M x`` with the gradient ``Mᵀ g`` from the stored ``Mᵀ``.
* :class:`EdgeWeightedSum` — ``out_v = Σ_{e: u→v} w_e x_u`` per head, differentiable in both
  ``x`` and the edge weights ``w`` (attention, Gaussian kernels), without materialising one
  message per edge in the forward pass.
* :class:`SegmentMax` — per-segment maxima of row-sorted values, the deterministic path of
  :func:`layers.propagation.scatter_amax`.
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

# torch announces CSR support as "beta" when a CSR tensor is first made; the two products used
# here (CSR × dense through addmm, on CPU and CUDA) are the long-standing ones. That notice and
# the one below alone are silenced, and only around the construction in csr_matrix (the user's
# own filters stay as they are).
CSR_BETA_NOTICE = "Sparse CSR tensor support is in beta"
#: Some torch releases (2.11, seen on a GPU machine) also announce, on every construction, that
#: the invariant checks are off even when ``check_invariants=False`` is passed explicitly.
CSR_INVARIANTS_NOTICE = "Sparse invariant checks are implicitly disabled"


def sparse_mm(matrix: Tensor, dense: Tensor, out: Tensor | None = None,
              accumulate: bool = False) -> Tensor:
    """``matrix @ dense`` (CSR × dense) written into ``out`` (a fresh buffer when omitted).

    ``accumulate=True`` adds to ``out`` instead. Goes through ``addmm.out``, the overload with
    sparse-CSR kernels on CPU and CUDA. On the CPU ``beta=0`` never reads ``out``; on CUDA
    ``out`` is zero-filled first, since whether cuSPARSE reads an ``out`` scaled by ``beta=0``
    (``NaN · 0`` is NaN) is not part of torch's contract (``scripts/gpu_check.py`` reports what
    the installed build does). A matrix with more stored entries than cells is multiplied dense.
    """
    rows, cols = matrix.shape
    if matrix.values().numel() > rows * cols:
        # More stored entries than cells (repeated entries in a tiny matrix: a one-node batch
        # with several self-loops). cuSPARSE rejects such a matrix, and it is cheaper dense.
        product = _summed_dense(matrix) @ dense
        if out is None:
            return product
        return out.add_(product) if accumulate else out.copy_(product)
    if out is None:
        out = (dense.new_zeros if dense.is_cuda else dense.new_empty)(rows, dense.shape[1])
    elif dense.is_cuda and not accumulate:
        out.zero_()
    return torch.addmm(out, matrix, dense, beta=1 if accumulate else 0, out=out)


def _summed_dense(matrix: Tensor) -> Tensor:
    """The dense form of a CSR matrix, repeated entries summed."""
    indptr, values = matrix.crow_indices(), matrix.values()
    rows = torch.repeat_interleave(torch.arange(matrix.shape[0], device=values.device),
                                   indptr.diff(), output_size=values.numel())
    return values.new_zeros(matrix.shape).index_put_((rows, matrix.col_indices().long()), values,
                                                     accumulate=True)


class SparseProduct(torch.autograd.Function):
    """``M x`` for a constant CSR ``M``; the backward multiplies by the stored ``Mᵀ``."""

    @staticmethod
    def forward(ctx, x: Tensor, matrix: Tensor, transposed: Tensor) -> Tensor:  # x: (N, d)
        ctx.transposed = transposed
        return sparse_mm(matrix, x)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad: Tensor):
        return sparse_mm(ctx.transposed, grad.contiguous()), None, None


class EdgeWeightedSum(torch.autograd.Function):
    """``out[v, h] = Σ_{e: u→v} w[e, h] · x[u, h]`` for ``x`` (N, H, d) and ``w`` (E, H).

    ``structure`` is ``(csc, csr, src, dst)`` of the graph (see :meth:`data.graph.Graph.csc`).
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


def csr_matrix(indptr: Tensor, indices: Tensor, values: Tensor, n: int) -> Tensor:
    """An ``n × n`` CSR tensor (32-bit indices where they fit)."""
    if indices.numel() < 2**31:  # 32-bit indices spare the sparse kernel a conversion per call
        indptr, indices = indptr.int(), indices.int()
    # The structure comes from Graph.csc()/csr(), valid by construction: skip the O(nnz) checks.
    with warnings.catch_warnings():
        for notice in (CSR_BETA_NOTICE, CSR_INVARIANTS_NOTICE):
            warnings.filterwarnings("ignore", message=notice, category=UserWarning)
        return torch.sparse_csr_tensor(indptr, indices, values, (n, n), check_invariants=False)
