"""The acceptance steps that run code in the checked interpreter, and their verdicts.

Each step is a child process of the checked interpreter (``python -c SOURCE``, in a fresh
temporary directory, sanitized environment, its own timeout) that prints facts as JSON;
the verdict is decided here, from those facts, so the judgement is testable without
running anything.
"""

from __future__ import annotations

import json
import math
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from stackcheck.checks.registry import CheckSpec, by_id, declare
from stackcheck.identifiers import and_join
from stackcheck.models.finding import CheckResult
from stackcheck.models.profile import Profile
from stackcheck.probe.proc import LARGE_OUTPUT_BYTES, run
from stackcheck.shellcmd import command, join, with_note

# The steps, declared for `stackcheck explain` and the docs; their findings take these titles.
_FIX = " Fix: the step's own fix names the command for the checked interpreter."
STEPS: dict[str, CheckSpec] = by_id(
    declare(
        "ACC001",
        "NumPy computes a known answer",
        explain=(
            "A NumPy linear solve and matrix products against exact known answers, in a child process"
            " of the checked interpreter: catches a broken BLAS, a NumPy 1/2 ABI clash, a wrong "
            "OPENBLAS_CORETYPE."
        )
        + _FIX,
        command="accept",
    ),
    declare(
        "ACC002",
        "torch trains a tiny model (forward, backward, SGD)",
        explain=(
            "A tiny transformer block built from a config trains 8 SGD steps with a fixed seed: the "
            "loss must fall and every gradient be finite. Catches a torch that imports but cannot run"
            " autograd."
        )
        + _FIX,
        command="accept",
    ),
    declare(
        "ACC003",
        "GPU matmul matches the CPU",
        explain=(
            "A matmul on the GPU compared with the same product on the CPU (TF32 off). Skipped with "
            "the reason when there is no GPU or torch is a CPU build; blocked when the profile needs "
            "a GPU."
        )
        + _FIX,
        command="accept",
    ),
    declare(
        "ACC004",
        "safetensors round trip in a fresh process",
        explain=(
            "Weights saved with safetensors and loaded in a fresh process must give bit-identical "
            "outputs: proves serialization and a clean second start."
        )
        + _FIX,
        command="accept",
    ),
    declare(
        "ACC005",
        "version report written",
        explain=("The version report (snapshot.json and a readable summary.txt) written atomically to --out.")
        + _FIX,
        command="accept",
    ),
    declare(
        "ACC006",
        "repository hygiene",
        explain="The hygiene scan of the enclosing repository (see HYG001–HYG007)." + _FIX,
        command="accept",
    ),
    declare(
        "ACC007",
        "profile preflight",
        explain=("The preflight of --profile, so acceptance and the experiment's needs are judged together.")
        + _FIX,
        command="accept",
    ),
    declare(
        "ACC008",
        "ONNX export runs in onnxruntime like torch",
        explain=(
            "Only when the checked interpreter has torch, onnx and onnxruntime installed: a tiny "
            "model exported with torch.onnx.export (opset 17), checked with onnx.checker and run in "
            "an onnxruntime CPU session must give the torch output (max |diff| <= 1e-4). Catches an "
            "onnx / onnxruntime / torch combination that exports what the runtime cannot run."
        )
        + _FIX,
        command="accept",
    ),
)
# Steps that run only where their packages are installed (the standard stack keeps its seven):
# each needs one distribution of every group.
OPTIONAL_STEPS = {
    "ACC008": (("torch",), ("onnx",), ("onnxruntime", "onnxruntime-gpu", "onnxruntime-directml")),
}
ONNX_TOLERANCE = 1e-4  # float32, another kernel order


def optional_steps(snapshot) -> list[str]:
    """The optional steps whose packages the checked interpreter's snapshot has."""
    return [
        k
        for k, groups in OPTIONAL_STEPS.items()
        if all(any(snapshot.distribution(d) for d in group) for group in groups)
    ]


TITLES = {i: spec.title for i, spec in STEPS.items()}

# The tiny model every torch step builds: one transformer encoder block + a linear head.
MODEL_CONFIG = {
    "d_model": 32,
    "n_heads": 4,
    "d_ff": 64,
    "seq": 8,
    "batch": 16,
    "d_out": 4,
    "seed": 0,
    "steps": 8,
    "lr": 0.05,
    "gpu_n": 1024,
}
NUMPY_TOLERANCE = 1e-9  # the NumPy answers are exact in float64
GPU_RELATIVE_TOLERANCE = 1e-3  # fp32 sums in another order (TF32 is switched off)


def _source(name: str) -> str:
    return (Path(__file__).parent / name).read_text(encoding="utf-8")


