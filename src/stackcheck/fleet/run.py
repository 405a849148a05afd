"""A command run on every rank of a job (``preflight --distributed``, ``accept --distributed``,
``fleet gather``): join, snapshot, gather, (collectives), rank 0 judges and prints one report,
every rank leaves with rank 0's exit code."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from stackcheck.errors import InputError
from stackcheck.fleet.gather import DEFAULT_TIMEOUT_S, Fleet, gather_snapshots, join
from stackcheck.models.finding import Report, exit_code
from stackcheck.models.profile import Profile
from stackcheck.models.snapshot import Snapshot

__all__ = ["Distributed", "run_distributed", "write_report", "write_snapshots"]


@dataclass
class Distributed:
    """What one rank of a distributed command ends with."""

    rank: int
    world_size: int
    code: int  # the exit code every rank agreed on
    report: Report | None = None  # rank 0 only
    snapshots: list[Snapshot] | None = None


def run_distributed(
    kind: str,
    *,
    profile: Profile | None = None,
    skip: tuple[str, ...] = (),
    timeout_s: float = DEFAULT_TIMEOUT_S,
    collectives: bool = False,
    strict: bool = False,
    deep: bool = False,
    emit: Callable[[Report, list[Snapshot]], None] | None = None,
    sizes: tuple[int, ...] | None = None,
    fleet: Fleet | None = None,
) -> Distributed:
    """Run ``kind`` on this rank. Rank 0 judges every rank and the fleet (and the collectives'
    findings with ``collectives``) into one report and hands it to ``emit``; every rank returns
    the exit code rank 0 decided. A failure on rank 0 still releases the others (exit 1)."""
    from stackcheck.environment import obtain
    from stackcheck.fleet.judge import fleet_report

    modules = tuple(profile.required_modules) if profile else ()
    own = obtain(None, deep=deep, modules=modules)  # before joining: the snapshot says what join will meet
    fleet = fleet or join(timeout_s, snapshot=own)
    code: int | None = None
    report = None
    snapshots: list[Snapshot] = []
    try:
        snapshots = gather_snapshots(fleet, own)
        extra = []
        if collectives:
            from stackcheck.fleet.collectives import run_collectives

            extra = run_collectives(fleet, snapshots, sizes=sizes)
        if fleet.rank == 0:
            report = fleet_report(
                kind, snapshots, profile=profile, skip=skip, launcher=fleet.launcher, extra=extra, deep=deep
            )
            if emit is not None:
                emit(report, snapshots)
            code = exit_code(report.verdict, strict)
    except InputError:
        code = 2  # the one-line error is rank 0's; every rank exits as it does
        raise
    finally:
        agreed = fleet.agree(code)  # None on rank 0 (it raised): every rank exits 1
        fleet.close()
    return Distributed(fleet.rank, fleet.world_size, agreed, report, snapshots if fleet.rank == 0 else None)


def write_snapshots(snapshots: list[Snapshot], directory: str | os.PathLike) -> list[Path]:
    """Each rank's snapshot as ``DIRECTORY/rank-N.json`` (atomic writes), in rank order."""
    import msgspec

    from stackcheck.fileio import atomic_write, cannot_write, require_creatable_dir
    from stackcheck.fleet.judge import ranked

    out = Path(directory)
    require_creatable_dir(out, "the snapshot directory")
    written = []
    for x in ranked(snapshots):
        path = out / f"rank-{x.rank}.json"
        try:
            atomic_write(path, msgspec.json.format(msgspec.json.encode(x.snapshot), indent=2) + b"\n")
        except OSError as exc:
            raise cannot_write(path, "a rank's snapshot", exc) from None
        written.append(path)
    return written


def write_report(report: Report, snapshots: list[Snapshot], out_dir: str | os.PathLike | None) -> Path:
    """The report directory of ``accept --distributed``: report.json and snapshots/rank-N.json
    (default ./stackcheck-accept-<UTC timestamp>/); the path of report.json."""
    import msgspec

    from stackcheck.accept.run import default_out_dir
    from stackcheck.fileio import atomic_write
    from stackcheck.redaction import redact_value

    out = Path(out_dir) if out_dir else default_out_dir()
    write_snapshots(snapshots, out / "snapshots")
    path = out / "report.json"
    atomic_write(path, msgspec.json.format(msgspec.json.encode(redact_value(report)), indent=2) + b"\n")
    return path
