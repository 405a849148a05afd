"""Prove the collectives work: all_reduce, all_gather, reduce_scatter, broadcast and barrier
with known answers, each bounded by a timeout, then an all_reduce bus-bandwidth sweep.

NCCL on GPUs (one per rank, ``cuda:LOCAL_RANK``), gloo on CPU. Every rank marks in the job's
store that it arrived at a step before it starts it, and what it saw after; a step that does
not finish within the timeout becomes a finding naming the ranks that never arrived, instead
of a job the watchdog kills ten minutes later. After a hang no further collective runs on the
group (its state is unknown); the exit code still reaches every rank through the store.

Bus bandwidth as nccl-tests reports it (its PERFORMANCE.md): algbw = bytes / time, and for
all_reduce busbw = algbw * 2 (n - 1) / n, the figure to compare with the link's speed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from importlib import resources
from typing import Any

from stackcheck.checks.registry import CheckSpec, Outcome, blocked, by_id, declare, ok, skipped, warning
from stackcheck.checks.registry import result_of as finding
from stackcheck.fleet.gather import Fleet
from stackcheck.fleet.judge import ranks_word
from stackcheck.models.finding import CheckResult
from stackcheck.models.snapshot import Snapshot
from stackcheck.shellcmd import code, command

__all__ = [
    "COLLECTIVES",
    "STEPS",
    "Step",
    "bus_bandwidth",
    "expected_busbw",
    "judge_bandwidth",
    "judge_step",
    "run_collectives",
    "run_step",
]

ELEMENTS = 4096  # per rank and collective: small, exact in float32
CPU_SIZES = tuple(4**i * 65536 for i in range(5))  # 64 KiB … 16 MiB
GPU_SIZES = tuple(4**i * 1048576 for i in range(6))  # 1 MiB … 1 GiB
EXPECTED_FRACTION = 0.6  # of the link's nominal speed, below which the sweep is a warning
_ACC = "accept"

STEPS: dict[str, CheckSpec] = by_id(
    declare(
        "FLT101",
        "all_reduce gives the right sum on every rank",
        explain="Each rank contributes rank+1; every rank must get n(n+1)/2. A timeout names the ranks "
        "that never arrived (accept --distributed --timeout).",
        command=_ACC,
    ),
    declare(
        "FLT102",
        "all_gather collects every rank's tensor",
        explain="Each rank contributes a tensor filled with its rank; every rank must get all of them "
        "in rank order. A timeout names the ranks that never arrived.",
        command=_ACC,
    ),
    declare(
        "FLT103",
        "reduce_scatter gives each rank its reduced chunk",
        explain="Chunk j of rank s holds s*n+j; rank r must get the sum over s of s*n+r. A timeout names "
        "the ranks that never arrived.",
        command=_ACC,
    ),
    declare(
        "FLT104",
        "broadcast from rank 0 reaches every rank",
        explain="Rank 0 sends a known tensor; every other rank must receive it exactly. A timeout names "
        "the ranks that never arrived.",
        command=_ACC,
    ),
    declare(
        "FLT105",
        "barrier completes on every rank",
        explain="A barrier of all ranks within the timeout; one that does not complete names the ranks "
        "that never arrived.",
        command=_ACC,
    ),
    declare(
        "FLT106",
        "all_reduce bus bandwidth",
        explain="An all_reduce sweep over message sizes, busbw = bytes/time * 2(n-1)/n as nccl-tests "
        f"reports it. A single node of one known GPU model is compared with its link: below "
        f"{EXPECTED_FRACTION:.0%} of the nominal per-direction NVLink speed is a warning (check "
        "nvidia-smi topo -m, NCCL_P2P_DISABLE, NCCL_DEBUG=INFO). Elsewhere the figure is reported as "
        "measured.",
        command=_ACC,
    ),
)
COLLECTIVES = {
    "all_reduce": "FLT101",
    "all_gather": "FLT102",
    "reduce_scatter": "FLT103",
    "broadcast": "FLT104",
    "barrier": "FLT105",
}


@dataclass
class Step:
    """What one rank saw of one collective."""

    name: str
    rank: int
    ok: bool = False
    detail: str = ""
    timed_out: bool = False
    seconds: float = 0.0


@dataclass
class StepView:
    """Rank 0's view of one collective across the fleet (from the store)."""

    name: str
    world_size: int
    timeout_s: float
    own: Step
    arrived: list[int] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)  # rank → what it saw
    unfinished: list[int] = field(default_factory=list)  # arrived, never reported a result
    backend: str = "gloo"


