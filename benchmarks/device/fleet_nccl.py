"""The NCCL path of ``accept --distributed`` on a multi-GPU machine (not run in CI: no GPU there).

Run on a machine with 2+ NVIDIA GPUs and a CUDA build of torch:

    python benchmarks/device/fleet_nccl.py [--nproc N] [--timeout S] [--out DIR]

It starts ``torchrun --standalone --nproc-per-node N -m stackcheck accept --distributed`` (one
rank per GPU; N defaults to the GPUs torch sees), then prints each collective's verdict, the
all_reduce bus-bandwidth sweep (1 MiB … 1 GiB, nccl-tests' busbw) with the nominal link speed
it was compared with, and every rank's exit code as torchrun reports it. With one GPU it runs a
single rank (the NCCL code path, no bus to measure). Exit code: the command's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nproc", type=int, default=0, help="ranks (default: one per visible GPU)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per collective")
    parser.add_argument("--out", default=os.environ.get("OUT", "."), help="directory for the report")
    args = parser.parse_args()
    import torch

    gpus = torch.cuda.device_count()
    if not torch.cuda.is_available() or gpus == 0:
        print("no CUDA GPU visible: nothing to measure on the NCCL path", file=sys.stderr)
        return 2
    nproc = args.nproc or gpus
    out = Path(args.out) / "fleet-nccl"
    argv = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={nproc}",
        "-m",
        "stackcheck",
        "accept",
        "--distributed",
        "--json",
        "--timeout",
        str(args.timeout),
        "--out",
        str(out),
    ]
    print(
        "torch",
        torch.__version__,
        "CUDA",
        torch.version.cuda,
        "NCCL",
        ".".join(map(str, torch.cuda.nccl.version())),
    )
    print(f"{gpus} GPU(s): {torch.cuda.get_device_name(0)}; running {nproc} rank(s)")
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - start
    print(f"torchrun exit code {done.returncode} after {wall:.1f} s")
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        print(done.stdout[-4000:], done.stderr[-4000:], sep="\n")
        return done.returncode or 1
    for c in report["checks"]:
        if c["id"].startswith("FLT1"):
            print(f"{c['id']} {c['verdict']:<8} {c.get('observed') or c.get('reason')}")
            if c["id"] == "FLT106" and c.get("expected"):
                print(f"         expected: {c['expected']}")
    print("fleet:", json.dumps(report.get("fleet")))
    print("report:", out / "report.json")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
