"""The checks PyG runs on its own convolutions, for the package's five modules (``autogcn``):
every graph input gives the same output, an independent dense computation agrees, ``cached``,
the flags, ``torch.compile``, PyG's ``Sequential``, the repr, ``reset_parameters``, float64, an
empty graph, and one clear error per bad input. Runs against the installed PyG (its sparse
helpers build the adjacency inputs)."""

from __future__ import annotations

import copy

import pytest
import torch

from autogcn import (
    AutoGCNConv,
    BernNetProp,
    ChebNetIIProp,
    GPRGNNProp,
    Graph,
    JacobiConvProp,
)

pyg = pytest.importorskip("torch_geometric", reason="needs torch_geometric "
                                                    "(pip install -r requirements.txt)")
from torch_geometric.nn import Sequential  # noqa: E402
from torch_geometric.utils import (  # noqa: E402
    to_torch_coo_tensor,
    to_torch_csc_tensor,
    to_torch_csr_tensor,
)

# PyG's sparse helpers announce, per tensor, that torch's invariant checks are off
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")

#: torch >= 2.4: the sparse product is a custom operator, opaque to torch.compile and with a
#: fake kernel (older torch runs it as an autograd Function, eager only).
needs_custom_op = pytest.mark.skipif(not hasattr(torch.library, "custom_op"),
                                     reason="torch < 2.4 has no torch.library.custom_op")

IN, OUT, N = 6, 4, 7
#: An undirected graph (each edge both ways) in which every node has an edge.
EDGES = [(0, 1), (0, 2), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 0), (1, 5)]
MODULES = {
    "AutoGCNConv": lambda: AutoGCNConv(IN, OUT),
    "GPRGNNProp": lambda: GPRGNNProp(K=3, alpha=0.2),
    "BernNetProp": lambda: BernNetProp(K=3),
    "ChebNetIIProp": lambda: ChebNetIIProp(K=3),
    "JacobiConvProp": lambda: JacobiConvProp(IN, K=3, a=1.5, b=0.5, alpha=0.8),
}
REPRS = {
    "AutoGCNConv": "AutoGCNConv(6, 4, grid_size=16, mode=over, filters=low,mid,high, "
                   "gate=sequential)",
    "GPRGNNProp": "GPRGNNProp(K=3, init=PPR(alpha=0.2), operator=gcn_norm(A+I))",
    "BernNetProp": "BernNetProp(K=3, basis=Bernstein, coefficients=relu(theta), "
                   "operator=I-D^-1/2AD^-1/2)",
    "ChebNetIIProp": "ChebNetIIProp(K=3, basis=Chebyshev interpolation, "
                     "coefficients=relu(gamma), operator=-D^-1/2AD^-1/2)",
    "JacobiConvProp": "JacobiConvProp(channels=6, K=3, a=1.5, b=0.5, alpha=0.8, "
                      "operator=D^-1/2AD^-1/2 (undirected))",
}


def symmetric_weights() -> torch.Tensor:
    """One positive weight per edge, the same both ways (a symmetric operator)."""
    return (torch.rand(len(EDGES), dtype=torch.float64) + 0.1).repeat(2)


def edge_index() -> torch.Tensor:
    pairs = torch.tensor(EDGES).T
    return torch.cat([pairs, pairs.flip(0)], 1)


def build(name: str, seed: int = 0) -> torch.nn.Module:
    """The module with random parameters (the successors' initial filters are all-pass)."""
    torch.manual_seed(seed)
    module = MODULES[name]()
    with torch.no_grad():
        for p in module.parameters():
            p.uniform_(0.1, 0.9)
    return module


def out_width(name: str) -> int:
    return OUT if name == "AutoGCNConv" else IN


def adjacencies(ei: torch.Tensor, weight: torch.Tensor | None = None) -> dict[str, object]:
    """The transposed adjacency ``adj_t`` (row = target) in PyG's sparse forms."""
    forms = {"coo": to_torch_coo_tensor(ei, weight, size=N).t(),
             "csr": to_torch_csr_tensor(ei.flip(0), weight, size=N),
             "csc.t": to_torch_csc_tensor(ei, weight, size=N).t()}
    try:
        from torch_sparse import SparseTensor
    except ImportError:  # optional: PyG works without it
        return forms
    forms["SparseTensor"] = SparseTensor.from_edge_index(ei, weight, (N, N)).t()
    return forms


