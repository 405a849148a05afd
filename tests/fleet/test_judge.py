"""Fleet checks over recorded snapshots: the 8x A100 node of multi-gpu-8xa100.json, copied per
rank and edited per rank; each finding must name exactly the ranks that differ and how."""

from __future__ import annotations

import json

import msgspec
import pytest

from stackcheck.fleet.judge import (
    MIN_OPEN_FILES,
    fleet_report,
    ifname_matches,
    judge_fleet,
    per_rank,
    rank_list,
    ranked,
    spread,
)
from stackcheck.models import snapshot as S
from stackcheck.models.finding import CheckResult
from stackcheck.models.snapshot import snapshot_digest
from tests.factories import make_profile, recorded, run_cli

GIB = 1024**3


def node(rank: int, *, world: int = 8, host: str = "gpu-node-1", ranks_per_node: int = 8) -> S.Snapshot:
    """One rank of a job on 8-GPU A100 nodes: rank ``rank`` sees GPU ``rank % 8`` of ``host``."""
    snap = recorded("multi-gpu-8xa100")
    launched = {
        "launcher": "torchrun",
        "rank": rank,
        "world_size": world,
        "local_rank": rank % ranks_per_node,
    }
    snap.launch = msgspec.convert({"status": "ok", "source": "environ", **launched}, S.LaunchSection)
    snap.network = S.NetworkSection(
        status="ok",
        source="sysfs",
        hostname=host,
        interfaces=[
            S.NetInterface(name="lo", loopback=True),
            S.NetInterface(name="ib0", up=True),
            S.NetInterface(name="eth0", up=True),
        ],
    )
    return snap


def job(world: int = 8, per_node: int = 8) -> list[S.Snapshot]:
    return [
        node(r, world=world, host=f"gpu-node-{r // per_node + 1}", ranks_per_node=per_node)
        for r in range(world)
    ]


def set_version(snap: S.Snapshot, name: str, version: str) -> None:
    for d in snap.packages.distributions:
        if d.name == name:
            d.version = version
    snap.__dict__.pop("_importable", None)


def of(results: list[CheckResult], check_id: str) -> list[CheckResult]:
    return [c for c in results if c.id == check_id]


def non_ok(results: list[CheckResult]) -> list[tuple[str, str | None, str]]:
    return [(c.id, c.subject, c.verdict) for c in results if c.verdict in ("warning", "blocked", "error")]


def test_an_identical_node_passes_every_fleet_check():
    results = judge_fleet(job())
    assert non_ok(results) == []
    assert {c.id: c.verdict for c in results} == {
        "FLT001": "ok",
        "FLT002": "ok",
        "FLT003": "ok",
        "FLT004": "ok",
        "FLT005": "ok",
        "FLT006": "ok",
        "FLT007": "ok",
        "FLT008": "ok",
        "FLT009": "ok",
        "FLT010": "ok",
        "FLT011": "ok",
        "FLT012": "ok",
        "FLT013": "ok",
        "FLT014": "skipped",
    }
    (gpus,) = of(results, "FLT005")
    assert gpus.observed == "visible GPUs: 8x NVIDIA A100-SXM4-80GB 80 GiB on all 8 ranks"
    (nccl,) = of(results, "FLT006")
    assert nccl.observed == "NCCL: nvidia-nccl-cu12 2.27.3 on all 8 ranks"


def test_package_skew_names_the_ranks_and_the_majority():
    snaps = job()
    set_version(snaps[3], "numpy", "2.1.0")
    set_version(snaps[6], "numpy", "2.1.0")
    (numpy,) = of(judge_fleet(snaps), "FLT002")
    assert (numpy.verdict, numpy.subject) == ("warning", "numpy")
    assert numpy.observed == "numpy: ranks 3, 6: 2.1.0 (majority, ranks 0-2, 4-5, 7: 2.2.6)"
    assert numpy.evidence == {"ranks": "3,6", "majority": "2.2.6"}
    assert numpy.fix == (
        "on the node(s) of ranks 3, 6: /scratch/u123/envs/pretrain/bin/python -m pip install numpy==2.2.6"
    )


def test_torch_skew_is_blocked_twice_version_and_build():
    snaps = job()
    set_version(snaps[5], "torch", "2.8.0+cu126")
    snaps[5].torch.version, snaps[5].torch.cuda = "2.8.0+cu126", "12.6"
    results = judge_fleet(snaps)
    assert non_ok(results) == [("FLT002", "torch", "blocked"), ("FLT003", None, "blocked")]
    (build,) = of(results, "FLT003")
    assert build.observed == (
        "torch build: rank 5: 2.8.0+cu126 (CUDA 12.6) (majority, ranks 0-4, 6-7: 2.8.0+cu128 (CUDA 12.8))"
    )


