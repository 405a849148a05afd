"""Who launched this process as a rank: the launch section (torchrun, srun, mpirun).

Read from the variables each launcher sets (torchrun: ``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``TORCHELASTIC_RUN_ID``; Slurm:
``SLURM_PROCID``, ``SLURM_LOCALID``, ``SLURM_NTASKS``, ``SLURM_NTASKS_PER_NODE``,
``SLURM_NODEID``, ``SLURM_JOB_ID``; Open MPI: ``OMPI_COMM_WORLD_*``), plus the wall clock, so
snapshots gathered from every rank can be told apart and their clocks compared.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

from stackcheck.models.snapshot import LaunchSection

# launcher → (rank, local rank, world size, local world size, node rank, job id) variables
LAUNCHERS: tuple[tuple[str, tuple[str, str, str, str, str, str]], ...] = (
    (
        "torchrun",
        ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "TORCHELASTIC_RUN_ID"),
    ),
    (
        "slurm",
        (
            "SLURM_PROCID",
            "SLURM_LOCALID",
            "SLURM_NTASKS",
            "SLURM_NTASKS_PER_NODE",
            "SLURM_NODEID",
            "SLURM_JOB_ID",
        ),
    ),
    (
        "mpi",
        (
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_LOCAL_RANK",
            "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_LOCAL_SIZE",
            "OMPI_COMM_WORLD_NODE_RANK",
            "",
        ),
    ),
)


def collect(ctx=None) -> LaunchSection:
    sec = from_environ(os.environ)
    sec.wall_clock_ns, sec.clock_source = time.time_ns(), "probe"
    return sec


def from_environ(env: Mapping[str, str]) -> LaunchSection:
    """The launch facts of ``env``: the first launcher whose rank variable is set (torchrun's
    ``RANK`` wins inside an ``srun`` allocation that runs torchrun), else ``absent``."""
    for launcher, names in LAUNCHERS:
        rank = _int(env.get(names[0]))
        if rank is None:
            continue
        return LaunchSection(
            status="ok",
            source="environ",
            launcher=launcher,
            rank=rank,
            local_rank=_int(env.get(names[1])),
            world_size=_int(env.get(names[2])),
            # Slurm writes "8(x4)" for 8 tasks on each of 4 nodes
            local_world_size=_int(env.get(names[3], "").partition("(")[0]),
            node_rank=_int(env.get(names[4])),
            job_id=env.get(names[5], "")[:200] if names[5] else "",
        )
    return LaunchSection(
        status="absent", source="environ", error="not launched as a rank (no RANK, SLURM_PROCID)"
    )


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    return int(text) if text.isdigit() and len(text) < 10 else None
