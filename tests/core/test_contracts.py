"""The exported JSON Schemas stay in step with the models, and reports keep their shape."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from stackcheck.models import schemas
from stackcheck.models.finding import Report

ROOT = Path(__file__).resolve().parents[2]


def test_schema_files_match_the_models():
    for stem, model in schemas.contracts().items():
        path = ROOT / "schemas" / f"{stem}.schema.json"
        assert path.exists(), f"{path} missing: run `stackcheck schema --write schemas`"
        assert json.loads(path.read_text()) == schemas.schema_for(model), (
            f"{path.name} is stale: run `stackcheck schema --write schemas`"
        )


def test_report_json_has_the_documented_keys():
    doc = json.loads(msgspec.json.encode(Report(profile="X")))
    assert {"schema_version", "profile", "verdict", "checks", "snapshot_digest"} <= set(doc)


def test_check_reference_is_in_step_with_the_registry():
    from stackcheck.checks.registry import all_checks
    from stackcheck.render.checks_doc import checks_markdown

    path = ROOT / "docs" / "checks.md"
    assert path.read_text() == checks_markdown(all_checks(everywhere=True)), (
        "docs/checks.md is stale: run `stackcheck explain --markdown -o docs/checks.md`"
    )


def test_every_check_has_an_explanation_with_a_fix():
    from stackcheck.checks.registry import all_checks

    for spec in all_checks(everywhere=True).values():
        assert spec.title and len(spec.explain) > 40, spec.id
