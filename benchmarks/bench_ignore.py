"""How long does `stackcheck hygiene --ignore-file` take as the ignore file grows?

Builds a throwaway git repository with FINDINGS committed build outputs (``pkgN/mod.o``, one
HYG004 finding each) and ignore files of 10k / 50k / 600k lines in three shapes:

  literal   anchored file paths (``data/shard-000123.bin``), the shape a generated list has
  rules     the same paths behind a rule id (``HYG004:data/shard-000123.bin``)
  globs     glob patterns (``logs/run-123/*.log``, ``*.tmp123``, ``cache-123/**``)

Every shape ends with lines that accept every other finding, so the answer is checked too
(``ignored`` in the report). Each run is the whole command, wall time, killed at --limit.

Usage: python benchmarks/bench_ignore.py [--sizes 10000,50000,600000] [--limit 120]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FINDINGS = 200


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for i in range(FINDINGS):
        (repo / f"pkg{i}").mkdir()
        (repo / f"pkg{i}" / "mod.o").write_bytes(b"\x7fELF" + bytes(64))
    subprocess.run(["git", "-C", str(repo), "add", "-f", "."], check=True)
    return repo


def ignore_lines(shape: str, n: int) -> list[str]:
    filler = n - FINDINGS // 2
    if shape == "literal":
        lines = [f"data/shard-{i:06d}.bin" for i in range(filler)]
    elif shape == "rules":
        lines = [f"HYG004:data/shard-{i:06d}.bin" for i in range(filler)]
    else:
        kinds = ("logs/run-{}/*.log", "*.tmp{}", "cache-{}/**", "out/**/part-{}.csv", "[ab]x{}.py")
        lines = [kinds[i % len(kinds)].format(i) for i in range(filler)]
    return lines + [f"pkg{i}/mod.o" for i in range(0, FINDINGS, 2)]


def run(repo: Path, ignore: Path, limit: float) -> tuple[float | None, str]:
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "stackcheck",
                "hygiene",
                str(repo),
                "--ignore-file",
                str(ignore),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=limit,
        )
    except subprocess.TimeoutExpired:
        return None, "timeout"
    seconds = time.perf_counter() - start
    if not done.stdout.strip():
        lines = done.stderr.strip().splitlines()
        return seconds, lines[-1] if lines else f"exit {done.returncode}"
    return seconds, "ignored " + json.loads(done.stdout)["environment"]["ignored"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,50000,600000")
    ap.add_argument("--shapes", default="literal,rules,globs")
    ap.add_argument("--limit", type=float, default=120.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = make_repo(root)
        print(f"{'shape':8} {'lines':>8} {'MiB':>6} {'seconds':>9}  result (expect ignored {FINDINGS // 2})")
        for shape in args.shapes.split(","):
            for n in (int(s) for s in args.sizes.split(",")):
                ignore = root / f"{shape}-{n}.ignore"
                ignore.write_text("\n".join(ignore_lines(shape, n)) + "\n")
                seconds, result = run(repo, ignore, args.limit)
                shown = f"{seconds:9.2f}" if seconds is not None else f">{args.limit:8.0f}"
                print(f"{shape:8} {n:8d} {ignore.stat().st_size / 2**20:6.1f} {shown}  {result}", flush=True)


if __name__ == "__main__":
    main()
