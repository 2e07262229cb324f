"""The GPU checks of ``scripts/gpu_check.py``: on CUDA where a GPU exists (skipped elsewhere), and
their in-process part on the CPU everywhere, so the checks themselves are exercised by CI."""

import pytest
import torch

from scripts import gpu_check

IN_PROCESS = [gpu_check.check_csr_product, gpu_check.check_primitives,
              gpu_check.check_autogcn_layer, gpu_check.check_models]
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.mark.parametrize("check", IN_PROCESS, ids=lambda f: f.__name__)
def test_checks_run_on_the_cpu(check):
    assert check("cpu")


@needs_cuda
@pytest.mark.parametrize("check", IN_PROCESS, ids=lambda f: f.__name__)
def test_checks_on_cuda(check):
    assert check("cuda")


@needs_cuda
def test_environment_on_cuda():
    assert gpu_check.check_env()


def test_without_a_gpu_the_script_says_so_in_one_line(capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu_check.main([]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("SKIP gpu_check no CUDA device")
