r"""Dataset diagnostics: degrees, class balance, homophily, duplicate nodes and where the label
signal lies in the spectrum of the normalised Laplacian :math:`L = I - D^{-1/2} A D^{-1/2}` of
the simple symmetrised graph. Pure functions on numpy / scipy / torch inputs;
``scripts/diagnose.py`` is the command line, docs/data.md ("How it measures") the definitions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from torch import Tensor

from autogcn.graph import Graph

BANDS: tuple[tuple[str, float, float], ...] = (
    ("low", 0.0, 2.0 / 3.0), ("mid", 2.0 / 3.0, 4.0 / 3.0), ("high", 4.0 / 3.0, 2.0))
EXACT_MAX_NODES = 6000  # dense eigh up to here (~1 min at 5k nodes on one core)
CHEB_ORDER = 300  # Chebyshev moments of the estimate
# λ bins of the energy histograms: 41, so that λ = 1 (where leaves sharing a neighbour and isolated
# nodes put whole eigenspaces) is a bin centre, not an edge the Chebyshev kernel would halve
HIST_BINS = 41
SKETCH_COLUMNS = 64  # wider feature matrices are sketched to this many random columns
_SNAP = 1e-9
_SUMMARY = {"mean": np.mean, "median": np.median, "min": np.min, "max": np.max}

ArrayLike = np.ndarray | Tensor | Sequence[int]


# ============================================================================ graph basics
def _np(x: ArrayLike) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, Tensor) else np.asarray(x)


def _scipy(x: Any) -> Any:
    """A torch sparse tensor as a scipy CSR matrix; anything else as it is."""
    if not (isinstance(x, Tensor) and x.is_sparse):
        return x
    f = x.coalesce()
    i = f.indices().numpy()
    return sp.csr_matrix((f.values().numpy(), (i[0], i[1])), shape=tuple(f.shape))


def simple_adjacency(src: ArrayLike, dst: ArrayLike, num_nodes: int) -> sp.csr_matrix:
    """The simple symmetrised adjacency (float64 CSR, sorted indices, no self-loops, 0/1)."""
    s, d = _np(src).astype(np.int64).ravel(), _np(dst).astype(np.int64).ravel()
    keep = s != d
    a = sp.coo_matrix((np.ones(int(keep.sum())), (s[keep], d[keep])),
                      shape=(num_nodes, num_nodes)).tocsr()
    a = (a + a.T).tocsr()
    a.data[:] = 1.0
    a.sort_indices()
    return a


def graph_adjacency(g: Graph) -> sp.csr_matrix:
    """:func:`simple_adjacency` of a :class:`Graph` (a batch gives the block-diagonal union)."""
    return simple_adjacency(g.src, g.dst, g.num_nodes())


def _summary(values: np.ndarray) -> dict[str, float]:
    v = np.asarray(values, dtype=np.float64)
    return {name: float(f(v)) if v.size else math.nan for name, f in _SUMMARY.items()}


def degree_statistics(g: Graph) -> dict[str, Any]:
    """Edge counts and degrees of ``g`` (a graph or a batch): ``in_degree`` over the edges as
    stored (what the propagation normalises by), ``degree`` on the simple symmetrised graph."""
    a = graph_adjacency(g)
    deg = np.diff(a.indptr)
    src, dst = _np(g.src), _np(g.dst)
    n = g.num_nodes()
    stored = np.unique(src.astype(np.int64) * max(n, 1) + dst) if src.size else src
    mirrored = np.unique(dst.astype(np.int64) * max(n, 1) + src) if src.size else src
    out = {
        "nodes": n,
        "stored_edges": int(src.size),
        "undirected_edges": int(a.nnz // 2),
        "self_loops": int((src == dst).sum()),
        "repeated_edges": int(src.size - stored.size),
        "stored_symmetric": bool(np.array_equal(stored, mirrored)),
        "in_degree": _summary(_np(g.in_degrees())),
        "degree": _summary(deg),
        "isolated_nodes": int((deg == 0).sum()),
    }
    if g.batch_size > 1:
        out["graphs"] = g.batch_size
        out["nodes_per_graph"] = _summary(_np(g.batch_num_nodes()))
        out["stored_edges_per_graph"] = _summary(_np(g.batch_num_edges()))
    return out


# ============================================================================ labels and targets
def class_balance(labels: ArrayLike, num_classes: int | None = None) -> dict[str, Any]:
    """Counts and fractions per class (labels ``< 0`` ignored) and the majority class."""
    y = _np(labels).astype(np.int64).ravel()
    y = y[y >= 0]
    c = max(int(num_classes or 0), int(y.max()) + 1 if y.size else 0)
    counts = np.bincount(y, minlength=c)
    frac = counts / max(y.size, 1)
    nz = counts[counts > 0]
    return {
        "labelled": int(y.size),
        "classes": c,
        "counts": counts.tolist(),
        "fractions": [float(f) for f in frac],
        "majority_class": int(counts.argmax()) if y.size else None,
        "majority_fraction": float(frac.max()) if y.size else math.nan,
        "imbalance_ratio": float(nz.max() / nz.min()) if nz.size else math.nan,
        # a constant prediction has balanced (class-averaged) accuracy 1/#classes present
        "constant_balanced_accuracy": 1.0 / nz.size if nz.size else math.nan,
    }


def majority_accuracy(train_labels: ArrayLike, eval_labels: ArrayLike) -> float:
    """Accuracy on ``eval_labels`` of always predicting the most frequent training class."""
    tr, ev = _np(train_labels).ravel(), _np(eval_labels).ravel()
    tr, ev = tr[tr >= 0], ev[ev >= 0]
    if tr.size == 0 or ev.size == 0:
        return math.nan
    return float(np.mean(ev == np.bincount(tr.astype(np.int64)).argmax()))


def target_statistics(values: ArrayLike) -> dict[str, float]:
    """Count, mean, std (ddof 0), quartiles and range of a regression target."""
    v = _np(values).astype(np.float64).ravel()
    if v.size == 0:
        return {"count": 0}
    q1, med, q3 = np.quantile(v, [0.25, 0.5, 0.75])
    return {"count": int(v.size), "mean": float(v.mean()), "std": float(v.std()),
            "min": float(v.min()), "q1": float(q1), "median": float(med), "q3": float(q3),
            "max": float(v.max())}


def constant_mae(train_values: ArrayLike, eval_values: ArrayLike) -> float:
    """MAE on ``eval_values`` of always predicting the training median (the MAE-optimal
    constant): the floor a regression model must beat."""
    tr, ev = _np(train_values).astype(np.float64), _np(eval_values).astype(np.float64)
    return float(np.mean(np.abs(ev - np.median(tr)))) if tr.size and ev.size else math.nan


# ============================================================================ homophily
def _labelled(adj: sp.spmatrix, labels: ArrayLike) -> tuple[sp.csr_matrix, np.ndarray]:
    y = _np(labels).astype(np.int64).ravel()
    a = sp.csr_matrix(adj)
    if y.shape[0] != a.shape[0]:
        raise ValueError(f"{y.shape[0]} labels for {a.shape[0]} nodes")
    keep = y >= 0
    if not keep.all():
        a, y = a[keep][:, keep].tocsr(), y[keep]
    return a, y


def _same_label_counts(a: sp.csr_matrix, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per node: neighbours with its own label, and its degree."""
    deg = np.diff(a.indptr)
    rows = np.repeat(np.arange(a.shape[0]), deg)
    same = np.bincount(rows, weights=(y[rows] == y[a.indices]).astype(np.float64),
                       minlength=a.shape[0])
    return same, deg.astype(np.float64)