def test_a_package_missing_on_one_rank_counts_as_none():
    snaps = job()
    snaps[2].packages.distributions = [d for d in snaps[2].packages.distributions if d.name != "wandb"]
    snaps[2].__dict__.pop("_importable", None)
    (wandb,) = of(judge_fleet(snaps), "FLT002")
    assert wandb.observed == "wandb: rank 2: (none) (majority, ranks 0-1, 3-7: 0.22.2)"
    assert wandb.fix.endswith("-m pip install wandb==0.22.2")


def test_python_minor_skew_is_blocked_patch_skew_a_warning():
    snaps = job(world=2)
    snaps[1].python.version = "3.12.1"
    patch = snaps[0].python.version
    assert [c.verdict for c in of(judge_fleet(snaps), "FLT001")] == ["warning"]
    snaps[1].python.version = "3.11.0" if not patch.startswith("3.11") else "3.10.0"
    assert [c.verdict for c in of(judge_fleet(snaps), "FLT001")] == ["blocked"]


def test_driver_and_gpu_model_skew_across_nodes():
    snaps = job(world=16)
    for s in snaps[8:]:
        s.accelerators.driver_version = "550.54.15"
    snaps[9].accelerators.gpus[1].name = "NVIDIA A100-SXM4-40GB"
    snaps[9].accelerators.gpus[1].memory_total_bytes = 40 * GIB
    results = judge_fleet(snaps)
    (driver,) = of(results, "FLT004")
    assert driver.verdict == "warning"
    # a tie (8 against 8) goes to the value of the lowest rank
    assert driver.observed == "NVIDIA driver: ranks 8-15: 550.54.15 (majority, ranks 0-7: 570.158.01)"
    (gpus,) = of(results, "FLT005")
    assert gpus.evidence["ranks"] == "9"
    assert gpus.observed.startswith(
        "visible GPUs: rank 9: 1x NVIDIA A100-SXM4-40GB 40 GiB, 7x NVIDIA A100-SXM4-80GB 80 GiB"
    )


def test_nccl_settings_must_agree_per_variable():
    snaps = job()
    snaps[4].env.variables["NCCL_DEBUG"] = "INFO"
    del snaps[1].env.variables["NCCL_IB_HCA"]
    found = {c.subject: c for c in of(judge_fleet(snaps), "FLT007")}
    assert set(found) == {"NCCL_DEBUG", "NCCL_IB_HCA"}
    assert found["NCCL_DEBUG"].observed == "NCCL_DEBUG: rank 4: INFO (majority, ranks 0-3, 5-7: WARN)"
    assert found["NCCL_DEBUG"].fix == "set it in the job script, for every rank: export NCCL_DEBUG=WARN"
    assert found["NCCL_IB_HCA"].observed == "NCCL_IB_HCA: rank 1: (unset) (majority, ranks 0, 2-7: mlx5)"


def test_an_interface_missing_on_one_node_blocks_naming_its_ranks():
    snaps = job(world=16)
    for s in snaps[8:]:
        s.network.interfaces = [
            S.NetInterface(name="lo", loopback=True),
            S.NetInterface(name="eth0", up=True),
        ]
    (flt,) = of(judge_fleet(snaps), "FLT008")
    assert (flt.verdict, flt.subject) == ("blocked", "NCCL_SOCKET_IFNAME")
    assert flt.observed == "ranks 8-15: NCCL_SOCKET_IFNAME=ib0 matches no interface (they have: eth0)"
    assert flt.evidence == {"ranks": "8,9,10,11,12,13,14,15"}
    assert flt.fix == "name an interface every node has, in the job script: export NCCL_SOCKET_IFNAME=eth0"


def test_interfaces_are_skipped_without_a_network_section_or_a_setting():
    snaps = job(world=2)
    for s in snaps:
        s.network = S.NetworkSection()
    assert [(c.verdict, c.reason) for c in of(judge_fleet(snaps), "FLT008")] == [
        ("skipped", "ranks 0-1: no network section in the snapshot")
    ]
    for s in snaps:
        s.env.variables.pop("NCCL_SOCKET_IFNAME")
    assert [c.reason for c in of(judge_fleet(snaps), "FLT008")] == [
        "neither NCCL_SOCKET_IFNAME nor GLOO_SOCKET_IFNAME is set on any rank"
    ]


@pytest.mark.parametrize(
    ("spec", "nccl", "selected"),
    [
        ("ib", True, ["ib0", "ib1"]),  # a prefix
        ("=ib", True, []),  # exact names only
        ("=ib0,eth0", True, ["eth0", "ib0"]),
        ("^docker,lo", True, ["eth0", "ib0", "ib1"]),  # all but the excluded prefixes
        ("^=ib0", True, ["docker0", "eth0", "ib1", "lo"]),
        ("ib0,eth0", False, ["eth0", "ib0"]),  # gloo: exact names
        ("ib", False, []),
    ],
)
def test_ifname_syntax(spec, nccl, selected):
    names = ["docker0", "eth0", "ib0", "ib1", "lo"]
    assert sorted(ifname_matches(spec, names, nccl=nccl)) == selected


