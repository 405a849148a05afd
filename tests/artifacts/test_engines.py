"""Engines as facts: the snapshot's engines section from faked installs (dist-info
directories on PYTHONPATH, a fake llama-server on PATH, NGC variables), and ``results record``
filling backend.version / build / commit from it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec

from stackcheck.models.snapshot import Engine
from stackcheck.probe import engines
from tests.results.conftest import DELETE, catalog, full_draft, ledger, record_in, registry_file  # noqa: F401

LLAMA_OUTPUT = """\
load_backend: loaded CUDA backend from /opt/llama/libggml-cuda.so
load_backend: loaded CPU backend from /opt/llama/libggml-cpu.so
version: 4567 (1a2b3c4d)
built with cc (Ubuntu 13.2.0-23ubuntu4) 13.2.0 for x86_64-linux-gnu
"""


def dist_info(site: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    d = site / f"{name.replace('-', '_')}-{version}.dist-info"
    d.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    (d / "METADATA").write_text("\n".join(lines) + "\n\n")


def fake_llama_server(bindir: Path, body: str) -> None:
    bindir.mkdir(exist_ok=True)
    script = bindir / "llama-server"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)


def test_snapshot_engines_from_faked_installs(tmp_path):
    site = tmp_path / "site"
    dist_info(site, "vllm", "0.11.0+cu128", ("torch==2.8.0", "transformers>=4.56"))
    dist_info(site, "sglang", "0.5.3", ("torch==2.8.0; extra == 'srt'",))
    dist_info(site, "tensorrt-llm", "1.0.0", ("torch<=2.8.0,>=2.7.1",))
    dist_info(site, "tensorrt-cu12", "10.11.0.33")
    dist_info(site, "onnxruntime-gpu", "1.22.0")
    capi = site / "onnxruntime" / "capi"
    capi.mkdir(parents=True)
    for lib in (
        "libonnxruntime_providers_cuda.so",
        "libonnxruntime_providers_tensorrt.so",
        "libonnxruntime_providers_shared.so",
    ):
        (capi / lib).write_bytes(b"")
    bindir = tmp_path / "bin"
    quoted = LLAMA_OUTPUT.replace("'", "")
    fake_llama_server(bindir, f"cat >&2 <<'EOF'\n{quoted}EOF\n")
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
        "NVIDIA_PYTORCH_VERSION": "25.08",
    }
    out = subprocess.run(
        [sys.executable, "-m", "stackcheck", "snapshot", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    section = json.loads(out)["engines"]
    assert section["status"] == "ok"
    got = {
        e["name"]: {k: v for k, v in e.items() if v not in ("", []) and k != "path"}
        for e in section["engines"]
    }
    assert got == {
        "vllm": {
            "name": "vllm",
            "version": "0.11.0",
            "build": "cu128",
            "torch": "2.8.0",
            "container": "25.08",
            "source": "metadata",
        },
        "sglang": {
            "name": "sglang",
            "version": "0.5.3",
            "torch": "2.8.0",
            "container": "25.08",
            "source": "metadata",
        },
        "tensorrt-llm": {
            "name": "tensorrt-llm",
            "version": "1.0.0",
            "container": "25.08",
            "source": "metadata",
        },
        "llama.cpp": {
            "name": "llama.cpp",
            "version": "b4567",
            "build": "4567",
            "commit": "1a2b3c4d",
            "backends": ["CUDA", "CPU"],
            "compiler": "cc (Ubuntu 13.2.0-23ubuntu4) 13.2.0 for x86_64-linux-gnu",
            "source": "llama-server --version",
        },
        "tensorrt": {
            "name": "tensorrt",
            "version": "10.11.0.33",
            "build": "cu12",
            "container": "25.08",
            "source": "metadata",
        },
        "onnxruntime": {
            "name": "onnxruntime",
            "version": "1.22.0",
            "build": "gpu",
            "backends": ["CUDAExecutionProvider", "TensorrtExecutionProvider", "CPUExecutionProvider"],
            "source": "metadata+files",
        },
    }
    text = subprocess.run(
        [sys.executable, "-m", "stackcheck", "snapshot"], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "llama.cpp b4567 (4567, 1a2b3c4d, CUDA/CPU)" in text


def test_a_hanging_llama_server_is_bounded(tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    fake_llama_server(bindir, "exec /bin/sleep 60\n")
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setattr(engines, "VERSION_TIMEOUT_S", 0.3)

    class Ctx:
        packages = {"distributions": []}

    section = engines.collect(Ctx())
    assert section.engines == [] and section.status == "absent"
    assert section.error == "llama-server --version: timeout after 0.3 s"


def test_version_local_labels():
    assert engines.split_local("0.6.4.dev12+g1a2b3c4.cu124") == ("0.6.4.dev12", "cu124", "1a2b3c4")
    assert engines.split_local("0.11.0") == ("0.11.0", "", "")
    assert engines.parse_llama_version("no version here") is None


def test_results_record_fills_backend_from_engines(record_in, tmp_path):  # noqa: F811
    from tests.results.conftest import snapshot_path

    snap = json.loads(snapshot_path("h100-single").read_text())
    vllm = Engine(name="vllm", version="0.11.0", build="cu128", commit="", torch="2.8.0", source="metadata")
    snap["engines"] = {"status": "ok", "source": "metadata", "engines": [msgspec.to_builtins(vllm)]}
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(snap))
    done = record_in(full_draft(**{"backend.name": "vllm", "backend.version": DELETE}), snapshot=path)
    assert done.record.backend.version == "0.11.0"
    assert done.record.backend.build == {"variant": "cu128", "torch": "2.8.0"}
    # what the draft states is kept
    done = record_in(
        full_draft(**{"backend.name": "vllm", "backend.version": "0.11.0", "backend.build": {"x": 1}}),
        snapshot=path,
    )
    assert done.record.backend.build == {"x": 1}
