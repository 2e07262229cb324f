"""One entry point from a dataset name and the config's ``data`` section to loaded data.

``data_source`` (``--data_source``) picks where a dataset comes from (docs/data.md, "Where each
dataset comes from"); None means the first entry of :data:`DATA_SOURCES`. A source a dataset
does not offer, or a missing package, is a one-line :class:`DataError`.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from data.common import DEFAULT_DATA_ROOT, DataError, GraphDataset, pick_source
from data.node_datasets import NODE_DATASETS, NODE_SOURCES, NodeDataset, check_split_sizes

# Batched-graph datasets; the first source is the default.
GRAPH_SOURCES: dict[str, tuple[str, ...]] = {
    "SBM_CLUSTER": ("generate", "dgl", "pyg"),
    "SBM_PATTERN": ("generate", "dgl", "pyg"),
    "ZINC": ("raw", "dgl", "pyg"),
    "MNIST": ("raw", "dgl", "pyg"),
    "CIFAR10": ("raw", "dgl", "pyg"),
}
# Every dataset with the sources it accepts (node datasets: see data.node_datasets).
DATA_SOURCES: dict[str, tuple[str, ...]] = {**GRAPH_SOURCES, **NODE_SOURCES}
# What a config may name at all (the per-dataset check is resolve_data_source).
SOURCE_CHOICES = ("generate", "raw", "dgl", "pyg")


def data_sources(dataset: str) -> tuple[str, ...]:
    """The sources ``dataset`` accepts, its default first; DataError for an unknown dataset."""
    key = dataset if dataset in GRAPH_SOURCES else _node_key(dataset)
    return DATA_SOURCES[key]


def _node_key(dataset: str) -> str:
    try:
        return node_dataset_key(dataset)
    except ValueError:
        raise DataError(f"unknown dataset {dataset!r}; valid: {', '.join(DATA_SOURCES)}") \
            from None


def resolve_data_source(dataset: str, source: str | None) -> str:
    """``source`` checked against what ``dataset`` offers (None: its default)."""
    return pick_source(dataset, source, data_sources(dataset))


# The config's data keys each kind of dataset takes (data_dir and data_source: all of them); a
# key set for another dataset is refused (train.config.check_applies), never silently ignored.
_BATCHED_OPTIONS = ("max_graphs", "loader_workers")
_DATA_OPTIONS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("SBM_CLUSTER", "SBM_PATTERN"), _BATCHED_OPTIONS + ("sbm_variant",)),
    "ZINC": _BATCHED_OPTIONS,
    **dict.fromkeys(("MNIST", "CIFAR10"), _BATCHED_OPTIONS + ("cache_dir", "workers")),
}
_NODE_OPTIONS = ("split", "split_ratio", "edge_direction", "normalize_features")


def data_options(dataset: str) -> frozenset[str]:
    """The config's ``data`` keys that loading ``dataset`` (a valid name) uses."""
    return frozenset(("data_dir", "data_source") + _DATA_OPTIONS.get(dataset, _NODE_OPTIONS))


def default_data_dir(dataset: str) -> str:
    """Where a dataset is looked for when ``--data_dir`` is not given."""
    if dataset.startswith("SBM_"):
        return DEFAULT_DATA_ROOT  # generated there on first use
    return os.path.join(DEFAULT_DATA_ROOT, dataset)


def load_graph_dataset(dataset: str, data_cfg: dict[str, Any],
                       write_data: bool = True) -> GraphDataset:
    """Load a batched-graph dataset (SBM_*, ZINC, MNIST, CIFAR10) as the config says.

    ``write_data=False``: never write into a data or cache folder: SBM files are not generated
    (missing ones are a DataError, as generating them is making the data), and superpixel graphs
    come from a usable cache or are built in memory from the images (uncached). A
    ``progress`` entry of ``data_cfg`` set to False hides the progress bars of generation and
    builds. A dataset without training graphs is a :class:`DataError` (the loaders check the
    values)."""
    ds = _load_graph_dataset(dataset, data_cfg, write_data)
    if ds.train is None or len(ds.train) == 0:
        where = data_cfg.get("data_dir") or default_data_dir(dataset)
        raise DataError(f"{dataset} in {where}: the training split holds no graphs; check the "
                        "training file (e.g. train.pickle) or the data folder")
    return ds


def _load_graph_dataset(dataset: str, data_cfg: dict[str, Any],
                        write_data: bool) -> GraphDataset:
    data_dir = data_cfg.get("data_dir") or default_data_dir(dataset)
    source = resolve_data_source(dataset, data_cfg.get("data_source"))
    max_graphs = data_cfg.get("max_graphs")
    progress = data_cfg.get("progress", True)
    if dataset in ("SBM_CLUSTER", "SBM_PATTERN"):
        from data.sbm import load_sbm_dataset

        variant = data_cfg.get("sbm_variant")
        if variant is not None and source != "generate":
            raise DataError(f"sbm_variant {variant!r} exists only with data_source generate "
                            f"(got {source})")
        return load_sbm_dataset(dataset, data_dir, max_graphs=max_graphs, source=source,
                                variant=variant, progress=progress, generate=write_data)
    if dataset == "ZINC":
        from data.molecules import load_zinc

        return load_zinc(data_dir, max_graphs=max_graphs, source=source)
    from data.superpixels import load_superpixels

    return load_superpixels(dataset, data_dir, cache_dir=data_cfg.get("cache_dir"),
                            max_graphs=max_graphs, source=source,
                            workers=data_cfg.get("workers"), progress=progress,
                            write_cache=write_data)


def node_dataset_key(name: str) -> str:
    """The canonical name (case-insensitive; '-' and '_' alike); ValueError for unknown ones."""
    key = name.upper().replace("-", "_")
    if key not in NODE_DATASETS:
        raise ValueError(f"unknown node dataset {name!r}; choose from {', '.join(NODE_DATASETS)}")
    return key


# The module and function that load each node dataset (imported only when it is asked for).
_NODE_LOADERS = {"PUBMED": ("data.pubmed", "load_pubmed"),
                 "SQUIRREL": ("data.squirrel", "load_squirrel"),
                 "SQUIRREL_FILTERED": ("data.squirrel", "load_squirrel_filtered"),
                 "ARXIV_YEAR": ("data.arxiv_year", "load_arxiv_year"),
                 "YELPCHI": ("data.yelpchi", "load_yelpchi")}


def load_node_dataset(name: str, data_dir: str | os.PathLike | None,
                      source: str | None = None) -> NodeDataset:
    """Load one of :data:`~data.node_datasets.NODE_DATASETS` (case-insensitive; '-' and '_'
    alike) from ``source`` (default ``"raw"``; ``NODE_SOURCES`` lists what each accepts). Only
    the named dataset's module is imported."""
    key = node_dataset_key(name)
    source = pick_source(key, source, NODE_SOURCES[key])
    module, loader = _NODE_LOADERS[key]
    return getattr(importlib.import_module(module), loader)(data_dir, source=source)


def load_node_data(dataset: str, data_cfg: dict[str, Any]) -> NodeDataset:
    """Load a single-graph node dataset (PUBMED, SQUIRREL, ARXIV_YEAR, YELPCHI) as the config
    says (``data_dir``, ``data_source``); the split the config asks for (``split``,
    ``split_ratio``) is checked here, before any run starts, to give every run training
    nodes."""
    ds = load_node_dataset(_node_key(dataset), data_cfg.get("data_dir"),
                           data_cfg.get("data_source"))
    check_split_sizes(ds, data_cfg.get("split") or "random", data_cfg.get("split_ratio"))
    return ds
