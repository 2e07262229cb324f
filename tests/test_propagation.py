"""The shared propagation (cached normalised CSR adjacency) against a dense numpy computation."""

import dgl
import numpy as np
import pytest
import torch

from layers.propagation import NormalizedAdjacency, propagate


def directed_multigraph() -> dgl.DGLGraph:
    """Directed, a repeated edge (counted twice), zero-in-degree and isolated nodes."""
    rng = np.random.default_rng(3)
    src = rng.integers(0, 9, 30)
    dst = rng.integers(0, 7, 30)  # nodes 7 and 8 receive nothing; 9 is isolated
    src, dst = np.append(src, [2, 2]), np.append(dst, [5, 5])
    return dgl.graph((torch.tensor(src), torch.tensor(dst)), num_nodes=10)


def dense_operator(g: dgl.DGLGraph) -> np.ndarray:
    """``P[v, u] = (#edges u→v) / sqrt(max(indeg v, 1) · max(indeg u, 1))`` in float64.

    The layers compute the degree factors in float32, as the release did: hence ``close``.
    """
    n = g.num_nodes()
    counts = np.zeros((n, n))
    src, dst = (t.numpy() for t in g.edges())
    np.add.at(counts, (dst, src), 1.0)
    s = np.maximum(counts.sum(1), 1.0) ** -0.5
    return s[:, None] * counts * s[None, :]


def close(actual, expected) -> None:
    np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-7)


def test_propagate_matches_dense_operator_and_its_transpose():
    g = directed_multigraph()
    op = dense_operator(g)
    x = torch.randn(10, 4, dtype=torch.float64, requires_grad=True)
    out = propagate(g, x)
    close(out.detach().numpy(), op @ x.detach().numpy())
    grad_out = torch.randn(10, 4, dtype=torch.float64)
    out.backward(grad_out)  # the gradient goes through the stored transpose: Pᵀ g
    close(x.grad.numpy(), op.T @ grad_out.numpy())
    assert torch.autograd.gradcheck(lambda t: propagate(g, t), (x.detach().requires_grad_(),))


def test_cached_adjacency_serves_every_dtype_and_shape():
    g = directed_multigraph()
    adj = NormalizedAdjacency(g)
    x = torch.randn(10, 3, 2)  # (N, b, d) inputs, e.g. per-head features
    expected = np.einsum("vu,ubd->vbd", dense_operator(g), x.double().numpy())
    np.testing.assert_allclose(propagate(g, x, adj).numpy(), expected, rtol=1e-5, atol=1e-6)
    close(propagate(g, x.double(), adj).numpy(), expected)
    assert set(adj._matrices) == {torch.float32, torch.float64}  # built once per dtype


@pytest.mark.parametrize("n", [1, 4])
def test_graph_without_edges_propagates_zeros(n):
    g = dgl.graph(([], []), num_nodes=n)
    x = torch.randn(n, 3, requires_grad=True)
    out = propagate(g, x)
    assert torch.equal(out, torch.zeros(n, 3))
    out.sum().backward()
    assert torch.equal(x.grad, torch.zeros(n, 3))
