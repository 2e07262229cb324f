"""Dataset diagnostics (scripts/diagnostics.py, scripts/diagnose.py): every measure against an
independent computation on tiny graphs built here."""

from __future__ import annotations

import json
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
import torch

from autogcn.graph import Graph
from scripts import diagnose
from scripts import diagnostics as dg
from tests.data_writers import write_squirrel


def adj_of(edges, n):
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    return dg.simple_adjacency(e[:, 0], e[:, 1], n)


def exact_energy(adj, signal):
    return dg.spectral_energy(adj, signal, method="exact")


def random_edges(n: int, p: float, seed: int, blocks=None, p_in: float | None = None):
    """Undirected G(n, p) (or a two-level SBM when ``blocks`` is given), each edge once."""
    rng = np.random.default_rng(seed)
    iu, ju = np.triu_indices(n, 1)
    prob = np.full(iu.size, p)
    if blocks is not None:
        prob = np.where(blocks[iu] == blocks[ju], p_in, p)
    keep = rng.random(iu.size) < prob
    return np.stack([iu[keep], ju[keep]], 1)


# ------------------------------------------------------------------ homophily
def brute_homophily(edges, labels):
    """The four measures straight from their formulas, with Python sets and loops."""
    nbrs = {v: set() for v in range(len(labels))}
    for u, v in edges:
        if u != v:
            nbrs[u].add(v)
            nbrs[v].add(u)
    und = {(min(u, v), max(u, v)) for u, v in edges if u != v}
    h_edge = sum(labels[u] == labels[v] for u, v in und) / len(und)
    ratios = [sum(labels[u] == labels[v] for u in nbrs[v]) / len(nbrs[v])
              for v in nbrs if nbrs[v]]
    h_node = sum(ratios) / len(ratios)
    classes = sorted(set(labels))
    n = len(labels)
    total = 0.0
    for k in classes:
        members = [v for v in nbrs if labels[v] == k]
        deg = sum(len(nbrs[v]) for v in members)
        same = sum(labels[u] == k for v in members for u in nbrs[v])
        h_k = same / deg if deg else 0.0
        total += max(0.0, h_k - len(members) / n)
    h_ci = total / (len(classes) - 1)
    two_e = sum(len(s) for s in nbrs.values())
    p = [sum(len(nbrs[v]) for v in nbrs if labels[v] == k) / two_e for k in classes]
    s = sum(x * x for x in p)
    return {"edge": h_edge, "node": h_node, "class_insensitive": h_ci,
            "adjusted": (h_edge - s) / (1 - s)}


def test_homophily_hand_values():
    # path 0-1-2-3, labels 0 0 1 1; given with a repeated edge, a reversed copy and a self-loop
    path = [(0, 1), (1, 0), (1, 2), (2, 3), (2, 3), (2, 2)]
    h = dg.homophily(adj_of(path, 4), [0, 0, 1, 1])
    assert h == pytest.approx({"edge": 2 / 3, "node": 3 / 4, "class_insensitive": 1 / 3,
                               "adjusted": 1 / 3})
    # complete bipartite K_{2,3}, one class per side: perfectly heterophilous
    k23 = [(u, v) for u in (0, 1) for v in (2, 3, 4)]
    h = dg.homophily(adj_of(k23, 5), [0, 0, 1, 1, 1])
    assert h == pytest.approx({"edge": 0.0, "node": 0.0, "class_insensitive": 0.0,
                               "adjusted": -1.0})
    # a clique per class (a triangle, a K_4 and an edge): perfectly homophilous
    cliques = [list(combinations(c, 2)) for c in ([0, 1, 2], [3, 4, 5, 6], [7, 8])]
    labels = [0, 0, 0, 1, 1, 1, 1, 2, 2]
    h = dg.homophily(adj_of(sum(cliques, []), 9), labels)
    assert h == pytest.approx({"edge": 1.0, "node": 1.0, "class_insensitive": 1.0,
                               "adjusted": 1.0})


def test_homophily_matches_brute_force_on_random_graphs():
    for seed in range(3):
        rng = np.random.default_rng(seed)
        n = 40
        edges = random_edges(n, 0.12, seed)
        labels = rng.integers(0, 4, n)
        labels[:4] = [0, 1, 2, 3]  # every class present
        got = dg.homophily(adj_of(edges, n), labels)
        assert got == pytest.approx(brute_homophily(edges.tolist(), labels.tolist()), abs=1e-12)