def edge_homophily(adj: sp.spmatrix, labels: ArrayLike) -> float:
    r"""Fraction of undirected edges joining two nodes of the same class (Zhu et al. 2020):
    :math:`|\{(u,v) \in E: y_u = y_v\}| / |E|`. NaN without edges."""
    a, y = _labelled(adj, labels)
    up = sp.triu(a, k=1).tocoo()
    return float(np.mean(y[up.row] == y[up.col])) if up.nnz else math.nan


def node_homophily(adj: sp.spmatrix, labels: ArrayLike) -> float:
    r"""Mean over non-isolated nodes of the fraction of their neighbours in their own class
    (Pei et al. 2020). NaN if every node is isolated."""
    a, y = _labelled(adj, labels)
    same, deg = _same_label_counts(a, y)
    has = deg > 0
    return float(np.mean(same[has] / deg[has])) if has.any() else math.nan


def class_insensitive_homophily(adj: sp.spmatrix, labels: ArrayLike) -> float:
    r"""Lim et al. (2021, LINKX) :math:`\frac{1}{C-1}\sum_k [h_k - |C_k|/|V|]_+`, ``C`` the
    number of classes present; ``h_k`` is the fraction of class ``k``'s edge endpoints whose
    other end is in ``k`` (0 for a class without edges). NaN with fewer than two classes."""
    a, y = _labelled(adj, labels)
    classes, inverse, sizes = np.unique(y, return_inverse=True, return_counts=True)
    if classes.size < 2:
        return math.nan
    same, deg = _same_label_counts(a, y)
    same_k = np.bincount(inverse, weights=same, minlength=classes.size)
    deg_k = np.bincount(inverse, weights=deg, minlength=classes.size)
    h_k = np.divide(same_k, deg_k, out=np.zeros_like(same_k), where=deg_k > 0)
    return float(np.clip(h_k - sizes / y.size, 0.0, None).sum() / (classes.size - 1))


