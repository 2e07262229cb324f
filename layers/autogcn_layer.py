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


def _gate(slots: list[torch.Tensor], gate: str) -> list[torch.Tensor]:
    """Apply the complementary gate to the filter outputs, given in slot order."""
    n = len(slots)
    if gate == "none" or n == 1:
        return slots
    if gate == "paper":  # every slot sees the others' ungated outputs
        return [s * torch.sigmoid(sum(slots[j] for j in range(n) if j != i))
                for i, s in enumerate(slots)]
    outs = list(slots)  # "release": sequential, each step sees the slots gated before it
    for i in range(n):
        outs[i] = outs[i] * torch.sigmoid(sum(outs[j] for j in range(n) if j != i))
    return outs


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
        self, g: dgl.DGLGraph, x: torch.Tensor, norm: torch.Tensor
    ) -> list[list[torch.Tensor]]:
        """Per bank, the filter outputs ``(N, out_dim)`` in ``self.filters`` order."""
        coef = self.coefficients()  # (banks, filters, 3): tiny
        n_f, out_dim = len(self.filters), self.out_dim
        if self._use_propagate_first(x):
            # Fold the scalar coefficients into the weights: filter f's output is
            # x(c0 W_f) + h1(c1 W_f) + h2(c2 W_f), so no (N, in)-sized combination is formed.
            h1 = propagate(g, x, norm)
            h2 = propagate(g, h1, norm) if self._needs_h2() else None
            outs = []
            for b in range(self.num_filters):
                scaled = coef[b, :, :, None, None] * self.weight[b, :, None]  # (F, 3, in, out)
                bank = []
                for f, name in enumerate(self.filters):
                    other, k = (h2, 2) if name == "mid" else (h1, 1)
                    bank.append(torch.addmm(x @ scaled[f, 0], other, scaled[f, k]))
                outs.append(bank)
            return outs
        # Project first: y_f = x W_f for all filters in one product, then propagate out_dim
        # columns; the kernels commute with the linear maps, so the result is the same.
        w = self.weight.permute(2, 0, 1, 3).reshape(self.in_dim, -1)  # (in, banks·F·out)
        y = torch.sparse.mm(x, w) if x.is_sparse else x @ w
        py = propagate(g, y, norm)
        outs = []
        for b in range(self.num_filters):
            bank = []
            for f, name in enumerate(self.filters):
                cols = slice((b * n_f + f) * out_dim, (b * n_f + f + 1) * out_dim)
                if name == "mid":
                    ppy = propagate(g, py[:, cols], norm)
                    bank.append(coef[b, f, 0] * y[:, cols] + coef[b, f, 2] * ppy)
                else:
                    bank.append(coef[b, f, 0] * y[:, cols] + coef[b, f, 1] * py[:, cols])
            outs.append(bank)
        return outs

    def forward(
        self,
        g: dgl.DGLGraph,
        feat: torch.Tensor,
        snorm_n: torch.Tensor | None = None,
        norm: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``feat`` (N, in_dim) → (N, out_dim). ``norm``: cached :func:`sym_norm` of ``g``."""
        norm = sym_norm(g) if norm is None else norm
        out = self.bias
        for bank in self._filter_outputs(g, feat, norm):
            slots = _gate([bank[i] for i in self._slot_order], self.gate)
            for slot in slots:
                out = out + slot
        return self.post(feat, out, snorm_n)

    def extra_repr(self) -> str:
        return (
            f"{self.in_dim}, {self.out_dim}, K={self.K}, num_filters={self.num_filters}, "
            f"mode={self.mode}, gate={self.gate}, filters={self.filters}"
        )
