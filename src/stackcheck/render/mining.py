"""The table a maintainer reads: rule, coverage, how reliably it reproduces, false positives,
scope — as text or Markdown (``--json`` prints the rows themselves)."""

from __future__ import annotations

from stackcheck.identifiers import printable
from stackcheck.models.mining import MinedRules, SummaryRow

__all__ = ["summary_markdown", "summary_text"]

_HEAD = ("rule", "coverage", "reproduces", "false pos.", "scope")


def _cells(row: SummaryRow) -> tuple[str, ...]:
    reproduces = f"{row.failure_rate:.0%} of {row.attempts} (≥{row.wilson_lower:.2f}) {row.reproducibility}"
    scope = row.scope if row.separated else f"none: {row.scope.split(':', 1)[0]}"
    return (
        row.id,
        f"{row.coverage:.0%} ({row.support})",
        reproduces,
        f"{row.false_positive_rate:.0%}",
        printable(scope),
    )


def summary_text(rows: list[SummaryRow], mined: MinedRules | None = None) -> str:
    lines = []
    if mined is not None:
        lines.append(
            f"{len(rows)} rule(s) from {mined.jobs} job(s) of {mined.runs} run(s) in {mined.store}: "
            f"{mined.failed_jobs} failed, {mined.passing_jobs} passed; the rules explain "
            f"{mined.coverage:.0%} of the failed jobs"
        )
        lines.append("")
    table = [_HEAD, *(_cells(r) for r in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(_HEAD) - 1)]
    for row in table:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])
    for r in rows:
        lines.append(f"  {r.id}: {printable(r.title)}" + (f"  [{', '.join(r.tests[:3])}]" if r.tests else ""))
    if mined is not None and mined.dropped:
        lines.append(f"{len(mined.dropped)} signature(s) did not become rules (see --json: dropped)")
    if mined is not None:
        for a, b, cos in mined.merge_suggestions[:10]:
            lines.append(f"suggested merge: {a} ~ {b} (similarity {cos})")
    return "\n".join(lines)


def summary_markdown(rows: list[SummaryRow]) -> str:
    def esc(text: str) -> str:
        return printable(text).replace("|", "\\|")

    lines = ["| " + " | ".join(_HEAD) + " | title |", "|" + "---|" * (len(_HEAD) + 1)]
    for r in rows:
        lines.append("| " + " | ".join(esc(c) for c in (*_cells(r), r.title)) + " |")
    return "\n".join(lines)
