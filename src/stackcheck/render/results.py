"""Text output of the results ledger's commands (``results diff``)."""

from __future__ import annotations

from typing import Any

from stackcheck.identifiers import printable
from stackcheck.models.result_diff import Diff, covered

PACKAGE_LINES = 15  # package changes listed before "… and N more"


def diff_text(d: Diff) -> str:
    """One screen: identity, environment, metrics, then the comparability verdict."""
    lines = [f"results diff {d.a} → {d.b}", ""]
    lines.append("identity:" if d.identity else "identity: same")
    for c in d.identity:
        mark = "  (under test)" if covered(c.field, d.varying) else ""
        lines.append(f"  {c.field}: {_fmt(c.a)} → {_fmt(c.b)}{mark}")
    env = [c for c in d.environment if not c.field.startswith("package.")]
    pkgs = [c for c in d.environment if c.field.startswith("package.")]
    lines.append("environment:" if d.environment else "environment: same")
    for c in env:
        lines.append(f"  {c.field}: {_fmt(c.a)} → {_fmt(c.b)}")
    if pkgs:
        lines.append(f"  packages ({len(pkgs)} differ):")
        for c in pkgs[:PACKAGE_LINES]:
            lines.append(f"    {c.field.removeprefix('package.')}: {_fmt(c.a)} → {_fmt(c.b)}")
        if len(pkgs) > PACKAGE_LINES:
            lines.append(f"    … and {len(pkgs) - PACKAGE_LINES} more (--json lists all)")
    lines.append("metrics:")
    for m in d.metrics:
        rel = f"  ({m.relative:+.1%})" if m.relative is not None else ""
        cv = f"  cv {_pct(m.a_cv)} → {_pct(m.b_cv)}" if m.a_cv is not None or m.b_cv is not None else ""
        lines.append(f"  {m.name}: {_fmt(m.a)} → {_fmt(m.b)} {m.unit}{rel}{cv}")
    lines.append("")
    if d.comparable:
        under = f" (varying: {', '.join(d.varying)})" if d.varying else ""
        lines.append(f"verdict: comparable{under}")
    else:
        besides = (
            "besides the variable under test" if d.varying else "and none is named as the variable under test"
        )
        lines.append(f"verdict: NOT comparable; these differ {besides}:")
        lines.extend(f"  - {f}" for f in d.blocking)
        lines.append(
            "  name the variable under test with --varying FIELD, or compare runs that differ only in it"
        )
    for v in d.unused_varying:
        lines.append(f"note: --varying {v} does not differ between the two results")
    return "\n".join(printable(line) for line in lines)  # values of hand-written records stay on their line


def _fmt(value: Any) -> str:
    if value is None or value == "":
        return "(none)"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _pct(value: float | None) -> str:
    return "?" if value is None else f"{value:.1%}"
