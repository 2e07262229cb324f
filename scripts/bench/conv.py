"""AutoGCNConv's forward and backward on PubMed beside PyG's GCNConv and its own floor, with a
learned edge weight, and under PyG's explanation masks (docs/performance.md, docs/layer.md)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from train.interrupts import startup

with startup():
    import torch

    from autogcn import AutoGCNConv
    from autogcn.propagation import normalized_adjacency
    from scripts import cli
    from scripts.bench.timing import interleave, new_parser

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


def report(title: str, steps: dict[str, Step], repeats: int,
           ratios: Sequence[tuple[str, str]]) -> None:
    """Time ``steps`` interleaved (two untimed calls each); print their medians and ratios."""
    medians = interleave(steps, repeats, torch.device("cpu"), untimed=2).medians()
    print(f"\n{title}")
    for name, t in medians.items():
        print(f"  {name:<44} {1e3 * t:8.2f} ms")
    for a, b in ratios:
        print(f"  {a} / {b}: {medians[a] / medians[b]:.2f}")


def floor_step(conv: AutoGCNConv, x: torch.Tensor, edge_index: torch.Tensor) -> Step:
    """AutoGCNConv's unavoidable products, on its own operator: projecting first (500 input
    columns), the three filter projections as one product with ``3·hidden`` columns, ``Ã`` on
    those, ``Ã`` again on the mid filter's, and their backward."""
    from autogcn import Graph

    op = normalized_adjacency(Graph.from_edge_index(edge_index, x.shape[0]))
    w = conv.weight.detach().permute(2, 0, 1, 3).reshape(x.shape[1], -1).requires_grad_()
    mid = conv.filters.index("mid") * conv.out_channels
    grad_p = torch.randn(x.shape[0], w.shape[1])
    grad_q = torch.randn(x.shape[0], conv.out_channels)

    def run() -> None:
        p = op(x @ w)
        torch.autograd.backward([p, op(p[:, mid:mid + conv.out_channels])], [grad_p, grad_q])

    return run


def message_passing_operator(edge_index: torch.Tensor, n: int) -> tuple[torch.nn.Module, Callable]:
    """AutoGCNConv's operator through PyG's ``propagate`` (gather, multiply, scatter-sum), as a
    ``MessagePassing`` subclass would compute it; ``explain_message`` applies a mask set by
    ``set_masks``. Returns ``(module, apply)``."""
    from torch_geometric.nn import MessagePassing
    from torch_geometric.nn.conv.gcn_conv import gcn_norm

    class Propagation(MessagePassing):
        def __init__(self) -> None:
            super().__init__(aggr="add")

        def forward(self, h: torch.Tensor, norm: torch.Tensor) -> torch.Tensor:
            return self.propagate(edge_index, x=h, norm=norm)

        def message(self, x_j: torch.Tensor, norm: torch.Tensor) -> torch.Tensor:
            return norm.view(-1, 1) * x_j

    _, norm = gcn_norm(edge_index, num_nodes=n, add_self_loops=False)  # D^-1/2 A D^-1/2
    prop = Propagation()
    return prop, lambda h: prop(h, norm)


def main(argv: Sequence[str] | None = None) -> int:
    parser = new_parser("conv", __doc__, "threads")
    parser.add_argument("--data_dir", required=True, type=cli.data_folder, metavar="DIR")
    parser.add_argument("--repeats", type=cli.int_in(1, 10_000), default=20)
    parser.add_argument("--hidden", type=cli.int_in(1, 100_000), default=64)
    parser.add_argument("--no-compile", dest="compile", action="store_false",
                        help="skip the compiled AutoGCNConv (torch.compile, about a minute)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    start = time.perf_counter()
    import torch_geometric.nn  # noqa: F401  (timed: the first import in this process)
    from torch_geometric.nn import GCNConv

    pyg_import = time.perf_counter() - start
    x, ei = load(args.data_dir)
    print(f"PubMed: {x.shape[0]} nodes, {ei.shape[1]} edges, {x.shape[1]} -> {args.hidden} "
          f"columns; torch {torch.__version__}, {torch.get_num_threads()} thread(s); median of "
          f"{args.repeats} forward+backward calls\nimport torch_geometric: {pyg_import:.2f} s")

    def convs(cached: bool) -> tuple[AutoGCNConv, GCNConv]:
        torch.manual_seed(0)
        return AutoGCNConv(x.shape[1], args.hidden, cached=cached), \
            GCNConv(x.shape[1], args.hidden, cached=cached)

    auto, gcn = convs(True)
    steps = {"AutoGCNConv": step(auto, x, ei), "GCNConv": step(gcn, x, ei),
             "AutoGCNConv floor": floor_step(auto, x, ei)}
    ratios = [("AutoGCNConv", "GCNConv"), ("AutoGCNConv", "AutoGCNConv floor")]
    if args.compile:
        twin = AutoGCNConv(x.shape[1], args.hidden, cached=True)
        twin.load_state_dict(auto.state_dict())
        steps["AutoGCNConv compiled"] = step(torch.compile(twin, fullgraph=True), x, ei)
        ratios.append(("AutoGCNConv compiled", "AutoGCNConv floor"))
    report("cached", steps, args.repeats, ratios)
    auto_u, gcn_u = convs(False)
    report("uncached", {"AutoGCNConv": step(auto_u, x, ei), "GCNConv": step(gcn_u, x, ei)},
           args.repeats, [("AutoGCNConv", "GCNConv")])
    weights_and_explain(auto, auto_u, gcn_u, x, ei, args.repeats)
    return 0


def weights_and_explain(auto: AutoGCNConv, auto_u: AutoGCNConv, gcn_u: torch.nn.Module,
                        x: torch.Tensor, ei: torch.Tensor, repeats: int) -> None:
    """Learned edge weights against constant ones, and PyG's explain mask as this package
    applies it against PyG's own ``MessagePassing`` route."""
    from torch_geometric.explain.algorithm.utils import set_masks

    mask = torch.randn(ei.shape[1], requires_grad=True)
    constant = torch.rand(ei.shape[1])
    learned = "AutoGCNConv, learned weight sigmoid(mask)"
    others = {"AutoGCNConv, constant weight, cached": step(auto, x, ei, constant),
              "AutoGCNConv, constant weight, per call": step(auto_u, x, ei, constant),
              "GCNConv, learned weight sigmoid(mask)": lambda: step(gcn_u, x, ei,
                                                                    mask.sigmoid())()}
    report("edge weights", {learned: lambda: step(auto_u, x, ei, mask.sigmoid())(), **others},
           repeats, [(learned, other) for other in others])

    _, through_pyg = message_passing_operator(ei, x.shape[0])
    explained = AutoGCNConv(x.shape[1], auto.out_channels)
    explained.load_state_dict(auto.state_dict())
    set_masks(explained, mask, ei, apply_sigmoid=True)  # the package's hooks: a learned weight
    masked_prop, masked_pyg = message_passing_operator(ei, x.shape[0])
    set_masks(masked_prop, mask, ei, apply_sigmoid=True)
    names = ("mask as edge weight (autogcn.explain)", "mask in MessagePassing.propagate",
             "no mask, sparse product (AutoGCNConv)", "no mask, MessagePassing.propagate")
    runs = (step(explained, x, ei), step(lambda h: auto.convolve(masked_pyg, h), x),
            step(auto_u, x, ei), step(lambda h: auto.convolve(through_pyg, h), x))
    report("explain (edge mask requiring a gradient) and the propagation itself",
           dict(zip(names, runs, strict=True)), repeats,
           [(names[1], names[0]), (names[3], names[2])])
