"""Human-readable report output: readable without colour, widest facts last."""

from __future__ import annotations

from collections import Counter

from stackcheck.identifiers import printable
from stackcheck.models.finding import VERDICTS, Report
from stackcheck.redaction import redact_value

MARK = {"ok": "ok     ", "warning": "WARNING", "blocked": "BLOCKED", "skipped": "skipped", "error": "ERROR  "}


def report_text(report: Report, *, verbose: bool = False) -> str:
    """Non-ok checks in full (observed / expected / fix); ok and skipped ones as one line each
    (only with ``verbose``); then a summary line."""
    report = redact_value(report)
    lines: list[str] = []
    head = f"{report.kind}"
    if report.profile:
        head += f" {report.profile}"
    env = report.environment.get("python") or ""
    lines.append(f"{head}: {report.verdict.upper()}" + (f"  ({env})" if env else ""))
    order = {"error": 0, "blocked": 1, "warning": 2, "ok": 3, "skipped": 4}
    for c in sorted(report.checks, key=lambda c: (order[c.verdict], c.id)):
        if c.verdict in ("ok", "skipped") and not verbose:
            continue
        label = c.title + (f" [{c.subject}]" if c.subject and c.subject not in c.title else "")
        if c.verdict == "ok":  # one line: what was seen, when it is short enough to help
            seen = f" — {c.observed}" if c.observed and len(c.observed) <= 70 else ""
            lines.append(f"  {MARK[c.verdict]} {c.id:<7} {label}{seen}")
            continue
        lines.append(f"  {MARK[c.verdict]} {c.id:<7} {label}")
        if c.verdict in ("skipped", "error") and c.reason:
            lines.append(f"            reason:   {c.reason}")
        if c.verdict == "skipped":
            continue
        if c.observed:
            lines.append(f"            observed: {c.observed}")
        if c.expected:
            lines.append(f"            expected: {c.expected}")
        if c.fix:
            lines.append(f"            fix:      {c.fix}")
    counts = Counter(c.verdict for c in report.checks)
    summary = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts[v])
    lines.append(f"  {summary or 'no checks ran'}" + ("" if verbose else "  (-v shows every check)"))
    # every fact may come from a recorded snapshot or a scanned file: one line each, no
    # escape sequence reaches the terminal (a command in a fix stays quoted: only control
    # characters change, to their visible escapes)
    return "\n".join(printable(line) for line in lines) + "\n"


def report_markdown(report: Report) -> str:
    report = redact_value(report)
    out = [f"## {report.kind} {report.profile or ''}: **{report.verdict}**", ""]
    out.append("| check | verdict | subject | observed | expected | fix |")
    out.append("|---|---|---|---|---|---|")
    esc = lambda s: printable((s or "").replace("|", "\\|").replace("\n", " "))  # noqa: E731
    for c in report.checks:
        out.append(
            f"| {c.id} {esc(c.title)} | {c.verdict} | {esc(c.subject)} | {esc(c.observed or c.reason)} | {esc(c.expected)} | {esc(c.fix)} |"
        )
    return "\n".join(out) + "\n"
