"""`stackcheck results …` end to end through the real entry point: JSON shapes, exit codes,
one-line errors, and the "why did my number change" diff."""

from __future__ import annotations

import json
import os

import pytest

from tests.results.conftest import full_draft, snapshot_path


@pytest.fixture
def sc(tmp_path, results_cli):
    """sc("record", file, ...) → (exit code, stdout, stderr) with a throwaway ledger."""

    def run(*args, ledger=None):
        return results_cli(*args, ledger_dir=tmp_path / "ledger", ledger=ledger)

    return run


def write(tmp_path, name, draft) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(draft))
    return str(path)


def snap(name="h100-single") -> list[str]:
    return ["--snapshot", str(snapshot_path(name))]


def test_record_list_show_json(sc, tmp_path):
    code, out, err = sc("record", write(tmp_path, "r.json", full_draft()), *snap(), "--json")
    assert code == 0, err
    stored = json.loads(out)
    assert set(stored) == {"id", "path", "candidate", "evidence"} and stored["evidence"] == "smoke"
    assert os.path.isfile(stored["path"])
    code, out, _ = sc("list", "--json")
    assert json.loads(out) == [stored]
    code, out, _ = sc("show", stored["id"][:8], "--json")
    shown = json.loads(out)
    assert shown["digest"].endswith(shown["digest"][7:]) and shown["profile"]["verdict"] == "ok"
    assert shown["snapshot"]["accelerators"]["gpus"][0]["name"]
    code, out, _ = sc("show", stored["id"])
    assert "topic      inference/qwen2.5-0.5b-latency" in out and "latency_p50_ms = 41.2 ms" in out


def test_record_human_output_names_the_candidate(sc, tmp_path):
    code, out, _ = sc("record", write(tmp_path, "a.json", full_draft()), *snap())
    assert code == 0 and "new candidate" in out
    code, out, _ = sc(
        "record", write(tmp_path, "b.json", full_draft(run_label="again")), *snap("vllm-011-h100")
    )
    assert "run 2 of this candidate" in out


def test_unproven_claim_is_refused_with_what_is_missing(sc, tmp_path):
    code, out, err = sc(
        "record", write(tmp_path, "r.json", full_draft(evidence="measured")), *snap(), "--json"
    )
    assert code == 1 and out == ""
    assert "refused" in err and "missing" in err and "raw log" in err
    assert sc("list", "--json")[1].strip() == "[]"


