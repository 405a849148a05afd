"""Inference and serving engines as facts: vLLM, SGLang, llama.cpp, TensorRT-LLM / TensorRT
and onnxruntime, with the identity a result records (release or commit, build variant, the
torch a wheel was built for, backends and providers, the NGC container release).

Nothing is imported. Python engines come from the distribution metadata already read for the
packages section (version, local label, Requires-Dist); onnxruntime's execution providers
from the provider libraries its wheel ships in ``onnxruntime/capi``; llama.cpp from
``llama-server --version`` (or ``llama-cli``) on PATH, bounded by a timeout, else the
``llama-cpp-python`` binding's metadata; the NGC container release from the variables NVIDIA's
containers set.
"""

from __future__ import annotations

import os
import re

from stackcheck.models.snapshot import Engine, EnginesSection, normalize_name
from stackcheck.probe.files import which

VERSION_TIMEOUT_S = 5.0
LLAMA_BINARIES = ("llama-server", "llama-cli")
# NGC containers name their release in one of these (the first set wins)
NGC_RELEASE_VARS = ("NVIDIA_PYTORCH_VERSION", "NVIDIA_TRITON_SERVER_VERSION", "NVIDIA_TENSORFLOW_VERSION")
TENSORRT_VERSION_VARS = ("TRT_VERSION", "TENSORRT_VERSION", "NV_TENSORRT_VERSION")
# wheel names → engine (TensorRT's wheels carry the CUDA major in their name)
_DISTS = {
    "vllm": "vllm",
    "sglang": "sglang",
    "tensorrt-llm": "tensorrt-llm",
    "llama-cpp-python": "llama.cpp",
}
# onnxruntime's wheels, the CPU one last: beside a GPU wheel (both own the same onnxruntime/
# package directory) the other flavor is the one that asked for it
_ORT_FLAVORS = {
    "onnxruntime-gpu": "gpu",
    "onnxruntime-directml": "directml",
    "onnxruntime-openvino": "openvino",
    "onnxruntime-qnn": "qnn",
    "onnxruntime-rocm": "rocm",
    "onnxruntime": "cpu",
}
_ORT_PROVIDERS = {  # onnxruntime_providers_<key> library → provider name
    "cuda": "CUDAExecutionProvider",
    "tensorrt": "TensorrtExecutionProvider",
    "rocm": "ROCMExecutionProvider",
    "migraphx": "MIGraphXExecutionProvider",
    "openvino": "OpenVINOExecutionProvider",
    "dnnl": "DnnlExecutionProvider",
    "qnn": "QNNExecutionProvider",
    "vitisai": "VitisAIExecutionProvider",
    "cann": "CANNExecutionProvider",
}
_BUILTIN_PROVIDERS = {"directml": ["DmlExecutionProvider"], "qnn": ["QNNExecutionProvider"]}
# Patterns, compiled (and kept by re's own cache) on first use: with no engine installed, as on
# most machines, none is needed.
_LOCAL_BUILD = r"^(cu\d+|cpu|rocm[\d.]*|xpu|tpu|hpu|neuron)$"
_LOCAL_COMMIT = r"^g([0-9a-f]{7,40})$"
_LLAMA_VERSION = r"version:\s*(\d+)\s*\(([0-9a-f]{6,40})\)"
_LLAMA_BUILT = r"built with (.+?)\s*$"
_LLAMA_BACKENDS = (
    (r"load_backend: loaded (\w+) backend", None),
    (r"ggml_cuda_init|CUDA devices?:|found \d+ CUDA devices", "CUDA"),
    (r"ggml_metal_init|Metal", "Metal"),
    (r"ggml_vulkan|Vulkan", "Vulkan"),
    (r"ggml_sycl|SYCL", "SYCL"),
    (r"HIP devices|ROCm", "ROCm"),
)


def collect(ctx) -> EnginesSection:
    dists: dict[str, dict] = {}
    for d in ctx.packages.get("distributions", []):
        if not d.get("shadowed"):
            dists.setdefault(normalize_name(d.get("name", "")), d)
    found: list[Engine] = []
    errors: list[str] = []
    container = next((os.environ[v] for v in NGC_RELEASE_VARS if os.environ.get(v)), "")
    for dist_name, engine in _DISTS.items():
        d = dists.get(dist_name)
        if d is not None and engine != "llama.cpp":
            found.append(_python_engine(engine, d, container))
    llama = _llama_binary(errors)
    if llama is None and "llama-cpp-python" in dists:
        llama = _python_engine("llama.cpp", dists["llama-cpp-python"], "")
    if llama is not None:
        found.append(llama)
    trt = _tensorrt(dists, container)
    if trt is not None:
        found.append(trt)
    for dist_name, flavor in _ORT_FLAVORS.items():
        if dist_name in dists:
            found.append(_onnxruntime(dists[dist_name], flavor))
            break
    return EnginesSection(
        status="ok" if found else "absent",
        source="metadata+subprocess",
        engines=found,
        error="; ".join(errors) or None,
    )