def test_small_shm_and_open_files_name_the_ranks():
    snaps = job(world=4, per_node=2)
    for s in snaps[2:]:
        s.platform.shm_total_bytes = 64 * 1024**2
    snaps[1].platform.open_files_limit = 1024
    results = judge_fleet(snaps)
    (shm,) = of(results, "FLT009")
    assert (shm.verdict, shm.observed, shm.evidence) == (
        "warning",
        "/dev/shm: ranks 2-3: 0.06 GiB",
        {"ranks": "2,3"},
    )
    assert shm.fix == "give the containers a larger /dev/shm: docker run --shm-size=16g ..."
    (nofile,) = of(results, "FLT010")
    assert (nofile.verdict, nofile.observed) == ("warning", "open-files limit: rank 1: 1024")
    assert nofile.expected == f"at least {MIN_OPEN_FILES} on every rank"


def test_missing_and_duplicated_ranks():
    snaps = job()
    del snaps[5]
    (flt,) = of(judge_fleet(snaps), "FLT011")
    assert (flt.verdict, flt.observed, flt.evidence) == (
        "blocked",
        "7 of 8 ranks reported; missing: rank 5",
        {"ranks": "5"},
    )
    twice = job(world=2)
    twice[1].launch.rank = 0
    (dup,) = of(judge_fleet(twice), "FLT011")
    assert (dup.verdict, dup.observed) == ("blocked", "rank 0 reported more than once (2 snapshots)")


def test_more_ranks_than_gpus_on_a_node_is_blocked():
    snaps = job(world=9, per_node=9)  # 9 ranks on one 8-GPU node
    results = judge_fleet(snaps)
    (world,) = of(results, "FLT012")
    assert (world.verdict, world.observed) == (
        "blocked",
        "world size 9, 8 distinct GPUs visible to all ranks",
    )
    (per_node,) = of(results, "FLT013")
    assert (per_node.verdict, per_node.subject, per_node.observed) == (
        "blocked",
        "gpu-node-1",
        "node gpu-node-1 (ranks 0-8): 9 ranks, 8 GPUs visible",
    )
    assert per_node.fix == "start 8 ranks on gpu-node-1: torchrun --nproc-per-node=8 ..."


def test_fewer_ranks_than_gpus_on_one_node_is_a_warning():
    snaps = job(world=12, per_node=8)  # node 2 runs only 4 of its 8 GPUs
    results = judge_fleet(snaps)
    assert [(c.verdict, c.observed) for c in of(results, "FLT012")] == [
        ("warning", "world size 12, 16 distinct GPUs visible: 4 idle")
    ]
    assert [(c.verdict, c.subject) for c in of(results, "FLT013")] == [("warning", "gpu-node-2")]


def test_one_gpu_per_rank_counts_the_gpus_each_rank_sees():
    snaps = job(world=8)
    for r, s in enumerate(snaps):  # srun --gpus-per-task=1: each rank sees only its own GPU
        for g in s.accelerators.gpus:
            g.visible = g.index == r
    results = judge_fleet(snaps)
    assert [c.verdict for c in of(results, "FLT012") + of(results, "FLT013")] == ["ok", "ok"]


def test_gpu_checks_skip_on_a_cpu_fleet():
    cpu = [recorded("cpu-laptop") for _ in range(2)]
    results = judge_fleet(cpu)
    skipped = {c.id: c.reason for c in results if c.verdict == "skipped"}
    assert skipped["FLT012"] == "no rank sees a GPU (gloo on CPU)"
    assert skipped["FLT006"] == "no rank has a CUDA build of torch (gloo, no NCCL)"


def test_clock_skew_after_a_barrier_names_the_rank():
    snaps = job(world=4)
    base = 1_796_000_000_000_000_000
    for r, s in enumerate(snaps):
        s.launch.clock_source, s.launch.wall_clock_ns = "barrier", base + r * 1_000_000  # 1 ms apart
    assert [(c.verdict, c.observed) for c in of(judge_fleet(snaps), "FLT014")] == [
        ("ok", "clocks within 3 ms of each other")
    ]
    snaps[2].launch.wall_clock_ns = base + 2_500_000_000
    (clock,) = of(judge_fleet(snaps), "FLT014")
    assert clock.verdict == "warning"
    assert clock.observed == "rank 2 2.50 s ahead of the median"
    assert clock.evidence == {"ranks": "2", "spread_s": "2.500"}


