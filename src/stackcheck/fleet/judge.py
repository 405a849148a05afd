"""Fleet checks: pure judgement over the snapshots of every rank of one job.

A single-process check cannot see that one node runs another driver, one rank another torch
build, or that ``NCCL_SOCKET_IFNAME`` names an interface one node lacks. Each check here looks
at one fact on every rank; where the ranks disagree, the finding names the ranks that differ
from the majority and what they have instead. Pure: snapshots in, findings out, so every
check is testable from recorded snapshots (``stackcheck fleet compare``).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import msgspec

from stackcheck.checks.registry import (
    CheckSpec,
    Outcome,
    blocked,
    by_id,
    declare,
    ok,
    result_of,
    skipped,
    warning,
)
from stackcheck.identifiers import printable
from stackcheck.models.finding import CheckResult, Report, Verdict
from stackcheck.models.fleet import FleetInfo, RankSnapshot
from stackcheck.models.profile import Profile
from stackcheck.models.snapshot import Snapshot, normalize_name, snapshot_digest
from stackcheck.shellcmd import command

__all__ = [
    "CHECKS",
    "MIN_OPEN_FILES",
    "MIN_SHM_BYTES",
    "MAX_CLOCK_SKEW_S",
    "Rank",
    "fleet_info",
    "fleet_report",
    "judge_fleet",
    "rank_list",
    "ranks_word",
    "ranked",
    "spread",
]

GIB = 1024**3
MIN_SHM_BYTES = 1 * GIB  # docker's default /dev/shm is 64 MiB: NCCL's shm transport and DataLoader need more
MIN_OPEN_FILES = 65536  # DataLoader workers share tensors through file descriptors
MAX_CLOCK_SKEW_S = 1.0  # log correlation, timeouts and TLS all assume clocks within a second
# packages whose skew breaks collectives themselves (blocked); any other skew is a warning
CORE_PACKAGES = ("torch", "triton")
NCCL_PREFIXES = ("nvidia-nccl-",)

_NO = "(none)"
_FLEET = "fleet"

CHECKS: dict[str, CheckSpec] = by_id(
    declare(
        "FLT001",
        "same Python on every rank",
        explain="The Python version of every rank. Another minor version on one node changes pickled "
        "objects (all_gather_object, DataLoader workers) and the wheels installed. Fix: build every "
        "node's environment from one lock file.",
        command=_FLEET,
    ),
    declare(
        "FLT002",
        "same package versions on every rank",
        explain="Every installed distribution's version on every rank (a package missing on a rank "
        "counts as '(none)'). torch and triton skew is blocked (collectives and compiled kernels differ);"
        " other skew is a warning. Fix: the pip command for the ranks that differ installs the "
        "majority's version.",
        command=_FLEET,
    ),
    declare(
        "FLT003",
        "same torch build on every rank",
        explain="torch's version and the CUDA version it was built for, per rank. Two builds in one job "
        "disagree on NCCL and on kernels: blocked. Fix: install the majority's build on the ranks named.",
        command=_FLEET,
    ),
    declare(
        "FLT004",
        "same NVIDIA driver on every node",
        explain="The kernel driver version per rank. A node with another driver runs another CUDA "
        "runtime ceiling and NCCL behaviour: a warning naming the ranks. Skipped without GPUs.",
        command=_FLEET,
    ),
    declare(
        "FLT005",
        "same GPU model and memory on every rank",
        explain="The visible GPUs of every rank (model and memory). A rank on a smaller or slower GPU "
        "sets the pace or runs out of memory first. Skipped without GPUs.",
        command=_FLEET,
    ),
    declare(
        "FLT006",
        "same NCCL version on every rank",
        explain="The NCCL wheel (nvidia-nccl-cu*) each rank loads. Ranks with different NCCL versions "
        "may hang or fail in the first collective: blocked. Skipped when no rank has a CUDA build.",
        command=_FLEET,
    ),
    declare(
        "FLT007",
        "same NCCL_* and TORCH_NCCL_* settings on every rank",
        explain="Every NCCL_* / TORCH_NCCL_* variable, per rank ('(unset)' where a rank lacks it). "
        "Protocol, algorithm and timeout settings must agree or collectives hang; set them in the job "
        "script, not in one node's profile.",
        command=_FLEET,
    ),
    declare(
        "FLT008",
        "socket interface named by NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME exists",
        explain="The interfaces NCCL_SOCKET_IFNAME (comma list; '^' excludes, '=' exact, else a prefix) "
        "and GLOO_SOCKET_IFNAME (exact names) select, against each rank's network interfaces. A rank "
        "with no matching interface cannot join: blocked, naming the ranks and the interfaces they have.",
        command=_FLEET,
    ),
    declare(
        "FLT009",
        "/dev/shm large enough on every rank",
        explain=f"The size of /dev/shm per rank. Below {MIN_SHM_BYTES // GIB} GiB (docker's default is "
        "64 MiB) NCCL's shared-memory transport and DataLoader workers fail with bus errors. Fix: "
        "docker run --shm-size=16g, or a larger tmpfs.",
        command=_FLEET,
    ),
    declare(
        "FLT010",
        "open-files limit high enough on every rank",
        explain=f"RLIMIT_NOFILE per rank. Below {MIN_OPEN_FILES} DataLoader workers sharing tensors "
        "through file descriptors fail with 'Too many open files'. Fix: ulimit -n 65536 in the job script"
        " (or the container's --ulimit nofile).",
        command=_FLEET,
    ),
    declare(
        "FLT011",
        "every rank reported once",
        explain="The ranks gathered against the world size they were launched with: a rank missing or "
        "reported twice means the launch is not the job it claims to be.",
        command=_FLEET,
    ),
    declare(
        "FLT012",
        "world size vs GPUs visible",
        explain="The world size against the distinct GPUs all ranks see. More ranks than GPUs puts two "
        "ranks on one GPU (NCCL refuses: 'Duplicate GPU detected'): blocked; fewer leaves GPUs idle: a "
        "warning. Skipped when no rank sees a GPU (gloo on CPU).",
        command=_FLEET,
    ),
    declare(
        "FLT013",
        "ranks per node vs GPUs per node",
        explain="Per node (host name), the ranks started against the GPUs its ranks see. More ranks "
        "than GPUs on a node is blocked, fewer a warning (--nproc-per-node should match). Skipped "
        "without GPUs.",
        command=_FLEET,
    ),
    declare(
        "FLT014",
        "clocks agree across ranks",
        explain=f"Each rank's wall clock read right after a barrier of all ranks. More than "
        f"{MAX_CLOCK_SKEW_S:g} s apart breaks log correlation, timeouts and certificates: a warning "
        "naming the ranks off the median. Fix: run chrony/ntpd on every node. Skipped for snapshots "
        "taken at different times (fleet compare of files).",
        command=_FLEET,
    ),
)


@dataclass(frozen=True)
class Rank:
    """One rank's snapshot and the rank number it goes by."""

    rank: int
    snapshot: Snapshot

    @property
    def host(self) -> str:
        s = self.snapshot
        if s.network.hostname:
            return s.network.hostname
        return f"node {s.launch.node_rank}" if s.launch.node_rank is not None else f"rank {self.rank}"


