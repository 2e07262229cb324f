"""``scripts/gpu_session.sh``: every environment input checked first, GPU or not (one line,
exit 2, nothing written); then, without a GPU, one SKIP line, exit 0, nothing written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.sweep import load_table
from tests.data_writers import write_tiny_zinc

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture()
def inputs(tmp_path: Path) -> dict[str, str]:
    """Good values of every input: this Python, tiny ZINC pickles, an output folder to be."""
    write_tiny_zinc(tmp_path / "zinc", {"train": 2})
    return {"PYTHON": sys.executable, "OUT_ROOT": str(tmp_path / "out"),
            "ZINC_DIR": str(tmp_path / "zinc"), "BUDGET_S": "540"}


def session(tmp_path: Path, inputs: dict[str, str], **change: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", **inputs, **change}
    return subprocess.run(["bash", str(ROOT / "scripts" / "gpu_session.sh")], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)


def test_without_a_gpu_it_skips_in_one_line(tmp_path, inputs):
    proc = session(tmp_path, inputs)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["SKIP gpu_session no CUDA device here: nothing run"]
    assert proc.stderr == ""
    assert not (tmp_path / "out").exists()


NOT_TORCH = "#!/bin/sh\nexit 1\n"  # a Python without the project's packages, as far as it goes
BAD_INPUTS = {
    "budget not a number": ({"BUDGET_S": "abc"}, "BUDGET_S must be a whole number"),
    "budget a fraction": ({"BUDGET_S": "540.5"}, "BUDGET_S must be a whole number"),
    "budget negative": ({"BUDGET_S": "-5"}, "BUDGET_S must be a whole number"),
    "budget too small": ({"BUDGET_S": "64"}, "BUDGET_S=64 leaves no time"),
    "budget too large": ({"BUDGET_S": "9" * 20}, "too large"),
    "python missing": ({"PYTHON": "{tmp}/nosuch/python"}, "is not an executable"),
    "python without torch": ({"PYTHON": "{tmp}/fake_python"}, "no torch in PYTHON="),
    "zinc without pickles": ({"ZINC_DIR": "{tmp}"}, "no ZINC pickles"),
    "out_root a file": ({"OUT_ROOT": "{tmp}/afile"}, "is a file, not a folder"),
    "out_root under a file": ({"OUT_ROOT": "{tmp}/afile/out"}, "is a file, not a folder"),
    "cells empty": ({"ZINC_CELLS": "  "}, "ZINC_CELLS is empty"),
    "cell not of ZINC": ({"ZINC_CELLS": "GIN_ZINC GIN_MNIST"}, "'GIN_MNIST' is no ZINC cell"),
    "cell a substring": ({"ZINC_CELLS": "GCN"}, "'GCN' is no ZINC cell"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_a_bad_input_is_one_line_and_exit_2_before_the_gpu_check(case, tmp_path, inputs):
    change, needle = BAD_INPUTS[case]
    (tmp_path / "afile").write_text("not a folder\n")
    fake = tmp_path / "fake_python"
    fake.write_text(NOT_TORCH)
    fake.chmod(0o755)
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = session(tmp_path, inputs, **{k: v.format(tmp=tmp_path) for k, v in change.items()})
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""  # no SKIP: the input is refused whatever the machine
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], lines
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_its_cell_list_is_the_graph_table_s_zinc_cells():
    text = (ROOT / "scripts" / "gpu_session.sh").read_text()
    listed = re.search(r'^zinc_ids=" (.*) "$', text, re.M).group(1).split()
    assert sorted(listed) == sorted(c.id for c in load_table("graph").cells
                                    if c.dataset == "ZINC")
