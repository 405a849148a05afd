"""``results validate``: every problem of a draft, a stored record or a ledger event, per field,
and of a whole ledger.

A stored record or event is re-checked, not trusted: its contract, its digest (an edited file
is reported as tampered), whether the index can store it, and the evidence level a record
claimed, as far as the record alone can show. A whole ledger is checked as one: the chain
(a deleted, replaced or re-hashed file), files and index rows without each other, stale temp
files (:meth:`stackcheck.results.ledger.Ledger.audit`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import msgspec

from stackcheck.errors import InputError
from stackcheck.fileio import decode_json, read_bytes, source_name
from stackcheck.results import ladder
from stackcheck.results.contract import LEVELS, Draft, Event, ResultRecord, missing_message, problems
from stackcheck.results.index import storage_problems
from stackcheck.results.ledger import Ledger, indexed_fields, read_verified

# Levels whose proof lies in the record itself; reproduced and delivery also need the ledger.
SELF_EVIDENT = LEVELS.index("measured")


class FileReport(msgspec.Struct, kw_only=True):
    path: str
    kind: Literal["draft", "record", "event", "temp", "unknown"]
    valid: bool
    unreadable: bool = False
    problems: list[str] = []


def validate_file(path: str | Path) -> FileReport:
    return _validate(Path(path))[0]


def validate_ledger(ledger: Ledger) -> list[FileReport]:
    """Every file of the ledger, then the ledger as a whole: a report per file, and one per
    file that is missing or left over (exit 1 for ``validate`` when any is invalid)."""
    if not ledger.root.is_dir():  # nothing to check, and nothing to create
        return []
    reports, objs, present = [], {}, set()
    for path in ledger.files():
        report, obj = _validate(path)
        reports.append(report)
        present.add(path.stem)
        if obj is not None:
            objs[obj.digest.partition(":")[2]] = (obj, path)
    by_path = {r.path: r for r in reports}
    for path, found in ledger.audit(objs, present).items():
        report = by_path.get(path)
        if report is None:
            report = FileReport(path=path, kind=_kind_of_path(path), valid=False)
            reports.append(report)
        report.valid = False
        report.problems = [*report.problems, *found]
    return reports


def _validate(path: Path) -> tuple[FileReport, object | None]:
    """The file's report, and its object when it decoded and is not tampered."""
    try:
        data = read_bytes(path, "result record or draft")  # once: '-' is stdin
        raw = decode_json(data, Any, source_name(path), "result record or draft")
    except InputError as exc:
        problem = str(exc).removeprefix(f"{source_name(path)}: ")
        return FileReport(
            path=str(path), kind="unknown", valid=False, unreadable=True, problems=[problem]
        ), None
    kind = _kind(raw)
    if kind == "draft" and (missing := missing_message(raw)) is not None:
        return FileReport(path=str(path), kind=kind, valid=False, problems=[missing]), None
    model = {"draft": Draft, "record": ResultRecord, "event": Event}[kind]
    obj, found = read_verified(path, model, data=data)
    intact = obj if obj is not None and not found else None  # decoded and not tampered
    if obj is not None:
        if kind != "event":
            found = [*problems(obj), *found]
        # a field the contract already refused (the identifier rule) is not reported twice
        flagged = {p.partition(":")[0] for p in found}
        found += [
            f"cannot be stored in the index: {p}"
            for p in storage_problems(indexed_fields(obj))
            if p.partition(":")[0] not in flagged
        ]
        if kind == "record" and not found:
            level = LEVELS[min(LEVELS.index(obj.evidence), SELF_EVIDENT)]
            found = [f"evidence: claims {obj.evidence} but {m}" for m in ladder.missing(obj, level)]
    return FileReport(path=str(path), kind=kind, valid=not found, problems=found), intact


def _kind_of_path(path: str) -> str:
    name = Path(path).name
    if name.startswith("."):
        return "temp"
    return {"records": "record", "events": "event"}.get(Path(path).parent.name, "unknown")


def _kind(raw) -> str:
    if isinstance(raw, dict) and "kind" in raw and "model" not in raw:
        return "event"
    if isinstance(raw, dict) and ("digest" in raw or "snapshot" in raw):
        return "record"
    return "draft"
