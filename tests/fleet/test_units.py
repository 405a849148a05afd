"""The pure parts around the fleet: collectives' verdicts and the busbw formula, the launch and
network probes, the launcher checks before any rendezvous, and results carrying the fleet."""

from __future__ import annotations

import pytest

from stackcheck.errors import InputError
from stackcheck.fleet.collectives import (
    Step,
    StepView,
    bus_bandwidth,
    expected_busbw,
    judge_bandwidth,
    judge_step,
)
from stackcheck.fleet.gather import launch_facts
from stackcheck.models import snapshot as S
from stackcheck.models.fleet import FleetInfo, RankSnapshot
from stackcheck.probe import launch, network
from tests.factories import recorded, run_cli


# ----------------------------------------------------------------------------- collectives
def view(**kw) -> StepView:
    own = Step(name="all_reduce", rank=0, ok=True, seconds=0.002, timed_out=kw.pop("timed_out", False))
    return StepView(name="all_reduce", world_size=4, timeout_s=5, own=own, **kw)


def test_a_step_every_rank_finished_right_is_ok():
    outcome = judge_step(view(arrived=[0, 1, 2, 3]))
    assert (outcome.verdict, outcome.observed) == (
        "ok",
        "all_reduce: the known answer on all 4 ranks (4 ranks, gloo, 2.0 ms)",
    )


def test_a_hang_names_the_ranks_that_never_arrived():
    outcome = judge_step(view(arrived=[0, 2], timed_out=True))
    assert outcome.verdict == "blocked"
    assert (
        outcome.observed == "all_reduce did not complete within 5 s (4 ranks, gloo): ranks 1, 3 never arrived"
    )
    assert outcome.evidence == {"ranks": "1,3", "timeout_s": "5"}
    assert outcome.fix == (
        "see where the ranks named are stuck (`py-spy dump --pid PID`), then rerun with NCCL_DEBUG=INFO "
        "(`export NCCL_DEBUG=INFO`)"
    )


def test_ranks_that_arrived_but_never_finished():
    outcome = judge_step(view(arrived=[0, 1, 2, 3], unfinished=[2]))
    assert (
        outcome.observed
        == "all_reduce did not complete within 5 s (4 ranks, gloo): rank 2 arrived but did not finish"
    )
    assert outcome.evidence["ranks"] == "2"


def test_a_wrong_result_names_the_ranks():
    outcome = judge_step(view(arrived=[0, 1, 2, 3], failed={3: "expected 10, got values [9.0]"}))
    assert outcome.verdict == "blocked"
    assert outcome.observed == (
        "all_reduce gave a wrong result on rank 3 (4 ranks, gloo): rank 3: expected 10, got values [9.0]"
    )


def test_busbw_is_the_nccl_tests_formula():
    assert bus_bandwidth(10**9, 1.0, 8) == pytest.approx(1.75)  # 2 (n-1)/n
    assert bus_bandwidth(10**9, 0.5, 2) == pytest.approx(2.0)
    assert bus_bandwidth(10**9, 0.0, 2) == 0.0


def one_node(gpu_name: str, ranks: int = 8) -> list[S.Snapshot]:
    snaps = []
    for _ in range(ranks):
        s = recorded("multi-gpu-8xa100")
        s.network = S.NetworkSection(status="ok", hostname="n1")
        for g in s.accelerators.gpus:
            g.name = gpu_name
        snaps.append(s)
    return snaps


def test_the_link_speed_is_known_for_one_node_of_one_gpu_model():
    assert expected_busbw(one_node("NVIDIA A100-SXM4-80GB")) == (
        300.0,
        "NVLink 3 (600 GB/s bidirectional) of NVIDIA A100-SXM4-80GB",
    )
    assert expected_busbw(one_node("NVIDIA H100 80GB HBM3"))[0] == 450.0
    assert expected_busbw(one_node("Tesla T4")) is None
    two = one_node("NVIDIA A100-SXM4-80GB", 2)
    two[1].network.hostname = "n2"
    assert expected_busbw(two) is None  # between nodes: the network, not NVLink


