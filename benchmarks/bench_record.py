"""What one `results record` costs, next to the floor: a plain JSON write with fsync.

Measured side by side in one run, interleaved record by record (these machines are noisy;
compare ratios, not seconds):

  floor       json.dumps(record) + write + fsync of a new file (what any careful logger pays)
  store       Ledger.store(): exclusive write-once file (temp + fsync + hard link) + index row
  at hand     results.record(report=…) from a script with the preflight report at hand (or
              judged earlier in the process): draft checks, artifact hashing, dispersion,
              digests, git state, ladder proof, store — the budget: <= 2x the floor
  judging     results.record() judging the profile every time (the memo cleared)
  cli         `stackcheck results record FILE --snapshot S` as a process, and with
              `--report R` (the report of `stackcheck preflight --json --snapshot S`)
  python      `python -c pass`, the interpreter start a CLI call can never beat

Everything runs from a directory outside any git checkout (the drafts declare their commit).
SQLite index unless --ledger DSN names a PostgreSQL index. Ratios are withheld (NOISY, exit 3)
when the machine was too busy; see _refenv.MAX_SPREAD.

    python benchmarks/bench_record.py [-n 50] [--ledger postgresql://…] [--force]
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _refenv import Bench, bench_arguments, interleave  # noqa: E402

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
            "kind": "inference",
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


RECORD_BUDGET = 2.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=50, help="records per measurement (default 50)")
    parser.add_argument("--ledger", metavar="DSN", help="index in PostgreSQL instead of SQLite")
    bench_arguments(parser)
    args = parser.parse_args()

    import msgspec

    from stackcheck.catalog import load_catalog
    from stackcheck.environment import load_snapshot
    from stackcheck.judge import judge
    from stackcheck.results import record, recording
    from stackcheck.results.ledger import Ledger
    from stackcheck.results.recording import complete, load_draft, preflight

    work = Path(tempfile.mkdtemp(prefix="bench-record-"))
    atexit.register(shutil.rmtree, work, True)
    os.chdir(work)  # outside any git checkout: the drafts' declared commit stands
    registry = work / "profiles.json"
    registry.write_text(json.dumps(REGISTRY))
    raw_log = work / "run.log"
    raw_log.write_text("step latency\n" * 2000)
    catalog = load_catalog(str(registry))
    snap = load_snapshot(str(SNAPSHOT))
    report = judge(snap, command="preflight", profile=catalog.get("BENCH-GPU"))
    report.environment["registry"] = catalog.source
    report_file = work / "preflight.json"
    report_file.write_bytes(msgspec.json.encode(report))
    total = args.n + 1  # + the warm-up
    completed = [
        complete(load_draft(draft(i, raw_log)), snap, preflight("BENCH-GPU", snap, catalog=catalog), cwd=work)
        for i in range(total)
    ]
    size = len(msgspec.json.encode(completed[0]))
    as_dicts = [msgspec.to_builtins(r) for r in completed]
    (work / "floor").mkdir()

    def floor(i: int) -> None:
        with open(work / "floor" / f"{i + 1}.json", "x") as fh:
            json.dump(as_dicts[i + 1], fh)
            fh.flush()
            os.fsync(fh.fileno())

    def ledger(name: str) -> Ledger:
        led = Ledger(work / name, args.ledger)
        if args.ledger:  # a fresh PostgreSQL index: clear what an earlier run left
            led.reindex()
        return led

    store_ledger, at_hand_ledger, judging_ledger = ledger("store"), ledger("at-hand"), ledger("judging")

    def judging(i: int) -> None:
        recording._JUDGED.clear()
        record(draft(2 * total + i, raw_log), snapshot=snap, ledger=judging_ledger, catalog=catalog, cwd=work)

    bench = Bench(force=args.force)
    print(
        f"one result record ({size / 1024:.0f} KiB with its snapshot), {args.n} records each, "
        f"{'PostgreSQL' if args.ledger else 'SQLite'} index, interleaved, medians [min-max]"
    )
    steps = {
        FLOOR: floor,
        STORE: lambda i: store_ledger.store(completed[i + 1]),
        AT_HAND: lambda i: record(
            draft(total + i, raw_log),
            snapshot=snap,
            ledger=at_hand_ledger,
            catalog=catalog,
            cwd=work,
            report=report,
        ),
        JUDGING: judging,
    }
    results = interleave(steps, args.n, bench, " (in-process)")

    cli_runs = max(5, args.n // 10)
    env = {**os.environ, "STACKCHECK_LEDGER_DIR": str(work / "cli")}
    if args.ledger:
        env["STACKCHECK_LEDGER"] = args.ledger
    drafts = []
    for i in range(2 * (cli_runs + 1)):
        path = work / f"draft-{i}.json"
        path.write_text(json.dumps(draft(10_000 + i, raw_log)))
        drafts.append(path)

    def cli(i: int, *extra: str) -> None:
        argv = [
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
            *extra,
        ]
        subprocess.run(argv, check=True, capture_output=True, env=env, cwd=work)

    results.update(
        interleave(
            {
                CLI: lambda i: cli(2 * (i + 1)),
                CLI_REPORT: lambda i: cli(2 * (i + 1) + 1, "--report", str(report_file)),
                PYTHON: lambda i: subprocess.run([sys.executable, "-c", "pass"], check=True, cwd=work),
            },
            cli_runs,
            bench,
            " (processes)",
        )
    )
    print()

    base = results[FLOOR]["median"]
    print(f"{'what':<52}{'median [min-max] ms':>26}{'x floor':>9}")
    for name, r in results.items():
        span = f"{r['median'] * 1000:.2f} [{r['min'] * 1000:.2f}-{r['max'] * 1000:.2f}]"
        shown = bench.ratio(r["median"] / base, name, FLOOR) if name != FLOOR else "  1.00x"
        print(f"{name:<52}{span:>26}{shown or 'noisy':>9}")
    print("\nbudget:")
    value = results[AT_HAND]["median"] / base
    print(
        bench.budget_line(
            "record(), preflight at hand / floor",
            value,
            (AT_HAND, FLOOR),
            f"budget <= {RECORD_BUDGET:g}x",
            value <= RECORD_BUDGET,
        )
    )
    for led in (store_ledger, at_hand_ledger, judging_ledger):
        led.index.close()
    bench.finish()


FLOOR = "floor: json.dump + fsync (new file)"
STORE = "Ledger.store (write-once file + index)"
AT_HAND = "results.record(report=…) (preflight at hand)"
JUDGING = "results.record() judging the profile each time"
CLI = "stackcheck results record --snapshot (process)"
CLI_REPORT = "  … --report preflight.json (process)"
PYTHON = "python -c pass (process)"


if __name__ == "__main__":
    main()
