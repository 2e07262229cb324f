"""AutoGCNConv's forward+backward time on PubMed beside PyG's GCNConv, beside its own floor,
with a learned edge weight, and under PyG's explanation masks: ratios measured in one process.

    python -m scripts.bench conv --data_dir DIR [--repeats 20] [--hidden 64] [--threads T]
                                 [--no-compile]

``DIR`` holds the eight Planetoid raw files ``ind.pubmed.*`` (in ``DIR`` or ``DIR/pubmed``), read
by the project's loader; features are row-normalised, the graph is the loader's (symmetric).
Every conv maps the 500 features to ``--hidden`` columns; ``x`` needs no gradient (an input
layer). Each timed call is one forward and one backward; within each group the calls alternate
(order rotated every round), so that a load change on the machine hits all of them; the median
of ``--repeats`` rounds is printed in ms, and each group's ratios.

Groups:

* ``cached`` / ``uncached``: AutoGCNConv and GCNConv with ``cached=True`` (operator built once,
  transductive training) and without (built per call); AutoGCNConv's *floor* is the products it
  cannot avoid, with nothing elementwise around them — projecting first (as it does here, 500
  input columns), the three filter projections (one product with ``3·hidden`` columns), the two
  sparse products (``Ã`` on those columns, ``Ã`` again on the mid filter's), and their backward.
  Beside them, AutoGCNConv compiled whole (``torch.compile(fullgraph=True)``, the default
  backend; its compilation is one of the untimed calls), which fuses the elementwise filter
  mixing and gate that the eager conv runs as separate passes.
* ``edge weights``: a constant ``edge_weight`` (the cached operator, and per call) against a
  learned one (``sigmoid(mask)``, gradient to ``mask``), with GCNConv's learned weight beside.
* ``explain``: the design decision of :mod:`autogcn.explain`. An explanation mask that requires a
  gradient, applied as the package does (a learned edge weight, the sparse products and their
  sampled backward) against the way a ``MessagePassing`` subclass would take it through PyG's
  ``propagate`` (``message``, ``explain_message``, scatter-sum), both on AutoGCNConv's own
  filters; and the same ``propagate`` without a mask against the sparse product (what every
  training step would pay if the module's forward ran through ``propagate``). Printed first: the
  seconds ``import torch_geometric`` took in this process, which subclassing ``MessagePassing``
  would add to ``import autogcn``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from train.interrupts import startup

with startup():
    import torch

    from autogcn import AutoGCNConv
    from autogcn.propagation import normalized_adjacency

Step = Callable[[], None]


def load(data_dir: Path) -> tuple[torch.Tensor, torch.Tensor]:
    """PubMed's row-normalised dense features and its ``(2, E)`` edge index."""
    from data.loaders import load_node_dataset

    ds = load_node_dataset("PUBMED", data_dir)
    x = ds.features.to_dense() if ds.features.is_sparse else ds.features
    x = x / x.sum(1, keepdim=True).clamp(min=1e-12)  # PyG's NormalizeFeatures
    return x.float().contiguous(), ds.graph.edge_index


def step(module: Callable, *args) -> Step:
    """One forward and one backward of ``module(*args)``, from a fixed output gradient (no loss
    computation in the timing)."""
    grads: list[torch.Tensor] = []

    def run() -> None:
        out = module(*args)
        if not grads:
            grads.append(torch.randn_like(out))
        out.backward(grads[0])

    return run


def measure(steps: dict[str, Step], repeats: int) -> dict[str, float]:
    """Median seconds per step: two untimed calls each, then ``repeats`` rotated rounds."""
    for fn in steps.values():
        fn()
        fn()
    names = list(steps)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            start = time.perf_counter()
            steps[name]()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def report(title: str, medians: dict[str, float], ratios: Sequence[tuple[str, str]]) -> None:
    print(f"\n{title}")
    for name, t in medians.items():
        print(f"  {name:<44} {1e3 * t:8.2f} ms")
    for a, b in ratios:
        print(f"  {a} / {b}: {medians[a] / medians[b]:.2f}")


def floor_step(conv: AutoGCNConv, x: torch.Tensor, edge_index: torch.Tensor) -> Step:
    """AutoGCNConv's unavoidable products (module docstring), on its own operator."""
    op = normalized_adjacency(_graph(edge_index, x.shape[0]))
    w = conv.weight.detach().permute(2, 0, 1, 3).reshape(x.shape[1], -1).requires_grad_()
    mid = conv.filters.index("mid") * conv.out_channels

    grad_p = torch.randn(x.shape[0], w.shape[1])
    grad_q = torch.randn(x.shape[0], conv.out_channels)

    def run() -> None:
        p = op(x @ w)
        torch.autograd.backward([p, op(p[:, mid:mid + conv.out_channels])], [grad_p, grad_q])

    return run


def _graph(edge_index: torch.Tensor, n: int):
    from autogcn import Graph

    return Graph.from_edge_index(edge_index, n)


def message_passing_operator(edge_index: torch.Tensor, n: int) -> Callable:
    """AutoGCNConv's operator through PyG's ``propagate`` (gather, multiply, scatter-sum), as a
    ``MessagePassing`` subclass would compute it; ``explain_message`` applies a mask set by
    ``set_masks``. Returns ``(module, apply)``."""
    from torch_geometric.nn import MessagePassing

    class Propagation(MessagePassing):
        def __init__(self) -> None:
            super().__init__(aggr="add")

        def forward(self, h: torch.Tensor, norm: torch.Tensor) -> torch.Tensor:
            return self.propagate(edge_index, x=h, norm=norm)

        def message(self, x_j: torch.Tensor, norm: torch.Tensor) -> torch.Tensor:
            return norm.view(-1, 1) * x_j

    deg = torch.zeros(n).index_add_(0, edge_index[1], torch.ones(edge_index.shape[1]))
    s = deg.masked_fill(deg <= 0, 1).rsqrt()
    norm = s[edge_index[0]] * s[edge_index[1]]
    prop = Propagation()
    return prop, lambda h: prop(h, norm)