def test_bandwidth_below_the_link_is_a_warning():
    sweep = {1048576: 20.0, 1073741824: 150.0}
    slow = judge_bandwidth(sweep, 8, "nccl", (300.0, "NVLink 3"))
    assert slow.verdict == "warning"
    assert slow.observed == "peak busbw 150.00 GB/s at 1 GiB (8 ranks, nccl); 1 MiB: 20.00, 1 GiB: 150.00"
    assert slow.expected == "at least 60% of 300 GB/s (NVLink 3)"
    assert judge_bandwidth({1073741824: 230.0}, 8, "nccl", (300.0, "NVLink 3")).verdict == "ok"
    assert judge_bandwidth(sweep, 8, "gloo", None).verdict == "ok"
    assert judge_bandwidth({}, 1, "gloo", None).reason == "one rank: no bus to measure"
    failed = judge_bandwidth({65536: 1.0}, 2, "gloo", None, error="RuntimeError: Operation timed out!")
    assert (failed.verdict, failed.observed) == (
        "blocked",
        "the all_reduce sweep failed after 1 sizes: RuntimeError: Operation timed out!",
    )


# ----------------------------------------------------------------------------- probes
def test_launch_facts_of_torchrun_and_slurm():
    tr = launch.from_environ(
        {
            "RANK": "3",
            "LOCAL_RANK": "1",
            "WORLD_SIZE": "8",
            "LOCAL_WORLD_SIZE": "2",
            "GROUP_RANK": "1",
            "TORCHELASTIC_RUN_ID": "abc",
        }
    )
    assert (
        tr.status,
        tr.launcher,
        tr.rank,
        tr.local_rank,
        tr.world_size,
        tr.local_world_size,
        tr.node_rank,
        tr.job_id,
    ) == ("ok", "torchrun", 3, 1, 8, 2, 1, "abc")
    sl = launch.from_environ(
        {
            "SLURM_PROCID": "9",
            "SLURM_LOCALID": "1",
            "SLURM_NTASKS": "32",
            "SLURM_NTASKS_PER_NODE": "8(x4)",
            "SLURM_NODEID": "1",
            "SLURM_JOB_ID": "4815162",
        }
    )
    assert (sl.launcher, sl.rank, sl.world_size, sl.local_world_size, sl.node_rank, sl.job_id) == (
        "slurm",
        9,
        32,
        8,
        1,
        "4815162",
    )
    # torchrun inside an srun allocation: torchrun's variables win
    both = launch.from_environ({"RANK": "0", "WORLD_SIZE": "2", "SLURM_PROCID": "5"})
    assert (both.launcher, both.rank) == ("torchrun", 0)
    assert launch.from_environ({"RANK": "x"}).status == "absent"
    assert launch.from_environ({}).status == "absent"


def test_the_live_launch_section_has_a_clock():
    sec = launch.collect()
    assert sec.clock_source == "probe" and sec.wall_clock_ns > 0


def test_network_interfaces_from_a_fake_sysfs(tmp_path, monkeypatch):
    for name, state, kind in (("eth0", "up", "1"), ("ib0", "down", "32"), ("lo", "unknown", "772")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "operstate").write_text(state + "\n")
        (tmp_path / name / "type").write_text(kind + "\n")
    monkeypatch.setattr(network, "SYS_CLASS_NET", str(tmp_path))
    sec = network.collect()
    assert (sec.status, sec.source) == ("ok", "sysfs")
    assert [(i.name, i.up, i.loopback) for i in sec.interfaces] == [
        ("eth0", True, False),
        ("ib0", False, False),
        ("lo", None, True),
    ]


def test_gloo_ifname_and_torchelastic_variables_are_recorded():
    from stackcheck.probe.environ import select

    variables, _ = select({"GLOO_SOCKET_IFNAME": "eth0", "TORCHELASTIC_RUN_ID": "j", "NODE_RANK": "1"})
    assert variables == {"GLOO_SOCKET_IFNAME": "eth0", "NODE_RANK": "1", "TORCHELASTIC_RUN_ID": "j"}


# ----------------------------------------------------------------------------- launcher
def test_distributed_outside_a_launcher_is_a_one_line_error(capsys):
    with pytest.raises(InputError, match=r"^--distributed: not launched as a rank"):
        launch_facts({})
    with pytest.raises(InputError, match="MASTER_ADDR and MASTER_PORT must be set"):
        launch_facts({"SLURM_PROCID": "0", "SLURM_NTASKS": "2"})
    with pytest.raises(InputError, match="rank 2 is not below the world size 2"):
        launch_facts({"RANK": "2", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "1"})


