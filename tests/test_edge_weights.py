"""Learned edge weights: the gradient that reaches ``edge_weight`` through each module's
normalisation (degrees are sums of the weights) is exact. Checked with ``gradcheck`` (float64,
finite differences) and against the same filter run on a dense operator built from the weights
by the definitions in the modules' docstrings."""

from __future__ import annotations

import pytest
import torch

from autogcn import AutoGCNConv, BernNetProp, ChebNetIIProp, GPRGNNProp, Graph, JacobiConvProp
from autogcn.propagation import propagate

N = 6
#: A directed multigraph: a repeated edge (0 → 1 twice), a self-loop (2 → 2), a reverse pair
#: (1 → 2, 2 → 1), one-way edges, a node that only sends (5) and one that only receives (4).
EDGES = [(0, 1), (0, 1), (1, 2), (2, 1), (2, 2), (2, 3), (3, 0), (5, 4), (3, 4), (1, 3)]


def edge_index() -> torch.Tensor:
    return torch.tensor(EDGES).T


def weights(seed: int = 0) -> torch.Tensor:
    """Distinct positive weights (no ties: JacobiConv takes a maximum)."""
    gen = torch.Generator().manual_seed(seed)
    w = torch.randperm(len(EDGES), generator=gen).double() / len(EDGES) + 0.2
    return w.requires_grad_()


def dense_adjacency(w: torch.Tensor, drop_loops: bool = False) -> torch.Tensor:
    """``A[v, u]`` = the summed weights of the edges ``u → v``."""
    a = torch.zeros(N, N, dtype=w.dtype)
    for (u, v), wi in zip(EDGES, w, strict=True):
        if not (drop_loops and u == v):
            a = a + wi * torch.nn.functional.one_hot(torch.tensor(v * N + u), N * N) \
                .view(N, N).to(w.dtype)
    return a


def inv_sqrt(d: torch.Tensor, zero_to: float) -> torch.Tensor:
    safe = torch.where(d > 0, d, torch.ones_like(d))
    return torch.where(d > 0, safe.rsqrt(), torch.full_like(d, zero_to))


def dense_operator(name: str, w: torch.Tensor, add_self_loops: bool = False,
                   normalize: bool = True) -> torch.Tensor:
    if name == "AutoGCNConv":
        a = dense_adjacency(w) + (torch.eye(N, dtype=w.dtype) if add_self_loops else 0)
        if not normalize:
            return a
        s = inv_sqrt(a.sum(1), 1.0)  # in-degree on both sides, 0 -> 1
    elif name == "GPRGNNProp":
        a = dense_adjacency(w, drop_loops=True) + torch.eye(N, dtype=w.dtype)
        s = inv_sqrt(a.sum(1), 0.0)
    elif name in ("BernNetProp", "ChebNetIIProp"):
        a = dense_adjacency(w, drop_loops=True)
        s = inv_sqrt(a.sum(0), 0.0)  # out-degree
    else:  # JacobiConv: each linked pair carries its largest weight, both ways
        a = torch.zeros(N, N, dtype=w.dtype)
        for (u, v), wi in zip(EDGES, w, strict=True):
            for r, c in ((v, u), (u, v)):
                cell = torch.nn.functional.one_hot(torch.tensor(r * N + c), N * N) \
                    .view(N, N).bool()
                a = torch.where(cell, torch.maximum(a, wi), a)
        s = inv_sqrt(a.sum(1), 1.0)
    return s[:, None] * a * s[None, :]


MODULES = {
    "AutoGCNConv": lambda: AutoGCNConv(3, 2, gate="parallel"),
    "GPRGNNProp": lambda: GPRGNNProp(K=3, alpha=0.3),
    "BernNetProp": lambda: BernNetProp(K=3),
    "ChebNetIIProp": lambda: ChebNetIIProp(K=3),
    "JacobiConvProp": lambda: JacobiConvProp(3, K=3, a=1.2, b=0.4, alpha=0.7),
}


def build(name: str, **flags) -> torch.nn.Module:
    torch.manual_seed(1)
    module = MODULES[name]()
    for key, value in flags.items():
        setattr(module, key, value)
    with torch.no_grad():  # random coefficients: the successors start all-pass
        for p in module.parameters():
            p.uniform_(0.1, 0.9)
    return module.double()


def on_dense(module: torch.nn.Module, name: str, x: torch.Tensor, op: torch.Tensor):
    """The module's filter with the sparse operator replaced by the dense one."""
    def apply(h: torch.Tensor) -> torch.Tensor:
        return op @ h

    if name == "AutoGCNConv":
        return module.convolve(apply, x)
    return module.polynomial(apply, x)


CASES = [("AutoGCNConv", {}), ("AutoGCNConv", {"add_self_loops": True}),
         ("AutoGCNConv", {"normalize": False}), ("AutoGCNConv", {"cached": True}),
         ("GPRGNNProp", {}), ("BernNetProp", {}), ("ChebNetIIProp", {}), ("JacobiConvProp", {})]


@pytest.mark.parametrize("name, flags", CASES, ids=[f"{n}{f}" for n, f in CASES])
def test_edge_weight_gradient_is_exact(name, flags):
    module = build(name, **flags)
    x = torch.randn(N, 3, dtype=torch.float64)
    ei, w = edge_index(), weights()
    assert torch.autograd.gradcheck(lambda weight: module(x, ei, weight), (w,))
    out = module(x, ei, w)
    probe = torch.randn_like(out)  # a random direction: every output entry counts
    (grad,) = torch.autograd.grad((out * probe).sum(), w)
    dense = on_dense(module, name, x, dense_operator(name, w, flags.get("add_self_loops", False),
                                                     flags.get("normalize", True)))
    torch.testing.assert_close(out, dense)
    (expected,) = torch.autograd.grad((dense * probe).sum(), w)
    torch.testing.assert_close(grad, expected)


def test_gradients_reach_x_and_the_weights_together_in_float32():
    conv = AutoGCNConv(3, 2)
    x = torch.randn(N, 3, requires_grad=True)
    w = weights().float().detach().requires_grad_()
    conv(x, edge_index(), w).square().sum().backward()
    assert x.grad is not None and w.grad is not None
    assert bool(torch.isfinite(w.grad).all()) and bool(w.grad.abs().sum() > 0)


def test_propagate_with_learned_weights_matches_the_dense_operator():
    g = Graph.from_edge_index(edge_index(), N)
    x = torch.randn(N, 4, dtype=torch.float64)
    w = weights()
    assert torch.autograd.gradcheck(lambda weight: propagate(g, x, "out", weight), (w,))


@pytest.mark.skipif(not hasattr(torch.library, "custom_op"),
                    reason="torch < 2.4 (the DGL profile): no double backward through a CSR "
                           "product; docs/layer.md says so")
def test_second_derivative_through_the_weights():
    """The backward's product carries the transposed values, built from the same weights."""
    conv = build("AutoGCNConv")
    x = torch.randn(N, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradgradcheck(lambda weight, h: conv(h, edge_index(), weight),
                                        (weights(), x))


def test_constant_weights_keep_the_gradient_free_operator():
    """Weights without a gradient (or under no_grad) build no autograd graph: the cached,
    constant path of before."""
    conv = AutoGCNConv(3, 2, cached=True)
    x, ei = torch.randn(N, 3), edge_index()
    w = weights().float().detach()
    conv(x, ei, w)
    op = conv._cache[1]
    conv(x, ei, w)
    assert conv._cache[1] is op
    assert all(not t.requires_grad for part in op.parts(torch.float32) for t in part)
