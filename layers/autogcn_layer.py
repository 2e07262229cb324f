r"""AutoGCN: graph convolution with learned low-, middle- and high-pass filters.

Notation: :math:`\tilde A = D^{-1/2} A D^{-1/2}` (no self-loops, see :mod:`layers.propagation`),
:math:`L = I - \tilde A` with eigenvalues :math:`\lambda \in [0, 2]`, :math:`h_1 = \tilde A x`,
:math:`h_2 = \tilde A^2 x`. The three filters of the paper, with :math:`p > 0, a \in [0, 1]`:

=======  ==============================  =====================================
filter   frequency response F(λ)         kernel (applied to x)
=======  ==============================  =====================================
low      :math:`p(1 - a\lambda)`           :math:`p(a\tilde A + (1-a)I)`
high     :math:`p(a\lambda + 1 - 2a)`      :math:`p(-a\tilde A + (1-a)I)`
mid      :math:`p((\lambda-1)^2 - a)`      :math:`p(\tilde A^2 - aI)`
=======  ==============================  =====================================

``mode="over"`` (default; the paper's over-parameterisation): each filter has ``K`` weights
:math:`\gamma`, :math:`p_i = \mathrm{relu}(\gamma_i)` on a fixed grid
:math:`\alpha = \mathrm{linspace}(-10^{-9}, 1 + 10^{-9}, K)`. With :math:`P = \sum_i p_i` and
:math:`c = \sum_i \alpha_i p_i` the filters are

.. math::
    \mathrm{low} = W_l(c\,h_1 + (P - c)\,x), \quad
    \mathrm{high} = W_h(-c\,h_1 + (P - c)\,x), \quad
    \mathrm{mid} = W_m(P\,h_2 - c\,x),

i.e. single filters with :math:`p = P` and :math:`a = c / P` (the paper's theorems).
``mode="single"`` learns ``p`` (relu) and ``a`` (hardtanh to [0, 1]) directly; as in the release
``a`` starts at ``single_a_init = 0`` where hardtanh's gradient is zero, so it never moves — pass
``single_a_init=0.5`` to let it learn. ``mode="fix"`` uses ``a = 0.5`` and ``p = 1``.

The filter outputs are combined by the complementary gate (:math:`\sigma` = sigmoid):

* ``gate="release"`` (default): sequential and in place over the slots (L, M, H):
  ``L *= σ(H + M); M *= σ(L + H); H *= σ(M + L)`` — later steps see gated values;
* ``gate="paper"``: each output is gated by σ of the sum of the other *ungated* outputs;
* ``gate="none"``: plain sum (the real "w/o gate" ablation; the release's flag was a no-op).

In ``single``/``fix`` mode the release stores the high output in the mid slot and vice versa;
this is reproduced because it changes the sequential gate's order.

After the filters: sum (over filters and ``num_filters`` banks) + bias, then the shared
:class:`~layers.post_processing.PostProcess` (graph norm, batch norm, activation, residual,
dropout). Kernels commute with the linear maps, so the layer either propagates the input
(``2·in`` columns of sparse products) or projects first (``4·out`` columns), whichever is cheaper;
both give the same output. The filter stage and the release gate have hand-written backward
passes (:class:`_FilterStage`, :class:`_ReleaseGate3`): they cut the full-size memory passes
that dominate on the CPU. ``layers/reference_autogcn.py`` is a plain re-implementation that the
outputs and gradients are tested against (``tests/test_reproduce.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import dgl
import torch
from torch import nn
from torch.autograd.function import once_differentiable

from layers.post_processing import PostProcess
from layers.propagation import NormalizedAdjacency, propagate, sparse_mm

FILTERS = ("low", "mid", "high")
MODES = ("over", "single", "fix")
GATES = ("release", "paper", "none")


def _others(values: list[torch.Tensor], i: int) -> torch.Tensor:
    """Sum of every value but the ``i``-th (no ``0 +`` start: that would cost a full pass)."""
    rest = [v for j, v in enumerate(values) if j != i]
    total = rest[0]
    for v in rest[1:]:
        total = total + v
    return total


def _gate(slots: list[torch.Tensor], gate: str) -> list[torch.Tensor]:
    """Apply the complementary gate to the filter outputs, given in slot order."""
    n = len(slots)
    if gate == "none" or n == 1:
        return slots
    if gate == "paper":  # every slot sees the others' ungated outputs
        return [s * torch.sigmoid(_others(slots, i)) for i, s in enumerate(slots)]
    outs = list(slots)  # "release": sequential, each step sees the slots gated before it
    for i in range(n):
        outs[i] = outs[i] * torch.sigmoid(_others(outs, i))
    return outs


_sigmoid_backward = torch.ops.aten.sigmoid_backward  # g * y * (1 - y) in one pass


class _FilterStage(torch.autograd.Function):
    r"""Propagate, form every filter's input and project it, with a hand-written backward.

    With :math:`H = [x, \tilde A x, \tilde A^2 x]` (the last only when the mid filter is used)
    in one ``(K, N, in)`` buffer, filter ``j`` (over banks and filters) forms its input
    :math:`B_j = \sum_k c_{jk} H_k` (``coef`` is zero where a filter does not use a hop) and
    projects it, :math:`F_j = B_j W_j`; the result is ``(J, N, out)``. All inputs are formed by
    one ``(J, K) @ (K, N·in)`` product, and in the backward the gradients of ``H`` and of the
    coefficients are two such products; the sparse products accumulate straight into the
    gradient buffer. Autograd on the same graph runs a separate elementwise pass (and an
    allocation) per coefficient and a reduction per coefficient gradient: about twice the
    memory traffic, which is what limits these layers on the CPU.
    """

    @staticmethod
    def forward(ctx, x, coef, weight, matrix, transposed):  # see the class docstring
        hops = coef.shape[1] - 1
        h = x.new_empty(hops + 1, *x.shape)
        h[0].copy_(x)
        for k in range(1, hops + 1):
            sparse_mm(matrix, h[k - 1], out=h[k])
        n_j = weight.shape[0]
        inputs = torch.mm(coef, h.view(hops + 1, -1)).view(n_j, *x.shape)
        out = x.new_empty(n_j, x.shape[0], weight.shape[2])
        for j in range(n_j):  # one product per filter, into its contiguous slab of the output
            torch.mm(inputs[j], weight[j], out=out[j])
        ctx.transposed = transposed
        ctx.save_for_backward(h, coef, weight, inputs)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        h, coef, weight, inputs = ctx.saved_tensors
        need_x, need_coef, need_w = ctx.needs_input_grad[:3]
        grad_w = torch.empty_like(weight) if need_w else None
        grad_in = torch.empty_like(inputs)  # dL/dB_j
        for j in range(weight.shape[0]):
            torch.mm(grad[j], weight[j].t(), out=grad_in[j])
            if grad_w is not None:
                torch.mm(inputs[j].t(), grad[j], out=grad_w[j])
        flat_grad, flat_h = grad_in.view(grad_in.shape[0], -1), h.view(h.shape[0], -1)
        grad_coef = torch.mm(flat_grad, flat_h.t()) if need_coef else None
        grad_x = None
        if need_x:
            grad_h = torch.mm(coef.t(), flat_grad).view(h.shape)
            for k in range(h.shape[0] - 1, 0, -1):  # back through the hops: += Ãᵀ grad_h[k]
                sparse_mm(ctx.transposed, grad_h[k], out=grad_h[k - 1], accumulate=True)
            grad_x = grad_h[0]
        return grad_x, grad_coef, grad_w, None, None


class _ReleaseGate3(torch.autograd.Function):
    r"""The release's sequential gate on three slots, summed, with a hand-written backward.

    For slots (L, M, H): ``L' = L σ(M + H)``, ``M' = M σ(L' + H)``, ``H' = H σ(L' + M')`` and the
    output ``L' + M' + H'``, written as ``u = L' + M'``, ``out = u + H σ(u)`` so that ``H'`` and
    ``M'`` are never formed (``addcmul``). The backward writes the three slot gradients straight
    into one buffer: 12 full-size passes instead of ~30 for autograd on the same graph.
    ``slots`` lists, per bank, the indices of (L, M, H) in ``stack``; banks are summed.
    """

    @staticmethod
    def forward(ctx, stack, slots):
        saved, out = [], None
        for li, mi, hi in slots:
            low, mid, high = stack[li], stack[mi], stack[hi]
            a = torch.add(mid, high).sigmoid_()
            low_g = low * a  # L'
            b = torch.add(low_g, high).sigmoid_()
            u = low_g.addcmul_(mid, b)  # L' + M' (L' is not needed any more)
            c = torch.sigmoid(u)
            y = u.addcmul_(high, c)  # L' + M' + H'
            out = y if out is None else out.add_(y)
            saved += [a, b, c]  # with the slots, all the backward needs (not L')
        ctx.slots = slots
        ctx.save_for_backward(stack, *saved)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        stack, *saved = ctx.saved_tensors
        grad_stack = torch.empty_like(stack)  # every slot of every bank is written below
        for n, (li, mi, hi) in enumerate(ctx.slots):
            a, b, c = saved[3 * n: 3 * n + 3]
            mid, high = stack[mi], stack[hi]
            du = _sigmoid_backward(grad * high, c).add_(grad)  # out = u + H σ(u)
            dt = _sigmoid_backward(du * mid, b)  # u = L' + M b, b = σ(L' + H)
            d_low_g = du + dt
            torch.mul(d_low_g, a, out=grad_stack[li])  # L' = L a
            ds = _sigmoid_backward(d_low_g.mul_(stack[li]), a)  # a = σ(M + H)
            torch.addcmul(ds, du, b, out=grad_stack[mi])
            torch.addcmul(dt.add_(ds), grad, c, out=grad_stack[hi])
        return grad_stack, None


class AutoGCNLayer(nn.Module):
    """One AutoGCN layer (see the module docstring for the maths).

    Args:
        in_dim, out_dim: feature widths.
        activation: e.g. ``torch.relu``; ``None`` on an output layer.
        dropout, graph_norm, batch_norm, residual: the shared post-processing.
        K: size of the over-parameterisation grid.
        num_filters: parallel filter banks, summed.
        mode: ``"over"``, ``"single"`` or ``"fix"``.
        gate: ``"release"``, ``"paper"`` or ``"none"``.
        filters: which of ``"low"``, ``"mid"``, ``"high"`` to use (ablations drop one).
        single_a_init: initial ``a`` in ``single`` mode (0 in the release).
    """

    uses_adjacency = True

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        activation: Callable[[torch.Tensor], torch.Tensor] | None = torch.relu,
        dropout: float = 0.0,
        graph_norm: bool = True,
        batch_norm: bool = True,
        residual: bool = False,
        K: int = 16,
        num_filters: int = 1,
        mode: str = "over",
        gate: str = "release",
        filters: Sequence[str] = FILTERS,
        single_a_init: float = 0.0,
    ) -> None:
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"unknown AutoGCN mode {mode!r}; expected one of {MODES}")
        if gate not in GATES:
            raise ValueError(f"unknown AutoGCN gate {gate!r}; expected one of {GATES}")
        unknown = set(filters) - set(FILTERS)
        if unknown or not filters or len(set(filters)) != len(filters):
            raise ValueError(f"filters must be distinct names from {FILTERS}, got {list(filters)}")
        self.in_dim, self.out_dim = in_dim, out_dim
        self.K, self.num_filters, self.mode, self.gate = K, num_filters, mode, gate
        self.filters = tuple(f for f in FILTERS if f in filters)  # canonical order low, mid, high
        self.single_a_init = single_a_init
        n_f = len(self.filters)

        self.weight = nn.Parameter(torch.empty(num_filters, n_f, in_dim, out_dim))
        if mode == "over":
            self.gamma = nn.Parameter(torch.empty(num_filters, n_f, K))
            # float32 grid as in the release; a constant, so a buffer outside the state dict
            grid = torch.linspace(-1e-9, 1 + 1e-9, K, dtype=torch.float64).float()
            self.register_buffer("alpha", grid, persistent=False)
        elif mode == "single":
            self.p = nn.Parameter(torch.empty(num_filters, n_f))
            self.a = nn.Parameter(torch.empty(num_filters, n_f))
        self.bias = nn.Parameter(torch.empty(out_dim))
        self.post = PostProcess(
            in_dim, out_dim, activation, dropout, graph_norm, batch_norm, residual
        )
        # Gate slot order (indices into self.filters): the release swaps mid and high outside "over"
        order = FILTERS if mode == "over" else ("low", "high", "mid")
        self._slot_order = [self.filters.index(f) for f in order if f in self.filters]
        # "auto" picks the cheaper order; "propagate"/"project" force one (used by tests).
        self.order = "auto"
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # Same distribution as nn.Linear's default weight init: U(-1/sqrt(in), 1/sqrt(in)).
        bound = 1.0 / math.sqrt(self.in_dim)
        nn.init.uniform_(self.weight, -bound, bound)
        if self.mode == "over":
            nn.init.constant_(self.gamma, 1.0 / self.K)
        elif self.mode == "single":
            nn.init.ones_(self.p)
            nn.init.constant_(self.a, self.single_a_init)
        nn.init.zeros_(self.bias)
        self.post.reset_parameters()

    # ----------------------------------------------------------------- filter coefficients
    def coefficients(self) -> torch.Tensor:
        """``(banks, filters, 3)``: each filter's input is ``c0·x + c1·h1 + c2·h2``."""
        if self.mode == "over":
            p = torch.relu(self.gamma)
            total, c = p.sum(-1), p @ self.alpha
        elif self.mode == "single":
            a = nn.functional.hardtanh(self.a, 0.0, 1.0)
            total = torch.relu(self.p)
            c = total * a
        else:
            total = self.weight.new_ones(self.num_filters, len(self.filters))
            c = 0.5 * total
        zero = torch.zeros_like(c)
        rows = {
            "low": (total - c, c, zero),
            "high": (total - c, -c, zero),
            "mid": (-c, zero, total),
        }
        idx = {f: i for i, f in enumerate(self.filters)}
        coef = [torch.stack(rows[f], dim=-1)[:, idx[f]] for f in self.filters]
        return torch.stack(coef, dim=1)

    def frequency_response(self, lam: torch.Tensor) -> dict[str, torch.Tensor]:
        """F(λ) of each filter, ``(banks, len(lam))`` per filter name, from the current weights."""
        coef = self.coefficients().detach()
        mu = 1.0 - lam.to(coef)  # eigenvalue of Ã
        basis = torch.stack([torch.ones_like(mu), mu, mu * mu])  # (3, len)
        resp = coef @ basis  # (banks, filters, len)
        return {f: resp[:, i] for i, f in enumerate(self.filters)}

    # ----------------------------------------------------------------- forward
    def _needs_h2(self) -> bool:
        return "mid" in self.filters

    def filtered_inputs(
        self, g: dgl.DGLGraph, x: torch.Tensor, adj: NormalizedAdjacency | None = None
    ) -> torch.Tensor:
        """Kernel outputs before the linear maps: ``(banks, filters, N, in_dim)``."""
        adj = NormalizedAdjacency(g) if adj is None else adj
        h1 = propagate(g, x, adj)
        terms = [x, h1] + ([propagate(g, h1, adj)] if self._needs_h2() else [])
        coef = self.coefficients()[..., : len(terms)]
        return torch.einsum("bfk,knd->bfnd", coef, torch.stack(terms))

    def _use_propagate_first(self, x: torch.Tensor) -> bool:
        if x.is_sparse:  # sparse features (PubMed, Squirrel): project first, never densify
            return False
        if self.order != "auto":
            return self.order == "propagate"
        # Columns of sparse products: propagating x costs 2·in (1·in without the mid filter);
        # projecting first costs one product on all outputs plus one more for the mid filter.
        n_mid = 1 if self._needs_h2() else 0
        cost_propagate = (1 + n_mid) * self.in_dim
        cost_project = self.num_filters * (len(self.filters) + n_mid) * self.out_dim
        return cost_propagate <= cost_project

    def _filter_outputs(
        self, g: dgl.DGLGraph, x: torch.Tensor, adj: NormalizedAdjacency
    ) -> torch.Tensor:
        """Filter outputs ``(banks·filters, N, out_dim)``, bank-major, in ``self.filters`` order."""
        coef = self.coefficients().reshape(-1, 3)  # (banks·filters, 3): tiny
        if self._use_propagate_first(x):
            # Propagate x (in_dim columns per hop), form each filter's input Σ_k c_jk Ã^k x and
            # project it by its own weight: see _FilterStage.
            hops = 2 if self._needs_h2() else 1
            weight = self.weight.reshape(-1, self.in_dim, self.out_dim)
            matrices = adj.matrices(x.dtype)
            return _FilterStage.apply(x, coef[:, : hops + 1].contiguous(), weight, *matrices)
        # Project first: y_j = x W_j for all filters in one product, then propagate out_dim
        # columns; the kernels commute with the linear maps, so the result is the same.
        w = self.weight.permute(2, 0, 1, 3).reshape(self.in_dim, -1)  # (in, banks·F·out)
        y = torch.sparse.mm(x, w) if x.is_sparse else x @ w
        py = propagate(g, y, adj)
        n_j = coef.shape[0]
        # unbind (one copy in backward) rather than column slices (a zero-filled copy each)
        ys = y.view(-1, n_j, self.out_dim).unbind(1)
        pys = py.view(-1, n_j, self.out_dim).unbind(1)
        outs = []
        for j, name in enumerate(self.filters * self.num_filters):
            if name == "mid":
                outs.append(torch.addcmul(ys[j] * coef[j, 0], propagate(g, pys[j], adj),
                                          coef[j, 2]))
            else:
                outs.append(torch.addcmul(ys[j] * coef[j, 0], pys[j], coef[j, 1]))
        return torch.stack(outs)

    def _gate_and_sum(self, stack: torch.Tensor) -> torch.Tensor:
        """Gate each bank's filter outputs (``stack`` from :meth:`_filter_outputs`) and sum."""
        n_f = len(self.filters)
        slots = [[b * n_f + i for i in self._slot_order] for b in range(self.num_filters)]
        if self.gate == "none" or n_f == 1:
            return stack.sum(0)
        if self.gate == "release" and n_f == 3:
            return _ReleaseGate3.apply(stack, slots)
        parts = stack.unbind(0)
        out = None
        for bank in slots:
            for y in _gate([parts[i] for i in bank], self.gate):
                out = y if out is None else out + y
        return out

    def forward(
        self,
        g: dgl.DGLGraph,
        feat: torch.Tensor,
        snorm_n: torch.Tensor | None = None,
        adj: NormalizedAdjacency | None = None,
    ) -> torch.Tensor:
        """``feat`` (N, in_dim) → (N, out_dim). ``adj``: cached normalised adjacency of ``g``."""
        adj = NormalizedAdjacency(g) if adj is None else adj
        out = self._gate_and_sum(self._filter_outputs(g, feat, adj)) + self.bias
        return self.post(feat, out, snorm_n)

    def extra_repr(self) -> str:
        return (
            f"{self.in_dim}, {self.out_dim}, K={self.K}, num_filters={self.num_filters}, "
            f"mode={self.mode}, gate={self.gate}, filters={self.filters}"
        )
