"""Dataset diagnostics (a readable report, a JSON file and a PNG for any dataset the project
loads) and the figure of trained models' learned filters.

    python -m scripts.diagnose --dataset NAME --data_dir DIR [--checkpoint CKPT] [--out DIR] ...
    python -m scripts.diagnose --checkpoint CKPT [CKPT ...] [--out filters.png] [--data_dir DIR]

docs/data.md ("Dataset diagnostics") says what the report measures and how, with every option;
docs/layer.md the filter figure (:mod:`scripts.learned_filters`). The measures are in
:mod:`scripts.diagnostics`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from train.interrupts import startup

with startup():
    import numpy as np
    import torch

    from autogcn.graph import Graph
    from data.common import GraphDataset
    from data.files import write_atomic
    from data.loaders import GRAPH_SOURCES, SOURCE_CHOICES, load_graph_dataset, load_node_data
    from data.node_datasets import SPLIT_RATIOS, NodeDataset, random_split
    from data.sbm import SBM_NAMES, SBM_VARIANT_ALIASES, SBM_VARIANTS, check_variant
    from data.squirrel import filtered_squirrel, outlink_groups
    from scripts import cli
    from scripts import diagnostics as dg
    from scripts import learned_filters as lf
    from scripts.report.figures import save, subplot_grid
    from train.errors import UsageError, run_tool

DEFAULT_OUT = "out/diagnostics"
LAMBDA_POINTS = 201
NOT_APPLICABLE = "not_applicable"
# Above these the exact eigendecomposition (dense, n² memory, n³ time) and the Chebyshev
# estimate (one sparse product per moment) would run for hours or exhaust memory.
MAX_EXACT_NODES = 10_000
MAX_SPECTRAL_GRAPHS = 100_000
REPORT_GRAPHS, FIGURE_GRAPHS = 200, 50  # --spectral_graphs left out


# ============================================================================ loading
def load(args: argparse.Namespace) -> GraphDataset | NodeDataset:
    """The dataset, through the project's loaders (their DataError messages unchanged)."""
    keys = ("data_dir", "data_source", "max_graphs", "cache_dir", "workers", "sbm_variant")
    cfg = {key: getattr(args, key) for key in keys} | {"progress": sys.stderr.isatty()}
    if args.dataset in GRAPH_SOURCES:
        return load_graph_dataset(args.dataset, cfg)
    return load_node_data(args.dataset, cfg)


def _na(reason: str) -> dict[str, str]:
    return {NOT_APPLICABLE: reason}


# ============================================================================ node datasets
def _leakage(groups: np.ndarray, ds: NodeDataset, random: tuple) -> dict[str, Any]:
    """How many test (and val) nodes have a duplicate in train, on the fixed and random splits."""
    def split(tr: Any, va: Any, te: Any) -> dict[str, Any]:
        return {"test": dg.split_leakage(groups, tr, te, ds.labels),
                "val": dg.split_leakage(groups, tr, va, ds.labels)}

    out: dict[str, Any] = {}
    if ds.fixed_splits:
        per = [split(*s) for s in ds.fixed_splits]
        out["fixed_splits"] = per
        out["fixed_test_with_train_duplicate_mean"] = float(np.mean(
            [p["test"]["with_train_duplicate"] for p in per]))
        out["fixed_test_same_label_mean"] = float(np.mean([p["test"]["same_label"] for p in per]))
    out["random_split"] = split(*random)
    return out


def _label_block(ds: NodeDataset, random: tuple) -> dict[str, Any]:
    out = dg.class_balance(ds.labels, ds.num_classes)
    if ds.fixed_splits:
        accs = [dg.majority_accuracy(ds.labels[tr], ds.labels[te]) for tr, _, te in ds.fixed_splits]
        out["majority_accuracy_fixed_test"] = accs
        out["majority_accuracy_fixed_test_mean"] = float(np.mean(accs))
    out["majority_accuracy_random_test"] = dg.majority_accuracy(ds.labels[random[0]],
                                                                ds.labels[random[2]])
    return out


