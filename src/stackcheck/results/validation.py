"""``results validate``: every problem of a draft, a stored record or a ledger event, per field.

A stored record is re-checked, not trusted: its contract, its digest (an edited record is
reported as tampered) and the evidence level it claimed, as far as the record alone can show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import msgspec

from stackcheck.errors import InputError
from stackcheck.fileio import decode_json, read_bytes, source_name
from stackcheck.results import ladder
from stackcheck.results.contract import LEVELS, Draft, Event, ResultRecord, missing_message, problems
from stackcheck.results.ledger import read_verified

# Levels whose proof lies in the record itself; reproduced and delivery also need the ledger.
SELF_EVIDENT = LEVELS.index("measured")


class FileReport(msgspec.Struct, kw_only=True):
    path: str
    kind: Literal["draft", "record", "event", "unknown"]
    valid: bool
    unreadable: bool = False
    problems: list[str] = []


def validate_file(path: str | Path) -> FileReport:
    path = Path(path)
    try:
        data = read_bytes(path, "result record or draft")  # once: '-' is stdin
        raw = decode_json(data, Any, source_name(path), "result record or draft")
    except InputError as exc:
        problem = str(exc).removeprefix(f"{source_name(path)}: ")
        return FileReport(path=str(path), kind="unknown", valid=False, unreadable=True, problems=[problem])
    kind = _kind(raw)
    if kind == "draft" and (missing := missing_message(raw)) is not None:
        return FileReport(path=str(path), kind=kind, valid=False, problems=[missing])
    model = {"draft": Draft, "record": ResultRecord, "event": Event}[kind]
    obj, found = read_verified(path, model, data=data)
    if obj is not None:
        if kind != "event":
            found = [*problems(obj), *found]
        if kind == "record" and not found:
            level = LEVELS[min(LEVELS.index(obj.evidence), SELF_EVIDENT)]
            found = [f"evidence: claims {obj.evidence} but {m}" for m in ladder.missing(obj, level)]
    return FileReport(path=str(path), kind=kind, valid=not found, problems=found)


def _kind(raw) -> str:
    if isinstance(raw, dict) and "kind" in raw and "model" not in raw:
        return "event"
    if isinstance(raw, dict) and ("digest" in raw or "snapshot" in raw):
        return "record"
    return "draft"
