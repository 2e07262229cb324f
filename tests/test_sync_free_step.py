"""The training step that ``scripts/gpu_check.py`` runs under CUDA's sync check (``sync_free_
step``), on the CPU: the same code path trains (its losses change the weights), so on a GPU the
check fails only for a host synchronisation."""

from __future__ import annotations

import torch

from scripts import gpu_check
from train.loop import GraphBatches


def test_the_checked_step_trains_on_the_cpu(tmp_path, monkeypatch):
    losses = []
    step = GraphBatches.train_step

    def recorded(self, model, optimizer, batch):
        out = step(self, model, optimizer, batch)
        losses.append(out[0])
        return out

    monkeypatch.setattr(GraphBatches, "train_step", recorded)
    detail = gpu_check.check_sync_free_step("cpu", tmp_path, modes=(False,))  # eager: fast
    checked = int(detail.split()[0])
    assert checked == 6  # 3 batches, AutoGCN and GCN
    assert all(loss.device.type == "cpu" and loss.ndim == 0 for loss in losses)
    assert len(set(float(loss) for loss in losses)) > 1  # the weights moved between steps
    assert not list(tmp_path.iterdir())  # its data went with it
    assert torch.is_grad_enabled()