def split_local(version: str) -> tuple[str, str, str]:
    """``0.6.4.dev12+g1a2b3c4.cu124`` → (``0.6.4.dev12``, ``cu124``, ``1a2b3c4``): the public
    version, the build variant and the commit its local label names."""
    public, _, local = version.partition("+")
    build = commit = ""
    for part in re.split(r"[.\-_]", local) if local else ():
        if re.match(_LOCAL_BUILD, part) and not build:
            build = part
        elif (m := re.match(_LOCAL_COMMIT, part)) and not commit:
            commit = m.group(1)
    return public, build, commit


def _torch_pin(requires: list[str]) -> str:
    """The torch version a wheel requires exactly (``torch==2.8.0``), "" when it pins none."""
    for req in requires:
        m = re.match(r"\s*torch\s*==\s*([\w.+]+)", req)
        if m:
            return m.group(1)
    return ""


def _python_engine(name: str, d: dict, container: str) -> Engine:
    version, build, commit = split_local(d.get("version", ""))
    return Engine(
        name=name,
        version=version,
        build=build,
        commit=commit,
        torch=_torch_pin(d.get("requires") or []),
        container=container,
        source="metadata",
        path=d.get("location", ""),
    )


def _tensorrt(dists: dict, container: str) -> Engine | None:
    for key, d in sorted(dists.items()):
        m = re.fullmatch(r"tensorrt(-cu(\d+))?", key)
        if m:
            version, _, _ = split_local(d.get("version", ""))
            return Engine(
                name="tensorrt",
                version=version,
                build=f"cu{m.group(2)}" if m.group(2) else "",
                container=container,
                source="metadata",
                path=d.get("location", ""),
            )
    version = next((os.environ[v] for v in TENSORRT_VERSION_VARS if os.environ.get(v)), "")
    if version:
        return Engine(name="tensorrt", version=version, container=container, source="env")
    return None


def onnxruntime_providers(capi: str, dist: str) -> list[str]:
    """The execution providers of the onnxruntime wheel ``dist`` whose ``onnxruntime/capi``
    directory is ``capi``: the provider libraries it ships, the flavor's built-in ones, CPU."""
    providers = list(_BUILTIN_PROVIDERS.get(_ORT_FLAVORS.get(dist, ""), []))
    try:
        names = sorted(os.listdir(capi))
    except OSError:
        names = []
    for fname in names:
        m = re.match(r"(?:lib)?onnxruntime_providers_(\w+?)\.(?:so|dll|dylib)", fname)
        if m and m.group(1) in _ORT_PROVIDERS:
            providers.append(_ORT_PROVIDERS[m.group(1)])
    providers.append("CPUExecutionProvider")
    return list(dict.fromkeys(providers))


def _onnxruntime(d: dict, flavor: str) -> Engine:
    capi = os.path.join(d.get("location", ""), "onnxruntime", "capi")
    version, _, _ = split_local(d.get("version", ""))
    return Engine(
        name="onnxruntime",
        version=version,
        build=flavor,
        backends=onnxruntime_providers(capi, normalize_name(d.get("name", ""))),
        source="metadata+files",
        path=d.get("location", ""),
    )


def _llama_binary(errors: list[str]) -> Engine | None:
    for binary in LLAMA_BINARIES:
        path = which(binary)
        if path is None:
            continue
        from stackcheck.probe.proc import run  # here: without llama.cpp, no subprocess import

        done = run([path, "--version"], timeout=VERSION_TIMEOUT_S)
        text = done.stdout + "\n" + done.stderr
        engine = parse_llama_version(text)
        if engine is None:
            errors.append(f"{binary} --version: {done.error or 'no version line'}")
            continue
        engine.path = path
        engine.source = f"{binary} --version"
        return engine
    return None


def parse_llama_version(text: str) -> Engine | None:
    """llama.cpp's ``--version`` output (``version: 4567 (abc1234)`` / ``built with CC for
    TARGET``, plus the backend lines ggml prints while it loads) → Engine, None without a
    version line."""
    m = re.search(_LLAMA_VERSION, text)
    if m is None:
        return None
    backends: list[str] = []
    for pattern, name in _LLAMA_BACKENDS:
        for hit in re.finditer(pattern, text):
            label = name or hit.group(1)
            if label not in backends:
                backends.append(label)
    if "CPU" not in backends:
        backends.append("CPU")
    built = re.search(_LLAMA_BUILT, text, re.M)
    return Engine(
        name="llama.cpp",
        version=f"b{m.group(1)}",
        build=m.group(1),
        commit=m.group(2),
        backends=backends,
        compiler=built.group(1) if built else "",
    )