def test_homophily_ignores_unlabelled_nodes():
    edges = [(0, 1), (1, 2), (2, 3), (3, 4)]
    with_unlabelled = dg.homophily(adj_of(edges, 5), [0, 0, 1, 1, -1])
    assert with_unlabelled == pytest.approx(dg.homophily(adj_of(edges[:3], 4), [0, 0, 1, 1]))


def test_adjusted_homophily_is_zero_for_random_labels_in_expectation():
    rng = np.random.default_rng(0)
    n = 1500
    adj = adj_of(random_edges(n, 0.01, 1), n)
    base = rng.integers(0, 3, n)
    values = [dg.adjusted_homophily(adj, rng.permutation(base)) for _ in range(30)]
    assert abs(np.mean(values)) < 0.005
    # ... and 1 for a perfectly homophilous labelling of a graph with one component per class
    blocks = np.repeat([0, 1, 2], 10)
    cliques = [(u, v) for u, v in combinations(range(30), 2) if blocks[u] == blocks[v]]
    assert dg.adjusted_homophily(adj_of(cliques, 30), blocks) == pytest.approx(1.0)


# ------------------------------------------------------------------ labels, degrees
def test_class_balance_and_majority_accuracy():
    b = dg.class_balance([0, 1, 1, 2, 1, -1], num_classes=4)
    assert b["counts"] == [1, 3, 1, 0] and b["majority_class"] == 1
    assert b["majority_fraction"] == pytest.approx(0.6)
    assert b["constant_balanced_accuracy"] == pytest.approx(1 / 3)
    assert dg.majority_accuracy([1, 1, 0], [1, 0, 0, 1]) == pytest.approx(0.5)
    assert dg.constant_mae([0.0, 1.0, 5.0], [1.0, 3.0]) == pytest.approx(1.0)


def test_degree_statistics_on_a_directed_graph_with_a_loop_and_an_isolated_node():
    g = Graph([0, 0, 1, 2, 2], [1, 1, 2, 2, 0], num_nodes=4)
    s = dg.degree_statistics(g)
    assert s["undirected_edges"] == 3 and s["self_loops"] == 1 and s["repeated_edges"] == 1
    assert s["isolated_nodes"] == 1 and not s["stored_symmetric"]
    assert s["degree"]["max"] == 2 and s["in_degree"]["max"] == 2


# ------------------------------------------------------------------ duplicates
def planted_duplicates():
    """A random graph with features, plus copies of node 0 (twice) and of a node ``b`` not
    adjacent to it (once, with another label): each copy gets the original's feature row and
    neighbour set."""
    rng = np.random.default_rng(3)
    n0 = 30
    edges = random_edges(n0, 0.15, 3).tolist()
    feats = (rng.random((n0, 6)) < 0.4).astype(np.float32)
    labels = list(rng.integers(0, 3, n0))
    nbrs = {v: sorted({u for a, b in edges for u, w in ((a, b), (b, a)) if w == v}) for v in
            range(n0)}
    b = next(v for v in range(1, n0) if v not in nbrs[0] and nbrs[v])
    originals = [0, 0, b]
    for k, orig in enumerate(originals):
        new = n0 + k
        edges += [(u, new) for u in nbrs[orig]]
        feats = np.vstack([feats, feats[orig]])
        labels.append(labels[orig] if k < 2 else (labels[orig] + 1) % 3)
    return np.asarray(edges), feats, np.asarray(labels), n0, b


def test_duplicates_on_planted_copies():
    edges, feats, labels, n0, b = planted_duplicates()
    n = len(labels)
    adj = adj_of(edges, n)
    groups = dg.duplicate_groups(torch.from_numpy(feats).to_sparse(), adj)
    # brute force: same row and same neighbour set, all pairs
    dense = adj.toarray()
    same = [(u, v) for u, v in combinations(range(n), 2)
            if np.array_equal(feats[u], feats[v]) and np.array_equal(dense[u], dense[v])]
    assert {(u, v) for u, v in combinations(range(n), 2) if groups[u] == groups[v]} == set(same)
    assert {(0, n0), (0, n0 + 1), (n0, n0 + 1), (b, n0 + 2)} <= set(same)
    s = dg.duplicate_summary(groups, labels)
    assert s["nodes_with_duplicate"] == len({u for p in same for u in p})
    assert s["redundant_nodes"] == n - len(np.unique(groups))
    # dense features give the same groups
    assert np.array_equal(dg.duplicate_groups(feats, adj), groups)
    # split crossing: copies of 0 in test with 0 in train; b's copy has another label
    others = [v for v in range(1, n0) if v != b and groups[v] != groups[0]][:2]
    leak = dg.split_leakage(groups, [0, b, others[0]], [n0, n0 + 1, n0 + 2, others[1]], labels)
    assert leak == {"evaluated": 4, "with_train_duplicate": 3, "fraction": 0.75, "same_label": 2}


