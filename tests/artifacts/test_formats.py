"""ONNX and GGUF files: header facts, the installed onnxruntime asked whether it loads a model,
the onnxruntime-gpu wheel against the cuDNN it needs, GGUF architectures llama.cpp's gguf
package knows. The CLI runs in a child process (onnx, gguf and numpy stay out of this one)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.artifacts import formats
from stackcheck.artifacts.checks import Options, judge_artifact
from stackcheck.artifacts.layout import Artifact


def check(path: Path) -> tuple[int, dict[str, dict]]:
    done = subprocess.run(
        [sys.executable, "-m", "stackcheck", "artifact", "check", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, {c["id"]: c for c in json.loads(done.stdout)["checks"]}


def test_onnx_model_loads_or_is_refused_with_onnxruntimes_reason(built):
    code, f = check(built / "onnx" / "ok.onnx")
    assert code == 0
    assert f["ART040"]["evidence"] == {"ir_version": "8", "opsets": "ai.onnx 17", "producer": "test"}
    assert f["ART040"]["observed"].startswith("IR version 8, opsets ai.onnx 17 (from test): onnxruntime ")
    assert f["ART041"]["observed"].endswith(": CPUExecutionProvider")
    code, f = check(built / "onnx" / "new.onnx")
    assert code == 1 and f["ART040"]["verdict"] == "blocked"
    assert "refuses it: ONNX Runtime only *guarantees* support" in f["ART040"]["observed"]
    assert "Opset 99 is under development" in f["ART040"]["observed"]


def test_gguf_header_and_unknown_architecture(built):
    code, f = check(built / "gguf" / "tiny.gguf")
    assert code == 0
    assert f["ART050"]["observed"] == "llama, file type MOSTLY_F16, 2 tensors (1 F16, 1 F32)"
    code, f = check(built / "gguf" / "odd.gguf")
    assert code == 1 and f["ART050"]["verdict"] == "blocked"
    assert "architecture 'not-an-arch' is not among the " in f["ART050"]["observed"]


def test_bad_onnx_and_gguf_are_one_line_exit_2(tmp_path):
    for name in ("junk.onnx", "junk.gguf"):
        (tmp_path / name).write_bytes(b"\x08\xff\xff\xff garbage")
        done = subprocess.run(
            [sys.executable, "-m", "stackcheck", "artifact", "check", str(tmp_path / name)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        kind = "ONNX model" if name.endswith("onnx") else "GGUF file"
        assert done.stderr.startswith(f"stackcheck: error: {tmp_path / name}: not a readable {kind}")


@pytest.mark.parametrize(
    ("cudnn", "verdict", "observed"),
    [
        (
            {"nvidia-cudnn-cu12": "9.10.2.21"},
            "ok",
            "onnxruntime-gpu 1.22.0: CUDAExecutionProvider, "
            "CPUExecutionProvider; nvidia-cudnn-cu12 9.10.2.21",
        ),
        (
            {"nvidia-cudnn-cu12": "8.9.7.29"},
            "blocked",
            "onnxruntime-gpu 1.22.0 needs CUDA 12 and cuDNN 9; "
            "nvidia-cudnn-cu12 8.9.7.29 is installed: CUDAExecutionProvider fails to load and sessions fall "
            "back to CPU",
        ),
        (
            {},
            "warning",
            "onnxruntime-gpu 1.22.0 needs CUDA 12 and cuDNN 9; no nvidia-cudnn-cu12 wheel "
            "installed (a system cuDNN 9 on the library path serves too)",
        ),
    ],
)
def test_gpu_wheel_against_its_cudnn(monkeypatch, tmp_path, cudnn, verdict, observed):
    monkeypatch.setattr(formats, "onnxruntime_installed", lambda: ("onnxruntime-gpu", "1.22.0"))
    monkeypatch.setattr(
        formats, "ort_flavor_providers", lambda d: ["CUDAExecutionProvider", "CPUExecutionProvider"]
    )
    monkeypatch.setattr(
        formats, "installed_versions", lambda names: {k: v for k, v in cudnn.items() if k in names}
    )
    art = Artifact(
        root=tmp_path,
        onnx=[
            formats.OnnxFacts(path="m.onnx", ir_version=8, opsets={"": 17}, runtime="onnxruntime-gpu 1.22.0")
        ],
    )
    (c,) = [c for c in judge_artifact(art, None, Options()) if c.id == "ART041"]
    assert (c.verdict, c.observed) == (verdict, observed)
    if verdict != "ok":
        assert c.fix is not None and c.fix.startswith("python -m pip install 'nvidia-cudnn-cu12==9.*'")
