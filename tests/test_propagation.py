"""The shared propagation (cached normalised CSR adjacency) against a dense numpy computation."""

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from autogcn.graph import Graph
from autogcn.propagation import Adjacency, degree_scale, normalized_adjacency, propagate
from autogcn.sparse import CSR_BETA_NOTICE, CSR_INVARIANTS_NOTICE, csr_matrix, sparse_mm
from layers.gcn_layer import GraphConv
from layers.propagation import aggregate, edge_softmax, readout, weighted_aggregate


def directed_multigraph() -> Graph:
    """Directed, a repeated edge (counted twice), zero-in-degree and isolated nodes."""
    rng = np.random.default_rng(3)
    src = rng.integers(0, 9, 30)
    dst = rng.integers(0, 7, 30)  # nodes 7 and 8 receive nothing; 9 is isolated
    src, dst = np.append(src, [2, 2]), np.append(dst, [5, 5])
    return Graph(torch.tensor(src), torch.tensor(dst), 10)


def dense_operator(g: Graph, weight: np.ndarray | None = None,
                   source_degree: str = "in") -> np.ndarray:
    """``P[v, u] = W[v, u] / sqrt(d(v) · d(u))`` in float64: ``W[v, u]`` the summed weights of
    the edges u→v (1 each without ``weight``), ``d`` the (weighted) in-degree, or the out-degree
    for the source side with ``source_degree="out"``; 1 where a degree is 0."""
    n = g.num_nodes()
    counts = np.zeros((n, n))
    src, dst = (t.numpy() for t in g.edges())
    np.add.at(counts, (dst, src), 1.0 if weight is None else weight)

    def scale(d):
        return np.where(d > 0, d, 1.0) ** -0.5

    s_in = scale(counts.sum(1))
    s_src = s_in if source_degree == "in" else scale(counts.sum(0))
    return s_in[:, None] * counts * s_src[None, :]


def close(actual, expected) -> None:
    """float64 against the float64 dense computation: only the summation order differs."""
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-12)


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
    close(propagate(g, x.double()).numpy(), expected)  # float64 factors for float64 features
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


@pytest.mark.parametrize("src, dst, n", [([0, 0, 0], [0, 0, 0], 1),
                                          ([0, 1, 1, 0, 1, 1], [1, 0, 0, 0, 1, 1], 2)])
def test_more_edges_than_cells_match_the_dense_operator(src, dst, n):
    # More stored entries than the matrix has cells: cuSPARSE rejects such a CSR matrix, so
    # sparse_mm multiplies it dense (repeated edges summed), forward and backward.
    g = Graph(torch.tensor(src), torch.tensor(dst), n)
    op = dense_operator(g)
    x = torch.randn(n, 3, dtype=torch.float64, requires_grad=True)
    out = propagate(g, x)
    close(out.detach().numpy(), op @ x.detach().numpy())
    grad_out = torch.randn(n, 3, dtype=torch.float64)
    out.backward(grad_out)
    close(x.grad.numpy(), op.T @ grad_out.numpy())
    counts = np.zeros((n, n))
    np.add.at(counts, (np.array(dst), np.array(src)), 1.0)
    close(aggregate(g, x.detach(), "sum").numpy(), counts @ x.detach().numpy())


def test_sparse_mm_dense_path_writes_and_accumulates_into_out():
    matrix = csr_matrix(torch.tensor([0, 4]), torch.tensor([0, 0, 0, 0]),
                        torch.tensor([1.0, 2.0, 3.0, 4.0]), 1)
    x = torch.tensor([[2.0, -1.0]])
    out = torch.full((1, 2), float("nan"))
    assert sparse_mm(matrix, x, out=out) is out
    assert torch.equal(out, torch.tensor([[20.0, -10.0]]))
    sparse_mm(matrix, x, out=out, accumulate=True)
    assert torch.equal(out, torch.tensor([[40.0, -20.0]]))
    assert torch.equal(sparse_mm(matrix, x), torch.tensor([[20.0, -10.0]]))


def test_out_degree_source_normalisation_matches_dense_operator():
    g = directed_multigraph()
    x = torch.randn(g.num_nodes(), 3, dtype=torch.float64)
    expected = dense_operator(g, source_degree="out") @ x.numpy()
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


# ------------------------------------------------------------------ dtypes and edge weights
def test_float32_factors_are_the_float32_formula_bit_for_bit():
    """Float32 results are those of ``max(deg, 1)^(-1/2)`` computed in float32 (the release's)."""
    g = directed_multigraph()
    x = torch.randn(g.num_nodes(), 5)
    s_in = g.in_degrees().float().clamp(min=1).rsqrt()
    s_out = g.out_degrees().float().clamp(min=1).rsqrt()
    assert torch.equal(degree_scale(g.in_degrees()), s_in)
    for side, s_src in (("in", s_in), ("out", s_out)):
        reference = Adjacency(g, lambda dtype: s_in, lambda dtype, s=s_src: s)
        assert torch.equal(propagate(g, x, side), reference(x))
    mean = Adjacency(g, lambda dtype: 1.0 / g.in_degrees().float().clamp(min=1))
    assert torch.equal(aggregate(g, x, "mean"), mean(x))