# ------------------------------------------------------------------ spectrum
def direct_band_energy(edges, n, labels):
    """Band fractions from a dense numpy Laplacian built entry by entry."""
    a = np.zeros((n, n))
    for u, v in edges:
        if u != v:
            a[u, v] = a[v, u] = 1.0
    d = np.maximum(a.sum(1), 1.0)
    lap = np.eye(n) - a / np.sqrt(np.outer(d, d))
    lam, vec = np.linalg.eigh(lap)
    y = np.eye(int(max(labels)) + 1)[labels]
    y -= y.mean(0)
    e = ((vec.T @ y) ** 2).sum(1)
    out = []
    for lo, hi in ((0, 2 / 3), (2 / 3, 4 / 3), (4 / 3, 2.1)):
        inside = (lam >= lo - 1e-9) & (lam < hi - 1e-9)
        out.append(e[inside].sum() / e.sum())
    return out, lam


def test_exact_band_energy_against_direct_numpy():
    rng = np.random.default_rng(5)
    n = 50
    edges = random_edges(n - 1, 0.1, 5).tolist()  # node n-1 isolated: eigenvalue 1
    labels = rng.integers(0, 3, n)
    want, lam = direct_band_energy(edges, n, labels)
    got = exact_energy(adj_of(edges, n), dg.label_signal(labels))
    assert [got.bands[b] for b in ("low", "mid", "high")] == pytest.approx(want, abs=1e-10)
    mass = [np.mean((lam >= lo - 1e-9) & (lam < hi - 1e-9))
            for lo, hi in ((0, 2 / 3), (2 / 3, 4 / 3), (4 / 3, 2.1))]
    assert list(got.eigenvalue_mass.values()) == pytest.approx(mass)
    assert got.energy.sum() == pytest.approx(1.0) and got.null.sum() == pytest.approx(1.0)
    assert sum(got.bands.values()) == pytest.approx(1.0)
    assert sum(got.baseline.values()) == pytest.approx(1.0)
    # mean λ: the Rayleigh quotient of the centred labels
    lap = dg.laplacian(adj_of(edges, n)).toarray()
    y = dg.label_signal(labels)
    assert got.mean_lambda == pytest.approx(np.trace(y.T @ lap @ y) / np.trace(y.T @ y))


def test_extreme_labellings_put_all_energy_in_one_band():
    # equal cliques, one per class: the centred labels lie in L's null space
    blocks = np.repeat([0, 1, 2], 5)
    cliques = [(u, v) for u, v in combinations(range(15), 2) if blocks[u] == blocks[v]]
    assert exact_energy(adj_of(cliques, 15), dg.label_signal(blocks)).bands["low"] \
        == pytest.approx(1.0)
    # an even cycle with alternating labels: the eigenvector of λ = 2
    cycle = [(i, (i + 1) % 8) for i in range(8)]
    alt = np.arange(8) % 2
    assert exact_energy(adj_of(cycle, 8), dg.label_signal(alt)).bands["high"] \
        == pytest.approx(1.0)
    # K_4 has λ = 4/3 exactly, on the boundary: it counts as high
    k4 = list(combinations(range(4), 2))
    assert exact_energy(adj_of(k4, 4), dg.label_signal([0, 1, 0, 1])).bands["high"] \
        == pytest.approx(1.0)


