"""AutoGCN in a PyTorch Geometric model: two AutoGCNConv layers on PubMed.

    python examples/pyg_autogcn.py --root DIR [--epochs 50] [--hidden 16] [--seed 0]

``DIR`` is a PyG dataset root laid out as PyG's ``Planetoid`` expects: the eight raw Planetoid
files in ``DIR/PubMed/raw/``::

    DIR/PubMed/raw/ind.pubmed.x      ind.pubmed.tx      ind.pubmed.allx    ind.pubmed.graph
    DIR/PubMed/raw/ind.pubmed.y      ind.pubmed.ty      ind.pubmed.ally    ind.pubmed.test.index

PyG writes its processed copy to ``DIR/PubMed/processed/`` on the first run and reads it after.
Nothing is downloaded: a missing raw file is reported before anything is read or written.
Features are row-normalised (PyG's ``NormalizeFeatures``). Prints the loss and the
train/validation/test accuracy of the public split every epoch, then the test accuracy at the
epoch of best validation accuracy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project root, for layers/

from layers.autogcn_layer import AutoGCNConv  # noqa: E402

RAW_FILES = [f"ind.pubmed.{part}" for part in
             ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")]


class AutoGCN(torch.nn.Module):
    """Dropout, AutoGCNConv, ReLU, dropout, AutoGCNConv: the paper's citation-graph model."""

    def __init__(self, in_channels: int, hidden: int, out_channels: int,
                 dropout: float = 0.5) -> None:
        super().__init__()
        # cached=True: the graph is the same at every call (transductive), so the normalised
        # operator is built once.
        self.conv1 = AutoGCNConv(in_channels, hidden, cached=True)
        self.conv2 = AutoGCNConv(hidden, out_channels, cached=True)
        self.dropout = dropout

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        x = F.dropout(x, self.dropout, self.training)
        x = F.relu(self.conv1(x, edge_index))
        x = F.dropout(x, self.dropout, self.training)
        return self.conv2(x, edge_index)


def positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True, type=Path, metavar="DIR",
                        help="PyG dataset root holding PubMed/raw/ind.pubmed.* (see the top of "
                             "this file)")
    parser.add_argument("--epochs", type=positive_int, default=50)
    parser.add_argument("--hidden", type=positive_int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    raw = args.root / "PubMed" / "raw"
    missing = [name for name in RAW_FILES if not (raw / name).is_file()]
    if missing:
        print(f"error: {raw} has no {missing[0]} (put the eight raw Planetoid files "
              f"ind.pubmed.* there)", file=sys.stderr)
        return 2
    try:
        from torch_geometric.datasets import Planetoid
        from torch_geometric.transforms import NormalizeFeatures
    except ImportError:
        print("error: torch_geometric is not installed (pip install torch_geometric)",
              file=sys.stderr)
        return 2

    torch.manual_seed(args.seed)
    data = Planetoid(str(args.root), name="PubMed", transform=NormalizeFeatures())[0]
    model = AutoGCN(data.num_features, args.hidden, int(data.y.max()) + 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    best = (-1.0, 0, 0.0)  # validation accuracy, -epoch, test accuracy at that epoch
    for epoch in range(1, args.epochs + 1):
        model.train()
        optimizer.zero_grad()
        out = model(data.x, data.edge_index)
        loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            pred = model(data.x, data.edge_index).argmax(-1)
        acc = [float((pred[m] == data.y[m]).float().mean())
               for m in (data.train_mask, data.val_mask, data.test_mask)]
        print(f"epoch {epoch:3d}  loss {loss.item():.4f}  train {acc[0]:.4f}  "
              f"val {acc[1]:.4f}  test {acc[2]:.4f}")
        best = max(best, (acc[1], -epoch, acc[2]))  # ties: the earliest epoch
    print(f"best validation accuracy {best[0]:.4f} at epoch {-best[1]}: "
          f"test accuracy {best[2]:.4f}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
