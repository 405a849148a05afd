"""What ``mine rules`` produces besides the rules: the summary table's rows, the signatures that
did not become rules, the counts (built by :mod:`stackcheck.mining.rules`, printed by
:mod:`stackcheck.render.mining`)."""

from __future__ import annotations

import msgspec

from stackcheck.models.rule import RuleSet


class SummaryRow(msgspec.Struct, kw_only=True):
    """One line of the table a maintainer reads."""

    id: str
    title: str
    coverage: float
    support: int
    failure_rate: float
    wilson_lower: float
    attempts: int
    reproducibility: str
    false_positive_rate: float
    scope: str
    separated: bool
    tests: list[str] = []


class Dropped(msgspec.Struct, kw_only=True):
    signature: str
    template: str
    reason: str


class MinedRules(msgspec.Struct, kw_only=True):
    """What ``mine rules`` produced: the rule set, its table, and what did not become a rule."""

    store: str
    jobs: int
    failed_jobs: int
    passing_jobs: int
    runs: int
    coverage: float  # share of failed jobs at least one rule explains
    rules: RuleSet
    summary: list[SummaryRow] = []
    dropped: list[Dropped] = []
    merge_suggestions: list[list[str]] = []  # [rule ID, rule ID, cosine]
