"""Triage throughput and memory on a large mixed CI log, side by side with reading floors.

Builds a log of --mb MiB from the shared CI log data in /work/shared/data/logs: the GitHub
Actions run's step logs (``gha_run_example.tar.xz``), the Travis CI logs of LogChunks
(``logchunks.tar.xz``, Brandt et al., MSR 2020, CC BY 4.0) and the Loghub 2k samples
(``loghub_2k.tar.xz``, Zhu et al.), concatenated in turn and repeated, with a CUDA OOM
traceback at the end; then times, interleaved (round-robin after one warm-up each):

  floor-grep    grep -c -E 'Error|error' LOG                   (C, no Python)
  floor-python  python -c "for line in open(LOG, 'rb'): pass"  (interpreter start + reading lines)
  triage        stackcheck triage LOG --no-env --json          (whole command, default workers)
  triage-1job   the same with --jobs 1                          (one process)
  baseline      the same with PYTHONPATH=--baseline SRC        (e.g. a `git archive` of main's src)

and prints medians [min-max], MiB/s, CPU seconds per GiB (user + system of the command and the
workers it forked), the machine load before and after, each command's peak RSS (the largest of
its processes), and the speed-up of the workers over one process. The shared harness
(benchmarks/_refenv.py) withholds ratios from a noisy run unless --force. It also checks that
every triage command gives the same JSON output. Bytecode is written as usual (into the run's
own PYTHONPYCACHEPREFIX, by the warm-up run), also where the shell sets PYTHONDONTWRITEBYTECODE.

Usage: python benchmarks/triage_throughput.py [--mb 100] [--runs 3] [--jobs N] [--baseline SRC] [--force]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _refenv import Bench, bench_arguments
from triage_regions import extract

DATA = Path("/work/shared/data/logs")
ARCHIVES = (
    ("gha_run_example.tar.xz", "*.txt"),
    ("logchunks.tar.xz", "samples/**/*.log"),
    ("loghub_2k.tar.xz", "**/*_2k.log"),
)
TAIL = Path(__file__).parents[1] / "tests" / "data" / "triage" / "oom-fragmentation.txt"
ROOT = Path(__file__).resolve().parents[1]


def corpus(tmp: Path) -> bytes:
    """The three data sets' logs, each in sorted path order, one after the other."""
    parts = []
    for name, pattern in ARCHIVES:
        dest = tmp / name.split(".")[0]
        extract(DATA / name, dest)
        parts.extend(p.read_bytes() for p in sorted(dest.rglob(pattern)) if p.is_file())
    return b"".join(part if part.endswith(b"\n") else part + b"\n" for part in parts)


def build_log(path: Path, megabytes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        text = corpus(Path(tmp))
    with open(path, "wb") as out:
        written = 0
        while written < megabytes * 2**20:
            piece = text[: megabytes * 2**20 - written]
            out.write(piece)
            written += len(piece)
        out.write(
            b"Traceback (most recent call last):\n"
            b'  File "train.py", line 9, in <module>\n'
            b"    loss.backward()\n"
        )
        out.write(TAIL.read_bytes())


def peak_rss(cmd: list[str], env: dict[str, str]) -> int:
    """Peak RSS (KiB) of one run of ``cmd``, measured by a fresh child that waits for it."""
    code = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], capture_output=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code, *cmd], env=env, capture_output=True, text=True)
    return int(out.stdout.strip() or 0)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument(
        "--runs", "--repeat", type=int, default=3, help="interleaved runs per command (default 3)"
    )
    parser.add_argument(
        "--baseline", default=None, help="a src directory to time the same way, for comparison"
    )
    parser.add_argument("--log", default=None, help="use this log instead of building one")
    parser.add_argument(
        "--jobs", type=int, default=None, help="workers of the triage command (default: its own)"
    )
    bench_arguments(parser)
    args = parser.parse_args()
    bench = Bench(force=args.force)
    with tempfile.TemporaryDirectory() as tmp:
        # bytecode written as usual, into the run's own cache, by the warm-up run: with
        # PYTHONDONTWRITEBYTECODE (as some shells set it) every run would compile the sources
        # again (~30 ms here), which an installed stackcheck never does (as bench_env.py)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPATH=str(ROOT / "src"), PYTHONPYCACHEPREFIX=str(Path(tmp) / "pycache"))
        log = Path(args.log) if args.log else Path(tmp) / "big.log"
        if not args.log:
            build_log(log, args.mb)
        size = log.stat().st_size / 2**20
        triage = [sys.executable, "-m", "stackcheck", "triage", str(log), "--no-env", "--json"]
        jobs = [] if args.jobs is None else ["--jobs", str(args.jobs)]
        commands: dict[str, tuple[list[str], dict[str, str]]] = {
            "floor-grep": (["grep", "-c", "-E", "Error|error", str(log)], env),
            "floor-python": ([sys.executable, "-c", f"for line in open({str(log)!r}, 'rb'): pass"], env),
            "triage": ([*triage, *jobs], env),
            "triage-1job": ([*triage, "--jobs", "1"], env),
        }
        if args.baseline:
            commands["baseline"] = (triage, {**env, "PYTHONPATH": str(Path(args.baseline).resolve())})
        outputs = {}
        for label, (cmd, cmd_env) in commands.items():  # warm-up, and the outputs to compare
            outputs[label] = subprocess.run(cmd, capture_output=True, env=cmd_env).stdout
        print(f"log: {size:.0f} MiB (GitHub Actions + LogChunks Travis + Loghub, CUDA OOM at the end)")
        found = b'"rule_id": "KB102"' in outputs["triage"]
        print(f"  triage finds KB102 (the OOM): {found}")
        same = all(
            outputs[label] == outputs["triage"] for label in commands if label.startswith(("tri", "base"))
        )
        print(f"  every triage command gives the same output: {same}")
        print(bench.load("at start"))
        wall: dict[str, list[float]] = {label: [] for label in commands}
        cpu: dict[str, list[float]] = {label: [] for label in commands}
        for _ in range(args.runs):
            for label, (cmd, cmd_env) in commands.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                subprocess.run(cmd, capture_output=True, env=cmd_env)
                wall[label].append(time.perf_counter() - t0)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[label].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        print(bench.load("at end"))
        floor = statistics.median(wall["floor-python"])
        for label, samples in wall.items():
            bench.add(label, samples)
        for label, samples in wall.items():
            med = statistics.median(samples)
            ratio = bench.ratio(med / floor, label, "floor-python") or "  noisy"
            rss = peak_rss(*commands[label]) if label.startswith(("triage", "baseline")) else 0
            per_gib = statistics.median(cpu[label]) / size * 1024
            print(
                f"  {label:13s} {med:6.2f} s [{min(samples):.2f}-{max(samples):.2f}] {ratio} python floor"
                f"  {size / med:7.1f} MiB/s  CPU {per_gib:5.2f} s/GiB"
                + (f"  peak RSS {rss / 1024:.0f} MiB" if rss else "")
            )
        speedup = statistics.median(wall["triage-1job"]) / statistics.median(wall["triage"])
        shown = bench.ratio(speedup, "triage", "triage-1job") or "  noisy"
        print(f"  workers' speed-up over one process (wall, medians): {shown}")
    bench.finish()


if __name__ == "__main__":
    main()
