"""Grouping metrics against ground truth: grouping accuracy (GA, Zhu et al. 2019), F1 of group
accuracy (FGA, Khan et al. 2022) and the adjusted Rand index (ARI, Hubert & Arabie 1985)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence

__all__ = ["adjusted_rand_index", "f1_group_accuracy", "grouping_accuracy"]


def _groups(labels: Sequence[Hashable]) -> set[frozenset[int]]:
    by: dict[Hashable, set[int]] = defaultdict(set)
    for i, label in enumerate(labels):
        by[label].add(i)
    return {frozenset(s) for s in by.values()}


def grouping_accuracy(predicted: Sequence[Hashable], truth: Sequence[Hashable]) -> float:
    """Share of items whose predicted group is exactly a true group."""
    if not truth:
        return 0.0
    true_groups = _groups(truth)
    return sum(len(g) for g in _groups(predicted) if g in true_groups) / len(truth)


def f1_group_accuracy(predicted: Sequence[Hashable], truth: Sequence[Hashable]) -> float:
    """Harmonic mean of the shares of predicted and of true groups that are found exactly."""
    pred, true = _groups(predicted), _groups(truth)
    correct = len(pred & true)
    if not correct:
        return 0.0
    p, r = correct / len(pred), correct / len(true)
    return 2 * p * r / (p + r)


def adjusted_rand_index(predicted: Sequence[Hashable], truth: Sequence[Hashable]) -> float:
    """Pair-counting agreement of two partitions, corrected for chance (1 = identical)."""
    n = len(truth)
    if n < 2:
        return 1.0
    comb = lambda k: k * (k - 1) / 2  # noqa: E731
    pairs = Counter(zip(predicted, truth))
    index = sum(comb(c) for c in pairs.values())
    a = sum(comb(c) for c in Counter(predicted).values())
    b = sum(comb(c) for c in Counter(truth).values())
    expected = a * b / comb(n)
    maximum = (a + b) / 2
    return 1.0 if maximum == expected else (index - expected) / (maximum - expected)
