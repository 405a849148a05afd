"""MLflow against the real library (mlflow-skinny) and a local file tracking store in tmp:
log_environment inside a run, and ``results export --to mlflow`` of the ledger's records."""

from __future__ import annotations

import json

import pytest

from tests.integrations.conftest import need, no_secret_under


@pytest.fixture
def tracking(tmp_path, monkeypatch):
    mlflow = need("mlflow", "mlflow")
    store = tmp_path / "mlruns"
    # mlflow-skinny has no SQL store; the file store is MLflow's own local store (in tmp)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = store.as_uri()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    mlflow.set_tracking_uri(uri)
    yield uri, store
    mlflow.set_tracking_uri(None)


def test_log_environment_in_the_active_run(tracking, secret_snapshot):
    import mlflow

    from stackcheck.integrations.mlflow import log_environment
    from stackcheck.models.finding import CheckResult, Report

    uri, store = tracking
    report = Report(
        profile="LAB-GPU",
        verdict="warning",
        snapshot_digest="sha256:" + "1" * 64,
        checks=[
            CheckResult(id="GPU002", title="t", verdict="warning"),
            CheckResult(id="PY001", title="t", verdict="ok"),
        ],
    )
    with mlflow.start_run() as run:
        assert log_environment(snapshot=secret_snapshot, report=report) == run.info.run_id
    got = mlflow.tracking.MlflowClient(uri).get_run(run.info.run_id)
    assert got.data.params["stackcheck.python"] == "3.12.11"
    assert got.data.params["stackcheck.torch"] == "2.8.0+cu128"
    assert got.data.params["stackcheck.hardware"] == "1x NVIDIA H100 80GB HBM3"
    assert got.data.params["stackcheck.package.transformers"] == "4.57.1"
    assert {k: v for k, v in got.data.tags.items() if k.startswith("stackcheck.")} == {
        "stackcheck.preflight.profile": "LAB-GPU",
        "stackcheck.preflight.verdict": "warning",
        "stackcheck.preflight.failing_checks": "GPU002",
        "stackcheck.snapshot_digest": "sha256:" + "1" * 64,
    }
    artifacts = store / run.info.experiment_id / run.info.run_id / "artifacts" / "stackcheck"
    assert sorted(p.name for p in artifacts.iterdir()) == ["preflight.json", "snapshot.json"]
    snapshot = json.loads((artifacts / "snapshot.json").read_text())
    assert snapshot["env"]["variables"]["HF_TOKEN"] == "<redacted>"
    assert snapshot["env"]["variables"]["PIP_EXTRA_INDEX_URL"] == "https://<redacted>@pypi.example.org/simple"
    assert no_secret_under(store) == []


def test_log_environment_needs_a_run(tracking):
    from stackcheck.errors import InputError
    from stackcheck.integrations.mlflow import log_environment

    with pytest.raises(InputError, match=r"^log_environment: no active MLflow run"):
        log_environment(snapshot=object())


def test_results_export_to_mlflow(tracking, built, cli_main):
    import mlflow

    uri, store = tracking
    ledger, _, _, _, ids = built
    code, out, err = cli_main(
        "results", "export", "--to", "mlflow", "--experiment", "course", "--ledger-dir", str(ledger), "--json"
    )
    assert (code, err) == (0, "")
    done = json.loads(out)
    assert sorted(d["record"] for d in done) == sorted(ids.values())
    assert all(d["exported"] for d in done)
    client = mlflow.tracking.MlflowClient(uri)
    exp = client.get_experiment_by_name("course")
    runs = {r.info.run_name: r for r in client.search_runs([exp.experiment_id])}
    assert sorted(runs) == sorted(ids)
    hf3 = runs["hf-run3"]
    assert hf3.data.metrics == {"throughput": 700.0, "throughput.repetitions": 707.0}  # the latest step
    steps = client.get_metric_history(hf3.info.run_id, "throughput.repetitions")
    assert [(m.step, m.value) for m in steps] == [(0, 693.0), (1, 700.0), (2, 707.0)]
    assert hf3.data.tags["stackcheck.record"] == ids["hf-run3"]
    assert hf3.data.tags["stackcheck.topic"] == "bench/qwen2.5-0.5b-throughput"
    assert hf3.data.tags["stackcheck.evidence"] == "measured"
    assert hf3.data.params["backend.name"] == "transformers"
    assert hf3.data.params["backend.args.attn_implementation"] == "sdpa"
    assert hf3.data.params["model.id"] == "Qwen/Qwen2.5-0.5B-Instruct"
    assert hf3.data.params["stackcheck.torch"] == "2.8.0+cu128"
    assert hf3.info.status == "FINISHED"
    assert runs["broken"].data.tags["stackcheck.preflight.verdict"] == "blocked"
    assert runs["oom"].info.status == "FAILED" and runs["oom"].data.tags["stackcheck.status"] == "failed"
    # exported once: a second export finds every record there already
    code, out, err = cli_main(
        "results", "export", "--to", "mlflow", "--experiment", "course", "--ledger-dir", str(ledger)
    )
    assert (code, out, err) == (0, "exported 0 record(s) to mlflow course; 9 already there\n", "")
    assert len(client.search_runs([exp.experiment_id])) == 9


def test_results_export_to_an_unreachable_tracker_is_one_line_without_its_password(
    tracking, built, cli_main, monkeypatch
):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    ledger = built[0]
    password = "Tr4ck1ng-Passw0rd-5521"
    code, out, err = cli_main(
        "results",
        "export",
        "--to",
        "mlflow",
        "--tracking-uri",
        f"http://user:{password}@127.0.0.1:1/",  # port 1: refused at once, nothing leaves the host
        "--ledger-dir",
        str(ledger),
    )
    assert (code, out) == (2, "")
    assert err.startswith("stackcheck: error: MLflow at http://<redacted>@127.0.0.1:1/: cannot export: ")
    assert err.count("\n") == 1 and "Traceback" not in err and password not in err
