"""Preflight verdicts as OpenTelemetry metrics (``pip install 'stackcheck[otlp]'``): the same
facts as the Prometheus textfile, pushed over OTLP/HTTP where a collector takes them
(``stackcheck preflight --otlp``; the endpoint, headers and timeout come from the standard
``OTEL_EXPORTER_OTLP_*`` variables). The key versions travel as resource attributes, every
value redacted."""

from __future__ import annotations

from typing import Any

from stackcheck.errors import InputError
from stackcheck.models.finding import VERDICTS, Report, severity
from stackcheck.models.snapshot import Snapshot

__all__ = ["export_report"]

METER = "stackcheck"
TIMEOUT_S = 10.0  # the export's bound when OTEL_EXPORTER_OTLP_TIMEOUT does not say


def export_report(report: Report, snapshot: Snapshot | None = None, *, meter_provider: Any = None) -> bool:
    """Record ``report`` (and the key facts of ``snapshot``) as gauges. With ``meter_provider``
    (an opentelemetry-sdk ``MeterProvider``) they go to its readers, flushed; without, one
    export over OTLP/HTTP. Returns whether it was delivered."""
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.resources import Resource
    except ImportError:
        raise InputError("OTLP export needs opentelemetry-sdk: pip install 'stackcheck[otlp]'") from None
    if meter_provider is not None:
        _record(meter_provider.get_meter(METER), report, snapshot)
        return bool(meter_provider.force_flush())
    try:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk.metrics.export import MetricExportResult
    except ImportError:
        raise InputError(
            "OTLP export needs opentelemetry-exporter-otlp-proto-http: pip install 'stackcheck[otlp]'"
        ) from None
    import os

    from stackcheck.integrations.facts import key_versions

    attrs = {"service.name": "stackcheck"}
    if snapshot is not None:
        attrs.update({f"stackcheck.{k}": v for k, v in key_versions(snapshot).items()})
    reader = InMemoryMetricReader()
    provider = MeterProvider(resource=Resource.create(attrs), metric_readers=[reader])
    _record(provider.get_meter(METER), report, snapshot)
    data = reader.get_metrics_data()
    provider.shutdown()
    given = os.environ.get("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT") or os.environ.get(
        "OTEL_EXPORTER_OTLP_TIMEOUT"
    )
    exporter = OTLPMetricExporter(timeout=None if given else TIMEOUT_S)
    try:
        return data is not None and exporter.export(data) == MetricExportResult.SUCCESS
    finally:
        exporter.shutdown()


def _record(meter, report: Report, snapshot: Snapshot | None) -> None:
    from stackcheck.integrations.facts import key_versions, verdict_facts

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
    info = meter.create_gauge("stackcheck.environment.info", description="key versions of the environment")
    labels = {"profile": profile, "failing_checks": verdict_facts(report)["preflight.failing_checks"]}
    if snapshot is not None:
        labels.update(key_versions(snapshot))
        gpus = meter.create_gauge("stackcheck.gpus", description="visible GPUs")
        gpus.set(len(snapshot.visible_gpus()), {"profile": profile})
    info.set(1, labels)
