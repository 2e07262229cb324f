"""Dataset diagnostics: a readable report, a JSON file and a PNG for any dataset the project loads.

    python -m scripts.diagnose --dataset NAME --data_dir DIR [--max_graphs N] [--checkpoint CKPT]
                               [--out DIR] [--data_source S] [--cache_dir D] [--split_ratio R]

Reports size, degrees, class balance and the majority-class accuracy (ZINC: target statistics
and the constant-predictor MAE), four homophily measures, duplicate nodes and how many cross the
train/test split, and where the label signal lies in the spectrum of the normalised Laplacian
(low/middle/high bands against the eigenvalue mass, the value for labels independent of the
graph); definitions, citations and the estimator are in :mod:`data.diagnostics`. Measures that
need node labels are reported as not applicable, with the reason, on graph-level tasks (ZINC,
MNIST, CIFAR10); their input features' spectrum is reported instead.

Batched-graph datasets are measured on the graphs loaded (``--max_graphs`` per split): homophily
and duplicates on their disjoint union, the spectrum exactly per graph on a seeded sample of
``--spectral_graphs`` training graphs, averaged. For SQUIRREL the report adds Platonov et al.
(2023)'s filtered Squirrel (:func:`data.diagnostics.filtered_squirrel`) and its measures.

``--checkpoint`` (an AutoGCN checkpoint of this project) draws every AutoGCN layer's learned
F(λ) over the label-energy histogram: do the filters pass the bands where the labels live?

Writes ``<out>/<DATASET>_diagnostics.json`` and ``.png`` (headless; without matplotlib one line
says so and the JSON is still written). Errors (unknown dataset, missing data, a bad checkpoint)
are one line on stderr with exit status 1.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from data import diagnostics as dg
from data.common import DataError, GraphDataset
from data.graph import Graph
from data.loaders import GRAPH_SOURCES, load_graph_dataset, load_node_data
from data.node_datasets import SPLIT_RATIOS, NodeDataset, random_split

DEFAULT_OUT = "out/diagnostics"
LAMBDA_POINTS = 201
NOT_APPLICABLE = "not_applicable"


# ============================================================================ loading
def parse_ratio(text: str | None) -> tuple[float, float, float] | None:
    if text is None:
        return None
    parts = [float(p) for p in text.replace(" ", "").split(",") if p]
    if len(parts) != 3 or min(parts) < 0 or abs(sum(parts) - 1.0) > 1e-6:
        raise DataError(f"--split_ratio {text!r}: three non-negative fractions summing to 1, "
                        "e.g. 0.5,0.25,0.25")
    return parts[0], parts[1], parts[2]


def load(args: argparse.Namespace) -> GraphDataset | NodeDataset:
    """The dataset, through the project's loaders (their DataError messages unchanged)."""
    cfg = {"data_dir": args.data_dir, "data_source": args.data_source,
           "max_graphs": args.max_graphs, "cache_dir": args.cache_dir, "workers": args.workers,
           "sbm_variant": args.sbm_variant}
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
    adj = dg.graph_adjacency(ds.graph)
    feats = ds.features
    report: dict[str, Any] = {
        "task": "node classification on one graph",
        "size": {
            "nodes": ds.num_nodes, "undirected_edges": int(adj.nnz // 2),
            "features": ds.in_dim,
            "feature_storage": f"sparse, {feats._nnz()} non-zeros" if feats.is_sparse else "dense",
            "classes": ds.num_classes,
            "fixed_splits": len(ds.fixed_splits or []),
            "fixed_split_sizes": sorted({tuple(int(t.numel()) for t in s)
                                         for s in ds.fixed_splits or []}),
            "random_split": {"ratios": list(ratios), "seed": args.seed,
                             "sizes": [int(t.numel()) for t in rnd]},
        },
        "degrees": dg.degree_statistics(ds.graph),
        "labels": _label_block(ds, rnd),
        "homophily": dg.homophily(adj, ds.labels),
    }
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
    f = dg.filtered_squirrel(ds, given)
    fadj = dg.graph_adjacency(f.graph)
    gid, _ = dg.outlink_groups(*given, ds.labels, ds.num_nodes)
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
    everything = [s for split in splits.values() for s in split]
    union = Graph.batch([g for g, _ in everything])
    adj = dg.graph_adjacency(union)
    feat = union.ndata["feat"]
    report: dict[str, Any] = {
        "task": {"node": "node classification on batched graphs", "graph": "graph classification",
                 "regression": "graph regression"}[task],
        "size": {"in_dim": ds.in_dim, "classes": ds.num_classes,
                 "max_graphs": args.max_graphs,
                 "splits": {k: v.stats() for k, v in splits.items()},
                 "missing_splits": [k for k, v in ds.splits().items() if v is None]},
        "degrees": dg.degree_statistics(union),
    }
    train_name = "train" if "train" in splits else next(iter(splits))
    train = splits[train_name]
    held = splits.get("test") or splits.get("val")
    no_node_labels = ("labels are per graph (" + ("a regression target" if task == "regression"
                      else "a graph class") + "): there are no node labels")
    if task == "node":
        node_y = torch.cat([y for _, y in everything])
        lab = dg.class_balance(node_y, ds.num_classes)
        if held is not None:
            lab["majority_accuracy_test"] = dg.majority_accuracy(
                torch.cat([y for _, y in train]), torch.cat([y for _, y in held]))
        report["labels"] = lab
        report["homophily"] = {**dg.homophily(adj, node_y),
                               "over": f"the disjoint union of the {len(everything)} graphs loaded"}
        plot["classes"] = lab["counts"]
    elif task == "graph":
        gy = torch.cat([y.reshape(-1) for _, y in train])
        lab = dg.class_balance(gy, ds.num_classes)
        lab["of"] = f"graph labels of the {train_name} split"
        if held is not None:
            lab["majority_accuracy_test"] = dg.majority_accuracy(
                gy, torch.cat([y.reshape(-1) for _, y in held]))
        report["labels"] = lab
        report["homophily"] = _na(no_node_labels)
        plot["classes"] = lab["counts"]
    else:
        t = {k: dg.target_statistics(torch.cat([y.reshape(-1) for _, y in v]))
             for k, v in splits.items()}
        tr = torch.cat([y.reshape(-1) for _, y in train])
        report["targets"] = {**t, "constant_median_mae": {
            k: dg.constant_mae(tr, torch.cat([y.reshape(-1) for _, y in v]))
            for k, v in splits.items() if k != "train"}}
        report["homophily"] = _na(no_node_labels)
        plot["targets"] = tr.numpy()
    groups = dg.duplicate_groups(feat, adj)
    report["duplicates"] = {
        "definition": "same feature vector and same neighbour set, within one graph",
        **dg.duplicate_summary(groups, torch.cat([y for _, y in everything]) if task == "node"
                               else None),
        "split_crossing": _na("splits are whole graphs: a node and its duplicate always lie in "
                              "the same graph, hence the same split"),
    }
    gen = np.random.default_rng(args.seed)
    take = min(args.spectral_graphs, len(train))
    sample = [train[int(i)] for i in np.sort(gen.choice(len(train), take, replace=False))]
    spectrum: dict[str, Any] = {
        "sample": f"{take} graphs of the {train_name} split (seed {args.seed})"}
    if task == "node":
        spectrum["label_energy"] = dg.mean_spectral_energy(_graph_signal_items(
            sample, lambda g, y: dg.label_signal(y, ds.num_classes)))
    else:
        spectrum["label_energy"] = _na(no_node_labels)
    spectrum["feature_energy"] = dg.mean_spectral_energy(_graph_signal_items(
        sample, lambda g, y: dg.feature_signal(g.ndata["feat"], ds.in_dim, seed=args.seed)))
    report["spectrum"] = spectrum
    plot["degrees"] = np.diff(adj.indptr)
    return report


# ============================================================================ checkpoint
def checkpoint_filters(path: str, points: int = LAMBDA_POINTS) -> dict[str, Any]:
    """Every AutoGCN layer's F(λ) on ``points`` values of λ in [0, 2], plus each filter's mean
    response per band."""
    from layers.autogcn_layer import AutoGCNLayer
    from train.checkpoint import CheckpointError, load_checkpoint, model_from_checkpoint

    ckpt = load_checkpoint(path)
    net = model_from_checkpoint(ckpt)
    layers = [(n, m) for n, m in net.named_modules() if isinstance(m, AutoGCNLayer)]
    cfg = ckpt["config"]
    if not layers:
        raise CheckpointError(f"{path}: model {cfg.get('model')!r} has no AutoGCN layers")
    lam = torch.linspace(0.0, 2.0, points, dtype=torch.float64)
    band = dg.band_of(lam.numpy())
    out_layers = []
    for name, layer in layers:
        with torch.no_grad():
            resp = {f: c.double() for f, c in layer.frequency_response(lam).items()}
        out_layers.append({
            "name": name, "in_dim": layer.in_dim, "out_dim": layer.out_dim, "mode": layer.mode,
            "response": {f: c.tolist() for f, c in resp.items()},
            "band_mean_response": {f: {b: float(c[:, band == i].mean()) for i, (b, _, _)
                                       in enumerate(dg.BANDS)} for f, c in resp.items()},
        })
    return {"path": str(path), "model": cfg.get("model"), "dataset": cfg.get("dataset"),
            "epoch": ckpt.get("epoch"), "seed": ckpt.get("seed"), "lambda": lam.tolist(),
            "layers": out_layers}


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

    lines.append("size")
    for k, v in r["size"].items():
        row(k, v)
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
    if "checkpoint" in r:
        c = r["checkpoint"]
        lines.append(f"checkpoint {c['path']} ({c['model']} on {c['dataset']}, epoch {c['epoch']}):"
                     " mean F(λ) per band")
        for layer in c["layers"]:
            for f, b in layer["band_mean_response"].items():
                row(f"{layer['name']}.{f}", b)
    for note in r.get("notes", []):
        lines.append(f"note: {note}")
    return "\n".join(lines)


# ============================================================================ picture
def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


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
    plt = _pyplot()
    if plt is None:
        return False
    layers = r.get("checkpoint", {}).get("layers", [])
    ncols = 4
    nrows = 1 + math.ceil(len(layers) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.3 * nrows), squeeze=False)
    s = r["spectrum"]
    _energy_hist(axes[0][0], s["label_energy"], "label energy", "tab:blue")
    _energy_hist(axes[0][1], s["feature_energy"], "input-feature energy", "tab:orange")
    ax = axes[0][2]
    deg = np.asarray(plot.get("degrees", []))
    if deg.size:
        ax.hist(deg, bins=min(60, max(5, int(deg.max()) + 1)), color="tab:gray", log=True)
    ax.set_title(f"degrees (mean {deg.mean():.1f}, max {deg.max() if deg.size else 0})"
                 if deg.size else "degrees", fontsize=9)
    ax.set_xlabel("degree")
    ax = axes[0][3]
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
    label_e = s["label_energy"]
    back = label_e if "histogram" in label_e else s["feature_energy"]
    back_name = "label" if back is label_e else "feature"
    colours = {"low": "tab:blue", "mid": "tab:green", "high": "tab:red"}
    lam = np.asarray(r.get("checkpoint", {}).get("lambda", []))
    for k, layer in enumerate(layers):
        ax = axes[1 + k // ncols][k % ncols]
        if "histogram" in back:
            h = back["histogram"]
            edges = np.asarray(h["edges"])
            twin = ax.twinx()
            twin.bar(edges[:-1], np.asarray(h["energy"]) / np.diff(edges), width=np.diff(edges),
                     align="edge", color="lightgrey", alpha=0.8)
            twin.set_ylabel(f"{back_name} energy density", fontsize=7)
            ax.set_zorder(twin.get_zorder() + 1)
            ax.patch.set_visible(False)
        for f, curves in layer["response"].items():
            for b, curve in enumerate(curves):
                ax.plot(lam, curve, color=colours[f], linestyle="-" if b == 0 else "--",
                        label=f if b == 0 else None)
        ax.axhline(0.0, color="grey", linewidth=0.6)
        ax.set_xlim(0, 2)
        ax.set_title(f"{layer['name']} ({layer['in_dim']}→{layer['out_dim']}): F(λ)", fontsize=9)
        ax.set_xlabel("λ")
        ax.legend(fontsize=7, loc="upper center")
    for k in range(len(layers), (nrows - 1) * ncols):
        axes[1 + k // ncols][k % ncols].axis("off")
    fig.suptitle(f"{r['dataset']}: {r['task']}", fontsize=11)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", required=True,
                   help="SBM_CLUSTER, SBM_PATTERN, ZINC, MNIST, CIFAR10, PUBMED, SQUIRREL, "
                        "ARXIV_YEAR or YELPCHI")
    p.add_argument("--data_dir", default=None)
    p.add_argument("--data_source", default=None, help="generate, raw, dgl or pyg")
    p.add_argument("--max_graphs", type=int, default=None,
                   help="batched-graph datasets: the first N graphs of each split")
    p.add_argument("--cache_dir", default=None, help="superpixel graph cache (MNIST, CIFAR10)")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--sbm_variant", default=None)
    p.add_argument("--split_ratio", default=None,
                   help="node datasets: train,val,test fractions of the random split")
    p.add_argument("--seed", type=int, default=4565,
                   help="random split, graph sample and feature sketch seed")
    p.add_argument("--checkpoint", default=None, help="an AutoGCN checkpoint of this project")
    p.add_argument("--out", default=DEFAULT_OUT, help="folder for the JSON and the PNG")
    p.add_argument("--spectral_graphs", type=int, default=200,
                   help="batched-graph datasets: graphs in the spectral sample")
    p.add_argument("--exact_max_nodes", type=int, default=dg.EXACT_MAX_NODES,
                   help="exact eigendecomposition up to this many nodes, Chebyshev above")
    p.add_argument("--cheb_order", type=int, default=dg.CHEB_ORDER,
                   help="Chebyshev moments of the estimate")
    return p


def run(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    args.dataset = args.dataset.upper().replace("-", "_")
    args.split_ratio = parse_ratio(args.split_ratio)
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
    report = {"dataset": ds.name, **report}
    if args.checkpoint:
        report["checkpoint"] = checkpoint_filters(args.checkpoint)
        trained_on = str(report["checkpoint"]["dataset"] or "").upper()
        if trained_on and trained_on != args.dataset:
            notes.append(f"the checkpoint was trained on {trained_on}, not {args.dataset}")
    report["notes"] = notes
    report["seconds"] = time.perf_counter() - t0
    return report, plot


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from train.checkpoint import CheckpointError

    try:
        report, plot = run(args)
    except (DataError, CheckpointError) as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        return 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"{args.dataset}_diagnostics"
    json_path = stem.with_suffix(".json")
    json_path.write_text(json.dumps(_clean(report), indent=1) + "\n")
    print(format_report(report))
    if write_png(report, plot, stem.with_suffix(".png")):
        print(f"wrote {json_path} and {stem.with_suffix('.png')}")
    else:
        print(f"matplotlib is not installed: no PNG (pip install matplotlib); wrote {json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
