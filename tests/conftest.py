"""Test-wide settings, and the one place that knows where the real datasets are."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

#: Folder holding the real datasets (``zinc/``, ``mnist/``, ``squirrel/``, ``pubmed/``) that a few
#: tests read. Nothing else points the tests at a machine's files: without it those tests skip.
TEST_DATA_ENV = "AUTOGCN_TEST_DATA"


def pytest_collection_modifyitems(session, config, items) -> None:
    """The compile tests run last, in their collected order otherwise. After torch.compile has
    run in the test process, a process pool forked by a later test (the reliability tests'
    pools) was seen to hang at its start: a fork while the compiler's state is live (a lock
    held elsewhere), not a fault of the code under test; the superpixel builder's pool forks
    before anything is compiled (data loading comes first)."""
    items.sort(key=lambda item: item.path.name == "test_compilation.py")


def pytest_configure(config):
    # Tests use tiny tensors: one thread avoids OpenMP oversubscription on shared machines.
    torch.set_num_threads(1)


def real_data_dir(name: str, *required: str) -> Path:
    """The folder of real dataset ``name`` under ``$AUTOGCN_TEST_DATA``, holding every file in
    ``required``; skips the calling test, saying what to set, when it is not there."""
    root = os.environ.get(TEST_DATA_ENV, "")
    if not root:
        pytest.skip(f"set {TEST_DATA_ENV} to the folder holding zinc/, mnist/, squirrel/ and "
                    f"pubmed/ to run this test (it reads the real {name}/ data)")
    folder = Path(root).expanduser() / name
    missing = [f for f in required if not (folder / f).is_file()]
    if not folder.is_dir() or missing:
        pytest.skip(f"{TEST_DATA_ENV}={root} has no {name}/{missing[0] if missing else ''} "
                    "(point it at the folder holding the real datasets to run this test)")
    return folder


@pytest.fixture()
def real_data() -> Callable[..., Path]:
    """``real_data("zinc", "val.pickle")``: see :func:`real_data_dir`."""
    return real_data_dir


@pytest.fixture
def stand_in_compiler(monkeypatch) -> list:
    """Compiling "works" and ``compile_regions`` records the nets it is given instead of
    compiling them (a cold compile costs tens of seconds): for tests of the benchmark scripts'
    and the GPU check's bookkeeping; that compiled and eager agree is
    ``tests/test_compilation.py``'s to show."""
    from train import compilation

    given: list = []
    monkeypatch.setattr(compilation, "unavailable", lambda device: None)
    monkeypatch.setattr(compilation, "compile_regions",
                        lambda net: given.append(net) or 1)
    return given