DEFAULT_TIMEOUT_S = 300.0


@dataclass
class ChildRun:
    facts: dict | None  # the JSON the child printed, None when it printed none
    error: str | None  # why there are no facts: "timeout after 300 s", "exit 1: ImportError: …"
    log: str  # stdout and stderr, kept as evidence
    seconds: float
    timed_out: bool = False  # killed at its time limit


def run_child(python: str, script: str, args: list[str], *, timeout: float, workdir: str) -> ChildRun:
    start = time.monotonic()
    done = run(
        [python, "-c", _source(script), *args], timeout=timeout, cwd=workdir, max_output=LARGE_OUTPUT_BYTES
    )
    seconds = time.monotonic() - start
    log = f"$ {shlex.quote(python)} -c <{script}> {join(args)}\n--- stdout\n{done.stdout}"
    log += f"--- stderr\n{done.stderr}"
    if done.returncode is None:
        return ChildRun(None, done.error, log, seconds, timed_out=(done.error or "").startswith("timeout"))
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    facts = None
    if done.returncode == 0 and lines:
        try:
            facts = json.loads(lines[-1])
        except ValueError:
            pass
    if not isinstance(facts, dict):
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return ChildRun(None, f"exit {done.returncode}: {tail}", log, seconds)
    return ChildRun(facts, None, log, seconds)


def requirement_names(profile: Profile) -> dict[str, str]:
    """Canonical package name → the profile's requirement text (or the module it imports)."""
    specs: dict[str, str] = {}
    for text in profile.requirements:
        try:
            specs[canonicalize_name(Requirement(text).name)] = text
        except InvalidRequirement:
            continue
    for module in profile.required_modules:
        specs.setdefault(canonicalize_name(module), module)
    return specs


class Needs:
    """Which packages the acceptance insists on. Without a profile: the standard stack
    (numpy, torch, safetensors); with one: what its requirements and required modules name.
    Also what a fix needs to know: the checked interpreter, how many GPUs the machine showed,
    and the ``stackcheck accept`` options to rerun with (``rerun``, ``timeout``)."""

    def __init__(
        self,
        profile: Profile | None,
        pip_install,
        python: str | None = None,
        *,
        gpus: int = 0,
        rerun: tuple[str, ...] = (),
        timeout: float = DEFAULT_TIMEOUT_S,
    ):
        self.profile = profile
        self.pip_install = pip_install  # (requirement, …) → paste-able command
        self.python = python  # the checked interpreter, for the stackcheck commands of fixes
        self.gpus = gpus  # visible GPUs in the snapshot
        self.rerun = rerun
        self.timeout = timeout
        self._specs = requirement_names(profile) if profile else {}

    def required(self, package: str) -> bool:
        return self.profile is None or canonicalize_name(package) in self._specs

    def gpu_required(self) -> bool:
        return bool(self.profile and self.profile.gpu and (self.profile.gpu.min_count or 1) > 0)

    def missing(self, check_id: str, packages: list[str]) -> CheckResult:
        """Blocked with one install command for all of ``packages`` when the acceptance needs
        them all; skipped when the profile does not need one of them (the step is not its)."""
        for package in packages:
            if not self.required(package):
                return _result(
                    check_id,
                    "skipped",
                    reason=f"{package} is not installed and profile {self.profile.id} does not need it",
                )
        specs = [self._specs.get(canonicalize_name(p), p) for p in packages]
        why = (
            f"profile {self.profile.id} requires {'it' if len(packages) == 1 else 'them'}"
            if self.profile
            else "the standard acceptance stack is numpy + torch + safetensors"
        )
        names = and_join(packages)
        return _result(
            check_id,
            "blocked",
            observed=f"{names} {'is' if len(packages) == 1 else 'are'} not installed",
            expected=f"{names} importable ({why})",
            fix=self.pip_install(*specs),
        )

    def timed_out(self, check_id: str, run_: ChildRun) -> CheckResult:
        longer = DEFAULT_TIMEOUT_S if self.timeout < DEFAULT_TIMEOUT_S else self.timeout * 4
        again = command("stackcheck", "accept", *self.rerun, "--timeout", f"{longer:g}")
        return _result(
            check_id,
            "blocked",
            observed=f"the step timed out after {self.timeout:g} s (--timeout {self.timeout:g})",
            expected="the step finishes within its time limit",
            fix=f"give each step more time: {again}",
            evidence={"seconds": f"{run_.seconds:.1f}"},
        )


def _result(check_id: str, verdict, **kw) -> CheckResult:
    return CheckResult(id=check_id, title=TITLES[check_id], verdict=verdict, **kw)