def adjusted_homophily(adj: sp.spmatrix, labels: ArrayLike) -> float:
    r"""Platonov et al. (2023) :math:`(h_{edge} - \sum_k \bar p_k^2) / (1 - \sum_k \bar p_k^2)`,
    :math:`\bar p_k = \sum_{v \in C_k} d(v) / 2|E|`. NaN without edges or when every edge
    endpoint is in one class."""
    a, y = _labelled(adj, labels)
    deg = np.diff(a.indptr).astype(np.float64)
    if deg.sum() == 0:
        return math.nan
    p = np.bincount(y, weights=deg) / deg.sum()
    s = float((p ** 2).sum())
    if s >= 1.0 - 1e-12:
        return math.nan
    return (edge_homophily(a, y) - s) / (1.0 - s)


def homophily(adj: sp.spmatrix, labels: ArrayLike) -> dict[str, float]:
    """All four homophily measures of this module."""
    return {"edge": edge_homophily(adj, labels), "node": node_homophily(adj, labels),
            "class_insensitive": class_insensitive_homophily(adj, labels),
            "adjusted": adjusted_homophily(adj, labels)}


# ============================================================================ duplicates
def feature_row_keys(features: Tensor | np.ndarray | sp.spmatrix) -> list[bytes]:
    """One byte string per row, equal iff the rows are equal (dense, scipy or torch sparse)."""
    features = _scipy(features)
    if sp.issparse(features):
        m = sp.csr_matrix(features)
        m.sum_duplicates()
        m.eliminate_zeros()
        m.sort_indices()
        ind, dat, ptr = m.indices.astype(np.int64), m.data.astype(np.float64), m.indptr
        return [ind[ptr[i]:ptr[i + 1]].tobytes() + b"|" + dat[ptr[i]:ptr[i + 1]].tobytes()
                for i in range(m.shape[0])]
    x = _np(features)
    x = np.ascontiguousarray(x.reshape(x.shape[0], -1))
    if x.dtype.kind == "f":
        x = x.astype(np.float64) + 0.0  # -0.0 == 0.0
    return [row.tobytes() for row in x]


def neighbour_keys(adj: sp.spmatrix) -> list[bytes]:
    """One byte string per node, equal iff the neighbour sets are equal."""
    a = sp.csr_matrix(adj)
    a.sort_indices()
    ind = a.indices.astype(np.int64)
    return [ind[a.indptr[i]:a.indptr[i + 1]].tobytes() for i in range(a.shape[0])]


def group_ids(keys: Iterable[Any]) -> np.ndarray:
    """Group id per item (equal keys, equal id), numbered by first occurrence."""
    seen: dict[Any, int] = {}
    return np.fromiter((seen.setdefault(k, len(seen)) for k in keys), dtype=np.int64)


def duplicate_groups(features: Tensor | np.ndarray | sp.spmatrix | None,
                     adj: sp.spmatrix) -> np.ndarray:
    """Group ids of duplicate nodes: equal feature vector and equal neighbour set (Platonov et
    al. 2023, ICLR); ``features=None``: the neighbour set alone, "structural twins"."""
    nb = neighbour_keys(adj)
    if features is None:
        return group_ids(nb)
    return group_ids(zip(feature_row_keys(features), nb, strict=True))


