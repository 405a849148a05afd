"""The environment a CI job ran in, as flat facts: ``python``, ``os``, ``platform``, ``arch``,
``torch_cuda``, ``driver``, ``gpu`` and ``pkg:<name>`` (a distribution's version).

Sources, strongest first: the ``runs.jsonl`` sidecar, a snapshot JSON beside the log, what
the log itself prints (a collect_env block, ``pip freeze`` lines, pip's "Successfully
installed …", pytest's ``platform linux -- Python 3.11.7`` header, the runner image), and
last the matrix job name (``test (ubuntu-22.04, 3.11, torch-2.3)``). A stronger source
overrides a weaker one fact by fact. A job's *cell* is its set of facts.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping

from stackcheck.models.snapshot import Snapshot, normalize_name

__all__ = [
    "EnvWatcher",
    "cell_of",
    "facts_from_env",
    "facts_from_job_name",
    "facts_from_snapshot",
    "platform_of",
]

KNOWN = ("python", "os", "platform", "arch", "torch_cuda", "driver", "gpu")
PKG = "pkg:"
MAX_FACTS = 2000
COLLECT_ENV_LINES = 400

_OS = re.compile(
    r"^(?:ubuntu|debian|fedora|centos|rocky|almalinux|alma|alpine|arch|rhel|opensuse|manylinux\w*|"
    r"linux|windows|win|macos|osx|mac|darwin)(?:[-_ ]?[\w.]+)?$",
    re.I,
)
_PYTHON = re.compile(r"^(?:py|python|cp|cpython|pypy)?[-_ ]?(2\.7|3\.\d{1,2}|3\d{1,2})(?:\.\d+)?t?$", re.I)
_CUDA = re.compile(r"^(?:cu|cuda)[-_ ]?(\d+(?:\.\d+)?)$", re.I)
_ARCH = re.compile(r"^(?:x64|x86_64|amd64|aarch64|arm64|x86|i686|ppc64le|s390x|universal2)$", re.I)
_PACKAGE = re.compile(r"^([A-Za-z][\w.-]*?)[-_=@ ]+v?(\d+(?:\.\d+)*[\w.+-]*)$")

_PYTEST_HEADER = re.compile(r"^platform (\w+) -- Python (\d+\.\d+\.\d+[\w+]*)")
_INSTALLED = re.compile(r"^Successfully installed (.+)$")
_FREEZE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;=]+)$")
_RUNNER_IMAGE = re.compile(r"^Image: ([\w.-]+)$")
_SETUP_PYTHON = re.compile(r"^Successfully set up (?:CPython|PyPy) \((\d+\.\d+\.\d+)")
_COLLECT_ENV = ("Collecting environment information", "PyTorch version: ")


def platform_of(os_value: str) -> str:
    """``ubuntu-22.04`` → ``linux``, ``windows-latest`` → ``windows``, ``macos-14`` → ``darwin``."""
    v = os_value.lower()
    if v.startswith(("win",)):
        return "windows"
    if v.startswith(("mac", "osx", "darwin")):
        return "darwin"
    return "linux" if v else ""


def _python_version(text: str) -> str:
    m = _PYTHON.match(text)
    if not m:
        return ""
    v = m.group(1)
    return v if "." in v else f"{v[0]}.{v[1:]}"


def _classify(item: str) -> tuple[str, str] | None:
    """A matrix value → (fact, value), or None when it is none of the known kinds."""
    item = item.strip().strip("'\"")
    if not item:
        return None
    if _OS.match(item):
        return "os", item.lower()
    if _ARCH.match(item):
        return "arch", item.lower()
    m = _CUDA.match(item)
    if m:
        v = m.group(1)
        return "torch_cuda", v if "." in v else f"{v[:-1]}.{v[-1]}"
    py = _python_version(item)
    if py:
        return "python", py
    m = _PACKAGE.match(item)
    if m:
        return PKG + normalize_name(m.group(1)), m.group(2)
    return None


def facts_from_job_name(name: str) -> tuple[str, dict[str, str]]:
    """(job family, facts) of a job name. ``test (ubuntu-22.04, 3.11, torch-2.3)`` → family
    ``test``; ``Test 3.10 x64 wheels for ubuntu-latest`` → family ``Test <python> <arch> wheels
    for <os>``. An unrecognised matrix value is kept as ``matrix.N``."""
    facts: dict[str, str] = {}
    m = re.match(r"^(.*?)\s*\(([^()]*)\)\s*$", name)
    if m and m.group(1).strip():
        for i, item in enumerate(m.group(2).split(",")):
            kind = _classify(item)
            if kind:
                facts.setdefault(kind[0], kind[1])
            elif item.strip():
                facts[f"matrix.{i}"] = item.strip()
        family = m.group(1).strip()
    else:
        words = []
        for word in name.split():
            kind = _classify(word)  # in free text only the unmistakable kinds, no package-like words
            if kind and kind[0] in ("os", "arch", "python", "torch_cuda") and kind[0] not in facts:
                facts[kind[0]] = kind[1]
                words.append(f"<{kind[0]}>")
            else:
                words.append(word)
        family = " ".join(words)
    if "os" in facts:
        facts["platform"] = platform_of(facts["os"])
    return family or name, facts


def facts_from_env(env: Mapping[str, object]) -> dict[str, str]:
    """A sidecar's ``env`` object: known facts by name, anything else a package version
    (``{"numpy": "2.0.2"}``); ``packages`` may hold a name → version object too."""
    facts: dict[str, str] = {}
    for key, value in env.items():
        if key == "packages" and isinstance(value, Mapping):
            for name, version in value.items():
                facts[PKG + normalize_name(str(name))] = str(version)
        elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
            k = str(key)
            fact = k if k in KNOWN or k.startswith(("matrix.", PKG)) else PKG + normalize_name(k)
            facts[fact] = str(value)
    if "os" in facts and "platform" not in facts:
        facts["platform"] = platform_of(facts["os"])
    return facts


def facts_from_snapshot(snap: Snapshot) -> dict[str, str]:
    facts: dict[str, str] = {}
    if snap.python and snap.python.version:
        facts["python"] = snap.python.version
    if snap.platform and snap.platform.system:
        facts["platform"] = platform_of(snap.platform.system)
        if snap.platform.machine:
            facts["arch"] = snap.platform.machine.lower()
    if snap.packages:
        for d in snap.packages.distributions[:MAX_FACTS]:
            facts[PKG + normalize_name(d.name)] = d.version
    if snap.torch and snap.torch.status == "ok":
        facts["torch_cuda"] = snap.torch.cuda or "none"
        if snap.torch.version:
            facts[PKG + "torch"] = snap.torch.version
    acc = snap.accelerators
    if acc and acc.status == "ok":
        if acc.driver_version:
            facts["driver"] = acc.driver_version
        if acc.gpus:
            facts["gpu"] = acc.gpus[0].name
    return facts


class EnvWatcher:
    """Facts the log prints, gathered line by line with bounded memory."""

    def __init__(self) -> None:
        self.facts: dict[str, str] = {}
        self._collect_env: list[str] | None = None
        self._collect_env_done = False

    def feed(self, line: str) -> None:
        if self._collect_env is not None and not self._collect_env_done:
            self._collect_env.append(line)
            if len(self._collect_env) >= COLLECT_ENV_LINES:
                self._finish_collect_env()
            return
        c = line[:1]
        if c == "p" and line.startswith("platform "):
            m = _PYTEST_HEADER.match(line)
            if m:
                self._set("platform", platform_of(m.group(1)))
                self._set("python", m.group(2))
        elif c == "S" and line.startswith("Successfully "):
            m = _INSTALLED.match(line)
            if m:
                for spec in m.group(1).split():
                    name, _, version = spec.rpartition("-")
                    if name and version[:1].isdigit():
                        self._set(PKG + normalize_name(name), version)
            else:
                m = _SETUP_PYTHON.match(line)
                if m:
                    self._set("python", m.group(1))
        elif "==" in line:
            m = _FREEZE.match(line.strip())
            if m:
                self._set(PKG + normalize_name(m.group(1)), m.group(2))
        elif c == "I" and line.startswith("Image: "):
            m = _RUNNER_IMAGE.match(line)
            if m:
                self._set("os", m.group(1).lower())
                self._set("platform", platform_of(m.group(1)))
        elif not self._collect_env_done and any(h in line for h in _COLLECT_ENV):
            self._collect_env = [line]

    def _set(self, fact: str, value: str) -> None:
        if len(self.facts) < MAX_FACTS or fact in self.facts:
            self.facts[fact] = value

    def _finish_collect_env(self) -> None:
        from stackcheck.errors import InputError
        from stackcheck.importers.collect_env import find_collect_env_block, parse_collect_env

        self._collect_env_done = True
        block = find_collect_env_block("\n".join(self._collect_env or []))
        self._collect_env = None
        if not block:
            return
        try:
            snap = parse_collect_env(block)
        except InputError:
            return  # a mangled paste: the other sources still count
        for fact, value in facts_from_snapshot(snap).items():
            self._set(fact, value)

    def finish(self) -> dict[str, str]:
        if self._collect_env is not None and not self._collect_env_done:
            self._finish_collect_env()
        return self.facts


def cell_of(facts: Mapping[str, str]) -> tuple[str, str]:
    """(cell ID, canonical JSON) of a set of facts: equal facts, equal cell."""
    text = json.dumps(dict(sorted(facts.items())), separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16], text