def diagnose_node_dataset(ds: NodeDataset, args: argparse.Namespace,
                          plot: dict[str, Any]) -> dict[str, Any]:
    ratios = args.split_ratio or SPLIT_RATIOS.get(ds.name, SPLIT_RATIOS["SQUIRREL"])
    rnd = random_split(ds.num_nodes, ratios, args.seed, ds.labels)
    feats = ds.features
    report: dict[str, Any] = {
        "task": "node classification on one graph",
        "size": {
            "nodes": ds.num_nodes,
            "undirected_edges": int((ds.graph.src < ds.graph.dst).sum()),  # stored symmetric
            "features": ds.in_dim,
            "feature_storage": f"sparse, {feats._nnz()} non-zeros" if feats.is_sparse else "dense",
            "classes": ds.num_classes,
            "fixed_splits": len(ds.fixed_splits or []),
            "fixed_split_sizes": sorted({tuple(int(t.numel()) for t in s)
                                         for s in ds.fixed_splits or []}),
            "random_split": {"ratios": list(ratios), "seed": args.seed,
                             "sizes": [int(t.numel()) for t in rnd]},
        },
    }
    if args.sizes_only:
        return report
    adj = dg.graph_adjacency(ds.graph)
    report["degrees"] = dg.degree_statistics(ds.graph)
    report["labels"] = _label_block(ds, rnd)
    report["homophily"] = dg.homophily(adj, ds.labels)
    groups = dg.duplicate_groups(feats, adj)
    twins = dg.duplicate_groups(None, adj)
    report["duplicates"] = {
        "definition": "same feature vector and same neighbour set, as in Platonov et al. 2023",
        **dg.duplicate_summary(groups, ds.labels), **_leakage(groups, ds, rnd),
        "structural_twins": {
            "definition": "same neighbour set, features may differ",
            **dg.duplicate_summary(twins, ds.labels), **_leakage(twins, ds, rnd)},
    }
    if ds.name == "SQUIRREL":
        report["filtered_squirrel"] = _filtered_block(ds, args, rnd)
    t0 = time.perf_counter()
    energy = dg.spectral_energies(
        adj, {"label": dg.label_signal(ds.labels, ds.num_classes),
              "feature": dg.feature_signal(feats, seed=args.seed)},
        exact_max_nodes=args.exact_max_nodes, order=args.cheb_order)
    report["spectrum"] = {
        "label_energy": energy["label"].as_dict(), "feature_energy": energy["feature"].as_dict(),
        "feature_signal": f"{ds.in_dim} columns" + (f", sketched to {dg.SKETCH_COLUMNS} Gaussian "
                          "combinations" if ds.in_dim > dg.SKETCH_COLUMNS else ""),
        "seconds": time.perf_counter() - t0}
    plot["degrees"] = np.diff(adj.indptr)
    plot["classes"] = report["labels"]["counts"]
    return report


