"""The pytest plugin: loaded in every pytest run, idle and light without --stackcheck-bench;
with it, the suite's cases are test items and the run's files are written at the end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SHAPES = {
    "shapes": [
        {"name": "attn-t", "op": "attention", "dtype": "float32", "heads": 2, "seq_q": 8, "head_dim": 8},
        {"name": "gemm-t", "op": "gemm", "m": 8, "n": 8, "k": 8},
    ]
}
BENCH = ["--stackcheck-bench", "--stackcheck-bench-shapes", "shapes.json", "--stackcheck-bench-reps", "5"]
BACKENDS = ["sdpa-math", "sdpa-cudnn", "matmul-fp32"]


def pytest_in(path: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *args]
    return subprocess.run(
        argv, cwd=path, capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})}
    )


def test_loading_the_plugin_imports_nothing_heavy():
    code = (
        "import sys, stackcheck.bench.pytest_plugin\n"
        "print([m for m in ('torch', 'scipy', 'msgspec', 'stackcheck.bench.cases', 'stackcheck.results')"
        " if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr


def test_without_the_flag_the_plugin_is_loaded_and_does_nothing(tmp_path):
    (tmp_path / "test_user.py").write_text(
        "import sys\n"
        "def test_idle(pytestconfig):\n"
        "    plugin = pytestconfig.pluginmanager.get_plugin('stackcheck')\n"
        "    assert plugin.__name__ == 'stackcheck.bench.pytest_plugin'\n"
        "    assert pytestconfig.pluginmanager.get_plugin('stackcheck-bench-session') is None\n"
        "    heavy = ('torch', 'stackcheck.bench.pytest_session', 'stackcheck.bench.run')\n"
        "    assert [m for m in heavy if m in sys.modules] == []\n"
    )
    done = pytest_in(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout and "stackcheck bench" not in done.stdout
    assert not (tmp_path / ".stackcheck").exists()


def test_with_the_flag_cases_run_as_tests_and_the_run_is_written(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "shapes.json").write_text(json.dumps(SHAPES))
    (tmp_path / "test_user.py").write_text("def test_mine():\n    assert True\n")
    backends = [a for b in BACKENDS for a in ("--stackcheck-bench-backend", b)]
    ledger = tmp_path / "ledger"
    done = pytest_in(
        tmp_path,
        *BENCH,
        *backends,
        "--stackcheck-bench-record",
        "-rs",
        env={"STACKCHECK_LEDGER_DIR": str(ledger)},
    )
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "3 passed, 1 skipped" in out
    assert "SKIPPED [1] stackcheck-bench:1: CPU-only: no CUDA GPU here for cuDNN attention" in out
    assert "= stackcheck bench =" in out.replace("==", "=")
    assert "[1] skipped: CPU-only: no CUDA GPU here for cuDNN attention" in out
    run = json.loads((tmp_path / ".stackcheck" / "bench" / "bench.json").read_text())
    assert [(c["backend"], c["shape"], c["status"]) for c in run["cases"]] == [
        ("sdpa-math", "attn-t", "ok"),
        ("sdpa-cudnn", "attn-t", "skipped"),
        ("matmul-fp32", "gemm-t", "ok"),
    ]
    from stackcheck.results.ledger import Ledger

    with Ledger(ledger) as led:
        paths = sorted(e.record.backend.args["path"] for e in led.entries())
    assert paths == ["matmul-fp32", "sdpa-math"]

    # a baseline in which cuDNN attention ran: now skipped, that is a regression and fails the session
    baseline = dict(run, cases=[dict(run["cases"][1], status="ok", reason="", times_s=[1e-3] * 5)])
    (tmp_path / "baseline.json").write_text(json.dumps(baseline))
    again = pytest_in(
        tmp_path,
        *BENCH,
        "--stackcheck-bench-backend",
        "sdpa-cudnn",
        "--stackcheck-bench-baseline",
        "baseline.json",
    )
    assert again.returncode == 1, again.stdout + again.stderr
    assert "1 regression, 0 improvements in 1 case " in again.stdout
    why = "was ok, now skipped: CPU-only: no CUDA GPU here for cuDNN attention"
    assert f"attention/sdpa sdpa-cudnn × attn-t: {why}" in again.stdout


def test_a_bad_shape_file_is_a_usage_error(tmp_path):
    (tmp_path / "shapes.json").write_text(
        '{"shapes": [{"name": "x", "op": "attention", "heads": 3, "kv_heads": 2}]}'
    )
    done = pytest_in(tmp_path, *BENCH)
    assert done.returncode == 4, done.stdout + done.stderr
    assert done.stderr.strip() == (
        "ERROR: --stackcheck-bench: shapes.json: shapes[0].kv_heads: 2 does not divide heads (3)"
    )


def test_the_suite_refuses_to_run_under_xdist(tmp_path):
    pytest.importorskip("xdist")
    (tmp_path / "shapes.json").write_text(json.dumps(SHAPES))
    done = pytest_in(tmp_path, *BENCH, "-n", "2")
    assert done.returncode == 4, done.stdout + done.stderr
    assert done.stderr.strip() == (
        "ERROR: --stackcheck-bench times kernels: run it without -n (pytest-xdist workers would share "
        "the machine and time each other)"
    )
