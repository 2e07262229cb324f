"""AutoGCN in a PyTorch Geometric model: AutoGCNConv beside GCNConv on PubMed, same split.

    python -m examples.pyg_autogcn --root DIR [--split random|public] [--epochs 200]
                                   [--hidden 16] [--seed 0] [--log-every 20] [--add-self-loops]
                                   [--learn-edge-weights] [--explain NODE [--explain-epochs 100]]

``DIR`` holds PubMed's eight raw Planetoid files in ``DIR/PubMed/raw/``; the settings, the
options and measured results are in ``docs/layer.md`` (*The example*). Run from a checkout's
root, or anywhere after ``pip install .``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F

try:
    from autogcn import AutoGCNConv
except ImportError:  # neither installed nor run from the checkout's root
    sys.exit("error: autogcn is not importable: pip install . in the repository, or run this "
             "example from its root as python -m examples.pyg_autogcn")

RAW_FILES = [f"ind.pubmed.{part}" for part in
             ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")]


class TwoLayers(torch.nn.Module):
    """Dropout, conv, ReLU, dropout, conv: the citation-graph model of GCN and AutoGCN."""

    def __init__(self, conv1: torch.nn.Module, conv2: torch.nn.Module,
                 learned_edges: int | None = None, dropout: float = 0.5) -> None:
        super().__init__()
        self.conv1, self.conv2, self.dropout = conv1, conv2, dropout
        # learned_edges: one logit per edge, sigmoid(logit) the edge weight (starts at 0.5)
        self.edge_logits = None if learned_edges is None else \
            torch.nn.Parameter(torch.zeros(learned_edges))

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        weight = None if self.edge_logits is None else torch.sigmoid(self.edge_logits)
        x = F.dropout(x, self.dropout, self.training)
        x = F.relu(self.conv1(x, edge_index, weight))
        x = F.dropout(x, self.dropout, self.training)
        return self.conv2(x, edge_index, weight)


def build_model(name: str, in_channels: int, hidden: int, classes: int,
                self_loops: bool = False, learned_edges: int | None = None) -> torch.nn.Module:
    """The two-layer model of ``name``'s conv; ``cached=True``: the graph is the same at every
    call (transductive), so each conv builds its normalised operator once (AutoGCNConv's cache
    serves only constant weights; GCNConv's would keep the first call's learned weights)."""
    if name == "AutoGCNConv":
        convs = [AutoGCNConv(a, b, cached=True, add_self_loops=self_loops)
                 for a, b in ((in_channels, hidden), (hidden, classes))]
    else:
        from torch_geometric.nn import GCNConv

        convs = [GCNConv(a, b, cached=learned_edges is None)
                 for a, b in ((in_channels, hidden), (hidden, classes))]
    return TwoLayers(*convs, learned_edges)


def explain(model: torch.nn.Module, data, node: int, epochs: int) -> None:
    """PyG's GNNExplainer on ``model``'s prediction for ``node``: the edges it weighs most."""
    from torch_geometric.explain import Explainer, GNNExplainer

    explainer = Explainer(model, algorithm=GNNExplainer(epochs=epochs), explanation_type="model",
                          edge_mask_type="object", node_mask_type="attributes",
                          model_config={"mode": "multiclass_classification",
                                        "task_level": "node", "return_type": "raw"})
    mask = explainer(data.x, data.edge_index, index=node).edge_mask
    top = torch.topk(mask, min(5, mask.numel()))
    edges = ", ".join(f"{int(data.edge_index[0, e])}->{int(data.edge_index[1, e])} ({float(v):.3f})"
                      for v, e in zip(top.values, top.indices, strict=True))
    print(f"AutoGCNConv  GNNExplainer on node {node} ({epochs} epochs): "
          f"{int((mask > 0).sum())} of {mask.numel()} edges weighed; top: {edges}")


def random_split(num_nodes: int, seed: int) -> tuple[torch.Tensor, ...]:
    """Train/validation/test masks of a random 60/20/20 split of the nodes."""
    order = torch.randperm(num_nodes, generator=torch.Generator().manual_seed(seed))
    parts = order.tensor_split([int(0.6 * num_nodes), int(0.8 * num_nodes)])
    return tuple(torch.zeros(num_nodes, dtype=torch.bool).index_fill_(0, part, True)
                 for part in parts)


def train(name: str, model: torch.nn.Module, data, masks: tuple[torch.Tensor, ...],
          epochs: int, log_every: int) -> tuple[float, int, float]:
    """Full-batch training; returns (best validation accuracy, its epoch, test accuracy)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    train_mask = masks[0]
    best = (-1.0, 0, 0.0)  # validation accuracy, -epoch, test accuracy at that epoch
    for epoch in range(1, epochs + 1):
        model.train()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data.x, data.edge_index)[train_mask], data.y[train_mask])
        loss.backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            pred = model(data.x, data.edge_index).argmax(-1)
        acc = [float((pred[m] == data.y[m]).float().mean()) for m in masks]
        if epoch % log_every == 0 or epoch == epochs:
            print(f"{name:<12} epoch {epoch:3d}  loss {loss.item():.4f}  train {acc[0]:.4f}  "
                  f"val {acc[1]:.4f}  test {acc[2]:.4f}")
        best = max(best, (acc[1], -epoch, acc[2]))  # ties: the earliest epoch
    return best[0], -best[1], best[2]


def positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True, type=Path, metavar="DIR",
                        help="PyG dataset root holding PubMed/raw/ind.pubmed.*")
    parser.add_argument("--split", choices=("random", "public"), default="random",
                        help="random 60/20/20 (default) or Planetoid's public split")
    parser.add_argument("--epochs", type=positive_int, default=200)
    parser.add_argument("--hidden", type=positive_int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log-every", type=positive_int, default=20)
    parser.add_argument("--add-self-loops", action="store_true",
                        help="give AutoGCNConv self-loops (the paper's layer has none)")
    parser.add_argument("--learn-edge-weights", action="store_true",
                        help="learn one weight per edge, sigmoid(logit), in both models")
    parser.add_argument("--explain", type=int, metavar="NODE",
                        help="explain the AutoGCNConv model's prediction for node NODE with "
                             "PyG's GNNExplainer")
    parser.add_argument("--explain-epochs", type=positive_int, default=100)
    return parser.parse_args(argv)


def load_pubmed(root: Path):
    """PubMed through PyG's Planetoid, or an ``error: ...`` line for the user."""
    raw = root / "PubMed" / "raw"
    missing = [name for name in RAW_FILES if not (raw / name).is_file()]
    if missing:
        return f"{raw} has no {missing[0]} (put the eight raw Planetoid files ind.pubmed.* there)"
    try:
        with warnings.catch_warnings():  # PyG's import notes torch.jit's deprecation
            warnings.simplefilter("ignore", FutureWarning)
            from torch_geometric.datasets import Planetoid
            from torch_geometric.transforms import NormalizeFeatures
    except ImportError:
        return "torch_geometric is not installed (pip install torch_geometric)"
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # PyG's "Processing..." notes
            return Planetoid(str(root), name="PubMed", transform=NormalizeFeatures())[0]
    except Exception as err:  # any failure to parse the user's files: reported, not raised
        detail = str(err).strip().splitlines()[0] if str(err).strip() else ""
        return (f"cannot read the PubMed files in {raw} (truncated or not Planetoid's "
                f"ind.pubmed.* files?): {type(err).__name__}{': ' + detail if detail else ''}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    data = load_pubmed(args.root)
    if isinstance(data, str):
        print(f"error: {data}", file=sys.stderr)
        return 2
    if args.explain is not None and not 0 <= args.explain < data.num_nodes:
        print(f"error: --explain {args.explain}: PubMed's nodes are 0 to {data.num_nodes - 1}",
              file=sys.stderr)
        return 2
    if args.split == "public":
        masks = (data.train_mask, data.val_mask, data.test_mask)
    else:
        masks = random_split(data.num_nodes, args.seed)
    loops = ", AutoGCNConv with self-loops" if args.add_self_loops else ""
    loops += ", learned edge weights" if args.learn_edge_weights else ""
    print(f"PubMed, {args.split} split: {int(masks[0].sum())} train, {int(masks[1].sum())} "
          f"validation, {int(masks[2].sum())} test nodes; {args.epochs} epochs, seed "
          f"{args.seed}{loops}")
    results, models = {}, {}
    for name in ("AutoGCNConv", "GCNConv"):
        torch.manual_seed(args.seed)
        model = build_model(name, data.num_features, args.hidden, int(data.y.max()) + 1,
                            args.add_self_loops,
                            data.edge_index.shape[1] if args.learn_edge_weights else None)
        results[name] = train(name, model, data, masks, args.epochs, args.log_every)
        models[name] = model
    for name, (val, epoch, test) in results.items():
        print(f"{name:<12} best validation accuracy {val:.4f} at epoch {epoch}: "
              f"test accuracy {test:.4f}")
    if args.explain is not None:
        explain(models["AutoGCNConv"].eval(), data, args.explain, args.explain_epochs)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
