"""SBM_PATTERN and SBM_CLUSTER: a seeded, vectorised re-implementation of the generators of the
benchmarking-gnns notebooks (spec section 4, "SBM generation"), their files, and DGL's and PyG's
copies of the published data. The models, the SBM_PATTERN generator variants, the seeding and
the files: docs/data.md, "SBM_PATTERN / SBM_CLUSTER".
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
from data.common import SPLITS, DataError, GraphDataset, GraphSplit, check_graph_split, size_stats
from data.files import FileSet, GraphPack, PackError, smallest_uint, unpack_graphs
from data.interop import dataset_splits, from_dgl, from_pyg

logger = logging.getLogger(__name__)

SBM_NAMES = ("SBM_CLUSTER", "SBM_PATTERN")
DEFAULT_VARIANT = "q35-size5to34"
SBM_VARIANTS = (DEFAULT_VARIANT, "q20-size20", "q35-size20", "q20-one-pattern")
SBM_VARIANT_ALIASES = {"final": DEFAULT_VARIANT, "early": "q20-size20",
                       "PATTERN_EASY": "q20-one-pattern"}
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


_PATTERN = SBMConfig("SBM_PATTERN", None, stream=2, n_communities=5, p=0.5, q=0.35,
                     vocab_size=3, num_classes=2, split_sizes=(10000, 2000, 2000), n_patterns=100)
_CONFIGS: dict[tuple[str, str | None], SBMConfig] = {
    ("SBM_CLUSTER", None): SBMConfig(
        "SBM_CLUSTER", None, stream=1, n_communities=6, p=0.55, q=0.25, vocab_size=7,
        num_classes=6, split_sizes=(10000, 1000, 1000)),
    ("SBM_PATTERN", None): _PATTERN,
    # the other PATTERN generators, (variant, stream, q, patterns), all with 20-node patterns
    **{("SBM_PATTERN", v): dataclasses.replace(_PATTERN, variant=v, stream=k, q=q, n_patterns=m,
                                               pattern_size=20)
       for v, k, q, m in (("q20-one-pattern", 3, 0.2, 1), ("q20-size20", 4, 0.2, 100),
                          ("q35-size20", 5, 0.35, 100))},
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
    """The generation parameters of ``name`` (and ``variant``, :func:`check_variant`);
    ValueError for unknown ones."""
    if name not in SBM_NAMES:
        raise ValueError(f"unknown SBM dataset {name!r}; valid names: {', '.join(SBM_NAMES)}")
    check_variant(name, variant)
    variant = SBM_VARIANT_ALIASES.get(variant, variant)
    # the default's files and streams keep their names
    return _CONFIGS[name, None if variant == DEFAULT_VARIANT else variant]


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
    rng = np.random.default_rng([seed, cfg.stream, SPLITS.index(split), index])
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
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; valid: {', '.join(SPLITS)}")
    size = cfg.split_sizes[SPLITS.index(split)]
    n = size if n is None else min(n, size)
    with closing(_generate(cfg, _check_seed(seed), split, n, progress)) as samples:
        return _to_split([Graph(torch.from_numpy(s.src), torch.from_numpy(s.dst), s.num_nodes,
                                ndata={"feat": torch.from_numpy(s.feat),
                                       "label": torch.from_numpy(s.label)}) for s in samples])


# --------------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------------


def sbm_statistics(split: GraphSplit) -> dict:
    """:meth:`GraphSplit.stats` and the class balance of a split."""
    labels = [torch.as_tensor(y).reshape(-1) for y in split.labels]
    return {**split.stats(),
            "class_balance": _balance(torch.cat(labels).numpy() if labels else np.zeros(0))}


def _balance(labels: np.ndarray) -> list[float]:
    """The fraction of nodes per class (index = class id)."""
    counts = np.bincount(labels.astype(np.int64))
    return [float(c) for c in counts / counts.sum()] if labels.size else []


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
            stats[split] = {**size_stats(pack.num_nodes, pack.num_edges),
                            "class_balance": _balance(pack.node["label"])}
            yield split, pack
        record["statistics"] = stats
        record["generation_seconds"] = round(time.perf_counter() - t0, 2)
        record["created"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")

    meta = files.write(packs(), record)
    what = cfg.dirname + ("" if first is None else f" (first {first} graphs per split)")
    msg = (f"generated {what} in {meta['generation_seconds']:.1f} s (seed {seed}) into "
           f"{files.meta.parent}")
    if progress:  # the user watches a tqdm bar: the summary goes beside it, else to the log
        print(msg, flush=True)
    else:
        logger.info(msg)
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
    root = data_dir / (cfg.dirname if seed == DEFAULT_SEED else f"{cfg.dirname}_seed{seed}")
    if generate:
        folder = root if source == "generate" else data_dir
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DataError(f"cannot create the data directory {folder}: {exc}") from exc
    if source != "generate":
        return _downloaded(cfg, source, data_dir, max_graphs, progress)
    return _generated(cfg, root, max_graphs, seed, progress, generate)


def _generated(cfg: SBMConfig, root: Path, max_graphs: int | None, seed: int,
               progress: bool, generate: bool) -> GraphDataset:
    """:func:`load_sbm_dataset` from our generator's files in ``root`` (generated first where
    missing)."""
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
                        f"--sizes_only --dataset {cfg.name} --data_dir {root.parent}")
    if meta is None:
        if why is not None:
            logger.warning("%s: the SBM files %s; regenerating them (the same graphs; takes "
                           "seconds)", root, " ".join(why.split()))
        meta = _generate_and_save(files, cfg, seed, first, progress)
        splits = _load_splits(files, meta, take)
    assert splits is not None
    for s, split in splits.items():
        _check_values(cfg, split, str(files.files[s]))
    return _dataset(cfg, cfg.dirname, splits, {
        "source": "generate",
        "path": str(root),
        "seed": seed,
        "variant": cfg.variant,
        "params": meta["params"],
        "file_max_graphs": meta["max_graphs"],
        "generation_seconds": meta.get("generation_seconds"),
        "published": PUBLISHED.get(cfg.name),
    })


def _dataset(cfg: SBMConfig, name: str, splits: dict[str, GraphSplit],
             info: dict) -> GraphDataset:
    """The :class:`GraphDataset` of checked ``splits``, their statistics added to ``info``."""
    info["statistics"] = {s: sbm_statistics(split) for s, split in splits.items()}
    return GraphDataset(name, splits["train"], splits["val"], splits["test"], cfg.vocab_size,
                        cfg.num_classes, 1, info)


def _check_values(cfg: SBMConfig, split: GraphSplit, where: str) -> None:
    """Feature ids in the dataset's vocabulary and labels in its classes, checked once."""
    check_graph_split(split, where, node_vocab=cfg.vocab_size, num_classes=cfg.num_classes,
                      node_what="node feature id", label_what="node label")


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


