"""Dataset diagnostics (a readable report, a JSON file and a PNG for any dataset the project
loads) and the figure of trained models' learned filters.

    python -m scripts.diagnose --dataset NAME --data_dir DIR [--max_graphs N] [--checkpoint CKPT]
                               [--out DIR] [--data_source S] [--cache_dir D] [--split_ratio R]
                               [--sizes_only]
    python -m scripts.diagnose --checkpoint CKPT [CKPT ...] [--out filters.png] [--points 201]
                               [--data_dir DIR] [--data_source S] [--exact_max_nodes N]
                               [--cheb_order N] [--spectral_graphs N]

Without ``--dataset``, the checkpoints' learned frequency responses are drawn in one figure,
one panel each, over their dataset's label energy when ``--data_dir`` is given
(:mod:`scripts.learned_filters` says what is drawn, on which λ axis, and why). The rest of this
text is the dataset report.

The one command for dataset statistics. It loads the dataset through the project's loaders, so
it also generates the SBM files into ``--data_dir`` and builds the superpixel cache in
``--cache_dir`` on first use (``--sizes_only`` stops there: the quick way to prepare data).
Reports where the data came from (the loader's record: files, seed, build or generation time),
per-split sizes (graphs, nodes, edges; class balance of node labels), degrees, class balance and
the majority-class accuracy (ZINC: target statistics and the constant-predictor MAE), four
homophily measures, duplicate nodes and how many cross the train/test split, and where the label
signal lies in the spectrum of the normalised Laplacian (low/middle/high bands against the
eigenvalue mass, the value for labels independent of the graph); definitions, citations and the
estimator are in :mod:`scripts.diagnostics`. Measures that need node labels are reported as not
applicable, with the reason, on graph-level tasks (ZINC, MNIST, CIFAR10); their input features'
spectrum is reported instead.

Batched-graph datasets are measured on the graphs loaded (``--max_graphs`` per split): homophily
and duplicates on their disjoint union, the spectrum exactly per graph on a seeded sample of
``--spectral_graphs`` training graphs, averaged. For SQUIRREL the report adds Platonov et al.
(2023)'s filtered Squirrel (:func:`data.squirrel.filtered_squirrel`) and its measures.

``--checkpoint`` (a checkpoint of this project of a model with learned spectral filters: AutoGCN,
ChebNet, GPR-GNN, BernNet, ChebNetII, JacobiConv) reports and draws every learned F(λ) over the
label-energy histogram: do the filters pass the bands where the labels live? (GPR-GNN's λ is that
of its own operator, with self-loops: see :mod:`scripts.learned_filters`; without ``--dataset``
several checkpoints are drawn in one figure.)

Writes ``<out>/<DATASET>_diagnostics.json`` and ``.png`` (headless; without matplotlib one line
says so and the JSON is still written; ``--sizes_only``: the JSON only). Options are checked
before anything is loaded, with the main scripts' checks (``scripts/cli.py``; ``--split_ratio`` as
the config's ``data.split_ratio``).
Bad input (an out-of-range value, an unknown dataset, missing data, a bad checkpoint, an
unwritable ``--out``) is one line on stderr, ``error: ...``, exit status 2; other failures (a
full disk) exit 1, Ctrl-C 130 (data files are written atomically and their metadata last, so an
interrupted generation or build is never taken for complete data).
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
    from train.errors import run_tool

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
    cfg = {"data_dir": args.data_dir, "data_source": args.data_source,
           "max_graphs": args.max_graphs, "cache_dir": args.cache_dir, "workers": args.workers,
           "sbm_variant": args.sbm_variant, "progress": sys.stderr.isatty()}
    if args.dataset in GRAPH_SOURCES:
        return load_graph_dataset(args.dataset, cfg)
    return load_node_data(args.dataset, cfg)


def _na(reason: str) -> dict[str, str]:
    return {NOT_APPLICABLE: reason}


# ============================================================================ node datasets
def _leakage(groups: np.ndarray, ds: NodeDataset, random: tuple) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if ds.fixed_splits:
        per = [{"test": dg.split_leakage(groups, tr, te, ds.labels),
                "val": dg.split_leakage(groups, tr, va, ds.labels)}
               for tr, va, te in ds.fixed_splits]
        out["fixed_splits"] = per
        out["fixed_test_with_train_duplicate_mean"] = float(np.mean(
            [p["test"]["with_train_duplicate"] for p in per]))
        out["fixed_test_same_label_mean"] = float(np.mean([p["test"]["same_label"] for p in per]))
    tr, va, te = random
    out["random_split"] = {"test": dg.split_leakage(groups, tr, te, ds.labels),
                           "val": dg.split_leakage(groups, tr, va, ds.labels)}
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
        "feature_signal": (f"{ds.in_dim} columns, sketched to {dg.SKETCH_COLUMNS} Gaussian "
                           "combinations" if ds.in_dim > dg.SKETCH_COLUMNS
                           else f"{ds.in_dim} columns"),
        "seconds": time.perf_counter() - t0}
    plot["degrees"] = np.diff(adj.indptr)
    plot["classes"] = report["labels"]["counts"]
    return report


def _filtered_block(ds: NodeDataset, args: argparse.Namespace, rnd: tuple) -> dict[str, Any]:
    """Platonov et al.'s filtered Squirrel: its size, what it removes and its homophily."""
    given = getattr(ds, "edges_as_given", None)
    if given is None:
        return _na("the loaded dataset keeps no directed edge list")
    f = filtered_squirrel(ds, given)
    fadj = dg.graph_adjacency(f.graph)
    gid, _ = outlink_groups(*given, ds.labels, ds.num_nodes)
    fr = random_split(f.num_nodes, args.split_ratio or SPLIT_RATIOS["SQUIRREL"], args.seed,
                      f.labels)
    return {
        "rule": f.info["filtered"],
        "nodes": f.num_nodes, "undirected_edges": int(fadj.nnz // 2),
        "stored_directed_edges": int(f.edges_as_given[0].numel())
        if getattr(f, "edges_as_given", None) is not None else None,
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
def _splits(ds: GraphDataset) -> dict[str, Any]:
    return {k: v for k, v in ds.splits().items() if v is not None and len(v)}


def _split_sizes(splits: dict[str, Any], node_classes: int | None) -> dict[str, Any]:
    """Per split: graphs, mean/min/max nodes, mean directed edges and, for node labels
    (``node_classes``), the fraction of nodes per class."""
    out = {}
    for name, split in splits.items():
        out[name] = split.stats()
        if node_classes is not None:
            out[name]["class_balance"] = dg.class_balance(
                torch.cat([y.reshape(-1) for y in split.labels]), node_classes)["fractions"]
    return out


def _origin(info: dict[str, Any]) -> dict[str, Any]:
    """The loader's record of where the data came from: its plain values (files, source, seed,
    build or generation time...); per-split tables are reported under ``size``."""
    return {k: v for k, v in info.items()
            if v is not None and isinstance(v, str | int | float | bool)}


def _task(ds: GraphDataset) -> str:
    first = next(iter(_splits(ds).values()))
    g, y = first[0]
    if y.numel() == g.num_nodes() and ds.num_classes > 1:
        return "node"
    return "regression" if ds.num_classes == 1 else "graph"


def _graph_signal_items(graphs: list[Graph], signal) -> list:
    return [(dg.graph_adjacency(g), signal(g, y)) for g, y in graphs]


def diagnose_graph_dataset(ds: GraphDataset, args: argparse.Namespace,
                           plot: dict[str, Any]) -> dict[str, Any]:
    splits = _splits(ds)
    task = _task(ds)
    report: dict[str, Any] = {
        "task": {"node": "node classification on batched graphs", "graph": "graph classification",
                 "regression": "graph regression"}[task],
        "size": {"in_dim": ds.in_dim, "classes": ds.num_classes,
                 "max_graphs": args.max_graphs,
                 "splits": _split_sizes(splits, ds.num_classes if task == "node" else None),
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
        **dg.duplicate_summary(groups, torch.cat([y for _, y in everything]) if task == "node"
                               else None),
        "split_crossing": _na("splits are whole graphs: a node and its duplicate always lie in "
                              "the same graph, hence the same split"),
    }
    report["spectrum"] = _graph_spectrum(task, ds, splits[train_name], train_name, args)
    plot["degrees"] = np.diff(adj.indptr)
    return report


def _no_node_labels(task: str) -> str:
    return ("labels are per graph (" + ("a regression target" if task == "regression"
            else "a graph class") + "): there are no node labels")


def _graph_labels(task: str, ds: GraphDataset, splits: dict[str, Any], train_name: str,
                  adj: Any, plot: dict[str, Any]) -> dict[str, Any]:
    """Labels (node or graph classes: balance, majority accuracy) or regression targets
    (statistics, the constant predictor's MAE), and homophily where there are node labels."""
    train = splits[train_name]
    held = splits.get("test") or splits.get("val")
    if task == "node":
        everything = [s for split in splits.values() for s in split]
        node_y = torch.cat([y for _, y in everything])
        lab = dg.class_balance(node_y, ds.num_classes)
        if held is not None:
            lab["majority_accuracy_test"] = dg.majority_accuracy(
                torch.cat([y for _, y in train]), torch.cat([y for _, y in held]))
        plot["classes"] = lab["counts"]
        return {"labels": lab, "homophily": {
            **dg.homophily(adj, node_y),
            "over": f"the disjoint union of the {len(everything)} graphs loaded"}}
    if task == "graph":
        gy = torch.cat([y.reshape(-1) for _, y in train])
        lab = dg.class_balance(gy, ds.num_classes)
        lab["of"] = f"graph labels of the {train_name} split"
        if held is not None:
            lab["majority_accuracy_test"] = dg.majority_accuracy(
                gy, torch.cat([y.reshape(-1) for _, y in held]))
        plot["classes"] = lab["counts"]
        return {"labels": lab, "homophily": _na(_no_node_labels(task))}
    t = {k: dg.target_statistics(torch.cat([y.reshape(-1) for _, y in v]))
         for k, v in splits.items()}
    tr = torch.cat([y.reshape(-1) for _, y in train])
    plot["targets"] = tr.numpy()
    return {"targets": {**t, "constant_median_mae": {
        k: dg.constant_mae(tr, torch.cat([y.reshape(-1) for _, y in v]))
        for k, v in splits.items() if k != "train"}}, "homophily": _na(_no_node_labels(task))}


def _graph_spectrum(task: str, ds: GraphDataset, train: Any, train_name: str,
                    args: argparse.Namespace) -> dict[str, Any]:
    """Label and input-feature energy per band, exact per graph on a seeded sample of
    ``--spectral_graphs`` training graphs, averaged."""
    gen = np.random.default_rng(args.seed)
    take = min(args.spectral_graphs, len(train))
    sample = [train[int(i)] for i in np.sort(gen.choice(len(train), take, replace=False))]
    spectrum: dict[str, Any] = {
        "sample": f"{take} graphs of the {train_name} split (seed {args.seed})"}
    if task == "node":
        spectrum["label_energy"] = dg.mean_spectral_energy(_graph_signal_items(
            sample, lambda g, y: dg.label_signal(y, ds.num_classes)))
    else:
        spectrum["label_energy"] = _na(_no_node_labels(task))
    spectrum["feature_energy"] = dg.mean_spectral_energy(_graph_signal_items(
        sample, lambda g, y: dg.feature_signal(g.ndata["feat"], ds.in_dim, seed=args.seed)))
    return spectrum


# ============================================================================ text report
def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4g}"
    if isinstance(v, dict):
        return ", ".join(f"{k} {_fmt(x)}" for k, x in v.items())
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def _bands(e: dict[str, Any]) -> str:
    if NOT_APPLICABLE in e:
        return f"not applicable: {e[NOT_APPLICABLE]}"
    if "bands" not in e:
        return "no graph with a non-constant signal"
    extra = f" (±sd {_fmt(e['bands_std'])})" if "bands_std" in e else ""
    return (f"{_fmt(e['bands'])}{extra}; mean λ {_fmt(e['mean_lambda'])}   | random labelling "
            f"{_fmt(e['baseline'])}; mean λ {_fmt(e['baseline_mean_lambda'])}   "
            f"[{e['method']}{', order ' + str(e['order']) if e.get('order') else ''}]")


def _leak(x: dict[str, Any]) -> str:
    return (f"{x['with_train_duplicate']} of {x['evaluated']} have one in train"
            + (f" ({x['same_label']} with the same label)" if "same_label" in x else ""))


def _duplicate_rows(row, indent: str, d: dict[str, Any]) -> None:
    """The summary counts and the split crossing of a duplicates block."""
    for k in ("nodes_with_duplicate", "groups", "redundant_nodes", "largest_group",
              "groups_with_one_label"):
        if k in d:
            row(indent + k, d[k])
    if "fixed_splits" in d:
        n = len(d["fixed_splits"])
        row(indent + "fixed splits: test", f"mean {d['fixed_test_with_train_duplicate_mean']:.1f} "
            f"of {d['fixed_splits'][0]['test']['evaluated']} have one in train (mean "
            f"{d['fixed_test_same_label_mean']:.1f} with the same label), over {n} splits")
    if "random_split" in d:
        row(indent + "random split: test", _leak(d["random_split"]["test"]))
        row(indent + "random split: val", _leak(d["random_split"]["val"]))
    if isinstance(d.get("split_crossing"), dict):
        row(indent + "split crossing", f"not applicable: {d['split_crossing'][NOT_APPLICABLE]}")


def format_report(r: dict[str, Any]) -> str:
    lines = [f"== {r['dataset']}: {r['task']}"]

    def row(key: str, value: Any) -> None:
        lines.append(f"  {key:<28} {value if isinstance(value, str) else _fmt(value)}")

    if r.get("origin"):
        lines.append("origin (the loader's record)")
        for k, v in r["origin"].items():
            row(k, v)
    lines.append("size")
    for k, v in r["size"].items():
        if k == "splits":
            for split, stats in v.items():
                row(f"split {split}", stats)
        else:
            row(k, v)
    if "degrees" in r:  # not with --sizes_only
        _measure_lines(r, lines, row)
    if "checkpoint" in r:
        c = r["checkpoint"]
        lines.append(f"checkpoint {c['path']} ({c['model']} on {c['dataset']}, epoch {c['epoch']}):"
                     " mean F(λ) per band")
        for layer in c["layers"]:
            own = " (λ of its own operator, with self-loops)" \
                if layer.get("axis") == "self_loop_laplacian" else ""
            for f, b in layer["band_mean_response"].items():
                row(f"{layer['name']}.{f}{own}", b)
    for note in r.get("notes", []):
        lines.append(f"note: {note}")
    return "\n".join(lines)




def _measure_lines(r: dict[str, Any], lines: list[str], row) -> None:
    """The measures of the report: degrees, labels or targets, homophily, duplicates and the
    spectrum."""
    lines.append("degrees (simple symmetrised graph; in-degree as stored)")
    for k, v in r["degrees"].items():
        row(k, v)
    if "labels" in r:
        lines.append("labels")
        for k, v in r["labels"].items():
            row(k, v)
    if "targets" in r:
        lines.append("targets")
        for k, v in r["targets"].items():
            row(k, v)
    lines.append("homophily")
    h = r["homophily"]
    row("", f"not applicable: {h[NOT_APPLICABLE]}" if NOT_APPLICABLE in h else h)
    d = r["duplicates"]
    lines.append(f"duplicates ({d['definition']})")
    _duplicate_rows(row, "", d)
    if "structural_twins" in d:
        lines.append(f"structural twins ({d['structural_twins']['definition']})")
        _duplicate_rows(row, "", d["structural_twins"])
    if "filtered_squirrel" in r:
        f = r["filtered_squirrel"]
        lines.append("filtered squirrel (Platonov et al. 2023)")
        for k, v in f.items():
            if k == "label_energy":
                row(k, _bands(v))
            elif k == "out_link_twins_in_original":
                lines.append(f"  out-link twins in the original ({v['definition']})")
                _duplicate_rows(row, "  ", v)
            else:
                row(k, v)
    lines.append("spectrum of L = I - D^-1/2 A D^-1/2: energy fraction per band "
                 "low [0,2/3) mid [2/3,4/3) high [4/3,2]")
    s = r["spectrum"]
    if "sample" in s:
        row("sample", s["sample"])
    row("label energy", _bands(s["label_energy"]))
    row("feature energy", _bands(s["feature_energy"]))


# ============================================================================ picture
def _energy_hist(ax, e: dict[str, Any], title: str, colour: str) -> bool:
    if NOT_APPLICABLE in e or "histogram" not in e:
        ax.text(0.5, 0.5, "not applicable:\nno node labels" if NOT_APPLICABLE in e
                else "no graph with a\nnon-constant signal", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_title(title, fontsize=9)
        ax.set_axis_off()
        return False
    h = e["histogram"]
    edges = np.asarray(h["edges"])
    width = np.diff(edges)
    ax.bar(edges[:-1], np.asarray(h["energy"]) / width, width=width, align="edge", color=colour,
           alpha=0.55, label="signal energy")
    ax.stairs(np.asarray(h["baseline"]) / width, edges, color="black", linewidth=1.0,
              label="random labelling (expected)")
    for _, lo, _hi in dg.BANDS[1:]:
        ax.axvline(lo, color="grey", linestyle=":", linewidth=0.8)
    b = e["bands"]
    ax.set_title(f"{title}: low {b['low']:.2f} | mid {b['mid']:.2f} | high {b['high']:.2f}\n"
                 f"mean λ {e['mean_lambda']:.3f} (random labelling "
                 f"{e['baseline_mean_lambda']:.3f})", fontsize=9)
    ax.set_xlim(0, 2)
    ax.set_xlabel("λ")
    ax.set_ylabel("density")
    ax.legend(fontsize=7)
    return True


def write_png(r: dict[str, Any], plot: dict[str, Any], path: Path) -> bool:
    """The picture; False (and nothing written) without matplotlib."""
    plt = lf.pyplot()
    if plt is None:
        return False
    layers = r.get("checkpoint", {}).get("layers", [])
    ncols = 4
    nrows = 1 + math.ceil(len(layers) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.3 * nrows), squeeze=False)
    s = r["spectrum"]
    _energy_hist(axes[0][0], s["label_energy"], "label energy", "tab:blue")
    _energy_hist(axes[0][1], s["feature_energy"], "input-feature energy", "tab:orange")
    _degree_panel(axes[0][2], np.asarray(plot.get("degrees", [])))
    _label_panel(axes[0][3], plot)
    label_e = s["label_energy"]
    back, what = (label_e, "label") if "histogram" in label_e else (s["feature_energy"],
                                                                     "feature")
    lam = np.asarray(r.get("checkpoint", {}).get("lambda", []))
    for k, layer in enumerate(layers):
        _layer_panel(axes[1 + k // ncols][k % ncols], layer, lam, back, what)
    for k in range(len(layers), (nrows - 1) * ncols):
        axes[1 + k // ncols][k % ncols].axis("off")
    fig.suptitle(f"{r['dataset']}: {r['task']}", fontsize=11)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _degree_panel(ax, deg: np.ndarray) -> None:
    if deg.size:
        ax.hist(deg, bins=min(60, max(5, int(deg.max()) + 1)), color="tab:gray", log=True)
    ax.set_title(f"degrees (mean {deg.mean():.1f}, max {deg.max() if deg.size else 0})"
                 if deg.size else "degrees", fontsize=9)
    ax.set_xlabel("degree")


def _label_panel(ax, plot: dict[str, Any]) -> None:
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


def _layer_panel(ax, layer: dict[str, Any], lam: np.ndarray, back: dict[str, Any],
                 what: str) -> None:
    """One layer's learned F(λ) over the dataset's label (else feature) energy on L's axis."""
    responses = [lf.Response(layer["name"], kind, torch.tensor(curves, dtype=torch.float64),
                             layer.get("axis") or lf.LAPLACIAN)
                 for kind, curves in layer["response"].items()]
    dims = (f" ({layer['in_dim']}→{layer['out_dim']})" if layer.get("in_dim") is not None
            else "")
    lf.draw_panel(ax, f"{layer['name']}{dims}: F(λ)", responses, lam, {lf.LAPLACIAN: back},
                  what)


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
                        "ARXIV_YEAR or YELPCHI: the dataset report (without it: the filter "
                        "figure of --checkpoint)")
    p.add_argument("--data_dir", type=cli.data_folder, default=None, metavar="DIR",
                   help="the dataset's folder (the filter figure: draw its label energy "
                        "behind the responses)")
    p.add_argument("--data_source", default=None, choices=SOURCE_CHOICES)
    p.add_argument("--max_graphs", type=cli.int_in(1, cli.MAX_GRAPHS), default=None,
                   help="batched-graph datasets: the first N graphs of each split "
                        f"(1 to {cli.MAX_GRAPHS})")
    p.add_argument("--cache_dir", type=cli.data_folder, default=None, metavar="DIR",
                   help="superpixel graph cache (MNIST, CIFAR10)")
    p.add_argument("--workers", type=cli.int_in(1, cli.MAX_WORKERS), default=None,
                   help=f"processes building superpixel graphs (1 to {cli.MAX_WORKERS})")
    p.add_argument("--sbm_variant", default=None,
                   choices=SBM_VARIANTS + tuple(SBM_VARIANT_ALIASES))
    p.add_argument("--split_ratio", type=cli.split_ratio, default=None,
                   help="node datasets: train,val,test fractions of the random split, e.g. "
                        "0.6,0.2,0.2 or 60/20/20")
    p.add_argument("--seed", type=cli.seed_int, default=None,
                   help=f"random split, graph sample and feature sketch seed (0 to "
                        f"{cli.MAX_SEED}; default {DEFAULT_SEED})")
    p.add_argument("--sizes_only", action="store_true", default=None,
                   help="report where the data came from and the size of every split only, "
                        "without the measures: the quick way to generate the SBM files or build "
                        "a superpixel cache (full datasets take minutes and GBs to measure)")
    p.add_argument("--checkpoint", nargs="+", default=None, metavar="CKPT",
                   help="checkpoint(s) of this project of models with learned spectral filters "
                        "(AutoGCN, ChebNet, GPRGNN, BERNNET, CHEBNETII, JACOBICONV): with "
                        "--dataset one, its filters in the report; without, one panel each "
                        "in the filter figure")
    p.add_argument("--out", default=None,
                   help=f"the report: folder for the JSON and the PNG (default {DEFAULT_OUT}); "
                        "the filter figure: image to write, ending in "
                        + ", ".join(cli.PLOT_SUFFIXES) + " (default for one checkpoint: "
                        "<checkpoint>_filters.png next to it)")
    p.add_argument("--points", type=cli.int_in(2, cli.MAX_PLOT_POINTS), default=LAMBDA_POINTS,
                   help=f"λ samples of a response on [0, 2], 2 to {cli.MAX_PLOT_POINTS} "
                        f"(default {LAMBDA_POINTS})")
    p.add_argument("--spectral_graphs", type=cli.int_in(1, MAX_SPECTRAL_GRAPHS), default=None,
                   help="batched-graph datasets: graphs in the spectral sample (1 to "
                        f"{MAX_SPECTRAL_GRAPHS}; default {REPORT_GRAPHS} for the report, "
                        f"{FIGURE_GRAPHS} for the figure's label energy)")
    p.add_argument("--exact_max_nodes", type=cli.int_in(0, MAX_EXACT_NODES),
                   default=dg.EXACT_MAX_NODES,
                   help="exact eigendecomposition up to this many nodes, Chebyshev above (0 to "
                        f"{MAX_EXACT_NODES}; default {dg.EXACT_MAX_NODES})")
    p.add_argument("--cheb_order", type=cli.int_in(2, cli.MAX_CHEB_ORDER),
                   default=dg.CHEB_ORDER,
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
    _check_report_args(parser, args)
    return args


def _check_report_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    args.dataset = args.dataset.upper().replace("-", "_")
    args.seed = DEFAULT_SEED if args.seed is None else args.seed
    args.sizes_only = bool(args.sizes_only)
    args.spectral_graphs = args.spectral_graphs or REPORT_GRAPHS
    try:
        args.out = cli.out_folder(DEFAULT_OUT if args.out is None else args.out)
    except argparse.ArgumentTypeError as err:
        parser.error(f"--out: {err}")
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
    report = {"dataset": ds.name, "origin": _origin(ds.info), **report}
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
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"{args.dataset}_diagnostics"
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
