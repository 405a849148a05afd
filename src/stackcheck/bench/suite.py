"""One run of the suite end to end: environment, cases, the files of the run, the records.

``bench run``, the pytest plugin and ``benchmarks/device/`` all go through :func:`run_and_write`:
the snapshot is taken once (the fast tier: no torch import, no CUDA context), the cases run,
the output directory receives ``bench.json`` (the run: every repetition, the raw log the
records point at), ``matrix.txt``, ``matrix.md`` and ``pytest-benchmark.json``, each written
atomically, and the cases that ran are recorded in the ledger when one is given.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from stackcheck.bench.run import BenchRun, CaseResult

__all__ = ["Outcome", "default_profile", "make_run", "run_and_write", "write_outputs"]


@dataclass
class Outcome:
    run: BenchRun
    written: list[Path] = field(default_factory=list)
    filed: list = field(default_factory=list)  # records.Filed per case, when recorded


def default_profile(device: dict) -> str:
    """The built-in profile a run is judged by: a GPU performance mechanism, or the CPU baseline."""
    return "PERF-CUDA-MECHANISM" if device.get("kind") == "cuda" else "BASE-CPU"


def make_run(cases: list[CaseResult], *, device: dict, snapshot) -> BenchRun:
    from stackcheck.environment import snapshot_digest
    from stackcheck.redaction import redact_value
    from stackcheck.results.compare import environment
    from stackcheck.results.ledger import utc_now

    env = {k: str(v) for k, v in environment(snapshot).items() if v not in (None, "")}
    run = BenchRun(
        created_at=utc_now(),
        device=device,
        environment=env,
        snapshot_digest=snapshot_digest(snapshot),
        cases=cases,
    )
    return redact_value(run)  # once, here: bench.json, the matrix files and stdout all agree


def write_outputs(run: BenchRun, out_dir: str | os.PathLike) -> list[Path]:
    from stackcheck.bench import matrix
    from stackcheck.fileio import atomic_write, cannot_write, require_creatable_dir

    out = Path(out_dir)
    require_creatable_dir(out, "the output directory, -o")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise cannot_write(out, "the output directory", exc) from None
    pb = msgspec.json.encode(matrix.to_pytest_benchmark(run))
    files: dict[str, bytes | str] = {
        "bench.json": msgspec.json.format(msgspec.json.encode(run), indent=2) + b"\n",
        "matrix.txt": matrix.text(run),
        "matrix.md": matrix.markdown(run),
        "pytest-benchmark.json": msgspec.json.format(pb, indent=2) + b"\n",
    }
    written = []
    for name, data in files.items():
        try:
            written.append(atomic_write(out / name, data))
        except OSError as exc:
            raise cannot_write(out / name, "the run", exc) from None
    return written


def run_and_write(
    backends,
    shapes,
    *,
    out_dir: str | os.PathLike,
    snapshot=None,
    ledger=None,
    profile: str | None = None,
    run_label: str = "bench",
    catalog=None,
    registry: str | None = None,
    cwd: str | os.PathLike | None = None,
    **suite_options,
) -> Outcome:
    """Run, write the run's files under ``out_dir``, record into ``ledger`` (None: no records).
    ``suite_options`` go to :func:`stackcheck.bench.run.run_suite` (warmup, reps, device, clock …)."""
    from stackcheck.bench import backends as kernels
    from stackcheck.bench.run import run_suite
    from stackcheck.fileio import require_creatable_dir

    require_creatable_dir(out_dir, "the output directory, -o")  # bad input before the suite runs
    if ledger is not None and profile is not None:
        if catalog is None:
            from stackcheck.catalog import load_catalog

            catalog = load_catalog(registry)
        catalog.get(profile)  # an unknown ID is one line before the suite, not after it
    if snapshot is None:
        from stackcheck.environment import obtain

        snapshot = obtain()
    device = suite_options.pop("device", None) or kernels.device_info()
    cases = run_suite(backends, shapes, device=device, **suite_options)
    run = make_run(cases, device=device.as_dict(), snapshot=snapshot)
    outcome = Outcome(run=run, written=write_outputs(run, out_dir))
    if ledger is not None:
        from stackcheck.bench.records import store

        outcome.filed = store(
            cases,
            snapshot=snapshot,
            ledger=ledger,
            profile=profile or default_profile(run.device),
            run_label=run_label,
            raw_log=str(Path(out_dir).resolve() / "bench.json"),
            catalog=catalog,
            registry=registry,
            cwd=cwd,
        )
    return outcome
