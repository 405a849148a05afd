"""The prepared GPU script runs (on a CPU, with --device cpu) and writes the run, the matrix,
the records and its summary; without a GPU and without --device cpu it refuses with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "device" / "bench_gpu.py"


def test_device_script_smoke_on_cpu(tmp_path):
    torch = pytest.importorskip("torch")
    out = tmp_path / "out"
    argv = [sys.executable, str(SCRIPT), str(out), "--device", "cpu", "--shapes", "tiny", "--backend", "gemm"]
    done = subprocess.run(
        [*argv, "--reps", "5", "--warmup", "1"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"] == {"ok": 3, "wrong": 0, "skipped": 2, "error": 0}
    assert sum(summary["records"].values()) == 3
    files = sorted(p.name for p in (out / "run").iterdir())
    assert files == ["bench.json", "matrix.md", "matrix.txt", "pytest-benchmark.json"]
    assert (out / "ledger" / "records").is_dir()
    if not torch.cuda.is_available():
        refused = subprocess.run(argv[:3], capture_output=True, text=True, timeout=300)
        assert refused.returncode == 2
        assert refused.stderr.strip().endswith(
            "torch sees no CUDA GPU here (use --device cpu for a smoke test)"
        )
