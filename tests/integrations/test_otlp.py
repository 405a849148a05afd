"""OTLP: the preflight verdicts as OpenTelemetry gauges, read back through the SDK's in-memory
reader (no collector, no network)."""

from __future__ import annotations

import pytest

from stackcheck.integrations.otlp import export_report
from stackcheck.models.finding import CheckResult, Report
from tests.factories import SNAPSHOTS
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


@pytest.fixture
def collector():
    """A stand-in OTLP/HTTP collector on a loopback port: the request bodies it received."""
    import http.server
    import threading

    bodies: list[bytes] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802  (the http.server API)
            bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1/metrics", bodies
    server.shutdown()
    server.server_close()


def test_preflight_otlp_pushes_to_the_collector(collector, cli_main, registry_file, monkeypatch):
    need("opentelemetry.exporter.otlp.proto.http.metric_exporter", "otlp")
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

    url, bodies = collector
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", url)
    code, _, err = cli_main(
        "preflight", "-p", "LAB-BROKEN", "--registry", str(registry_file),
        "--snapshot", str(SNAPSHOTS / "h100-single.json"), "--otlp", "--json",
    )  # fmt: skip
    assert (code, err) == (1, "")
    (body,) = bodies
    request = ExportMetricsServiceRequest()
    request.ParseFromString(body)
    (resource,) = request.resource_metrics
    attrs = {a.key: a.value.string_value for a in resource.resource.attributes}
    assert attrs["service.name"] == "stackcheck"
    assert attrs["stackcheck.hardware"] == "1x NVIDIA H100 80GB HBM3"
    assert attrs["stackcheck.package.transformers"] == "4.57.1"
    metrics = {m.name: m for scope in resource.scope_metrics for m in scope.metrics}
    assert sorted(metrics) == [
        "stackcheck.check.severity",
        "stackcheck.environment.info",
        "stackcheck.gpus",
        "stackcheck.preflight.verdict",
    ]

    def points(name):
        return {
            tuple(sorted((a.key, a.value.string_value) for a in p.attributes)): p.as_int
            for p in metrics[name].gauge.data_points
        }

    assert points("stackcheck.preflight.verdict")[(("profile", "LAB-BROKEN"), ("verdict", "blocked"))] == 1
    assert points("stackcheck.check.severity")[(("check", "PKG001"), ("profile", "LAB-BROKEN"))] == 2


def test_preflight_otlp_undelivered_is_a_warning(cli_main, registry_file, monkeypatch):
    need("opentelemetry.exporter.otlp.proto.http.metric_exporter", "otlp")
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", f"http://127.0.0.1:{port}/v1/metrics")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "2")
    code, out, err = cli_main(
        "preflight", "-p", "LAB-CPU", "--registry", str(registry_file),
        "--snapshot", str(SNAPSHOTS / "cpu-laptop.json"), "--otlp", "--json",
    )  # fmt: skip
    assert code == 0 and out.startswith("{")
    assert err.splitlines()[-1] == (
        "stackcheck: warning: the OTLP export was not delivered (see OTEL_EXPORTER_OTLP_*)"
    )
