"""Triage throughput and memory on a large CI log, side by side with reading floors.

Builds a log of --mb megabytes from the real GitHub Actions run in /work/shared/data/logs
(its step logs repeated), with a CUDA OOM traceback at the end, then times in one run:

  floor-grep    grep -c Error LOG                              (C, no Python)
  floor-python  python -c "for line in open(LOG, 'rb'): pass"  (interpreter start + reading lines)
  triage        stackcheck triage LOG --no-env --json          (whole command)

and prints each time as a multiple of the Python floor, MB/s, and triage's peak RSS.
Figures are medians of --repeat runs; the machine is shared, so compare ratios, not seconds.

Usage: python benchmarks/triage_throughput.py [--mb 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from triage_regions import extract

ARCHIVE = "/work/shared/data/logs/gha_run_example.tar.xz"
TAIL = Path(__file__).parents[1] / "tests" / "data" / "triage" / "oom-fragmentation.txt"


def build_log(path: Path, megabytes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        extract(ARCHIVE, tmp)
        corpus = b"".join(p.read_bytes() for p in sorted(Path(tmp).rglob("*.txt")))
    with open(path, "wb") as out:
        written = 0
        while written < megabytes * 2**20:
            out.write(corpus)
            written += len(corpus)
        out.write(
            b'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    loss.backward()\n'
        )
        out.write(TAIL.read_bytes())


def timed(cmd: list[str], repeat: int) -> tuple[float, int]:
    """Median wall seconds and the peak RSS (KiB) of the children."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        # output captured, not sent to /dev/null: GNU grep stops at the first match when it
        # sees its output is /dev/null
        subprocess.run(cmd, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "big.log"
        build_log(log, args.mb)
        size_mb = log.stat().st_size / 2**20
        grep_s, _ = timed(["grep", "-c", "Error", str(log)], args.repeat)
        floor_s, _ = timed([sys.executable, "-c", f"for line in open({str(log)!r}, 'rb'): pass"], args.repeat)
        triage_s, rss = timed(
            [sys.executable, "-m", "stackcheck", "triage", str(log), "--no-env", "--json"], args.repeat
        )
        check = subprocess.run(
            [sys.executable, "-m", "stackcheck", "triage", str(log), "--no-env", "--json"],
            capture_output=True,
            text=True,
        )
        found = '"rule_id": "KB102"' in check.stdout
    print(f"log: {size_mb:.0f} MiB (GitHub Actions run repeated, CUDA OOM at the end; found: {found})")
    for name, seconds in (("floor-grep", grep_s), ("floor-python", floor_s), ("triage", triage_s)):
        print(
            f"  {name:13s} {seconds:7.2f} s  {seconds / floor_s:5.1f}x python floor  {size_mb / seconds:7.1f} MiB/s"
        )
    print(f"  peak RSS of the child processes: {rss / 1024:.0f} MiB (triage is the largest of them)")


if __name__ == "__main__":
    main()
