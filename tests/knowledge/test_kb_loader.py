"""A broken data file fails loudly, naming the file, the rule (or row) and the field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stackcheck.errors import InputError
from stackcheck.knowledge import load_knowledge
from stackcheck.knowledge.loader import DATA_DIR, TABLES, load_from


@pytest.fixture
def data(tmp_path: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(DATA_DIR, target)
    return target


def edit_rule(data: Path, rule_id: str, **changes) -> Path:
    path = data / "rules" / "curated.json"
    doc = json.loads(path.read_text())
    for rule in doc["rules"]:
        if rule["id"] == rule_id:
            for key, value in changes.items():
                if value is None:
                    rule.pop(key, None)
                else:
                    rule[key] = value
    path.write_text(json.dumps(doc))
    return path


def error_of(data: Path) -> str:
    with pytest.raises(InputError) as exc:
        load_from(data)
    return str(exc.value)


def test_packaged_data_loads_and_is_cached():
    kb = load_knowledge()
    assert kb is load_knowledge()
    assert len(kb.rules) >= 30 and kb.torch.releases and kb.archs.builds and kb.pins.pins


def test_data_directory_is_injectable(data: Path, monkeypatch):
    edit_rule(data, "KB017", title="changed in the copy")
    assert load_knowledge(data).rule("KB017").title == "changed in the copy"
    monkeypatch.setenv("STACKCHECK_KNOWLEDGE_DIR", str(data))
    from stackcheck.knowledge import loader

    assert loader.data_dir() == data


def test_wrong_category_names_rule_and_field(data: Path):
    edit_rule(data, "KB006", category="abi-mismatch-typo")
    msg = error_of(data)
    assert "curated.json" in msg and "rule KB006" in msg and "category" in msg


def test_wrong_type_in_scope_names_nested_field(data: Path):
    edit_rule(data, "KB008", scope={"packages": "flash-attn"})
    msg = error_of(data)
    assert "rule KB008" in msg and "scope.packages" in msg and "expected `array`" in msg


def test_unknown_field_is_refused(data: Path):
    edit_rule(data, "KB008", severtiy="blocked")
    assert "severtiy" in error_of(data)


def test_signature_re2_rejects_is_a_load_error(data: Path):
    edit_rule(data, "KB010", signatures=[r"(\w+) and \1"])  # a backreference: not linear-time
    msg = error_of(data)
    assert "rule KB010" in msg and "signatures[0]" in msg and "RE2" in msg
    assert "invalid escape sequence" in msg and "b'" not in msg


def test_lookaround_is_a_load_error(data: Path):
    edit_rule(data, "KB011", signatures=[r"foo(?=bar)"])
    assert "rule KB011: signatures[0]" in error_of(data)


def test_rule_without_source_is_a_load_error(data: Path):
    edit_rule(data, "KB012", sources=[])
    msg = error_of(data)
    assert "rule KB012: sources" in msg


def test_unknown_predicate_is_a_load_error(data: Path):
    edit_rule(data, "KB013", scope={"predicate": "no-such-fact"})
    msg = error_of(data)
    assert "rule KB013: scope.predicate" in msg and "no-such-fact" in msg


def test_bad_scope_specifier_and_requirement_are_load_errors(data: Path):
    edit_rule(data, "KB008", scope={"packages": ["flash-attn"], "compute_capability": "<<8.0"})
    assert "rule KB008: scope.compute_capability: '<<8.0' is not a version specifier" in error_of(data)
    edit_rule(data, "KB008", scope={"packages": ["flash attn !!"]})
    assert "rule KB008: scope.packages[0]" in error_of(data)


def test_duplicate_rule_id_across_files(data: Path):
    (data / "rules" / "extra.json").write_text(
        json.dumps(
            {
                "schema_version": "1.0",
                "rules": [{"id": "KB001", "title": "t", "category": "other", "sources": ["x/y#1"]}],
            }
        )
    )
    msg = error_of(data)
    assert "KB001" in msg and "duplicate" in msg


def test_truncated_and_binary_files(data: Path):
    path = data / "rules" / "curated.json"
    path.write_text(path.read_text()[:500])
    assert "truncated" in error_of(data)
    path.write_bytes(b"\x00\xff\xfe garbage")
    assert "curated.json" in error_of(data)


def test_rule_file_of_the_wrong_shape(data: Path):
    (data / "rules" / "curated.json").write_text("[1, 2]")
    assert "'rules' list" in error_of(data)


def test_schema_major_mismatch(data: Path):
    path = data / "torch_releases.json"
    doc = json.loads(path.read_text())
    doc["schema_version"] = "2.0"
    path.write_text(json.dumps(doc))
    assert "torch_releases.json: schema_version" in error_of(data)


@pytest.mark.parametrize("table", sorted(TABLES))
def test_fact_row_without_source_is_a_load_error(data: Path, table: str):
    filename, _, list_name = TABLES[table]
    path = data / filename
    doc = json.loads(path.read_text())
    doc[list_name][0]["sources"] = []
    path.write_text(json.dumps(doc))
    msg = error_of(data)
    assert filename in msg and f"{list_name}[0].sources" in msg


def test_undeclared_source_tag_is_a_load_error(data: Path):
    path = data / "cuda_drivers.json"
    doc = json.loads(path.read_text())
    doc["mvc_floors"][1]["sources"] = ["NV-TYPO"]
    path.write_text(json.dumps(doc))
    assert "mvc_floors[1].sources" in error_of(data) and "NV-TYPO" in error_of(data)


def test_every_fact_row_of_the_packaged_data_has_a_declared_source():
    kb = load_knowledge()
    for table in (kb.drivers, kb.torch, kb.archs, kb.pins):
        rows = [
            r
            for name in ("toolkits", "mvc_floors", "releases", "builds", "pins")
            for r in getattr(table, name, [])
        ]
        assert rows
        for row in rows:
            assert row.sources
            for src in row.sources:
                assert src in table.sources or "/" in src or "#" in src, (row, src)


def test_cli_reports_a_broken_knowledge_file_in_one_line_and_exits_2(data: Path):
    import os
    import subprocess
    import sys

    edit_rule(data, "KB006", severity="fatal")
    snapshot = Path(__file__).resolve().parents[1] / "data" / "snapshots" / "h100-single.json"
    if not snapshot.exists():
        pytest.skip("recorded snapshot not present")
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", "doctor", "--snapshot", str(snapshot)],
        env={**os.environ, "STACKCHECK_KNOWLEDGE_DIR": str(data)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"stackcheck: error: {data}/rules/curated.json: rule KB006: severity: invalid enum value 'fatal'"
    ]
    assert "Traceback" not in proc.stderr and proc.stdout == ""
