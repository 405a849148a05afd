"""The knowledge tables (src/stackcheck/knowledge/data/) agree with the project's shared
reference tables (shared/reference/compat/*.json) on every fact both state: CUDA toolkit
drivers and minor-version floors, the torch release matrix (companions, Python window, CUDA
builds, PyPI default build, cuDNN, glibc), the default wheels' metadata, the compiled
architectures per build, and the engine pins of vLLM, SGLang and transformers.

Each comparison returns the facts where the two disagree (expected: none) and how many
facts it compared, so a comparison that silently matched nothing fails too."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.factories import SHARED

REFERENCE = SHARED / "reference" / "compat"
DATA = Path(__file__).resolve().parents[2] / "src" / "stackcheck" / "knowledge" / "data"


def load(folder: Path, name: str):
    path = folder / name
    if not path.exists():
        pytest.skip(f"shared reference {path} not present")
    return json.loads(path.read_text(encoding="utf-8"))


# ---------------------------------------------------------------- drivers
def toolkit_key(key: str, keys) -> tuple[str, str]:
    """Reference keys ('12.6', '12.6u3', '8.0.44', '11.0.1rc') → our (cuda, release). Where a
    version has a patch-level GA ('8.0.44') and a plain one ('8.0'), the plain one is GA2."""
    base, patch, rc, update = re.fullmatch(r"(\d+\.\d+)(?:\.(\d+)(rc)?)?(?:u(\d+))?", key).groups()
    if rc:
        return base, "RC"
    if update:
        return base, f"U{update}"
    if patch:
        return base, "GA"
    second = any(k.startswith(base + ".") and not k.endswith("rc") for k in keys)
    return base, "GA2" if second else "GA"


def driver_disagreements(ours: dict, references: list[dict]) -> tuple[list, int]:
    toolkits = {(t["cuda"], t["release"]): t for t in ours["toolkits"]}
    out, n = [], 0
    for ref in references:
        for column, field in (("toolkit_driver_linux", "linux"), ("toolkit_driver_windows", "windows")):
            for key, driver in ref[column].items():
                row = toolkits.get(toolkit_key(key, ref[column]))
                n += 1
                if row is None or row[field] != driver:
                    out.append((f"CUDA {key} {field} driver", driver, row and row[field]))
    floors = {str(f["cuda_major"]): f["linux"] for f in ours["mvc_floors"]}
    for major, driver in references[0].get("minor_version_compat_floor_linux", {}).items():
        n += 1
        if floors.get(major) != driver:
            out.append((f"CUDA {major}.x minor-version floor (Linux)", driver, floors.get(major)))
    return out, n


# ---------------------------------------------------------------- torch releases
def _release_line(text: str) -> str:
    return ".".join(re.match(r"\d+\.\d+", text)[0].split(".")[:2])


def _minors(spec: SpecifierSet) -> set[str]:
    return {f"3.{i}" for i in range(30) if spec.contains(f"3.{i}")}


def _cuda_of_tag(tag: str) -> str:  # cu128 → 12.8
    digits = tag[2:]
    return f"{digits[:-1]}.{digits[-1]}"


def release_disagreements(ours: dict, matrix: dict, default_wheels: list[dict]) -> tuple[list, int]:
    releases = {r["torch"]: r for r in ours["releases"]}
    out, n = [], 0

    def compare(what, theirs, mine):
        nonlocal n
        n += 1
        if theirs != mine:
            out.append((what, theirs, mine))

    for ref in matrix["rows"]:
        t = ref["torch"]
        mine = releases.get(t)
        if mine is None:
            out.append((f"torch {t}", "in the reference", None))
            continue
        compare(f"torch {t} torchvision", ref["torchvision"], mine["torchvision"])
        audio = ref["torchaudio"]
        audio = min(audio.values(), key=Version) if isinstance(audio, dict) else audio
        compare(f"torch {t} torchaudio line", _release_line(audio), mine["torchaudio"])
        if "wheel metadata only" in ref["python"]:  # only Requires-Python is known
            compare(
                f"torch {t} Requires-Python",
                SpecifierSet(ref["python"].split()[0]),
                SpecifierSet(mine["requires_python"]),
            )
        else:
            low, high = re.match(r">=(\d+\.\d+),<=(\d+\.\d+)", ref["python"]).groups()
            supported = _minors(SpecifierSet(f">={low},<={high}"))
            compare(f"torch {t} Python window", supported, _minors(SpecifierSet(mine["python"])))
            compare(
                f"torch {t} experimental Python",
                re.findall(r"\((\d+\.\d+) exp", ref["python"]),
                mine["python_experimental"],
            )
        if ref["cuda_builds"] is not None or mine["cuda_builds"] is not None:
            compare(
                f"torch {t} CUDA builds",
                sorted(ref["cuda_builds"] or []),
                sorted((mine["cuda_builds"] or []) + mine["cuda_experimental"]),
            )
        compare(f"torch {t} PyPI default CUDA", _cuda_of_tag(ref["pypi_default"]), mine["pypi_default_cuda"])
        compare(f"torch {t} cuDNN", ref["cudnn"], mine["cudnn"])
        tag = re.fullmatch(r"manylinux_(\d+)_(\d+)", ref["wheel_tag"])
        compare(
            f"torch {t} glibc floor ({ref['wheel_tag']})",
            f"{tag[1]}.{tag[2]}" if tag else None,
            mine["min_glibc"],
        )
    for wheel in default_wheels:
        t = _release_line(wheel["torch"])
        mine = releases[t]
        compare(
            f"torch {wheel['torch']} wheel Requires-Python",
            SpecifierSet(wheel["requires_python"]),
            SpecifierSet(mine["requires_python"]),
        )
        for dep in wheel["cuda_deps"]:
            req = Requirement(re.sub(r"\s*\((.*)\)$", r"\1", dep))
            pinned = str(req.specifier)[2:] if str(req.specifier).startswith("==") else None
            if pinned and req.name.startswith("nvidia-cudnn"):
                compare(f"torch {wheel['torch']} default wheel cuDNN", pinned, mine["cudnn"])
            if pinned and (req.name.startswith("nvidia-cuda-runtime") or req.name == "cuda-toolkit"):
                compare(
                    f"torch {wheel['torch']} default wheel CUDA",
                    _release_line(pinned),
                    mine["pypi_default_cuda"],
                )
    return out, n


# ---------------------------------------------------------------- compiled architectures
def _expand(span: str) -> list[str]:  # "2.1-2.3" → 2.1, 2.2, 2.3
    first, _, last = span.partition("-")
    major, low = map(int, first.split("."))
    high = int((last or first).split(".")[1])
    return [f"{major}.{m}" for m in range(low, high + 1)]


def arch_disagreements(ours: dict, reference: dict) -> tuple[list, int]:
    out, n = [], 0
    for span, table in reference["torch"].items():
        if not isinstance(table, dict):  # e.g. "2.9-2.11 cu130": "unverified (assume as 2.12)"
            continue
        rows = []
        for tag, archs in table.items():
            if tag == "src":
                continue
            if isinstance(archs, dict):  # {"aarch64": {"cu126": ...}}
                rows += [(t, a, tag) for t, a in archs.items()]
            else:
                rows.append(
                    (tag.removesuffix("_aarch64"), archs, "aarch64" if tag.endswith("_aarch64") else "x86_64")
                )
        for tag, archs, machine in rows:
            cuda = _cuda_of_tag(tag)
            items = archs.split(";")
            sass, ptx = (
                [a.removesuffix("+PTX") for a in items],
                [a.removesuffix("+PTX") for a in items if a.endswith("+PTX")],
            )
            for release in _expand(span):
                builds = [
                    b
                    for b in ours["builds"]
                    if b["cuda"] == cuda
                    and b["machine"] == machine
                    and SpecifierSet(b["torch"]).contains(f"{release}.0")
                ]
                n += 1
                mine = (builds[0]["sass"], builds[0]["ptx"]) if len(builds) == 1 else f"{len(builds)} rows"
                if mine != (sass, ptx):
                    out.append((f"torch {release} cu{tag[2:]} {machine} architectures", (sass, ptx), mine))
    return out, n


# ---------------------------------------------------------------- engine pins
_CATEGORY_NAMES = {
    "huggingface_hub": "huggingface-hub",
    "torch_extra": "torch",
    "accelerate_extra": "accelerate",
    "flashinfer": "flashinfer-python",
}
_NOT_DEPENDENCIES = {"vllm", "sglang", "requires_python", "wheel", "source", "pins"}


def _by_name(requirements: list[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for text in requirements:
        req = Requirement(re.sub(r"\s*\((.*)\)$", r" \1", text) if ";" not in text else text)
        out.setdefault(canonicalize_name(req.name), set()).add(str(req.specifier))
    return out


def pin_disagreements(ours: dict, package: str, reference: list[dict]) -> tuple[list, int]:
    rows = {p["version"]: p for p in ours["pins"] if p["package"] == package}
    out, n = [], 0
    for ref in reference:
        version = ref[package]
        mine = rows.get(version)
        if mine is None:
            out.append((f"{package} {version}", "in the reference", None))
            continue
        n += 1
        if SpecifierSet(ref["requires_python"]) != SpecifierSet(mine["requires_python"] or ""):
            out.append(
                (f"{package} {version} Requires-Python", ref["requires_python"], mine["requires_python"])
            )
        if "pins" in ref:  # one flat list: every dependency it names is stated
            theirs = _by_name(ref["pins"])
            stated = set(theirs)
        else:  # one list per dependency: an empty list states "no requirement on it"
            theirs, stated = {}, set()
            for category, reqs in ref.items():
                if category in _NOT_DEPENDENCIES or category == package or not isinstance(reqs, list):
                    continue
                theirs.update(_by_name(reqs))
                stated |= set(_by_name(reqs)) | {canonicalize_name(_CATEGORY_NAMES.get(category, category))}
        for name, specs in _by_name(mine["requires"]).items():
            if name in stated:
                n += 1
                if theirs.get(name, set()) != specs:
                    out.append(
                        (
                            f"{package} {version} requires {name}",
                            sorted(theirs.get(name, set())),
                            sorted(specs),
                        )
                    )
    return out, n


# ---------------------------------------------------------------- the tests
def test_cuda_drivers_agree():
    ours = load(DATA, "cuda_drivers.json")
    refs = [load(REFERENCE, "cuda_driver_minimums.json"), load(REFERENCE, "cuda_driver_minimums_legacy.json")]
    out, n = driver_disagreements(ours, refs)
    assert out == [] and n >= 110


# Where the shared reference itself is wrong, audited against a primary source (issue 12): the
# reference copies RELEASE.md's Python list, but PyPI publishes no cp315 wheels for torch 2.13 or
# 2.14 (pytorch/test-infra#8710), so our window ends below 3.15. Nothing else may differ.
REFERENCE_ERRORS = {
    ("torch 2.13 Python window", "3.15"),
    ("torch 2.14 Python window", "3.15"),
}


def _beyond_reference_errors(out: list) -> list:
    def known(o) -> bool:
        return (
            isinstance(o[1], set)
            and isinstance(o[2], set)
            and (o[0], "".join(sorted(o[1] ^ o[2]))) in REFERENCE_ERRORS
        )

    return [o for o in out if not known(o)]


def test_torch_release_matrix_and_default_wheels_agree():
    out, n = release_disagreements(
        load(DATA, "torch_releases.json"),
        load(REFERENCE, "torch_release_matrix.json"),
        load(REFERENCE, "torch_pypi_default_cuda.json"),
    )
    assert [o[0] for o in out] == ["torch 2.13 Python window", "torch 2.14 Python window"]
    assert _beyond_reference_errors(out) == [] and n >= 150


def test_compiled_architectures_agree():
    out, n = arch_disagreements(
        load(DATA, "torch_arch_lists.json"), load(REFERENCE, "torch_cuda_arch_lists.json")
    )
    assert out == [] and n >= 40


@pytest.mark.parametrize(
    "package, reference, at_least",
    [
        ("vllm", "vllm_pins.json", 250),
        ("sglang", "sglang_pins.json", 100),
        ("transformers", "transformers_pins.json", 150),
    ],
)
def test_engine_pins_agree(package, reference, at_least):
    out, n = pin_disagreements(load(DATA, "package_pins.json"), package, load(REFERENCE, reference))
    assert out == [] and n >= at_least


def test_the_comparisons_notice_a_planted_difference():
    """Each comparison, fed our table with one fact changed, reports exactly that fact."""
    drivers = copy.deepcopy(load(DATA, "cuda_drivers.json"))
    next(t for t in drivers["toolkits"] if (t["cuda"], t["release"]) == ("12.8", "GA"))["linux"] = "570.00"
    refs = [load(REFERENCE, "cuda_driver_minimums.json"), load(REFERENCE, "cuda_driver_minimums_legacy.json")]
    assert driver_disagreements(drivers, refs)[0] == [("CUDA 12.8 linux driver", "570.26", "570.00")]

    releases = copy.deepcopy(load(DATA, "torch_releases.json"))
    next(r for r in releases["releases"] if r["torch"] == "2.7")["min_glibc"] = None
    out, _ = release_disagreements(
        releases,
        load(REFERENCE, "torch_release_matrix.json"),
        load(REFERENCE, "torch_pypi_default_cuda.json"),
    )
    assert _beyond_reference_errors(out) == [("torch 2.7 glibc floor (manylinux_2_28)", "2.28", None)]

    archs = copy.deepcopy(load(DATA, "torch_arch_lists.json"))
    next(b for b in archs["builds"] if b["torch"] == "==2.7.*" and b["cuda"] == "12.8")["sass"].remove("12.0")
    out, _ = arch_disagreements(archs, load(REFERENCE, "torch_cuda_arch_lists.json"))
    assert [o[0] for o in out] == ["torch 2.7 cu128 x86_64 architectures"]

    pins = copy.deepcopy(load(DATA, "package_pins.json"))
    row = next(p for p in pins["pins"] if (p["package"], p["version"]) == ("vllm", "0.11.0"))
    row["requires"] = [r.replace("torch==2.8.0", "torch==2.8.1") for r in row["requires"]]
    out, _ = pin_disagreements(pins, "vllm", load(REFERENCE, "vllm_pins.json"))
    assert out == [("vllm 0.11.0 requires torch", ["==2.8.0"], ["==2.8.1"])]
