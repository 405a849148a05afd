"""Join the job as one of its ranks and gather every rank's snapshot, over torch.distributed.

Rides the launcher the job already uses: torchrun (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``,
``MASTER_PORT``) or srun (``SLURM_PROCID``, ``SLURM_NTASKS``, with ``MASTER_ADDR`` /
``MASTER_PORT`` exported by the job script). The gather uses a gloo process group, so it
works before NCCL is trusted; the job's c10d store (from ``torch.distributed.rendezvous``)
carries what must survive a hung collective: who arrived where, and the exit code rank 0
decides, which every rank then exits with. torch is imported here only, when a command runs
with ``--distributed``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import msgspec

from stackcheck.errors import InputError
from stackcheck.models.snapshot import LaunchSection, Snapshot
from stackcheck.probe.launch import from_environ

__all__ = ["DEFAULT_TIMEOUT_S", "Fleet", "gather_snapshots", "join", "launch_facts"]

DEFAULT_TIMEOUT_S = 60.0
EXIT_WAIT_S = 300.0  # how long the other ranks wait for rank 0's verdict (it judges every rank)
ACK_WAIT_S = 10.0  # how long rank 0 keeps the store up for the others to read the exit code
_PREFIX = "stackcheck"


@dataclass
class Fleet:
    """This process as one rank of the job: its numbers, the job's store, the gloo group."""

    rank: int
    world_size: int
    local_rank: int
    launcher: str
    timeout_s: float
    store: Any  # torch.distributed.Store
    backend: str = "gloo"
    healthy: bool = True  # False once a collective hung: the group is not used again
    notes: list[str] = field(default_factory=list)

    def key(self, *parts: object) -> str:
        return "/".join((_PREFIX, *map(str, parts)))

    def agree(self, code: int | None) -> int:
        """Every rank's exit code: rank 0's ``code``, published through the store (which
        outlives a hung collective); the others wait for it. A rank that hears nothing from
        rank 0 within the wait exits 1."""
        key = self.key("exit")
        if self.rank == 0:
            self.store.set(key, str(1 if code is None else code))
            deadline = time.monotonic() + min(self.timeout_s, ACK_WAIT_S)
            # outside torchrun (whose agent hosts the store) rank 0 hosts it: keep it up until the
            # others have read the code
            while (
                self.launcher != "torchrun" and self.store.add(self.key("exit-read"), 0) < self.world_size - 1
            ):
                if time.monotonic() > deadline:
                    break
                time.sleep(0.02)
            return 1 if code is None else code
        try:
            self.store.wait([key], timedelta(seconds=max(self.timeout_s, EXIT_WAIT_S)))
            agreed = int(self.store.get(key))
            self.store.add(self.key("exit-read"), 1)
            return agreed
        except Exception:  # rank 0 is gone: fail closed
            return 1

    def close(self) -> None:
        """Leave the process group (not after a hang: its pending work would block)."""
        import torch.distributed as dist

        if self.healthy and dist.is_initialized():
            dist.destroy_process_group()


def launch_facts(environ: Mapping[str, str] | None = None, *, who: str = "--distributed") -> LaunchSection:
    """The launch section of this process, or a one-line error (naming ``who``, the command
    or flag that needs a launcher) when it is not a rank."""
    env = os.environ if environ is None else environ
    facts = from_environ(env)
    if facts.status != "ok" or facts.rank is None:
        raise InputError(
            f"{who}: not launched as a rank (no RANK or SLURM_PROCID in the environment); run it "
            "under torchrun (torchrun --nproc-per-node N -m stackcheck ...) or srun"
        )
    if facts.world_size is None or facts.world_size < 1:
        raise InputError(f"{who}: the {facts.launcher} launch sets no world size (WORLD_SIZE / SLURM_NTASKS)")
    if facts.rank >= facts.world_size:
        raise InputError(f"{who}: rank {facts.rank} is not below the world size {facts.world_size}")
    if not env.get("MASTER_ADDR") or not env.get("MASTER_PORT"):
        raise InputError(
            f"{who} under {facts.launcher}: MASTER_ADDR and MASTER_PORT must be set (export them "
            "in the job script: the first node's host name and a free port; see docs/fleet.md)"
        )
    return facts


