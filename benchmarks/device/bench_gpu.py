"""The whole backend regression suite on one GPU, in under five minutes: records and matrix.

Prepared for a GPU machine (not run on the CPU machines): every backend of stackcheck.bench
(SDPA math / efficient / flash / cuDNN, eager, FlexAttention, flash-attn and xformers when
installed; torch.matmul fp32 / tf32 / bf16 / fp16, fp8 scaled matmul; a block with
torch.compile off and on) on the built-in GPU shapes (head dims 64/128/256, causal and not,
GQA, short, long and decode sequences), each checked against a float64 reference, then timed
with CUDA events. Writes under OUT (default ./bench-gpu, or $OUT when set):

  run/bench.json             every case, every repetition, the environment (the raw log)
  run/matrix.txt, matrix.md  backend × shape → ok (median ± cv) / WRONG / skipped (why) / error
  run/pytest-benchmark.json  the same run for pytest-benchmark users
  ledger/                    one ResultRecord per case that ran (SQLite index)
  summary.json               counts, wall seconds per stage, the device

Uses the checkout's src/ (no install needed beyond torch, msgspec, click, packaging,
google-re2; scipy only for `bench compare`). Nothing is downloaded. Exit 0 when every case
that ran was correct, 1 when a case was wrong or broke, 2 when there is no CUDA GPU (unless
--device cpu, which runs the same script on a CPU for a smoke test).

    python benchmarks/device/bench_gpu.py [OUT] [--reps 30] [--warmup 5] [--shapes default]
        [--backend NAME ...] [--device cuda|cpu] [--budget-s 280]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=os.environ.get("OUT") or "bench-gpu")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--shapes", default="default", help="built-in set (default, tiny) or a shape file")
    ap.add_argument("--backend", action="append", default=[], help="only this backend or group")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--budget-s", type=float, default=280.0, help="warn when the run takes longer")
    args = ap.parse_args(argv)

    from stackcheck.bench import backends as kernels
    from stackcheck.bench.cases import backends_named, shapes_for
    from stackcheck.bench.matrix import text
    from stackcheck.bench.suite import run_and_write
    from stackcheck.environment import obtain
    from stackcheck.results.ledger import Ledger

    stages: dict[str, float] = {}
    t0 = time.perf_counter()
    shapes, backends = shapes_for(args.shapes), backends_named(args.backend)
    device = kernels.device_info(args.device)
    stages["import torch + device"] = time.perf_counter() - t0
    if args.device == "cuda" and not device.cuda:
        print("bench_gpu: torch sees no CUDA GPU here (use --device cpu for a smoke test)", file=sys.stderr)
        return 2
    print(f"bench_gpu: {device.name} {device.as_dict()['arch']} torch {device.torch}", file=sys.stderr)

    t = time.perf_counter()
    snapshot = obtain()
    stages["snapshot"] = time.perf_counter() - t
    out = Path(args.out)
    done = []

    def progress(case):
        done.append(case)
        took = time.perf_counter() - t0
        print(
            f"  [{took:6.1f} s] {case.status:<7} {case.backend} × {case.shape} {case.reason}", file=sys.stderr
        )

    t = time.perf_counter()
    with Ledger(out / "ledger") as ledger:
        outcome = run_and_write(
            backends,
            shapes,
            out_dir=out / "run",
            snapshot=snapshot,
            ledger=ledger,
            run_label=f"gpu-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}",
            device=device,
            warmup=args.warmup,
            reps=args.reps,
            progress=progress,
        )
    stages["cases + files + records"] = time.perf_counter() - t
    wall = time.perf_counter() - t0
    run = outcome.run
    counts = {s: sum(c.status == s for c in run.cases) for s in ("ok", "wrong", "skipped", "error")}
    levels: dict[str, int] = {}
    for f in outcome.filed:
        if f.id:
            levels[f.evidence] = levels.get(f.evidence, 0) + 1
    summary = {
        "device": run.device,
        "counts": counts,
        "records": levels,
        "record_notes": sorted({f.note for f in outcome.filed if f.id and f.note}),
        "wall_s": round(wall, 1),
        "stages_s": {k: round(v, 2) for k, v in stages.items()},
        "over_budget": wall > args.budget_s,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(text(run), end="")
    print(json.dumps(summary, indent=2))
    return 1 if counts["wrong"] or counts["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