# ----------------------------------------------------------------------------- pure judgement
def judge_step(view: StepView) -> Outcome:
    """The verdict of one collective over the fleet."""
    n, where = view.world_size, f"{view.world_size} ranks, {view.backend}"
    missing = sorted(set(range(n)) - set(view.arrived))
    if view.own.timed_out or missing or view.unfinished:
        parts = []
        if missing:
            parts.append(f"{ranks_word(missing)} never arrived")
        if view.unfinished:
            parts.append(f"{ranks_word(view.unfinished)} arrived but did not finish")
        return blocked(
            f"{view.name} did not complete within {view.timeout_s:g} s ({where}): "
            + ("; ".join(parts) or "hung"),
            f"every rank joins and finishes {view.name} within {view.timeout_s:g} s",
            f"see where the ranks named are stuck ({code(command('py-spy', 'dump', '--pid', 'PID'))}), then "
            f"rerun with NCCL_DEBUG=INFO ({code(command('export', 'NCCL_DEBUG=INFO'))})",
            evidence={
                "ranks": ",".join(map(str, missing or view.unfinished)),
                "timeout_s": f"{view.timeout_s:g}",
            },
        )
    if view.failed:
        bad = sorted(view.failed)
        shown = "; ".join(f"rank {r}: {view.failed[r]}" for r in bad[:4])
        return blocked(
            f"{view.name} gave a wrong result on {ranks_word(bad)} ({where}): {shown}",
            f"the known answer of {view.name} on every rank",
            "compare the drivers, NCCL versions and NCCL_* settings of those ranks: "
            + command("stackcheck", "preflight", "--distributed", "--profile", "ID"),
            evidence={"ranks": ",".join(map(str, bad))},
        )
    what = "completed" if view.name == "barrier" else "the known answer"
    return ok(f"{view.name}: {what} on all {n} ranks ({where}, {view.own.seconds * 1000:.1f} ms)")


def bus_bandwidth(nbytes: int, seconds: float, world_size: int) -> float:
    """nccl-tests' all_reduce busbw in GB/s (1e9 bytes): bytes/time * 2(n-1)/n."""
    if seconds <= 0 or world_size < 1:
        return 0.0
    return nbytes / seconds / 1e9 * (2 * (world_size - 1) / world_size)


def expected_busbw(snapshots: Sequence[Snapshot]) -> tuple[float, str] | None:
    """(nominal GB/s per direction, what it is) of the link between the ranks' GPUs, where it
    is known: one node, one GPU model of the table ``interconnect.json``; else None."""
    hosts = {s.network.hostname for s in snapshots}
    names = {g.name for s in snapshots for g in s.visible_gpus()}
    if len(hosts) != 1 or len(names) != 1 or len(snapshots) < 2:
        return None
    name = names.pop()
    for row in _links():
        if all(part in name for part in row["match"]):
            return float(row["nvlink_gbps_per_direction"]), f"{row['link']} of {name}"
    return None


def _links() -> list[dict[str, Any]]:
    text = resources.files("stackcheck.fleet").joinpath("interconnect.json").read_text(encoding="utf-8")
    return json.loads(text)["links"]


def judge_bandwidth(
    sweep: dict[int, float],
    world_size: int,
    backend: str,
    expected: tuple[float, str] | None,
    error: str = "",
) -> Outcome:
    """The bus-bandwidth finding from ``sweep`` (bytes → busbw GB/s, rank 0's timing)."""
    if world_size < 2:
        return skipped("one rank: no bus to measure")
    if error:
        return blocked(
            f"the all_reduce sweep failed after {len(sweep)} sizes: {error}",
            "every size completes within the timeout",
            "rerun with NCCL_DEBUG=INFO and look at the ranks' logs",
        )
    if not sweep:
        return skipped("not measured (an earlier collective failed)")
    peak_bytes = max(sweep, key=lambda b: sweep[b])
    peak = sweep[peak_bytes]
    observed = (
        f"peak busbw {peak:.2f} GB/s at {_size(peak_bytes)} ({world_size} ranks, {backend}); "
        + ", ".join(f"{_size(b)}: {v:.2f}" for b, v in sorted(sweep.items()))
    )
    evidence = {str(b): f"{v:.3f}" for b, v in sorted(sweep.items())}
    if expected is None:
        return ok(observed, "no nominal speed known for this interconnect", evidence=evidence)
    nominal, link = expected
    want = f"at least {EXPECTED_FRACTION:.0%} of {nominal:g} GB/s ({link})"
    if peak < EXPECTED_FRACTION * nominal:
        return warning(
            observed,
            want,
            "check the GPU topology (nvidia-smi topo -m) and NCCL_P2P_DISABLE / NCCL_SHM_DISABLE, then rerun "
            "with NCCL_DEBUG=INFO to see the transport NCCL chose",
            evidence=evidence,
        )
    return ok(observed, want, evidence=evidence)


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} B"


