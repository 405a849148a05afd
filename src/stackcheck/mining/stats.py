"""How reliably a failure reproduces: the Wilson score interval of a failure rate.

With ``k`` failures in ``n`` attempts, the rate's lower bound at confidence ``c`` is the lower
end of the Wilson interval. A signature is *reproducible* in a scope when that bound reaches
:data:`REPRODUCIBLE` (0.85); every attempt failing is not enough on its own: at 95 % the bound
of n/n first reaches 0.85 at n = 22 (:func:`min_attempts`).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stackcheck.models.rule import Reproducibility

__all__ = ["REPRODUCIBLE", "min_attempts", "reproducibility", "wilson_lower", "z_of"]

REPRODUCIBLE = 0.85


def z_of(confidence: float) -> float:
    """The two-sided normal quantile of a confidence level (0.95 → 1.96)."""
    if not 0.5 <= confidence < 1:
        raise ValueError(f"confidence must be in [0.5, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_lower(failures: int, attempts: int, confidence: float = 0.95) -> float:
    """Lower bound of the Wilson score interval of ``failures / attempts`` (0 with no attempts)."""
    if attempts <= 0:
        return 0.0
    z = z_of(confidence)
    p = failures / attempts
    z2 = z * z
    centre = p + z2 / (2 * attempts)
    spread = z * math.sqrt(p * (1 - p) / attempts + z2 / (4 * attempts * attempts))
    return max(0.0, (centre - spread) / (1 + z2 / attempts))


def min_attempts(target: float = REPRODUCIBLE, confidence: float = 0.95) -> int:
    """The fewest attempts with which the lower bound can reach ``target`` (all of them failing):
    n / (n + z²) >= target."""
    z2 = z_of(confidence) ** 2
    return math.ceil(target * z2 / (1 - target) - 1e-9)


def reproducibility(
    failures: int, attempts: int, confidence: float = 0.95, target: float = REPRODUCIBLE
) -> Reproducibility:
    """``reproducible`` when the lower bound reaches ``target``; ``unconfirmed`` when every
    attempt failed but there were too few to tell; else ``flaky``."""
    if wilson_lower(failures, attempts, confidence) >= target:
        return "reproducible"
    if failures == attempts and attempts < min_attempts(target, confidence):
        return "unconfirmed"
    return "flaky"
