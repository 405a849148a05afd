"""Findings and reports: what every check and every judging command returns."""

from __future__ import annotations

from typing import Literal

import msgspec

from stackcheck.models.fleet import FleetInfo

REPORT_SCHEMA_VERSION = "1.0"

# "error": the check itself failed (a stackcheck bug), so nothing was shown to be fine: the
# report fails closed, worse than "blocked", with the exception in ``reason``.
Verdict = Literal["ok", "warning", "blocked", "skipped", "error"]
VERDICTS: tuple[str, ...] = ("ok", "warning", "blocked", "error", "skipped")  # display order of counts

# Order of severity; "skipped" never makes a report worse than "ok".
_SEVERITY = {"skipped": 0, "ok": 0, "warning": 1, "blocked": 2, "error": 3}

BUG_REPORT = "please report it to the stackcheck maintainers with the output of `stackcheck snapshot --json`"


class PipInstall(msgspec.Struct, kw_only=True):
    """A fix that is one ``pip install``: what a report's ``fix_all`` merges with the others."""

    python: str  # the checked interpreter
    requirements: list[str]  # as pip takes them, e.g. "torch<3,>=2.6"
    index_url: str | None = None  # None: the default index (PyPI)
    options: list[str] = []  # e.g. ["--force-reinstall"]
    externally_managed: bool = False  # PEP 668: printed as advice (a venv), never a pip command on it


class CheckResult(msgspec.Struct, kw_only=True):
    """One verdict of one check about one subject."""

    id: str  # stable check ID, e.g. "PKG001"
    title: str
    verdict: Verdict
    observed: str = ""
    expected: str = ""
    fix: str | None = None  # a command or action a user can paste / follow
    subject: str | None = None  # what the verdict is about (package, GPU index …) when a check has many
    reason: str | None = None  # why it was skipped, or the internal error (verdict "error")
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
    fleet: FleetInfo | None = None  # judged over several ranks (--distributed, fleet compare)


_ORDER = {"error": 0, "blocked": 1, "warning": 2, "ok": 3, "skipped": 4}


def by_severity_then_cause(checks: list[CheckResult]) -> list[CheckResult]:
    """Findings in reading order: error, blocked, warning, ok, skipped; within each, causes before
    their consequences, then by check ID (stable for equal IDs)."""
    return sorted(checks, key=lambda c: (_ORDER[c.verdict], c.consequence_of is not None, c.id))


def fixable(checks: list[CheckResult]) -> list[CheckResult]:
    """The findings whose pip fixes ``fix_all`` combines: non-ok, not a consequence of another."""
    return [
        c
        for c in checks
        if c.install is not None and c.verdict in ("warning", "blocked") and not c.consequence_of
    ]


def severity(verdict: Verdict) -> int:
    """0 for ok and skipped, 1 for warning, 2 for blocked."""
    return _SEVERITY[verdict]


def internal_error(exc: BaseException, where: str) -> str:
    """The ``reason`` of an ``error`` verdict: what raised, where, and whom to tell."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    if len(text) > 300:
        text = text[:299] + "…"
    return f"internal error in {where}: {type(exc).__name__}{': ' + text if text else ''}; {BUG_REPORT}"


def worst(verdicts) -> Verdict:
    """The report verdict: the worst of its checks (an all-skipped report is ``ok``; a check
    that crashed makes it ``error``)."""
    result: Verdict = "ok"
    for v in verdicts:
        if _SEVERITY[v] > _SEVERITY[result]:
            result = v
    return result


def exit_code(verdict: Verdict, strict: bool = False) -> int:
    """DESIGN.md exit codes: 1 when blocked or a check failed (or warning under ``--strict``), else 0."""
    if verdict in ("blocked", "error") or (strict and verdict == "warning"):
        return 1
    return 0
