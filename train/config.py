"""Experiment configuration: the authors' JSON schema, validated on load, defaults in one place.

A config has the sections of the benchmarking-gnns release::

    {"gpu": {"use", "id"}, "model", "dataset", "out_dir",
     "params": {...training...}, "net_params": {...architecture...}}

plus an optional ``"data"`` section of this project (where the data lives). Keys starting with
``_`` (e.g. ``"_note"``) are comments. Every other unknown key is an error that names the key, so a
typo never silently falls back to a default. Each key's type, default, allowed values or range
and help text are declared once, in :data:`SCHEMA`; the command line (``--key value``) and its
``--help`` are generated from it, and every value is checked before anything is written.
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from data.loaders import SOURCE_CHOICES
from data.node_datasets import EDGE_DIRECTIONS, SPLIT_MODES
from data.sbm import SBM_VARIANT_ALIASES, SBM_VARIANTS, check_variant
from layers.ap_layer import AP_MODE_ALIASES, AP_MODES
from layers.autogcn_layer import FILTERS, GATE_ALIASES, GATES, MODES
from layers.gin_layer import AGGREGATORS as GIN_AGGREGATORS
from layers.graphsage_layer import SAGE_AGGREGATORS
from layers.propagation import READOUTS, SOURCE_DEGREES
from train.cli import output_problem
from train.compilation import ALIASES as COMPILE_ALIASES
from train.compilation import SETTINGS as COMPILE_SETTINGS
from train.stopping import EARLY_STOP_RULES


class ConfigError(ValueError):
    """A configuration problem, with a message naming the offending key or value."""


@dataclass(frozen=True)
class Field:
    """One config key: accepted types, default, and the values it may take.

    ``default=None`` means "decided later" (the task's or the data's default) and makes ``null``
    a valid value; for every other key ``null`` is an error. ``choices`` are the canonical
    values, ``aliases`` other accepted spellings mapped to them (the authors' ``gate: true``).
    ``low``/``high`` bound numbers (``inclusive`` says whether the bounds are allowed).
    ``items`` are the types a list value's elements may have (a list is never nested).
    ``path`` marks a file-system path: ``~`` is expanded, and empty or over-long names are
    refused before anything is written.
    """

    types: tuple[type, ...]
    default: Any
    help: str = ""
    choices: tuple[Any, ...] | None = None
    aliases: Mapping[Any, Any] = field(default_factory=dict)
    low: float | None = None
    high: float | None = None
    inclusive: tuple[bool, bool] = (True, True)
    items: tuple[type, ...] = ()
    path: bool = False


# Seeds feed numpy's legacy generator, which takes 0 <= seed < 2**32; runs use seed, seed + 1, ...
MAX_SEED = 2**32 - 1
MAX_RUNS = 1000  # the seed list and the per-run records stay small
# Sizes beyond these only exhaust memory (a hidden_dim of 10**9 asks for petabytes); the
# published configs stay far below them.
MAX_LAYERS = 256
MAX_WIDTH = 8192
# Longest path accepted for a folder key: PATH_MAX (4096 on Linux) less room for the run
# folder, checkpoint and event file names appended below it.
MAX_PATH_CHARS = 3800
MAX_NAME_BYTES = 255  # NAME_MAX of common file systems (ext4, xfs, btrfs, tmpfs)


def _int(default: Any, help: str, low: int | None = None, high: int | None = None) -> Field:
    return Field((int,), default, help, low=low, high=high)


def _float(default: Any, help: str, low: float | None = None, high: float | None = None,
           inclusive: tuple[bool, bool] = (True, True)) -> Field:
    return Field((float,), default, help, low=low, high=high, inclusive=inclusive)


def _path(help: str, default: Any = None) -> Field:
    return Field((str,), default, help, path=True)


def _bool(default: Any, help: str) -> Field:
    return Field((bool,), default, help)


def _choice(default: Any, help: str, choices: tuple, aliases: Mapping | None = None) -> Field:
    return Field((str,), default, help, choices=choices, aliases=aliases or {})


_UNUSED = "accepted so the authors' config files run unchanged; no effect here"
_DROPOUT = {"low": 0.0, "high": 1.0, "inclusive": (True, False)}

# section -> key -> Field. The single place where options, defaults and checks live.
SCHEMA: dict[str, dict[str, Field]] = {
    "gpu": {
        "use": _bool(True, "train on a GPU when one is available (else the CPU, logged)"),
        "id": _int(0, "GPU index (a config's nonexistent id falls back to 0 with a warning)", 0,
                   1023),
    },
    "params": {
        "seed": _int(41, "first run seed when --seed is given on the command line (runs use "
                         "seed, seed+1, ...); otherwise the release's seeds 4565, 7432, ... are "
                         "used and this key only documents the authors' value; seed + runs "
                         "- 1 must stay below 2**32", 0, MAX_SEED),
        "epochs": _int(1000, "maximum epochs per run", 1),
        "batch_size": _int(128, "graphs per mini-batch", 1),
        "init_lr": _float(1e-3, "initial Adam learning rate", 0.0, inclusive=(False, True)),
        "lr_reduce_factor": _float(0.5, "ReduceLROnPlateau factor", 0.0, 1.0, (False, False)),
        "lr_schedule_patience": _int(5, "epochs without validation-loss improvement before the "
                                        "learning rate is reduced", 0),
        "min_lr": _float(1e-5, "stop once the learning rate falls below this", 0.0),
        "weight_decay": _float(0.0, "Adam weight decay", 0.0),
        "print_epoch_interval": _int(5, "log a line every N epochs", 1),
        "max_time": _float(48.0, "stop a run after this many hours", 0.0, inclusive=(False, True)),
        "runs": _int(1, "seeds to train, one after the other", 1, MAX_RUNS),
        "scheduler": _choice(None, "learning-rate schedule (default: plateau, none for "
                                   "single-graph node classification as in the release)",
                             ("plateau", "none")),
        "early_stop": _choice("none", "which epoch's weights are kept and when a run stops "
                                      "early: none (the best validation metric; stop at min_lr, "
                                      "max_time or epochs), val_loss_window (GPR-GNN, BernNet, "
                                      "ChebNetII: the lowest validation loss; stop once the "
                                      "validation loss exceeds the mean of the previous "
                                      "early_stop_patience epochs) or val_metric_patience "
                                      "(JacobiConv: the last epoch whose validation metric is at "
                                      "least the best so far; stop after early_stop_patience "
                                      "epochs without one)", EARLY_STOP_RULES),
        "early_stop_patience": _int(200, "epochs for early_stop (the papers use 200)", 1),
        "deterministic": _bool(False, "repeatable runs: torch's deterministic algorithms "
                                      "(cuDNN/cuBLAS settings included) and seeded loader "
                                      "workers, so the same seed on the same device gives "
                                      "identical metrics; slower (docs/performance.md)"),
        "compile": Field((bool, str), "auto",
                         "torch.compile the dense parts of the net (gates, post-processing, "
                         "readouts): on (true), off (false) or auto (on for runs of at least "
                         "2000 optimiser steps where the compiler works, off with "
                         "deterministic; docs/performance.md)", COMPILE_SETTINGS, COMPILE_ALIASES),
    },
    "net_params": {
        "L": _int(4, "graph layers", 1, MAX_LAYERS),
        "hidden_dim": _int(90, "hidden width (per head for GAT)", 1, MAX_WIDTH),
        "out_dim": _int(None, "width of the last graph layer (default: hidden_dim)", 1,
                        MAX_WIDTH),
        "residual": _bool(True, "residual connections (where widths match)"),
        "readout": _choice("mean", "graph readout", READOUTS),
        "in_feat_dropout": _float(0.0, "dropout on the embedded input", **_DROPOUT),
        "dropout": _float(0.0, "dropout in the layers", **_DROPOUT),
        "graph_norm": _bool(True, "graph-size normalisation (x / sqrt(N_g))"),
        "batch_norm": _bool(True, "batch normalisation in every layer"),
        "self_loop": _bool(False, "add self-loops (GCN, GAT, SGC only; never AutoGCN)"),
        "builtin": _bool(True, _UNUSED),
        # AutoGCN
        "K": _int(16, "AutoGCN: size of the over-parameterisation grid (not a hop count)", 1,
                  1024),
        "num_filters": _int(1, "AutoGCN: parallel filter banks, summed (the layer's "
                               "`num_banks`)", 1, 64),
        "opt": _choice("over", "AutoGCN filter parameterisation (the layer's `mode`)", MODES),
        "gate": Field((bool, str), "sequential", "AutoGCN complementary gate (true = "
                      "sequential, false = none)", GATES, GATE_ALIASES),
        "filters": Field((list, str), list(FILTERS), "AutoGCN filters to use, e.g. low,high",
                         items=(str,)),
        "single_a_init": _float(0.0, "AutoGCN mode single: initial a (the release's 0 never "
                                     "moves)"),
        # baselines
        "n_heads": _int(8, "GAT attention heads", 1, 64),
        "kernel": _int(3, "MoNet Gaussian kernels", 1, 64),
        "pseudo_dim_MoNet": _int(2, "MoNet pseudo-coordinate width", 1, 64),
        "n_mlp_GIN": _int(2, "GIN: linear layers per update MLP", 1, 64),
        "learn_eps_GIN": _bool(True, "GIN: learn epsilon"),
        "neighbor_aggr_GIN": _choice("sum", "GIN neighbour aggregation", GIN_AGGREGATORS),
        "sage_aggregator": _choice("mean", "GraphSAGE aggregator", SAGE_AGGREGATORS),
        "gated": _bool(False, "MLP: the release's gated variant"),
        "n_iter": _int(10, "APGCN: maximum propagation steps", 1, 1000),
        "prop_penalty": _float(0.05, "APGCN: propagation penalty in the loss", 0.0),
        "apgcn_mode": _choice("one_hop", "APGCN: one_hop propagates the layer input at every "
                                         "step (the release), adaptive the previous step (the "
                                         "AP-GCN paper)", AP_MODES, AP_MODE_ALIASES),
        "apgcn_linear_layers": _int(None, "APGCN: linear layers before the propagation on "
                                          "batched graphs (default L - 1)", 0, MAX_LAYERS),
        "sgc_k": _int(2, "SGC: propagation steps", 1, 1000),
        "gcn_source_degree": _choice("in", "GCN: scale a message by its source's in-degree (the "
                                           "release, DGL 0.4) or out-degree (DGL 2's GraphConv "
                                           "norm='both'); differs on directed graphs only",
                                     SOURCE_DEGREES),
        # AutoGCN's successors: GPRGNN, BERNNET, CHEBNETII, JACOBICONV (nets/successors.py)
        "poly_order": _int(10, "GPRGNN/BERNNET/CHEBNETII/JACOBICONV: polynomial order K "
                               "(propagation hops; 10 in every paper)", 1, 100),
        "dprate": _float(0.5, "GPRGNN/BERNNET/CHEBNETII/JACOBICONV: dropout on the signal "
                              "entering the filter (the papers' dprate, JacobiConv's dpt)",
                         **_DROPOUT),
        "prop_lr": _float(None, "GPRGNN/BERNNET/CHEBNETII/JACOBICONV: learning rate of the "
                                "filter coefficients (default: init_lr)", 0.0,
                          inclusive=(False, True)),
        "prop_wd": _float(0.0, "GPRGNN/BERNNET/CHEBNETII/JACOBICONV: weight decay of the "
                               "filter coefficients (GPR-GNN and BernNet use 0, ChebNetII 5e-4)",
                          0.0),
        "gpr_alpha": _float(0.1, "GPRGNN: PPR initialisation gamma_k = alpha (1 - alpha)^k, "
                                 "gamma_K = (1 - alpha)^K", 0.0, 1.0),
        "jacobi_a": _float(1.0, "JACOBICONV: Jacobi parameter a", -1.0),
        "jacobi_b": _float(1.0, "JACOBICONV: Jacobi parameter b", -1.0,
                           inclusive=(False, True)),
        "jacobi_alpha": _float(1.0, "JACOBICONV: PCD scale alpha (gamma_k = alpha tanh(eta_k), "
                                    "eta_k initialised to min(1/alpha, 1))", 0.0,
                               inclusive=(False, True)),
        "jacobi_w_lr": _float(None, "JACOBICONV: learning rate of the per-channel basis "
                                    "weights (default: prop_lr)", 0.0, inclusive=(False, True)),
        "jacobi_w_wd": _float(0.0, "JACOBICONV: weight decay of the per-channel basis weights",
                              0.0),
        "edge_feat": _bool(False, _UNUSED),
        "data_mode": Field((str,), None, _UNUSED),
        "num_pool": Field((int,), None, _UNUSED),
        "gnn_per_block": Field((int,), None, _UNUSED),
        "embedding_dim": Field((int,), None, _UNUSED),
        "pool_ratio": Field((float,), None, _UNUSED),
        "linkpred": Field((bool,), None, _UNUSED),
        "cat": Field((bool,), None, _UNUSED),
    },
    "data": {
        "data_dir": _path("data folder (default: datasets/ or datasets/<DATASET>)"),
        "data_source": _choice(None, "where the data comes from (default: generate for SBM, "
                                     "raw files otherwise); dgl and pyg download",
                               SOURCE_CHOICES),
        "max_graphs": _int(None, "use only the first N graphs of each split", 1),
        "cache_dir": _path("superpixel graph cache (default ~/.cache/autogcn)"),
        "workers": _int(None, "processes building superpixel graphs (default: all CPUs)", 1,
                        1024),
        "loader_workers": _int(None, "data-loader processes collating batches (default: 0 on "
                                     "the CPU, up to 4 on a GPU)", 0, 64),
        "split": _choice("random", "single-graph node tasks: a random split per run, a "
                                   "class-balanced one (balanced: round(train * N / C) nodes "
                                   "of each class, as GPR-GNN, BernNet, ChebNetII and "
                                   "JacobiConv split), or the published fixed splits",
                         SPLIT_MODES),
        "split_ratio": Field((list, str), None, "single-graph node tasks: train,val,test "
                             "fractions of the random split, e.g. 0.6,0.2,0.2 (default: 60/20/20 "
                             "PubMed, 2:1:1 the others)", items=(int, float, str)),
        "edge_direction": _choice("symmetrised", "single-graph node tasks: the symmetrised "
                                                 "graph, or the source's edge list as_given "
                                                 "(the release)", EDGE_DIRECTIONS),
        "normalize_features": _bool(False, "single-graph node tasks: divide each node's "
                                           "features by max(their sum, 1), as PyG's "
                                           "NormalizeFeatures (the successors' code does, on "
                                           "every dataset)"),
        "sbm_variant": _choice(None, "SBM_PATTERN only: generator variant (data/sbm.py; "
                                     "default the notebook's final settings)", SBM_VARIANTS,
                               SBM_VARIANT_ALIASES),
    },
}
TOP_LEVEL: dict[str, Field] = {
    "model": Field((str,), None, "model name, e.g. AUTOGCN, GCN"),
    "dataset": Field((str,), None, "dataset name"),
    "out_dir": _path("where run folders are written", "out/"),
}


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _check(where: str, value: Any, spec: Field) -> Any:
    """``value`` checked against ``spec`` (type, choices/aliases, range); canonical form."""
    types = spec.types
    if value is None:
        if spec.default is None:
            return None
        raise ConfigError(f"{where}: expected {types[0].__name__}, got null")
    for alias, canonical in spec.aliases.items():
        # same type too: 1 == True in Python, but the number 1 is no alias of true
        if type(alias) is type(value) and alias == value:
            return canonical
    if float in types and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if bool not in types and isinstance(value, bool):
        raise ConfigError(f"{where}: expected {types[0].__name__}, got a boolean ({value})")
    if not isinstance(value, types):
        names = " or ".join(t.__name__ for t in types)
        raise ConfigError(f"{where}: expected {names}, got {_type_name(value)} ({value!r})")
    if isinstance(value, list):
        _check_items(where, value, spec.items)
    if spec.path:
        return _check_path(where, value)
    if spec.choices is not None and value not in spec.choices:
        valid = ", ".join(map(str, spec.choices))
        if spec.aliases:
            valid += " (or " + ", ".join(map(str, spec.aliases)) + ")"
        raise ConfigError(f"{where}: expected one of {valid}, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{where}: must be a finite number, got {value}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        low_ok = spec.low is None or (value >= spec.low if spec.inclusive[0] else value > spec.low)
        high_ok = spec.high is None or (value <= spec.high if spec.inclusive[1]
                                        else value < spec.high)
        if not (low_ok and high_ok):
            raise ConfigError(f"{where}: must be {_range_text(spec)}, got {value}")
    return value


def _check_items(where: str, value: list, items: tuple[type, ...]) -> None:
    """Every element of a list value is one of ``items`` (never a list, object, null or, unless
    allowed, a boolean)."""
    names = " or ".join(t.__name__ for t in items) or "nothing"
    for i, item in enumerate(value):
        if not isinstance(item, items) or (isinstance(item, bool) and bool not in items):
            raise ConfigError(f"{where}[{i}]: expected {names}, got {_type_name(item)} "
                              f"({item!r})")


def _check_path(where: str, value: str) -> str:
    """A path value with ``~`` expanded; empty, NUL-holding or over-long paths are refused
    (they would write into the current folder, or fail only once a run has started)."""
    if not value.strip():
        raise ConfigError(f"{where}: must not be empty (leave the key out for its default, or "
                          "give . for the current folder)")
    if "\0" in value:
        raise ConfigError(f"{where}: contains a NUL character")
    path = os.path.expanduser(value)
    long = [p for p in path.split(os.sep) if len(os.fsencode(p)) > MAX_NAME_BYTES]
    if long:
        raise ConfigError(f"{where}: the folder name {long[0][:40]}... has "
                          f"{len(os.fsencode(long[0]))} bytes; file systems allow "
                          f"{MAX_NAME_BYTES}")
    if len(path) > MAX_PATH_CHARS:
        raise ConfigError(f"{where}: the path has {len(path)} characters; at most "
                          f"{MAX_PATH_CHARS} leave room for the files written below it")
    # Every path key names a folder: a file there (or on the way) is refused now, not after
    # the data has loaded (the tools' --data_dir, --cache_dir and --out do the same check).
    problem = output_problem(path, "folder", writable=False)
    if problem:
        raise ConfigError(f"{where}: {problem}")
    return path


def _range_text(spec: Field) -> str:
    def num(v: float) -> str:  # integers in full (a seed bound of 4.29497e+09 says little)
        return str(int(v)) if float(v).is_integer() and abs(v) < 1e16 else f"{v:g}"

    parts = []
    if spec.low is not None:
        parts.append(f"{'>=' if spec.inclusive[0] else '>'} {num(spec.low)}")
    if spec.high is not None:
        parts.append(f"{'<=' if spec.inclusive[1] else '<'} {num(spec.high)}")
    return " and ".join(parts)


def _normalise(cfg: dict[str, Any], raw: Mapping[str, Any]) -> None:
    """Canonical forms of values with several spellings and checks across keys (``raw``: the
    values as given, for messages that quote what the user typed)."""
    net = cfg["net_params"]
    if net["out_dim"] is None:
        net["out_dim"] = net["hidden_dim"]
    filters = net["filters"]
    if isinstance(filters, str):
        filters = [f.strip() for f in filters.split(",") if f.strip()]
    if not filters or not set(filters) <= set(FILTERS) or len(set(filters)) != len(filters):
        raise ConfigError(f"net_params.filters: distinct names from {', '.join(FILTERS)}; "
                          f"got {filters!r}")
    net["filters"] = list(filters)
    if cfg["data"]["split_ratio"] is not None:
        cfg["data"]["split_ratio"] = parse_split_ratio(cfg["data"]["split_ratio"])
    params = cfg["params"]
    if params["seed"] + params["runs"] - 1 > MAX_SEED:
        raise ConfigError(f"params.seed: runs use seeds {params['seed']} to "
                          f"{params['seed'] + params['runs'] - 1}, but seeds must stay below "
                          f"2**32: use a seed of at most {MAX_SEED - params['runs'] + 1}")
    variant, dataset = cfg["data"]["sbm_variant"], cfg["dataset"]
    if variant is not None and dataset is not None:
        try:  # the spelling the user typed (an alias such as final), not its canonical name
            check_variant(dataset, raw.get("data", {}).get("sbm_variant", variant))
        except ValueError as err:
            raise ConfigError(f"data.sbm_variant: {err}") from None


def parse_split_ratio(ratio: str | list, where: str = "data.split_ratio") -> list[float]:
    """Train/val/test fractions from ``0.6,0.2,0.2``, ``60/20/20`` or a list of three numbers;
    :class:`ConfigError` naming ``where`` otherwise. The config and the tools share it."""
    text = ",".join(map(str, ratio)) if isinstance(ratio, list) else str(ratio)
    try:
        values = [float(x) for x in text.replace("/", ",").replace(" ", "").split(",")]
    except (TypeError, ValueError):
        values = []
    if len(values) == 3 and all(map(math.isfinite, values)) and max(values) > 1:
        values = [v / 100 for v in values]  # percentages, e.g. 60/20/20
    if (len(values) != 3 or not all(map(math.isfinite, values)) or min(values) < 0
            or abs(sum(values) - 1) > 1e-6 or values[0] == 0):
        raise ConfigError(f"{where}: three non-negative fractions summing to 1, the training "
                          f"one above 0 (e.g. 0.6,0.2,0.2 or 60/20/20), got {ratio!r}")
    return values


def validate(raw: Mapping[str, Any], origin: str = "config") -> dict[str, Any]:
    """Check ``raw`` against :data:`SCHEMA`, fill defaults, return a new resolved config."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{origin}: the top level must be a JSON object")
    cfg: dict[str, Any] = {}
    known = set(SCHEMA) | set(TOP_LEVEL)
    for key in raw:
        if key not in known and not key.startswith("_"):
            raise ConfigError(f"{origin}: unknown key {key!r} (known: {', '.join(sorted(known))})")
    for key, spec in TOP_LEVEL.items():
        cfg[key] = _check(f"{origin}: {key}", raw.get(key, spec.default), spec)
    for section, fields in SCHEMA.items():
        # Only an absent section means "all defaults": [], "", 0, false or null in its place
        # is a mistake, not an empty section (the authors' files never write null).
        given = raw.get(section, {})
        if not isinstance(given, Mapping):
            raise ConfigError(f"{origin}: section {section!r} must be an object, got "
                              f"{_type_name(given)} ({given!r})")
        for key in given:
            if key not in fields and not key.startswith("_"):
                raise ConfigError(
                    f"{origin}: unknown key {section}.{key!r} (known: {', '.join(sorted(fields))})"
                )
        cfg[section] = {
            key: _check(f"{origin}: {section}.{key}", copy.deepcopy(given.get(key, spec.default)),
                        spec)
            for key, spec in fields.items()
        }
        cfg[section].update({k: v for k, v in given.items() if k.startswith("_")})
    for key, value in raw.items():
        if key.startswith("_"):
            cfg[key] = value
    if not cfg["model"]:
        raise ConfigError(f"{origin}: 'model' is required")
    _normalise(cfg, raw)
    return cfg