def test_random_labelling_matches_the_baseline_in_expectation():
    rng = np.random.default_rng(2)
    n = 120
    blocks = np.repeat([0, 1], n // 2)
    adj = adj_of(random_edges(n, 0.03, 2, blocks, 0.2), n)
    labels = rng.integers(0, 3, n)
    signals = {i: dg.label_signal(rng.permutation(labels)) for i in range(300)}
    runs = list(dg.spectral_energies(adj, signals, method="exact").values())  # one eigh
    mean = {b: np.mean([r.bands[b] for r in runs]) for b in ("low", "mid", "high")}
    assert mean == pytest.approx(runs[0].baseline, abs=0.01)
    assert np.mean([r.mean_lambda for r in runs]) == pytest.approx(runs[0].baseline_mean_lambda,
                                                                  abs=0.005)
    # ... while the block labels sit in the low band, far above their baseline
    planted = exact_energy(adj, dg.label_signal(blocks))
    assert planted.bands["low"] > 0.9 > 5 * planted.baseline["low"]


def test_jackson_damped_indicator_stays_in_the_unit_interval():
    # a positive kernel: the damped series of an indicator never over- or undershoots
    x = np.linspace(-1, 1, 2001)
    t = np.cos(np.outer(np.arange(200), np.arccos(x)))  # T_k(x)
    for lo, hi in ((0.0, 2 / 3), (2 / 3, 4 / 3), (0.3, 0.35)):
        approx = (dg.jackson_kernel(200) * dg.indicator_coefficients(lo, hi, 200)) @ t
        assert approx.min() > -1e-12 and approx.max() < 1 + 1e-12
        lam = x + 1
        far = (np.abs(lam - lo) > 0.1) & (np.abs(lam - hi) > 0.1)
        assert np.allclose(approx[far], ((lam >= lo) & (lam <= hi))[far], atol=1e-3)


CHEB_TOL = 0.02  # per band, K = 300 moments (docs/data.md, "Exact or estimated")


@pytest.mark.parametrize("seed", [0, 1])
def test_chebyshev_estimate_agrees_with_exact(seed):
    rng = np.random.default_rng(seed)
    n = 400
    blocks = rng.integers(0, 3, n)
    adj = adj_of(random_edges(n, 0.01, seed, blocks, 0.06), n)
    for labels in (blocks, rng.integers(0, 3, n)):
        sig = dg.label_signal(labels)
        exact = dg.spectral_energy(adj, sig, method="exact")
        est = dg.spectral_energy(adj, sig, method="chebyshev", order=300)
        assert est.method == "chebyshev" and exact.method == "exact"
        assert est.bands == pytest.approx(exact.bands, abs=CHEB_TOL)
        assert sum(est.bands.values()) == pytest.approx(1.0, abs=1e-9)
        assert est.total == pytest.approx(exact.total)
        assert est.mean_lambda == pytest.approx(exact.mean_lambda, abs=1e-9)
        assert est.baseline_mean_lambda == pytest.approx(exact.baseline_mean_lambda, abs=1e-9)
        # the trace is stochastic (16 probes): a looser tolerance for the baseline
        assert est.baseline == pytest.approx(exact.baseline, abs=0.05)
        # the histogram is the energy smoothed by the kernel (width ~ pi/K): compare the two in
        # the Wasserstein-1 distance, in units of λ (an atom near a bin edge may move one bin)
        w1 = np.abs(np.cumsum(est.energy) - np.cumsum(exact.energy)).sum() * np.diff(est.edges)[0]
        assert w1 < 0.02
    # auto picks by size
    assert dg.spectral_energy(adj, sig, exact_max_nodes=100, order=50).method == "chebyshev"


def test_feature_signal_and_the_mean_over_graphs():
    ids = torch.tensor([0, 2, 2, 1])
    x = dg.feature_signal(ids, vocab=4)
    assert x.shape == (4, 4) and np.allclose(x.sum(0), 0.0)
    wide = dg.feature_signal(np.random.default_rng(0).random((10, 100)), max_columns=8)
    assert wide.shape == (10, 8)
    cycle = adj_of([(i, (i + 1) % 6) for i in range(6)], 6)
    path = adj_of([(0, 1), (1, 2), (2, 3)], 4)
    items = [(cycle, dg.label_signal(np.arange(6) % 2)), (path, dg.label_signal([0, 0, 1, 1])),
             (path, dg.label_signal([1, 1, 1, 1]))]
    m = dg.mean_spectral_energy(items)
    one = [exact_energy(a, s) for a, s in items[:2]]
    assert m["graphs"] == 2 and m["skipped"] == 1
    want = {b: np.mean([r.bands[b] for r in one]) for b in one[0].bands}
    assert m["bands"] == pytest.approx(want)


# ------------------------------------------------------------------ command line
def tiny_autogcn_checkpoint(path: Path, in_dim: int, classes: int) -> Path:
    from nets.gnn_net import NetIO
    from nets.registry import build_net
    from train.checkpoint import checkpoint_bytes
    from train.config import load_config

    cfg = load_config("configs/node_classification_AUTOGCN_SQUIRREL.json")
    io = NetIO("single_graph", "linear", in_dim, classes)
    net = build_net(cfg["model"], io, cfg["net_params"])
    path.write_bytes(checkpoint_bytes(net.state_dict(), cfg, io, seed=1, run=0, epoch=0))
    return path


def test_cli_end_to_end_on_squirrel_format(tmp_path, capsys):
    data = tmp_path / "squirrel"
    write_squirrel(data)
    ckpt = tiny_autogcn_checkpoint(tmp_path / "ck.pt", 12, 5)
    out = tmp_path / "out"
    rc = diagnose.main(["--dataset", "SQUIRREL", "--data_dir", str(data), "--out", str(out),
                        "--checkpoint", str(ckpt)])
    assert rc == 0
    report = json.loads((out / "SQUIRREL_diagnostics.json").read_text())
    assert report["size"]["nodes"] == 60 and report["labels"]["classes"] == 5
    assert set(report["homophily"]) == {"edge", "node", "class_insensitive", "adjusted"}
    assert len(report["duplicates"]["fixed_splits"]) == 3
    assert sum(report["spectrum"]["label_energy"]["bands"].values()) == pytest.approx(1.0)
    assert report["filtered_squirrel"]["nodes"] + report["filtered_squirrel"][
        "removed_nodes"] == 60
    layers = report["checkpoint"]["layers"]
    assert layers and set(layers[0]["response"]) == {"low", "mid", "high"}
    assert len(layers[0]["response"]["low"][0]) == len(report["checkpoint"]["lambda"])
    pytest.importorskip("matplotlib")
    assert (out / "SQUIRREL_diagnostics.png").stat().st_size > 10_000
    text = capsys.readouterr().out
    assert "homophily" in text and "label energy" in text


def test_cli_on_a_batched_graph_dataset(tmp_path):
    from tests.data_writers import write_tiny_zinc

    write_tiny_zinc(tmp_path / "zinc", {"train": 12, "val": 4})
    rc = diagnose.main(["--dataset", "ZINC", "--data_dir", str(tmp_path / "zinc"), "--out",
                        str(tmp_path / "out"), "--spectral_graphs", "5"])
    assert rc == 0
    report = json.loads((tmp_path / "out" / "ZINC_diagnostics.json").read_text())
    assert report["task"] == "graph regression" and "not_applicable" in report["homophily"]
    assert "not_applicable" in report["spectrum"]["label_energy"]
    assert report["spectrum"]["feature_energy"]["graphs"] == 5
    assert report["targets"]["train"]["count"] == 12


def test_sizes_only_generates_the_data_and_reports_every_split(tmp_path, capsys):
    data, out = tmp_path / "data", tmp_path / "out"
    argv = ["--dataset", "SBM_PATTERN", "--data_dir", str(data), "--max_graphs", "3",
            "--out", str(out), "--sizes_only"]
    assert diagnose.main(argv) == 0
    files = sorted(p.name for p in (data / "SBM_PATTERN").iterdir())
    assert files == ["meta_first3.json", "test_first3.npz", "train_first3.npz", "val_first3.npz"]
    report = json.loads((out / "SBM_PATTERN_diagnostics.json").read_text())
    assert report["origin"]["source"] == "generate" and report["origin"]["seed"] == 0
    meta = json.loads((data / "SBM_PATTERN" / "meta_first3.json").read_text())
    for split, stats in report["size"]["splits"].items():  # the generator's own record agrees
        want = meta["statistics"][split]
        assert stats["graphs"] == want["graphs"] == 3
        assert (stats["min_nodes"], stats["max_nodes"]) == (want["min_nodes"], want["max_nodes"])
        assert stats["mean_edges"] == pytest.approx(want["mean_edges"])
        assert stats["class_balance"] == pytest.approx(want["class_balance"])
    assert "degrees" not in report and "spectrum" not in report  # no measures
    assert not (out / "SBM_PATTERN_diagnostics.png").exists()
    text = capsys.readouterr().out
    assert "split train" in text and "homophily" not in text


def test_cli_without_matplotlib_still_writes_the_json(tmp_path, capsys, monkeypatch):
    write_squirrel(tmp_path / "squirrel")
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    assert diagnose.main(["--dataset", "squirrel", "--data_dir", str(tmp_path / "squirrel"),
                          "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "SQUIRREL_diagnostics.json").exists()
    assert not (tmp_path / "out" / "SQUIRREL_diagnostics.png").exists()
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("matplotlib is not installed")


@pytest.mark.parametrize("argv, needle", [
    (["--dataset", "NOPE"], "unknown dataset"),
    (["--dataset", "SQUIRREL", "--data_dir", "/nonexistent"], "squirrel_directed.npz"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, argv, needle):
    assert diagnose.main([*argv, "--out", str(tmp_path)]) == 2  # bad input, as everywhere
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and needle in err and "\n" not in err
