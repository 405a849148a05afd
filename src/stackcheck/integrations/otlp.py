"""Preflight verdicts as OpenTelemetry metrics (``pip install 'stackcheck[otlp]'``): the same
facts as the Prometheus textfile, pushed through an OTLP exporter where a collector takes
them. The key versions travel as resource attributes, every value redacted."""

from __future__ import annotations

from typing import Any

from stackcheck.errors import InputError
from stackcheck.models.finding import VERDICTS, Report, severity
from stackcheck.models.snapshot import Snapshot

__all__ = ["export_report"]

METER = "stackcheck"


def export_report(report: Report, snapshot: Snapshot | None = None, *, meter_provider: Any = None) -> None:
    """Record ``report`` (and the key facts of ``snapshot``) as gauges and flush them.
    ``meter_provider``: an opentelemetry-sdk ``MeterProvider`` (default: one with an OTLP/HTTP
    exporter configured by the standard ``OTEL_EXPORTER_OTLP_*`` variables, shut down after)."""
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.resources import Resource
    except ImportError:
        raise InputError("OTLP export needs opentelemetry-sdk: pip install 'stackcheck[otlp]'") from None
    from stackcheck.integrations.facts import key_versions, verdict_facts

    own = meter_provider is None
    if own:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

        attrs = {"service.name": "stackcheck"}
        if snapshot is not None:
            attrs.update({f"stackcheck.{k}": v for k, v in key_versions(snapshot).items()})
        reader = PeriodicExportingMetricReader(OTLPMetricExporter())
        meter_provider = MeterProvider(resource=Resource.create(attrs), metric_readers=[reader])
    meter = meter_provider.get_meter(METER)
    profile = report.profile or ""
    verdict = meter.create_gauge("stackcheck.preflight.verdict", description="1 for the report's verdict")
    for v in VERDICTS:
        if v != "skipped":
            verdict.set(int(report.verdict == v), {"profile": profile, "verdict": v})
    checks = meter.create_gauge(
        "stackcheck.check.severity", description="worst verdict: 0 ok/skipped, 1 warning, 2 blocked, 3 error"
    )
    worst: dict[str, int] = {}
    for c in report.checks:
        worst[c.id] = max(worst.get(c.id, 0), severity(c.verdict))
    for cid, s in sorted(worst.items()):
        checks.set(s, {"profile": profile, "check": cid})
    facts = verdict_facts(report)
    info = meter.create_gauge("stackcheck.environment.info", description="key versions of the environment")
    labels = {"profile": profile, "failing_checks": facts["preflight.failing_checks"]}
    if snapshot is not None:
        labels.update(key_versions(snapshot))
        gpus = meter.create_gauge("stackcheck.gpus", description="visible GPUs")
        gpus.set(len(snapshot.visible_gpus()), {"profile": profile})
    info.set(1, labels)
    meter_provider.force_flush()
    if own:
        meter_provider.shutdown()