class _DuplicateKey(ValueError):
    """A key given twice in one JSON object (``args[0]``)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json``'s ``object_pairs_hook``: the object, refusing a repeated key (plain ``json``
    keeps the last value without a word, so one of two settings would be silently lost)."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey(key)
        obj[key] = value
    return obj


def load_config(path: str | os.PathLike) -> dict[str, Any]:
    """Read and validate a JSON config file (``~`` in ``path`` is expanded; a UTF-8 byte order
    mark, as some editors write, is allowed)."""
    if not os.fspath(path).strip():
        raise ConfigError("--config: empty path; give a JSON config file")
    path = os.path.expanduser(os.fspath(path))
    if os.path.isdir(path):
        raise ConfigError(f"config {path} is a directory, not a JSON file")
    try:
        with open(path, encoding="utf-8-sig") as f:
            raw = json.load(f, object_pairs_hook=_unique_keys)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except _DuplicateKey as err:
        raise ConfigError(f"{path}: key {err.args[0]!r} is given twice in one object; keep "
                          "one (JSON would silently use the last)") from None
    except (ValueError, RecursionError) as err:  # also a 5000-digit number, deep nesting
        raise ConfigError(f"{path}: not valid JSON ({err})") from None
    except OSError as err:
        raise ConfigError(f"cannot read config {path}: {err.strerror or err}") from None
    return validate(raw, origin=str(path))


def parse_value(text: str, spec: Field, where: str) -> Any:
    """Parse a command-line string for a schema field (booleans as True/False)."""
    types = spec.types
    if bool in types:
        low = text.lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
        if str not in types:
            raise ConfigError(f"{where}: expected True or False, got {text!r}")
    if spec.default is None and text.lower() in ("none", "null"):
        return None
    for t in types:
        if t in (int, float):
            try:
                return t(text)
            except ValueError:
                continue
        if t is list:
            return [x.strip() for x in text.split(",") if x.strip()]
        if t is str:
            return text
    raise ConfigError(f"{where}: cannot read {text!r} as {types[0].__name__}")


def field_for(key: str) -> tuple[str | None, Field]:
    """The section and :class:`Field` behind a command-line ``--key``."""
    if key in TOP_LEVEL:
        return None, TOP_LEVEL[key]
    if key in ("gpu_id", "use_gpu"):
        return "gpu", SCHEMA["gpu"]["id" if key == "gpu_id" else "use"]
    for section in ("params", "net_params", "data"):
        if key in SCHEMA[section]:
            return section, SCHEMA[section][key]
    raise ConfigError(f"unknown option --{key}")


def apply_overrides(cfg: Mapping[str, Any], overrides: Mapping[str, str]) -> dict[str, Any]:
    """Return ``cfg`` with command-line ``--key value`` overrides applied and re-validated.

    A key is looked up in the top level, then ``params``, ``net_params`` and ``data``;
    ``gpu_id`` and ``use_gpu`` set ``gpu.id`` and ``gpu.use``.
    """
    raw = copy.deepcopy(dict(cfg))
    for key, text in overrides.items():
        section, spec = field_for(key)
        value = parse_value(text, spec, f"--{key}")
        if section is None:
            raw[key] = value
        elif section == "gpu":
            raw["gpu"]["id" if key == "gpu_id" else "use"] = value
            if key == "gpu_id" and "use_gpu" not in overrides:  # as the release: asks for a GPU
                raw["gpu"]["use"] = True
        else:
            raw[section][key] = value
    if "hidden_dim" in overrides and "out_dim" not in overrides:
        raw["net_params"]["out_dim"] = raw["net_params"]["hidden_dim"]
    return validate(raw, origin="command line")


def override_keys() -> list[str]:
    """Every ``--key`` the command line accepts as an override."""
    keys = list(TOP_LEVEL) + ["gpu_id", "use_gpu"]
    for section in ("params", "net_params", "data"):
        keys += list(SCHEMA[section])
    return keys


def option_help(key: str) -> str:
    """``--help`` text of an override: the schema's help, choices or range, and default."""
    _, spec = field_for(key)
    text = spec.help
    if spec.choices is not None:
        text += f" {{{', '.join(map(str, spec.choices))}}}"
    elif spec.low is not None or spec.high is not None:
        text += f" ({_range_text(spec)})"
    if spec.path:
        text += " (~ is expanded)"
    if spec.default is not None:
        default = ",".join(spec.default) if isinstance(spec.default, list) else spec.default
        text += f" [default {default}]"
    return text
