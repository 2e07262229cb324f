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
from data.sbm import SBM_VARIANT_ALIASES, SBM_VARIANTS
from layers.ap_layer import AP_MODE_ALIASES, AP_MODES
from layers.autogcn_layer import FILTERS, GATE_ALIASES, GATES, MODES
from layers.gin_layer import AGGREGATORS as GIN_AGGREGATORS
from layers.graphsage_layer import SAGE_AGGREGATORS
from layers.propagation import READOUTS, SOURCE_DEGREES


class ConfigError(ValueError):
    """A configuration problem, with a message naming the offending key or value."""


@dataclass(frozen=True)
class Field:
    """One config key: accepted types, default, and the values it may take.

    ``default=None`` means "decided later" (the task's or the data's default) and makes ``null``
    a valid value; for every other key ``null`` is an error. ``choices`` are the canonical
    values, ``aliases`` older spellings mapped to them (the authors' ``gate: true``).
    ``low``/``high`` bound numbers (``inclusive`` says whether the bounds are allowed).
    """

    types: tuple[type, ...]
    default: Any
    help: str = ""
    choices: tuple[Any, ...] | None = None
    aliases: Mapping[Any, Any] = field(default_factory=dict)
    low: float | None = None
    high: float | None = None
    inclusive: tuple[bool, bool] = (True, True)


def _int(default: Any, help: str, low: int | None = None, high: int | None = None) -> Field:
    return Field((int,), default, help, low=low, high=high)


