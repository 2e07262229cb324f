"""Small graph builders shared by the tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import types

import torch

from autogcn.graph import Graph


def rand_graph(n: int, m: int, seed: int = 0) -> Graph:
    """``m`` distinct directed edges drawn uniformly from the ``n²`` ordered pairs (self-loops
    possible), like ``dgl.rand_graph``; nodes without incoming edges are likely."""
    gen = torch.Generator().manual_seed(seed)
    pairs = torch.randperm(n * n, generator=gen)[:m]
    return Graph(pairs // n, pairs % n, n)


def fake_pyg_datasets(monkeypatch, **classes) -> list:
    """Install a fake ``torch_geometric.datasets`` holding ``classes`` (name -> constructor);
    returns the log of ``(name, args, kwargs)`` of every construction."""
    calls: list = []
    tg = types.ModuleType("torch_geometric")
    datasets = types.ModuleType("torch_geometric.datasets")
    for name, make in classes.items():
        def factory(*args, _make=make, _name=name, **kwargs):
            calls.append((_name, args, kwargs))
            return _make(*args, **kwargs)

        setattr(datasets, name, factory)
    tg.datasets = datasets
    monkeypatch.setitem(sys.modules, "torch_geometric", tg)
    monkeypatch.setitem(sys.modules, "torch_geometric.datasets", datasets)
    return calls


def run_in_own_group(args: list[str], timeout: float, cwd: str | os.PathLike,
                     env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``args`` in a process group of its own, capturing text output; on timeout the whole
    group (the child and anything it started) is killed and ``TimeoutExpired`` is raised."""
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
