"""Commands and options no other test ran: `explain`, `schema`, `preflight --list-profiles`,
`--markdown` of preflight and doctor. Run in-process through stackcheck's own entry point
(`main`), so exit codes and one-line errors are the ones a user gets."""

from __future__ import annotations

import json

import pytest

from stackcheck.checks.registry import all_checks
from stackcheck.models import schemas
from tests.factories import SNAPSHOTS


@pytest.fixture
def sc(cli_main):
    return cli_main


# ---------------------------------------------------------------- explain
def test_explain_prints_the_checks_own_explanation(sc):
    spec = all_checks()["PKG003"]
    code, out, err = sc("explain", "PKG003")
    assert (code, err) == (0, "")
    assert out == f"PKG003: Forbidden package absent\nruns in: preflight (with a profile)\n\n{spec.explain}\n"


def test_explain_is_case_insensitive_and_lists_sources(sc):
    spec = all_checks()["GPU004"]
    code, out, _ = sc("explain", "gpu004")
    assert code == 0
    assert out.splitlines()[:2] == [
        "GPU004: torch build carries kernels for each visible GPU",
        "runs in: doctor, preflight",
    ]
    assert out.endswith("\nsources:\n" + "".join(f"  - {s}\n" for s in spec.sources))


def test_explain_json(sc):
    code, out, _ = sc("explain", "PKG003", "--json")
    spec = all_checks()["PKG003"]
    assert code == 0
    assert json.loads(out) == {
        "id": "PKG003",
        "title": "Forbidden package absent",
        "commands": ["preflight"],
        "needs_profile": True,
        "explain": spec.explain,
        "sources": [],
    }


@pytest.mark.parametrize(
    "given, message",
    [
        ("PKG999", "unknown check ID 'PKG999'; did you mean PKG003, PKG002, PKG001?"),
        ("zzz", "unknown check ID 'zzz'; `stackcheck explain --list` shows all"),
    ],
)
def test_explain_unknown_id_exits_2_with_one_line(sc, given, message):
    assert sc("explain", given) == (2, "", f"stackcheck: error: {message}\n")


def test_explain_list_names_every_registered_check(sc):
    code, out, _ = sc("explain", "--list", "--json")
    assert code == 0
    listed = json.loads(out)
    assert [c["id"] for c in listed] == list(all_checks())
    assert {"id": "PKG003", "title": "Forbidden package absent", "commands": ["preflight"]} in listed
    code, text, _ = sc("explain", "--list")
    assert "PKG003   Forbidden package absent  [preflight]" in text.splitlines()
    assert len(text.splitlines()) == len(listed)


# ---------------------------------------------------------------- schema
def test_schema_lists_and_prints_each_contract(sc):
    code, out, _ = sc("schema")
    assert (code, out.splitlines()) == (0, list(schemas.contracts()))
    for name, model in schemas.contracts().items():
        code, out, _ = sc("schema", name)
        assert code == 0 and json.loads(out) == schemas.schema_for(model), name


def test_schema_unknown_name_exits_2(sc):
    known = ", ".join(schemas.contracts())
    assert sc("schema", "nope") == (2, "", f"stackcheck: error: unknown contract 'nope'; one of: {known}\n")


def test_schema_write_writes_every_contract(sc, tmp_path):
    code, out, _ = sc("schema", "--write", tmp_path / "s")
    assert code == 0
    written = out.splitlines()
    assert sorted(written) == sorted(str(tmp_path / "s" / f"{n}.schema.json") for n in schemas.contracts())
    for name, model in schemas.contracts().items():
        assert json.loads((tmp_path / "s" / f"{name}.schema.json").read_text()) == schemas.schema_for(model)


# ---------------------------------------------------------------- preflight --list-profiles
def test_list_profiles_of_a_registry(sc, tmp_path):
    reg = tmp_path / "r.json"
    reg.write_text(
        json.dumps(
            {
                "include_builtin": False,
                "profiles": [
                    {"id": "LAB-B", "title": "second", "category": "cpu", "purpose": "b"},
                    {
                        "id": "LAB-A",
                        "title": "first",
                        "category": "single-gpu",
                        "evidence_scope": "single-gpu",
                        "purpose": "a",
                    },
                ],
            }
        )
    )
    code, out, _ = sc("preflight", "--list-profiles", "--registry", reg, "--json")
    assert code == 0
    assert json.loads(out) == {
        "registry": str(reg),
        "profiles": [
            {
                "id": "LAB-A",
                "category": "single-gpu",
                "evidence_scope": "single-gpu",
                "title": "first",
                "purpose": "a",
            },
            {
                "id": "LAB-B",
                "category": "cpu",
                "evidence_scope": "cpu-smoke",
                "title": "second",
                "purpose": "b",
            },
        ],
    }
    code, text, _ = sc("preflight", "--list-profiles", "--registry", reg)
    assert code == 0
    assert text.splitlines()[0] == f"profiles from {reg}:"
    assert text.splitlines()[1].split() == ["ID", "CATEGORY", "SCOPE", "TITLE"]
    assert [line.split()[:3] for line in text.splitlines()[2:4]] == [
        ["LAB-A", "single-gpu", "single-gpu"],
        ["LAB-B", "cpu", "cpu-smoke"],
    ]


