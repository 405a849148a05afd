"""The summary rows of a rule file's mined rules (printed by :mod:`stackcheck.render.mining`)."""

from __future__ import annotations

from stackcheck.models.mining import SummaryRow
from stackcheck.models.rule import Rule

__all__ = ["rows_of"]


def rows_of(rules: list[Rule]) -> list[SummaryRow]:
    """The summary rows of mined rules read back from a rule file."""
    out = []
    for r in rules:
        m = r.mined
        if m is None:
            continue
        out.append(
            SummaryRow(
                id=r.id,
                title=r.title,
                coverage=m.coverage,
                support=m.support,
                failure_rate=m.failure_rate,
                wilson_lower=m.wilson_lower,
                attempts=m.attempts,
                reproducibility=m.reproducibility,
                false_positive_rate=m.false_positive_rate,
                scope=m.env_scope,
                separated=m.separated,
                tests=m.tests,
            )
        )
    return out
