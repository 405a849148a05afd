"""Knowledge rules as checks: every curated or mined rule with a scope becomes check ``KBnnn``.

The rule's scope is evaluated on the snapshot, so preflight warns *before* the error the
rule's signatures describe. Rules without a scope (triage-only) and rules whose scope a
dedicated check judges (``checked_by``) register for ``explain`` only: they run nowhere.
"""

from __future__ import annotations

from collections.abc import Iterator

from stackcheck.checks.registry import (
    DOCTOR,
    PREFLIGHT,
    CheckSpec,
    Outcome,
    blocked,
    ok,
    provider,
    skipped,
    warning,
)
from stackcheck.models.rule import Rule, Scope


@provider
def knowledge_rule_checks() -> Iterator[CheckSpec]:
    from stackcheck.knowledge import load_knowledge

    for rule in load_knowledge().rules:
        judged_here = bool(scope_conditions(rule.scope)) and not rule.checked_by
        yield CheckSpec(
            id=rule.id,
            title=rule.title,
            explain=explain_text(rule),
            run=_runner(rule),
            commands=frozenset({PREFLIGHT, DOCTOR}) if judged_here else frozenset(),
            needs_profile=False,
            sources=tuple(rule.sources),
        )


def _runner(rule: Rule):
    def run(ctx) -> Iterator[Outcome]:
        from stackcheck.knowledge.scope import evaluate

        m = evaluate(rule.scope, ctx.snapshot, ctx.knowledge, ctx.dist_index)
        if m.matches:
            # a match resting on an unverified table fact warns, never blocks
            verdict = blocked if rule.severity == "blocked" and not m.unverified else warning
            fix = rule.fix
            if m.suggest:
                fix = f"{fix} Command: {ctx.pip_install(*m.suggest)}"
            unverified = f" [unverified fact: {'; '.join(m.unverified)}]" if m.unverified else ""
            yield verdict(
                "; ".join(m.evidence) + unverified,
                "; ".join(m.expected)
                or rule.expected
                or f"not this combination: {describe_scope(rule.scope)}",
                fix,
                category=rule.category,
                evidence={"rule": rule.id, "confidence": rule.confidence, "origin": rule.origin},
            )
        elif not m.applicable:
            yield skipped(m.reason)
        else:
            yield ok(f"not affected ({m.reason})" if m.missing else "not affected", category=rule.category)

    return run


def scope_conditions(scope: Scope) -> dict[str, object]:
    """The conditions a scope sets (field → value), in declaration order."""
    return {f: getattr(scope, f) for f in scope.__struct_fields__ if getattr(scope, f)}


def describe_scope(scope: Scope) -> str:
    parts = []
    for name, value in scope_conditions(scope).items():
        if isinstance(value, list):
            value = ", ".join(value)
        if name == "predicate":
            parts.append(f"{predicate_doc(value)} [{value}]")
        else:
            parts.append("GPU present" if name == "requires_gpu" else f"{name.replace('_', ' ')} {value}")
    return "; ".join(parts) or "no scope (triage only)"


def explain_text(rule: Rule) -> str:
    """What ``stackcheck explain KBnnn`` prints: what, why, fix, where it applies, severity."""
    lines = [rule.explanation, "", f"Fix: {rule.fix}", "", f"Applies when: {describe_scope(rule.scope)}"]
    if rule.checked_by:
        lines.append(f"Judged in preflight and doctor by {rule.checked_by}.")
    if rule.signatures:
        lines.append("Error texts it explains (RE2): " + " | ".join(rule.signatures))
    lines.append(
        f"Severity: {rule.severity}; confidence: {rule.confidence}; category: {rule.category}; "
        f"origin: {rule.origin}"
    )
    return "\n".join(lines)  # the sources travel as CheckSpec.sources; explain lists them


def predicate_doc(text: str) -> str:
    """The first sentence of a named predicate's docstring, in plain words."""
    from stackcheck.knowledge.predicates import PREDICATES, predicate_name

    doc = (PREDICATES[predicate_name(text)].__doc__ or "").replace("``", "")
    return " ".join(doc.split()).split(". ")[0].rstrip(".") or text