def test_degree_factors_follow_the_feature_dtype():
    g = directed_multigraph()
    x = torch.randn(g.num_nodes(), 3, dtype=torch.float64)
    for side in ("in", "out"):
        close(propagate(g, x, side).numpy(), dense_operator(g, source_degree=side) @ x.numpy())
    adj = normalized_adjacency(g)
    assert csr_matrix(*adj.parts(torch.float64)[0], adj.num_nodes).values().dtype == torch.float64
    mean = aggregate(g, x, "mean").numpy()
    counts = np.zeros((10, 10))
    np.add.at(counts, (g.dst.numpy(), g.src.numpy()), 1.0)
    close(mean, counts @ x.numpy() / np.maximum(counts.sum(1), 1)[:, None])
    assert degree_scale(torch.tensor([0, 4]), torch.bfloat16).dtype == torch.bfloat16


@pytest.mark.parametrize("side", ["in", "out"])
def test_edge_weight_propagation_matches_dense_weighted_operator(side):
    g = directed_multigraph()
    w = torch.rand(g.num_edges(), dtype=torch.float64) + 0.05
    w[:3] = 0.0  # zero weights may leave a node with weighted degree 0
    x = torch.randn(g.num_nodes(), 4, dtype=torch.float64, requires_grad=True)
    op = dense_operator(g, w.numpy(), side)
    out = propagate(g, x, side, edge_weight=w)
    close(out.detach().numpy(), op @ x.detach().numpy())
    grad = torch.randn(g.num_nodes(), 4, dtype=torch.float64)
    out.backward(grad)
    close(x.grad.numpy(), op.T @ grad.numpy())
    ones = torch.ones(g.num_edges(), dtype=torch.float64)  # unit weights: the plain operator
    close(propagate(g, x.detach(), side, edge_weight=ones).numpy(),
          propagate(g, x.detach(), side).numpy())


def test_bad_edge_weights_are_rejected():
    g = directed_multigraph()
    x = torch.randn(g.num_nodes(), 2)
    for bad, match in ((torch.ones(3), r"shape \(32,\)"),
                       (torch.ones(g.num_edges(), 2), r"shape \(32,\)"),
                       (torch.ones(g.num_edges(), dtype=torch.long), "floating-point"),
                       (torch.ones(g.num_edges(), device="meta"),
                        "edge_weight is on meta but the graph is on cpu")):
        with pytest.raises(ValueError, match=match):
            propagate(g, x, edge_weight=bad)


# ------------------------------------------------------------------ the CSR "beta" notice
def run_python(code: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter (torch emits the CSR notice once per process)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).resolve().parents[1])


def test_importing_the_package_leaves_warning_filters_alone():
    """Third-party imports (torch, numpy) install filters of their own: snapshot after them."""
    done = run_python(
        "import warnings, numpy, scipy.sparse, torch; before = list(warnings.filters); "
        "import layers.autograd_functions, layers.propagation, layers.autogcn_layer; "
        "import nets.registry; "
        "assert warnings.filters == before, warnings.filters[:3]; "
        "assert not any(f[1] is not None and 'CSR' in f[1].pattern for f in warnings.filters)")
    assert done.returncode == 0, done.stderr


def test_csr_notice_is_silenced_only_where_the_project_makes_csr_tensors():
    setup = ("import warnings, torch; warnings.simplefilter('error'); "
             "from autogcn.propagation import propagate; from autogcn.graph import Graph; ")
    ours = run_python(setup + "propagate(Graph([0, 1], [1, 0]), torch.ones(2, 1))")
    assert ours.returncode == 0, ours.stderr  # no warning escaped the project's own CSR tensors
    theirs = run_python(setup + "torch.sparse_csr_tensor(torch.tensor([0, 1]), torch.tensor([0]),"
                                " torch.ones(1), (1, 1), check_invariants=False)")
    assert theirs.returncode != 0 and CSR_BETA_NOTICE in theirs.stderr  # the user's own: shown


def test_invariants_notice_of_some_torch_releases_is_silenced_in_csr_matrix(monkeypatch):
    # torch 2.11 warns on every CSR construction, check_invariants=False or not: stand in for it
    made = torch.sparse_csr_tensor

    def noisy(*args, **kwargs):
        warnings.warn(f"{CSR_INVARIANTS_NOTICE}. Memory errors ...", UserWarning, stacklevel=2)
        return made(*args, **kwargs)

    monkeypatch.setattr(torch, "sparse_csr_tensor", noisy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        csr_matrix(torch.tensor([0, 1]), torch.tensor([0]), torch.ones(1), 1)
        with pytest.raises(UserWarning, match=CSR_INVARIANTS_NOTICE):  # anyone else's: shown
            torch.sparse_csr_tensor(torch.tensor([0, 1]), torch.tensor([0]), torch.ones(1), (1, 1))


@pytest.mark.parametrize("side", ["in", "out"])
@pytest.mark.parametrize("in_dim,out_dim", [(5, 3), (3, 5)])  # project first / propagate first
def test_graph_conv_takes_an_edge_index_and_edge_weights(side, in_dim, out_dim):
    g = directed_multigraph()
    conv = GraphConv(in_dim, out_dim, side).double()
    x = torch.randn(g.num_nodes(), in_dim, dtype=torch.float64)
    w = torch.rand(g.num_edges(), dtype=torch.float64)
    weight = conv.weight.detach().numpy()
    close(conv(g.edge_index, x, edge_weight=w).detach().numpy(),
          dense_operator(g, w.numpy(), side) @ x.numpy() @ weight)
    close(conv(g.edge_index, x).detach().numpy(), conv(g, x).detach().numpy())
    with pytest.raises(ValueError, match="the graph has 10 nodes but the features have 9 rows"):
        conv(g, x[:9])