# ------------------------------------------------------------------ dense references (float64)
def dense_operator(name: str, ei: torch.Tensor, weight: torch.Tensor | None = None,
                   add_self_loops: bool = False, normalize: bool = True) -> torch.Tensor:
    """Each module's operator from its definition: ``A[v, u]`` the weight of ``u → v``, then
    GPR-GNN's ``A + I``, or AutoGCN's flags, and ``D^-1/2 · D^-1/2`` (no isolated nodes here)."""
    w = torch.ones(ei.shape[1], dtype=torch.float64) if weight is None else weight.double()
    a = torch.zeros(N, N, dtype=torch.float64).index_put_((ei[1], ei[0]), w, accumulate=True)
    if add_self_loops or name == "GPRGNNProp":
        a = a + torch.eye(N, dtype=torch.float64)
    if not normalize:
        return a
    s = a.sum(1).rsqrt()
    return s[:, None] * a * s[None, :]


def spectral_output(module: torch.nn.Module, name: str, x: torch.Tensor,
                    op: torch.Tensor) -> torch.Tensor:
    """The output from the eigendecomposition ``op = U diag(μ) Uᵀ`` and the module's
    ``frequency_response`` at ``λ = 1 - μ``: each filter is ``U diag(F(λ)) Uᵀ``. AutoGCNConv
    (with ``gate="none"``, one bank) sums its filters' outputs through their linear maps."""
    mu, u = torch.linalg.eigh(op)
    resp = module.frequency_response(1.0 - mu)
    spectral = u.T @ x
    if name != "AutoGCNConv":
        f = resp["filter"]  # (1 or channels, N)
        return u @ (f.T * spectral)
    out = module.bias.detach().clone() if module.bias is not None else 0.0
    for i, filt in enumerate(module.filters):
        out = out + u @ (resp[filt][0][:, None] * spectral) @ module.weight[0, i].detach()
    return out


# ------------------------------------------------------------------ inputs agree
@pytest.mark.parametrize("name", list(MODULES))
def test_every_graph_input_gives_the_dense_output(name):
    module = build(name).double()
    if name == "AutoGCNConv":
        module.gate = "none"
    ei, x = edge_index(), torch.randn(N, IN, dtype=torch.float64)
    expected = spectral_output(module, name, x, dense_operator(name, ei))
    out = module(x, ei)
    assert out.shape == (N, out_width(name))
    torch.testing.assert_close(out, expected, rtol=1e-9, atol=1e-10)
    torch.testing.assert_close(module(x, Graph.from_edge_index(ei, N)), expected)
    for form, adj_t in adjacencies(ei).items():
        torch.testing.assert_close(module(x, adj_t), expected, msg=form)


def test_weighted_inputs_agree_with_the_dense_weighted_operator():
    conv = build("AutoGCNConv").double()
    conv.gate = "none"
    ei, x = edge_index(), torch.randn(N, IN, dtype=torch.float64)
    w = symmetric_weights()
    expected = spectral_output(conv, "AutoGCNConv", x, dense_operator("AutoGCNConv", ei, w))
    torch.testing.assert_close(conv(x, ei, w), expected)
    for form, adj_t in adjacencies(ei, w).items():
        torch.testing.assert_close(conv(x, adj_t), expected, msg=form)


@pytest.mark.parametrize("add_self_loops", [False, True])
@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_flags_match_the_dense_operator(add_self_loops, normalize, weighted):
    conv = build("AutoGCNConv").double()
    conv.gate = "none"
    conv.add_self_loops, conv.normalize = add_self_loops, normalize
    ei, x = edge_index(), torch.randn(N, IN, dtype=torch.float64)
    w = symmetric_weights() if weighted else None
    op = dense_operator("AutoGCNConv", ei, w, add_self_loops, normalize)
    torch.testing.assert_close(conv(x, ei, w), spectral_output(conv, "AutoGCNConv", x, op))
    adj_t = to_torch_csr_tensor(ei.flip(0), w, size=N)
    torch.testing.assert_close(conv(x, adj_t), conv(x, ei, w))


