"""`stackcheck env create` against the same install done directly with uv and with pip.

One wheelhouse (the torch 2.13.0 CPU wheel this machine has, plus tiny stand-ins for torch's
dependencies, built by tests/provision/conftest.py's helper), one profile (torch==2.13.0 and a
tiny package on top of BASE-CPU), everything offline (``--no-index --find-links``), runs
interleaved so machine noise hits every command alike; uv's cache is shared and warmed by one
run of each first. Each environment is removed after its run, outside the timing.

  stackcheck (uv)   stackcheck env create (plan, resolve, forbidden check, hashed install,
                    verify, preflight of the new environment)
  plain uv          uv venv DIR && uv pip install --python DIR/bin/python -r reqs
  stackcheck (pip)  stackcheck env create --installer pip
  plain pip         python -m venv DIR && DIR/bin/python -m pip install -r reqs

  stackcheck@REV    with --against REV: the uv create of REV's src/ (git archive), side by side

Budget (issue 15): stackcheck's overhead over plain uv <= 10 %. Ratios are withheld (NOISY,
exit 3) when the machine was too busy; see _refenv.MAX_SPREAD. Bytecode is written as usual
(into the run's own PYTHONPYCACHEPREFIX, by the warm-up run): with PYTHONDONTWRITEBYTECODE, as
some shells set it, every run would compile stackcheck's sources again (~0.1 s here), which an
installed stackcheck never does.

With --timeline, instead: --runs creates (of this checkout, and of REV with --against,
interleaved, after a warm-up), the last of each as a timeline in milliseconds from the moment
the command was started: when each subprocess starts and ends, on which thread, and when the
process is gone (what lies between is stackcheck's own Python); then the median time of each
outside ``uv pip sync`` (the install, the same work as plain uv's, and most of the noise).

Usage: python benchmarks/bench_env.py [--runs N] [--no-pip] [--against REV] [--force] [--timeline]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from _refenv import Bench, bench_arguments  # noqa: E402

from tests.provision.conftest import TORCH_DEPS, TORCH_WHEEL, UV, make_wheel  # noqa: E402

PY = sys.executable
STACKCHECK = str(Path(sys.executable).with_name("stackcheck"))
PROFILE = {"id": "BENCH-TORCH", "extends": ["BASE-CPU"], "requirements": ["torch==2.13.0", "tinyutil<2"]}


def setup(work: Path) -> tuple[Path, Path, Path, dict[str, str]]:
    house = work / "wheelhouse"
    house.mkdir()
    for name, (version, reqs) in TORCH_DEPS.items():
        make_wheel(house, name, version, reqs)
    make_wheel(house, "tinyutil", "1.0")
    os.symlink(TORCH_WHEEL, house / TORCH_WHEEL.name)
    registry = work / "registry.json"
    registry.write_text(json.dumps({"schema_version": "1.0", "profiles": [PROFILE]}))
    reqs = work / "requirements.txt"
    reqs.write_text("torch==2.13.0\ntinyutil<2\n")
    dropped = ("PIP_", "UV_", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update(
        PYTHONPYCACHEPREFIX=str(work / "pycache"),
        PIP_CONFIG_FILE=os.devnull,
        XDG_CONFIG_DIRS=str(work / "xdg"),
        UV_CACHE_DIR=str(work / "uv-cache"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PATH=f"{Path(UV).parent}{os.pathsep}{os.environ['PATH']}",
    )
    return house, registry, reqs, env


def commands(house: Path, registry: Path, reqs: Path) -> dict:
    offline = ["--no-index", "--find-links", str(house)]
    create = [STACKCHECK, "env", "create", "--registry", str(registry), "-p", PROFILE["id"], *offline]

    def sc(installer: str):
        return lambda d: [*create, "--installer", installer, "--path", d]

    def plain_uv(d: str) -> list[str]:
        py = f"{d}/bin/python"
        script = (
            f"{UV} venv -q --python {PY} {d} && {UV} pip install -q --python {py} "
            f"--no-index --find-links {house} -r {reqs}"
        )
        return ["sh", "-c", script]

    def plain_pip(d: str) -> list[str]:
        script = (
            f"{PY} -m venv {d} && {d}/bin/python -m pip install -q --no-index --find-links {house} -r {reqs}"
        )
        return ["sh", "-c", script]

    return {
        "stackcheck (uv)": sc("uv"),
        "plain uv": plain_uv,
        "stackcheck (pip)": sc("pip"),
        "plain pip": plain_pip,
    }


# Runs the CLI with every subprocess's start and end noted (time.time(), thread name), printed
# as JSON at exit on the descriptor BENCH_TRACE_FD names (atexit: the command's own exit runs
# those handlers too).
_TRACED = """\
import atexit, json, os, subprocess, sys, threading, time
events = [(time.time(), "MainThread", "python running")]
def note(what):
    events.append((time.time(), threading.current_thread().name, what))