def test_list_profiles_of_the_builtin_catalog(sc):
    from stackcheck.catalog import load_catalog

    ids = sorted(load_catalog(registry=None, cwd="/").ids())
    code, out, _ = sc("preflight", "--list-profiles", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["registry"] == "built-in"
    assert [p["id"] for p in doc["profiles"]] == ids


def test_list_profiles_of_a_missing_registry_exits_2(sc, tmp_path):
    missing = tmp_path / "nope.json"
    assert sc("preflight", "--list-profiles", "--registry", missing) == (
        2,
        "",
        f"stackcheck: error: {missing}: no such profile registry\n",
    )


# ---------------------------------------------------------------- --markdown
def _rows(report: dict) -> list[str]:
    def esc(s):
        return (s or "").replace("|", "\\|").replace("\n", " ")

    def verdict(c):
        return c["verdict"] + (f" (follows from {c['consequence_of']})" if c.get("consequence_of") else "")

    # rows in reading order: by severity, causes before their consequences, then by ID
    order = {"error": 0, "blocked": 1, "warning": 2, "ok": 3, "skipped": 4}
    checks = sorted(
        report["checks"], key=lambda c: (order[c["verdict"]], c.get("consequence_of") is not None, c["id"])
    )
    return [
        f"| {c['id']} {esc(c['title'])} | {verdict(c)} | {esc(c['subject'])} | "
        f"{esc(c['observed'] or c['reason'])} "
        f"| {esc(c['expected'])} | {esc(c['fix'])} |"
        for c in checks
    ]


@pytest.mark.parametrize(
    "args, head, code",
    [
        (
            ("preflight", "-p", "BASE-CPU", "--snapshot", SNAPSHOTS / "cpu-laptop.json"),
            "## preflight BASE-CPU: **ok**",
            0,
        ),
        (
            ("preflight", "-p", "TRAIN-CUDA-MECHANISM", "--snapshot", SNAPSHOTS / "cpu-laptop.json"),
            "## preflight TRAIN-CUDA-MECHANISM: **blocked**",
            1,
        ),
        (("doctor", "--snapshot", SNAPSHOTS / "ros-polluted.json"), "## doctor : **blocked**", 1),
        (("doctor", "--snapshot", SNAPSHOTS / "h100-single.json"), "## doctor : **ok**", 0),
    ],
)
def test_markdown_table_has_one_row_per_check_of_the_json_report(sc, args, head, code):
    md_code, md, err = sc(*args, "--markdown")
    json_code, js, _ = sc(*args, "--json")
    assert (md_code, json_code, err) == (code, code, "")
    report = json.loads(js)
    rows = _rows(report)
    lines = md.splitlines()
    assert lines[: 4 + len(rows)] == [
        head,
        "",
        "| check | verdict | subject | observed | expected | fix |",
        "|---|---|---|---|---|---|",
        *rows,
    ]
    rest = lines[4 + len(rows) :]  # then only the combined fix, when two findings share one
    assert rest == [] or rest[:2] == ["", "**Fix all** (one command per package index):"]


def test_markdown_escapes_pipes_so_every_row_keeps_six_cells(sc, tmp_path):
    reg = tmp_path / "r.json"
    reg.write_text(
        json.dumps(
            {"include_builtin": False, "profiles": [{"id": "P", "requirements": ["nonexistent-pkg>=1"]}]}
        )
    )
    snap = tmp_path / "s.json"
    doc = json.loads((SNAPSHOTS / "cpu-laptop.json").read_text())
    doc["python"]["executable"] = "/env/a|b/bin/python"  # the fix names the interpreter
    snap.write_text(json.dumps(doc))
    code, md, _ = sc("preflight", "--registry", reg, "-p", "P", "--snapshot", snap, "--markdown")
    assert code == 1
    [row] = [r for r in md.splitlines() if r.startswith("| PKG001 ")]
    assert "/env/a\\|b/bin/python" in row
    assert row.replace("\\|", "").count("|") == 7
