"""The mined rules where users meet them: ``mine rules/summary/verify``, ``triage --rules``,
``preflight --rules``, ``explain``, and the team's ``requirements/stackcheck-rules/`` folder."""

from __future__ import annotations

import json
import shutil

import msgspec
import pytest

from stackcheck.cli import main
from stackcheck.knowledge.loader import load_rule_files

from .conftest import MATRIX, by_test, matrix_runs
from .test_ingest import run_cli

SNAPSHOTS = MATRIX.parents[1] / "snapshots"


def cli(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = tmp_path_factory.mktemp("cli") / "store.sqlite"
    code, _, err = run_cli("mine", "ingest", str(MATRIX), "--store", str(db))
    assert (code, err) == (0, "")  # not a TTY: no progress on stderr
    return db


def test_mine_rules_writes_a_rule_file_the_knowledge_loader_reads(store, tmp_path, capsys):
    out_file = tmp_path / "mined.json"
    code, out, err = cli(capsys, "mine", "rules", "--store", str(store), "-o", str(out_file))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == (
        f"4 rule(s) from 96 job(s) of 4 run(s) in {store}: 86 failed, 10 passed; "
        "the rules explain 100% of the failed jobs"
    )
    assert lines[2].split() == ["rule", "coverage", "reproduces", "false", "pos.", "scope"]
    assert lines[-1] == f"wrote 4 rule(s) to {out_file}"
    rules = load_rule_files([out_file])  # RE2-checked, validated like curated rules
    assert sorted(r.mined.reproducibility for r in rules) == [
        "flaky",
        "reproducible",
        "reproducible",
        "reproducible",
    ]


def test_mine_rules_json_is_only_json(store, capsys):
    code, out, err = cli(capsys, "mine", "rules", "--store", str(store), "--json")
    doc = json.loads(out)
    assert (code, err) == (0, "")
    assert [row["scope"] for row in doc["summary"]][1:3] == ["numpy>=2", "numpy>=2"]
    assert doc["coverage"] == 1.0 and doc["dropped"] == []


def test_summary_and_markdown_of_a_rule_file(matrix_rule_file, matrix_mined, capsys):
    code, out, _ = cli(capsys, "mine", "summary", str(matrix_rule_file), "--markdown")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "| rule | coverage | reproduces | false pos. | scope | title |"
    flaky = by_test(matrix_mined, "test_default_device")
    (row,) = [line for line in lines if line.startswith(f"| {flaky.id} |")]
    m = flaky.mined
    assert row.startswith(
        f"| {flaky.id} | {m.coverage:.0%} ({m.support}) | {m.failure_rate:.0%} of 48 "
        f"(≥{m.wilson_lower:.2f}) flaky | 0% | none: fails in every cell seen (6) |"
    )
    code, out, _ = cli(capsys, "mine", "summary", str(matrix_rule_file), "--json")
    assert sorted(r["id"] for r in json.loads(out)) == sorted(r.id for r in matrix_mined.rules.rules)


def test_verify_on_the_labelled_matrix(matrix_rule_file, capsys):
    code, out, _ = cli(capsys, "mine", "verify", str(matrix_rule_file), "--labelled", str(MATRIX), "--json")
    v = json.loads(out)
    labels = [json.loads(line) for line in (MATRIX / "labels.jsonl").read_text().splitlines()]
    assert code == 0
    assert v["failures"] == sum("group" in x for x in labels) and v["passing_logs"] == 10
    assert (v["coverage"], v["precision"], v["false_positive_logs"]) == (1.0, 1.0, 0)
    assert (v["grouping_accuracy"], v["fga"], v["ari"], v["groups"]) == (1.0, 1.0, 1.0, 4)


def test_rules_mined_from_half_the_runs_hold_on_the_other_half(tmp_path, capsys):
    """Mined on runs 8801-8802, verified on 8803-8804 (held out)."""
    from .conftest import mine_matrix

    mined = mine_matrix(tmp_path / "half.sqlite", runs={"8801", "8802"})
    rules = tmp_path / "half.json"
    rules.write_bytes(msgspec.json.encode(mined.rules))
    held = tmp_path / "held"
    held.mkdir()
    labels = [json.loads(line) for line in (MATRIX / "labels.jsonl").read_text().splitlines()]
    keep = {r["log"] for r in matrix_runs() if r["run"] in ("8803", "8804")}
    for rel in keep:
        (held / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(MATRIX / rel, held / rel)
    (held / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels if x["log"] in keep))
    code, out, _ = cli(capsys, "mine", "verify", str(rules), "--labelled", str(held), "--json")
    v = json.loads(out)
    assert code == 0
    assert (v["coverage"], v["precision"], v["false_positive_logs"], v["ari"]) == (1.0, 1.0, 0, 1.0)


def test_triage_with_rules_diagnoses_the_next_occurrence(matrix_rule_file, matrix_mined, capsys):
    run = next(r for r in matrix_runs() if "numpy-2.2.6" in r["job"] and r["job"].startswith("unit"))
    code, out, _ = cli(
        capsys, "triage", str(MATRIX / run["log"]), "--rules", str(matrix_rule_file), "--no-env", "--json"
    )
    d = json.loads(out)
    expected = {by_test(matrix_mined, "test_mean_dtype").id, by_test(matrix_mined, "test_total").id}
    assert code == 0 and expected <= {m["rule_id"] for m in d["matches"]}
    # without --rules the same log has no mined match: the option does not stick to the process
    code, out, _ = cli(capsys, "triage", str(MATRIX / run["log"]), "--no-env", "--json")
    assert not any(m["rule_id"].startswith("KBM-") for m in json.loads(out)["matches"])


def test_a_rules_folder_beside_the_profiles_is_discovered(
    matrix_rule_file, matrix_mined, tmp_path, capsys, monkeypatch
):
    folder = tmp_path / "repo" / "requirements" / "stackcheck-rules"
    folder.mkdir(parents=True)
    shutil.copy(matrix_rule_file, folder / "mined.json")
    (tmp_path / "repo" / "src").mkdir()
    monkeypatch.chdir(tmp_path / "repo" / "src")
    log = tmp_path / "next.log"
    log.write_text("E   AttributeError: module 'numpy' has no attribute 'product'\n")
    code, out, _ = cli(capsys, "triage", str(log), "--no-env", "--json")
    assert code == 0
    # the mined rule, then the generic family of removed attributes (a family ranks below it)
    matches = json.loads(out)["matches"]
    assert [(m["rule_id"], m["layer"]) for m in matches] == [
        (by_test(matrix_mined, "test_total").id, "specific"),
        ("KB313", "family"),
    ]


def test_preflight_warns_on_a_known_bad_cell_and_explain_knows_the_rule(matrix_rule_file, matrix_mined):
    rule = by_test(matrix_mined, "test_mean_dtype")
    # the recorded CPU laptop has numpy 2.4.6: inside the mined scope numpy>=2
    code, out, _ = run_cli(
        "preflight",
        "-p",
        "BASE-CPU",
        "--snapshot",
        str(SNAPSHOTS / "cpu-laptop.json"),
        "--rules",
        str(matrix_rule_file),
        "--json",
    )
    report = json.loads(out)
    (finding,) = [c for c in report["checks"] if c["id"] == rule.id]
    assert (finding["verdict"], finding["observed"], finding["expected"]) == (
        "warning",
        "numpy 2.4.6 (>=2)",
        "not numpy>=2",
    )
    # the old-driver server has numpy 1.26.4: not affected
    code, out, _ = run_cli(
        "preflight",
        "-p",
        "BASE-CPU",
        "--snapshot",
        str(SNAPSHOTS / "old-driver-470-cu121.json"),
        "--rules",
        str(matrix_rule_file),
        "--json",
    )
    (finding,) = [c for c in json.loads(out)["checks"] if c["id"] == rule.id]
    assert finding["verdict"] == "ok"
    code, out, _ = run_cli("explain", rule.id, "--rules", str(matrix_rule_file))
    assert code == 0
    assert out.splitlines()[:2] == [f"{rule.id}: {rule.title}", "runs in: doctor, preflight"]
    assert "Scope: numpy>=2." in out and "Wilson lower bound 0.89 at 95%: reproducible" in out


def test_help_has_examples():
    code, out, _ = run_cli("mine", "--help")
    assert code == 0 and "stackcheck mine ingest logs_6234567890.zip --runs runs.jsonl" in out
    for sub in ("ingest", "rules", "summary", "verify"):
        code, out, _ = run_cli("mine", sub, "--help")
        assert code == 0 and "Examples:" in out


def test_an_unknown_rule_file_is_one_line(capsys, tmp_path):
    log = tmp_path / "x.log"
    log.write_text("ValueError: boom\n")
    code, out, err = cli(capsys, "triage", str(log), "--rules", str(tmp_path / "none.json"), "--no-env")
    assert (code, out) == (2, "")
    assert err == f"stackcheck: error: {tmp_path / 'none.json'}: no such rule file or folder\n"
