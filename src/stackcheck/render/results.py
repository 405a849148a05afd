"""Text output of the results ledger's commands (``results record``, ``validate``, ``list``,
``show``, ``diff``, ``promote``, ``decide``, ``assets``, ``reindex``).

Labels, topics and texts of records written before the identifier rule (or by hand) may hold
newlines and escape sequences: every line built from them goes through ``printable``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from stackcheck.identifiers import printable
from stackcheck.models.result import Event, ResultRecord, WorkloadIdentity
from stackcheck.models.result_diff import Diff, covered


class StoredView(Protocol):
    """What the text reads of a :class:`stackcheck.results.ledger.Stored` (above ``render``)."""

    @property
    def id(self) -> str: ...

    @property
    def path(self) -> str: ...

    @property
    def candidate(self) -> str: ...

    @property
    def evidence(self) -> str: ...


class EntryView(Protocol):
    """What the text reads of a :class:`stackcheck.results.ledger.Entry` (above ``render``)."""

    @property
    def record(self) -> ResultRecord: ...

    @property
    def level(self) -> str: ...

    @property
    def flags(self) -> Sequence[Event]: ...

    def stored(self) -> StoredView: ...


class FileReportView(Protocol):
    """What the text reads of a :class:`stackcheck.results.validation.FileReport`."""

    @property
    def path(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def valid(self) -> bool: ...

    @property
    def unreadable(self) -> bool: ...

    @property
    def problems(self) -> Sequence[str]: ...


class AssetRowView(Protocol):
    """What the table reads of a :class:`stackcheck.results.assets.AssetRow`."""

    @property
    def run_label(self) -> str: ...

    @property
    def topic(self) -> str: ...

    @property
    def path(self) -> str: ...

    @property
    def evidence(self) -> str: ...

    @property
    def decision(self) -> str: ...


ASSET_COLUMNS = ("RUN_LABEL", "topic", "result path", "evidence level", "current decision")


def _lines(lines: Iterable[str]) -> str:
    return "\n".join(printable(line) for line in lines)


def recorded_text(stored: StoredView, record: ResultRecord, runs: int) -> str:
    """``results record``: where the record went, its candidate's run count, its preflight."""
    s, prof = stored, record.profile
    failing = f" ({', '.join(prof.failing_checks)})" if prof.failing_checks else ""
    return "\n".join(
        [
            f"recorded {s.id} ({s.evidence}) at {s.path}",
            f"candidate {s.candidate}: "
            + ("new candidate" if runs == 1 else f"run {runs} of this candidate"),
            f"profile {prof.id}: preflight {prof.verdict}{failing}",
        ]
    )


def flags_text(flags: Iterable[Event]) -> str:
    """The earlier records a new run did not reproduce, one line each ("" for none)."""
    return _lines(f"flagged earlier record {flag.record_id[:16]}: {flag.text}" for flag in flags)


def validation_text(reports: Sequence[FileReportView], root: Path) -> str:
    """``results validate``: one line per file, its problems indented below it."""
    lines = []
    for r in reports:
        state = "ok" if r.valid else "unreadable" if r.unreadable else "invalid"
        lines.append(f"{r.path}: {state}" + (f" ({r.kind})" if r.kind != "unknown" else ""))
        lines.extend(f"  {p}" for p in r.problems)
    if not reports:
        return f"no records in the ledger at {root}"
    return _lines(lines)


def listing_text(entries: Sequence[EntryView], topic: str | None, root: Path) -> str:
    """``results list``: one line per record, oldest first."""
    if not entries:
        return f"no records{f' for topic {topic}' if topic else ''} in the ledger at {root}"
    lines = []
    for e in entries:
        r = e.record
        flag = "  FLAGGED" if e.flags else ""
        lines.append(
            f"{e.stored().id}  {r.created_at[:19]}  {e.level:<10} {r.status:<6} {r.topic}  {r.run_label}"
            + flag
        )
    return _lines(lines)


