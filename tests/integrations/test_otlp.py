"""OTLP: the preflight verdicts as OpenTelemetry gauges, read back through the SDK's in-memory
reader (no collector, no network)."""

from __future__ import annotations

import pytest

from stackcheck.integrations.otlp import export_report
from stackcheck.models.finding import CheckResult, Report
from tests.integrations.conftest import SECRET_TOKEN, need


def points(reader) -> dict[str, list[tuple[dict, float]]]:
    out: dict[str, list[tuple[dict, float]]] = {}
    for rm in reader.get_metrics_data().resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                out[metric.name] = sorted(
                    ((dict(p.attributes), p.value) for p in metric.data.data_points),
                    key=lambda x: sorted(x[0].items()),
                )
    return out


def test_verdicts_and_facts_as_gauges(secret_snapshot):
    need("opentelemetry.sdk.metrics", "otlp")
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    secret_snapshot.accelerators.driver_version = f"token={SECRET_TOKEN}"
    report = Report(
        profile="LAB-GPU",
        verdict="blocked",
        checks=[
            CheckResult(id="PKG001", title="t", verdict="blocked", subject="a"),
            CheckResult(id="PKG001", title="t", verdict="warning", subject="b"),
            CheckResult(id="PY001", title="t", verdict="ok"),
        ],
    )
    export_report(report, secret_snapshot, meter_provider=provider)
    got = points(reader)
    assert got["stackcheck.preflight.verdict"] == [
        ({"profile": "LAB-GPU", "verdict": "blocked"}, 1),
        ({"profile": "LAB-GPU", "verdict": "error"}, 0),
        ({"profile": "LAB-GPU", "verdict": "ok"}, 0),
        ({"profile": "LAB-GPU", "verdict": "warning"}, 0),
    ]
    assert got["stackcheck.check.severity"] == [
        ({"check": "PKG001", "profile": "LAB-GPU"}, 2),
        ({"check": "PY001", "profile": "LAB-GPU"}, 0),
    ]
    assert got["stackcheck.gpus"] == [({"profile": "LAB-GPU"}, 1)]
    ((info, one),) = got["stackcheck.environment.info"]
    assert one == 1
    assert info["failing_checks"] == "PKG001"
    assert info["hardware"] == "1x NVIDIA H100 80GB HBM3" and info["package.transformers"] == "4.57.1"
    assert info["driver"] == "token=<redacted>"
    assert SECRET_TOKEN not in repr(got)
    provider.shutdown()


def test_without_the_sdk_it_is_one_line(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_otel(name, *args, **kwargs):
        if name.startswith("opentelemetry"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_otel)
    from stackcheck.errors import InputError

    with pytest.raises(
        InputError, match=r"^OTLP export needs opentelemetry-sdk: pip install 'stackcheck\[otlp\]'$"
    ):
        export_report(Report(profile="P"))