def test_rank_numbers_come_from_the_launch_section_or_the_file_order():
    snaps = job(world=3)
    assert [x.rank for x in ranked(list(reversed(snaps)))] == [0, 1, 2]
    for s in snaps:
        s.launch = S.LaunchSection()
    assert [x.rank for x in ranked(snaps)] == [0, 1, 2]


def test_helpers():
    assert rank_list([7, 0, 1, 2, 5, 8]) == "0-2, 5, 7-8"
    assert rank_list([]) == ""
    assert spread({0: "a", 1: "b", 2: "b"}) == ("b", {"a": [0], "b": [1, 2]})
    assert spread({0: "a", 1: "b"})[0] == "a"  # a tie: the lowest rank's value


def test_per_rank_findings_are_folded():
    same = CheckResult(id="PY001", title="t", verdict="ok", observed="3.12")
    only = CheckResult(id="PKG001", title="t", verdict="blocked", observed="x", subject="numpy")
    folded = per_rank({0: [same], 1: [same, only], 2: [same, only]})
    assert [(c.id, c.subject, c.evidence) for c in folded] == [
        ("PY001", None, {"ranks": "all"}),
        ("PKG001", "ranks 1-2: numpy", {"ranks": "1,2"}),
    ]


def test_fleet_report_carries_every_rank_digest():
    snaps = job(world=2)
    set_version(snaps[1], "numpy", "2.1.0")
    profile = make_profile(requirements=["numpy>=2.2"])
    report = fleet_report("fleet", snaps, profile=profile)
    assert report.fleet is not None
    assert report.fleet.world_size == 2 and report.fleet.launcher == "torchrun"
    assert [(r.rank, r.host, r.gpus) for r in report.fleet.ranks] == [
        (0, "gpu-node-1", 8),
        (1, "gpu-node-1", 8),
    ]
    assert [r.snapshot_digest for r in report.fleet.ranks] == [snapshot_digest(s) for s in snaps]
    assert report.snapshot_digest == snapshot_digest(snaps[0])
    assert report.environment["world_size"] == "2"
    pkg = [c for c in report.checks if c.id == "PKG001" and c.verdict == "blocked"]
    assert [(c.subject, c.evidence["ranks"]) for c in pkg] == [("rank 1: numpy", "1")]


def test_fleet_compare_cli(tmp_path, capsys):
    paths = []
    snaps = job(world=3, per_node=3)
    set_version(snaps[2], "numpy", "2.1.0")
    for s in snaps:
        for g in s.accelerators.gpus:
            g.visible = g.index < 3
    for r, s in enumerate(snaps):
        path = tmp_path / f"snap-{r}.json"
        path.write_bytes(msgspec.json.encode(s))
        paths.append(str(path))
    code, out, err = run_cli(capsys, "fleet", "compare", *paths, "--json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert data["kind"] == "fleet" and data["verdict"] == "warning"
    assert data["fleet"]["world_size"] == 3 and data["fleet"]["launcher"] == "files"
    assert [(c["id"], c["subject"]) for c in data["checks"] if c["verdict"] == "warning"] == [
        ("FLT002", "numpy")
    ]
    code, out, err = run_cli(capsys, "fleet", "compare", *paths, "--strict")
    assert code == 1 and "numpy: rank 2: 2.1.0 (majority, ranks 0-1: 2.2.6)" in out


def test_fleet_compare_of_a_file_that_is_no_snapshot_is_one_line(tmp_path, capsys):
    bad = tmp_path / "report.json"
    bad.write_text('{"kind": "preflight", "checks": []}')
    code, out, err = run_cli(capsys, "fleet", "compare", str(bad))
    assert code == 2 and out == ""
    assert err == (
        f"stackcheck: error: {bad}: this is a stackcheck preflight report, not a snapshot (make one with "
        "`stackcheck snapshot -o snapshot.json`)\n"
    )


def test_ranks_of_one_environment_are_judged_once(monkeypatch):
    """Eight ranks that differ only in who they are (launch section, RANK-like variables) cost one
    preflight; a rank whose environment differs gets its own."""
    import stackcheck.judge

    calls = []
    real = stackcheck.judge.judge

    def counting(snapshot, **kw):
        calls.append(snapshot.launch.rank)
        return real(snapshot, **kw)

    monkeypatch.setattr(stackcheck.judge, "judge", counting)
    snaps = job()
    for r, s in enumerate(snaps):
        s.env.variables.update({"RANK": str(r), "LOCAL_RANK": str(r), "SLURM_PROCID": str(r)})
    snaps[5].env.variables["CUDA_VISIBLE_DEVICES"] = "5"
    report = fleet_report("preflight", snaps, profile=make_profile())
    assert calls == [0, 5]
    own = [c for c in report.checks if not c.id.startswith("FLT")]
    assert own and {c.evidence["ranks"] for c in own} == {"all"}  # the same findings on every rank