def _failed(check_id: str, run_: ChildRun, needs: Needs, fix: str) -> CheckResult:
    if run_.timed_out:
        return needs.timed_out(check_id, run_)
    return _result(
        check_id,
        "blocked",
        observed=f"the step failed: {run_.error}",
        expected="the step runs to the end",
        fix=fix,
        evidence={"seconds": f"{run_.seconds:.1f}"},
    )


def missing_packages(facts: dict) -> list[str]:
    """The top-level packages a child found missing (``"missing"``: a name or a list)."""
    found = facts["missing"]
    return [name.split(".")[0] for name in ([found] if isinstance(found, str) else found)]


def _unusable(check_id: str, run_: ChildRun, needs: Needs, fix: str) -> CheckResult | None:
    """The verdict when a step produced no facts or found its packages missing, else None."""
    if run_.facts is None:
        return _failed(check_id, run_, needs, fix)
    if "missing" in run_.facts:
        return needs.missing(check_id, missing_packages(run_.facts))
    return None


def judge_numpy(run_: ChildRun, needs: Needs) -> CheckResult:
    if early := _unusable("ACC001", run_, needs, needs.pip_install("--force-reinstall", "numpy")):
        return early
    f = run_.facts
    worst_name, worst_err = max(f["errors"].items(), key=lambda kv: kv[1])
    evidence = {
        "numpy": f["numpy"],
        "blas": f.get("blas") or "unknown",
        **{k: f"{v:.3g}" for k, v in f["errors"].items()},
    }
    if not math.isfinite(worst_err) or worst_err > NUMPY_TOLERANCE:
        return _result(
            "ACC001",
            "blocked",
            observed=f"{worst_name} is off by {worst_err:.3g} (numpy {f['numpy']}, BLAS {evidence['blas']})",
            expected=f"exact answers (error <= {NUMPY_TOLERANCE:g})",
            fix=needs.pip_install("--force-reinstall", "numpy"),
            evidence=evidence,
        )
    return _result(
        "ACC001",
        "ok",
        observed=f"numpy {f['numpy']} ({evidence['blas']}): solve and matmul exact",
        evidence=evidence,
    )


def judge_train(run_: ChildRun, needs: Needs) -> CheckResult:
    if early := _unusable("ACC002", run_, needs, needs.pip_install("--force-reinstall", "torch")):
        return early
    f = run_.facts
    losses = f["losses"]
    evidence = {
        "torch": f["torch"],
        "parameters": str(f["parameters"]),
        "losses": " ".join(f"{x:.4f}" for x in losses),
        "threads": str(f["threads"]),
    }
    trend = f"loss {losses[0]:.4f} -> {losses[-1]:.4f} over {len(losses)} SGD steps"
    if not all(math.isfinite(x) for x in losses) or not f["grads_finite"]:
        return _result(
            "ACC002",
            "blocked",
            observed=f"non-finite loss or gradients ({trend})",
            expected="finite loss and gradients",
            fix=needs.pip_install("--force-reinstall", "torch"),
            evidence=evidence,
        )
    if not losses[-1] < losses[0]:
        return _result(
            "ACC002",
            "blocked",
            observed=f"the loss did not decrease ({trend})",
            expected="a lower loss after a few SGD steps",
            fix=needs.pip_install("--force-reinstall", "torch"),
            evidence=evidence,
        )
    return _result(
        "ACC002",
        "ok",
        observed=f"torch {f['torch']}: {trend}, gradients finite ({f['parameters']} parameters)",
        evidence=evidence,
    )


