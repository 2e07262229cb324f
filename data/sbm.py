"""SBM_PATTERN and SBM_CLUSTER: a seeded, vectorised re-implementation of the generators of the
benchmarking-gnns notebooks (spec section 4, "SBM generation").

Every graph is a stochastic block model: community sizes are uniform integers in ``[5, 35)``,
each unordered node pair ``i < j`` is linked with probability ``p`` (same community) or ``q``
(different communities), edges are stored in both directions, there are no self-loops, and the
nodes are randomly permuted at the end. Graphs are :class:`~autogcn.graph.Graph` objects:
``g.ndata['feat']`` holds integer feature ids and ``g.ndata['label']`` the node classes (both
int64 of shape ``(N,)``); there are no edge features (no net reads them).

* ``SBM_CLUSTER``: 6 communities, p=0.55, q=0.25; label = community; after the permutation one
  random node of community ``r`` gets feature ``r + 1``, every other node 0 (vocabulary 0..6,
  ``in_dim`` 7, 6 classes). 10000/1000/1000 graphs.
* ``SBM_PATTERN`` (default: the notebook's final settings): 5 communities, p=0.5, q=0.35,
  features uniform in {0, 1, 2}. 100 pattern instances, each with its own size (uniform in
  ``[5, 35)``), its own random graph (edge probability 0.5) and fixed features; every pattern node
  links to every community node with probability 0.5; pattern nodes have label 1. Each instance
  yields 100/20/20 train/val/test graphs (10000/2000/2000). ``in_dim`` 3, 2 classes.
* ``SBM_PATTERN`` generator variants (``variant=``, the config's ``sbm_variant``), named by their
  parameters; everything not named is as above:

  ==================  ==========================================================================
  (default)           ``q35-size5to34``: q=0.35, 100 patterns of 5-34 nodes (the notebook's
                      final settings; alias ``final``)
  ``q20-size20``      q=0.2, 100 patterns of exactly 20 nodes, each with its own graph and
                      features (the notebook's earlier settings; alias ``early``)
  ``q35-size20``      q=0.35, 100 patterns of 20 nodes (how DGL's documentation describes its
                      downloadable PATTERN)
  ``q20-one-pattern`` q=0.2, one 20-node pattern shared by every graph (an easy variant, alias
                      ``PATTERN_EASY``; no notebook had it)
  ==================  ==========================================================================

  Their statistics and difficulty are measured in ``docs/data.md``.

Determinism: the notebooks fixed no seed, so only statistics can match the published data. Here
graph ``i`` of a split is drawn from its own generator ``default_rng([seed, stream, split, i])``
and PATTERN instance ``k`` from ``default_rng([seed, stream, 3, k])``. Hence the first ``N`` graphs
of a split are the same whether ``N`` or all graphs are generated. PATTERN graphs interleave the
instances (graph ``i`` uses instance ``i % 100``), so a small prefix still covers many patterns;
each instance still contributes exactly 100/20/20 graphs to a full split. The default seed is 0.

Files (no DGL needed): a file set (:class:`data.files.FileSet`) in
``<data_dir>/<NAME>[_<variant>][_seed<k>]/``: ``{train,val,test}.npz`` plus ``meta.json``
(format name and version, parameters, seed, statistics), written last; a prefix of ``N`` graphs
per split goes to ``*_first<N>.npz`` / ``meta_first<N>.json`` so it is never mistaken for the
full data. Each ``.npz`` is a graph pack (format ``"autogcn-sbm"``, version
:data:`FORMAT_VERSION`; layout in :mod:`data.files`): ``num_nodes``/``num_edges`` int64 per
graph, ``src``/``dst`` local node ids (uint8), ``node_feat`` and ``node_label`` int8;
``--max_graphs N`` on full files reads their first N graphs. Files that cannot be used (another
format version, truncated, garbage) are regenerated with one log line (the same graphs, in
seconds); files generated with other settings are refused (a one-line
:class:`~data.common.DataError`), never mixed with new ones.

Other sources: ``source="dgl"`` converts DGL's ``CLUSTERDataset``/``PATTERNDataset`` (the
published data; DGL profile), ``source="pyg"`` PyG's ``GNNBenchmarkDataset`` (CLUSTER/PATTERN,
under ``<data_dir>/pyg``; needs ``pip install torch_geometric``). Both download once (internet).
Both become the graphs described above: int64 ``(N,)`` feature ids and labels, no edge features.
PyG's dataset table gives 7 (CLUSTER) and 3 (PATTERN) node features, i.e. one-hot rows of the
ids; one-hot rows are turned into the ids they encode, ids given as ``(N,)``/``(N, 1)`` are taken
as they are, anything else is a DataError. The same table gives ~6,099 directed edges per PATTERN
graph against the benchmark's 4,749 (DGL's copy), so PyG's PATTERN is likely not the published
one (not checked here: no internet).

Statistics: ``python -m scripts.diagnose --sizes_only --dataset SBM_CLUSTER --data_dir DIR``
(generates the files on first use).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from autogcn.graph import Graph
from data.common import DataError, GraphDataset, GraphSplit, check_graph_split
from data.files import FileSet, GraphPack, PackError, pyg_benchmark, smallest_uint, unpack_graphs
from data.interop import download, from_dgl, require_dgl

logger = logging.getLogger(__name__)

SBM_NAMES = ("SBM_CLUSTER", "SBM_PATTERN")
DEFAULT_VARIANT = "q35-size5to34"
SBM_VARIANTS = (DEFAULT_VARIANT, "q20-size20", "q35-size20", "q20-one-pattern")
SBM_VARIANT_ALIASES = {"final": DEFAULT_VARIANT, "early": "q20-size20",
                       "PATTERN_EASY": "q20-one-pattern"}
SPLITS = ("train", "val", "test")
DEFAULT_SEED = 0
# Bump when the generator changes in a way that changes the graphs for a given seed: files with
# another version are refused instead of being silently mixed with new ones.
GENERATOR_VERSION = 1
# The file layout (graph pack, see the module docstring). Bump when it changes: files of another
# version are regenerated (with one log line), never misread.
FORMAT_NAME = "autogcn-sbm"
FORMAT_VERSION = 1
SOURCES = ("generate", "dgl", "pyg")
# What a full disk under --data_dir tells the user to do.
DATA_DIR_REMEDY = "free some space there or give another --data_dir"

# Figures of the published datasets (benchmarking-gnns), kept in ``info`` beside ours.
PUBLISHED = {
    "SBM_PATTERN": "117.47 nodes, 4749 edges, 44-188 nodes per graph",
    "SBM_CLUSTER": "117.2 nodes, 4302 edges",
}

_SPLIT_IDS = {"train": 0, "val": 1, "test": 2}
_INSTANCE_STREAM = 3  # the "split id" slot used for PATTERN instances; never a real split


@dataclass(frozen=True)
class SBMConfig:
    """Generation parameters of one dataset (variant)."""

    name: str
    variant: str | None
    stream: int  # separates the random streams of the datasets for the same seed
    n_communities: int
    p: float  # link probability inside a community
    q: float  # link probability between communities
    vocab_size: int  # node feature ids are in [0, vocab_size)
    num_classes: int
    split_sizes: tuple[int, int, int]  # train, val, test
    size_min: int = 5  # community (and pattern) sizes are uniform in [size_min, size_max)
    size_max: int = 35
    n_patterns: int = 0  # 0: no pattern (CLUSTER); else number of PATTERN instances
    pattern_size: int | None = None  # None: uniform in [size_min, size_max) per instance
    p_pattern: float = 0.5  # edge probability inside a pattern
    q_pattern: float = 0.5  # link probability pattern node <-> community node

    @property
    def dirname(self) -> str:
        return self.name if self.variant is None else f"{self.name}_{self.variant}"


_CONFIGS: dict[tuple[str, str | None], SBMConfig] = {
    ("SBM_CLUSTER", None): SBMConfig(
        "SBM_CLUSTER", None, stream=1, n_communities=6, p=0.55, q=0.25, vocab_size=7,
        num_classes=6, split_sizes=(10000, 1000, 1000),
    ),
    ("SBM_PATTERN", None): SBMConfig(
        "SBM_PATTERN", None, stream=2, n_communities=5, p=0.5, q=0.35, vocab_size=3,
        num_classes=2, split_sizes=(10000, 2000, 2000), n_patterns=100,
    ),
    ("SBM_PATTERN", "q20-one-pattern"): SBMConfig(
        "SBM_PATTERN", "q20-one-pattern", stream=3, n_communities=5, p=0.5, q=0.2, vocab_size=3,
        num_classes=2, split_sizes=(10000, 2000, 2000), n_patterns=1, pattern_size=20,
    ),
    ("SBM_PATTERN", "q20-size20"): SBMConfig(
        "SBM_PATTERN", "q20-size20", stream=4, n_communities=5, p=0.5, q=0.2, vocab_size=3,
        num_classes=2, split_sizes=(10000, 2000, 2000), n_patterns=100, pattern_size=20,
    ),
    ("SBM_PATTERN", "q35-size20"): SBMConfig(
        "SBM_PATTERN", "q35-size20", stream=5, n_communities=5, p=0.5, q=0.35, vocab_size=3,
        num_classes=2, split_sizes=(10000, 2000, 2000), n_patterns=100, pattern_size=20,
    ),
}


def check_variant(dataset: str, variant: str | None) -> None:
    """ValueError when ``variant``, as the user spelled it (an alias or a canonical name), is
    asked of ``dataset``: the variants are SBM_PATTERN's generator's. SBM_CLUSTER has one
    generator, so naming any variant for it (even the default's) is refused rather than ignored.
    The config and the tools share this check."""
    if variant is None:
        return
    if variant not in SBM_VARIANTS and variant not in SBM_VARIANT_ALIASES:
        raise ValueError(f"unknown SBM variant {variant!r}; valid variants: "
                         f"{', '.join(SBM_VARIANTS + tuple(SBM_VARIANT_ALIASES))} "
                         "(SBM_PATTERN only)")
    if dataset != "SBM_PATTERN":
        raise ValueError(f"{variant!r} is a variant of SBM_PATTERN's generator; {dataset} has "
                         "none (leave sbm_variant out)")


def sbm_config(name: str, variant: str | None = None) -> SBMConfig:
    """The generation parameters of ``name`` (and ``variant``); ValueError for unknown ones."""
    if name not in SBM_NAMES:
        raise ValueError(f"unknown SBM dataset {name!r}; valid names: {', '.join(SBM_NAMES)}")
    variant = SBM_VARIANT_ALIASES.get(variant, variant)
    if variant is not None and variant not in SBM_VARIANTS:
        raise ValueError(f"unknown SBM variant {variant!r}; valid variants: "
                         f"{', '.join(SBM_VARIANTS)} (SBM_PATTERN only)")
    if variant == DEFAULT_VARIANT:
        variant = None  # the default's files and streams keep their names
    key = (name, variant)
    if key not in _CONFIGS:
        raise ValueError(f"variant {variant!r} does not exist for {name}")
    return _CONFIGS[key]


# --------------------------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------------------------


@dataclass
class SBMSample:
    """One generated graph as numpy arrays (node ids after the final permutation)."""

    num_nodes: int
    src: np.ndarray  # int64, both directions of every edge, sorted by (src, dst)
    dst: np.ndarray
    feat: np.ndarray  # int64 (N,)
    label: np.ndarray  # int64 (N,)
    perm: np.ndarray  # node k of the graph was generated as node perm[k]
    block: np.ndarray  # generation-order block id: community, or n_communities for pattern


@lru_cache(maxsize=512)
def _upper_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Row-major ``i < j`` pairs of ``n`` nodes (cached: only ~200 distinct sizes occur)."""
    iu, ju = np.triu_indices(n, 1)
    return iu.astype(np.int64), ju.astype(np.int64)


@lru_cache(maxsize=256)
def _pattern_instance(cfg: SBMConfig, seed: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """PATTERN instance ``k``: (upper-triangle edge mask over ``_upper_pairs(n0)``, features)."""
    rng = np.random.default_rng([seed, cfg.stream, _INSTANCE_STREAM, k])
    n0 = cfg.pattern_size
    if n0 is None:
        n0 = int(rng.integers(cfg.size_min, cfg.size_max))
    edges = rng.random(n0 * (n0 - 1) // 2) < cfg.p_pattern
    feat = rng.integers(0, cfg.vocab_size, size=n0, dtype=np.int64)
    edges.flags.writeable = False  # cached and shared between graphs: must never be modified
    feat.flags.writeable = False
    return edges, feat


def pattern_instance(cfg: SBMConfig, seed: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Adjacency matrix ``(n0, n0)`` (int64, symmetric) and features of PATTERN instance ``k``."""
    edges, feat = _pattern_instance(cfg, seed, k)
    n0 = feat.size
    iu, ju = _upper_pairs(n0)
    adj = np.zeros((n0, n0), dtype=np.int64)
    adj[iu[edges], ju[edges]] = 1
    return adj + adj.T, feat.copy()


def generate_sbm_sample(cfg: SBMConfig, seed: int, split: str, index: int) -> SBMSample:
    """Graph ``index`` of ``split``, drawn from its own RNG (so prefixes are consistent)."""
    rng = np.random.default_rng([seed, cfg.stream, _SPLIT_IDS[split], index])
    k_comm = cfg.n_communities
    sizes = rng.integers(cfg.size_min, cfg.size_max, size=k_comm)
    block = np.repeat(np.arange(k_comm, dtype=np.int64), sizes)
    n_comm = block.size
    if cfg.n_patterns:
        # Pattern nodes are appended after the community nodes (as in the notebook's add_pattern)
        # and carry the block id k_comm; the permutation below hides their position.
        p_edges, p_feat = _pattern_instance(cfg, seed, index % cfg.n_patterns)
        feat = np.concatenate(
            [rng.integers(0, cfg.vocab_size, size=n_comm, dtype=np.int64), p_feat])
        block = np.concatenate([block, np.full(p_feat.size, k_comm, dtype=np.int64)])
    n = block.size
    iu, ju = _upper_pairs(n)
    bi, bj = block[iu], block[ju]
    prob = np.where(bi == bj, cfg.p, cfg.q)
    if cfg.n_patterns:
        prob = np.where((bi == k_comm) != (bj == k_comm), cfg.q_pattern, prob)
    keep = rng.random(iu.size) < prob
    if cfg.n_patterns and p_edges.size:
        # Pairs with both ends in the pattern are the last rows of the row-major upper triangle
        # and come in the same order as _upper_pairs(n0): overwrite them with the fixed pattern.
        keep[-p_edges.size:] = p_edges
    perm = rng.permutation(n)
    inv = np.empty(n, dtype=np.int64)
    inv[perm] = np.arange(n, dtype=np.int64)
    a, b = inv[iu[keep]], inv[ju[keep]]
    src = np.concatenate([a, b])
    dst = np.concatenate([b, a])
    order = np.argsort(src * n + dst, kind="stable")
    src, dst = src[order], dst[order]
    new_block = block[perm]
    if cfg.n_patterns:
        label = (new_block == k_comm).astype(np.int64)
        feat = feat[perm]
    else:
        label = new_block
        # As in the notebook: after shuffling, one random node per community r gets r + 1.
        feat = np.zeros(n, dtype=np.int64)
        for r in range(k_comm):
            members = np.flatnonzero(label == r)
            feat[members[rng.integers(members.size)]] = r + 1
    return SBMSample(n, src, dst, feat, label, perm, block)


def _sample_graph(s: SBMSample) -> Graph:
    return Graph(torch.from_numpy(s.src), torch.from_numpy(s.dst), s.num_nodes,
                 ndata={"feat": torch.from_numpy(s.feat), "label": torch.from_numpy(s.label)})


def _to_split(graphs: Sequence[Graph]) -> GraphSplit:
    return GraphSplit(graphs, [g.ndata["label"] for g in graphs])


def _generate(cfg: SBMConfig, seed: int, split: str, n: int,
              progress: bool) -> Iterator[SBMSample]:
    """The ``n`` samples of ``split`` behind a progress bar. The bar is closed in ``finally``
    (callers close this generator with :func:`contextlib.closing`), so the line that reports an
    interrupt or an error starts on a clean line, not on the bar's."""
    bar = tqdm(total=n, desc=f"{cfg.dirname} {split}", unit="graph", disable=not progress,
               leave=False)
    try:
        for i in range(n):
            yield generate_sbm_sample(cfg, seed, split, i)
            bar.update()
    finally:
        bar.close()


def generate_sbm_split(name: str, split: str, n: int | None = None, seed: int = DEFAULT_SEED,
                       variant: str | None = None, progress: bool = False) -> GraphSplit:
    """The first ``n`` graphs (all when None) of ``split``, generated in memory, not saved."""
    cfg = sbm_config(name, variant)
    if split not in _SPLIT_IDS:
        raise ValueError(f"unknown split {split!r}; valid: {', '.join(SPLITS)}")
    size = cfg.split_sizes[_SPLIT_IDS[split]]
    n = size if n is None else min(n, size)
    with closing(_generate(cfg, _check_seed(seed), split, n, progress)) as samples:
        return _to_split([_sample_graph(sample) for sample in samples])


# --------------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------------


def sbm_statistics(split: GraphSplit) -> dict:
    """Graph count, mean/min/max nodes, mean directed edges and class balance of a split.

    ``class_balance`` is the fraction of nodes per class (index = class id).
    """
    if len(split) == 0:
        return _statistics(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
    nodes = np.array([g.num_nodes() for g in split.graphs], dtype=np.int64)
    edges = np.array([g.num_edges() for g in split.graphs], dtype=np.int64)
    labels = torch.cat([torch.as_tensor(y).reshape(-1) for y in split.labels]).numpy()
    return _statistics(nodes, edges, labels)


def _statistics(nodes: np.ndarray, edges: np.ndarray, labels: np.ndarray) -> dict:
    """:func:`sbm_statistics` from per-graph node/edge counts and the concatenated labels."""
    n = len(nodes)
    if n == 0:
        return {"graphs": 0, "mean_nodes": 0.0, "min_nodes": 0, "max_nodes": 0,
                "mean_edges": 0.0, "class_balance": []}
    counts = np.bincount(labels.astype(np.int64))
    return {
        "graphs": n,
        "mean_nodes": float(nodes.mean()),
        "min_nodes": int(nodes.min()),
        "max_nodes": int(nodes.max()),
        "mean_edges": float(edges.mean()),
        "class_balance": [float(c) for c in counts / counts.sum()],
    }


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------


def _check_seed(seed: int) -> int:
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def _file_set(root: Path, first: int | None) -> FileSet:
    """The full files (``first`` None) or those of the first ``first`` graphs per split."""
    suffix = "" if first is None else f"_first{first}"
    return FileSet({s: root / f"{s}{suffix}.npz" for s in SPLITS}, root / f"meta{suffix}.json",
                   FORMAT_NAME, FORMAT_VERSION, DATA_DIR_REMEDY)


def _expected_meta(cfg: SBMConfig, seed: int, first: int | None) -> dict:
    sizes = zip(SPLITS, cfg.split_sizes, strict=True)
    counts = {s: n if first is None else min(first, n) for s, n in sizes}
    return {
        "name": cfg.name,
        "variant": cfg.variant,
        "seed": seed,
        "generator_version": GENERATOR_VERSION,
        "params": json.loads(json.dumps(dataclasses.asdict(cfg))),  # tuples -> lists, as read
        "max_graphs": first,
        "counts": counts,
    }


def _read_meta(files: FileSet, cfg: SBMConfig, seed: int,
               first: int | None) -> tuple[dict | None, str | None]:
    """:meth:`FileSet.state` of one file set; DataError when it was generated with other
    settings."""
    meta, why = files.state()
    if meta is None:
        return None, why
    expected = _expected_meta(cfg, seed, first)
    diff = [k for k, v in expected.items() if meta.get(k) != v]
    if diff:
        root = files.meta.parent
        raise DataError(f"{root} holds SBM files generated with other settings (differing: "
                        f"{', '.join(diff)}); delete the folder to regenerate them")
    return meta, None


def _load_splits(files: FileSet, meta: dict, take: int) -> dict[str, GraphSplit]:
    """The first ``take`` graphs of every split; PackError when a file does not hold them."""
    dtypes = {"feat": torch.int64, "label": torch.int64}
    return {s: _to_split(unpack_graphs(files.read(s, meta["counts"][s], take), dtypes))
            for s in SPLITS}


def _report(msg: str, progress: bool) -> None:
    # With progress on the user watches a tqdm bar: print the summary beside it; otherwise
    # (tests, library use) only log it.
    if progress:
        print(msg, flush=True)
    else:
        logger.info(msg)


def _pack_split(cfg: SBMConfig, seed: int, split: str, n: int, progress: bool) -> GraphPack:
    """Generate ``n`` graphs of ``split`` straight into pack arrays (compact dtypes as they
    come, so a full split never holds int64 edge lists in memory)."""
    pattern_max = (cfg.pattern_size or cfg.size_max - 1) if cfg.n_patterns else 0
    id_type = smallest_uint(cfg.n_communities * (cfg.size_max - 1) + pattern_max - 1)
    nodes, edges, src, dst, feat, label = [], [], [], [], [], []
    with closing(_generate(cfg, seed, split, n, progress)) as samples:
        for sample in samples:
            nodes.append(sample.num_nodes)
            edges.append(sample.src.size)
            src.append(sample.src.astype(id_type))
            dst.append(sample.dst.astype(id_type))
            feat.append(sample.feat.astype(np.int8))
            label.append(sample.label.astype(np.int8))

    def cat(parts: list[np.ndarray], dtype) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

    return GraphPack(np.array(nodes, dtype=np.int64), np.array(edges, dtype=np.int64),
                     cat(src, id_type), cat(dst, id_type),
                     node={"feat": cat(feat, np.int8), "label": cat(label, np.int8)})


def _generate_and_save(files: FileSet, cfg: SBMConfig, seed: int, first: int | None,
                       progress: bool) -> dict:
    assert cfg.vocab_size <= 127 and cfg.num_classes <= 127  # stored as int8
    record = _expected_meta(cfg, seed, first)
    stats: dict[str, dict] = {}
    t0 = time.perf_counter()

    def packs():  # one split in memory at a time; the record is complete when they are written
        for split in SPLITS:
            pack = _pack_split(cfg, seed, split, record["counts"][split], progress)
            stats[split] = _statistics(pack.num_nodes, pack.num_edges, pack.node["label"])
            yield split, pack
        record["statistics"] = stats
        record["generation_seconds"] = round(time.perf_counter() - t0, 2)
        record["created"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")

    meta = files.write(packs(), record)
    what = cfg.dirname + ("" if first is None else f" (first {first} graphs per split)")
    _report(f"generated {what} in {meta['generation_seconds']:.1f} s (seed {seed}) into "
            f"{files.meta.parent}", progress)
    return meta


# --------------------------------------------------------------------------------------------
# Public loader
# --------------------------------------------------------------------------------------------


def load_sbm_dataset(name: str, data_dir: str | os.PathLike, max_graphs: int | None = None,
                     source: str = "generate", seed: int = DEFAULT_SEED,
                     variant: str | None = None, progress: bool = True,
                     generate: bool = True) -> GraphDataset:
    """SBM_CLUSTER or SBM_PATTERN as a :class:`GraphDataset` (labels = per-node classes).

    ``source="generate"`` loads the files under ``data_dir`` or generates (and saves) them on
    first use; ``max_graphs`` keeps the first ``N`` graphs per split, generating only those when
    the full files are absent. ``source="dgl"`` converts DGL's copy of the published data (DGL
    profile), ``source="pyg"`` PyG's ``GNNBenchmarkDataset`` (needs torch_geometric); both
    download once (internet) and ignore ``seed`` and ``variant``. ``generate=False`` only reads:
    missing files are a :class:`DataError` and nothing is written (checkpoint evaluation).
    """
    cfg = sbm_config(name, variant)
    seed = _check_seed(seed)
    if max_graphs is not None and (not isinstance(max_graphs, (int, np.integer))
                                   or max_graphs < 1):
        raise ValueError(f"max_graphs must be a positive integer or None, got {max_graphs!r}")
    if source not in SOURCES:
        raise ValueError(f"unknown source {source!r}; valid: {', '.join(SOURCES)}")
    if source != "generate" and variant is not None:
        raise ValueError(f"variant {variant!r} only exists with source='generate'")
    data_dir = Path(data_dir)
    if generate:
        try:
            data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DataError(f"cannot create the data directory {data_dir}: {exc}") from exc
    if source == "dgl":
        return _load_from_dgl(cfg, data_dir, max_graphs, progress)
    if source == "pyg":
        return _load_from_pyg(cfg, data_dir, max_graphs, progress)

    return _generated(cfg, data_dir, max_graphs, seed, progress, generate)


def _generated(cfg: SBMConfig, data_dir: Path, max_graphs: int | None, seed: int,
               progress: bool, generate: bool) -> GraphDataset:
    """:func:`load_sbm_dataset` from our generator's files (generated first where missing)."""
    root = data_dir / (cfg.dirname if seed == DEFAULT_SEED else f"{cfg.dirname}_seed{seed}")
    if generate:
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DataError(f"cannot create the data directory {root}: {exc}") from exc

    files = _file_set(root, None)
    meta, why = _read_meta(files, cfg, seed, None)
    first: int | None = None
    if meta is None and why is None and max_graphs is not None \
            and max_graphs < max(cfg.split_sizes):
        first = int(max_graphs)  # quick path: only a prefix, in its own files
        files = _file_set(root, first)
        meta, why = _read_meta(files, cfg, seed, first)
    take = max(cfg.split_sizes) if max_graphs is None else int(max_graphs)
    splits = None
    if meta is not None:
        try:
            splits = _load_splits(files, meta, take)
        except PackError as exc:
            meta, why = None, f"cannot be read ({exc})"
    if meta is None and not generate:
        raise DataError(f"no usable {cfg.dirname} files in {root} ({why or 'none there'}) and "
                        "this command does not generate data: point --data_dir at the folder "
                        "the run used, or generate them with python -m scripts.diagnose "
                        f"--sizes_only --dataset {cfg.name} --data_dir {data_dir}")
    if meta is None:
        if why is not None:
            logger.warning("%s: the SBM files %s; regenerating them (the same graphs; takes "
                           "seconds)", root, " ".join(why.split()))
        meta = _generate_and_save(files, cfg, seed, first, progress)
        splits = _load_splits(files, meta, take)
    assert splits is not None
    for s, split in splits.items():
        _check_values(cfg, split, str(files.files[s]))
    stats = {s: sbm_statistics(sp) for s, sp in splits.items()}
    info = {
        "source": "generate",
        "path": str(root),
        "seed": seed,
        "variant": cfg.variant,
        "params": meta["params"],
        "file_max_graphs": meta["max_graphs"],
        "generation_seconds": meta.get("generation_seconds"),
        "statistics": stats,
        "published": PUBLISHED.get(cfg.name),
    }
    display = cfg.name if cfg.variant is None else f"{cfg.name}_{cfg.variant}"
    return GraphDataset(display, splits["train"], splits["val"], splits["test"],
                        cfg.vocab_size, cfg.num_classes, 1, info)


def _check_values(cfg: SBMConfig, split: GraphSplit, where: str) -> None:
    """Feature ids in the dataset's vocabulary and labels in its classes, checked once."""
    check_graph_split(split, where, node_vocab=cfg.vocab_size, num_classes=cfg.num_classes,
                      node_what="node feature id", label_what="node label")


def _runtime_graph(g: Graph, feat: torch.Tensor, label: torch.Tensor) -> Graph:
    """A converted graph as the nets get ours: int64 (N,) feat and label, no edge features."""
    return Graph(g.src, g.dst, g.num_nodes(),
                 ndata={"feat": feat.reshape(-1).long(), "label": label.reshape(-1).long()})


def _dataset_from(cfg: SBMConfig, splits: dict[str, GraphSplit], source: str,
                  path: Path) -> GraphDataset:
    for s, split in splits.items():
        _check_values(cfg, split, f"{source} {cfg.name} {s} split")
    stats = {s: sbm_statistics(sp) for s, sp in splits.items()}
    info = {"source": source, "path": str(path), "statistics": stats}
    return GraphDataset(cfg.name, splits["train"], splits["val"], splits["test"],
                        cfg.vocab_size, cfg.num_classes, 1, info)


def _load_from_dgl(cfg: SBMConfig, data_dir: Path, max_graphs: int | None,
                   progress: bool) -> GraphDataset:
    dgl = require_dgl(f"{cfg.name} with --data_source dgl")
    cls_name = "CLUSTERDataset" if cfg.name == "SBM_CLUSTER" else "PATTERNDataset"
    cls = getattr(dgl.data, cls_name)
    splits = {}
    for split, mode in zip(SPLITS, ("train", "valid", "test"), strict=True):
        ds = download(f"dgl.data.{cls_name}(mode={mode!r}, raw_dir={str(data_dir)!r})",
                      lambda mode=mode: cls(mode=mode, raw_dir=str(data_dir), verbose=progress),
                      "use --data_source generate to build it locally")
        n = len(ds) if max_graphs is None else min(int(max_graphs), len(ds))
        graphs = []
        for i in range(n):
            # DGL stores int32 ids and int16 labels; the nets and the loss want int64 (N,).
            g = from_dgl(ds[i])
            graphs.append(_runtime_graph(g, g.ndata["feat"], g.ndata["label"]))
        splits[split] = _to_split(graphs)
    return _dataset_from(cfg, splits, "dgl", data_dir)


def feature_ids(x: torch.Tensor, vocab_size: int, where: str = "node features") -> torch.Tensor:
    """Integer feature ids ``(N,)`` int64 from ids (``(N,)``/``(N, 1)``) or one-hot rows of
    width ``vocab_size`` (PyG's SBM convention). DataError for anything else."""
    x = torch.as_tensor(x)
    if x.dim() == 1 or (x.dim() == 2 and x.shape[1] == 1):
        ids = x.reshape(-1)
        if ids.is_floating_point() and not bool((ids == ids.round()).all()):
            raise DataError(f"{where}: expected integer ids, got fractional values")
        ids = ids.long()
    elif x.dim() == 2 and x.shape[1] == vocab_size:
        binary = bool(((x == 0) | (x == 1)).all())
        if not binary or not bool((x.sum(1) == 1).all()):
            raise DataError(f"{where}: rows of width {vocab_size} are not one-hot")
        ids = x.argmax(1).long()
    else:
        raise DataError(f"{where} have shape {tuple(x.shape)}; expected ids (N,) or one-hot "
                        f"(N, {vocab_size})")
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise DataError(f"{where}: ids outside [0, {vocab_size})")
    return ids


def _load_from_pyg(cfg: SBMConfig, data_dir: Path, max_graphs: int | None,
                   progress: bool) -> GraphDataset:
    pyg_name = cfg.name.removeprefix("SBM_")
    root = data_dir / "pyg"
    splits = {}
    for split, samples in pyg_benchmark(pyg_name, root, max_graphs, cfg.name,
                                        "use --data_source generate to build it locally"):
        graphs = [_runtime_graph(g, feature_ids(g.ndata["feat"], cfg.vocab_size,
                                                f"PyG {pyg_name} node features"),
                                 torch.as_tensor(data.y)) for data, g in samples]
        splits[split] = _to_split(graphs)
    return _dataset_from(cfg, splits, "pyg", root)


if __name__ == "__main__":  # it printed statistics once; scripts/diagnose.py does that now
    import sys

    print("error: python -m data.sbm no longer runs; for the statistics: "
          "python -m scripts.diagnose --sizes_only --dataset SBM_CLUSTER --data_dir DIR",
          file=sys.stderr)
    sys.exit(2)
