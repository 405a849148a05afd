"""What one `results record` costs, next to the floor: a plain JSON write with fsync.

Measured side by side in one run (these machines are noisy; compare ratios, not seconds):

  floor     json.dumps(record) + write + fsync of a new file (what any careful logger pays)
  store     Ledger.store(): exclusive write-once file (temp + fsync + hard link) + index row
  record    results.record() from a script: draft checks, preflight of the declared profile on a
            recorded snapshot, artifact hashing, dispersion, digests, ladder proof, store
  cli       `stackcheck results record FILE --snapshot S` as a process (interpreter start included)
  python    `python -c pass`, the interpreter start a CLI call can never beat

Each in-process figure is the median of N records into a fresh ledger; SQLite index unless
--ledger DSN names a PostgreSQL index.

    python benchmarks/bench_record.py [-n 50] [--ledger postgresql://…]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "tests" / "data" / "snapshots" / "h100-single.json"
REGISTRY = {
    "schema_version": "1.0",
    "include_builtin": False,
    "profiles": [{"id": "BENCH-GPU", "requirements": ["transformers>=4.50"], "evidence_scope": "single-gpu"}],
}


def draft(i: int, raw_log: Path) -> dict:
    return {
        "topic": "inference/qwen2.5-0.5b-latency",
        "run_label": f"bench-{i}",
        "profile": "BENCH-GPU",
        "model": {
            "id": "Qwen/Qwen2.5-0.5B-Instruct",
            "revision": "a" * 40,
            "tokenizer_revision": "b" * 40,
            "chat_template_sha256": "1" * 64,
            "thinking": "off",
            "thinking_source": "chat_template_kwargs",
            "dtype": "bfloat16",
        },
        "backend": {"name": "transformers", "version": "4.57.1", "args": {"attn_implementation": "sdpa"}},
        "workload": {
            "manifest_sha256": "2" * 64,
            "samples": 200,
            "concurrency": 1,
            "input_tokens": 512,
            "output_tokens": 128,
            "seed": 0,
        },
        "metrics": {"latency_p50_ms": {"value": 41.2, "unit": "ms", "repetitions": [41.0, 41.2, 41.9]}},
        "tolerance": {"*": 0.05},
        "artifacts": [{"path": str(raw_log), "kind": "raw-log"}],
        "git": {"commit": "c" * 40, "dirty": False},
        "evidence": "measured",
    }


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def timed(fn, n: int) -> list[float]:
    out = []
    for i in range(n):
        t = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=50, help="records per measurement (default 50)")
    parser.add_argument("--ledger", metavar="DSN", help="index in PostgreSQL instead of SQLite")
    args = parser.parse_args()

    import msgspec

    from stackcheck.catalog import load_catalog
    from stackcheck.environment import load_snapshot
    from stackcheck.results import record
    from stackcheck.results.ledger import Ledger
    from stackcheck.results.recording import complete, load_draft, preflight

    work = Path(tempfile.mkdtemp(prefix="bench-record-"))
    registry = work / "profiles.json"
    registry.write_text(json.dumps(REGISTRY))
    raw_log = work / "run.log"
    raw_log.write_text("step latency\n" * 2000)
    catalog = load_catalog(str(registry))
    snap = load_snapshot(str(SNAPSHOT))
    profile = preflight("BENCH-GPU", snap, catalog=catalog)
    completed = [complete(load_draft(draft(i, raw_log)), snap, profile, cwd=work) for i in range(args.n)]
    size = len(msgspec.json.encode(completed[0]))

    floor_dir = work / "floor"
    floor_dir.mkdir()
    as_dicts = [msgspec.to_builtins(r) for r in completed]

    def floor(i: int) -> None:
        with open(floor_dir / f"{i}.json", "x") as fh:
            json.dump(as_dicts[i], fh)
            fh.flush()
            os.fsync(fh.fileno())

    def ledger(name: str) -> Ledger:
        led = Ledger(work / name, args.ledger)
        if args.ledger:  # a fresh PostgreSQL index: clear what an earlier run left
            led.reindex()
        return led

    store_ledger = ledger("store")
    record_ledger = ledger("record")
    floor_s = timed(floor, args.n)
    store_s = timed(lambda i: store_ledger.store(completed[i]), args.n)
    record_s = timed(
        lambda i: record(
            draft(args.n + i, raw_log), snapshot=snap, ledger=record_ledger, catalog=catalog, cwd=work
        ),
        args.n,
    )

    cli_runs = max(5, args.n // 10)
    env = {**os.environ, "STACKCHECK_LEDGER_DIR": str(work / "cli")}
    if args.ledger:
        env["STACKCHECK_LEDGER"] = args.ledger
    drafts = []
    for i in range(cli_runs):
        path = work / f"draft-{i}.json"
        path.write_text(json.dumps(draft(10_000 + i, raw_log)))
        drafts.append(path)
    cli_s = timed(
        lambda i: subprocess.run(
            [
                sys.executable,
                "-m",
                "stackcheck",
                "results",
                "record",
                str(drafts[i]),
                "--snapshot",
                str(SNAPSHOT),
                "--registry",
                str(registry),
            ],
            check=True,
            capture_output=True,
            env=env,
        ),
        cli_runs,
    )
    python_s = timed(lambda i: subprocess.run([sys.executable, "-c", "pass"], check=True), cli_runs)

    base = median_ms(floor_s)
    index = "PostgreSQL" if args.ledger else "SQLite"
    print(
        f"one result record ({size / 1024:.0f} KiB with its snapshot), {args.n} records each, {index} index, medians"
    )
    print(f"{'what':<44}{'ms':>9}{'x floor':>10}")
    for name, samples in (
        ("floor: json.dump + fsync (new file)", floor_s),
        ("Ledger.store (write-once file + index)", store_s),
        ("results.record() (complete, preflight, prove)", record_s),
        (f"stackcheck results record (process, n={cli_runs})", cli_s),
        (f"python -c pass (process, n={cli_runs})", python_s),
    ):
        print(f"{name:<44}{median_ms(samples):>9.2f}{median_ms(samples) / base:>10.1f}")
    store_ledger.index.close()
    record_ledger.index.close()


if __name__ == "__main__":
    main()
