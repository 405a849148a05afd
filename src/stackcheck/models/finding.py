"""Findings and reports: what every check and every judging command returns."""

from __future__ import annotations

from typing import Literal

import msgspec

REPORT_SCHEMA_VERSION = "1.0"

Verdict = Literal["ok", "warning", "blocked", "skipped"]

# Order of severity; "skipped" never makes a report worse than "ok".
_SEVERITY = {"skipped": 0, "ok": 0, "warning": 1, "blocked": 2}


class CheckResult(msgspec.Struct, kw_only=True):
    """One verdict of one check about one subject."""

    id: str  # stable check ID, e.g. "PKG001"
    title: str
    verdict: Verdict
    observed: str = ""
    expected: str = ""
    fix: str | None = None  # a command or action a user can paste / follow
    subject: str | None = None  # what the verdict is about (package, GPU index …) when a check has many
    reason: str | None = None  # why it was skipped
    category: str | None = None  # knowledge-rule category, where one applies
    evidence: dict[str, str] = {}


class Report(msgspec.Struct, kw_only=True):
    """The document ``preflight``, ``doctor`` and ``accept`` print with ``--json``."""

    schema_version: str = REPORT_SCHEMA_VERSION
    kind: str = "preflight"  # preflight | doctor | accept
    profile: str | None = None
    verdict: Verdict = "ok"
    checks: list[CheckResult] = []
    snapshot_digest: str = ""
    environment: dict[str, str] = {}  # interpreter checked, where the facts came from


def worst(verdicts) -> Verdict:
    """The report verdict: the worst of its checks (an all-skipped report is ``ok``)."""
    result: Verdict = "ok"
    for v in verdicts:
        if _SEVERITY[v] > _SEVERITY[result]:
            result = v
    return result


def exit_code(verdict: Verdict, strict: bool = False) -> int:
    """DESIGN.md exit codes: 1 when blocked (or warning under ``--strict``), else 0."""
    if verdict == "blocked" or (strict and verdict == "warning"):
        return 1
    return 0
