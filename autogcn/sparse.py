"""The sparse product every propagation goes through: a CSR matrix times a dense one.

:func:`csr_matrix` builds every CSR tensor, :func:`sparse_mm` multiplies one by a dense matrix,
and :func:`sparse_product` is ``M x`` from the CSR parts ``(crow, col, values)`` of ``M`` and
``Mᵀ``: differentiable in ``x`` (the backward multiplies by the stored ``Mᵀ``) and in ``M``'s
values (``<grad_v, x_u>`` per stored entry, only when they need it). It is the custom operator
``torch.ops.autogcn.csr_product``, so that ``torch.compile`` keeps it as one opaque call of
known shape (CSR tensors cannot be traced) without a graph break (torch >= 2.4; older torch
gets an autograd Function). :data:`SPARSE_DTYPES`: the dtypes of the CSR kernels per device.
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor

# torch announces CSR support as "beta" when a CSR tensor is first made; the product used
# here (CSR × dense through addmm, on CPU and CUDA) is the long-standing one. That notice and
# the one below alone are silenced, and only around the construction in csr_matrix (the user's
# own filters stay as they are).
CSR_BETA_NOTICE = "Sparse CSR tensor support is in beta"
#: Some torch releases (2.11, seen on a GPU machine) also announce, on every construction, that
#: the invariant checks are off even when ``check_invariants=False`` is passed explicitly.
CSR_INVARIANTS_NOTICE = "Sparse invariant checks are implicitly disabled"

#: Floating dtypes of the CSR × dense kernels per device type (the CPU's MKL kernel has no
#: half precision; cuSPARSE has). Other device types are not checked.
SPARSE_DTYPES = {
    "cpu": (torch.float32, torch.float64),
    "cuda": (torch.float16, torch.bfloat16, torch.float32, torch.float64),
}

#: ``(crow_indices, col_indices, values)`` of a square CSR matrix.
CSRParts = tuple[Tensor, Tensor, Tensor]


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


def csr_matrix(indptr: Tensor, indices: Tensor, values: Tensor, n: int) -> Tensor:
    """An ``n × n`` CSR tensor (32-bit indices where they fit)."""
    if indices.numel() < 2**31:  # 32-bit indices spare the sparse kernel a conversion per call
        indptr, indices = indptr.int(), indices.int()
    # The structure comes from Graph.csc()/csr(), valid by construction: skip the O(nnz) checks.
    with warnings.catch_warnings():
        for notice in (CSR_BETA_NOTICE, CSR_INVARIANTS_NOTICE):
            warnings.filterwarnings("ignore", message=notice, category=UserWarning)
        return torch.sparse_csr_tensor(indptr, indices, values, (n, n), check_invariants=False)


def csr_parts(matrix: Tensor) -> CSRParts:
    """The parts :func:`sparse_product` takes, of a CSR tensor."""
    return matrix.crow_indices(), matrix.col_indices(), matrix.values()


def _product(x: Tensor, crow: Tensor, col: Tensor, values: Tensor) -> Tensor:
    return sparse_mm(csr_matrix(crow, col, values, crow.numel() - 1), x)


def _save_transpose(ctx, inputs: tuple, output: Tensor | None) -> None:
    ctx.transposed = (*inputs[4:7], *inputs[1:4])  # the backward multiplies by Mᵀ (and M)
    # x and M's structure only where a value needs its gradient (a learned edge weight)
    ctx.for_values = (inputs[0], inputs[1], inputs[2]) if ctx.needs_input_grad[3] else None


def _product_backward(ctx, grad: Tensor) -> tuple:
    grad = grad.contiguous()
    grad_x = _csr_product(grad, *ctx.transposed) if ctx.needs_input_grad[0] else None
    grad_values = None if ctx.for_values is None else _values_gradient(grad, *ctx.for_values)
    return (grad_x, None, None, grad_values) + (None,) * 3


if hasattr(torch.library, "custom_op"):  # torch >= 2.4: an operator torch.compile keeps whole
    @torch.library.custom_op("autogcn::csr_product", mutates_args=())
    def _csr_product(x: Tensor, crow: Tensor, col: Tensor, values: Tensor, crow_t: Tensor,
                     col_t: Tensor, values_t: Tensor) -> Tensor:
        """``M x`` with ``M`` given by its CSR parts (``Mᵀ``'s parts serve the backward)."""
        return _product(x, crow, col, values)

    @_csr_product.register_fake
    def _(x: Tensor, crow: Tensor, *_: Tensor) -> Tensor:
        return x.new_empty(crow.shape[0] - 1, x.shape[1])

    _csr_product.register_autograd(_product_backward, setup_context=_save_transpose)
else:  # older torch (the DGL profile's 2.2): the same product and backward, eager only
    class _CSRProduct(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x: Tensor, *parts: Tensor) -> Tensor:
            _save_transpose(ctx, (x, *parts), None)
            return _product(x, *parts[0:3])

        backward = staticmethod(_product_backward)

    _csr_product = _CSRProduct.apply


def _entry_rows(crow: Tensor, nnz: int) -> Tensor:
    return torch.repeat_interleave(torch.arange(crow.numel() - 1, device=crow.device),
                                   crow.diff(), output_size=nnz)


def _sampled(grad: Tensor, x: Tensor, crow: Tensor, col: Tensor) -> Tensor:
    """``<grad_v, x_u>`` for every stored entry (row v, column u) of the CSR pattern: torch's
    sampled product where it has a kernel (float32/64), else by gathering both rows."""
    if grad.dtype in (torch.float32, torch.float64):
        pattern = csr_matrix(crow, col, grad.new_zeros(col.numel()), crow.numel() - 1)
        return torch.sparse.sampled_addmm(pattern, grad, x.T, beta=0.0).values()
    return (grad[_entry_rows(crow, col.numel())] * x[col.long()]).sum(-1)


if hasattr(torch.library, "custom_op"):  # one opaque call for torch.compile, as the product
    @torch.library.custom_op("autogcn::csr_sampled_product", mutates_args=())
    def _values_gradient(grad: Tensor, x: Tensor, crow: Tensor, col: Tensor) -> Tensor:
        """d(loss)/d(M_vu) = <grad_v, x_u> for every stored entry (row v, column u) of ``M``:
        the sampled product of ``grad`` and ``xᵀ`` on ``M``'s pattern (no ``E × d`` copies)."""
        return _sampled(grad, x, crow, col)

    @_values_gradient.register_fake
    def _(grad: Tensor, x: Tensor, crow: Tensor, col: Tensor) -> Tensor:
        return grad.new_empty(col.shape[0])

    def _save_sampled(ctx, inputs: tuple, output: Tensor) -> None:
        ctx.inputs = inputs

    def _sampled_backward(ctx, grad_values: Tensor) -> tuple:
        """A second derivative through learned weights (rare): plain gathers and sums."""
        grad, x, crow, col = ctx.inputs
        rows, cols = _entry_rows(crow, col.numel()), col.long()
        weighted = grad_values.unsqueeze(1)
        return (grad.new_zeros(grad.shape).index_add(0, rows, weighted * x[cols]),
                x.new_zeros(x.shape).index_add(0, cols, weighted * grad[rows]), None, None)

    _values_gradient.register_autograd(_sampled_backward, setup_context=_save_sampled)
else:
    _values_gradient = _sampled


def sparse_product(x: Tensor, matrix: CSRParts, transposed: CSRParts) -> Tensor:
    """``M x`` for ``x`` (N, d) and a square ``M`` (its parts and ``Mᵀ``'s, the same values in
    transposed order); differentiable in ``x`` (twice: the backward is again such a product) and
    in ``M``'s values. A gradient reaches ``Mᵀ``'s values only through the backward's own product
    (a second derivative): build both from the same weights."""
    return _csr_product(x, *matrix, *transposed)