def test_bias_flag_and_channel_attributes():
    with_bias = build("AutoGCNConv")
    without = AutoGCNConv(IN, OUT, bias=False)
    assert without.bias is None and "bias" not in dict(without.named_parameters())
    without.load_state_dict({k: v for k, v in with_bias.state_dict().items() if k != "bias"})
    x, ei = torch.randn(N, IN), edge_index()
    torch.testing.assert_close(with_bias(x, ei), without(x, ei) + with_bias.bias)
    assert (without.in_channels, without.out_channels) == (IN, OUT)
    assert repr(without).endswith("bias=False)")
    flags = AutoGCNConv(IN, OUT, add_self_loops=True, normalize=False, cached=True)
    assert repr(flags) == ("AutoGCNConv(6, 4, grid_size=16, mode=over, filters=low,mid,high, "
                           "gate=sequential, cached=True, add_self_loops=True, normalize=False)")


@pytest.mark.parametrize("name", list(MODULES))
def test_repr(name):
    assert repr(MODULES[name]()) == REPRS[name]


# ------------------------------------------------------------------ cached
def test_cached_operator_serves_every_input_form():
    conv = build("AutoGCNConv")
    conv.cached = True
    x, ei = torch.randn(N, IN), edge_index()
    expected = copy.deepcopy(conv).requires_grad_(False)(x, ei)  # an uncached twin
    torch.testing.assert_close(conv(x, ei), expected)
    assert conv._cache is not None
    op = conv._cache[1]
    torch.testing.assert_close(conv(x, ei), expected)
    assert conv._cache[1] is op  # served, not rebuilt
    adj_t = to_torch_csr_tensor(ei.flip(0), size=N)
    torch.testing.assert_close(conv(x, adj_t), expected)
    assert conv._cache[1] is not op  # another graph object: rebuilt, not served stale
    torch.testing.assert_close(conv(x, adj_t), expected)


def test_cached_conv_never_serves_a_learned_edge_weight_from_its_cache():
    conv = AutoGCNConv(IN, OUT, cached=True)
    x, ei = torch.randn(N, IN), edge_index()
    w = torch.rand(ei.shape[1], requires_grad=True)
    with torch.no_grad():
        conv(x, ei, w)  # no gradient recorded: a constant operator, cached
    cached = conv._cache
    assert cached is not None
    for _ in range(2):  # each training call builds its own operator, and w gets its gradient
        conv(x, ei, w).sum().backward()
        assert conv._cache is cached and w.grad is not None and bool(w.grad.abs().sum() > 0)
    w.grad = None
    uncached = AutoGCNConv(IN, OUT)
    uncached.load_state_dict(conv.state_dict())
    uncached(x, ei, w).sum().backward()
    expected = w.grad.clone()
    w.grad = None
    conv(x, ei, w).sum().backward()
    torch.testing.assert_close(w.grad, expected)


# ------------------------------------------------------------------ compile, no host reads
@needs_custom_op
@pytest.mark.parametrize("cached", [False, True])
def test_compiles_into_one_graph_cached_and_uncached(cached):
    """``fullgraph=True`` fails on any graph break; ``aot_eager`` traces the forward and
    backward (the sparse product's fake kernel and autograd formula) without a C++ build."""
    conv = build("AutoGCNConv")
    conv.cached = cached
    twin = copy.deepcopy(conv)
    compiled = torch.compile(conv, fullgraph=True, backend="aot_eager")
    x = torch.randn(N, IN, requires_grad=True)
    ei, w = edge_index(), torch.rand(2 * len(EDGES))
    for _ in range(2):  # the second call is served by the cache when cached=True
        out = compiled(x, ei, w)
        torch.testing.assert_close(out, twin(x, ei, w))
    grad = torch.autograd.grad(out.sum(), x)[0]
    torch.testing.assert_close(grad, torch.autograd.grad(twin(x, ei, w).sum(), x)[0])
    assert (conv._cache is not None) == cached
    explained = torch._dynamo.explain(twin)(x, ei, w)
    assert explained.graph_break_count == 0


