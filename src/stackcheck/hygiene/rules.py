"""The hygiene rules: stable IDs, what each looks for, how bad it is, how to fix it. The
table itself is :data:`stackcheck.checks.external_docs.HYGIENE_RULES` (``stackcheck explain``
documents the same rules from there).

A hygiene finding is a :class:`~stackcheck.models.finding.CheckResult` like any preflight
verdict, so the same renderers, JSON shape and exit codes apply.
"""

from __future__ import annotations

from stackcheck.checks.external_docs import HYGIENE_RULES as RULES
from stackcheck.checks.external_docs import HygieneRule as Rule
from stackcheck.models.finding import CheckResult, Verdict

__all__ = ["RULES", "Rule", "finding"]


def finding(
    rule_id: str,
    path: str,
    observed: str,
    fix: str,
    *,
    where: str | None = None,
    verdict: Verdict | None = None,
    evidence: dict[str, str] | None = None,
) -> CheckResult:
    """One finding of ``rule_id`` about ``path`` (``where``: "line 3", "cell 2 output" …)."""
    rule = RULES[rule_id]
    ev = {"file": path, **(evidence or {})}
    return CheckResult(
        id=rule_id,
        title=rule.title,
        verdict=verdict or rule.verdict,
        observed=observed,
        expected=rule.expected,
        fix=fix,
        subject=f"{path} {where}" if where else path,
        evidence=ev,
    )
