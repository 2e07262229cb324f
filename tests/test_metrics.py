"""SBM loss weights and both SBM accuracies against direct computations."""

import torch

from train import tasks as M


def one_hot_scores(pred: list[int], num_classes: int) -> torch.Tensor:
    return torch.nn.functional.one_hot(torch.tensor(pred), num_classes).float()


def test_sbm_class_weights_follow_the_formula():
    labels = torch.tensor([0, 0, 0, 2, 2, 3])
    w = M.sbm_class_weights(labels, 5)
    V = 6
    expected = [(V - 3) / V, 0.0, (V - 2) / V, (V - 1) / V, 0.0]  # absent classes weigh 0
    torch.testing.assert_close(w, torch.tensor(expected))


def test_weighted_cross_entropy_equals_manual_sum():
    torch.manual_seed(0)
    scores = torch.randn(10, 3)
    labels = torch.tensor([0, 0, 0, 0, 1, 1, 0, 0, 1, 0])
    w = M.sbm_class_weights(labels, 3)
    logp = torch.log_softmax(scores, 1)
    manual = -sum(w[y] * logp[i, y] for i, y in enumerate(labels)) / sum(w[y] for y in labels)
    torch.testing.assert_close(M.sbm_weighted_cross_entropy(scores, labels), manual)


def test_per_class_accuracy_is_mean_recall():
    labels = torch.tensor([0, 0, 0, 0, 1, 1, 2, 2])
    pred = [0, 0, 1, 1, 1, 0, 2, 2]
    recalls = [2 / 4, 1 / 2, 2 / 2]
    assert abs(M.sbm_accuracy_per_class(one_hot_scores(pred, 3), labels)
               - sum(recalls) / 3) < 1e-6


def test_release_accuracy_rewards_a_constant_predictor():
    labels = torch.tensor([0, 0, 1, 1, 2, 2])
    constant = one_hot_scores([1] * 6, 3)
    assert M.sbm_accuracy_release(constant, labels) == 1.0  # the release's definition
    assert abs(M.sbm_accuracy_per_class(constant, labels) - 1 / 3) < 1e-6  # the corrected one
    pred = [0, 1, 1, 1, 0, 0]  # class 2 never right: release divides by 2 classes, not 3
    assert abs(M.sbm_accuracy_release(one_hot_scores(pred, 3), labels) - (0.5 + 1.0) / 2) < 1e-6


def test_mae_and_accuracy():
    assert abs(M.mae(torch.tensor([[1.0], [2.0]]), torch.tensor([0.5, 3.0])) - 0.75) < 1e-6
    assert abs(M.accuracy(one_hot_scores([1, 0, 1], 2), torch.tensor([1, 1, 1])) - 2 / 3) < 1e-6
