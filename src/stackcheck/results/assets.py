"""The experiment-assets table (Markdown) generated from the ledger, never written by hand."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from stackcheck.results.ledger import Ledger


class AssetRow(msgspec.Struct, kw_only=True):
    run_label: str
    topic: str
    path: str
    evidence: str
    decision: str = ""  # the topic's current decision when it is about this run label


def asset_rows(
    ledger: Ledger, topic: str | None = None, relative_to: str | os.PathLike | None = None
) -> list[AssetRow]:
    """One row per (topic, run label): its newest record, effective level and decision."""
    newest = {}
    for entry in ledger.entries(topic):  # oldest first, so the last one wins
        newest[(entry.record.topic, entry.record.run_label)] = entry
    decisions = {t: ledger.current_decision(t) for t in {t for t, _ in newest}}
    rows = []
    for (t, label), entry in sorted(newest.items()):
        decision = decisions[t]
        rows.append(
            AssetRow(
                run_label=label,
                topic=t,
                path=_relative(entry.path, relative_to),
                evidence=entry.level + (" (flagged)" if entry.flags else ""),
                decision=decision.text if decision is not None and decision.run_label == label else "",
            )
        )
    return rows


def _relative(path: Path, base: str | os.PathLike | None) -> str:
    try:
        return os.path.relpath(path, base or os.getcwd())
    except ValueError:  # another drive on Windows
        return str(path)
