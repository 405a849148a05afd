"""Human-readable report output: readable without colour (painted verdict words only when
asked), widest facts last."""

from __future__ import annotations

from collections import Counter

from stackcheck.identifiers import printable
from stackcheck.models.finding import VERDICTS, Report, by_severity_then_cause, fixable
from stackcheck.redaction import redact_value
from stackcheck.render.color import paint

MARK = {"ok": "ok     ", "warning": "WARNING", "blocked": "BLOCKED", "skipped": "skipped", "error": "ERROR  "}


def report_text(report: Report, *, verbose: bool = False, color: bool = False) -> str:
    """Non-ok checks in full (observed / expected / fix); ok and skipped ones as one line each
    (only with ``verbose``); then a summary line. ``color`` paints the verdict words."""
    report = redact_value(report)
    lines: list[str] = []
    words: dict[int, tuple[int, int, str]] = {}  # line → (start, end, verdict) of its verdict word
    head = f"{report.kind}"
    if report.profile:
        head += f" {report.profile}"
    env = report.environment.get("python") or ""
    lines.append(f"{head}: {report.verdict.upper()}" + (f"  ({env})" if env else ""))
    start = len(printable(f"{head}: "))
    words[0] = (start, start + len(report.verdict), report.verdict)
    for c in by_severity_then_cause(report.checks):
        if c.verdict in ("ok", "skipped") and not verbose:
            continue
        label = c.title + (f" [{c.subject}]" if c.subject and c.subject not in c.title else "")
        if c.consequence_of:
            label += f"  ({_follows(c)})"
        if c.verdict == "ok":  # one line: what was seen, when it is short enough to help
            seen = f" — {c.observed}" if c.observed and len(c.observed) <= 70 else ""
            words[len(lines)] = (2, 2 + len(MARK[c.verdict]), c.verdict)
            lines.append(f"  {MARK[c.verdict]} {c.id:<7} {label}{seen}")
            continue
        words[len(lines)] = (2, 2 + len(MARK[c.verdict]), c.verdict)
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
    for n, cmd in enumerate(fix_all(report)):
        lines.append(("  fix all:  " if n == 0 else " " * 12) + cmd)
    # every fact may come from a recorded snapshot or a scanned file: one line each, no
    # escape sequence reaches the terminal (a command in a fix stays quoted: only control
    # characters change, to their visible escapes); colour comes after, from us only
    shown = [printable(line) for line in lines]
    if color:
        for i, (a, b, verdict) in words.items():
            shown[i] = shown[i][:a] + paint(shown[i][a:b], verdict) + shown[i][b:]
    return "\n".join(shown) + "\n"


def _follows(c) -> str:
    return f"follows from {c.consequence_of}"


def fix_all(report: Report) -> list[str]:
    """The combined install lines worth printing: when they merge the fixes of two or more
    findings (a single fix is already shown with its finding)."""
    return report.fix_all if len(fixable(report.checks)) >= 2 else []


def report_markdown(report: Report) -> str:
    report = redact_value(report)
    out = [f"## {report.kind} {report.profile or ''}: **{report.verdict}**", ""]
    out.append("| check | verdict | subject | observed | expected | fix |")
    out.append("|---|---|---|---|---|---|")
    esc = lambda s: printable((s or "").replace("|", "\\|").replace("\n", " "))  # noqa: E731
    for c in by_severity_then_cause(report.checks):
        verdict = c.verdict + (f" ({_follows(c)})" if c.consequence_of else "")
        cells = (
            f"{c.id} {esc(c.title)}",
            verdict,
            esc(c.subject),
            esc(c.observed or c.reason),
            esc(c.expected),
            esc(c.fix),
        )
        out.append("| " + " | ".join(cells) + " |")
    commands = fix_all(report)
    if commands:
        out += [
            "",
            "**Fix all** (one command per package index):",
            "",
            "```sh",
            *map(printable, commands),
            "```",
        ]
    return "\n".join(out) + "\n"
