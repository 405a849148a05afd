"""W&B against the real library in offline mode (WANDB_MODE=offline, everything under tmp,
never the network): log_environment and ``results export --to wandb``, read back from the
offline run files W&B writes for ``wandb sync``."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from tests.integrations.conftest import need, no_secret_under

BLOCK = 32768  # the run file is a LevelDB-style log of protobuf records in 32 KiB blocks


def run_records(path: Path) -> list:
    """The records of an offline run file (``run-ID.wandb``)."""
    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    pos, out, buf = 7, [], b""
    while pos + 7 <= len(data):
        left = BLOCK - pos % BLOCK
        if left < 7:  # a block's tail too short for a header is padding
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        buf += data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):  # a full record, or the last piece of one
            record = pb.Record()
            record.ParseFromString(buf)
            out.append(record)
            buf = b""
        elif kind == 0:
            buf = b""
    return out


def offline_runs(root: Path) -> dict[str, dict]:
    """display name → {"config": {...}, "summary": {...}, "history": [...], "artifacts": [...]}."""
    import wandb

    wandb.teardown()  # waits for W&B's service to write the run files out
    runs = {}
    for path in sorted(root.glob("wandb/offline-run-*/run-*.wandb")):
        run: dict = {"config": {}, "summary": {}, "history": [], "artifacts": [], "exit": None}
        name = ""
        for r in run_records(path):
            kind = r.WhichOneof("record_type")
            if kind == "run":
                name = r.run.display_name
                run["group"] = r.run.run_group
                run["tags"] = list(r.run.tags)
                run["config"].update({u.key: json.loads(u.value_json) for u in r.run.config.update})
            elif kind == "config":
                run["config"].update({u.key: json.loads(u.value_json) for u in r.config.update})
            elif kind == "summary":
                for u in r.summary.update:
                    key = u.key or "/".join(u.nested_key)
                    run["summary"][key] = json.loads(u.value_json)
            elif kind == "history":
                run["history"].append(
                    {i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in r.history.item}
                )
            elif kind == "artifact":
                run["artifacts"].append(
                    (r.artifact.name, r.artifact.type, [e.path for e in r.artifact.manifest.contents])
                )
            elif kind == "environment":
                run.setdefault("environment", []).append(r.environment)
            elif kind == "exit":
                run["exit"] = r.exit.exit_code
        runs[name] = run
    return runs


@pytest.fixture
def offline(tmp_path, monkeypatch):
    wandb = need("wandb", "wandb")
    root = tmp_path / "wandb-root"
    for var, sub in (
        ("WANDB_DIR", "runs"),
        ("WANDB_CACHE_DIR", "cache"),
        ("WANDB_DATA_DIR", "data"),
        ("WANDB_CONFIG_DIR", "config"),
    ):
        (root / sub).mkdir(parents=True)
        monkeypatch.setenv(var, str(root / sub))
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_DISABLE_GIT", "true")
    monkeypatch.setenv("WANDB_DISABLE_CODE", "true")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    wandb.teardown()  # W&B reads its settings once per process: read them from here
    yield root
    wandb.teardown()


def test_log_environment_in_an_offline_run(offline, secret_snapshot):
    import wandb

    from stackcheck.integrations.wandb import log_environment
    from stackcheck.models.finding import CheckResult, Report

    report = Report(
        profile="LAB-GPU", verdict="blocked", checks=[CheckResult(id="PKG001", title="t", verdict="blocked")]
    )
    run = wandb.init(
        project="course", name="train-1", settings=wandb.Settings(console="off", x_disable_stats=True)
    )
    log_environment(snapshot=secret_snapshot, report=report)
    run.finish()
    (got,) = offline_runs(offline / "runs").values()
    versions = got["config"]["stackcheck"]["versions"]
    assert versions["python"] == "3.12.11" and versions["package.transformers"] == "4.57.1"
    assert got["config"]["stackcheck"]["preflight"]["preflight.failing_checks"] == "PKG001"
    assert got["summary"]["stackcheck/preflight.verdict"] == "blocked"
    assert got["artifacts"] == [("stackcheck-snapshot", "environment", ["snapshot.json"])]
    staged = [p for p in offline.rglob("*") if p.is_file() and b'"HF_TOKEN": "<redacted>"' in p.read_bytes()]
    assert staged  # the artifact's staged copy, redacted
    assert no_secret_under(offline) == []


def test_results_export_to_wandb_offline(offline, built, cli_main):
    ledger, _, _, _, ids = built
    code, out, err = cli_main(
        "results", "export", "--to", "wandb", "--topic", "inference/qwen2.5-0.5b-latency",
        "--experiment", "course", "--ledger-dir", str(ledger), "--json",
    )  # fmt: skip
    assert (code, err) == (0, "")
    done = json.loads(out)
    assert sorted(d["record"] for d in done) == sorted([ids["baseline-sdpa"], ids["flash-attn"]])
    runs = offline_runs(offline / "runs")
    assert sorted(runs) == ["baseline-sdpa", "flash-attn"]
    flash = runs["flash-attn"]
    assert flash["group"] == "inference/qwen2.5-0.5b-latency"
    assert flash["tags"] == ["measured", "transformers", "ok"]
    assert flash["summary"]["latency_p50_ms"] == 38.0
    assert [h["latency_p50_ms.repetitions"] for h in flash["history"]] == [37.9, 38.0, 38.3]
    assert flash["config"]["stackcheck.record"] == ids["flash-attn"]
    assert flash["config"]["identity"]["backend.args.attn_implementation"] == "flash_attention_2"
    assert flash["config"]["stackcheck"]["versions"]["torch"] == "2.8.0+cu128"
    assert flash["artifacts"] == [("stackcheck-snapshot", "environment", ["snapshot.json"])]
    assert flash["exit"] == 0
    # no system metadata: the command line (it could hold a --ledger DSN's password) stays here
    assert [list(e.args) for e in flash.get("environment", [])] == []


def test_results_export_to_an_unreachable_wandb_server_is_one_line(offline, built, cli_main, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "online")
    monkeypatch.setenv("WANDB_BASE_URL", "http://127.0.0.1:1")  # port 1: refused, nothing leaves the host
    monkeypatch.setenv("WANDB_API_KEY", "0" * 40)
    monkeypatch.setenv("WANDB_INIT_TIMEOUT", "2")
    code, out, err = cli_main(
        "results", "export", "--to", "wandb", "--topic", "inference/qwen2.5-0.5b-latency",
        "--ledger-dir", str(built[0]),
    )  # fmt: skip
    assert (code, out) == (2, "")
    assert err.startswith("stackcheck: error: W&B at http://127.0.0.1:1: cannot export: ")
    assert err.count("\n") == 1 and "Traceback" not in err