def _main(argv: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench conv",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--data_dir", required=True, type=Path, metavar="DIR")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's)")
    parser.add_argument("--no-compile", dest="compile", action="store_false",
                        help="skip the compiled AutoGCNConv (torch.compile, about a minute)")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.hidden < 1 or args.threads < 0:
        parser.error("--repeats and --hidden must be positive, --threads non-negative")
    if args.threads:
        torch.set_num_threads(args.threads)
    start = time.perf_counter()
    import torch_geometric.nn  # noqa: F401  (timed: the first import in this process)
    from torch_geometric.nn import GCNConv

    pyg_import = time.perf_counter() - start
    x, ei = load(args.data_dir)
    n, e, hidden = x.shape[0], ei.shape[1], args.hidden
    print(f"PubMed: {n} nodes, {e} edges, {x.shape[1]} -> {hidden} columns; torch "
          f"{torch.__version__}, {torch.get_num_threads()} thread(s); median of {args.repeats}"
          f" forward+backward calls\nimport torch_geometric: {pyg_import:.2f} s")

    def convs(cached: bool) -> tuple[AutoGCNConv, GCNConv]:
        torch.manual_seed(0)
        return AutoGCNConv(x.shape[1], hidden, cached=cached), \
            GCNConv(x.shape[1], hidden, cached=cached)

    auto, gcn = convs(True)
    steps = {"AutoGCNConv": step(auto, x, ei), "GCNConv": step(gcn, x, ei),
             "AutoGCNConv floor": floor_step(auto, x, ei)}
    ratios = [("AutoGCNConv", "GCNConv"), ("AutoGCNConv", "AutoGCNConv floor")]
    if args.compile:
        twin = AutoGCNConv(x.shape[1], hidden, cached=True)
        twin.load_state_dict(auto.state_dict())
        steps["AutoGCNConv compiled"] = step(torch.compile(twin, fullgraph=True), x, ei)
        ratios.append(("AutoGCNConv compiled", "AutoGCNConv floor"))
    report("cached", measure(steps, args.repeats), ratios)
    auto_u, gcn_u = convs(False)
    report("uncached", measure({"AutoGCNConv": step(auto_u, x, ei),
                                "GCNConv": step(gcn_u, x, ei)}, args.repeats),
           [("AutoGCNConv", "GCNConv")])

    weights_and_explain(auto, auto_u, gcn_u, x, ei, args.repeats)
    return 0


def weights_and_explain(auto: AutoGCNConv, auto_u: AutoGCNConv, gcn_u, x: torch.Tensor,
                        ei: torch.Tensor, repeats: int) -> None:
    """Learned edge weights against constant ones, and PyG's explain mask as this package
    applies it against PyG's own ``MessagePassing`` route."""
    from torch_geometric.explain.algorithm.utils import set_masks

    n, e, hidden = x.shape[0], ei.shape[1], auto.out_channels
    mask = torch.randn(e, requires_grad=True)
    constant = torch.rand(e)
    report("edge weights", measure({
        "AutoGCNConv, constant weight, cached": step(auto, x, ei, constant),
        "AutoGCNConv, constant weight, per call": step(auto_u, x, ei, constant),
        "AutoGCNConv, learned weight sigmoid(mask)": lambda: step(auto_u, x, ei,
                                                                  mask.sigmoid())(),
        "GCNConv, learned weight sigmoid(mask)": lambda: step(gcn_u, x, ei, mask.sigmoid())(),
    }, repeats), [("AutoGCNConv, learned weight sigmoid(mask)",
                        "AutoGCNConv, constant weight, per call"),
                       ("AutoGCNConv, learned weight sigmoid(mask)",
                        "AutoGCNConv, constant weight, cached"),
                       ("AutoGCNConv, learned weight sigmoid(mask)",
                        "GCNConv, learned weight sigmoid(mask)")])

    _, through_pyg = message_passing_operator(ei, n)
    explained = AutoGCNConv(x.shape[1], hidden)
    explained.load_state_dict(auto.state_dict())
    set_masks(explained, mask, ei, apply_sigmoid=True)  # the package's hooks: a learned weight
    masked_prop, masked_pyg = message_passing_operator(ei, n)
    set_masks(masked_prop, mask, ei, apply_sigmoid=True)
    report("explain (edge mask requiring a gradient) and the propagation itself", measure({
        "mask as edge weight (autogcn.explain)": step(explained, x, ei),
        "mask in MessagePassing.propagate": step(lambda h: auto.convolve(masked_pyg, h), x),
        "no mask, sparse product (AutoGCNConv)": step(auto_u, x, ei),
        "no mask, MessagePassing.propagate": step(lambda h: auto.convolve(through_pyg, h), x),
    }, repeats), [("mask in MessagePassing.propagate",
                        "mask as edge weight (autogcn.explain)"),
                       ("no mask, MessagePassing.propagate",
                        "no mask, sparse product (AutoGCNConv)")])


def main(argv: Sequence[str] | None = None) -> int:
    from train.errors import run_tool

    return run_tool(_main, argv)
