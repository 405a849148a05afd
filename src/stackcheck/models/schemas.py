"""JSON Schema export of the contracts (``schemas/*.schema.json``, kept in step by a test)."""

from __future__ import annotations

import json
from pathlib import Path


def contracts() -> dict[str, type]:
    """Schema file stem → model type. Import is lazy so the CLI stays fast."""
    from stackcheck.models.finding import Report
    from stackcheck.models.profile import Registry
    from stackcheck.models.result import ResultRecord
    from stackcheck.models.rule import RuleSet
    from stackcheck.models.snapshot import Snapshot

    return {
        "snapshot": Snapshot,
        "profile-registry": Registry,
        "report": Report,
        "ruleset": RuleSet,
        "result": ResultRecord,
    }


def schema_for(model: type) -> dict:
    import msgspec

    return msgspec.json.schema(model)


def render(model: type) -> str:
    return json.dumps(schema_for(model), indent=2, sort_keys=True) + "\n"


def write_all(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, model in contracts().items():
        path = directory / f"{stem}.schema.json"
        path.write_text(render(model), encoding="utf-8")
        written.append(path)
    return written