# ----------------------------------------------------------------------------- running them
@dataclass
class _Env:
    """The torch side of a run: the module, the group the collectives run on, the device."""

    dist: Any
    torch: Any
    group: Any
    device: Any
    backend: str
    timeout: timedelta


def _setup(fleet: Fleet) -> _Env:
    import torch
    import torch.distributed as dist

    timeout = timedelta(seconds=fleet.timeout_s)
    if torch.cuda.is_available() and dist.is_nccl_available():
        torch.cuda.set_device(fleet.local_rank % torch.cuda.device_count())
        device = torch.device("cuda", torch.cuda.current_device())
        group = dist.new_group(backend="nccl", timeout=timeout)
        return _Env(dist, torch, group, device, "nccl", timeout)
    return _Env(dist, torch, None, torch.device("cpu"), "gloo", timeout)


def _wait(env: _Env, work: Any) -> None:
    work.wait(timeout=env.timeout)
    if env.device.type == "cuda":
        env.torch.cuda.synchronize(env.device)


def _op(env: _Env, name: str, rank: int, n: int) -> Callable[[], str | None]:
    """The collective ``name`` with its known answer: a function that runs it and returns
    what was wrong (None when right)."""
    torch, dist, dev = env.torch, env.dist, env.device

    def full(value: float) -> Any:
        return torch.full((ELEMENTS,), float(value), dtype=torch.float32, device=dev)

    def wrong(got: Any, want: float) -> str | None:
        if torch.equal(got, full(want)):
            return None
        return f"expected {want:g}, got values {sorted(set(got.flatten().tolist()))[:3]}"

    def all_reduce() -> str | None:
        t = full(rank + 1)
        _wait(env, dist.all_reduce(t, group=env.group, async_op=True))
        return wrong(t, n * (n + 1) / 2)

    def all_gather() -> str | None:
        out = [full(-1) for _ in range(n)]
        _wait(env, dist.all_gather(out, full(rank), group=env.group, async_op=True))
        return next((f"slot {j}: {w}" for j, t in enumerate(out) if (w := wrong(t, j))), None)

    def reduce_scatter() -> str | None:
        out = full(-1)
        _wait(
            env,
            dist.reduce_scatter(out, [full(rank * n + j) for j in range(n)], group=env.group, async_op=True),
        )
        return wrong(out, n * (n - 1) / 2 * n + n * rank)

    def broadcast() -> str | None:
        t = full(7) if rank == 0 else full(0)
        _wait(env, dist.broadcast(t, src=0, group=env.group, async_op=True))
        return wrong(t, 7)

    def barrier() -> str | None:
        _wait(env, dist.barrier(group=env.group, async_op=True))
        return None

    return {
        "all_reduce": all_reduce,
        "all_gather": all_gather,
        "reduce_scatter": reduce_scatter,
        "broadcast": broadcast,
        "barrier": barrier,
    }[name]


def run_step(fleet: Fleet, name: str, op: Callable[[], str | None]) -> Step:
    """Mark arrival in the store, run one collective with its timeout, record what was seen."""
    fleet.store.set(fleet.key("arrived", name, fleet.rank), "1")
    step = Step(name=name, rank=fleet.rank)
    start = time.perf_counter()
    try:
        problem = op()
        step.ok, step.detail = problem is None, problem or ""
    except Exception as exc:  # a timeout, or the backend refused: a finding either way
        text = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        elapsed = time.perf_counter() - start
        step.timed_out = (
            "timed out" in text.lower() or "timeout" in text.lower() or elapsed >= fleet.timeout_s * 0.9
        )
        step.detail = f"{type(exc).__name__}: {text}"
    step.seconds = time.perf_counter() - start
    return step


