"""What judging a fleet costs, next to judging one snapshot (``preflight --snapshot``'s work).

The ranks are copies of tests/data/snapshots/multi-gpu-8xa100.json that differ in who they are
(launch section, RANK variables), 8 per node, one of them with another numpy. Interleaved
medians of ``-n`` repetitions; compare ratios, not seconds (these machines are shared):

  one         judge(snapshot, preflight, profile): the floor, one environment
  fleet N     fleet_report over N ranks, fleet checks only (FLT001-FLT014, fleet compare)
  + profile   the same with every rank's preflight (each distinct environment judged once)

    python benchmarks/bench_fleet.py [-n 7] [--ranks 8,64,512]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def main() -> int:
    from stackcheck.catalog import load_catalog
    from stackcheck.environment import load_snapshot
    from stackcheck.fleet.judge import fleet_report
    from stackcheck.judge import judge
    from stackcheck.models import snapshot as S

    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=7)
    parser.add_argument("--ranks", default="8,64,512")
    args = parser.parse_args()
    sizes = [int(x) for x in args.ranks.split(",")]
    profile = load_catalog().get("TRAIN-CUDA-MECHANISM")
    path = str(ROOT / "tests" / "data" / "snapshots" / "multi-gpu-8xa100.json")

    def fleet(n: int) -> list[S.Snapshot]:
        out = []
        for r in range(n):
            s = load_snapshot(path)
            s.launch = S.LaunchSection(status="ok", launcher="torchrun", rank=r, world_size=n)
            s.network = S.NetworkSection(status="ok", hostname=f"node{r // 8}")
            s.env.variables.update({"RANK": str(r), "LOCAL_RANK": str(r % 8)})
            if r == 1:
                s.packages.distributions = [d for d in s.packages.distributions if d.name != "numpy"]
            out.append(s)
        return out

    jobs = {n: fleet(n) for n in sizes}
    one = load_snapshot(path)
    times: dict[str, list[float]] = {}

    def timed(name: str, fn) -> None:
        start = time.perf_counter()
        fn()
        times.setdefault(name, []).append(time.perf_counter() - start)

    for _ in range(args.n):
        timed("one", lambda: judge(one, command="preflight", profile=profile))
        for n, snaps in jobs.items():
            timed(f"fleet {n}", lambda snaps=snaps: fleet_report("fleet", snaps))
            timed(
                f"fleet {n} + profile", lambda snaps=snaps: fleet_report("preflight", snaps, profile=profile)
            )
    floor = statistics.median(times["one"])
    print(f"one snapshot judged: {floor * 1000:.1f} ms (median of {args.n})")
    for name, values in times.items():
        if name != "one":
            med = statistics.median(values)
            print(f"{name:<20} {med * 1000:8.1f} ms  {med / floor:6.1f}x one snapshot")
    return 0


if __name__ == "__main__":
    sys.exit(main())
