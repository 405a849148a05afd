"""Real jobs on CPU: ``python -m torch.distributed.run --standalone`` with gloo, 2-3 ranks.

Each rank runs ``tests/fleet/_rank.py``, which applies that rank's injected fault (a package
version, an interface name, a collective it never joins), runs the command in-process and
records its stdout and exit code per rank. Three launches in all (torch is imported per rank).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from stackcheck.environment import load_snapshot, snapshot_digest
from stackcheck.models.finding import Report

pytest.importorskip("torch.distributed")

RANK_MAIN = Path(__file__).with_name("_rank.py")


def launch(tmp_path: Path, nproc: int, plan: dict, *args: str) -> tuple[int, list[int], list[str]]:
    """(torchrun's exit code, every rank's exit code, every rank's stdout)."""
    out = tmp_path / "job"
    out.mkdir()
    env = {
        **os.environ,
        "FLEET_TEST_OUT": str(out),
        "FLEET_TEST_PLAN": json.dumps(plan),
        "OMP_NUM_THREADS": "1",
    }
    for name in [n for n in env if n.startswith(("NCCL_", "GLOO_", "SLURM_", "TORCHELASTIC_"))]:
        del env[name]
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}"]
        + [str(RANK_MAIN), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    missing = [r for r in range(nproc) if not (out / f"exit-{r}.txt").exists()]
    assert not missing, f"ranks {missing} recorded no exit code:\n{done.stderr[-3000:]}"
    codes = [int((out / f"exit-{r}.txt").read_text()) for r in range(nproc)]
    stdout = [(out / f"stdout-{r}.txt").read_text() for r in range(nproc)]
    return done.returncode, codes, stdout


def by_id(report: Report, check_id: str):
    return [c for c in report.checks if c.id == check_id]


def test_preflight_distributed_names_the_skewed_ranks_and_records_the_fleet(tmp_path):
    """Rank 1 reports another numpy, rank 2 points NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME at an
    interface it lacks: rank 0 prints one report naming them; every rank exits 1. The report
    and rank 0's snapshot then record a result that carries all three rank digests."""
    plan = {
        "1": {"versions": {"numpy": "1.0.0"}},
        "2": {"env": {"NCCL_SOCKET_IFNAME": "=nosuch0", "GLOO_SOCKET_IFNAME": "nosuch0"}},
    }
    snaps = tmp_path / "snaps"
    rc, codes, stdout = launch(
        tmp_path,
        3,
        plan,
        "preflight",
        "-p",
        "BASE-CPU",
        "--distributed",
        "--json",
        "--timeout",
        "30",
        "--snapshots",
        str(snaps),
    )
    assert codes == [1, 1, 1]
    assert rc == 1
    assert stdout[1:] == ["", ""]  # one report, from rank 0
    report = msgspec.json.decode(stdout[0], type=Report)
    assert report.kind == "preflight" and report.profile == "BASE-CPU"
    numpy = [c for c in by_id(report, "FLT002") if c.subject == "numpy"]
    assert len(numpy) == 1 and numpy[0].verdict == "warning"
    assert numpy[0].evidence["ranks"] == "1"
    assert numpy[0].observed.startswith("numpy: rank 1: 1.0.0 (majority, ranks 0, 2: ")
    flt008 = {c.subject: c for c in by_id(report, "FLT008")}
    assert set(flt008) == {"NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"}
    for var, c in flt008.items():
        assert c.verdict == "blocked" and c.evidence == {"ranks": "2"}
        assert c.observed.startswith(
            f"rank 2: {var}={'=' if var.startswith('NCCL') else ''}nosuch0 matches no"
        )
    assert [c.verdict for c in by_id(report, "FLT011")] == ["ok"]
    assert [c.verdict for c in by_id(report, "FLT014")] == ["ok"]  # clocks read after a barrier
    # the fleet: world size 3, one digest per rank, rank 0's is the report's own
    assert report.fleet is not None and report.fleet.world_size == 3 and report.fleet.launcher == "torchrun"
    assert [r.rank for r in report.fleet.ranks] == [0, 1, 2]
    files = [load_snapshot(str(snaps / f"rank-{r}.json")) for r in range(3)]
    assert [r.snapshot_digest for r in report.fleet.ranks] == [snapshot_digest(s) for s in files]
    assert report.snapshot_digest == report.fleet.ranks[0].snapshot_digest
    assert [s.launch.rank for s in files] == [0, 1, 2]
    assert files[1].distribution("numpy").version == "1.0.0"

    # a result recorded from this run carries the world size and every rank's digest
    from stackcheck.results.recording import record

    report_file = tmp_path / "report.json"
    report_file.write_text(stdout[0])
    draft = {
        "topic": "fleet-test",
        "run_label": "r1",
        "profile": "BASE-CPU",
        "model": {"id": "tiny"},
        "backend": {"name": "transformers"},
        "workload": {"kind": "training"},
        "metrics": {"loss": {"value": 1.5}},
        "git": {"commit": "", "dirty": None},
    }
    done = record(draft, snapshot=str(snaps / "rank-0.json"), report=report_file, cwd=tmp_path)
    assert done.record.fleet == report.fleet
    assert done.record.snapshot_digest == report.fleet.ranks[0].snapshot_digest


def test_a_rank_that_never_joins_becomes_a_finding_naming_it(tmp_path):
    """Rank 2 never arrives at the all_reduce: within the 3 s timeout rank 0 reports FLT101
    naming rank 2, runs no further collective, and all three ranks exit 1."""
    rc, codes, stdout = launch(
        tmp_path,
        3,
        {"2": {"never_join": "all_reduce"}},
        "accept",
        "--distributed",
        "--timeout",
        "3",
        "--json",
        "--out",
        str(tmp_path / "acc"),
    )
    assert codes == [1, 1, 1] and rc == 1
    report = msgspec.json.decode(stdout[0], type=Report)
    (hang,) = by_id(report, "FLT101")
    assert hang.verdict == "blocked"
    assert hang.observed == "all_reduce did not complete within 3 s (3 ranks, gloo): rank 2 never arrived"
    assert hang.evidence == {"ranks": "2", "timeout_s": "3"}
    for later in ("FLT102", "FLT103", "FLT104", "FLT105"):
        assert [(c.verdict, c.reason) for c in by_id(report, later)] == [
            ("skipped", "an earlier collective failed or hung")
        ]
    assert [(c.verdict, c.reason) for c in by_id(report, "FLT106")] == [
        ("skipped", "not measured (an earlier collective failed)")
    ]
    stored = msgspec.json.decode((tmp_path / "acc" / "report.json").read_bytes(), type=Report)
    assert stored.checks == report.checks


def test_healthy_collectives_pass_on_every_rank(tmp_path):
    """Two healthy ranks: every collective gives its known answer, the sweep measures every
    size, and both ranks exit 0; the report directory holds both snapshots."""
    rc, codes, stdout = launch(
        tmp_path,
        2,
        {},
        "accept",
        "--distributed",
        "--timeout",
        "30",
        "--json",
        "--out",
        str(tmp_path / "acc"),
    )
    assert codes == [0, 0] and rc == 0
    report = msgspec.json.decode(stdout[0], type=Report)
    assert report.kind == "accept" and report.fleet is not None and report.fleet.world_size == 2
    for check_id, name in (
        ("FLT101", "all_reduce"),
        ("FLT102", "all_gather"),
        ("FLT103", "reduce_scatter"),
        ("FLT104", "broadcast"),
        ("FLT105", "barrier"),
    ):
        (c,) = by_id(report, check_id)
        assert c.verdict == "ok"
        what = "completed" if name == "barrier" else "the known answer"
        assert c.observed.startswith(f"{name}: {what} on all 2 ranks (2 ranks, gloo, ")
    (bw,) = by_id(report, "FLT106")
    assert bw.verdict == "ok" and bw.expected == "no nominal speed known for this interconnect"
    assert sorted(int(k) for k in bw.evidence) == [65536, 262144, 1048576, 4194304, 16777216]
    assert all(float(v) > 0 for v in bw.evidence.values())
    assert sorted(p.name for p in (tmp_path / "acc" / "snapshots").iterdir()) == [
        "rank-0.json",
        "rank-1.json",
    ]


def test_fleet_gather_writes_every_ranks_snapshot(tmp_path, capsys):
    """``fleet gather`` under torchrun: rank 0 writes rank-N.json for each rank, which
    ``fleet compare`` then judges offline with the same rank numbers."""
    out = tmp_path / "gathered"
    rc, codes, stdout = launch(
        tmp_path, 2, {}, "fleet", "gather", "-o", str(out), "--json", "--timeout", "30"
    )
    assert codes == [0, 0] and rc == 0
    assert json.loads(stdout[0]) == {
        "world_size": 2,
        "written": [str(out / "rank-0.json"), str(out / "rank-1.json")],
    }
    assert stdout[1] == ""
    snaps = [load_snapshot(str(out / f"rank-{r}.json")) for r in range(2)]
    assert [
        (s.launch.launcher, s.launch.rank, s.launch.world_size, s.launch.clock_source) for s in snaps
    ] == [
        ("torchrun", 0, 2, "barrier"),
        ("torchrun", 1, 2, "barrier"),
    ]
    from tests.factories import run_cli

    code, text, _ = run_cli(
        capsys, "fleet", "compare", str(out / "rank-1.json"), str(out / "rank-0.json"), "--json"
    )
    report = msgspec.json.decode(text, type=Report)
    assert [r.rank for r in report.fleet.ranks] == [0, 1]
    assert [(c.verdict, c.observed) for c in by_id(report, "FLT011")] == [("ok", "all 2 ranks reported")]
    assert [c.verdict for c in by_id(report, "FLT014")] == ["ok"]