def record_text(rec: ResultRecord, entry: EntryView, path: Path, hardware: str) -> str:
    """``results show``: one record (already redacted), ``hardware`` the line naming its machine."""
    m, b, w = rec.model, rec.backend, rec.workload
    thinking = f" ({m.thinking_source})" if m.thinking_source else ""
    lines = [
        f"record     {entry.stored().id}  ({path})",
        f"topic      {rec.topic}   run label {rec.run_label}",
        f"evidence   {entry.level} (claimed {rec.evidence} at record time)   status {rec.status}"
        + (f": {rec.failure_reason}" if rec.failure_reason else ""),
        f"candidate  {entry.stored().candidate}",
        f"model      {m.id}@{m.revision[:12] or '(unpinned)'} dtype {m.dtype or '?'} quant {m.quantization}"
        f" thinking {m.thinking}{thinking}",
        f"backend    {b.name} {b.version} args {b.args or '{}'}" + (f" build {b.build}" if b.build else ""),
        f"workload   {_workload(w)}",
        f"profile    {rec.profile.id}: preflight {rec.profile.verdict}   scope {rec.scope}",
        f"hardware   {hardware}   snapshot {rec.snapshot_digest[:23]}…",
        f"git        {rec.git.commit[:12] or '(none)'}" + (" dirty" if rec.git.dirty else ""),
        "metrics:",
    ]
    for name, metric in sorted(rec.metrics.items()):
        disp = metric.dispersion
        spread = f"  n={disp.n} sd={disp.stdev:g} cv={disp.cv:.1%}" if disp else ""
        lines.append(f"  {name} = {metric.value:g} {metric.unit}{spread}")
    for a in rec.artifacts:
        lines.append(f"artifact   {a.kind}: {a.path} sha256 {a.sha256[:16]}…")
    for f in entry.flags:
        lines.append(f"FLAGGED    {f.text}")
    return _lines(lines)


def _workload(w: WorkloadIdentity) -> str:
    """``inference, samples 200, seed 0 (not recorded: concurrency, tokens)``: no "None"."""

    def shown(n: int | None) -> object:
        return "?" if n is None else n

    tokens = (
        None
        if w.input_tokens is None and w.output_tokens is None
        else f"{shown(w.input_tokens)}/{shown(w.output_tokens)}"
    )
    facts = {"samples": w.samples, "concurrency": w.concurrency, "tokens": tokens, "seed": w.seed}
    known = [f"{k} {v}" for k, v in facts.items() if v is not None]
    unknown = [k for k, v in facts.items() if v is None]
    return ", ".join([w.kind, *known]) + (f" (not recorded: {', '.join(unknown)})" if unknown else "")


def promoted_text(event: Event, level: str) -> str:
    """``results promote``: the record, the level reached and the event that holds the proof."""
    return f"promoted {event.record_id[:16]} to {level} (event {event.digest.partition(':')[2][:16]})"


def decision_text(short_id: str, topic: str, run_label: str, text: str) -> str:
    """``results decide``: the decision event just written."""
    return _lines([f"decision {short_id} recorded: {topic} → {run_label}: {text}"])


def assets_markdown(rows: Iterable[AssetRowView]) -> str:
    """``results assets``: the experiment-assets table, one row per (topic, run label)."""
    lines = ["| " + " | ".join(ASSET_COLUMNS) + " |", "|" + "---|" * len(ASSET_COLUMNS)]
    for r in rows:
        cells = (r.run_label, r.topic, f"`{r.path}`", r.evidence, r.decision or "—")
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return printable(text.replace("|", "\\|").replace("\n", " "))


def reindex_text(counts: Mapping[str, int]) -> str:
    """``results reindex``: what the rebuilt index holds."""
    return f"indexed {counts['records']} records and {counts['events']} events; skipped {counts['skipped']}"


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