def _filtered_block(ds: NodeDataset, args: argparse.Namespace, rnd: tuple) -> dict[str, Any]:
    """Platonov et al.'s filtered Squirrel: its size, what it removes and its homophily."""
    if ds.edges_as_given is None:
        return _na("the loaded dataset keeps no directed edge list")
    f = filtered_squirrel(ds, ds.edges_as_given)
    fadj = dg.graph_adjacency(f.graph)
    gid, _ = outlink_groups(*ds.edges_as_given, ds.labels, ds.num_nodes)
    fr = random_split(f.num_nodes, args.split_ratio or SPLIT_RATIOS["SQUIRREL"], args.seed,
                      f.labels)
    return {
        "rule": f.info["filtered"],
        "nodes": f.num_nodes, "undirected_edges": int(fadj.nnz // 2),
        "stored_directed_edges": int(f.edges_as_given[0].numel()),
        "removed_nodes": int(f.info["filtered_removed_nodes"]),
        "published_counts": {"nodes": 2223, "undirected_edges": 46998,
                             "source": "yandex-research/heterophilous-graphs "
                                       "data/squirrel_filtered.npz"},
        "out_link_twins_in_original": {
            "definition": "same out-neighbour set and label in the directed edge list",
            **dg.duplicate_summary(gid), **_leakage(gid, ds, rnd)},
        "class_counts": dg.class_balance(f.labels, f.num_classes)["counts"],
        "homophily": dg.homophily(fadj, f.labels),
        "duplicates": dg.duplicate_summary(dg.duplicate_groups(f.features, fadj), f.labels),
        "majority_accuracy_fixed_test_mean": float(np.mean(
            [dg.majority_accuracy(f.labels[tr], f.labels[te]) for tr, _, te in f.fixed_splits]))
        if f.fixed_splits else None,
        "majority_accuracy_random_test": dg.majority_accuracy(f.labels[fr[0]], f.labels[fr[2]]),
        "label_energy": dg.spectral_energy(
            fadj, dg.label_signal(f.labels, f.num_classes), exact_max_nodes=args.exact_max_nodes,
            order=args.cheb_order).as_dict(),
    }


# ============================================================================ graph datasets
def _labels(items: Any) -> torch.Tensor:
    """The labels of (graph, label) pairs, flat."""
    return torch.cat([y.reshape(-1) for _, y in items])


def _no_node_labels(task: str) -> str:
    return ("labels are per graph (" + ("a regression target" if task == "regression"
            else "a graph class") + "): there are no node labels")


def diagnose_graph_dataset(ds: GraphDataset, args: argparse.Namespace,
                           plot: dict[str, Any]) -> dict[str, Any]:
    splits = {k: v for k, v in ds.splits().items() if v is not None and len(v)}
    g, y = next(iter(splits.values()))[0]
    task = ("node" if y.numel() == g.num_nodes() and ds.num_classes > 1
            else "regression" if ds.num_classes == 1 else "graph")
    sizes = {}
    for name, split in splits.items():  # node labels: their fraction per class too
        sizes[name] = split.stats()
        if task == "node":
            sizes[name]["class_balance"] = dg.class_balance(_labels(split),
                                                            ds.num_classes)["fractions"]
    report: dict[str, Any] = {
        "task": {"node": "node classification on batched graphs", "graph": "graph classification",
                 "regression": "graph regression"}[task],
        "size": {"in_dim": ds.in_dim, "classes": ds.num_classes, "max_graphs": args.max_graphs,
                 "splits": sizes,
                 "missing_splits": [k for k, v in ds.splits().items() if v is None]},
    }
    if args.sizes_only:
        return report
    everything = [s for split in splits.values() for s in split]
    union = Graph.batch([g for g, _ in everything])
    adj = dg.graph_adjacency(union)
    report["degrees"] = dg.degree_statistics(union)
    train_name = "train" if "train" in splits else next(iter(splits))
    report.update(_graph_labels(task, ds, splits, train_name, adj, plot))
    groups = dg.duplicate_groups(union.ndata["feat"], adj)
    report["duplicates"] = {
        "definition": "same feature vector and same neighbour set, within one graph",
        **dg.duplicate_summary(groups, _labels(everything) if task == "node" else None),
        "split_crossing": _na("splits are whole graphs: a node and its duplicate always lie in "
                              "the same graph, hence the same split"),
    }
    report["spectrum"] = _graph_spectrum(task, ds, splits[train_name], train_name, args)
    plot["degrees"] = np.diff(adj.indptr)
    return report


def _graph_labels(task: str, ds: GraphDataset, splits: dict[str, Any], train_name: str,
                  adj: Any, plot: dict[str, Any]) -> dict[str, Any]:
    """Labels (node or graph classes: balance, majority accuracy) or regression targets
    (statistics, the constant predictor's MAE), and homophily where there are node labels."""
    train = splits[train_name]
    held = splits.get("test") or splits.get("val")
    if task == "regression":
        tr = _labels(train)
        plot["targets"] = tr.numpy()
        targets = {k: dg.target_statistics(_labels(v)) for k, v in splits.items()}
        targets["constant_median_mae"] = {k: dg.constant_mae(tr, _labels(v))
                                          for k, v in splits.items() if k != "train"}
        return {"targets": targets, "homophily": _na(_no_node_labels(task))}
    everything = [s for split in splits.values() for s in split]
    lab = dg.class_balance(_labels(everything if task == "node" else train), ds.num_classes)
    if task == "graph":
        lab["of"] = f"graph labels of the {train_name} split"
    if held is not None:
        lab["majority_accuracy_test"] = dg.majority_accuracy(_labels(train), _labels(held))
    plot["classes"] = lab["counts"]
    if task == "graph":
        return {"labels": lab, "homophily": _na(_no_node_labels(task))}
    return {"labels": lab, "homophily": {
        **dg.homophily(adj, _labels(everything)),
        "over": f"the disjoint union of the {len(everything)} graphs loaded"}}


def _graph_spectrum(task: str, ds: GraphDataset, train: Any, train_name: str,
                    args: argparse.Namespace) -> dict[str, Any]:
    """Label and input-feature energy per band, exact per graph on a seeded sample of
    ``--spectral_graphs`` training graphs, averaged."""
    sample = dg.sample_graphs(train, args.spectral_graphs, args.seed)
    adjs = [dg.graph_adjacency(g) for g, _ in sample]
    features = [dg.feature_signal(g.ndata["feat"], ds.in_dim, seed=args.seed) for g, _ in sample]
    return {
        "sample": f"{len(sample)} graphs of the {train_name} split (seed {args.seed})",
        "label_energy": dg.mean_spectral_energy(zip(
            adjs, [dg.label_signal(y, ds.num_classes) for _, y in sample], strict=True))
        if task == "node" else _na(_no_node_labels(task)),
        "feature_energy": dg.mean_spectral_energy(zip(adjs, features, strict=True))}


# ============================================================================ text report
# The text report's sections are the report's blocks, in its order; titles other than the key:
TITLES = {"origin": "origin (the loader's record)",
          "degrees": "degrees (simple symmetrised graph; in-degree as stored)",
          "filtered_squirrel": "filtered squirrel (Platonov et al. 2023)",
          "spectrum": "spectrum of L = I - D^-1/2 A D^-1/2: energy fraction per band low [0,2/3) "
                      "mid [2/3,4/3) high [4/3,2]"}
HIDDEN = {"definition", "fixed_splits", "histogram", "seconds"}  # in the JSON only


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4g}"
    if isinstance(v, dict):
        if NOT_APPLICABLE in v:
            return f"not applicable: {v[NOT_APPLICABLE]}"
        if "bands" in v:  # a spectral energy
            extra = f" (±sd {_fmt(v['bands_std'])})" if "bands_std" in v else ""
            order = f", order {v['order']}" if v.get("order") else ""
            return (f"{_fmt(v['bands'])}{extra}; mean λ {_fmt(v['mean_lambda'])}   | random "
                    f"labelling {_fmt(v['baseline'])}; mean λ "
                    f"{_fmt(v['baseline_mean_lambda'])}   [{v['method']}{order}]")
        if "skipped" in v:
            return "no graph with a non-constant signal"
        return ", ".join(f"{k} {_fmt(x)}" for k, x in v.items())
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def _section(lines: list[str], title: str, block: dict[str, Any], indent: str = "") -> None:
    """A block of the report: a row per value, a sub-block per value with a definition, a row
    per entry of a table of dicts (the splits)."""
    lines.append(indent + title + (f" ({block['definition']})" if "definition" in block else ""))
    for key, v in block.items():
        name = key.replace("_", " ")
        if key in HIDDEN:
            continue
        if isinstance(v, dict) and "definition" in v:
            _section(lines, name, v, indent + "  ")
        elif (isinstance(v, dict) and v and NOT_APPLICABLE not in v
              and all(isinstance(x, dict) for x in v.values())):
            for sub, x in v.items():
                lines.append(f"{indent}  {name.removesuffix('s') + ' ' + sub:<28} {_fmt(x)}")
        else:
            lines.append(f"{indent}  {name:<28} {_fmt(v)}")


