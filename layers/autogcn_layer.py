"""AutoGCN: graph convolution with learned low-, middle- and high-pass filters.

:class:`AutoGCNConv` is the convolution alone (PyG-style: ``conv(x, edge_index)``);
:class:`AutoGCNLayer` is the benchmark's layer, the convolution followed by the shared
post-processing (graph norm, batch norm, activation, residual, dropout).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch
from torch import Tensor, nn

from data.graph import Graph
from layers.post_processing import PostProcess
from layers.propagation import Adjacency, as_graph, cheaper_to_propagate_first, normalized_adjacency

FILTERS = ("low", "mid", "high")
MODES = ("over", "single", "fix")
GATES = ("sequential", "parallel", "none")
# Other accepted spellings of a gate, so that configs and checkpoints that use them still run:
# the authors' boolean flag (true = their sequential gate), and names by provenance
# ("release": the authors' code, "paper": the paper's text).
GATE_ALIASES = {True: "sequential", False: "none", "release": "sequential", "paper": "parallel"}


class AutoGCNConv(nn.Module):
    r"""AutoGCN graph convolution from `Beyond Low-pass Filtering: Graph Convolutional Networks
    with Automatic Filtering <https://arxiv.org/abs/2107.04755>`__ (Wu, Pan, Long, Jiang,
    Zhang): a bank of learned low-, middle- and high-pass filters combined by a gate.

    With :math:`\tilde A = D^{-1/2} A D^{-1/2}` (see *Normalisation* below) and :math:`\lambda`
    the eigenvalues of :math:`L = I - \tilde A` — real and in :math:`[0, 2]` on an undirected
    graph; on a directed one (the superpixel kNN graphs) :math:`\tilde A` is similar to
    :math:`D^{-1} A`, so they lie in the complex disc :math:`|\lambda - 1| \le 1` and are often
    not real (``docs/data.md``) — the three filters are

    ======  ==========================  ================================
    filter  response :math:`F(\lambda)`  kernel applied to :math:`x`
    ======  ==========================  ================================
    low     :math:`p(1 - a\lambda)`      :math:`p(a\tilde A + (1-a)I)`
    high    :math:`p(a\lambda + 1 - 2a)` :math:`p(-a\tilde A + (1-a)I)`
    mid     :math:`p((\lambda-1)^2 - a)` :math:`p(\tilde A^2 - aI)`
    ======  ==========================  ================================

    with :math:`p > 0, a \in [0, 1]`, each followed by its own bias-free linear map
    :math:`W_f`. How :math:`p, a` are learned (``mode``, the config's ``opt``):

    * ``"over"`` (the paper's over-parameterisation): per filter ``K`` weights
      :math:`\gamma` (``K`` is a grid size, not a hop count), :math:`p_i = \mathrm{relu}(\gamma_i)`
      on the fixed grid :math:`\alpha = \mathrm{linspace}(-10^{-9}, 1 + 10^{-9}, K)`, giving
      :math:`p = \sum_i p_i`, :math:`a = \sum_i \alpha_i p_i / p`;
    * ``"single"`` (the paper's "w/o over"): ``p`` (relu) and ``a`` (hardtanh to [0, 1])
      directly; ``a`` starts at ``single_a_init`` — the release's 0, where hardtanh's gradient
      is zero, so it never moves;
    * ``"fix"`` (the paper's "w/o par"): ``p = 1``, ``a = 0.5``.

    The filter outputs :math:`L, M, H` are combined by the complementary ``gate``
    (:math:`\sigma` = sigmoid):

    * ``"sequential"`` (the authors' code, default): ``L ← L σ(M + H)``, then
      ``M ← M σ(L + H)``, then ``H ← H σ(L + M)``, each step seeing the values gated before it;
    * ``"parallel"`` (the paper's text): each output gated by σ of the others' ungated sum;
    * ``"none"``: the plain sum (the paper's "w/o gate"; the authors' flag did nothing).

    Outside ``"over"`` the authors' code stores the high output in the mid slot and vice
    versa; this is kept because it changes the sequential gate's order. The gated outputs of
    the ``num_banks`` filter banks (parallel, independently parameterised copies of the
    ``filters``; the config key is the authors' ``num_filters``) are summed and a bias is added.
    Nothing else: no normalisation, activation, residual or dropout (:class:`AutoGCNLayer` adds
    those). Parameters: ``num_banks · F · (in·out + K) + out`` with ``F = len(filters)``.

    The kernels commute with the linear maps, so the convolution propagates the input (sparse
    products on ``2·in`` columns) or projects it first (``4·out`` columns), whichever is
    cheaper (:func:`~layers.propagation.cheaper_to_propagate_first`); both give the same output.

    **Normalisation.** :math:`\tilde A_{vu} = s_v\, w_{u \to v}\, s_u` with
    :math:`s_v = \deg^{in}(v)^{-1/2}`: the in-degree (weighted by ``edge_weight`` when given,
    else the count of incoming edges, repeated edges included) normalises *both* sides, the
    receiver's and the sender's, as in the authors' release. No self-loops are added: the
    kernels hold their own :math:`I` terms, and a loop would move the spectrum the filters are
    defined on. A node whose in-degree is 0 gets :math:`s_v = 1`: it receives nothing, and what
    it sends is not rescaled. PyG's ``gcn_norm`` (``GCNConv``) differs in two ways: it adds
    self-loops by default, and it gives zero-in-degree nodes :math:`s_v = 0`, so their
    messages vanish. Hence :math:`\tilde A` equals
    ``gcn_norm(edge_index, edge_weight, add_self_loops=False)`` on every graph where each node
    that sends also receives (any undirected graph, e.g. Planetoid's), and differs on the edges
    out of nodes without incoming edges.

    **Cache.** ``cached=True`` keeps the normalised operator of the last graph seen, like PyG's
    ``cached=True``, and pays off when every call sees the same graph (transductive node
    classification). Unlike PyG's, it is checked, not trusted: it is reused only while the
    *same* ``edge_index`` tensor (or :class:`~data.graph.Graph`), unmodified in place (torch's
    version counter), the same ``edge_weight`` tensor and the same node count come in; any other
    graph rebuilds it, so a changing graph is never served a stale operator (it is only not
    sped up). The cache holds references to the tensors it was built from.
    ``reset_parameters()`` clears it. A :class:`~data.graph.Graph` input without
    ``edge_weight`` needs no cache: its operator is kept on the graph itself.

    Args:
        in_channels (int): input width.
        out_channels (int): output width.
        K (int): grid size of ``"over"`` mode. (default: ``16``)
        num_banks (int): parallel filter banks, each with its own copy of every filter;
            the config key ``num_filters``. (default: ``1``)
        mode (str): ``"over"``, ``"single"`` or ``"fix"``. (default: ``"over"``)
        gate (str): ``"sequential"``, ``"parallel"`` or ``"none"`` (``True``/``False``,
            ``"release"``/``"paper"`` accepted). (default: ``"sequential"``)
        filters (sequence of str): the filters used, from ``"low"``, ``"mid"``, ``"high"``
            (the paper's w/o low/mid/high ablations drop one). (default: all three)
        single_a_init (float): initial ``a`` in ``"single"`` mode. (default: ``0``)
        cached (bool): keep the normalised operator between calls (see *Cache*).
            (default: ``False``)

    Shapes:
        - input: node features :math:`(N, \text{in})` (dense or sparse COO), edge indices
          :math:`(2, E)` (or a :class:`~data.graph.Graph` of :math:`N` nodes), optional edge
          weights :math:`(E,)` (non-negative constants: no gradient flows to them)
        - output: :math:`(N, \text{out})`

    Example::

        >>> edge_index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
        >>> conv = AutoGCNConv(8, 4)
        >>> conv(torch.randn(3, 8), edge_index).shape
        torch.Size([3, 4])
        >>> conv.frequency_response(torch.linspace(0, 2, 5))["low"].shape  # (banks, points)
        torch.Size([1, 5])
    """

    #: Dense methods that ``params.compile`` compiles (:mod:`train.compilation`).
    compiled_regions = ("_from_hops", "_gated_sum")

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        K: int = 16,
        num_banks: int = 1,
        mode: str = "over",
        gate: str | bool = "sequential",
        filters: Sequence[str] = FILTERS,
        single_a_init: float = 0.0,
        cached: bool = False,
    ) -> None:
        super().__init__()
        gate = GATE_ALIASES.get(gate, gate)
        if mode not in MODES:
            raise ValueError(f"unknown AutoGCN mode {mode!r}; expected one of {MODES}")
        if gate not in GATES:
            raise ValueError(f"unknown AutoGCN gate {gate!r}; expected one of {GATES}")
        if not filters or not set(filters) <= set(FILTERS) or len(set(filters)) != len(filters):
            raise ValueError(f"filters must be distinct names from {FILTERS}, got {list(filters)}")
        self.in_dim, self.out_dim = in_channels, out_channels
        self.K, self.num_banks, self.mode, self.gate = K, num_banks, mode, gate
        self.filters = tuple(f for f in FILTERS if f in filters)  # canonical order
        self.single_a_init, self.cached = single_a_init, cached
        n_f = len(self.filters)

        self.weight = nn.Parameter(torch.empty(num_banks, n_f, in_channels, out_channels))
        if mode == "over":
            self.gamma = nn.Parameter(torch.empty(num_banks, n_f, K))
            # the release's float32 grid; a constant, hence a buffer outside the state dict
            grid = torch.linspace(-1e-9, 1 + 1e-9, K, dtype=torch.float64).float()
            self.register_buffer("alpha", grid, persistent=False)
        elif mode == "single":
            self.p = nn.Parameter(torch.empty(num_banks, n_f))
            self.a = nn.Parameter(torch.empty(num_banks, n_f))
        self.bias = nn.Parameter(torch.empty(out_channels))
        # gate slots (indices into self.filters): mid and high swap outside "over" (see above)
        order = FILTERS if mode == "over" else ("low", "high", "mid")
        self._slot_order = [self.filters.index(f) for f in order if f in self.filters]
        self.order = "auto"  # "propagate" / "project" force a computation order (tests)
        self._cache: tuple | None = None
        AutoGCNConv.reset_parameters(self)

    @property
    def in_channels(self) -> int:
        return self.in_dim

    @property
    def out_channels(self) -> int:
        return self.out_dim

    def reset_parameters(self) -> None:
        # nn.Linear's default weight distribution, U(-1/sqrt(in), 1/sqrt(in)), as the release
        bound = 1.0 / math.sqrt(self.in_dim)
        nn.init.uniform_(self.weight, -bound, bound)
        if self.mode == "over":
            nn.init.constant_(self.gamma, 1.0 / self.K)
        elif self.mode == "single":
            nn.init.ones_(self.p)
            nn.init.constant_(self.a, self.single_a_init)
        nn.init.zeros_(self.bias)
        self._cache = None

    def forward(self, x: Tensor, edge_index: Tensor | Graph,
                edge_weight: Tensor | None = None) -> Tensor:
        """``x`` (N, in) on the graph ``edge_index`` (2, E) or a ``Graph`` → (N, out)."""
        op = self.operator(edge_index, x.shape[0], edge_weight)
        return self.convolve(op, x)

    def operator(self, edge_index: Tensor | Graph, num_nodes: int,
                 edge_weight: Tensor | None = None) -> Adjacency:
        r"""The normalised :math:`\tilde A` of the graph (see *Normalisation* and *Cache*)."""
        key = (edge_index, getattr(edge_index, "_version", None), edge_weight,
               None if edge_weight is None else edge_weight._version, num_nodes)
        if self._cache is not None and _same_key(self._cache[0], key):
            return self._cache[1]
        op = normalized_adjacency(as_graph(edge_index, num_nodes), "in", edge_weight)
        if self.cached:
            self._cache = (key, op)
        return op

    def convolve(self, op: Adjacency, x: Tensor) -> Tensor:
        """The gated, summed filter outputs plus the bias, with ``op`` = :math:`\\tilde A`."""
        n_mid = 1 if "mid" in self.filters else 0
        if cheaper_to_propagate_first(x, (1 + n_mid) * self.in_dim,
                                      self.num_banks * (len(self.filters) + n_mid) * self.out_dim,
                                      self.order):
            return self._from_hops(*self._hops(op, x))
        return self._gated_sum(self._projected_outputs(op, x))

    def _hops(self, op: Adjacency, x: Tensor) -> tuple[Tensor, ...]:
        """``x, Ãx`` and, when the mid-pass filter is used, ``Ã²x``."""
        h1 = op(x)
        return (x, h1, op(h1)) if "mid" in self.filters else (x, h1)

    def coefficients(self) -> torch.Tensor:
        """``(banks, filters, 3)``: filter ``f``'s input is ``c0·x + c1·Ãx + c2·Ã²x``."""
        if self.mode == "over":
            p = torch.relu(self.gamma)
            total, c = p.sum(-1), p @ self.alpha  # p and p·a of the equivalent single filter
        elif self.mode == "single":
            total = torch.relu(self.p)
            c = total * nn.functional.hardtanh(self.a, 0.0, 1.0)
        else:
            total = self.weight.new_ones(self.num_banks, len(self.filters))
            c = 0.5 * total
        zero = torch.zeros_like(c)
        rows = {"low": (total - c, c, zero), "high": (total - c, -c, zero),
                "mid": (-c, zero, total)}
        return torch.stack([torch.stack(rows[f], -1)[:, i] for i, f in enumerate(self.filters)],
                           dim=1)

    def frequency_response(self, lam: torch.Tensor) -> dict[str, torch.Tensor]:
        """F(λ) of each filter, ``(banks, len(lam))`` per filter name, from the current weights."""
        coef = self.coefficients().detach()
        mu = 1.0 - lam.to(coef)  # the eigenvalue of Ã
        resp = coef @ torch.stack([torch.ones_like(mu), mu, mu * mu])
        return {f: resp[:, i] for i, f in enumerate(self.filters)}

    def filtered_inputs(self, g: Graph, x: torch.Tensor) -> torch.Tensor:
        """The kernels applied to ``x``, before the linear maps: ``(banks, filters, N, in)``."""
        hops = self._hops(normalized_adjacency(g), x)
        coef = self.coefficients()[..., : len(hops)]
        return combine(coef.reshape(-1, len(hops)), hops).view(*coef.shape[:2], *x.shape)

    def _from_hops(self, *hops: Tensor) -> Tensor:
        """From the propagated inputs ``x, Ãx[, Ã²x]`` on: the filter inputs, the linear maps,
        the gate, the sum and the bias. Dense throughout: a compiled region."""
        coef = self.coefficients().reshape(-1, 3)[:, : len(hops)]
        inputs = combine(coef, hops)  # (banks·filters, N, in)
        outputs = torch.bmm(inputs, self.weight.reshape(-1, self.in_dim, self.out_dim))
        return self._gated_sum(outputs)

    def _projected_outputs(self, op: Adjacency, x: Tensor) -> Tensor:
        """Every filter's output, ``(banks·filters, N, out)``, bank-major, projecting all
        filters in one product, then propagating ``out`` columns per filter."""
        coef = self.coefficients().reshape(-1, 3)
        w = self.weight.permute(2, 0, 1, 3).reshape(self.in_dim, -1)
        y = torch.sparse.mm(x, w) if x.is_sparse else x @ w
        py = op(y)
        n_j = coef.shape[0]
        ys = y.view(-1, n_j, self.out_dim).unbind(1)  # unbind: one copy in backward, not n_j
        pys = py.view(-1, n_j, self.out_dim).unbind(1)
        outs = []
        for j, name in enumerate(self.filters * self.num_banks):
            if name == "mid":
                outs.append(torch.addcmul(ys[j] * coef[j, 0], op(pys[j]), coef[j, 2]))
            else:
                outs.append(torch.addcmul(ys[j] * coef[j, 0], pys[j], coef[j, 1]))
        return torch.stack(outs)

    def _gated_sum(self, stack: Tensor) -> Tensor:
        """The gated, summed filter outputs plus the bias (dense: a compiled region)."""
        return self._gate_and_sum(stack) + self.bias

    def _gate_and_sum(self, stack: torch.Tensor) -> torch.Tensor:
        """Gate each bank's filter outputs and sum everything."""
        n_f = len(self.filters)
        banks = [[b * n_f + i for i in self._slot_order] for b in range(self.num_banks)]
        if self.gate == "none" or n_f == 1:
            return stack.sum(0)
        parts = stack.unbind(0)
        gated = [y for bank in banks for y in gate([parts[i] for i in bank], self.gate)]
        return _sum_of_others(gated, -1)

    def __getstate__(self) -> dict:  # copies and pickles rebuild the operator where used
        return {**self.__dict__, "_cache": None}

    def extra_repr(self) -> str:
        cached = ", cached=True" if self.cached else ""
        return (f"{self.in_dim}, {self.out_dim}, mode={self.mode}, K={self.K}, "
                f"filters={','.join(self.filters)}, gate={self.gate}, "
                f"num_banks={self.num_banks}{cached}")


def _same_key(a: tuple, b: tuple) -> bool:
    """Cache keys match: the same objects (``is``), at the same versions and node count."""
    return all(x is y if isinstance(x, (Tensor, Graph)) else x == y
               for x, y in zip(a, b, strict=True))


class AutoGCNLayer(AutoGCNConv):
    r"""The benchmark's AutoGCN layer: :class:`AutoGCNConv` on a :class:`~data.graph.Graph`,
    then :class:`~layers.post_processing.PostProcess` (graph norm, batch norm, activation,
    residual, dropout).

    The convolution's parameters have the names that checkpoints store (``weight``, ``gamma``
    or ``p``/``a``, ``bias``), which are also an :class:`AutoGCNConv`'s; the post-processing's
    are under ``post.``.
    Parameters: those of the convolution, + ``2·out`` for the batch norm (always allocated, as
    in the release).

    Args:
        in_dim (int): input width.
        out_dim (int): output width.
        activation (callable, optional): e.g. ``torch.relu``; ``None`` on an output layer.
        dropout (float): dropout applied last.
        graph_norm, batch_norm, residual (bool): the shared post-processing steps.
        K, num_banks, mode, gate, filters, single_a_init: as :class:`AutoGCNConv`.

    Shapes:
        - input: graph ``g`` with :math:`N` nodes, features :math:`(N, \text{in})` (dense or
          sparse COO), optional ``snorm_n`` :math:`(N, 1)`
        - output: :math:`(N, \text{out})`

    Example::

        >>> g = Graph([0, 1, 1, 2], [1, 0, 2, 1])
        >>> layer = AutoGCNLayer(8, 4)
        >>> layer(g, torch.randn(3, 8)).shape
        torch.Size([3, 4])
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        activation: Callable[[torch.Tensor], torch.Tensor] | None = torch.relu,
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
        self.post = PostProcess(in_dim, out_dim, activation, dropout, graph_norm, batch_norm,
                                residual)

    def reset_parameters(self) -> None:
        super().reset_parameters()
        self.post.reset_parameters()

    def forward(self, g: Graph, feat: torch.Tensor,
                snorm_n: torch.Tensor | None = None) -> torch.Tensor:
        """``feat`` (N, in_dim) → (N, out_dim)."""
        out = self.convolve(normalized_adjacency(g), feat)
        return self.post(feat, out, snorm_n)


def combine(coef: Tensor, hops: Sequence[Tensor]) -> Tensor:
    """``sum_k coef[:, k] · hops[k]``, shape ``(len(coef), *hops[0].shape)``: the filter inputs.

    Under the compiler a sum of broadcast products, which it fuses into one pass that writes
    the result once; in eager mode one einsum (a batched product), which beats the ``2k - 1``
    separate passes of the same sum.
    """
    if _compiling():
        return sum(coef[:, k, None, None] * h for k, h in enumerate(hops))
    return torch.einsum("jk,knd->jnd", coef, torch.stack(list(hops)))


def _compiling() -> bool:
    is_compiling = getattr(torch.compiler, "is_compiling", None)  # torch >= 2.3
    return bool(is_compiling and is_compiling())


def gate(slots: list[torch.Tensor], kind: str) -> list[torch.Tensor]:
    """The complementary gate on filter outputs given in slot order (see the class docstring)."""
    if kind == "none" or len(slots) == 1:
        return slots
    if kind == "parallel":
        return [s * torch.sigmoid(_sum_of_others(slots, i)) for i, s in enumerate(slots)]
    outs = list(slots)  # sequential: each step sees the slots gated before it
    for i in range(len(outs)):
        outs[i] = outs[i] * torch.sigmoid(_sum_of_others(outs, i))
    return outs


def _sum_of_others(values: list[torch.Tensor], i: int) -> torch.Tensor:
    rest = [v for j, v in enumerate(values) if j != i]
    total = rest[0]
    for v in rest[1:]:  # no "0 +" start: that would cost a full pass
        total = total + v
    return total