def _downloaded(cfg: SBMConfig, source: str, data_dir: Path, max_graphs: int | None,
                progress: bool) -> GraphDataset:
    """The published data from DGL's ``CLUSTERDataset``/``PATTERNDataset`` or PyG's
    ``GNNBenchmarkDataset`` (under ``data_dir/pyg``) as our graphs."""
    short, purpose = cfg.name.removeprefix("SBM_"), f"{cfg.name} with --data_source {source}"
    offline = "use --data_source generate to build it locally"
    if source == "dgl":
        path = data_dir
        samples = dataset_splits("dgl", f"{short}Dataset", purpose, offline, max_graphs,
                                 raw_dir=str(data_dir), verbose=progress)
    else:
        path = data_dir / "pyg"
        samples = dataset_splits("pyg", "GNNBenchmarkDataset", purpose, offline, max_graphs,
                                 root=str(path), name=short)
    splits = {}
    for split, items in samples:
        graphs = []
        for item in items:
            if source == "dgl":  # int32 ids, int16 labels
                g = from_dgl(item)
                feat, label = g.ndata["feat"], g.ndata["label"]
            else:  # one-hot features
                g = from_pyg(item)
                feat = feature_ids(g.ndata["feat"], cfg.vocab_size, f"PyG {short} node features")
                label = torch.as_tensor(item.y)
            # ours: int64 (N,) ids and labels, as the nets and the loss want, no edge features
            graphs.append(Graph(g.src, g.dst, g.num_nodes(), ndata={
                "feat": feat.reshape(-1).long(), "label": label.reshape(-1).long()}))
        splits[split] = _to_split(graphs)
        _check_values(cfg, splits[split], f"{source} {cfg.name} {split} split")
    return _dataset(cfg, cfg.name, splits, {"source": source, "path": str(path)})


if __name__ == "__main__":  # it printed statistics once; scripts/diagnose.py does that now
    from data.common import retired_command

    retired_command("data.sbm", "--sizes_only --dataset SBM_CLUSTER")
