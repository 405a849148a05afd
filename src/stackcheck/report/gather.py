"""What the review page shows, gathered once: the profiles × environments matrix, the ledger
by topic, the measured metrics per backend, the mined rules and every file that could not be
trusted. Everything here is redacted before it is kept (secrets never reach the page).

The ledger's own logic does the work: :meth:`Ledger.entries` (effective levels, flags),
:func:`ladder.missing` (what a promotion still needs), :func:`compare.diff` and
:func:`render.results.diff_text` (the diff of two candidates), :func:`validate_ledger`
(corrupt and tampered files)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from stackcheck.models.finding import CheckResult, Report
from stackcheck.models.mining import SummaryRow
from stackcheck.models.snapshot import Snapshot
from stackcheck.redaction import redact_text, redact_value
from stackcheck.results.contract import LEVELS, ResultRecord

__all__ = ["Cell", "Chart", "Run", "Site", "gather"]

MAX_DIFFS = 20  # candidate pairs diffed per topic (adjacent pairs, oldest first)
# words in a metric's name or unit that say a smaller number is better
LOWER_IS_BETTER = ("latency", "time", "ttft", "tpot", "itl", "duration", "memory", "loss", "error")
LOWER_UNITS = ("ms", "s", "sec", "seconds", "us", "ns", "mib", "gib", "mb", "gb", "bytes")
DEFAULT_TOLERANCE = 0.05


@dataclass
class Cell:
    """One latest preflight verdict of a profile on an environment."""

    profile: str
    environment: str
    verdict: str
    source: str  # where the verdict came from: "ledger record abcd…", "preflight report FILE" …
    when: str = ""  # ISO time it was judged ("" unknown)
    checks: list[CheckResult] = field(default_factory=list)  # the full report, where there is one
    failing: list[tuple[str, str, str]] = field(default_factory=list)  # (id, title, explanation)
    anchor: str = ""


@dataclass
class RecordRow:
    id: str
    run_label: str
    created_at: str
    level: str
    status: str
    backend: str
    metrics: list[tuple[str, float, str]]  # (name, value, unit)
    next_level: str = ""  # the level above the effective one ("" at the top)
    needs: list[str] = field(default_factory=list)  # what promotion to next_level still needs
    flags: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # tampered: shown, never trusted


@dataclass
class Candidate:
    key: str
    model: str
    backend: str
    rows: list[RecordRow] = field(default_factory=list)


@dataclass
class Topic:
    name: str
    candidates: list[Candidate] = field(default_factory=list)
    decisions: list[tuple[str, str, str, bool]] = field(default_factory=list)  # when, label, text, current
    diffs: list[tuple[str, str, str]] = field(default_factory=list)  # candidate a, candidate b, diff text


@dataclass
class Point:
    label: str  # what the x axis names: the backend version and run label
    value: float
    record: str
    regression: bool = False


@dataclass
class Chart:
    topic: str
    metric: str
    unit: str
    lower_is_better: bool
    series: dict[str, list[Point]] = field(default_factory=dict)  # backend → points, oldest first


@dataclass
class Run:
    """The latest run of a backend on an environment (the compatibility matrix)."""

    backend: str
    environment: str
    status: str
    record: str
    when: str
    reason: str = ""


@dataclass
class Site:
    cells: list[Cell] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    topics: list[Topic] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    rules: list[SummaryRow] = field(default_factory=list)
    problems: list[tuple[str, list[str]]] = field(default_factory=list)  # (path, problems)
    sources: list[str] = field(default_factory=list)  # what the page was built from

    @property
    def profiles(self) -> list[str]:
        return sorted({c.profile for c in self.cells})

    @property
    def environments(self) -> list[str]:
        return sorted({c.environment for c in self.cells})


def environment_label(snapshot: Snapshot) -> str:
    """One line that names an environment: its hardware, Python and torch."""
    from stackcheck.results.compare import hardware

    parts = [hardware(snapshot)]
    if snapshot.python.version:
        parts.append(f"Python {snapshot.python.version}")
    if snapshot.torch.version:
        parts.append(f"torch {snapshot.torch.version}")
    return " · ".join(parts)


def gather(
    *,
    ledger=None,
    reports: Sequence[tuple[str, Report]] = (),
    snapshots: Sequence[tuple[str, Snapshot]] = (),
    profiles: Sequence[str] = (),
    catalog=None,
    rules: Sequence[SummaryRow] = (),
) -> Site:
    """The page's data. ``reports``: (label, preflight Report); ``snapshots``: (label,
    Snapshot) judged here against ``profiles`` of ``catalog`` (default: the profiles the
    ledger and the reports name, else every profile of the catalog)."""
    site = Site(rules=[redact_value(r) for r in rules])
    if ledger is not None:
        site.sources.append(redact_text(f"ledger {ledger.root}"))
        _ledger(site, ledger)
    for label, report in reports:
        label = redact_text(label)
        site.sources.append(f"preflight report {label}")
        report = redact_value(report)
        site.cells.append(
            Cell(
                profile=report.profile or "(none)",
                environment=label,
                verdict=report.verdict,
                source=f"preflight report {label}",
                when=report.environment.get("captured_at", ""),
                checks=list(report.checks),
            )
        )
    if snapshots:
        _judge(site, snapshots, profiles, catalog)
    site.cells = _latest(site.cells)
    for i, cell in enumerate(site.cells):
        cell.anchor = f"cell-{i}"
    return site


def _judge(site: Site, snapshots, profiles, catalog) -> None:
    from stackcheck.judge import judge

    if catalog is None:
        from stackcheck.catalog import load_catalog

        catalog = load_catalog(None)

    wanted = list(profiles) or sorted({c.profile for c in site.cells if c.profile in catalog})
    chosen = [catalog.get(p) for p in wanted] if wanted else [catalog.get(s.id) for s in catalog.summaries()]
    for label, snapshot in snapshots:
        label = redact_text(label)
        site.sources.append(f"snapshot {label}")
        for profile in chosen:
            report = redact_value(judge(snapshot, command="preflight", profile=profile))
            site.cells.append(
                Cell(
                    profile=profile.id,
                    environment=label,
                    verdict=report.verdict,
                    source=f"snapshot {label}, judged now",
                    when=snapshot.tool.captured_at,
                    checks=list(report.checks),
                )
            )


def _latest(cells: list[Cell]) -> list[Cell]:
    """The newest verdict per (profile, environment); of equal times the one given last."""
    newest: dict[tuple[str, str], Cell] = {}
    for cell in cells:
        key = (cell.profile, cell.environment)
        if key not in newest or cell.when >= newest[key].when:
            newest[key] = cell
    return [newest[k] for k in sorted(newest)]


def _ledger(site: Site, ledger) -> None:
    from stackcheck.checks.registry import all_checks
    from stackcheck.render.results import diff_text
    from stackcheck.results import ladder
    from stackcheck.results.compare import diff
    from stackcheck.results.identity import short
    from stackcheck.results.validation import validate_ledger

    entries = ledger.entries()
    evidence = _Loaded(ledger, entries)
    specs = all_checks(everywhere=True)
    topics: dict[str, Topic] = {}
    newest: dict[str, dict[str, ResultRecord]] = {}  # topic → candidate → newest record
    latest: dict[tuple[str, str], Run] = {}
    for entry in entries:
        rec = _shown(entry.record)
        env = redact_text(environment_label(entry.record.snapshot))
        topic = topics.setdefault(rec.topic, Topic(rec.topic))
        row = _row(rec, entry.level, [f.text for f in entry.flags])
        if row.next_level:
            row.needs = ladder.missing(entry.record, row.next_level, evidence)  # type: ignore[arg-type]
            row.needs = [redact_text(n) for n in row.needs]
        _candidate(topic, rec).rows.append(row)
        newest.setdefault(rec.topic, {})[rec.identity_key] = entry.record  # diffed, then redacted
        site.cells.append(
            Cell(
                profile=rec.profile.id,
                environment=env,
                verdict=rec.profile.verdict,
                source=f"ledger record {short(rec.digest)} ({rec.topic} / {rec.run_label})",
                when=rec.created_at,
                failing=[
                    (i, specs[i].title, specs[i].explain) if i in specs else (i, "", "")
                    for i in rec.profile.failing_checks
                ],
            )
        )
        _chart(site, rec, entry.level, bool(entry.flags))
        run = Run(_backend(rec), env, rec.status, short(rec.digest), rec.created_at)
        run.reason = rec.failure_reason
        latest[(run.backend, run.environment)] = run  # entries come oldest first
    site.runs = [latest[k] for k in sorted(latest)]
    known = {short(e.record.digest, 64) for e in entries}
    for report in validate_ledger(ledger):
        if report.valid:
            continue
        site.problems.append((redact_text(report.path), [redact_text(p) for p in report.problems]))
        path = Path(report.path)
        if report.kind == "record" and path.stem not in known:
            _tampered(topics, path, report.problems)
    for name, topic in topics.items():
        labels = sorted({r.run_label for c in topic.candidates for r in c.rows})
        current = ledger.current_decision(name)
        for label in labels:
            for event in ledger.decisions(name, label):
                is_current = current is not None and event.digest == current.digest
                topic.decisions.append((event.created_at, label, redact_text(event.text), is_current))
        topic.decisions.sort()
        records = list(newest.get(name, {}).values())
        for a, b in list(zip(records, records[1:]))[:MAX_DIFFS]:
            text = diff_text(redact_value(diff(a, b)))
            topic.diffs.append((short(a.identity_key, 12), short(b.identity_key, 12), text))
    site.topics = [topics[k] for k in sorted(topics)]


class _Loaded:
    """The ledger evidence the ladder asks for (:class:`stackcheck.results.ladder.Evidence`),
    answered from the entries already read: a page of N records reads each file once, not
    once per record of its candidate."""

    def __init__(self, ledger, entries) -> None:
        self._ledger = ledger
        self._runs: dict[str, list[ResultRecord]] = {}
        self._flags = {e.record.digest: list(e.flags) for e in entries}
        for e in entries:
            self._runs.setdefault(e.record.identity_key, []).append(e.record)
        self._decisions: dict[tuple[str, str], list] = {}

    def same_candidate(self, record: ResultRecord) -> list[ResultRecord]:
        return self._runs.get(record.identity_key, [])

    def flags(self, record: ResultRecord) -> list:
        return self._flags.get(record.digest, [])

    def decisions(self, topic: str, run_label: str) -> list:
        key = (topic, run_label)
        if key not in self._decisions:
            self._decisions[key] = self._ledger.decisions(topic, run_label)
        return self._decisions[key]


def _tampered(topics: dict[str, Topic], path: Path, problems: list[str]) -> None:
    """A record file that decodes but fails its checks: shown in its topic, marked."""
    from stackcheck.results.ledger import read_verified

    obj, _ = read_verified(path, ResultRecord)
    if not isinstance(obj, ResultRecord):
        return  # unreadable: listed among the problems only
    rec = _shown(obj)
    row = _row(rec, rec.evidence, [])
    row.id = path.stem[:16]
    row.next_level = ""
    row.problems = [redact_text(p) for p in problems]
    _candidate(topics.setdefault(rec.topic, Topic(rec.topic)), rec).rows.append(row)


def _shown(record: ResultRecord) -> ResultRecord:
    """A record as the page shows it: redacted, without its snapshot (the page shows only the
    environment's label and the diff, redacted where they are made; redacting every record's
    whole snapshot was half the time of a page)."""
    import msgspec

    return redact_value(msgspec.structs.replace(record, snapshot=Snapshot()))


def _row(rec: ResultRecord, level: str, flags: list[str]) -> RecordRow:
    from stackcheck.results.identity import short

    rank = LEVELS.index(level) if level in LEVELS else len(LEVELS) - 1
    return RecordRow(
        id=short(rec.digest),
        run_label=rec.run_label,
        created_at=rec.created_at,
        level=level,
        status=rec.status,
        backend=_backend(rec),
        metrics=[(k, m.value, m.unit) for k, m in sorted(rec.metrics.items())],
        next_level=LEVELS[rank + 1] if rank + 1 < len(LEVELS) else "",
        flags=[redact_text(f) for f in flags],
    )


def _backend(rec: ResultRecord) -> str:
    b = rec.backend
    return f"{b.name} {b.version}".strip()


def _candidate(topic: Topic, rec: ResultRecord) -> Candidate:
    from stackcheck.results.identity import short

    key = short(rec.identity_key, 12) or "(no identity)"
    for c in topic.candidates:
        if c.key == key:
            return c
    args = ", ".join(f"{k}={v}" for k, v in sorted(rec.backend.args.items()))
    cand = Candidate(key=key, model=rec.model.id, backend=rec.backend.name + (f" ({args})" if args else ""))
    topic.candidates.append(cand)
    return cand


def lower_is_better(metric: str, unit: str) -> bool:
    name = metric.lower()
    if any(w in name for w in LOWER_IS_BETTER):
        return True
    return unit.strip().lower() in LOWER_UNITS


def _chart(site: Site, rec: ResultRecord, level: str, flagged: bool) -> None:
    """A measured (or better) record's metrics, one chart per (topic, metric), one series per
    backend; a point worse than the one before it by more than the tolerance is a regression."""
    from stackcheck.results.identity import short
    from stackcheck.results.ladder import rank

    if rec.status != "ok" or level not in LEVELS or rank(level) < rank("measured"):
        return
    for name, metric in sorted(rec.metrics.items()):
        if not math.isfinite(metric.value):
            continue
        chart = next((c for c in site.charts if c.topic == rec.topic and c.metric == name), None)
        if chart is None:
            chart = Chart(rec.topic, name, metric.unit, lower_is_better(name, metric.unit))
            site.charts.append(chart)
        series = chart.series.setdefault(rec.backend.name, [])
        point = Point(
            label=f"{rec.backend.version or '?'} {rec.run_label}",
            value=metric.value,
            record=short(rec.digest),
        )
        tolerance = rec.tolerance.get(name, rec.tolerance.get("*", DEFAULT_TOLERANCE))
        if series:
            before = series[-1].value
            change = (metric.value - before) / abs(before) if before else 0.0
            worse = change > tolerance if chart.lower_is_better else change < -tolerance
            point.regression = worse
        point.regression = point.regression or flagged
        series.append(point)
