"""`stackcheck profiles …` as a user runs it: exit codes, one-line errors, JSON only on stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

STACKCHECK = str(Path(sys.executable).with_name("stackcheck"))


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [STACKCHECK, "profiles", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{"profiles": [{"id": "X", "requirements": ["torch>=2', "truncated JSON"),
        (b'{"profiles": [\n  {"id": "X"},\n  oops\n]}', "line 3"),
        (bytes(range(256)) * 4, "malformed JSON"),
        (b"\xff\xfe\x00{", "malformed JSON"),
    ],
    ids=["truncated", "malformed", "binary", "bom-garbage"],
)
def test_unreadable_registry_exits_2_with_one_line(tmp_path, content, expected):
    path = tmp_path / "reg.json"
    path.write_bytes(content)
    result = run("validate", str(path), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and str(path) in result.stderr and expected in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_file_exits_2(tmp_path):
    result = run("validate", str(tmp_path / "nope.json"), cwd=tmp_path)
    assert (result.returncode, result.stderr.strip()) == (
        2,
        f"stackcheck: error: {tmp_path / 'nope.json'}: no such profile registry",
    )


def test_validate_reports_each_problem_and_exits_1(write_registry, tmp_path):
    path = write_registry(
        [
            {"id": "BASE", "requirements": ["torch>=2.6"]},
            {"id": "CHILD", "extends": ["BASE"], "requirements": ["torch<2.5"], "reqs": []},
            {"id": "OTHER", "extends": ["BASE"], "requirements": ["torch<2.5"]},
        ],
        include_builtin=False,
    )
    result = run("validate", str(path), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"{path}: CHILD.reqs: unknown field (expected one of: id, title, category, purpose, "
        "extends, python, requirements, constraints, required_modules, forbidden, gpu, "
        "platform, evidence_scope, docs, notes)",
        f"{path}: OTHER.requirements: torch: no version satisfies '<2.5,>=2.6' after layering "
        "(BASE: >=2.6; OTHER: <2.5)",
    ]
    assert result.stderr.strip() == f"2 problems in {path}"
    as_json = json.loads(run("validate", str(path), "--json", cwd=tmp_path).stdout)
    assert as_json["valid"] is False and [p["profile"] for p in as_json["problems"]] == ["CHILD", "OTHER"]


def test_validate_without_a_file_uses_discovery(write_registry, tmp_path):
    write_registry([{"id": "MINE", "extends": ["BASE-CPU"]}], path="requirements/environment-profiles.json")
    (tmp_path / "src").mkdir()
    result = run("validate", cwd=tmp_path / "src")
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip() == f"{tmp_path / 'requirements' / 'environment-profiles.json'}: valid"
    builtin = run("validate", "--json", cwd=Path("/"))
    assert builtin.returncode == 0 and json.loads(builtin.stdout) == {
        "source": "built-in",
        "valid": True,
        "problems": [],
    }


def test_list_and_show(write_registry, tmp_path):
    path = write_registry(
        [{"id": "MY-SFT", "extends": ["PT-SFT-CUDA"], "title": "ours", "gpu": {"min_memory_gib": 48}}]
    )
    listing = run("list", "--registry", str(path), cwd=tmp_path)
    assert listing.returncode == 0
    assert listing.stdout.splitlines()[0].startswith(f"profiles from {path} (sha256:")
    assert any(
        line.split()[:3] == ["MY-SFT", "single-gpu", "single-gpu"] for line in listing.stdout.splitlines()
    )
    as_json = json.loads(run("list", "--registry", str(path), "--json", cwd=tmp_path).stdout)
    assert as_json["source"] == str(path) and as_json["digest"].startswith("sha256:")
    assert len(as_json["profiles"]) == 21 and not any(p["category"] == "base" for p in as_json["profiles"])
    assert len(json.loads(run("list", "--all", "--json", cwd=tmp_path).stdout)["profiles"]) == 28

    shown = json.loads(run("show", "MY-SFT", "--registry", str(path), "--json", cwd=tmp_path).stdout)
    assert (
        shown["extends"] == []
        and shown["layers"][-2:] == ["PT-SFT-CUDA", "MY-SFT"]
        and shown["gpu"]["min_memory_gib"] == 48
    )
    raw = json.loads(run("show", "MY-SFT", "--registry", str(path), "--raw", "--json", cwd=tmp_path).stdout)
    assert raw["extends"] == ["PT-SFT-CUDA"] and raw["layers"] == []
    text = run("show", "INF-VLLM-011-CU128", cwd=tmp_path).stdout
    assert (
        "layers    LAYER-RUNTIME → LAYER-TORCH → LAYER-CUDA → GUARD-NO-QLORA → LAYER-VLLM → "
        "INF-VLLM-011-CU128" in text
    )
    assert "  vllm==0.11.0" in text and "torch CUDA ==12.8" in text


def test_unknown_profile_exits_2_with_suggestions(tmp_path):
    result = run("show", "PT-SFT", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(
        "stackcheck: error: unknown profile ID 'PT-SFT' in the built-in catalog; did you mean PT-SFT-CUDA"
    )


def test_docs_writes_the_index_atomically(tmp_path):
    out = tmp_path / "docs" / "index.md"
    result = run("docs", "--output", str(out), cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == ""
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!-- Generated by `stackcheck profiles docs`") and "| `Q-QLORA` |" in text
    # registry links (repo-relative "docs/profiles.md#…") are rewritten relative to the output file
    assert "[quickstart](profiles.md#single-gpu)" in text
    assert [p.name for p in out.parent.iterdir()] == ["index.md"]  # no temporary file left behind
    rows = [line for line in run("docs", cwd=tmp_path).stdout.splitlines() if line.startswith("| `")]
    assert len(rows) == 28 and "(docs/profiles.md#single-gpu)" in rows[5]  # stdout keeps the registry's links


def test_schema_is_the_registry_json_schema(tmp_path):
    result = run("schema", cwd=tmp_path)
    schema = json.loads(result.stdout)
    assert result.returncode == 0
    assert schema["$ref"] == "#/$defs/Registry" and "Profile" in schema["$defs"]
    import jsonschema

    jsonschema.validate(
        json.loads(
            (Path(__file__).parents[2] / "src/stackcheck/catalog/builtin/40-serving.json").read_text()
        ),
        schema,
    )
