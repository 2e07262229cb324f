r"""Adaptive propagation of AP-GCN (Spinelli, Scardapane, Uncini, 2020), as in the release.

Input :math:`z^0 = x` (the output of the net's linear layers). Propagation
:math:`P(x)_v = (\deg^{in} v)^{-1/2} \sum_{u \to v} (\deg^{out} u)^{-1/2} x_u` (degrees clamped
to ≥ 1; the release's ``APLayer`` took the source's out-degree, unlike its GCN; equal to its DGL
code, ``tests/test_dgl_parity.py``). At step :math:`k = 1..T` (:math:`T` = ``n_iter``) a node
that is still running computes

.. math::
    z^k = P z^{k-1} \ (\text{mode "adaptive", the paper}) \quad\text{or}\quad
    z^k = P x \ (\text{mode "one\_hop"}), \qquad
    h^k_v = \sigma(w^\top z^k_v + b)

with the halting unit ``Linear(h, 1)`` whose bias starts at
:math:`b = \mathrm{logit}(1/(T+1)) = -\log T`. A node continues while
:math:`\sum_{j \le k} h^j_v < 0.99`; ``steps`` :math:`K_v` counts 1 + its continuing steps and
:math:`S^k_v` is the running sum of its accepted :math:`h`. With
:math:`p^k_v = S^k_v` while it continues and before step :math:`T`, else :math:`1 - S^k_v`
(the remainder), the output is

.. math::
    \mathrm{out}_v = \frac{1}{K_v} \sum_k m^k_v \big(p^k_v z^k_v + (1 - p^k_v) z^{k-1}_v\big)

where :math:`m^k_v` is the node's "still running" mask passed through dropout (as in the
release), and :math:`z^0` is the dropped-out input. The net adds
``prop_penalty · mean(K + R)`` (:math:`R = 1 - S`, the remainders) to the loss.

Mode ``"one_hop"`` (default, alias ``"release"``: the published numbers came from it) is the
authors' ``APLayer``, which propagates the layer *input* at every step: every :math:`z^k = Px`
(computed once here), so the adaptive depth never exceeds one hop. Mode ``"adaptive"``
propagates the previous step, as the AP-GCN paper does. Dropout ``p = 0.5`` is the release's.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from autogcn.graph import Graph
from autogcn.propagation import propagate

AP_MODES = ("one_hop", "adaptive")
# Another accepted spelling of a mode, by provenance ("release": the authors' code), so that
# configs and checkpoints that use it still run.
AP_MODE_ALIASES = {"release": "one_hop"}
HALT_THRESHOLD = 0.99  # a node stops once its halting probabilities sum to 1 - 0.01


def ap_propagate(g: Graph, x: torch.Tensor) -> torch.Tensor:
    """:math:`D_{in}^{-1/2} A^\\top D_{out}^{-1/2} x` (the release's ``APLayer.propagate``)."""
    return propagate(g, x, source_degree="out")


class AdaptivePropagation(nn.Module):
    """The AP-GCN propagation with a learned halting unit (see the module docstring).

    Args:
        n_iter: maximum number of propagation steps ``T``.
        h_size: feature width (input of the halting unit).
        mode: ``"one_hop"`` (the release) or ``"adaptive"`` (the paper); see
            :data:`AP_MODE_ALIASES` for the other accepted spelling.
        dropout: dropout of the input and of the update mask (the release's 0.5).
    """

    def __init__(self, n_iter: int, h_size: int, mode: str = "one_hop",
                 dropout: float = 0.5) -> None:
        super().__init__()
        mode = AP_MODE_ALIASES.get(mode, mode)
        if mode not in AP_MODES:
            raise ValueError(f"unknown APGCN mode {mode!r}; expected one of {AP_MODES}")
        if n_iter < 1:
            raise ValueError(f"n_iter must be at least 1, got {n_iter}")
        self.n_iter, self.mode = n_iter, mode
        self.halt = nn.Linear(h_size, 1)
        self.dropout = nn.Dropout(dropout)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.halt.reset_parameters()
        # logit(1 / (T + 1)): the first halting probabilities are about 1/(T+1)
        nn.init.constant_(self.halt.bias, -math.log(self.n_iter))

    def forward(
        self, g: Graph, feat: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``feat`` (N, d) → ``(out (N, d), steps (N,), remainders (N,))``."""
        n = feat.shape[0]
        steps = feat.new_ones(n)
        sum_h = feat.new_zeros(n)
        running = torch.ones(n, dtype=torch.bool, device=feat.device)
        out = torch.zeros_like(feat)
        prop = self.dropout(feat)
        one_hop = ap_propagate(g, feat) if self.mode == "one_hop" else None
        for _ in range(self.n_iter):
            old_prop = prop
            running_f = running.to(feat.dtype)
            prop = one_hop if one_hop is not None else ap_propagate(g, prop)
            h = torch.sigmoid(self.halt(prop))[:, 0]  # [:, 0], not squeeze(): N may be 1
            accept = ((sum_h + h) < HALT_THRESHOLD) & running
            accept_f = accept.to(feat.dtype)
            steps = steps + accept_f
            sum_h = sum_h + accept_f * h
            p = torch.where(accept & (steps < self.n_iter), sum_h, 1 - sum_h)[:, None]
            update = self.dropout(running_f)[:, None]
            out = out + (prop * p + old_prop * (1 - p)) * update
            running = running & accept
            if not bool(running.any()):
                break
        return out / steps[:, None], steps, 1 - sum_h

    def extra_repr(self) -> str:
        return f"n_iter={self.n_iter}, mode={self.mode}"