def join(
    timeout_s: float = DEFAULT_TIMEOUT_S, snapshot: Snapshot | None = None, *, who: str = "--distributed"
) -> Fleet:
    """Rendezvous with the other ranks and start a gloo process group whose collectives give
    up after ``timeout_s``. ``snapshot``: this rank's, taken first: a GLOO_SOCKET_IFNAME that
    names none of its interfaces is left out of this group (gloo would abort the rank; FLT008
    reports it instead)."""
    facts = launch_facts(who=who)
    try:
        import torch.distributed as dist
    except ImportError as exc:
        raise InputError(f"{who} needs torch in this interpreter ({exc})") from None
    if not dist.is_available():
        raise InputError(f"{who}: this torch build has no torch.distributed")
    assert facts.rank is not None and facts.world_size is not None  # launch_facts said so
    timeout = timedelta(seconds=timeout_s)
    unusable = _unusable_gloo_ifname(snapshot)
    if unusable is not None:
        del os.environ["GLOO_SOCKET_IFNAME"]
    try:
        rendezvous = dist.rendezvous("env://", rank=facts.rank, world_size=facts.world_size, timeout=timeout)
        store, _, _ = next(rendezvous)
        dist.init_process_group(
            "gloo",
            store=dist.PrefixStore(f"{_PREFIX}/gloo", store),
            rank=facts.rank,
            world_size=facts.world_size,
            timeout=timeout,
        )
    except (RuntimeError, ValueError, OSError) as exc:  # DistStoreError, DistNetworkError …
        where = f"{os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}"
        raise InputError(
            f"{who}: rank {facts.rank} could not join the {facts.world_size} ranks at {where} within "
            f"{timeout_s:g} s: {_first_line(exc)}"
        ) from None
    finally:
        if unusable is not None:
            os.environ["GLOO_SOCKET_IFNAME"] = unusable
    return Fleet(
        rank=facts.rank,
        world_size=facts.world_size,
        local_rank=facts.local_rank or 0,
        launcher=facts.launcher,
        timeout_s=timeout_s,
        store=store,
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__


def _unusable_gloo_ifname(snapshot: Snapshot | None) -> str | None:
    """This process's GLOO_SOCKET_IFNAME when it names no interface of ``snapshot``, else None."""
    from stackcheck.fleet.judge import ifname_matches

    value = os.environ.get("GLOO_SOCKET_IFNAME")
    if value is None or snapshot is None or snapshot.network.status != "ok":
        return None
    names = [i.name for i in snapshot.network.interfaces]
    return None if ifname_matches(value, names, nccl=False) else value


def gather_snapshots(fleet: Fleet, snapshot: Snapshot) -> list[Snapshot]:
    """Every rank's snapshot, in rank order, on every rank (``all_gather_object`` over gloo).
    Each rank reads its clock right after a barrier, so the clocks can be compared."""
    import torch.distributed as dist

    gathered: list[Any] = [None] * fleet.world_size
    try:
        dist.barrier()
        snapshot.launch.wall_clock_ns, snapshot.launch.clock_source = time.time_ns(), "barrier"
        dist.all_gather_object(gathered, msgspec.json.encode(snapshot))
    except RuntimeError as exc:  # a rank died or hangs: gloo's timeout
        fleet.healthy = False
        raise InputError(
            f"--distributed: gathering the snapshots of {fleet.world_size} ranks failed within "
            f"{fleet.timeout_s:g} s: {_first_line(exc)}"
        ) from None
    from stackcheck.redaction import redact_snapshot

    # each rank redacted its own (packages as they were read); the rest again, as for any file
    return [redact_snapshot(msgspec.json.decode(d, type=Snapshot), skip=("packages",)) for d in gathered]
