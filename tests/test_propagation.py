"""The shared propagation (cached normalised CSR adjacency) against a dense numpy computation."""

import numpy as np
import pytest
import torch

from data.graph import Graph
from layers.propagation import (
    aggregate,
    edge_softmax,
    normalized_adjacency,
    propagate,
    readout,
    weighted_aggregate,
)


def directed_multigraph() -> Graph:
    """Directed, a repeated edge (counted twice), zero-in-degree and isolated nodes."""
    rng = np.random.default_rng(3)
    src = rng.integers(0, 9, 30)
    dst = rng.integers(0, 7, 30)  # nodes 7 and 8 receive nothing; 9 is isolated
    src, dst = np.append(src, [2, 2]), np.append(dst, [5, 5])
    return Graph(torch.tensor(src), torch.tensor(dst), 10)


def dense_operator(g: Graph) -> np.ndarray:
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
    x = torch.randn(10, 3, 2)  # (N, b, d) inputs, e.g. per-head features
    expected = np.einsum("vu,ubd->vbd", dense_operator(g), x.double().numpy())
    np.testing.assert_allclose(propagate(g, x).numpy(), expected, rtol=1e-5, atol=1e-6)
    close(propagate(g, x.double()).numpy(), expected)
    adj = normalized_adjacency(g)
    assert adj is normalized_adjacency(g)  # cached on the graph: built once per graph
    assert set(adj._matrices) == {torch.float32, torch.float64}  # and once per dtype


@pytest.mark.parametrize("n", [1, 4])
def test_graph_without_edges_propagates_zeros(n):
    g = Graph([], [], n)
    x = torch.randn(n, 3, requires_grad=True)
    out = propagate(g, x)
    assert torch.equal(out, torch.zeros(n, 3))
    out.sum().backward()
    assert torch.equal(x.grad, torch.zeros(n, 3))


def test_out_degree_source_normalisation_matches_dense_operator():
    g = directed_multigraph()
    n = g.num_nodes()
    counts = np.zeros((n, n))
    src, dst = (t.numpy() for t in g.edges())
    np.add.at(counts, (dst, src), 1.0)
    s_in = np.maximum(counts.sum(1), 1.0) ** -0.5
    s_out = np.maximum(counts.sum(0), 1.0) ** -0.5
    x = torch.randn(n, 3, dtype=torch.float64)
    expected = (s_in[:, None] * counts * s_out[None, :]) @ x.numpy()
    close(propagate(g, x, source_degree="out").numpy(), expected)


@pytest.mark.parametrize("how", ["sum", "mean", "max"])
def test_neighbour_aggregation_matches_a_loop_over_nodes(how):
    g = directed_multigraph()
    x = torch.randn(g.num_nodes(), 3, dtype=torch.float64, requires_grad=True)
    out = aggregate(g, x, how)
    src, dst = g.edges()
    for v in range(g.num_nodes()):
        msgs = x[src[dst == v]]
        if len(msgs) == 0:
            expected = torch.zeros(3, dtype=torch.float64)
        else:
            expected = {"sum": msgs.sum(0), "mean": msgs.mean(0), "max": msgs.max(0).values}[how]
        torch.testing.assert_close(out[v], expected)
    assert torch.autograd.gradcheck(lambda t: aggregate(g, t, how), (x,))


def test_weighted_aggregate_and_its_gradients_match_a_loop_over_edges():
    g = directed_multigraph()
    heads = 2
    x = torch.randn(g.num_nodes(), heads, 3, dtype=torch.float64, requires_grad=True)
    w = torch.rand(g.num_edges(), heads, dtype=torch.float64, requires_grad=True)
    out = weighted_aggregate(g, x, w)
    expected = torch.zeros_like(x)
    for e, (u, v) in enumerate(zip(*g.edges(), strict=True)):
        expected[v] += w[e].unsqueeze(-1) * x[u]
    torch.testing.assert_close(out, expected)
    assert torch.autograd.gradcheck(lambda a, b: weighted_aggregate(g, a, b), (x, w))
    flat = weighted_aggregate(g, x[:, 0], w[:, 0])  # (N, d) with one weight per edge
    torch.testing.assert_close(flat, expected[:, 0])


def test_edge_softmax_sums_to_one_over_each_nodes_in_edges():
    g = directed_multigraph()
    scores = torch.randn(g.num_edges(), 2, dtype=torch.float64, requires_grad=True) * 30
    att = edge_softmax(g, scores)
    dst = g.edges()[1]
    for v in range(g.num_nodes()):
        into = dst == v
        if into.any():
            torch.testing.assert_close(att[into], torch.softmax(scores[into], dim=0))
    small = (scores.detach() / 30).requires_grad_()
    assert torch.autograd.gradcheck(lambda s: edge_softmax(g, s), (small,))


@pytest.mark.parametrize("how", ["mean", "sum", "max"])
def test_readout_per_member_graph(how):
    parts = [directed_multigraph(), Graph([0], [0], 1), Graph([], [], 0), Graph([0, 1], [1, 0])]
    g = Graph.batch(parts)
    h = torch.randn(g.num_nodes(), 3, dtype=torch.float64)
    out = readout(g, h, how)
    start = 0
    for i, part in enumerate(parts):
        rows = h[start:start + part.num_nodes()]
        start += part.num_nodes()
        if part.num_nodes() == 0:
            expected = torch.zeros(3, dtype=torch.float64)
        else:
            expected = {"mean": rows.mean(0), "sum": rows.sum(0), "max": rows.max(0).values}[how]
        torch.testing.assert_close(out[i], expected)