def test_a_rank_alone_at_the_rendezvous_gives_up_within_the_timeout(monkeypatch):
    """Rank 0 of 2 whose partner never starts: a one-line error after the timeout, not a hang."""
    import socket

    pytest.importorskip("torch.distributed")
    from stackcheck.fleet.gather import join

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for name, value in {
        "RANK": "0",
        "WORLD_SIZE": "2",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
    }.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(InputError) as failed:
        join(timeout_s=1)
    assert str(failed.value).startswith(
        f"--distributed: rank 0 could not join the 2 ranks at 127.0.0.1:{port} within 1 s: "
    )
    assert "\n" not in str(failed.value)


def test_preflight_distributed_cli_errors(capsys, monkeypatch):
    for name in ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"):
        monkeypatch.delenv(name, raising=False)
    code, out, err = run_cli(capsys, "preflight", "-p", "BASE-CPU", "--distributed")
    assert (code, out) == (2, "")
    assert err.startswith("stackcheck: error: --distributed: not launched as a rank") and err.count("\n") == 1
    code, out, err = run_cli(capsys, "preflight", "-p", "BASE-CPU", "--snapshots", "d")
    assert code == 2 and "--snapshots needs --distributed" in err


# ----------------------------------------------------------------------------- results
def test_a_record_without_a_fleet_keeps_its_digest():
    from stackcheck.results.identity import data_digest

    old = {"topic": "t", "digest": "", "prev": ""}
    assert data_digest({**old, "fleet": None}) == data_digest(old)
    assert data_digest({**old, "fleet": {"world_size": 2}}) != data_digest(old)


def test_a_multi_gpu_claim_stands_on_a_fleet_of_one_gpu_ranks():
    import msgspec

    from stackcheck.models.result import ResultRecord
    from stackcheck.results.ladder import scope_conflicts

    snap = recorded("h100-single")
    base = {
        "topic": "t",
        "run_label": "r",
        "model": {"id": "m"},
        "backend": {"name": "transformers"},
        "workload": {"kind": "training"},
        "created_at": "2026-12-01T00:00:00.000000Z",
        "profile": {"id": "P"},
        "snapshot": msgspec.to_builtins(snap),
        "snapshot_digest": "sha256:a",
        "scope": "multi-gpu",
    }
    single = msgspec.convert(base, ResultRecord)
    assert scope_conflicts(single) == [
        "scope: single-GPU evidence cannot stand for a multi-GPU claim (the snapshot has 1 visible GPU)"
    ]

    def fleet(world: int, *ranks: tuple[int, str]) -> FleetInfo:
        shots = [RankSnapshot(rank=r, snapshot_digest=d, gpus=1) for r, d in ranks]
        return FleetInfo(world_size=world, ranks=shots)

    assert scope_conflicts(msgspec.structs.replace(single, fleet=fleet(2, (0, "sha256:a"), (1, "b")))) == []
    lone = fleet(1, (0, "sha256:a"))
    assert scope_conflicts(msgspec.structs.replace(single, fleet=lone)) == [
        "scope: single-GPU evidence cannot stand for a multi-GPU claim (the snapshot has 1 visible GPU, "
        "and a distributed run of 1 rank(s))"
    ]
    gap = fleet(3, (0, "sha256:x"), (2, "b"))
    assert scope_conflicts(msgspec.structs.replace(single, fleet=gap)) == [
        "fleet.ranks: one snapshot digest per rank 0..2, got ranks [0, 2]",
        "fleet.ranks: rank 0's snapshot digest is not the record's snapshot_digest",
    ]


def test_snapshots_into_a_directory_below_a_file_is_one_line(tmp_path):
    from stackcheck.fleet.run import write_snapshots

    (tmp_path / "a-file").write_text("")
    out = tmp_path / "a-file" / "snaps"
    with pytest.raises(InputError) as err:
        write_snapshots([recorded("cpu-laptop")], out)
    assert str(err.value) == (
        f"{out}: {tmp_path / 'a-file'} is a file, not a directory (expected the snapshot directory)"
    )


def test_fleet_gather_outside_a_launcher_names_itself(capsys, monkeypatch, tmp_path):
    for name in ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"):
        monkeypatch.delenv(name, raising=False)
    code, out, err = run_cli(capsys, "fleet", "gather", "-o", str(tmp_path / "snaps"))
    assert (code, out) == (2, "")
    assert err == (
        "stackcheck: error: fleet gather: not launched as a rank (no RANK or SLURM_PROCID in the "
        "environment); run it under torchrun (torchrun --nproc-per-node N -m stackcheck ...) or srun\n"
    )
    assert not (tmp_path / "snaps").exists()