def _view(fleet: Fleet, own: Step, backend: str) -> StepView:
    """Rank 0 reads what every rank reported about ``own``'s collective."""
    n, store = fleet.world_size, fleet.store
    view = StepView(name=own.name, world_size=n, timeout_s=fleet.timeout_s, own=own, backend=backend)
    view.arrived = [r for r in range(n) if store.check([fleet.key("arrived", own.name, r)])]
    if own.timed_out:
        return view
    done = [fleet.key("done", own.name, r) for r in range(n)]
    try:
        store.wait(done, timedelta(seconds=fleet.timeout_s))
    except Exception:  # some rank never reported: it hangs in the collective
        pass
    for r in range(n):
        if not store.check([done[r]]):
            if r in view.arrived:
                view.unfinished.append(r)
            continue
        seen = json.loads(store.get(done[r]))
        if not seen["ok"]:
            view.failed[r] = seen["detail"]
    view.arrived = [r for r in range(n) if store.check([fleet.key("arrived", own.name, r)])]
    return view


def _publish(fleet: Fleet, step: Step) -> None:
    fleet.store.set(
        fleet.key("done", step.name, fleet.rank), json.dumps({"ok": step.ok, "detail": step.detail})
    )


def _go_on(fleet: Fleet, name: str, verdict: bool | None = None) -> bool:
    """Rank 0 decides whether the next collective runs (``verdict``); the others wait for it."""
    key = fleet.key("continue", name)
    if fleet.rank == 0:
        fleet.store.set(key, "1" if verdict else "0")
        return bool(verdict)
    try:
        fleet.store.wait([key], timedelta(seconds=fleet.timeout_s * 2 + 5))
        return fleet.store.get(key) == b"1"
    except Exception:
        return False


def _sweep(env: _Env, fleet: Fleet, sizes: Sequence[int], iterations: int, out: dict[int, float]) -> None:
    """busbw (GB/s) per message size into ``out``, rank 0's timing of ``iterations``
    all_reduces after one warm-up; every op bounded by the timeout."""
    torch, dist = env.torch, env.dist
    for nbytes in sizes:
        t = torch.ones(nbytes // 4, dtype=torch.float32, device=env.device)
        _wait(env, dist.all_reduce(t, group=env.group, async_op=True))  # warm-up
        _wait(env, dist.barrier(group=env.group, async_op=True))
        start = time.perf_counter()
        for _ in range(iterations):
            _wait(env, dist.all_reduce(t, group=env.group, async_op=True))
        out[nbytes] = bus_bandwidth(nbytes, (time.perf_counter() - start) / iterations, fleet.world_size)
        del t


def run_collectives(
    fleet: Fleet,
    snapshots: Sequence[Snapshot],
    *,
    sizes: Sequence[int] | None = None,
    iterations: int | None = None,
    step: Callable[[Fleet, str, Callable[[], str | None]], Step] | None = None,
) -> list[CheckResult]:
    """Run the collectives on every rank; rank 0 returns the findings (the others an empty
    list). ``step``: how one collective is run (:func:`run_step`)."""
    env = _setup(fleet)
    runner = step or run_step
    results: list[CheckResult] = []
    going = True
    for name, check_id in COLLECTIVES.items():
        if not going:
            if fleet.rank == 0:
                results.append(finding(STEPS[check_id], skipped("an earlier collective failed or hung")))
            continue
        mine = runner(fleet, name, _op(env, name, fleet.rank, fleet.world_size))
        if mine.timed_out:
            fleet.healthy = False
        else:
            _publish(fleet, mine)
        if fleet.rank == 0:
            outcome = judge_step(_view(fleet, mine, env.backend))
            results.append(finding(STEPS[check_id], outcome))
            going = _go_on(fleet, name, outcome.verdict == "ok" and fleet.healthy)
        else:
            going = _go_on(fleet, name) and not mine.timed_out
    if not going:
        fleet.healthy = False
    sweep: dict[int, float] = {}
    error = ""
    if going and fleet.world_size > 1:
        on_gpu = env.device.type == "cuda"
        chosen = sizes or (GPU_SIZES if on_gpu else CPU_SIZES)
        try:
            _sweep(env, fleet, chosen, iterations or (20 if on_gpu else 3), sweep)
        except Exception as exc:  # a hang in the sweep: the group is done for
            fleet.healthy = False
            error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
    if fleet.rank == 0:
        expected = expected_busbw(snapshots) if env.backend == "nccl" else None
        outcome = judge_bandwidth(sweep, fleet.world_size, env.backend, expected, error)
        results.append(finding(STEPS["FLT106"], outcome))
    return results