def duplicate_summary(groups: np.ndarray, labels: ArrayLike | None = None) -> dict[str, Any]:
    """How many nodes have a duplicate, in how many groups, and whether groups agree on labels;
    ``redundant_nodes``: those removed by keeping one node per group."""
    groups = np.asarray(groups)
    sizes = np.bincount(groups) if groups.size else np.zeros(0, np.int64)
    dup = sizes[groups] > 1 if groups.size else np.zeros(0, bool)
    out: dict[str, Any] = {
        "nodes": int(groups.size),
        "nodes_with_duplicate": int(dup.sum()),
        "groups": int((sizes > 1).sum()),
        "redundant_nodes": int(groups.size - sizes.size),
        "largest_group": int(sizes.max()) if sizes.size else 0,
    }
    if labels is not None and dup.any():
        y = _np(labels).astype(np.int64).ravel() + 1  # unlabelled (-1) is a label of its own
        width = int(y.max()) + 1
        pairs = np.unique(groups[dup] * width + y[dup])  # one per (group, label)
        out["groups_with_one_label"] = int((np.bincount(pairs // width) == 1).sum())
    return out


def split_leakage(groups: np.ndarray, train: ArrayLike, evaluated: ArrayLike,
                  labels: ArrayLike | None = None) -> dict[str, Any]:
    """Evaluation nodes that have a duplicate in the training set (``with_train_duplicate``) and,
    with ``labels``, a duplicate there with the same label (``same_label``: a label leak)."""
    groups = np.asarray(groups)
    tr, ev = _np(train).astype(np.int64).ravel(), _np(evaluated).astype(np.int64).ravel()
    in_train = np.zeros(int(groups.max()) + 1 if groups.size else 0, bool)
    in_train[groups[tr]] = True
    hit = in_train[groups[ev]]
    out = {"evaluated": int(ev.size), "with_train_duplicate": int(hit.sum()),
           "fraction": float(hit.mean()) if ev.size else math.nan}
    if labels is not None:
        y = _np(labels).astype(np.int64).ravel()
        width = int(y.max()) + 2 if y.size else 1
        train_pairs = np.unique(groups[tr] * width + (y[tr] + 1))
        out["same_label"] = int(np.isin(groups[ev] * width + (y[ev] + 1), train_pairs).sum())
    return out


# ============================================================================ spectrum
def symmetric_normalised_csr(adj: sp.spmatrix) -> sp.csr_matrix:
    r""":math:`D^{-1/2} A D^{-1/2}` as a float64 scipy CSR matrix, degrees clamped at 1."""
    a = sp.csr_matrix(adj, dtype=np.float64)
    s = 1.0 / np.sqrt(np.maximum(np.asarray(a.sum(axis=1)).ravel(), 1.0))
    return sp.csr_matrix(sp.diags(s) @ a @ sp.diags(s))


def laplacian(adj: sp.spmatrix) -> sp.csr_matrix:
    """The normalised Laplacian ``I - D^{-1/2} A D^{-1/2}`` (degrees clamped at 1)."""
    return sp.csr_matrix(sp.identity(adj.shape[0], format="csr") - symmetric_normalised_csr(adj))


def label_signal(labels: ArrayLike, num_classes: int | None = None) -> np.ndarray:
    """The centred one-hot label matrix ``(n, C)``: column ``c`` is ``1[y = c] - p_c`` over the
    labelled nodes, 0 on unlabelled ones (docs/data.md says why centred)."""
    y = _np(labels).astype(np.int64).ravel()
    lab = y >= 0
    c = max(int(num_classes or 0), int(y.max()) + 1 if lab.any() else 0)
    onehot = np.zeros((y.size, c))
    onehot[np.flatnonzero(lab), y[lab]] = 1.0
    if lab.any():
        onehot[lab] -= onehot[lab].mean(axis=0)
    return onehot


def feature_signal(features: Tensor | np.ndarray, vocab: int | None = None,
                   max_columns: int = SKETCH_COLUMNS, seed: int = 0) -> np.ndarray:
    r"""Node input features as a centred signal matrix: integer ids ``(n,)`` (SBM, ZINC) one-hot
    of width ``vocab``, float features (dense or sparse) as they are. Wider than ``max_columns``:
    ``X G / sqrt(m)`` with a seeded Gaussian ``G`` of ``m = max_columns`` columns, which keeps
    every band energy in expectation (a Hutchinson sketch of :math:`\mathrm{tr}(X^\top P X)`)."""
    x: Any = _scipy(features)
    if sp.issparse(x):
        x = x.astype(np.float64)
    else:
        x = _np(x)
        if x.ndim == 1 or (x.ndim == 2 and x.shape[1] == 1 and x.dtype.kind in "iu"):
            ids = x.reshape(-1).astype(np.int64)
            width = max(int(vocab or 0), int(ids.max()) + 1 if ids.size else 0)
            x = np.zeros((ids.size, width))
            x[np.arange(ids.size), ids] = 1.0
        x = np.asarray(x, dtype=np.float64).reshape(x.shape[0], -1)
    if x.shape[1] > max_columns:
        g = np.random.default_rng(seed).standard_normal((x.shape[1], max_columns))
        g /= math.sqrt(max_columns)
        x = np.asarray(x @ g)
    elif sp.issparse(x):
        x = x.toarray()
    return x - x.mean(axis=0)


def band_of(lam: np.ndarray) -> np.ndarray:
    """Band index (0 low, 1 mid, 2 high) of each eigenvalue; within ``1e-9`` of a band edge
    counts as on it (``K_4``'s 4/3 is high)."""
    lam = np.asarray(lam, dtype=np.float64)
    edges = np.array([b for _, _, b in BANDS[:-1]])
    return np.searchsorted(edges, lam + _SNAP, side="right")


@dataclass
class SpectralEnergy:
    r"""Where a signal's energy lies in the spectrum of the normalised Laplacian.

    ``bands``: the share of the energy per band. ``baseline``: its expectation when the labels
    are permuted at random (a labelling independent of the graph): ``u_i`` then gets
    :math:`(1 - (u_i^\top \mathbf 1)^2/n)/(n-1)`, as a centred exchangeable vector has
    :math:`E[yy^\top] \propto I - \mathbf 1 \mathbf 1^\top/n`. ``eigenvalue_mass``: the share of
    eigenvalues per band. ``edges``/``energy``/``null``/``eigenvalues``: those three as
    histograms over λ. ``mean_lambda``: the Rayleigh quotient
    :math:`\mathrm{tr}(Y^\top L Y) / \mathrm{tr}(Y^\top Y)` (exact in both methods), and
    ``baseline_mean_lambda`` its null expectation :math:`(n - \mathbf 1^\top L \mathbf 1/n)/(n-1)`.
    ``total``: :math:`\|Y\|_F^2`; ``method``: ``exact`` or ``chebyshev`` (``order`` moments).
    """

    method: str
    bands: dict[str, float]
    baseline: dict[str, float]
    eigenvalue_mass: dict[str, float]
    edges: np.ndarray
    energy: np.ndarray
    null: np.ndarray
    eigenvalues: np.ndarray
    total: float
    nodes: int
    mean_lambda: float = math.nan
    baseline_mean_lambda: float = math.nan
    order: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"method": self.method, "bands": self.bands, "baseline": self.baseline,
                "eigenvalue_mass": self.eigenvalue_mass, "mean_lambda": self.mean_lambda,
                "baseline_mean_lambda": self.baseline_mean_lambda, "total_energy": self.total,
                "nodes": self.nodes, "order": self.order,
                "histogram": {"edges": self.edges.tolist(), "energy": self.energy.tolist(),
                              "baseline": self.null.tolist(),
                              "eigenvalues": self.eigenvalues.tolist()}}


def _band_dict(values: Sequence[float]) -> dict[str, float]:
    return {name: float(v) for (name, _, _), v in zip(BANDS, values, strict=True)}


def _eigh(adj: sp.spmatrix) -> tuple[np.ndarray, np.ndarray]:
    lam, vec = scipy.linalg.eigh(laplacian(adj).toarray(), driver="evd")
    return np.clip(lam, 0.0, 2.0), vec


def _exact_result(lam: np.ndarray, vec: np.ndarray, signal: np.ndarray,
                  bins: int) -> SpectralEnergy:
    n = lam.size
    coef = vec.T @ np.asarray(signal, dtype=np.float64).reshape(n, -1)
    e = (coef ** 2).sum(axis=1)
    total = float(e.sum())
    null = (1.0 - (vec.sum(axis=0) ** 2) / n) / (n - 1) if n > 1 else np.full(n, math.nan)
    b = band_of(lam)
    edges = np.linspace(0.0, 2.0, bins + 1)
    pos = np.clip(np.searchsorted(edges, lam + _SNAP, side="right") - 1, 0, bins - 1)
    if total > 0:
        energy = np.bincount(pos, weights=e, minlength=bins) / total
        band_e = np.bincount(b, weights=e, minlength=3) / total
    else:
        energy, band_e = np.full(bins, math.nan), np.full(3, math.nan)
    return SpectralEnergy(
        "exact", _band_dict(band_e), _band_dict(np.bincount(b, weights=null, minlength=3)),
        _band_dict(np.bincount(b, minlength=3) / n), edges, energy,
        np.bincount(pos, weights=null, minlength=bins), np.bincount(pos, minlength=bins) / n,
        total, n, float(e @ lam / total) if total > 0 else math.nan, float(null @ lam))


def jackson_kernel(order: int) -> np.ndarray:
    """Jackson damping factors ``g_0..g_{K-1}`` (Weiße et al. 2006, Eq. 71)."""
    k = np.arange(order)
    q = math.pi / (order + 1)
    return ((order - k + 1) * np.cos(q * k) + np.sin(q * k) / math.tan(q)) / (order + 1)


def indicator_coefficients(lo: float, hi: float, order: int) -> np.ndarray:
    r"""Chebyshev coefficients (in ``x = λ - 1``) of the indicator of ``λ ∈ [lo, hi]``:
    :math:`c_0 = (\theta_a - \theta_b)/\pi`,
    :math:`c_k = 2(\sin k\theta_a - \sin k\theta_b)/(k\pi)`, :math:`\theta = \arccos x`."""
    ta, tb = math.acos(np.clip(lo - 1.0, -1, 1)), math.acos(np.clip(hi - 1.0, -1, 1))
    k = np.arange(1, order)
    return np.concatenate([[(ta - tb) / math.pi],
                           2.0 * (np.sin(k * ta) - np.sin(k * tb)) / (k * math.pi)])


def chebyshev_moments(adj: sp.spmatrix, signal: np.ndarray,
                      order: int = CHEB_ORDER) -> np.ndarray:
    r""":math:`\mu_k = \sum_c y_c^\top T_k(L - I)\, y_c` for ``k < order``."""
    m = -symmetric_normalised_csr(adj)  # L - I
    y = np.asarray(signal, dtype=np.float64).reshape(adj.shape[0], -1)
    mu = np.zeros(order)
    prev, cur = y, m @ y
    mu[0] = (y * prev).sum()
    if order > 1:
        mu[1] = (y * cur).sum()
    for k in range(2, order):
        prev, cur = cur, 2.0 * (m @ cur) - prev
        mu[k] = (y * cur).sum()
    return mu


def _interval_masses(moments: np.ndarray, intervals: Sequence[tuple[float, float]],
                     order: int) -> np.ndarray:
    """Jackson-damped estimates of the spectral measure of each interval from its moments."""
    coef = np.stack([indicator_coefficients(lo, hi, order) for lo, hi in intervals])
    return np.clip(coef @ (jackson_kernel(order) * moments[:order]), 0.0, None)


def spectral_energy_chebyshev(adj: sp.spmatrix, signal: np.ndarray, order: int = CHEB_ORDER,
                              bins: int = HIST_BINS, probes: int = 16,
                              seed: int = 0) -> SpectralEnergy:
    r""":class:`SpectralEnergy` by the Jackson-damped Chebyshev expansion: a band's energy is
    :math:`\sum_k g_k c_k \mu_k` with the exact moments of ``signal``. The eigenvalue mass
    :math:`m_B` needs a trace, estimated with ``probes`` seeded Rademacher vectors; the
    ``baseline`` is :math:`(n\, m_B - \mathbf 1^\top P_B \mathbf 1 / n)/(n-1)`."""
    n = adj.shape[0]
    edges = np.linspace(0.0, 2.0, bins + 1)
    band_iv = [(lo, hi) for _, lo, hi in BANDS]
    hist_iv = list(zip(edges[:-1], edges[1:], strict=True))

    def masses(mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if mu[0] <= 0:
            return np.full(3, math.nan), np.full(bins, math.nan)
        return (_interval_masses(mu, band_iv, order) / mu[0],
                _interval_masses(mu, hist_iv, order) / mu[0])

    mu = chebyshev_moments(adj, signal, order)
    band_e, energy = masses(mu)
    z = np.random.default_rng(seed).choice([-1.0, 1.0], size=(n, probes))
    mass_b, mass_h = masses(chebyshev_moments(adj, z, order))  # eigenvalue density
    ones_b, ones_h = masses(chebyshev_moments(adj, np.ones(n), order))  # 1ᵀ P 1 / n

    def null(mass: np.ndarray, ones: np.ndarray) -> np.ndarray:
        return np.clip((n * mass - ones) / (n - 1), 0.0, None) if n > 1 else mass

    ones = np.ones(n)
    base_lam = (n - ones @ (laplacian(adj) @ ones) / n) / (n - 1) if n > 1 else math.nan
    return SpectralEnergy("chebyshev", _band_dict(band_e), _band_dict(null(mass_b, ones_b)),
                          _band_dict(mass_b), edges, energy, null(mass_h, ones_h), mass_h,
                          float(mu[0]), n, 1.0 + mu[1] / mu[0] if mu[0] > 0 else math.nan,
                          float(base_lam), order)


def spectral_energies(adj: sp.spmatrix, signals: dict[str, np.ndarray], method: str = "auto",
                      exact_max_nodes: int = EXACT_MAX_NODES, order: int = CHEB_ORDER,
                      bins: int = HIST_BINS) -> dict[str, SpectralEnergy]:
    """:class:`SpectralEnergy` of several signals on one graph: exact up to ``exact_max_nodes``
    nodes (``method="auto"``; one eigendecomposition shared by all signals), else the Chebyshev
    estimate; ``method="exact"``/``"chebyshev"`` forces one."""
    if method not in ("auto", "exact", "chebyshev"):
        raise ValueError(f"unknown method {method!r}: auto, exact or chebyshev")
    if method == "exact" or (method == "auto" and adj.shape[0] <= exact_max_nodes):
        lam, vec = _eigh(adj)
        return {name: _exact_result(lam, vec, sig, bins) for name, sig in signals.items()}
    return {name: spectral_energy_chebyshev(adj, sig, order, bins)
            for name, sig in signals.items()}


def spectral_energy(adj: sp.spmatrix, signal: np.ndarray, method: str = "auto",
                    exact_max_nodes: int = EXACT_MAX_NODES, order: int = CHEB_ORDER,
                    bins: int = HIST_BINS) -> SpectralEnergy:
    """:func:`spectral_energies` of one signal."""
    return spectral_energies(adj, {"signal": signal}, method, exact_max_nodes, order,
                             bins)["signal"]


def sample_graphs(graphs: Sequence[Any], count: int, seed: int) -> list[Any]:
    """``count`` of ``graphs`` (all if fewer), drawn without replacement, in their order."""
    take = np.random.default_rng(seed).choice(len(graphs), min(count, len(graphs)),
                                              replace=False)
    return [graphs[int(i)] for i in np.sort(take)]


def mean_spectral_energy(items: Iterable[tuple[sp.spmatrix, np.ndarray]],
                         bins: int = HIST_BINS) -> dict[str, Any]:
    """Exact :class:`SpectralEnergy` per graph, averaged over graphs (each weighs the same);
    graphs whose centred signal is zero (one class only) are skipped and counted."""
    every = [_exact_result(*_eigh(adj), sig, bins) for adj, sig in items]
    results = [r for r in every if r.total > 1e-12]
    skipped = len(every) - len(results)
    if not results:
        return {"graphs": 0, "skipped": skipped}

    def mean(key: str) -> tuple[dict[str, float], dict[str, float]]:
        v = np.array([[getattr(r, key)[b] for b, _, _ in BANDS] for r in results])
        return _band_dict(v.mean(axis=0)), _band_dict(v.std(axis=0))

    bands, bands_std = mean("bands")
    lam = np.array([r.mean_lambda for r in results])
    return {
        "method": "exact per graph, mean over graphs",
        "graphs": len(results),
        "skipped": skipped,
        "bands": bands,
        "bands_std": bands_std,
        "baseline": mean("baseline")[0],
        "eigenvalue_mass": mean("eigenvalue_mass")[0],
        "mean_lambda": float(lam.mean()),
        "mean_lambda_std": float(lam.std()),
        "baseline_mean_lambda": float(np.mean([r.baseline_mean_lambda for r in results])),
        "nodes_per_graph": _summary(np.array([r.nodes for r in results])),
        "histogram": {k: np.mean([getattr(r, a) for r in results], axis=0).tolist()
                      for k, a in (("energy", "energy"), ("baseline", "null"),
                                   ("eigenvalues", "eigenvalues"))}
        | {"edges": results[0].edges.tolist()},
    }
