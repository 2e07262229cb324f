"""AutoGCN: graph convolution with learned low-, middle- and high-pass filters, as a PyG-style
module, ``conv(x, edge_index)``. The benchmark's layer (:class:`layers.autogcn_layer.AutoGCNLayer`)
is this convolution followed by its shared post-processing."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor, nn

from autogcn.explain import Explainable
from autogcn.graph import Graph, compiling
from autogcn.inputs import GraphInput, check_features, check_float, check_size, to_graph
from autogcn.propagation import (
    Adjacency,
    cheaper_to_propagate_first,
    check_edge_weight,
    constant_unless_learned,
    learns,
    normalized_adjacency,
)

FILTERS = ("low", "mid", "high")
MODES = ("over", "single", "fix")
GATES = ("sequential", "parallel", "none")
# Other accepted spellings of a gate, so that configs and checkpoints that use them still run:
# the authors' boolean flag (true = their sequential gate), and names by provenance
# ("release": the authors' code, "paper": the paper's text).
GATE_ALIASES = {True: "sequential", False: "none", "release": "sequential", "paper": "parallel"}
#: The largest over-parameterisation grid: far above the paper's (16), and a bound that stops a
#: mistyped size before it asks the allocator for gigabytes.
MAX_GRID_SIZE = 2**16


class AutoGCNConv(Explainable):
    r"""AutoGCN graph convolution from `Beyond Low-pass Filtering: Graph Convolutional Networks
    with Automatic Filtering <https://arxiv.org/abs/2107.04755>`__ (Wu, Pan, Long, Jiang,
    Zhang): a bank of learned low-, middle- and high-pass filters combined by a gate.

    With :math:`\tilde A = D^{-1/2} A D^{-1/2}` (*Normalisation* below) and :math:`\lambda`
    the eigenvalues of :math:`L = I - \tilde A` (in :math:`[0, 2]` on an undirected graph, in
    the disc :math:`|\lambda - 1| \le 1` on a directed one, ``docs/data.md``), the filters are

    ======  ==========================  ================================
    filter  response :math:`F(\lambda)`  kernel applied to :math:`x`
    ======  ==========================  ================================
    low     :math:`p(1 - a\lambda)`      :math:`p(a\tilde A + (1-a)I)`
    high    :math:`p(a\lambda + 1 - 2a)` :math:`p(-a\tilde A + (1-a)I)`
    mid     :math:`p((\lambda-1)^2 - a)` :math:`p(\tilde A^2 - aI)`
    ======  ==========================  ================================

    with :math:`p > 0, a \in [0, 1]`, each followed by its own bias-free linear map
    :math:`W_f`. How :math:`p, a` are learned (``mode``, the config's ``opt``):

    * ``"over"`` (the paper's over-parameterisation): per filter ``grid_size`` (:math:`G`)
      weights :math:`\gamma`, :math:`p_i = \mathrm{relu}(\gamma_i)` on the fixed grid
      :math:`\alpha = \mathrm{linspace}(-10^{-9}, 1 + 10^{-9}, G)`, giving
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
    Nothing else: no normalisation, activation, residual or dropout (the benchmark's
    ``AutoGCNLayer`` adds those). Parameters: ``num_banks · F · (in·out + G) + out`` with
    ``F = len(filters)`` (``+ out`` only with ``bias``).

    The kernels commute with the linear maps, so the convolution propagates the input (sparse
    products on ``2·in`` columns) or projects it first (``4·out`` columns), whichever is
    cheaper (:func:`~autogcn.propagation.cheaper_to_propagate_first`); both give the same output.

    Normalisation (defaults ``normalize=True, add_self_loops=False``, the authors' release):
    :math:`\tilde A_{vu} = s_v\, w_{u \to v}\, s_u`, :math:`s_v = \deg^{in}(v)^{-1/2}` (weighted by
    ``edge_weight``; 1 where the in-degree is 0), no self-loops: the kernels hold their own
    :math:`I`. How this differs from PyG's ``gcn_norm``, the graph inputs, the checks, the cache
    and learned edge weights: ``docs/layer.md``.

    Args:
        in_channels (int): input width; ``-1`` takes it from the first input (the weights are
            made then, as PyG's lazy modules).
        out_channels (int): output width.
        grid_size (int): size of the over-parameterisation grid in ``"over"`` mode (the
            paper's and the config's ``K``; not a hop count), at most
            :data:`MAX_GRID_SIZE`. (default: ``16``)
        num_banks (int): parallel filter banks, each with its own copy of every filter;
            the config key ``num_filters``. (default: ``1``)
        mode (str): ``"over"``, ``"single"`` or ``"fix"``. (default: ``"over"``)
        gate (str): ``"sequential"``, ``"parallel"`` or ``"none"`` (``True``/``False``,
            ``"release"``/``"paper"`` accepted). (default: ``"sequential"``)
        filters (sequence of str): the filters used, from ``"low"``, ``"mid"``, ``"high"``
            (the paper's w/o low/mid/high ablations drop one). (default: all three)
        single_a_init (float): initial ``a`` in ``"single"`` mode. (default: ``0``)
        cached (bool): keep the normalised operator while the same graph comes in
            (default: ``False``).
        add_self_loops (bool): add a self-loop of weight 1 to every node. (default: ``False``,
            the paper's layer)
        normalize (bool): normalise the adjacency by the in-degrees. (default: ``True``)
        bias (bool): add a learned bias. (default: ``True``)

    Shapes:
        - input: node features :math:`(N, \text{in})` (dense or sparse COO), the graph
          (``edge_index``, ``adj_t`` or a ``Graph``), optional edge weights :math:`(E,)`
        - output: :math:`(N, \text{out})`

    Example::

        >>> edge_index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
        >>> conv = AutoGCNConv(8, 4)
        >>> conv
        AutoGCNConv(8, 4, grid_size=16, mode=over, filters=low,mid,high, gate=sequential)
        >>> conv(torch.randn(3, 8), edge_index).shape
        torch.Size([3, 4])
        >>> conv.frequency_response(torch.linspace(0, 2, 5))["low"].shape  # (banks, points)
        torch.Size([1, 5])
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        grid_size: int = 16,
        num_banks: int = 1,
        mode: str = "over",
        gate: str | bool = "sequential",
        filters: Sequence[str] = FILTERS,
        single_a_init: float = 0.0,
        cached: bool = False,
        add_self_loops: bool = False,
        normalize: bool = True,
        bias: bool = True,
    ) -> None:
        super().__init__()
        check_size("in_channels", in_channels, lazy=True)
        check_size("out_channels", out_channels)
        check_size("grid_size", grid_size, MAX_GRID_SIZE)
        check_size("num_banks", num_banks)
        single_a_init = check_float("single_a_init", single_a_init)
        gate = GATE_ALIASES.get(gate, gate)
        if mode not in MODES:
            raise ValueError(f"unknown AutoGCN mode {mode!r}; expected one of {MODES}")
        if gate not in GATES:
            raise ValueError(f"unknown AutoGCN gate {gate!r}; expected one of {GATES}")
        if not filters or not set(filters) <= set(FILTERS) or len(set(filters)) != len(filters):
            raise ValueError(f"filters must be distinct names from {FILTERS}, got {list(filters)}")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.grid_size, self.num_banks, self.mode, self.gate = grid_size, num_banks, mode, gate
        self.filters = tuple(f for f in FILTERS if f in filters)  # canonical order
        self.single_a_init, self.cached = single_a_init, cached
        self.add_self_loops, self.normalize = add_self_loops, normalize
        n_f = len(self.filters)

        self.weight = nn.Parameter(torch.empty(num_banks, n_f, in_channels, out_channels)) \
            if in_channels != -1 else nn.UninitializedParameter()
        if mode == "over":
            self.gamma = nn.Parameter(torch.empty(num_banks, n_f, grid_size))
            # the release's float32 grid; a constant, hence a buffer outside the state dict
            grid = torch.linspace(-1e-9, 1 + 1e-9, grid_size, dtype=torch.float64).float()
            self.register_buffer("alpha", grid, persistent=False)
        elif mode == "single":
            self.p = nn.Parameter(torch.empty(num_banks, n_f))
            self.a = nn.Parameter(torch.empty(num_banks, n_f))
        self.bias = nn.Parameter(torch.empty(out_channels)) if bias else None
        # gate slots (indices into self.filters): mid and high swap outside "over" (see above)
        order = FILTERS if mode == "over" else ("low", "high", "mid")
        self._slot_order = [self.filters.index(f) for f in order if f in self.filters]
        self.order = "auto"  # "propagate" / "project" force a computation order (tests)
        self._cache: tuple | None = None
        AutoGCNConv.reset_parameters(self)
        self.attach_explain_hooks()

    def explain_hops(self) -> int:
        return 2 if "mid" in self.filters else 1

    def reset_parameters(self) -> None:
        if self.in_channels != -1:  # a lazy width: drawn when the first input sets it
            # nn.Linear's default weight distribution, U(-1/sqrt(in), 1/sqrt(in)), as the release
            bound = 1.0 / math.sqrt(self.in_channels)
            nn.init.uniform_(self.weight, -bound, bound)
        if self.mode == "over":
            nn.init.constant_(self.gamma, 1.0 / self.grid_size)
        elif self.mode == "single":
            nn.init.ones_(self.p)
            nn.init.constant_(self.a, self.single_a_init)
        if self.bias is not None:
            nn.init.zeros_(self.bias)
        self._cache = None

    def forward(self, x: Tensor, edge_index: GraphInput,
                edge_weight: Tensor | None = None) -> Tensor:
        """``x`` (N, in) on the graph ``edge_index`` (or ``adj_t``, or a ``Graph``), with optional
        ``edge_weight`` (E,) → (N, out)."""
        if self.in_channels == -1 and isinstance(x, Tensor) and x.dim() == 2:
            self.initialize_in_channels(x.shape[1])
        check_features(x, self.in_channels, self.weight.dtype, device=self.weight.device)
        edge_weight = self.explained_weight(edge_weight, edge_index, x)
        return self.convolve(self.operator(edge_index, x.shape[0], edge_weight, x.device), x)

    def initialize_in_channels(self, in_channels: int) -> None:
        """Make the weights of a conv built with ``in_channels=-1`` (at its first input)."""
        if compiling():
            raise RuntimeError("a lazy AutoGCNConv (in_channels=-1) must see one input before "
                               "it is compiled or exported")
        self.weight.materialize((self.num_banks, len(self.filters), in_channels,
                                 self.out_channels))
        self.in_channels = in_channels
        bound = 1.0 / math.sqrt(in_channels)
        nn.init.uniform_(self.weight, -bound, bound)

    def operator(self, graph: GraphInput, num_nodes: int, edge_weight: Tensor | None = None,
                 device: torch.device | None = None) -> Adjacency:
        r"""The operator :math:`\tilde A` of the graph (*Normalisation*, cached when ``cached``);
        ``device``: the features', which the graph must be on."""
        if learns(edge_weight):  # its values belong to this call's autograd graph
            return self._build_operator(graph, num_nodes, edge_weight, device)
        key = (graph, edge_weight, num_nodes, self.add_self_loops, self.normalize, device)
        if not compiling():  # a compiled graph cannot read version counters
            key += (getattr(graph, "_version", None), getattr(edge_weight, "_version", None))
        if self._cache is not None and _same_key(self._cache[0], key):
            return self._cache[1]
        op = self._build_operator(graph, num_nodes, edge_weight, device)
        if self.cached:
            self._cache = (key, op)
        return op

    def _build_operator(self, graph: GraphInput, num_nodes: int, edge_weight: Tensor | None,
                        device: torch.device | None) -> Adjacency:
        g, weight = to_graph(graph, num_nodes, edge_weight, device)
        if weight is not None:
            weight = check_edge_weight(g, weight)
        if self.add_self_loops:
            loops = torch.arange(num_nodes, device=g.device)
            if weight is not None:
                weight = torch.cat([weight, weight.new_ones(num_nodes)])
            g = Graph(torch.cat([g.src, loops]), torch.cat([g.dst, loops]), num_nodes,
                      validate=False)
        if not self.normalize:
            return constant_unless_learned(weight, lambda: Adjacency(g, edge_weight=weight))
        # without weights kept on g: shared by every layer that gets the same Graph
        return normalized_adjacency(g, "in", weight)

    def convolve(self, op: Adjacency, x: Tensor) -> Tensor:
        """The gated, summed filter outputs plus the bias, with ``op`` = :math:`\\tilde A`."""
        n_mid = 1 if "mid" in self.filters else 0
        if cheaper_to_propagate_first(x, (1 + n_mid) * self.in_channels,
                                      self.num_banks * (len(self.filters) + n_mid)
                                      * self.out_channels,
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
        outputs = torch.bmm(inputs, self.weight.reshape(-1, self.in_channels, self.out_channels))
        return self._gated_sum(outputs)

    def _projected_outputs(self, op: Adjacency, x: Tensor) -> list[Tensor]:
        """Every filter's output, ``banks·filters`` tensors ``(N, out)``, bank-major, projecting
        all filters in one product, then propagating ``out`` columns per filter. A list, not a
        stacked tensor: the gate reads them apart, and a stack would cost a copy each way."""
        coef = self.coefficients().reshape(-1, 3)
        w = self.weight.permute(2, 0, 1, 3).reshape(self.in_channels, -1)
        y = torch.sparse.mm(x, w) if x.is_sparse else x @ w
        py = op(y)
        n_j = coef.shape[0]
        ys = y.view(-1, n_j, self.out_channels).unbind(1)  # unbind: one copy in backward, not n_j
        pys = py.view(-1, n_j, self.out_channels).unbind(1)
        outs = []
        for j, name in enumerate(self.filters * self.num_banks):
            if name == "mid":
                outs.append(torch.addcmul(ys[j] * coef[j, 0], op(pys[j]), coef[j, 2]))
            else:
                outs.append(torch.addcmul(ys[j] * coef[j, 0], pys[j], coef[j, 1]))
        return outs

    def _gated_sum(self, outputs: Tensor | Sequence[Tensor]) -> Tensor:
        """The gated, summed filter outputs (stacked, or one tensor per filter) plus the bias
        (dense: a compiled region)."""
        out = self._gate_and_sum(outputs)
        return out if self.bias is None else out + self.bias

    def _gate_and_sum(self, outputs: Tensor | Sequence[Tensor]) -> torch.Tensor:
        """Gate each bank's filter outputs and sum everything."""
        n_f = len(self.filters)
        banks = [[b * n_f + i for i in self._slot_order] for b in range(self.num_banks)]
        if self.gate == "none" or n_f == 1:
            return outputs.sum(0) if isinstance(outputs, Tensor) else _sum_of_others(outputs, -1)
        parts = outputs.unbind(0) if isinstance(outputs, Tensor) else outputs
        gated = [y for bank in banks for y in gate([parts[i] for i in bank], self.gate)]
        return _sum_of_others(gated, -1)

    def __getstate__(self) -> dict:  # copies and pickles rebuild the operator where used
        return {**self.__dict__, "_cache": None}

    def extra_repr(self) -> str:
        grid = f", grid_size={self.grid_size}" if self.mode == "over" else ""
        banks = f", num_banks={self.num_banks}" if self.num_banks != 1 else ""
        flags = [f"{name}={value}" for name, value, default in (
            ("cached", self.cached, False), ("add_self_loops", self.add_self_loops, False),
            ("normalize", self.normalize, True), ("bias", self.bias is not None, True))
            if value != default]
        return (f"{self.in_channels}, {self.out_channels}{grid}, mode={self.mode}, "
                f"filters={','.join(self.filters)}, gate={self.gate}{banks}"
                + "".join(", " + f for f in flags))


def _same_key(a: tuple, b: tuple) -> bool:
    """Cache keys match: the same objects (``is``), sizes, flags, devices and versions
    (``==``)."""
    return len(a) == len(b) and all(
        x == y if isinstance(x, (int, torch.SymInt, torch.device)) else x is y
        for x, y in zip(a, b, strict=True))


def combine(coef: Tensor, hops: Sequence[Tensor]) -> Tensor:
    """``sum_k coef[:, k] · hops[k]``, shape ``(len(coef), *hops[0].shape)``: the filter inputs.

    Under the compiler a sum of broadcast products, which it fuses into one pass that writes
    the result once; in eager mode one einsum (a batched product), which beats the ``2k - 1``
    separate passes of the same sum.
    """
    if compiling():
        return sum(coef[:, k, None, None] * h for k, h in enumerate(hops))
    return torch.einsum("jk,knd->jnd", coef, torch.stack(list(hops)))


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