def format_report(r: dict[str, Any]) -> str:
    lines = [f"== {r['dataset']}: {r['task']}"]
    for key, block in r.items():
        if block and isinstance(block, dict) and key != "checkpoint":
            _section(lines, TITLES.get(key, key), block)
    if "checkpoint" in r:
        c = r["checkpoint"]
        lines.append(f"checkpoint {c['path']} ({c['model']} on {c['dataset']}, epoch {c['epoch']}):"
                     " mean F(λ) per band")
        for layer in c["layers"]:
            own = (" (λ of its own operator, with self-loops)"
                   if layer.get("axis") == lf.SELF_LOOPS else "")
            for f, b in layer["band_mean_response"].items():
                lines.append(f"  {layer['name'] + '.' + f + own:<28} {_fmt(b)}")
    lines += [f"note: {note}" for note in r.get("notes", [])]
    return "\n".join(lines)


# ============================================================================ picture
def _energy_hist(ax: Any, e: dict[str, Any], title: str, colour: str) -> None:
    if "histogram" not in e:
        ax.text(0.5, 0.5, "not applicable:\nno node labels" if NOT_APPLICABLE in e
                else "no graph with a\nnon-constant signal", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_title(title, fontsize=9)
        ax.set_axis_off()
        return
    h = e["histogram"]
    width = lf.energy_bars(ax, h, color=colour, alpha=0.55, label="signal energy")
    ax.stairs(np.asarray(h["baseline"]) / width, np.asarray(h["edges"]), color="black",
              linewidth=1.0, label="random labelling (expected)")
    lf.band_edges(ax)
    b = e["bands"]
    ax.set_title(f"{title}: low {b['low']:.2f} | mid {b['mid']:.2f} | high {b['high']:.2f}\n"
                 f"mean λ {e['mean_lambda']:.3f} (random labelling "
                 f"{e['baseline_mean_lambda']:.3f})", fontsize=9)
    ax.set(xlim=(0, 2), xlabel="λ", ylabel="density")
    ax.legend(fontsize=7)


def _degree_panel(ax: Any, deg: np.ndarray) -> None:
    if deg.size:
        ax.hist(deg, bins=min(60, max(5, int(deg.max()) + 1)), color="tab:gray", log=True)
    ax.set_title(f"degrees (mean {deg.mean():.1f}, max {deg.max()})" if deg.size else "degrees",
                 fontsize=9)
    ax.set_xlabel("degree")


def _label_panel(ax: Any, plot: dict[str, Any]) -> None:
    if "classes" in plot:
        counts = plot["classes"]
        ax.bar(range(len(counts)), counts, color="tab:green")
        if len(counts) <= 20:
            ax.set_xticks(range(len(counts)))
        ax.set_title("class counts", fontsize=9)
        ax.set_xlabel("class")
    elif "targets" in plot:
        ax.hist(plot["targets"], bins=50, color="tab:green")
        ax.set_title("training targets", fontsize=9)


def write_png(r: dict[str, Any], plot: dict[str, Any], path: Path) -> bool:
    """The picture: energies, degrees, classes and each checkpoint layer's learned F(λ) over the
    label (else feature) energy; False (and nothing written) without matplotlib."""
    layers = r.get("checkpoint", {}).get("layers", [])
    try:  # a row of four panels, then one per layer
        fig, axes = subplot_grid(4 + len(layers), 4, 4.2, 3.3)
    except UsageError:
        return False
    s = r["spectrum"]
    _energy_hist(axes[0], s["label_energy"], "label energy", "tab:blue")
    _energy_hist(axes[1], s["feature_energy"], "input-feature energy", "tab:orange")
    _degree_panel(axes[2], np.asarray(plot.get("degrees", [])))
    _label_panel(axes[3], plot)
    back, what = ((s["label_energy"], "label") if "histogram" in s["label_energy"]
                  else (s["feature_energy"], "feature"))
    lam = np.asarray(r.get("checkpoint", {}).get("lambda", []))
    for ax, layer in zip(axes[4:], layers, strict=True):
        responses = [lf.Response(layer["name"], kind, torch.tensor(curves, dtype=torch.float64),
                                 layer.get("axis") or lf.LAPLACIAN)
                     for kind, curves in layer["response"].items()]
        dims = (f" ({layer['in_dim']}→{layer['out_dim']})"
                if layer.get("in_dim") is not None else "")
        lf.draw_panel(ax, f"{layer['name']}{dims}: F(λ)", responses, lam, {lf.LAPLACIAN: back},
                      what)
    fig.suptitle(f"{r['dataset']}: {r['task']}", fontsize=11)
    fig.tight_layout()
    save(fig, path, 110)
    return True


# ============================================================================ entry point
def _clean(obj: Any) -> Any:
    """JSON-safe: numpy scalars to Python, NaN to None, tuples to lists."""
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _clean(obj.tolist())
    if isinstance(obj, np.generic):
        return _clean(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


# Options of the dataset report only (the filter figure refuses them).
REPORT_ONLY = ("max_graphs", "cache_dir", "workers", "sbm_variant", "split_ratio", "seed",
               "sizes_only")
DEFAULT_SEED = 4565


def build_parser() -> argparse.ArgumentParser:
    p = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default=None,
                   help="SBM_CLUSTER, SBM_PATTERN, ZINC, MNIST, CIFAR10, PUBMED, SQUIRREL, "
                        "ARXIV_YEAR or YELPCHI (without it: the filter figure of --checkpoint)")
    p.add_argument("--data_dir", type=cli.data_folder, default=None, metavar="DIR",
                   help="the dataset's folder (the filter figure: its label energy)")
    p.add_argument("--data_source", default=None, choices=SOURCE_CHOICES)
    p.add_argument("--max_graphs", type=cli.int_in(1, cli.MAX_GRAPHS), default=None,
                   help=f"batched-graph datasets: the first N graphs of each split (1 to "
                        f"{cli.MAX_GRAPHS})")
    p.add_argument("--cache_dir", type=cli.data_folder, default=None, metavar="DIR",
                   help="superpixel graph cache (MNIST, CIFAR10)")
    p.add_argument("--workers", type=cli.int_in(1, cli.MAX_WORKERS), default=None,
                   help=f"processes building superpixel graphs (1 to {cli.MAX_WORKERS})")
    p.add_argument("--sbm_variant", default=None,
                   choices=SBM_VARIANTS + tuple(SBM_VARIANT_ALIASES))
    p.add_argument("--split_ratio", type=cli.split_ratio, default=None,
                   help="node datasets: the random split, e.g. 0.6,0.2,0.2 or 60/20/20")
    p.add_argument("--seed", type=cli.seed_int, default=None,
                   help=f"random split, graph sample and sketch seed (0 to {cli.MAX_SEED}; "
                        f"default {DEFAULT_SEED})")
    p.add_argument("--sizes_only", action="store_true", default=None,
                   help="the data's origin and split sizes only (generates or builds the data)")
    p.add_argument("--checkpoint", nargs="+", default=None, metavar="CKPT",
                   help="checkpoint(s) with learned spectral filters: with --dataset one, "
                        "without it one panel each in the filter figure")
    p.add_argument("--out", default=None,
                   help=f"the report's folder (default {DEFAULT_OUT}) or the filter figure's "
                        "image (default for one checkpoint: <checkpoint>_filters.png)")
    p.add_argument("--points", type=cli.int_in(2, cli.MAX_PLOT_POINTS), default=LAMBDA_POINTS,
                   help=f"λ samples of a response on [0, 2] (2 to {cli.MAX_PLOT_POINTS}; "
                        f"default {LAMBDA_POINTS})")
    p.add_argument("--spectral_graphs", type=cli.int_in(1, MAX_SPECTRAL_GRAPHS), default=None,
                   help=f"batched-graph datasets: graphs in the spectral sample (1 to "
                        f"{MAX_SPECTRAL_GRAPHS}; default {REPORT_GRAPHS}, the filter figure "
                        f"{FIGURE_GRAPHS})")
    p.add_argument("--exact_max_nodes", type=cli.int_in(0, MAX_EXACT_NODES),
                   default=dg.EXACT_MAX_NODES,
                   help=f"exact spectrum up to N nodes, Chebyshev above (0 to {MAX_EXACT_NODES}; "
                        f"default {dg.EXACT_MAX_NODES})")
    p.add_argument("--cheb_order", type=cli.int_in(2, cli.MAX_CHEB_ORDER), default=dg.CHEB_ORDER,
                   help=f"Chebyshev moments of the estimate (2 to {cli.MAX_CHEB_ORDER}; default "
                        f"{dg.CHEB_ORDER})")
    return p


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The options, checked before anything is loaded or written; ``args.figure``: no
    ``--dataset``, the filter figure of ``--checkpoint``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.figure = args.dataset is None
    if args.figure:
        if not args.checkpoint:
            parser.error("give --dataset NAME (the dataset report) or --checkpoint CKPT "
                         "[CKPT ...] (the filter figure)")
        given = [f"--{name}" for name in REPORT_ONLY if getattr(args, name) is not None]
        if given:
            parser.error(f"{', '.join(given)}: for the dataset report (give --dataset); the "
                         "filter figure of --checkpoint has no such option")
        args.spectral_graphs = args.spectral_graphs or FIGURE_GRAPHS
        return args
    args.dataset = args.dataset.upper().replace("-", "_")
    args.seed = DEFAULT_SEED if args.seed is None else args.seed
    args.sizes_only = bool(args.sizes_only)
    args.spectral_graphs = args.spectral_graphs or REPORT_GRAPHS
    args.out = cli.check_output(DEFAULT_OUT if args.out is None else args.out, "folder")
    if args.checkpoint and len(args.checkpoint) > 1:
        parser.error("--checkpoint: the dataset report takes one checkpoint (without "
                     "--dataset, several are drawn in one figure)")
    if args.sizes_only and args.checkpoint:
        parser.error("--checkpoint draws the filters over the measured spectrum: leave out "
                     "--sizes_only")
    if args.sbm_variant is not None:
        if args.dataset in SBM_NAMES and args.data_source not in (None, "generate"):
            parser.error(f"--sbm_variant {args.sbm_variant}: only generated data has variants "
                         f"(--data_source {args.data_source} downloads the published data)")
        try:  # the main scripts' check: SBM_CLUSTER has one generator, no variants
            check_variant(args.dataset, args.sbm_variant)
        except ValueError as err:
            parser.error(f"--sbm_variant: {err}")
    return args


def run(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    t0 = time.perf_counter()
    ds = load(args)
    plot: dict[str, Any] = {}
    notes: list[str] = []
    if isinstance(ds, NodeDataset):
        if args.max_graphs is not None:
            notes.append("--max_graphs applies to batched-graph datasets only; ignored")
        report = diagnose_node_dataset(ds, args, plot)
    else:
        report = diagnose_graph_dataset(ds, args, plot)
    # the loader's record of where the data came from: its plain values (per-split tables are
    # reported under "size")
    origin = {k: v for k, v in ds.info.items() if isinstance(v, str | int | float | bool)}
    report = {"dataset": ds.name, "origin": origin, **report}
    if args.checkpoint:
        report["checkpoint"] = lf.checkpoint_filters(args.checkpoint[0], args.points)
        trained_on = str(report["checkpoint"]["dataset"] or "").upper()
        if trained_on and trained_on != args.dataset:
            notes.append(f"the checkpoint was trained on {trained_on}, not {args.dataset}")
    report["notes"] = notes
    report["seconds"] = time.perf_counter() - t0
    return report, plot


def _main(argv: Sequence[str] | None) -> int:
    args = parse_args(argv)
    if args.figure:
        path = lf.plot_filters(args.checkpoint, args.out, args.points, args.data_dir,
                               args.data_source, args.exact_max_nodes, args.cheb_order,
                               args.spectral_graphs)
        print(f"wrote {path}")
        return 0
    report, plot = run(args)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / f"{args.dataset}_diagnostics"
    json_path = stem.with_suffix(".json")
    write_atomic(json_path, json.dumps(_clean(report), indent=1) + "\n",
                 "free some space there or give another --out")
    print(format_report(report))
    if args.sizes_only:
        print(f"wrote {json_path}")
    elif write_png(report, plot, stem.with_suffix(".png")):
        print(f"wrote {json_path} and {stem.with_suffix('.png')}")
    else:
        print(f"matplotlib is not installed: no PNG (pip install matplotlib); wrote {json_path}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit code (0, 2 bad input, 1 failure, 130/143)."""
    return run_tool(_main, argv, interrupted=cli.DATA_INTERRUPTED)


if __name__ == "__main__":
    sys.exit(main())
