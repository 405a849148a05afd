"""ONNX and GGUF files: what their headers say, judged against what is installed.

* ONNX (ART040, ART041): the IR version and opsets from the protobuf (``onnx.load`` with
  ``load_external_data=False``: external weights are never read); whether the installed
  onnxruntime accepts them is asked of onnxruntime itself, in a child process bounded by a
  timeout (creating a CPU session parses the graph and runs nothing of the model); the
  execution providers the installed onnxruntime wheel ships against the CUDA / cuDNN wheels it
  needs (a sourced table in ``data/targets.json``).
* GGUF (ART050): architecture, file type (quantization) and tensor count from the header,
  read by llama.cpp's own ``gguf`` package; an architecture that package does not name is one
  the matching llama.cpp release cannot load.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from stackcheck.errors import InputError
from stackcheck.shellcmd import command

__all__ = ["GgufFacts", "OnnxFacts", "gguf_facts", "onnx_facts", "onnxruntime_installed"]

SESSION_TIMEOUT_S = 60.0
_ORT_DISTS = ("onnxruntime-gpu", "onnxruntime-directml", "onnxruntime-openvino", "onnxruntime")


@dataclass
class OnnxFacts:
    path: str
    ir_version: int | None = None
    opsets: dict[str, int] = field(default_factory=dict)  # domain ("" = ai.onnx) → version
    producer: str = ""
    unread: str = ""  # why the header was not read (onnx not installed)
    session_error: str | None = None  # what onnxruntime said when asked to load it
    runtime: str = ""  # "onnxruntime-gpu 1.22.0", "" when none is installed


@dataclass
class GgufFacts:
    path: str
    architecture: str = ""
    file_type: str = ""  # LlamaFileType name, e.g. MOSTLY_Q4_K_M
    tensor_count: int = 0
    tensor_types: dict[str, int] = field(default_factory=dict)
    known_architectures: int = 0  # what the installed gguf package names
    arch_known: bool = True
    unread: str = ""


def onnxruntime_installed() -> tuple[str, str] | None:
    """(distribution, version) of the installed onnxruntime wheel, the GPU flavors first."""
    for name in _ORT_DISTS:
        try:
            return name, metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def _read(path: Path, package: str, what: str, read: Callable[[Any], Any]) -> tuple[Any, str]:
    """``read(module)`` with the optional ``package`` imported: (its result, "") or, when the
    package is not installed, (None, why); a file it cannot read is a one-line InputError."""
    try:
        module = importlib.import_module(package)
    except ImportError:
        return None, f"the {package} package is not installed ({command('pip', 'install', package)})"
    try:
        return read(module), ""
    except Exception as exc:  # DecodeError, a bad magic, a truncated header …
        raise InputError(f"{path}: not a readable {what} ({type(exc).__name__}: {exc})") from None


def onnx_facts(path: Path, *, ask_runtime: bool = True) -> OnnxFacts:
    facts = OnnxFacts(path=str(path))
    model, facts.unread = _read(
        path, "onnx", "ONNX model", lambda m: m.load(str(path), load_external_data=False)
    )
    if model is None:
        return facts
    facts.ir_version = int(model.ir_version)
    facts.opsets = {o.domain or "": int(o.version) for o in model.opset_import}
    facts.producer = f"{model.producer_name} {model.producer_version}".strip()
    ort = onnxruntime_installed()
    if ort is not None:
        facts.runtime = f"{ort[0]} {ort[1]}"
        if ask_runtime:
            facts.session_error = _ask_onnxruntime(path)
    return facts


_SESSION = (
    "import sys, onnxruntime as ort\n"
    "try:\n"
    "    ort.InferenceSession(sys.argv[1], providers=['CPUExecutionProvider'])\n"
    "except Exception as exc:\n"
    "    print(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)\n"
    "    sys.exit(1)\n"
)


def _ask_onnxruntime(path: Path) -> str | None:
    from stackcheck.probe.proc import run

    done = run([sys.executable, "-c", _SESSION, str(path)], timeout=SESSION_TIMEOUT_S)
    if done.ok:
        return None
    text = done.stdout.strip() or done.error or (done.stderr.strip().splitlines() or ["failed"])[-1]
    # "[ONNXRuntimeError] : 1 : FAIL : Load model from P failed:/src/x.h:46 void f(...) WHY"
    text = re.sub(r"^.*? failed:\S+:\d+ .*?\) (?=[A-Z])", "", text, count=1)
    return text[:400]


def gguf_facts(path: Path) -> GgufFacts:
    facts = GgufFacts(path=str(path))
    reader, facts.unread = _read(path, "gguf", "GGUF file", lambda m: m.GGUFReader(str(path)))
    if reader is None:
        return facts
    import gguf

    arch = reader.get_field("general.architecture")
    if arch is not None:
        facts.architecture = bytes(arch.parts[arch.data[0]]).decode("utf-8", "replace")
    ftype = reader.get_field("general.file_type")
    if ftype is not None:
        value = int(ftype.parts[ftype.data[0]][0])
        try:
            facts.file_type = gguf.LlamaFileType(value).name
        except ValueError:
            facts.file_type = str(value)
    facts.tensor_count = len(reader.tensors)
    facts.tensor_types = dict(Counter(t.tensor_type.name for t in reader.tensors))
    names = set(gguf.MODEL_ARCH_NAMES.values())
    facts.known_architectures = len(names)
    facts.arch_known = not facts.architecture or facts.architecture in names
    return facts


def installed_versions(names: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def ort_flavor_providers(dist: str) -> list[str]:
    """The execution providers the installed onnxruntime wheel ships (its capi libraries)."""
    from stackcheck.probe.engines import onnxruntime_providers

    try:
        files = metadata.distribution(dist).locate_file("onnxruntime/capi")
    except metadata.PackageNotFoundError:
        return []
    return onnxruntime_providers(str(files), dist)


def is_onnx(name: str) -> bool:
    return name.lower().endswith(".onnx")


def is_gguf(name: str) -> bool:
    return name.lower().endswith(".gguf")
