"""What a report or a result judged over several ranks carries about them: the world size and
every rank's snapshot digest, so single-process evidence cannot stand for a fleet's."""

from __future__ import annotations

import msgspec


class RankSnapshot(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    rank: int
    snapshot_digest: str  # "sha256:…" of that rank's (redacted) snapshot
    host: str = ""  # its network.hostname
    gpus: int = 0  # GPUs visible to that rank


class FleetInfo(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    world_size: int
    ranks: list[RankSnapshot] = []  # one per rank, by rank
    launcher: str = ""  # torchrun | slurm | mpi | files (fleet compare)

    def nodes(self) -> int:
        return len({r.host for r in self.ranks}) if self.ranks else 0

    def gpus(self) -> int:
        return sum(r.gpus for r in self.ranks)