def ranked(snapshots: Sequence[Snapshot]) -> list[Rank]:
    """The snapshots with their rank numbers: the launch section's rank when every snapshot has
    a distinct one, else their position (files given in rank order)."""
    declared = [s.launch.rank for s in snapshots]
    numbers = [r for r in declared if r is not None]
    if len(numbers) == len(declared) and len(set(numbers)) == len(numbers):
        return sorted((Rank(r, s) for r, s in zip(numbers, snapshots)), key=lambda x: x.rank)
    return [Rank(i, s) for i, s in enumerate(snapshots)]


def fleet_info(ranks: Sequence[Rank], launcher: str = "") -> FleetInfo:
    world = next((r.snapshot.launch.world_size for r in ranks if r.snapshot.launch.world_size), None)
    return FleetInfo(
        world_size=world or len(ranks),
        launcher=launcher
        or next((r.snapshot.launch.launcher for r in ranks if r.snapshot.launch.launcher), ""),
        ranks=[
            RankSnapshot(
                rank=r.rank,
                snapshot_digest=snapshot_digest(r.snapshot),
                host=r.host,
                gpus=len(r.snapshot.visible_gpus()),
            )
            for r in ranks
        ],
    )


def rank_list(ranks: Iterable[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` → ``"0-2, 5, 7-8"``."""
    out: list[str] = []
    nums = sorted(set(ranks))
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        out.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return ", ".join(out)


def ranks_word(ranks: Sequence[int]) -> str:
    return f"rank{'s' if len(ranks) != 1 else ''} {rank_list(ranks)}"


def spread(values: dict[int, str]) -> tuple[str, dict[str, list[int]]]:
    """(the majority's value, value → ranks) of one fact per rank; a tie goes to the value of
    the lowest rank."""
    groups: dict[str, list[int]] = {}
    for rank in sorted(values):
        groups.setdefault(values[rank], []).append(rank)
    majority = max(groups, key=lambda v: (len(groups[v]), -groups[v][0]))
    return majority, groups


def _skew(
    what: str,
    values: dict[int, str],
    verdict: Verdict,
    fix: Callable[[str, list[int]], str],
    subject: str | None = None,
    quiet: bool = False,
) -> Iterator[Outcome]:
    """ok when every rank has the same value, else one finding naming the ranks that differ
    from the majority and what they have (``quiet``: no ok outcome, for per-subject checks)."""
    if not values:
        return
    majority, groups = spread(values)
    if len(groups) == 1:
        if not quiet:
            yield ok(f"{what}: {majority} on all {len(values)} ranks")
        return
    differing = sorted(r for v, rs in groups.items() if v != majority for r in rs)
    parts = [f"{ranks_word(rs)}: {v}" for v, rs in groups.items() if v != majority]
    observed = printable(
        f"{what}: " + "; ".join(parts) + f" (majority, {ranks_word(groups[majority])}: {majority})"
    )
    outcome = blocked if verdict == "blocked" else warning
    yield outcome(
        observed,
        f"the same {what} on every rank",
        fix(majority, differing),
        subject=subject,
        evidence={"ranks": ",".join(map(str, differing)), "majority": majority},
    )


def _same_env_fix(what: str) -> Callable[[str, list[int]], str]:
    def fix(majority: str, differing: list[int]) -> str:
        return f"give {ranks_word(differing)} the {what} of the others ({printable(majority)})"

    return fix


def _pip_fix(ranks: dict[int, Rank], name: str) -> Callable[[str, list[int]], str]:
    def fix(majority: str, differing: list[int]) -> str:
        python = ranks[differing[0]].snapshot.python.executable or "python"
        if majority == _NO:
            cmd = command(python, "-m", "pip", "uninstall", "-y", name)
        else:
            cmd = command(python, "-m", "pip", "install", f"{name}=={majority}")
        return f"on the node(s) of {ranks_word(differing)}: {cmd}"

    return fix


# ----------------------------------------------------------------------------- the checks
def _python(ranks: dict[int, Rank]) -> Iterator[Outcome]:
    versions = {r: x.snapshot.python.version or _NO for r, x in ranks.items()}
    minors = {r: ".".join(v.split(".")[:2]) for r, v in versions.items()}
    verdict: Verdict = "blocked" if len(set(minors.values())) > 1 else "warning"
    yield from _skew("Python version", versions, verdict, _same_env_fix("Python version"))


def _packages(ranks: dict[int, Rank]) -> Iterator[Outcome]:
    names: dict[str, str] = {}
    for x in ranks.values():
        for d in x.snapshot.packages.distributions:
            if not d.shadowed:
                names.setdefault(normalize_name(d.name), d.name)
    differing = 0
    for key in sorted(names):
        values = {}
        for r, x in ranks.items():
            found_dist = x.snapshot.distribution(key)
            values[r] = found_dist.version if found_dist is not None else _NO
        verdict: Verdict = "blocked" if key in CORE_PACKAGES or key.startswith(NCCL_PREFIXES) else "warning"
        found = list(
            _skew(names[key], values, verdict, _pip_fix(ranks, names[key]), subject=names[key], quiet=True)
        )
        differing += len(found)
        yield from found
    if not differing:
        yield ok(f"{len(names)} distributions, the same versions on all {len(ranks)} ranks")


def _torch(ranks: dict[int, Rank]) -> Iterator[Outcome]:
    values = {}
    for r, x in ranks.items():
        t = x.snapshot.torch
        values[r] = f"{t.version} (CUDA {t.cuda or 'none'})" if t.version else _NO
    if all(v == _NO for v in values.values()):
        yield skipped("torch is not installed on any rank")
        return
    yield from _skew("torch build", values, "blocked", _same_env_fix("torch build"))


def _gpu_ranks(ranks: dict[int, Rank]) -> bool:
    return any(x.snapshot.visible_gpus() for x in ranks.values())


def _driver(ranks: dict[int, Rank]) -> Iterator[Outcome]:
    if not _gpu_ranks(ranks):
        yield skipped("no rank sees a GPU")
        return
    values = {r: x.snapshot.accelerators.driver_version or _NO for r, x in ranks.items()}
    yield from _skew("NVIDIA driver", values, "warning", _same_env_fix("driver"))


def _gpu_models(ranks: dict[int, Rank]) -> Iterator[Outcome]:
    if not _gpu_ranks(ranks):
        yield skipped("no rank sees a GPU")
        return
    values = {}
    for r, x in ranks.items():
        kinds: dict[str, int] = {}
        for g in x.snapshot.visible_gpus():
            mem = f" {g.memory_total_bytes / GIB:.0f} GiB" if g.memory_total_bytes else ""
            kinds[f"{g.name or 'unknown GPU'}{mem}"] = kinds.get(f"{g.name or 'unknown GPU'}{mem}", 0) + 1
        values[r] = ", ".join(f"{n}x {k}" for k, n in sorted(kinds.items())) or _NO
    yield from _skew("visible GPUs", values, "warning", _same_env_fix("GPUs"))


def _nccl(ranks: dict[int, Rank]) -> Iterator[Outcome]:
    if not any(x.snapshot.torch.cuda for x in ranks.values()):
        yield skipped("no rank has a CUDA build of torch (gloo, no NCCL)")
        return
    values = {}
    for r, x in ranks.items():
        found = [
            d for d in x.snapshot.packages.distributions if normalize_name(d.name).startswith(NCCL_PREFIXES)
        ]
        values[r] = ", ".join(f"{d.name} {d.version}" for d in found) or "(bundled with torch)"
    yield from _skew("NCCL", values, "blocked", _same_env_fix("NCCL wheel"))


def _nccl_env(ranks: dict[int, Rank]) -> Iterator[Outcome]:
    names = sorted(
        {
            n
            for x in ranks.values()
            for n in x.snapshot.env.variables
            if n.startswith(("NCCL_", "TORCH_NCCL_"))
        }
    )
    if not names:
        yield ok("no NCCL_* / TORCH_NCCL_* variable set on any rank")
        return
    found = 0
    for name in names:
        values = {r: x.snapshot.env.variables.get(name, "(unset)") for r, x in ranks.items()}
        outcomes = list(_skew(name, values, "warning", _export_fix(name), subject=name, quiet=True))
        found += len(outcomes)
        yield from outcomes
    if not found:
        yield ok(f"{len(names)} NCCL settings, the same on all {len(ranks)} ranks: {', '.join(names)}")


def _export_fix(name: str) -> Callable[[str, list[int]], str]:
    def fix(majority: str, differing: list[int]) -> str:
        if majority == "(unset)":
            return f"remove it from the environment of {ranks_word(differing)}: {command('unset', name)}"
        return f"set it in the job script, for every rank: {command('export', f'{name}={majority}')}"

    return fix


def ifname_matches(spec: str, names: Sequence[str], *, nccl: bool) -> list[str]:
    """The interfaces of ``names`` a NCCL_SOCKET_IFNAME (``nccl``) or GLOO_SOCKET_IFNAME value
    selects. NCCL: comma list of prefixes, ``=`` before the list for exact names, ``^`` to
    exclude (NCCL's environment variable documentation); gloo: comma list of exact names."""
    if not nccl:
        wanted = [p.strip() for p in spec.split(",") if p.strip()]
        return [n for n in names if n in wanted]
    text = spec.strip()
    exclude = text.startswith("^")
    text = text.lstrip("^")
    exact = text.startswith("=")
    parts = [p.strip() for p in text.lstrip("=").split(",") if p.strip()]
    hit = [n for n in names if any(n == p if exact else n.startswith(p) for p in parts)]
    return [n for n in names if n not in hit] if exclude else hit


def _interfaces(ranks: dict[int, Rank]) -> Iterator[Outcome]:
    variables = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME")
    used = [v for v in variables if any(v in x.snapshot.env.variables for x in ranks.values())]
    if not used:
        yield skipped("neither NCCL_SOCKET_IFNAME nor GLOO_SOCKET_IFNAME is set on any rank")
        return
    for var in used:
        missing: dict[tuple[str, str], list[int]] = {}
        unknown: list[int] = []
        checked = 0
        common: set[str] | None = None
        for r, x in ranks.items():
            if x.snapshot.network.status != "ok":
                if var in x.snapshot.env.variables:
                    unknown.append(r)
                continue
            names = [i.name for i in x.snapshot.network.interfaces if not i.loopback]
            common = set(names) if common is None else common & set(names)
            spec = x.snapshot.env.variables.get(var)
            if spec is None:
                continue
            checked += 1
            every = [i.name for i in x.snapshot.network.interfaces]
            if not ifname_matches(spec, every, nccl=var.startswith("NCCL")):
                missing.setdefault((spec, ", ".join(names) or _NO), []).append(r)
        shared = sorted(common or ())
        for (spec, have), rs in missing.items():
            if shared:
                export = command("export", f"{var}={shared[0]}")
                fix = f"name an interface every node has, in the job script: {export}"
            else:
                fix = (
                    f"no interface name is common to all nodes: set {var} per node, "
                    f"or unset it on {ranks_word(rs)}"
                )
            yield blocked(
                printable(f"{ranks_word(rs)}: {var}={spec} matches no interface (they have: {have})"),
                f"{var} names an interface present on every rank",
                fix,
                subject=var,
                evidence={"ranks": ",".join(map(str, rs))},
            )
        if unknown:
            yield skipped(f"{ranks_word(unknown)}: no network section in the snapshot", subject=var)
        if checked and not missing:
            yield ok(f"{var}: a matching interface on all {checked} ranks that set it", subject=var)


def _minimum(
    ranks: dict[int, Rank], what: str, get: Callable[[Snapshot], int | None], least: int, show, fix: str
) -> Iterator[Outcome]:
    values = {r: get(x.snapshot) for r, x in ranks.items()}
    known = {r: v for r, v in values.items() if v is not None}
    if not known:
        yield skipped(f"no rank's snapshot has its {what}")
        return
    low = {r: v for r, v in known.items() if v < least}
    if not low:
        yield ok(f"{what}: at least {show(min(known.values()))} on all {len(known)} ranks")
        return
    groups: dict[str, list[int]] = {}
    for r, v in sorted(low.items()):
        groups.setdefault(show(v), []).append(r)
    yield warning(
        f"{what}: " + "; ".join(f"{ranks_word(rs)}: {v}" for v, rs in groups.items()),
        f"at least {show(least)} on every rank",
        fix,
        evidence={"ranks": ",".join(map(str, sorted(low)))},
    )


def _shm(ranks: dict[int, Rank]) -> Iterator[Outcome]:
    def show(v: int) -> str:
        return f"{v / GIB:.2f} GiB" if v < GIB else f"{v / GIB:.0f} GiB"

    fix = "give the containers a larger /dev/shm: " + command("docker", "run", "--shm-size=16g", "...")
    yield from _minimum(ranks, "/dev/shm", lambda s: s.platform.shm_total_bytes, MIN_SHM_BYTES, show, fix)


def _nofile(ranks: dict[int, Rank]) -> Iterator[Outcome]:
    fix = "raise the limit in the job script, before the launcher: " + command(
        "ulimit", "-n", str(MIN_OPEN_FILES)
    )
    yield from _minimum(
        ranks, "open-files limit", lambda s: s.platform.open_files_limit, MIN_OPEN_FILES, str, fix
    )


def _world(ranks: dict[int, Rank], snapshots: Sequence[Snapshot]) -> Iterator[Outcome]:
    declared = {s.launch.world_size for s in snapshots if s.launch.world_size is not None}
    numbers = [s.launch.rank for s in snapshots if s.launch.rank is not None]
    twice = sorted({n for n in numbers if numbers.count(n) > 1})
    if twice:
        yield blocked(
            f"{ranks_word(twice)} reported more than once ({len(snapshots)} snapshots)",
            "one snapshot per rank",
            "give one snapshot per rank (srun ... stackcheck snapshot -o snap-%t.json names them by task)",
        )
    if len(declared) > 1:
        yield blocked(
            f"ranks disagree on the world size: {', '.join(map(str, sorted(declared)))}",
            "one world size",
            "compare snapshots of one job only",
        )
        return
    world = declared.pop() if declared else len(snapshots)
    absent = sorted(set(range(world)) - set(ranks)) if not twice else []
    if absent:
        yield blocked(
            f"{len(ranks)} of {world} ranks reported; missing: {ranks_word(absent)}",
            f"all {world} ranks",
            "check the launcher's log of the missing ranks (they never started, or failed before the gather)",
            evidence={"ranks": ",".join(map(str, absent))},
        )
    elif not twice:
        yield ok(f"all {world} ranks reported")


def _gpu_count(ranks: Iterable[Rank]) -> int:
    seen: set[tuple[str, str]] = set()
    for x in ranks:
        for g in x.snapshot.visible_gpus():
            seen.add((x.host, g.uuid or str(g.index)))
    return len(seen)


def _world_gpus(ranks: dict[int, Rank]) -> Iterator[Outcome]:
    if not _gpu_ranks(ranks):
        yield skipped("no rank sees a GPU (gloo on CPU)")
        return
    gpus, world = _gpu_count(ranks.values()), len(ranks)
    if world > gpus:
        yield blocked(
            f"world size {world}, {gpus} distinct GPUs visible to all ranks",
            "at most one rank per GPU",
            "start one rank per GPU (torchrun --nproc-per-node = GPUs per node; srun --gpus-per-task=1)",
        )
    elif world < gpus:
        yield warning(
            f"world size {world}, {gpus} distinct GPUs visible: {gpus - world} idle",
            "one rank per GPU",
            "start one rank per GPU, or restrict CUDA_VISIBLE_DEVICES to the GPUs used",
        )
    else:
        yield ok(f"world size {world} = {gpus} GPUs")


def _per_node(ranks: dict[int, Rank]) -> Iterator[Outcome]:
    if not _gpu_ranks(ranks):
        yield skipped("no rank sees a GPU (gloo on CPU)")
        return
    nodes: dict[str, list[Rank]] = {}
    for x in ranks.values():
        nodes.setdefault(x.host, []).append(x)
    bad = 0
    for host, members in sorted(nodes.items()):
        gpus, n = _gpu_count(members), len(members)
        rs = [m.rank for m in members]
        if n == gpus:
            continue
        bad += 1
        outcome = blocked if n > gpus else warning
        yield outcome(
            printable(
                f"node {host} ({ranks_word(rs)}): {n} rank{'s' if n != 1 else ''}, {gpus} GPUs visible"
            ),
            "as many ranks on each node as it has GPUs",
            f"start {gpus} ranks on {printable(host)}: "
            + command("torchrun", f"--nproc-per-node={gpus}", "...")
            if gpus
            else f"{printable(host)} sees no GPU: check CUDA_VISIBLE_DEVICES and the allocation",
            subject=host,
            evidence={"ranks": ",".join(map(str, rs))},
        )
    if not bad:
        yield ok(f"{len(nodes)} node(s), ranks per node = GPUs per node")


def _clocks(ranks: dict[int, Rank]) -> Iterator[Outcome]:
    clocks = {r: x.snapshot.launch.wall_clock_ns for r, x in ranks.items()}
    if any(x.snapshot.launch.clock_source != "barrier" for x in ranks.values()) or None in clocks.values():
        yield skipped(
            "the snapshots were not taken together (clocks are read after a barrier by --distributed)"
        )
        return
    known = {r: v for r, v in clocks.items() if v is not None}
    median = statistics.median(known.values())
    off = {r: (v - median) / 1e9 for r, v in known.items()}
    spread_s = (max(known.values()) - min(known.values())) / 1e9
    far = {r: d for r, d in off.items() if abs(d) > MAX_CLOCK_SKEW_S / 2}
    if spread_s <= MAX_CLOCK_SKEW_S:
        yield ok(f"clocks within {spread_s * 1000:.0f} ms of each other")
        return
    yield warning(
        "; ".join(
            f"rank {r} {abs(d):.2f} s {'ahead of' if d > 0 else 'behind'} the median" for r, d in far.items()
        ),
        f"all clocks within {MAX_CLOCK_SKEW_S:g} s",
        "synchronize the clocks of every node: " + command("chronyc", "makestep"),
        evidence={"ranks": ",".join(map(str, sorted(far))), "spread_s": f"{spread_s:.3f}"},
    )


_RUNNERS: dict[str, Callable[..., Iterable[Outcome]]] = {
    "FLT001": _python,
    "FLT002": _packages,
    "FLT003": _torch,
    "FLT004": _driver,
    "FLT005": _gpu_models,
    "FLT006": _nccl,
    "FLT007": _nccl_env,
    "FLT008": _interfaces,
    "FLT009": _shm,
    "FLT010": _nofile,
    "FLT012": _world_gpus,
    "FLT013": _per_node,
    "FLT014": _clocks,
}


def judge_fleet(snapshots: Sequence[Snapshot], skip: Iterable[str] = ()) -> list[CheckResult]:
    """Every fleet check over the snapshots of one job's ranks, in ID order."""
    from stackcheck.checks.registry import matches
    from stackcheck.models.finding import internal_error

    skip = tuple(s.upper() for s in skip)
    ranks = {x.rank: x for x in ranked(snapshots)}
    results: list[CheckResult] = []
    for check_id, spec in CHECKS.items():
        if any(matches(s, check_id) for s in skip):
            results.append(
                CheckResult(id=check_id, title=spec.title, verdict="skipped", reason="skipped by --skip")
            )
            continue
        try:
            if check_id == "FLT011":
                outcomes = list(_world(ranks, snapshots))
            else:
                outcomes = list(_RUNNERS[check_id](ranks))
        except Exception as exc:  # one broken check must not sink the report, nor pass it
            outcomes = [Outcome(verdict="error", reason=internal_error(exc, f"check {check_id}"))]
        results.extend(result_of(spec, o) for o in outcomes)
    return results


def per_rank(reports: dict[int, list[CheckResult]]) -> list[CheckResult]:
    """Each rank's own findings (preflight on every rank), folded: a finding every rank has the
    same is listed once; one only some ranks have says which (``evidence['ranks']``)."""
    groups: dict[tuple, tuple[CheckResult, list[int]]] = {}
    for rank in sorted(reports):
        for c in reports[rank]:
            key = (c.id, c.subject, c.verdict, c.observed, c.expected, c.fix, c.reason)
            if key in groups:
                groups[key][1].append(rank)
            else:
                groups[key] = (c, [rank])
    out = []
    everyone = len(reports)
    for c, rs in groups.values():
        if len(rs) == everyone:
            out.append(msgspec.structs.replace(c, evidence={**c.evidence, "ranks": "all"}))
        else:
            subject = f"{ranks_word(rs)}" + (f": {c.subject}" if c.subject else "")
            out.append(
                msgspec.structs.replace(
                    c, subject=subject, evidence={**c.evidence, "ranks": ",".join(map(str, rs))}
                )
            )
    return out


# The variables that say which rank a process is (the launch section has them too)
RANK_VARIABLES = frozenset(
    {
        "RANK",
        "LOCAL_RANK",
        "GROUP_RANK",
        "NODE_RANK",
        "SLURM_PROCID",
        "SLURM_LOCALID",
        "SLURM_NODEID",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "OMPI_COMM_WORLD_NODE_RANK",
    }
)


def _environment_key(snap: Snapshot) -> str:
    """The digest of a rank's snapshot without who and where the rank is (launch, network: no
    preflight check reads them; the rank variables)."""
    env = msgspec.structs.replace(
        snap.env, variables={k: v for k, v in snap.env.variables.items() if k not in RANK_VARIABLES}
    )
    blank = {"launch": type(snap.launch)(), "network": type(snap.network)()}
    return snapshot_digest(msgspec.structs.replace(snap, env=env, **blank))


def fleet_report(
    kind: str,
    snapshots: Sequence[Snapshot],
    *,
    profile: Profile | None = None,
    skip: Iterable[str] = (),
    launcher: str = "",
    extra: Sequence[CheckResult] = (),
    deep: bool = False,
) -> Report:
    """The one report of a fleet: with ``profile``, each rank's preflight folded
    (:func:`per_rank`); then the fleet checks and ``extra`` findings (the collectives). Its
    snapshot digest is rank 0's; ``fleet`` lists every rank's."""
    from stackcheck.judge import build_report, judge

    skip = tuple(skip)
    ranks = ranked(snapshots)
    checks: list[CheckResult] = []
    if profile is not None:
        # ranks of one environment differ only in who they are: judged once per environment
        judged: dict[str, list[CheckResult]] = {}
        own = {}
        for x in ranks:
            key = _environment_key(x.snapshot)
            if key not in judged:
                judged[key] = judge(
                    x.snapshot, command="preflight", profile=profile, skip=skip, deep=deep
                ).checks
            own[x.rank] = judged[key]
        checks.extend(per_rank(own))
    checks.extend(judge_fleet(snapshots, skip))
    checks.extend(extra)
    report = build_report(kind, checks, profile=profile, snapshot=ranks[0].snapshot)
    report.fleet = fleet_info(ranks, launcher)
    report.environment["world_size"] = str(report.fleet.world_size)
    return report
