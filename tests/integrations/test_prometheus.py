"""``preflight --metrics-file``: node-exporter's textfile format (parsed back by
prometheus_client's own parser), written atomically, secrets redacted, bad paths one line."""

from __future__ import annotations

import os

import pytest

from stackcheck.integrations.prometheus import metrics_text
from stackcheck.models.finding import CheckResult, Report
from tests.factories import SNAPSHOTS, missing_prerequisite
from tests.integrations.conftest import SECRET_TOKEN


def families(text: str) -> dict:
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        missing_prerequisite("prometheus-client is not installed (it parses the file back)")
    return {
        f.name: {tuple(sorted(s.labels.items())): s.value for s in f.samples}
        for f in text_string_to_metric_families(text)
    }


@pytest.fixture
def registry(registry_file):
    return registry_file


def test_metrics_file_of_a_blocked_preflight(cli_main, registry, tmp_path):
    target = tmp_path / "textfile" / "stackcheck.prom"
    code, out, err = cli_main(
        "preflight",
        "-p",
        "LAB-BROKEN",
        "--registry",
        str(registry),
        "--snapshot",
        str(SNAPSHOTS / "h100-single.json"),
        "--metrics-file",
        str(target),
        "--json",
    )
    assert code == 1 and err == ""
    assert sorted(p.name for p in target.parent.iterdir()) == ["stackcheck.prom"]  # no temp file left
    got = families(target.read_text())
    verdict = got["stackcheck_preflight_verdict"]
    assert verdict == {
        (("profile", "LAB-BROKEN"), ("verdict", v)): float(v == "blocked")
        for v in ("ok", "warning", "blocked", "error")
    }
    assert got["stackcheck_check_severity"][(("check", "PKG001"), ("profile", "LAB-BROKEN"))] == 2.0
    assert got["stackcheck_check_severity"][(("check", "ISO001"), ("profile", "LAB-BROKEN"))] == 0.0
    checks = got["stackcheck_preflight_checks"]
    assert checks[(("profile", "LAB-BROKEN"), ("verdict", "blocked"))] == 1.0
    assert sum(checks.values()) == len(__import__("json").loads(out)["checks"])
    assert got["stackcheck_environment_info"] == {
        (
            ("driver", "570.172.08"),
            ("driver_cuda", "12.8"),
            ("hardware", "1x NVIDIA H100 80GB HBM3"),
            ("python", "3.12.11"),
            ("torch", "2.8.0+cu128"),
            ("torch_cuda", "12.8"),
        ): 1.0
    }
    assert got["stackcheck_gpus"] == {(): 1.0}
    assert list(got["stackcheck_preflight_timestamp_seconds"]) == [(("profile", "LAB-BROKEN"),)]


def test_metrics_file_is_readable_by_the_collector(cli_main, registry, tmp_path):
    target = tmp_path / "stackcheck.prom"
    old = os.umask(0o022)
    try:
        code, _, _ = cli_main(
            "preflight", "-p", "LAB-CPU", "--registry", str(registry), "--snapshot",
            str(SNAPSHOTS / "cpu-laptop.json"), "--metrics-file", str(target),
        )  # fmt: skip
    finally:
        os.umask(old)
    assert code == 0
    assert target.stat().st_mode & 0o777 == 0o644


def test_bad_metrics_path_is_one_line_exit_2(cli_main, registry, tmp_path):
    base = (
        "preflight",
        "-p",
        "LAB-CPU",
        "--registry",
        str(registry),
        "--snapshot",
        str(SNAPSHOTS / "cpu-laptop.json"),
    )
    code, out, err = cli_main(*base, "--metrics-file", str(tmp_path / "stackcheck.txt"))
    assert (code, out) == (2, "")
    assert err == (
        f"stackcheck: error: {tmp_path / 'stackcheck.txt'}: --metrics-file: expected a file name ending in "
        ".prom (node-exporter's textfile collector reads only *.prom)\n"
    )
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, out, err = cli_main(*base, "--metrics-file", str(blocker / "x.prom"))
    assert (code, out) == (2, "")
    assert err == (
        f"stackcheck: error: {blocker}: exists and is not a directory "
        "(expected the directory of --metrics-file)\n"
    )
    assert list(tmp_path.glob("**/*.prom")) == []


def test_label_values_are_escaped_and_redacted(secret_snapshot):
    secret_snapshot.python.version = 'odd "3.12"\\build\nline'
    secret_snapshot.accelerators.driver_version = f"token={SECRET_TOKEN}"
    report = Report(
        profile="LAB-GPU", verdict="warning", checks=[CheckResult(id="X1", title="t", verdict="warning")]
    )
    text = metrics_text(report, secret_snapshot, now=1796126527.9)
    assert SECRET_TOKEN not in text
    got = families(text)
    (labels,) = got["stackcheck_environment_info"]
    assert dict(labels)["python"] == 'odd "3.12"\\build\nline'
    assert dict(labels)["driver"] == "token=<redacted>"
    assert got["stackcheck_preflight_timestamp_seconds"] == {(("profile", "LAB-GPU"),): 1796126527.0}
    assert 'stackcheck_preflight_timestamp_seconds{profile="LAB-GPU"} 1796126527\n' in text
