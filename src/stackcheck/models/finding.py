"""Findings and reports: what every check and every judging command returns."""

from __future__ import annotations

from typing import Literal

import msgspec

REPORT_SCHEMA_VERSION = "1.0"

Verdict = Literal["ok", "warning", "blocked", "skipped"]

# Order of severity; "skipped" never makes a report worse than "ok".
_SEVERITY = {"skipped": 0, "ok": 0, "warning": 1, "blocked": 2}


class PipInstall(msgspec.Struct, kw_only=True):
    """A fix that is one ``pip install``: what a report's ``fix_all`` merges with the others."""

    python: str  # the checked interpreter
    requirements: list[str]  # as pip takes them, e.g. "torch<3,>=2.6"
    index_url: str | None = None  # None: the default index (PyPI)
    options: list[str] = []  # e.g. ["--force-reinstall"]


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
    install: PipInstall | None = None  # when the fix is a pip install (merged into Report.fix_all)
    consequence_of: str | None = None  # the check ID whose finding explains this one: fix that first


class Report(msgspec.Struct, kw_only=True):
    """The document ``preflight``, ``doctor`` and ``accept`` print with ``--json``."""

    schema_version: str = REPORT_SCHEMA_VERSION
    kind: str = "preflight"  # preflight | doctor | accept
    profile: str | None = None
    verdict: Verdict = "ok"
    checks: list[CheckResult] = []
    snapshot_digest: str = ""
    environment: dict[str, str] = {}  # interpreter checked, where the facts came from
    # every pip fix of the findings that are not consequences, merged: one command per index
    fix_all: list[str] = []


_ORDER = {"blocked": 0, "warning": 1, "ok": 2, "skipped": 3}


def by_severity_then_cause(checks: list[CheckResult]) -> list[CheckResult]:
    """Findings in reading order: blocked, warning, ok, skipped; within each, causes before
    their consequences, then by check ID (stable for equal IDs)."""
    return sorted(checks, key=lambda c: (_ORDER[c.verdict], c.consequence_of is not None, c.id))


def fixable(checks: list[CheckResult]) -> list[CheckResult]:
    """The findings whose pip fixes ``fix_all`` combines: non-ok, not a consequence of another."""
    return [c for c in checks
            if c.install is not None and c.verdict in ("warning", "blocked") and not c.consequence_of]


def severity(verdict: Verdict) -> int:
    """0 for ok and skipped, 1 for warning, 2 for blocked."""
    return _SEVERITY[verdict]


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