@needs_custom_op
def test_forward_and_backward_read_no_value_from_the_device():
    """On the meta device a tensor has no values: any read (``.item()``, ``bool(t)``, a
    value-dependent shape) raises. Forward and backward run there, with every flag."""
    conv = AutoGCNConv(IN, OUT, add_self_loops=True, cached=True).to("meta")
    ei = torch.randint(0, N, (2, 12), device="meta")
    x = torch.randn(N, IN, device="meta", requires_grad=True)
    out = conv(x, ei, torch.rand(12, device="meta"))
    out.sum().backward()
    assert out.shape == (N, OUT) and x.grad.shape == (N, IN)
    adj_t = to_torch_csr_tensor(edge_index().flip(0), size=N).to("meta")
    assert AutoGCNConv(IN, OUT).to("meta")(x, adj_t).shape == (N, OUT)


@needs_custom_op
@pytest.mark.parametrize("name", [n for n in MODULES if n != "AutoGCNConv"])
def test_successors_compile_into_one_graph_with_learned_weights(name):
    """Their value-dependent steps (loops, reverse edges) are fixed-size tensor operations: no
    graph break, and the same output and gradients (to x and to the edge weights) as eager."""
    module = build(name)
    twin = copy.deepcopy(module)
    compiled = torch.compile(module, fullgraph=True, backend="aot_eager")
    x, ei = torch.randn(N, IN, requires_grad=True), edge_index()
    w = torch.rand(ei.shape[1], requires_grad=True)
    out, expected = compiled(x, ei, w), twin(x, ei, w)
    torch.testing.assert_close(out, expected)
    grads = torch.autograd.grad(out.square().sum(), (x, w))
    for got, want in zip(grads, torch.autograd.grad(expected.square().sum(), (x, w))):
        torch.testing.assert_close(got, want)
    assert torch._dynamo.explain(twin)(x, ei, w).graph_break_count == 0


@needs_custom_op
@pytest.mark.parametrize("name", list(MODULES))
def test_export_equals_eager(name):
    module = build(name)
    x, ei, w = torch.randn(N, IN), edge_index(), torch.rand(2 * len(EDGES))
    exported = torch.export.export(module, (x, ei, w)).module()
    torch.testing.assert_close(exported(x, ei, w), module(x, ei, w))
    other_x, other_w = torch.randn(N, IN), torch.rand(2 * len(EDGES))  # not baked in
    torch.testing.assert_close(exported(other_x, ei, other_w), module(other_x, ei, other_w))


# ------------------------------------------------------------------ PyG's Sequential, resets
def test_inside_pyg_sequential():
    conv, prop = build("AutoGCNConv"), build("ChebNetIIProp")
    model = Sequential("x, edge_index", [
        (conv, "x, edge_index -> x"), torch.nn.ReLU(), (prop, "x, edge_index -> x")])
    x, ei = torch.randn(N, IN), edge_index()
    torch.testing.assert_close(model(x, ei), prop(torch.relu(conv(x, ei)), ei))


@pytest.mark.parametrize("name", list(MODULES))
def test_reset_parameters_restores_the_initialisation(name):
    torch.manual_seed(1)
    module = MODULES[name]()
    fresh = copy.deepcopy(module.state_dict())
    with torch.no_grad():
        for p in module.parameters():
            p.add_(1.0)
    module.reset_parameters()
    for key, value in module.state_dict().items():
        if key == "weight" and name == "AutoGCNConv":  # redrawn from U(-1/√in, 1/√in)
            assert not torch.equal(value, fresh[key] + 1.0)
            assert value.abs().max() <= IN ** -0.5
        else:
            torch.testing.assert_close(value, fresh[key], msg=key)