def _float(default: Any, help: str, low: float | None = None, high: float | None = None,
           inclusive: tuple[bool, bool] = (True, True)) -> Field:
    return Field((float,), default, help, low=low, high=high, inclusive=inclusive)


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
        "id": _int(0, "GPU index (a config's nonexistent id falls back to 0 with a warning)", 0),
    },
    "params": {
        "seed": _int(41, "first run seed when --seed is given on the command line (runs use "
                         "seed, seed+1, ...); otherwise the release's seeds 4565, 7432, ... are "
                         "used and this key only documents the authors' value", 0),
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
        "runs": _int(1, "seeds to train, one after the other", 1),
        "scheduler": _choice(None, "learning-rate schedule (default: plateau, none for "
                                   "single-graph node classification as in the release)",
                             ("plateau", "none")),
    },
    "net_params": {
        "L": _int(4, "graph layers", 1),
        "hidden_dim": _int(90, "hidden width (per head for GAT)", 1),
        "out_dim": _int(None, "width of the last graph layer (default: hidden_dim)", 1),
        "residual": _bool(True, "residual connections (where widths match)"),
        "readout": _choice("mean", "graph readout", READOUTS),
        "in_feat_dropout": _float(0.0, "dropout on the embedded input", **_DROPOUT),
        "dropout": _float(0.0, "dropout in the layers", **_DROPOUT),
        "graph_norm": _bool(True, "graph-size normalisation (x / sqrt(N_g))"),
        "batch_norm": _bool(True, "batch normalisation in every layer"),
        "self_loop": _bool(False, "add self-loops (GCN, GAT, SGC only; never AutoGCN)"),
        "builtin": _bool(True, _UNUSED),
        # AutoGCN
        "K": _int(16, "AutoGCN: size of the over-parameterisation grid (not a hop count)", 1),
        "num_filters": _int(1, "AutoGCN: parallel filter banks, summed", 1),
        "opt": _choice("over", "AutoGCN filter parameterisation (the layer's `mode`)", MODES),
        "gate": Field((bool, str), "sequential", "AutoGCN complementary gate (true = "
                      "sequential, false = none)", GATES, GATE_ALIASES),
        "filters": Field((list, str), list(FILTERS), "AutoGCN filters to use, e.g. low,high"),
        "single_a_init": _float(0.0, "AutoGCN mode single: initial a (the release's 0 never "
                                     "moves)"),
        # baselines
        "n_heads": _int(8, "GAT attention heads", 1),
        "kernel": _int(3, "MoNet Gaussian kernels", 1),
        "pseudo_dim_MoNet": _int(2, "MoNet pseudo-coordinate width", 1),
        "n_mlp_GIN": _int(2, "GIN: linear layers per update MLP", 1),
        "learn_eps_GIN": _bool(True, "GIN: learn epsilon"),
        "neighbor_aggr_GIN": _choice("sum", "GIN neighbour aggregation", GIN_AGGREGATORS),
        "sage_aggregator": _choice("mean", "GraphSAGE aggregator", SAGE_AGGREGATORS),
        "gated": _bool(False, "MLP: the release's gated variant"),
        "n_iter": _int(10, "APGCN: maximum propagation steps", 1),
        "prop_penalty": _float(0.05, "APGCN: propagation penalty in the loss", 0.0),
        "apgcn_mode": _choice("one_hop", "APGCN: one_hop propagates the layer input at every "
                                         "step (the release), adaptive the previous step (the "
                                         "AP-GCN paper)", AP_MODES, AP_MODE_ALIASES),
        "apgcn_linear_layers": _int(None, "APGCN: linear layers before the propagation on "
                                          "batched graphs (default L - 1)", 0),
        "sgc_k": _int(2, "SGC: propagation steps", 1),
        "gcn_source_degree": _choice("in", "GCN: scale a message by its source's in-degree (the "
                                           "release, DGL 0.4) or out-degree (DGL 2's GraphConv "
                                           "norm='both'); differs on directed graphs only",
                                     SOURCE_DEGREES),
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
        "data_dir": Field((str,), None, "data folder (default: datasets/ or datasets/<DATASET>)"),
        "data_source": _choice(None, "where the data comes from (default: generate for SBM, "
                                     "raw files otherwise); dgl and pyg download",
                               SOURCE_CHOICES),
        "max_graphs": _int(None, "use only the first N graphs of each split", 1),
        "cache_dir": Field((str,), None, "superpixel graph cache (default ~/.cache/autogcn)"),
        "workers": _int(None, "processes building superpixel graphs (default: all CPUs)", 1),
        "loader_workers": _int(None, "data-loader processes collating batches (default: 0 on "
                                     "the CPU, up to 4 on a GPU)", 0),
        "split": _choice("random", "single-graph node tasks: a random split per run, or the "
                                   "published fixed splits", SPLIT_MODES),
        "split_ratio": Field((list, str), None, "single-graph node tasks: train,val,test "
                             "fractions of the random split, e.g. 0.6,0.2,0.2 (default: 60/20/20 "
                             "PubMed, 2:1:1 the others)"),
        "edge_direction": _choice("symmetrised", "single-graph node tasks: the symmetrised "
                                                 "graph, or the source's edge list as_given "
                                                 "(the release)", EDGE_DIRECTIONS),
        "sbm_variant": _choice(None, "SBM_PATTERN generator variant (data/sbm.py; default the "
                                     "notebook's final settings)", SBM_VARIANTS,
                               SBM_VARIANT_ALIASES),
    },
}
TOP_LEVEL: dict[str, Field] = {
    "model": Field((str,), None, "model name, e.g. AUTOGCN, GCN"),
    "dataset": Field((str,), None, "dataset name"),
    "out_dir": Field((str,), "out/", "where run folders are written"),
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
    try:
        if value in spec.aliases:
            return spec.aliases[value]
    except TypeError:  # unhashable (a list): not an alias
        pass
    if float in types and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if bool not in types and isinstance(value, bool):
        raise ConfigError(f"{where}: expected {types[0].__name__}, got a boolean ({value})")
    if not isinstance(value, types):
        names = " or ".join(t.__name__ for t in types)
        raise ConfigError(f"{where}: expected {names}, got {_type_name(value)} ({value!r})")
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


def _range_text(spec: Field) -> str:
    parts = []
    if spec.low is not None:
        parts.append(f"{'>=' if spec.inclusive[0] else '>'} {spec.low:g}")
    if spec.high is not None:
        parts.append(f"{'<=' if spec.inclusive[1] else '<'} {spec.high:g}")
    return " and ".join(parts)


def _normalise(cfg: dict[str, Any]) -> None:
    """Canonical forms of values with several spellings and checks across keys."""
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
    ratio = cfg["data"]["split_ratio"]
    if ratio is not None:
        text = ",".join(map(str, ratio)) if isinstance(ratio, list) else str(ratio)
        try:
            values = [float(x) for x in text.replace("/", ",").split(",")]
        except (TypeError, ValueError):
            values = []
        if len(values) == 3 and max(values) > 1:  # percentages, e.g. 60/20/20
            values = [v / 100 for v in values]
        if len(values) != 3 or min(values) < 0 or abs(sum(values) - 1) > 1e-6:
            raise ConfigError(f"data.split_ratio: three non-negative fractions summing to 1 "
                              f"(e.g. 0.6,0.2,0.2 or 60/20/20), got {ratio!r}")
        cfg["data"]["split_ratio"] = values


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
        given = raw.get(section, {}) or {}
        if not isinstance(given, Mapping):
            raise ConfigError(f"{origin}: section {section!r} must be an object")
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
    _normalise(cfg)
    return cfg


def load_config(path: str | os.PathLike) -> dict[str, Any]:
    """Read and validate a JSON config file."""
    if os.path.isdir(path):
        raise ConfigError(f"config {path} is a directory, not a JSON file")
    try:
        with open(path) as f:
            raw = json.load(f)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
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
    if spec.default is not None:
        default = ",".join(spec.default) if isinstance(spec.default, list) else spec.default
        text += f" [default {default}]"
    return text
