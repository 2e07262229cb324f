"""``scripts/gpu_session.sh`` without a GPU: one SKIP line, exit 0, nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_without_a_gpu_it_skips_in_one_line(tmp_path):
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHON": sys.executable,
           "OUT_ROOT": str(tmp_path / "out"), "ZINC_DIR": str(tmp_path / "zinc")}
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_session.sh")], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["SKIP gpu_session no CUDA device here: nothing run"]
    assert proc.stderr == ""
    assert not (tmp_path / "out").exists()
