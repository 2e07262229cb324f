r"""Degree-normalised propagation shared by AutoGCN, GCN and ChebNet.

.. math::
    P(x)_v = s_v \sum_{u \to v} s_u\, x_u, \qquad s_v = \max(\deg^{in}(v), 1)^{-1/2}

The in-degree is used on both sides, as in the authors' release (DGL 0.4 era). On a symmetric
graph without self-loops this is :math:`\tilde A = D^{-1/2} A D^{-1/2}`. On a directed graph
(superpixel kNN graphs) every node is normalised by its *in*-degree; nodes without incoming
edges get ``s = 1`` and an all-zero propagated signal instead of a division by zero.

:class:`NormalizedAdjacency` builds :math:`\tilde A` (rows: destinations) and its transpose once
per graph as sparse CSR matrices with the factors :math:`s_v s_u` stored per edge. A net builds it
once per forward pass and every propagation of every layer is then one sparse product, forward
and backward (:math:`\tilde A^\top` for the gradient), with no degree scaling passes around it.
"""

from __future__ import annotations

import warnings

import dgl
import torch
from torch.autograd.function import once_differentiable

# torch announces CSR support as beta once per process; the products used here are stable.
warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")


def sym_norm(g: dgl.DGLGraph) -> torch.Tensor:
    """Per-node factor ``s = max(indeg, 1)^-1/2`` as a column ``(N, 1)``."""
    return g.in_degrees().float().clamp(min=1).rsqrt().unsqueeze(1)


def _csr(indptr: torch.Tensor, indices: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """CSR matrix with entry ``s_row · s_col`` at every stored (row, col)."""
    rows = torch.repeat_interleave(s, indptr[1:] - indptr[:-1])
    n = s.shape[0]
    values = rows * s[indices]
    if indices.numel() < 2**31:  # 32-bit indices spare the sparse kernel a conversion per call
        indptr, indices = indptr.int(), indices.int()
    return torch.sparse_csr_tensor(indptr, indices, values, (n, n))


def sparse_mm(
    matrix: torch.Tensor,
    dense: torch.Tensor,
    out: torch.Tensor | None = None,
    accumulate: bool = False,
) -> torch.Tensor:
    """``matrix @ dense`` (CSR × dense) written into ``out`` (a fresh buffer when omitted).

    ``accumulate=True`` adds to ``out`` instead. Goes through ``addmm.out``, the overload with
    sparse-CSR kernels on CPU and CUDA; ``beta=0`` never reads ``out`` (``torch.sparse.mm``
    zero-fills and copies first).
    """
    if out is None:
        out = dense.new_empty(matrix.shape[0], dense.shape[1])
    return torch.addmm(out, matrix, dense, beta=1 if accumulate else 0, out=out)


class NormalizedAdjacency:
    """:math:`\\tilde A` of a (batched) graph and its transpose, ready for sparse products.

    Depends only on the graph: build it once per batch (``nets.components.LayerStack`` does)
    and pass it to every layer's ``forward(..., adj=...)``.
    """

    def __init__(self, g: dgl.DGLGraph) -> None:
        self.scale = sym_norm(g).squeeze(1)
        # "csc": in-edges grouped by destination (rows of Ã); "csr": out-edges, rows of Ãᵀ
        self._structure = [g.adj_tensors(fmt)[:2] for fmt in ("csc", "csr")]
        self._matrices: dict[torch.dtype, tuple[torch.Tensor, torch.Tensor]] = {}

    def matrices(self, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """``(Ã, Ãᵀ)`` as CSR tensors of ``dtype`` (built on first use, then cached)."""
        if dtype not in self._matrices:
            s = self.scale.to(dtype)
            self._matrices[dtype] = tuple(_csr(ptr, idx, s) for ptr, idx in self._structure)
        return self._matrices[dtype]


class _SparseProduct(torch.autograd.Function):
    """``Ã x`` with the gradient ``Ãᵀ g`` from the stored transpose (no transposition per call)."""

    @staticmethod
    def forward(ctx, x, matrix, transposed):  # x: (N, d) dense
        ctx.transposed = transposed
        return sparse_mm(matrix, x)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        return sparse_mm(ctx.transposed, grad.contiguous()), None, None


def propagate(
    g: dgl.DGLGraph, x: torch.Tensor, adj: NormalizedAdjacency | None = None
) -> torch.Tensor:
    """``P(x)``: one normalised sum over incoming edges. ``x`` is ``(N, d)`` or ``(N, b, d)``.

    ``adj``: the cached :class:`NormalizedAdjacency` of ``g`` (built here when omitted).
    """
    adj = NormalizedAdjacency(g) if adj is None else adj
    flat = x.reshape(x.shape[0], -1).contiguous()
    return _SparseProduct.apply(flat, *adj.matrices(flat.dtype)).view(x.shape)