def name(argv):
    return " ".join(os.path.basename(str(a)) if i < 1 else str(a) for i, a in enumerate(argv[:3]))[:60]
init, wait = subprocess.Popen.__init__, subprocess.Popen.wait
def traced_init(self, argv, *a, **k):
    note("start " + name(argv))
    init(self, argv, *a, **k)
def traced_wait(self, *a, **k):
    code = wait(self, *a, **k)
    note("end   " + name(self.args))
    return code
subprocess.Popen.__init__, subprocess.Popen.wait = traced_init, traced_wait
out = int(os.environ.pop("BENCH_TRACE_FD"))
atexit.register(lambda: os.write(out, json.dumps(events + [(time.time(), "MainThread", "atexit")]).encode()))
sys.argv = ["stackcheck", *sys.argv[1:]]
from stackcheck.cli import main
main()
"""


def timeline(argv: list[str], env: dict[str, str]) -> tuple[list[str], float]:
    """One run of ``argv`` (a stackcheck command line) traced: its "  ms  thread  event" lines
    and the seconds it took outside ``uv pip sync`` (the install itself, the same work as
    plain uv's)."""
    read, write = os.pipe()
    t0 = time.time()
    done = subprocess.run(
        [PY, "-c", _TRACED, *argv[1:]],
        env={**env, "BENCH_TRACE_FD": str(write)},
        pass_fds=(write,),
        capture_output=True,
        text=True,
    )
    gone = time.time()
    os.close(write)
    with os.fdopen(read) as fh:
        events = json.loads(fh.read() or "[]")
    if done.returncode != 0:
        sys.exit(f"traced run failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    sync = [t for t, _, what in events if what.split()[1:4] == ["uv", "pip", "sync"]]
    rows = [*events, (gone, "", "process gone")]
    lines = [f"  {1000 * (t - t0):7.1f}  {thread[:18]:<18}  {what}" for t, thread, what in rows]
    return lines, gone - t0 - (sync[-1] - sync[0] if len(sync) == 2 else 0.0)


def show_timelines(cases: dict, envs: dict, work: Path, runs: int) -> None:
    """A timeline of the last of ``runs`` creates of each revision (after a warm-up; the
    revisions interleaved), then the medians [min-max] of their time outside the install."""
    labels = [k for k in cases if k.startswith("stackcheck") and "pip" not in k]
    last: dict[str, list[str]] = {}
    outside: dict[str, list[float]] = {label: [] for label in labels}
    for i in range(-1, runs):
        for n, label in enumerate(labels):
            target = str(work / f"timeline-{i}-{n}")
            last[label], own = timeline(cases[label](target), envs[label])
            shutil.rmtree(target)
            if i >= 0:
                outside[label].append(own)
    for label in labels:
        print(f"{label}:")
        print("\n".join(last[label]))
    for label in labels:
        xs = sorted(outside[label])
        print(f"  {label:<22} outside the install {1000 * xs[len(xs) // 2]:5.0f} ms "
              f"[{1000 * xs[0]:.0f}-{1000 * xs[-1]:.0f}] ({len(xs)} runs)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    bench_arguments(parser)
    parser.add_argument("--runs", type=int, default=5, help="interleaved runs per command (default 5)")
    parser.add_argument("--no-pip", action="store_true", help="only the uv pair (pip's installs take ~20 s)")
    parser.add_argument("--against", metavar="REV", help="also time the uv create of REV's src/")
    parser.add_argument("--timeline", action="store_true", help="a timeline of one create instead")
    args = parser.parse_args()
    bench = Bench(force=args.force)
    with tempfile.TemporaryDirectory(prefix="stackcheck-bench-env-") as tmp:
        work = Path(tmp)
        house, registry, reqs, env = setup(work)
        cases = commands(house, registry, reqs)
        if args.no_pip:
            cases = {k: v for k, v in cases.items() if "pip" not in k}
        envs = {label: env for label in cases}
        if args.against:
            from bench_revisions import export_src

            old = f"stackcheck@{args.against[:12]}"
            cases = {old: cases["stackcheck (uv)"], **cases}  # the console script imports REV's src/
            envs[old] = {**env, "PYTHONPATH": str(export_src(args.against, work / "against"))}
        if args.timeline:
            print(bench.load("at start"))
            show_timelines(cases, envs, work, args.runs)
            print(bench.load("at end"))
            return
        print(
            f"wheelhouse: {TORCH_WHEEL.name} + {len(TORCH_DEPS) + 1} tiny wheels; "
            f"{args.runs} interleaved runs"
        )
        print(bench.load("at start"))
        samples: dict[str, list[float]] = {k: [] for k in cases}
        cpu: dict[str, list[float]] = {k: [] for k in cases}  # user+sys of the command and its children
        for i in range(-1, args.runs):  # -1: the warm-up (fills uv's cache)
            for label, argv_of in cases.items():
                target = str(work / f"env-{i}-{len(samples[label])}-{list(cases).index(label)}")
                used = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                done = subprocess.run(argv_of(target), env=envs[label], capture_output=True, text=True)
                elapsed = time.perf_counter() - t0
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                spent = after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime
                if done.returncode != 0:
                    sys.exit(f"{label} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
                shutil.rmtree(target)
                if i >= 0:
                    samples[label].append(elapsed)
                    cpu[label].append(spent)
        print(bench.load("at end"))
    stats = {label: bench.add(label, values) for label, values in samples.items()}
    for label, s in stats.items():
        c = sorted(cpu[label])[len(cpu[label]) // 2]
        print(f"  {label:<18} {s['median']:7.2f}s [{s['min']:.2f}-{s['max']:.2f}]   cpu {c:.2f}s")
    uv_x = stats["stackcheck (uv)"]["median"] / stats["plain uv"]["median"]
    print("\nbudgets (wall, medians):")
    print(
        bench.line(
            "stackcheck (uv) / plain uv",
            f"{uv_x:6.2f}x (overhead {100 * (uv_x - 1):+.0f} %)",
            ("stackcheck (uv)", "plain uv"),
            "budget <= 1.10x",
            uv_x <= 1.10,
        )
    )
    if args.against:
        ratio = stats["stackcheck (uv)"]["median"] / stats[old]["median"]
        print(bench.line(f"stackcheck (uv) / {old}", f"{ratio:6.2f}x", ("stackcheck (uv)", old)))
        was = stats[old]["median"] / stats["plain uv"]["median"]
        print(
            bench.line(
                f"{old} / plain uv", f"{was:6.2f}x (overhead {100 * (was - 1):+.0f} %)", (old, "plain uv")
            )
        )
    if "plain pip" in stats:
        pip_x = stats["stackcheck (pip)"]["median"] / stats["plain pip"]["median"]
        print(
            bench.line(
                "stackcheck (pip) / plain pip",
                f"{pip_x:6.2f}x (overhead {100 * (pip_x - 1):+.0f} %)",
                ("stackcheck (pip)", "plain pip"),
            )
        )
    bench.finish()


if __name__ == "__main__":
    main()
