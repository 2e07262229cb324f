"""The benchmark's AutoGCN layer: the installable package's :class:`~autogcn.conv.AutoGCNConv`
(re-exported here for older imports) followed by the shared post-processing.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from autogcn.conv import FILTERS, GATE_ALIASES, GATES, MODES, AutoGCNConv
from autogcn.graph import Graph
from autogcn.propagation import normalized_adjacency
from layers.post_processing import Activation, PostProcess

__all__ = ["FILTERS", "GATES", "GATE_ALIASES", "MODES", "AutoGCNConv", "AutoGCNLayer"]


class AutoGCNLayer(AutoGCNConv):
    r""":class:`AutoGCNConv` on a :class:`~autogcn.graph.Graph`, then
    :class:`~layers.post_processing.PostProcess` (graph norm, batch norm, activation, residual,
    dropout). The convolution's parameters keep the names checkpoints store (``weight``,
    ``gamma`` or ``p``/``a``, ``bias``); the post-processing's are under ``post.`` (``+ 2·out``:
    the batch norm, always allocated as in the release).

    Args:
        in_dim, out_dim (int): input and output widths.
        activation (callable, optional): e.g. ``torch.relu``; ``None`` on an output layer.
        dropout (float): dropout applied last.
        graph_norm, batch_norm, residual (bool): the shared post-processing steps.
        K (int): the conv's ``grid_size`` (the benchmark config key ``K``; not a hop count).
        num_banks, mode, gate, filters, single_a_init: as :class:`AutoGCNConv`.

    Shapes: features :math:`(N, \text{in})` (dense or sparse COO) and optional ``snorm_n``
    :math:`(N, 1)` on a graph ``g`` of :math:`N` nodes → :math:`(N, \text{out})`.

    Example::

        >>> layer = AutoGCNLayer(8, 4)
        >>> layer(Graph([0, 1, 1, 2], [1, 0, 2, 1]), torch.randn(3, 8)).shape
        torch.Size([3, 4])
    """

    #: Dense methods that ``params.compile`` compiles (:mod:`train.compilation`).
    compiled_regions = ("_from_hops", "_gated_sum")
    #: The benchmark's layer takes no PyG explanation masks (:mod:`autogcn.explain`).
    pyg_explainable = False

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        activation: Activation = torch.relu,
        dropout: float = 0.0,
        graph_norm: bool = True,
        batch_norm: bool = True,
        residual: bool = False,
        K: int = 16,
        num_banks: int = 1,
        mode: str = "over",
        gate: str | bool = "sequential",
        filters: Sequence[str] = FILTERS,
        single_a_init: float = 0.0,
    ) -> None:
        super().__init__(in_dim, out_dim, K, num_banks, mode, gate, filters, single_a_init)
        self.in_dim, self.out_dim = in_dim, out_dim
        self.post = PostProcess(in_dim, out_dim, activation, dropout, graph_norm, batch_norm,
                                residual)

    def reset_parameters(self) -> None:
        super().reset_parameters()
        self.post.reset_parameters()

    def extra_repr(self) -> str:  # the benchmark config's names (K), as its logs print them
        return (f"{self.in_dim}, {self.out_dim}, mode={self.mode}, K={self.grid_size}, "
                f"filters={','.join(self.filters)}, gate={self.gate}, "
                f"num_banks={self.num_banks}")

    def forward(self, g: Graph, feat: torch.Tensor,
                snorm_n: torch.Tensor | None = None) -> torch.Tensor:
        """``feat`` (N, in_dim) → (N, out_dim)."""
        out = self.convolve(normalized_adjacency(g), feat)
        return self.post(feat, out, snorm_n)
