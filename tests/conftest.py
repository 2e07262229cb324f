import torch


def pytest_configure(config):
    # Tests use tiny tensors: one thread avoids OpenMP oversubscription on shared machines.
    torch.set_num_threads(1)
