"""Weights & Biases (``pip install 'stackcheck[wandb]'``): attach the environment to a run, and
push ledger records as runs (``stackcheck results export --to wandb``). Offline mode
(``WANDB_MODE=offline``) works as W&B's own does: runs are written under ``WANDB_DIR`` and
``wandb sync`` uploads them later.

:func:`log_environment` puts the key versions and the preflight verdict in the run's config
(under ``stackcheck``) and summary, and the redacted snapshot in an artifact of type
``environment``. :func:`export_records` makes one run per record (name: its run label, group:
its topic) with its metrics, identity and tags."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from stackcheck.errors import InputError
from stackcheck.models.finding import Report
from stackcheck.models.snapshot import Snapshot

__all__ = ["export_records", "log_environment"]

ARTIFACT = "stackcheck-snapshot"


def _wandb():
    try:
        import wandb
    except ImportError:
        raise InputError("W&B export needs wandb: pip install 'stackcheck[wandb]'") from None
    return wandb


def log_environment(
    run: Any = None, *, snapshot: Snapshot | None = None, report: Report | None = None
) -> None:
    """Attach ``snapshot`` (default: the live environment's) and ``report`` to ``run`` (default
    ``wandb.run``, the run ``wandb.init`` started)."""
    wandb = _wandb()
    from stackcheck.integrations.facts import key_versions, snapshot_document, verdict_facts

    run = run if run is not None else wandb.run
    if run is None:
        raise InputError("log_environment: no W&B run (pass run=, or call wandb.init() first)")
    if snapshot is None:
        from stackcheck.environment import obtain

        snapshot = obtain()
    config: dict[str, Any] = {"versions": key_versions(snapshot)}
    if report is not None:
        verdict = verdict_facts(report)
        config["preflight"] = verdict
        run.summary["stackcheck/preflight.verdict"] = verdict["preflight.verdict"]
    run.config.update({"stackcheck": config}, allow_val_change=True)
    with tempfile.TemporaryDirectory(prefix="stackcheck-wandb-") as tmp:
        path = Path(tmp) / "snapshot.json"
        path.write_text(json.dumps(snapshot_document(snapshot), indent=1))
        artifact = wandb.Artifact(ARTIFACT, type="environment", description="stackcheck runtime snapshot")
        artifact.add_file(str(path), name="snapshot.json", policy="mutable")  # copied now
        run.log_artifact(artifact)


def export_records(entries, *, project: str = "stackcheck", entity: str | None = None) -> list[dict]:
    """One W&B run per ledger entry; ``{"record", "run", "exported"}`` each."""
    wandb = _wandb()
    try:
        return _export(wandb, entries, project, entity)
    except wandb.errors.Error as exc:  # an unreachable or refusing server: one line
        from stackcheck.integrations.facts import cannot_export

        raise cannot_export("W&B", os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai"), exc) from None


def _export(wandb, entries, project: str, entity: str | None) -> list[dict]:
    from stackcheck.integrations.facts import record_identity, record_tags
    from stackcheck.redaction import redact_value

    out = []
    for entry in entries:
        rec = redact_value(entry.record)
        tags = record_tags(entry)
        run = wandb.init(
            project=project,
            entity=entity,
            name=rec.run_label,
            group=rec.topic,
            job_type="stackcheck-record",
            tags=[tags["stackcheck.evidence"], rec.backend.name, rec.status],
            notes=rec.notes or None,
            config={"identity": record_identity(rec), **tags},
            reinit="create_new",
            # no system metadata: W&B would store this process's command line (a --ledger DSN
            # with its password), host and program; the record's own snapshot says what matters.
            # silent: W&B's own start-up lines print WANDB_BASE_URL, password included.
            settings=wandb.Settings(
                console="off",
                x_disable_stats=True,
                x_disable_meta=True,
                save_code=False,
                disable_git=True,
                silent=True,
            ),
        )
        try:
            for name, m in sorted(rec.metrics.items()):
                for i, v in enumerate(m.repetitions):
                    run.log({f"{name}.repetitions": v, "repetition": i})
            run.summary.update({name: m.value for name, m in rec.metrics.items()})
            log_environment(run, snapshot=rec.snapshot)
        finally:
            run.finish(exit_code=0 if rec.status == "ok" else 1)
        out.append({"record": tags["stackcheck.record"], "run": run.id, "exported": True})
    return out
