"""``accept``: "installed without errors" is not an environment that works. Run real work
in the checked interpreter, write the evidence to a report directory, end with one verdict."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import msgspec

from stackcheck.accept.steps import (
    DEFAULT_TIMEOUT_S,
    MODEL_CONFIG,
    OPTIONAL_STEPS,
    TITLES,
    Needs,
    judge_gpu,
    judge_numpy,
    judge_onnx,
    judge_roundtrip,
    judge_train,
    optional_steps,
    requirement_names,
    run_child,
)
from stackcheck.checks.report import build_report
from stackcheck.errors import InputError
from stackcheck.fileio import atomic_write
from stackcheck.models.finding import CheckResult, Report, internal_error
from stackcheck.models.profile import Profile
from stackcheck.models.snapshot import Snapshot
from stackcheck.redaction import redact_text, redact_value
from stackcheck.shellcmd import command

# Packages named in the readable summary when installed, besides the profile's own.
SUMMARY_PACKAGES = (
    "numpy",
    "torch",
    "torchvision",
    "torchaudio",
    "safetensors",
    "triton",
    "transformers",
    "accelerate",
    "datasets",
    "peft",
    "trl",
    "vllm",
)


@dataclass
class Acceptance:
    report: Report
    out_dir: Path

    @property
    def report_path(self) -> Path:
        return self.out_dir / "report.json"


def default_out_dir() -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return Path.cwd() / f"stackcheck-accept-{stamp}"


def accept(
    *,
    python_path: str | None = None,
    profile: Profile | None = None,
    out_dir: str | os.PathLike | None = None,
    repo: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    registry_source: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Acceptance:
    """Run every step and write report.json, snapshot.json, summary.txt, logs/ (and
    hygiene.json / preflight.json where those steps ran) into ``out_dir``. ``progress``
    gets one line per finished step (and one before the first)."""
    from stackcheck.checks.context import Context
    from stackcheck.environment import obtain_snapshot

    if repo is not None and not os.path.isdir(repo):
        what = "not a directory" if os.path.exists(repo) else "no such directory"
        raise InputError(f"--repo {repo}: {what} (expected the repository for the hygiene step)")
    out = Path(out_dir) if out_dir else default_out_dir()
    _prepare(out)
    snapshot = obtain_snapshot(
        python_path=python_path, modules=tuple(profile.required_modules) if profile else ()
    )
    python = snapshot.python.executable or sys.executable
    pip_install = Context(snapshot=snapshot, profile=profile).pip_install
    needs = Needs(
        profile,
        pip_install,
        python=snapshot.python.executable or None,
        gpus=len(snapshot.visible_gpus()),
        rerun=_rerun_options(python_path, profile, registry_source, repo),
        timeout=timeout,
    )
    logs: dict[str, str] = {}
    optional = optional_steps(snapshot)
    total = len(TITLES) - len(OPTIONAL_STEPS) + len(optional)
    step = _Progress(progress, total)
    step.start(f"accept: {total} steps in {python} (each child process up to {timeout:g} s)")

    with (
        tempfile.TemporaryDirectory(prefix="stackcheck-accept-") as work,
        ThreadPoolExecutor(max_workers=_workers()) as pool,
    ):
        config = json.dumps(MODEL_CONFIG)

        def child(script: str, *args: str):
            return run_child(python, script, list(args), timeout=timeout, workdir=work)

        def roundtrip():
            saved = child("_child_torch.py", "save", work, config)
            loaded = (
                child("_child_torch.py", "load", work, config)
                if saved.facts and "missing" not in saved.facts
                else None
            )
            logs["ACC004-safetensors"] = saved.log + ("\n" + loaded.log if loaded else "")
            result = judge_roundtrip(saved, loaded, needs)
            result.evidence.setdefault("seconds", f"{saved.seconds + (loaded.seconds if loaded else 0):.1f}")
            return result

        futures = {
            "ACC001": pool.submit(child, "_child_numpy.py"),
            "ACC002": pool.submit(child, "_child_torch.py", "train", work, config),
            "ACC003": pool.submit(child, "_child_torch.py", "gpu", work, config),
            "ACC004": pool.submit(roundtrip),
            "ACC006": pool.submit(_hygiene, repo, out),
            **({"ACC008": pool.submit(child, "_child_onnx.py", work)} if "ACC008" in optional else {}),
        }
        results: dict[str, CheckResult] = {}

        def child_step(check_id: str, judge_fn, log_name: str) -> None:
            child_run = futures[check_id].result()
            logs[log_name] = child_run.log
            results[check_id] = _guarded(check_id, judge_fn, child_run, needs)
            results[check_id].evidence.setdefault("seconds", f"{child_run.seconds:.1f}")
            step.done(results[check_id])

        child_step("ACC001", judge_numpy, "ACC001-numpy")
        child_step("ACC002", judge_train, "ACC002-torch-train")
        child_step("ACC003", judge_gpu, "ACC003-gpu-matmul")
        results["ACC004"] = step.done(_guarded("ACC004", futures["ACC004"].result))
        results["ACC006"] = step.done(_guarded("ACC006", futures["ACC006"].result))
        if "ACC008" in futures:
            child_step("ACC008", judge_onnx, "ACC008-onnx")

    for name, text in logs.items():
        atomic_write(out / "logs" / f"{name}.log", redact_text(text))
    _write_json(out / "snapshot.json", snapshot)
    results["ACC005"] = CheckResult(
        id="ACC005",
        title=TITLES["ACC005"],
        verdict="ok",
        observed=f"snapshot.json and summary.txt in {out}",
        evidence={"snapshot": str(out / "snapshot.json"), "summary": str(out / "summary.txt")},
    )
    step.done(results["ACC005"])
    results["ACC007"] = step.done(_preflight(snapshot, profile, out))
    checks = [results[k] for k in sorted(results)]
    report = build_report(
        "accept",
        checks,
        profile=profile,
        snapshot=snapshot,
        environment={
            "python": python,
            "source": snapshot.tool.command or snapshot.python.source,
            "captured_at": snapshot.tool.captured_at,
            "out": str(out),
            "report": str(out / "report.json"),
            **({"registry": registry_source} if registry_source else {}),
        },
    )
    atomic_write(out / "summary.txt", summary_text(report, snapshot, profile))
    _write_json(out / "report.json", report)
    return Acceptance(report, out)


def _guarded(check_id: str, fn, *args) -> CheckResult:
    """``fn(*args)``, or an ``error`` result naming the exception: a bug in judging one step
    fails the acceptance closed and still leaves the report of the others."""
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 — reported as the step's verdict
        reason = internal_error(exc, f"step {check_id}")
        return CheckResult(id=check_id, title=TITLES[check_id], verdict="error", reason=reason)


class _Progress:
    """``[3/7] ACC003 GPU matmul matches the CPU: skipped`` per finished step, to ``emit``."""

    def __init__(self, emit: Callable[[str], None] | None, total: int = len(TITLES)):
        self.emit, self.count, self.total = emit, 0, total

    def start(self, line: str) -> None:
        if self.emit:
            self.emit(line)

    def done(self, result: CheckResult) -> CheckResult:
        self.count += 1
        if self.emit:
            seconds = result.evidence.get("seconds")
            took = f" ({float(seconds):.1f} s)" if seconds else ""
            self.emit(f"[{self.count}/{self.total}] {result.id} {result.title}: {result.verdict}{took}")
        return result


def _rerun_options(
    python_path: str | None, profile: Profile | None, registry_source: str | None, repo: str | None
) -> tuple[str, ...]:
    """The ``stackcheck accept`` options of this run that a rerun needs (for fixes)."""
    from stackcheck.catalog.registry import BUILTIN

    options: list[str] = []
    if python_path:
        options += ["--python", python_path]
    if profile is not None:
        options += ["--profile", profile.id]
        if registry_source and registry_source != BUILTIN:
            options += ["--registry", registry_source]
    if repo:
        options += ["--repo", repo]
    return tuple(options)


def _workers() -> int:
    """Steps run side by side only where cores allow: each torch child may use several
    threads, and an oversubscribed 2-core machine ran them slower together than in turn."""
    return max(1, min(3, (os.cpu_count() or 1) // 2))


def _prepare(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a directory (expected an output directory for --out)")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=out, prefix=".write-test-")
        probe.close()
    except OSError as exc:
        raise InputError(f"{out}: cannot write the report there: {exc.strerror or exc}") from None


def _summary_line(report: Report, limit: int = 3) -> tuple[str, str | None]:
    """ "2 blocked, 1 warning: HYG001 a.py line 3; …" and the first fix, for a nested report."""
    rank = {"error": 0, "blocked": 1, "warning": 2}
    bad = sorted((c for c in report.checks if c.verdict in rank), key=lambda c: rank[c.verdict])
    counts = {v: sum(c.verdict == v for c in report.checks) for v in ("error", "blocked", "warning", "ok")}
    head = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    listed = "; ".join(f"{c.id} {c.subject or c.title}" for c in bad[:limit]) + (
        f"; and {len(bad) - limit} more" if len(bad) > limit else ""
    )
    return (f"{head}: {listed}" if listed else head), (bad[0].fix if bad else None)


def _hygiene(repo: str | None, out: Path) -> CheckResult:
    from stackcheck.hygiene import scan
    from stackcheck.hygiene.files import repository_root

    root = repository_root(repo or os.getcwd())
    if root is None:
        return CheckResult(
            id="ACC006",
            title=TITLES["ACC006"],
            verdict="skipped",
            reason=f"{repo or os.getcwd()} is not inside a git repository",
        )
    try:
        report = scan(root)
    except InputError as exc:
        return CheckResult(
            id="ACC006",
            title=TITLES["ACC006"],
            verdict="blocked",
            observed=f"the hygiene scan could not run: {exc}",
            expected="a readable ignore file",
            fix=f"fix the ignore file, then run: {command('stackcheck', 'hygiene', root)}",
        )
    path = out / "hygiene.json"
    _write_json(path, report)
    observed, fix = _summary_line(report)
    if fix:  # the first finding's fix as it stands (a command stays a command); the rest in the report
        observed += f"; every finding in {path}"
    return CheckResult(
        id="ACC006",
        title=TITLES["ACC006"],
        verdict=report.verdict,
        observed=f"{root}: {observed}",
        expected="no blocked hygiene findings",
        fix=fix,
        evidence={"report": str(path), "files": report.environment["files"]},
    )


def _write_json(path: Path, obj) -> None:
    """The evidence files, redacted like everything else that leaves the process."""
    atomic_write(path, msgspec.json.format(msgspec.json.encode(redact_value(obj)), indent=2) + b"\n")


def _preflight(snapshot: Snapshot, profile: Profile | None, out: Path) -> CheckResult:
    if profile is None:
        return CheckResult(
            id="ACC007", title=TITLES["ACC007"], verdict="skipped", reason="no --profile given"
        )
    from stackcheck.judge import judge

    report = judge(snapshot, command="preflight", profile=profile)
    path = out / "preflight.json"
    _write_json(path, report)
    observed, fix = _summary_line(report)
    return CheckResult(
        id="ACC007",
        title=TITLES["ACC007"],
        verdict=report.verdict,
        subject=profile.id,
        observed=f"{profile.id}: {observed}",
        expected=f"the environment satisfies {profile.id}",
        fix=fix,
        evidence={"report": str(path)},
    )


def summary_text(report: Report, snapshot: Snapshot, profile: Profile | None) -> str:
    """The readable version report: what was checked, the versions that matter, the verdicts."""
    from stackcheck.render.accept import accept_summary_text

    wanted = list(SUMMARY_PACKAGES) + (sorted(requirement_names(profile)) if profile else [])
    return accept_summary_text(report, snapshot, wanted)
