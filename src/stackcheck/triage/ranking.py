"""Ranking matches: specificity of what matched, the rule's confidence, and whether the
environment agrees.

score = specificity (0–40) + confidence (high 30 / medium 20 / low 10) + environment
(+25 agrees, 0 unknown, −25 contradicts). Specificity is the literal length of the most
specific signature that matched (a quarter point per character, at most 30) plus 5 for each
further signature of the same rule that matched (at most 10). The confidence shown moves one
step up when the environment agrees and one step down when it contradicts.
"""

from __future__ import annotations

from stackcheck.models.rule import Rule, Scope
from stackcheck.models.snapshot import Snapshot
from stackcheck.requirements import DistIndex
from stackcheck.triage.evidence import AGREES, CONTRADICTS, UNKNOWN, Reading
from stackcheck.triage.signatures import Signature

CONFIDENCE_POINTS = {"high": 30, "medium": 20, "low": 10}
ENVIRONMENT_POINTS = {AGREES: 25, UNKNOWN: 0, CONTRADICTS: -25}
_LEVELS = ("low", "medium", "high")
_VERDICT_WORDS = {AGREES: "agrees", UNKNOWN: "unknown", CONTRADICTS: "contradicts"}


def specificity_points(signatures: list[Signature]) -> float:
    best = max(s.specificity for s in signatures)
    return min(best / 4, 30.0) + min(5.0 * (len({s.index for s in signatures}) - 1), 10.0)


def shifted_confidence(confidence: str, agreement: int) -> str:
    i = _LEVELS.index(confidence) + agreement
    return _LEVELS[max(0, min(i, len(_LEVELS) - 1))]


def scope_verdict(
    rule: Rule, snapshot: Snapshot, knowledge, index: DistIndex | None = None
) -> tuple[int, list[str]]:
    """What the rule's scope says about this environment: agrees / contradicts / unknown."""
    if knowledge is None or rule.scope == Scope():  # an empty scope: a triage-only rule
        return UNKNOWN, []
    from stackcheck.knowledge.scope import evaluate

    try:
        result = evaluate(rule.scope, snapshot, knowledge, index)
    except ValueError as exc:  # a bad specifier in a rule must not sink the diagnosis
        return UNKNOWN, [f"environment: scope of {rule.id} could not be evaluated ({exc})"]
    if result.matches:
        return AGREES, [f"environment agrees: {e}" for e in result.evidence]
    if result.applicable:
        why = "; ".join(m for m in result.missing if m) or "its conditions do not hold"
        return CONTRADICTS, [f"environment contradicts: {why}"]
    return UNKNOWN, [
        f"environment could not judge: {', '.join(result.missing)} unknown"
    ] if result.missing else []


def environment_verdict(
    rule: Rule, snapshot: Snapshot | None, knowledge, reading: Reading, index: DistIndex | None = None
) -> tuple[str, int, list[str]]:
    """(word, agreement, evidence) combining the scope and the interpreters' readings."""
    if snapshot is None:
        return "not-judged", UNKNOWN, []
    agreement, evidence = scope_verdict(rule, snapshot, knowledge, index)
    if CONTRADICTS in (agreement, reading.agreement):
        combined = CONTRADICTS
    elif AGREES in (agreement, reading.agreement):
        combined = AGREES
    else:
        combined = UNKNOWN
    return _VERDICT_WORDS[combined], combined, evidence


def score(rule: Rule, signatures: list[Signature], agreement: int) -> float:
    return round(
        specificity_points(signatures) + CONFIDENCE_POINTS[rule.confidence] + ENVIRONMENT_POINTS[agreement], 2
    )