@pytest.mark.parametrize("name", list(MODULES))
def test_float64_equals_float32(name):
    module = build(name)
    x, ei = torch.randn(N, IN), edge_index()
    out = module(x, ei)
    out64 = module.double()(x.double(), ei)
    assert out64.dtype == torch.float64
    torch.testing.assert_close(out64.float(), out, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", list(MODULES))
def test_empty_graph(name):
    """No edges: every operator is 0, so the output is the filters at ``μ = 0``; no nodes:
    an empty output."""
    module = build(name).double()
    if name == "AutoGCNConv":
        module.gate = "none"
    x, no_edges = torch.randn(N, IN, dtype=torch.float64), torch.empty(2, 0, dtype=torch.long)
    zero = torch.zeros(N, N, dtype=torch.float64)
    op = zero if name != "GPRGNNProp" else torch.eye(N, dtype=torch.float64)  # only its loops
    torch.testing.assert_close(module(x, no_edges), spectral_output(module, name, x, op))
    empty = module(x[:0], no_edges)
    assert empty.shape == (0, out_width(name))


# ------------------------------------------------------------------ bad input: one clear error
BAD_CONV_CALLS = {
    "width": (lambda c, x, ei: c(x[:, :3], ei), ValueError, "x has 3 columns but the module's "
                                                           "in_channels is 6"),
    "1-D x": (lambda c, x, ei: c(x[:, 0], ei), ValueError, "x must be 2-D"),
    "float64 x": (lambda c, x, ei: c(x.double(), ei), TypeError,
                  "x has dtype torch.float64 but the module's parameters are torch.float32"),
    "half on the CPU": (lambda c, x, ei: c.half()(x.half(), ei), TypeError,
                        "torch.float16, which torch's sparse kernels lack on cpu"),
    "negative weight": (lambda c, x, ei: c(x, ei, -torch.ones(ei.shape[1])), ValueError,
                        "edge_weight holds negative values"),
    "NaN weight": (lambda c, x, ei: c(x, ei, torch.full((ei.shape[1],), float("nan"))),
                   ValueError, "edge_weight holds NaN or infinite values"),
    "weight shape": (lambda c, x, ei: c(x, ei, torch.ones(3)), ValueError,
                     "edge_weight must have shape"),
    "float ids": (lambda c, x, ei: c(x, ei.float()), TypeError, "edge_index must hold integer"),
    "(3, E) ids": (lambda c, x, ei: c(x, ei[[0, 1, 0]]), ValueError,
                   r"edge_index must be a \(2, num_edges\) tensor"),
    "id out of range": (lambda c, x, ei: c(x[:5], ei), ValueError,
                        r"holds node id \d+, outside \[0, 5\)"),
    "adjacency size": (lambda c, x, ei: c(x[:5], to_torch_coo_tensor(ei, size=N)), ValueError,
                       r"the sparse adjacency must be \(5, 5\)"),
    "weight with adjacency": (lambda c, x, ei: c(x, to_torch_coo_tensor(ei, size=N),
                                                 torch.ones(ei.shape[1])), ValueError,
                              "edge_weight must be None when the graph is a sparse adjacency"),
    "graph type": (lambda c, x, ei: c(x, ei.tolist()), TypeError, "got list"),
}


@pytest.mark.parametrize("case", list(BAD_CONV_CALLS))
def test_bad_conv_input_is_one_clear_error(case):
    call, error, message = BAD_CONV_CALLS[case]
    with pytest.raises(error, match=message):
        call(AutoGCNConv(IN, OUT), torch.randn(N, IN), edge_index())


@pytest.mark.parametrize("kwargs, error, message", [
    ({"grid_size": 0}, ValueError, "grid_size must be a positive int, got 0"),
    ({"out_channels": 0}, ValueError, "out_channels must be a positive int, got 0"),
    ({"in_channels": -2}, ValueError, r"in_channels must be a positive int \(or -1: .*got -2"),
    ({"grid_size": 10**9}, ValueError, "grid_size must be at most 65536, got 1000000000"),
    ({"single_a_init": float("nan")}, ValueError, "single_a_init must be a finite number"),
    ({"num_banks": 1.5}, TypeError, "num_banks must be a positive int"),
])
def test_bad_conv_sizes(kwargs, error, message):
    with pytest.raises(error, match=message):
        AutoGCNConv(**{"in_channels": IN, "out_channels": OUT, **kwargs})


# ------------------------------------------------------------------ lazy widths
@pytest.mark.parametrize("make, param", [
    (lambda: AutoGCNConv(-1, OUT), "weight"),
    (lambda: JacobiConvProp(-1, K=2), "weight"),
])
def test_lazy_width_is_taken_from_the_first_input(make, param):
    module = make()
    assert isinstance(getattr(module, param), torch.nn.parameter.UninitializedParameter)
    x, ei = torch.randn(N, IN), edge_index()
    out = module(x, ei)
    assert not isinstance(getattr(module, param), torch.nn.parameter.UninitializedParameter)
    assert out.shape[0] == N and (module.in_channels if hasattr(module, "in_channels")
                                  else module.channels) == IN
    with torch.no_grad():
        for p in module.parameters():
            p.add_(1.0)
    module.reset_parameters()  # works once the width is known
    twin = make()
    twin(x, ei)
    if isinstance(module, JacobiConvProp):  # a deterministic initialisation: equal
        torch.testing.assert_close(module.state_dict(), twin.state_dict())
    else:
        assert module.weight.abs().max() <= IN ** -0.5
    with pytest.raises(ValueError, match="x has 3 columns"):
        module(x[:, :3], ei)


# ------------------------------------------------------------------ devices
@pytest.mark.parametrize("name", list(MODULES))
def test_mixed_devices_name_the_devices(name):
    module, ei = MODULES[name](), edge_index()
    with pytest.raises(ValueError, match="x is on meta but the module's parameters are on cpu"):
        module(torch.randn(N, IN, device="meta"), ei)
    with pytest.raises(ValueError, match="edge_index is on cpu but x is on meta"):
        copy.deepcopy(module).to("meta")(torch.randn(N, IN, device="meta"), ei)
    with pytest.raises(ValueError, match="the graph is on cpu but x is on meta"):
        copy.deepcopy(module).to("meta")(torch.randn(N, IN, device="meta"),
                                         Graph.from_edge_index(ei, N))


@pytest.mark.parametrize("name", list(MODULES))
def test_ids_out_of_range_or_negative_name_edge_index(name):
    module, x, ei = MODULES[name](), torch.randn(N, IN), edge_index()
    with pytest.raises(ValueError, match=r"edge_index\[1\] \(targets\) holds node id 9, "
                                         r"outside \[0, 7\)"):
        module(x, torch.cat([ei, torch.tensor([[0], [9]])], 1))
    with pytest.raises(ValueError, match=r"edge_index\[0\] \(sources\) holds node id -1"):
        module(x, torch.cat([ei, torch.tensor([[-1], [0]])], 1))


@pytest.mark.parametrize("name", [n for n in MODULES if n != "AutoGCNConv"])
def test_bad_successor_input_is_one_clear_error(name):
    module, x, ei = MODULES[name](), torch.randn(N, IN), edge_index()
    with pytest.raises(ValueError, match="x must be 2-D"):
        module(x[:, 0], ei)
    with pytest.raises(TypeError, match="x has dtype torch.float64 but the module's"):
        module(x.double(), ei)
    with pytest.raises(TypeError, match="sparse kernels lack on cpu"):
        module.half()(x.half(), ei)
    with pytest.raises(ValueError, match=r"holds node id \d+, outside \[0, 5\)"):
        MODULES[name]()(x[:5], ei)
    with pytest.raises(ValueError, match="K .the polynomial order. must be a positive int"):
        type(module)(K=0) if name != "JacobiConvProp" else JacobiConvProp(IN, K=0)
    if name == "JacobiConvProp":
        with pytest.raises(ValueError, match="x has 3 columns but the module's channels is 6"):
            MODULES[name]()(x[:, :3], ei)
        with pytest.raises(ValueError, match=r"channels must be a positive int \(or -1: .*got 0"):
            JacobiConvProp(0)
