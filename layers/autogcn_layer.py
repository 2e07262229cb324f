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
both give the same output.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import dgl
import torch
from torch import nn

from layers.post_processing import PostProcess
from layers.propagation import propagate, sym_norm

FILTERS = ("low", "mid", "high")
MODES = ("over", "single", "fix")
GATES = ("release", "paper", "none")


def _gate(slots: torch.Tensor, gate: str) -> torch.Tensor:
    """Gate the filter outputs ``slots`` of shape ``(banks, S, N, d)``; returns the same shape."""
    n_slots = slots.shape[1]
    if gate == "none" or n_slots == 1:
        return slots
    if gate == "paper":
        total = slots.sum(dim=1, keepdim=True)
        return slots * torch.sigmoid(total - slots)
    outs = list(slots.unbind(dim=1))  # "release": sequential, each step sees earlier gated slots
    for i in range(n_slots):
        others = sum(outs[j] for j in range(n_slots) if j != i)
        outs[i] = outs[i] * torch.sigmoid(others)
    return torch.stack(outs, dim=1)


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

    uses_sym_norm = True

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
            total = torch.ones(self.num_filters, len(self.filters), device=self.weight.device)
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
        self, g: dgl.DGLGraph, x: torch.Tensor, norm: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Kernel outputs before the linear maps: ``(banks, filters, N, in_dim)``."""
        norm = sym_norm(g) if norm is None else norm
        h1 = propagate(g, x, norm)
        terms = [x, h1] + ([propagate(g, h1, norm)] if self._needs_h2() else [])
        coef = self.coefficients()[..., : len(terms)]
        return torch.einsum("bfk,knd->bfnd", coef, torch.stack(terms))

    def _filter_outputs(self, g: dgl.DGLGraph, x: torch.Tensor, norm: torch.Tensor) -> torch.Tensor:
        """Filter outputs ``(banks, filters, N, out_dim)``, in the cheaper of the two orders."""
        banks, n_f = self.num_filters, len(self.filters)
        n_mid = banks if self._needs_h2() else 0
        if self.order == "auto":
            cost_propagate = (2 if n_mid else 1) * self.in_dim
            propagate_first = cost_propagate <= (banks * n_f + n_mid) * self.out_dim
        else:
            propagate_first = self.order == "propagate"
        if propagate_first:
            inputs = self.filtered_inputs(g, x, norm).flatten(0, 1)  # (B, N, in)
            out = torch.bmm(inputs, self.weight.flatten(0, 1))
            return out.view(banks, n_f, -1, self.out_dim)
        # Project first: y_f = x W_f, then the kernels act on out_dim columns.
        coef = self.coefficients()
        y = torch.einsum("ni,bfio->nbfo", x, self.weight)  # (N, banks, filters, out)
        py = propagate(g, y.flatten(1, 2), norm).view_as(y)
        y, py = y.permute(1, 2, 0, 3), py.permute(1, 2, 0, 3)  # (banks, filters, N, out)
        out = coef[..., 0, None, None] * y + coef[..., 1, None, None] * py
        if n_mid:
            m = self.filters.index("mid")
            ppy = propagate(g, py[:, m].transpose(0, 1), norm).transpose(0, 1)  # (banks, N, out)
            out[:, m] = out[:, m] + coef[:, m, 2, None, None] * ppy
        return out

    def forward(
        self,
        g: dgl.DGLGraph,
        feat: torch.Tensor,
        snorm_n: torch.Tensor | None = None,
        norm: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``feat`` (N, in_dim) → (N, out_dim). ``norm``: cached :func:`sym_norm` of ``g``."""
        norm = sym_norm(g) if norm is None else norm
        out = self._filter_outputs(g, feat, norm)[:, self._slot_order]
        out = _gate(out, self.gate).sum(dim=(0, 1)) + self.bias
        return self.post(feat, out, snorm_n)

    def extra_repr(self) -> str:
        return (
            f"{self.in_dim}, {self.out_dim}, K={self.K}, num_filters={self.num_filters}, "
            f"mode={self.mode}, gate={self.gate}, filters={self.filters}"
        )
