"""The graph cannot go stale, nor be read two ways: a graph edited in place after a forward is
seen as edited (cached and uncached, in the conv, the successors and the benchmark's layer);
JacobiConv's undirected graph follows one rule for repeated edges; non-finite or oversized
hyperparameters are refused where they enter; and the successors run on the meta device."""

from __future__ import annotations

import pytest
import torch

from autogcn import AutoGCNConv, BernNetProp, ChebNetIIProp, GPRGNNProp, Graph, JacobiConvProp
from autogcn.polynomial import MAX_ORDER
from layers.autogcn_layer import AutoGCNLayer

N, C = 6, 3
MODULES = {
    "AutoGCNConv": lambda: AutoGCNConv(C, 2),
    "AutoGCNConv cached": lambda: AutoGCNConv(C, 2, cached=True),
    "GPRGNNProp": lambda: GPRGNNProp(K=2),
    "BernNetProp": lambda: BernNetProp(K=2),
    "ChebNetIIProp": lambda: ChebNetIIProp(K=2),
    "JacobiConvProp": lambda: JacobiConvProp(C, K=2),
}


def build(name: str) -> torch.nn.Module:
    torch.manual_seed(0)
    module = MODULES[name]()
    with torch.no_grad():  # random coefficients: the successors start all-pass
        for p in module.parameters():
            p.uniform_(-0.5, 1.0)
    return module


def ring() -> torch.Tensor:
    src = torch.arange(N)
    return torch.stack([torch.cat([src, (src + 1) % N]), torch.cat([(src + 1) % N, src])])


# ------------------------------------------------------------------ in-place edits
@pytest.mark.parametrize("name", list(MODULES))
def test_a_graph_edited_in_place_after_a_forward_is_seen_edited(name):
    module, x = build(name), torch.randn(N, C)
    g = Graph.from_edge_index(ring(), N)
    before = module(x, g)
    g.dst[:3] = torch.tensor([3, 4, 5])  # rewire three edges in place
    fresh = Graph(g.src.clone(), g.dst.clone(), N)
    expected = build(name)(x, fresh)
    assert not torch.allclose(before, expected)  # the edit changes the output
    torch.testing.assert_close(module(x, g), expected)


@pytest.mark.parametrize("name", list(MODULES))
def test_an_edge_index_edited_in_place_after_a_forward_is_seen_edited(name):
    module, x, ei = build(name), torch.randn(N, C), ring()
    g = Graph.from_edge_index(ei, N)  # its rows view ei
    module(x, ei), module(x, g)
    ei[1, :3] = torch.tensor([3, 4, 5])
    expected = build(name)(x, ei.clone())
    torch.testing.assert_close(module(x, ei), expected)
    torch.testing.assert_close(module(x, g), expected)


def test_the_benchmark_layer_sees_an_edited_graph():
    layer = AutoGCNLayer(C, 2, activation=None, graph_norm=False, batch_norm=False).eval()
    x, g = torch.randn(N, C), Graph.from_edge_index(ring(), N)
    layer(g, x)
    g.src[0] = 3
    torch.testing.assert_close(layer(g, x), layer(Graph(g.src.clone(), g.dst.clone(), N), x))


def test_an_in_place_edit_to_an_id_out_of_range_is_refused():
    conv, x, g = build("AutoGCNConv"), torch.randn(N, C), Graph.from_edge_index(ring(), N)
    conv(x, g)
    g.dst[0] = N + 3
    with pytest.raises(ValueError, match=r"holds node id 9, outside \[0, 6\)"):
        conv(x, g)


# ------------------------------------------------------------------ JacobiConv: one rule
def test_jacobi_counts_a_repeated_edge_once_on_symmetric_and_directed_graphs():
    """PyG's ``to_undirected`` (JacobiConv's pipeline): a pair linked by any number of edges,
    in either direction, is one edge each way, whether the input was symmetric or not."""
    prop = build("JacobiConvProp").double()
    x = torch.randn(N, C, dtype=torch.float64)
    sym = ring()
    once = prop(x, sym)
    repeated = torch.cat([sym, sym[:, :1], sym[:, N:N + 1]], 1)  # 0 → 1 and 1 → 0 again
    torch.testing.assert_close(prop(x, repeated), once)
    directed = sym[:, :N]
    torch.testing.assert_close(prop(x, torch.cat([directed, directed[:, :1]], 1)), once)
    # the dense reference: the binary symmetric adjacency, D^-1/2 A D^-1/2
    a = torch.zeros(N, N, dtype=torch.float64)
    a[sym[1], sym[0]] = 1.0
    s = a.sum(1).rsqrt()
    torch.testing.assert_close(once, prop.polynomial(lambda h: (s[:, None] * a * s) @ h, x))


# ------------------------------------------------------------------ hyperparameters
@pytest.mark.parametrize("make, match", [
    (lambda: AutoGCNConv(C, 2, mode="single", single_a_init=float("nan")),
     "single_a_init must be a finite number, got nan"),
    (lambda: GPRGNNProp(K=2, alpha=float("nan")), "alpha must be a finite number, got nan"),
    (lambda: GPRGNNProp(K=2, alpha=float("inf")), "alpha must be a finite number, got inf"),
    (lambda: JacobiConvProp(C, a=float("nan")), "a must be a finite number, got nan"),
    (lambda: JacobiConvProp(C, b=float("nan")), "b must be a finite number, got nan"),
    (lambda: JacobiConvProp(C, alpha=float("nan")), "alpha must be a finite number, got nan"),
    (lambda: AutoGCNConv(C, 2, grid_size=10**9), "grid_size must be at most 65536"),
    (lambda: BernNetProp(K=10**9), f"must be at most {MAX_ORDER}, got 1000000000"),
    (lambda: ChebNetIIProp(K=MAX_ORDER + 1), f"must be at most {MAX_ORDER}"),
])
def test_bad_hyperparameters_are_refused_where_they_enter(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_the_largest_order_is_finite():
    prop = BernNetProp(K=MAX_ORDER)
    assert bool(torch.isfinite(prop.coefficients()).all())


# ------------------------------------------------------------------ the meta device
@pytest.mark.skipif(not hasattr(torch.library, "custom_op"),
                    reason="torch < 2.4 (the DGL profile) has no sparse CSR tensors on the meta "
                           "device; docs/layer.md says so")
@pytest.mark.parametrize("name", [n for n in MODULES if "cached" not in n])
def test_every_module_runs_forward_and_backward_on_the_meta_device(name):
    module = build(name).to("meta")
    x = torch.randn(N, C, device="meta", requires_grad=True)
    w = torch.rand(2 * N, device="meta", requires_grad=True)
    out = module(x, ring().to("meta"), w)
    out.sum().backward()
    assert out.device.type == "meta" and x.grad.shape == x.shape and w.grad.shape == w.shape