def test_bad_input_is_one_line_and_exit_2(sc, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"topic": "x", ')
    code, out, err = sc("record", str(bad), *snap())
    assert (
        code == 2
        and "truncated JSON" in err
        and "Traceback" not in err
        and len(err.strip().splitlines()) == 1
    )
    code, _, err = sc("record", write(tmp_path, "p.json", full_draft(profile="NO-SUCH")), *snap())
    assert code == 2 and "NO-SUCH" in err
    code, _, err = sc("show", "deadbeef")
    assert code == 2 and "not in the ledger" in err


def test_validate_per_field_and_exit_codes(sc, tmp_path):
    good = write(tmp_path, "good.json", full_draft())
    bad = write(tmp_path, "bad.json", full_draft(**{"model.revision": "main", "status": "failed"}))
    code, out, _ = sc("validate", good)
    assert code == 0 and out.strip().endswith("ok (draft)")
    code, out, _ = sc("validate", good, bad)
    assert code == 1
    assert (
        "  model.revision: expected 40 lowercase hex characters (a commit, not a branch name), got 'main'"
        in out
    )
    assert "  failure_reason: required when status is 'failed'" in out
    code, out, _ = sc("validate", str(tmp_path / "missing.json"), "--json")
    assert code == 2 and json.loads(out)[0]["unreadable"] is True


def test_validate_the_ledger_reports_tampered_and_corrupt_records(sc, tmp_path):
    a = json.loads(sc("record", write(tmp_path, "a.json", full_draft()), *snap(), "--json")[1])
    b = json.loads(sc("record", write(tmp_path, "b.json", full_draft(run_label="b")), *snap(), "--json")[1])
    assert sc("validate")[0] == 0
    data = json.loads(open(a["path"]).read())
    data["run_label"] = "edited"
    open(a["path"], "w").write(json.dumps(data))
    open(b["path"], "w").write("garbage")
    code, out, _ = sc("validate")
    assert code == 1 and "tampered" in out and "not JSON: starts with 'garbage'" in out
    code, out, err = sc("list")  # never fatal: both skipped, each named once
    assert code == 0 and "no records" in out and err.count("skipped") == 2


def test_diff_answers_why_and_whether_comparable(sc, tmp_path):
    sdpa = json.loads(sc("record", write(tmp_path, "a.json", full_draft()), *snap(), "--json")[1])
    fa2 = full_draft(
        run_label="fa2",
        **{
            "backend.args.attn_implementation": "flash_attention_2",
            "metrics.latency_p50_ms": {"value": 35.0, "unit": "ms", "repetitions": [34.8, 35.0, 35.3]},
        },
    )
    fa2 = json.loads(sc("record", write(tmp_path, "b.json", fa2), *snap("vllm-011-h100"), "--json")[1])
    code, out, _ = sc("diff", sdpa["id"], fa2["id"])
    assert code == 1 and "NOT comparable" in out and "  - backend.args.attn_implementation" in out
    assert "latency_p50_ms: 41.2 → 35 ms  (-15.0%)" in out
    assert "cpu: AMD EPYC 9454 48-Core Processor → Intel(R) Xeon(R) Platinum 8468" in out
    code, out, _ = sc(
        "diff", sdpa["id"], fa2["id"], "--varying", "backend.args.attn_implementation", "--json"
    )
    d = json.loads(out)
    assert code == 0 and d["comparable"] is True and d["blocking"] == []
    # a second difference that is not under test breaks comparability, and is named
    bf = full_draft(
        run_label="fa2-fp16",
        **{"backend.args.attn_implementation": "flash_attention_2", "model.dtype": "float16"},
    )
    bf = json.loads(sc("record", write(tmp_path, "c.json", bf), *snap(), "--json")[1])
    code, out, _ = sc("diff", sdpa["id"], bf["id"], "--varying", "backend.args.attn_implementation")
    assert (
        code == 1
        and "  - model.dtype" in out
        and "backend.args.attn_implementation: sdpa → flash_attention_2  (under test)" in out
    )


def test_diff_hardware_must_match(sc, tmp_path):
    a = json.loads(sc("record", write(tmp_path, "a.json", full_draft()), *snap(), "--json")[1])
    b = json.loads(
        sc(
            "record",
            write(tmp_path, "b.json", full_draft(run_label="8x")),
            *snap("multi-gpu-8xa100"),
            "--json",
        )[1]
    )
    code, out, _ = sc("diff", a["id"], b["id"], "--json")
    d = json.loads(out)
    assert code == 1 and d["blocking"] == ["hardware"]
    assert [c for c in d["identity"] if c["field"] == "hardware"][0]["b"].startswith("8x NVIDIA A100")


def test_promote_decide_assets_reindex(sc, tmp_path, raw_log):
    rec = json.loads(sc("record", write(tmp_path, "a.json", full_draft(raw_log)), *snap(), "--json")[1])
    code, _, err = sc("promote", rec["id"], "--to", "reproduced")
    assert code == 1 and "an independent run" in err
    code, out, _ = sc("promote", rec["id"], "--to", "measured", "--json")
    assert code == 0 and json.loads(out)["evidence"] == "measured"
    code, out, _ = sc(
        "decide", "inference/qwen2.5-0.5b-latency", "baseline-sdpa", "--decision", "keep sdpa | default"
    )
    assert code == 0 and "decision" in out
    code, out, _ = sc("assets")
    lines = out.splitlines()
    assert lines[0] == "| RUN_LABEL | topic | result path | evidence level | current decision |"
    assert lines[2].startswith("| baseline-sdpa | inference/qwen2.5-0.5b-latency | `ledger/records/")
    assert lines[2].endswith("| measured | keep sdpa \\| default |")
    os.remove(tmp_path / "ledger" / "ledger.sqlite")
    code, out, _ = sc("reindex", "--json")
    assert json.loads(out) == {"records": 1, "events": 2, "skipped": 0}
    assert json.loads(sc("list", "--json")[1])[0]["evidence"] == "measured"


@pytest.mark.postgres
def test_ledger_in_postgresql_via_dsn(sc, tmp_path, pg_ledger):
    url = pg_ledger.index.url
    rec = json.loads(sc("record", write(tmp_path, "a.json", full_draft()), *snap(), "--json", ledger=url)[1])
    assert json.loads(sc("list", "--json", ledger=url)[1]) == [rec]
    assert not (tmp_path / "ledger" / "ledger.sqlite").exists()  # the index went to PostgreSQL
    assert pg_ledger.index.query("SELECT count(*) FROM records") == [(1,)]


def test_unreachable_postgresql_is_a_one_line_error(sc, tmp_path):
    code, _, err = sc("list", ledger="postgresql://nobody:secret@127.0.0.1:9/none")
    assert code == 2 and "cannot connect" in err and "secret" not in err


@pytest.mark.slow
def test_record_takes_a_live_snapshot_without_snapshot_file(sc, tmp_path):
    code, out, err = sc(
        "record",
        write(tmp_path, "r.json", full_draft(profile="LAB-CPU", **{"backend.version": "0"})),
        "--json",
    )
    assert code == 0, err
    shown = json.loads(sc("show", json.loads(out)["id"], "--json")[1])
    assert shown["snapshot"]["tool"]["command"] == "live"
    assert shown["snapshot"]["python"]["executable"]


def test_record_accepts_a_pasted_collect_env_as_its_environment(sc, tmp_path):
    from pathlib import Path

    paste = Path(__file__).parents[1] / "data" / "collect_env" / "torch18-a100-mig.txt"
    code, out, err = sc(
        "record",
        write(tmp_path, "r.json", full_draft(profile="LAB-CPU")),
        "--from-collect-env",
        str(paste),
        "--json",
    )
    assert code == 0, err
    shown = json.loads(sc("show", json.loads(out)["id"], "--json")[1])
    assert shown["snapshot"]["tool"]["command"] == "collect_env"
    code, _, err = sc(
        "record", write(tmp_path, "r2.json", full_draft()), "--from-collect-env", str(paste), *snap()
    )
    assert code == 2 and "cannot be combined" in err
