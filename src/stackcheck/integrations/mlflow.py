"""MLflow (``pip install 'stackcheck[mlflow]'``): attach the environment to a run, and push
ledger records as runs (``stackcheck results export --to mlflow``).

:func:`log_environment` logs the redacted snapshot as the artifact ``stackcheck/snapshot.json``,
the key versions as params ``stackcheck.*`` and the preflight verdict as tags.
:func:`export_records` creates one run per record (name: its run label) with its metrics,
identity as params, topic / evidence / record id as tags, and its snapshot; a record already
exported to the experiment (tag ``stackcheck.record``) is not exported again."""

from __future__ import annotations

from typing import Any

from stackcheck.errors import InputError
from stackcheck.models.finding import Report
from stackcheck.models.snapshot import Snapshot

__all__ = ["export_records", "log_environment"]

MAX_PARAM = 6000  # MLflow's limit on a param value (characters)


def _mlflow():
    try:
        import mlflow
    except ImportError:
        raise InputError("MLflow export needs mlflow: pip install 'stackcheck[mlflow]'") from None
    return mlflow


def log_environment(
    run: Any = None, *, snapshot: Snapshot | None = None, report: Report | None = None, client: Any = None
) -> str:
    """Attach ``snapshot`` (default: the live environment's) and ``report`` to ``run`` (an
    ``mlflow.entities.Run``, a run id, or None for the active run). Returns the run id."""
    mlflow = _mlflow()
    from mlflow.entities import Param, RunTag

    from stackcheck.integrations.facts import key_versions, snapshot_document, verdict_facts

    run_id = run if isinstance(run, str) else run.info.run_id if run is not None else _active(mlflow)
    client = client or mlflow.tracking.MlflowClient()
    if snapshot is None:
        from stackcheck.environment import obtain

        snapshot = obtain()
    client.log_dict(run_id, snapshot_document(snapshot), "stackcheck/snapshot.json")
    params = [Param(f"stackcheck.{k}", v[:MAX_PARAM]) for k, v in sorted(key_versions(snapshot).items())]
    tags = []
    if report is not None:
        import msgspec

        from stackcheck.redaction import redact_value

        tags = [RunTag(f"stackcheck.{k}", v) for k, v in verdict_facts(report).items()]
        client.log_dict(run_id, msgspec.to_builtins(redact_value(report)), "stackcheck/preflight.json")
    client.log_batch(run_id, params=params, tags=tags)
    return run_id


def _active(mlflow) -> str:
    active = mlflow.active_run()
    if active is None:
        raise InputError(
            "log_environment: no active MLflow run (pass run=, or call it inside mlflow.start_run())"
        )
    return active.info.run_id


def export_records(entries, *, experiment: str = "stackcheck", tracking_uri: str | None = None) -> list[dict]:
    """One MLflow run per ledger entry (:class:`stackcheck.results.ledger.Entry`). Returns
    ``{"record", "run", "exported"}`` per entry (``exported`` False: it was there already)."""
    mlflow = _mlflow()
    from mlflow.exceptions import MlflowException

    from stackcheck.integrations.facts import cannot_export

    try:
        return _export(mlflow, entries, experiment, tracking_uri)
    except (MlflowException, OSError) as exc:  # an unreachable or refusing tracker: one line
        raise cannot_export("MLflow", tracking_uri or mlflow.get_tracking_uri(), exc) from None


def _export(mlflow, entries, experiment: str, tracking_uri: str | None) -> list[dict]:
    from mlflow.entities import Metric, Param, RunStatus, RunTag

    from stackcheck.integrations.facts import record_identity, record_tags
    from stackcheck.redaction import redact_value

    client = mlflow.tracking.MlflowClient(tracking_uri=tracking_uri)
    found = client.get_experiment_by_name(experiment)
    exp_id = found.experiment_id if found is not None else client.create_experiment(experiment)
    out = []
    for entry in entries:
        tags = record_tags(entry)
        rid = tags["stackcheck.record"]
        done = client.search_runs(
            [exp_id], filter_string=f"tags.`stackcheck.record` = '{rid}'", max_results=1
        )
        if done:
            out.append({"record": rid, "run": done[0].info.run_id, "exported": False})
            continue
        rec = redact_value(entry.record)
        start = _millis(rec.created_at)
        run = client.create_run(exp_id, start_time=start, tags=tags, run_name=rec.run_label)
        run_id = run.info.run_id
        metrics = []
        for name, m in sorted(rec.metrics.items()):
            metrics.append(Metric(name, m.value, start, 0))
            metrics.extend(Metric(f"{name}.repetitions", v, start, i) for i, v in enumerate(m.repetitions))
        params = [Param(k, v[:MAX_PARAM]) for k, v in record_identity(rec).items()]
        client.log_batch(
            run_id, metrics=metrics, params=params, tags=[RunTag("mlflow.note.content", rec.notes)]
        )
        log_environment(run_id, snapshot=rec.snapshot, client=client)
        status = RunStatus.to_string(RunStatus.FINISHED if rec.status == "ok" else RunStatus.FAILED)
        client.set_terminated(run_id, status=status, end_time=start)
        out.append({"record": rid, "run": run_id, "exported": True})
    return out


def _millis(iso: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)
