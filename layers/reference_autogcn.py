r"""A straightforward re-implementation of the AutoGCN layer, for tests and benchmarks only.

:class:`~layers.autogcn_layer.AutoGCNLayer` is written for speed (cached degree normalisation,
the cheaper of propagate-first / project-first, all filter products in one batched product,
hand-written backward passes for the filter stage and the release gate). This module spells the
same maths out the way the authors' release did, one step per line, so that the optimised layer
can be checked against it (``tests/test_reproduce.py``) and timed against it
(``scripts/benchmark.py``):

* the degree normalisation :math:`s = \max(\deg^{in}, 1)^{-1/2}` is recomputed in every
  propagation, which is DGL message passing (``update_all`` with ``copy_u``/``sum``);
* each filter's input is formed explicitly from the closed-form coefficients
  (:math:`P = \sum_i p_i`, :math:`c = \sum_i \alpha_i p_i` in ``"over"`` mode) —
  low :math:`(P-c)x + c\,h_1`, high :math:`(P-c)x - c\,h_1`, mid :math:`P h_2 - c\,x` — and then
  mapped by its own bias-free ``nn.Linear``;
* the complementary gate is written with plain tensor operations;
* the post-processing is the shared :class:`~layers.post_processing.PostProcess`.

:meth:`ReferenceAutoGCNLayer.from_layer` builds one that shares an optimised layer's weights
(``weight[b, f]`` transposed into the Linear weights, ``gamma``/``p``/``a``, bias and batch-norm
state), so both give the same output up to floating-point rounding. Dense inputs only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import dgl
import dgl.function as fn
import torch
from torch import nn

from layers.autogcn_layer import FILTERS, AutoGCNLayer
from layers.post_processing import PostProcess


def _propagate(g: dgl.DGLGraph, h: torch.Tensor) -> torch.Tensor:
    """``s_v Σ_{u→v} s_u h_u`` with ``s`` recomputed from the in-degrees on every call."""
    with g.local_scope():
        s = g.in_degrees().float().clamp(min=1).pow(-0.5).unsqueeze(1).to(h)
        g.ndata["h"] = h * s
        g.update_all(fn.copy_u("h", "m"), fn.sum("m", "h"))
        return g.ndata["h"] * s


class ReferenceAutoGCNLayer(nn.Module):
    """The AutoGCN layer written plainly; same constructor arguments as ``AutoGCNLayer``."""

    uses_adjacency = False  # the layer stack must not pass a cached normalisation

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
        self.in_dim, self.out_dim = in_dim, out_dim
        self.K, self.num_filters, self.mode, self.gate = K, num_filters, mode, gate
        self.filters = tuple(f for f in FILTERS if f in filters)
        n_f = len(self.filters)
        self.linears = nn.ModuleList(
            nn.ModuleDict({f: nn.Linear(in_dim, out_dim, bias=False) for f in self.filters})
            for _ in range(num_filters)
        )
        if mode == "over":
            self.gamma = nn.Parameter(torch.full((num_filters, n_f, K), 1.0 / K))
            grid = torch.linspace(-1e-9, 1 + 1e-9, K, dtype=torch.float64).float()
            self.register_buffer("alpha", grid, persistent=False)
        elif mode == "single":
            self.p = nn.Parameter(torch.ones(num_filters, n_f))
            self.a = nn.Parameter(torch.full((num_filters, n_f), float(single_a_init)))
        self.bias = nn.Parameter(torch.zeros(out_dim))
        self.post = PostProcess(in_dim, out_dim, activation, dropout, graph_norm, batch_norm,
                                residual)

    @classmethod
    def from_layer(cls, layer: AutoGCNLayer) -> ReferenceAutoGCNLayer:
        """A reference layer with ``layer``'s hyper-parameters and a copy of its weights."""
        post = layer.post
        dropout = post.dropout.p if isinstance(post.dropout, nn.Dropout) else 0.0
        ref = cls(layer.in_dim, layer.out_dim, activation=post.activation, dropout=dropout,
                  graph_norm=post.graph_norm, batch_norm=post.batch_norm,
                  residual=post.residual, K=layer.K, num_filters=layer.num_filters,
                  mode=layer.mode, gate=layer.gate, filters=layer.filters,
                  single_a_init=layer.single_a_init)
        ref = ref.to(device=layer.weight.device, dtype=layer.weight.dtype)  # before copying
        ref.post.load_state_dict(post.state_dict())
        with torch.no_grad():
            for b in range(layer.num_filters):
                for i, f in enumerate(layer.filters):
                    ref.linears[b][f].weight.copy_(layer.weight[b, i].t())
            if layer.mode == "over":
                ref.gamma.copy_(layer.gamma)
            elif layer.mode == "single":
                ref.p.copy_(layer.p)
                ref.a.copy_(layer.a)
            ref.bias.copy_(layer.bias)
        return ref

    def _p_and_c(self, b: int, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Filter ``i`` of bank ``b``: ``P`` (total weight) and ``c = P·a``."""
        if self.mode == "over":
            p = torch.relu(self.gamma[b, i])
            return p.sum(), (p * self.alpha).sum()
        if self.mode == "single":
            total = torch.relu(self.p[b, i])
            # hardtanh, not clamp: its gradient is zero *at* the bounds (a starts at 0)
            return total, total * nn.functional.hardtanh(self.a[b, i], 0.0, 1.0)
        one = torch.ones((), dtype=self.bias.dtype, device=self.bias.device)
        return one, 0.5 * one

    def forward(self, g: dgl.DGLGraph, feat: torch.Tensor,
                snorm_n: torch.Tensor | None = None) -> torch.Tensor:
        x = feat.to_dense() if feat.is_sparse else feat
        h1 = _propagate(g, x)
        h2 = _propagate(g, h1) if "mid" in self.filters else None
        out = self.bias
        for b in range(self.num_filters):
            outputs = {}
            for i, f in enumerate(self.filters):
                total, c = self._p_and_c(b, i)
                if f == "low":
                    inp = (total - c) * x + c * h1
                elif f == "high":
                    inp = (total - c) * x - c * h1
                else:
                    inp = total * h2 - c * x
                outputs[f] = self.linears[b][f](inp)
            # the release keeps (low, mid, high) slots in "over" mode and swaps mid and high
            # in "single"/"fix" mode; the order matters to the sequential gate
            order = FILTERS if self.mode == "over" else ("low", "high", "mid")
            slots = [outputs[f] for f in order if f in outputs]
            for y in self._gate(slots):
                out = out + y
        return self.post(x, out, snorm_n)

    def _gate(self, slots: list[torch.Tensor]) -> list[torch.Tensor]:
        n = len(slots)
        if self.gate == "none" or n == 1:
            return slots
        if n == 2:
            a, b = slots
            if self.gate == "paper":
                return [a * torch.sigmoid(b), b * torch.sigmoid(a)]
            a = a * torch.sigmoid(b)
            return [a, b * torch.sigmoid(a)]
        low, mid, high = slots
        if self.gate == "paper":
            return [low * torch.sigmoid(mid + high), mid * torch.sigmoid(low + high),
                    high * torch.sigmoid(low + mid)]
        low = low * torch.sigmoid(high + mid)
        mid = mid * torch.sigmoid(low + high)
        high = high * torch.sigmoid(mid + low)
        return [low, mid, high]


def to_reference(net: nn.Module) -> nn.Module:
    """Replace, in place, every ``AutoGCNLayer`` inside ``net`` by its reference twin."""
    for name, child in list(net.named_children()):
        if isinstance(child, AutoGCNLayer):
            setattr(net, name, ReferenceAutoGCNLayer.from_layer(child))
        else:
            to_reference(child)
    return net