def judge_gpu(run_: ChildRun, needs: Needs) -> CheckResult:
    deep = with_note(_deep_preflight(needs), "shows what torch sees of the GPU")
    if run_.facts and "missing" in run_.facts and not needs.gpu_required() and not needs.gpus:
        verdict = needs.missing("ACC003", missing_packages(run_.facts))
        if verdict.verdict == "skipped":
            return verdict
        who = (
            f"profile {needs.profile.id} needs no GPU"
            if needs.profile
            else "no GPU was found on this machine"
        )
        return _result("ACC003", "skipped", reason=f"{verdict.observed} (ACC002 reports it) and {who}")
    if early := _unusable("ACC003", run_, needs, deep):
        return early
    f = run_.facts
    if f.get("device") is None:
        build = (
            f"CUDA {f['cuda_build']} build"
            if f.get("cuda_build")
            else ("ROCm build" if f.get("hip_build") else "a CPU-only build")
        )
        seen = f"torch {f['torch']} ({build}) sees no GPU"
        if needs.gpu_required():
            fix = (
                with_note(
                    command("nvidia-smi"),
                    "is the driver loaded and a GPU visible? check CUDA_VISIBLE_DEVICES",
                )
                if f.get("cuda_build")
                else with_note(_deep_preflight(needs), "its CUDA checks name the torch build for this driver")
            )
            return _result(
                "ACC003",
                "blocked",
                observed=seen,
                expected=f"a GPU (profile {needs.profile.id} needs one)",
                fix=fix,
            )
        return _result("ACC003", "skipped", reason=seen)
    evidence = {k: str(f[k]) for k in ("device", "device_name", "capability", "torch") if f.get(k)}
    if "error" in f:
        return _result(
            "ACC003",
            "blocked",
            observed=f"matmul on {f.get('device_name', f['device'])} failed: {f['error']}",
            expected="the GPU runs torch kernels",
            evidence=evidence,
            fix=with_note(_deep_preflight(needs), "compares the GPU's architecture with torch's arch list"),
        )
    rel = f["max_abs_diff"] / f["max_abs"] if f["max_abs"] else math.inf
    evidence["relative_diff"] = f"{rel:.3g}"
    what = f"{f['n']}x{f['n']} fp32 matmul on {f.get('device_name', f['device'])}"
    if not f["finite"] or not rel <= GPU_RELATIVE_TOLERANCE:
        return _result(
            "ACC003",
            "blocked",
            observed=f"{what} differs from the CPU by {rel:.3g} (relative)",
            expected=f"within {GPU_RELATIVE_TOLERANCE:g}",
            fix=with_note(_deep_preflight(needs), "driver / CUDA build mismatch?"),
            evidence=evidence,
        )
    return _result(
        "ACC003", "ok", observed=f"{what} matches the CPU within {rel:.2g} (relative)", evidence=evidence
    )


def _deep_preflight(needs: Needs) -> str:
    """The checks that judge the GPU against torch's build for the checked interpreter: the
    profile's deep preflight, or without a profile the doctor (driver and architecture checks)."""
    python = ["--python", needs.python] if needs.python else []
    if needs.profile is None:
        return command("stackcheck", "doctor", *python)
    return command("stackcheck", "preflight", "--profile", needs.profile.id, *python, "--deep")


def judge_roundtrip(saved: ChildRun, loaded: ChildRun | None, needs: Needs) -> CheckResult:
    reinstall = needs.pip_install("--force-reinstall", "safetensors")
    if early := _unusable("ACC004", saved, needs, reinstall):
        return early
    if loaded is None or loaded.facts is None:
        return _failed("ACC004", loaded or saved, needs, reinstall)
    s, f = saved.facts, loaded.facts
    evidence = {
        "bytes": str(s["bytes"]),
        "tensors": str(s["tensors"]),
        "safetensors": s["safetensors"],
        "max_abs_diff": f"{f['max_abs_diff']:.3g}",
    }
    if not f["identical"] or f["tensors"] != s["tensors"]:
        return _result(
            "ACC004",
            "blocked",
            observed=f"outputs after reloading differ (max |diff| {f['max_abs_diff']:.3g}, "
            f"{f['tensors']}/{s['tensors']} tensors)",
            expected="bit-identical outputs from the reloaded weights",
            fix=reinstall,
            evidence=evidence,
        )
    return _result(
        "ACC004",
        "ok",
        observed=f"{s['tensors']} tensors ({s['bytes']} bytes, safetensors {s['safetensors']}) reloaded "
        "in a fresh process: outputs bit-identical",
        evidence=evidence,
    )


def judge_onnx(run_: ChildRun, needs: Needs) -> CheckResult:
    reinstall = needs.pip_install("--force-reinstall", "onnx", "onnxruntime")
    if early := _unusable("ACC008", run_, needs, reinstall):
        return early
    f = run_.facts
    evidence = {
        "torch": f["torch"],
        "onnx": f["onnx"],
        "onnxruntime": f["onnxruntime"],
        "opset": str(f["opset"]),
        "max_abs_diff": f"{f['max_abs_diff']:.3g}",
        "providers": " ".join(f["providers"]),
    }
    diff = f["max_abs_diff"]
    versions = f"torch {f['torch']}, onnx {f['onnx']}, onnxruntime {f['onnxruntime']}"
    if not math.isfinite(diff) or diff > ONNX_TOLERANCE:
        return _result(
            "ACC008",
            "blocked",
            observed=f"onnxruntime's output differs from torch's by {diff:.3g} ({versions})",
            expected=f"the same output (max |diff| <= {ONNX_TOLERANCE:g})",
            fix=reinstall,
            evidence=evidence,
        )
    return _result(
        "ACC008",
        "ok",
        observed=f"exported at opset {f['opset']}, checked, run in onnxruntime: "
        f"max |diff| {diff:.3g} ({versions})",
        evidence=evidence,
    )
