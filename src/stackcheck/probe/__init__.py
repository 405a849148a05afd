"""Probe once: all impure fact gathering, producing one :class:`Snapshot`.

Each section has its own module with a ``collect(ctx: ProbeContext) -> Section`` function.
Sections run concurrently (the cheap ones that cannot hang, :data:`INLINE`, in the calling
thread); one that raises or overruns its time budget becomes a ``failed`` / ``timeout``
section, never a crash.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable

from stackcheck.models.snapshot import Snapshot

# section → module (relative to this package); python/packages come from `interpreter`.
SECTIONS: dict[str, str] = {
    "platform": "platform",
    "hosted": "hosted",
    "accelerators": "accelerators",
    "torch": "torch",
    "toolchain": "toolchain",
    "kernels": "kernels",
    "env": "environ",
    "git": "git",
    "network": "network",
    "launch": "launch",
    "engines": "engines",
}

# Sections judged by preflight/doctor; the rest only matter to `snapshot` and the ledger.
JUDGED = ("platform", "hosted", "accelerators", "torch", "kernels", "env", "toolchain")
# Judged sections that never read the ProbeContext (the interpreter's facts): they can be
# collected while those facts are still being probed (tests/provision/test_started_probe.py
# holds each to it).
NO_CONTEXT = frozenset({"platform", "hosted", "accelerators", "env", "toolchain"})

SECTION_TIMEOUT_S = 10.0
# Sections that read only the environment, os facts and small local files (the platform
# section's one subprocess, macOS's sysctl, has its own 2 s timeout): each costs 0.1-0.5 ms,
# less than a thread of its own, so they run in the calling thread before the others (NVML,
# subprocesses) start in theirs.
INLINE = frozenset({"env", "launch", "network", "hosted", "kernels", "platform"})


class ProbeContext:
    """What section collectors may need to know about the target interpreter. (A plain class,
    not a dataclass: importing dataclasses is ≈ 1 ms of a warm preflight.)"""

    __slots__ = ("python", "packages", "deep", "cwd")

    def __init__(self, python: dict, packages: dict, deep: bool = False, cwd: str | None = None):
        self.python = python  # the python section as a dict (sys_path, executable, prefix …)
        self.packages = packages  # the packages section as a dict
        self.deep = deep
        self.cwd: str = os.getcwd() if cwd is None else cwd


def interpreter_sections(python_path: str | None = None, modules: tuple[str, ...] = ()) -> dict:
    """python + packages for the live interpreter, or for ``python_path`` via a child process."""
    if python_path is None and sys.flags.ignore_environment and os.environ.get("PYTHONPATH"):
        python_path = sys.executable  # stackcheck shielded itself with -E: probe how this python really runs
    elif python_path is None or _same_interpreter(python_path):
        from stackcheck.probe import interpreter

        return interpreter.gather(modules=modules)
    from stackcheck.probe.foreign import gather_foreign

    return gather_foreign(python_path, modules=modules)


def _same_interpreter(path: str) -> bool:
    """A venv's python is a symlink to its base interpreter, so the file alone does not tell two
    environments apart: the directory it is started from must be the same too."""
    try:
        return os.path.samefile(path, sys.executable) and os.path.samefile(
            os.path.dirname(os.path.abspath(path)), os.path.dirname(os.path.abspath(sys.executable))
        )
    except OSError:
        return False


def gather(
    python_path: str | None = None,
    *,
    deep: bool = False,
    sections: tuple[str, ...] | None = None,
    command: str = "live",
    modules: tuple[str, ...] = (),
    interpreter_facts: dict | Callable[[], dict] | None = None,
) -> Snapshot:
    """Take a snapshot. ``sections`` limits the optional sections (python/packages/tool
    are always present); sections not gathered stay ``absent`` with source ``not-probed``.
    ``interpreter_facts``: the python and packages sections of ``python_path`` probed already
    (e.g. by :func:`~stackcheck.probe.foreign.start_foreign`), used instead of a new probe; a
    callable is called once the :data:`NO_CONTEXT` sections are collected (while it probes)."""
    import msgspec

    from stackcheck import __version__
    from stackcheck.models import snapshot as S

    wanted = tuple(SECTIONS) if sections is None else sections
    early: dict = {}
    if callable(interpreter_facts):
        free = tuple(n for n in wanted if n in NO_CONTEXT)
        early = _collect_all(free, ProbeContext(python={}, packages={}, deep=deep))
        interp = interpreter_facts()
    elif interpreter_facts is not None:
        interp = interpreter_facts
    else:
        # the threaded sections that need no context (NVML, the compiler's subprocess) run
        # while the interpreter is probed, instead of after it
        free = tuple(n for n in wanted if n in NO_CONTEXT and n not in INLINE)
        collected_early = _start_all(free, ProbeContext(python={}, packages={}, deep=deep))
        interp = interpreter_sections(python_path, modules)
        early = collected_early()
    ctx = ProbeContext(python=interp["python"], packages=interp["packages"], deep=deep)
    collected = {**early, **_collect_all(tuple(n for n in wanted if n not in early), ctx)}

    snap = Snapshot(
        tool=S.ToolInfo(version=__version__, captured_at=_utc_now(), command=command),
        python=msgspec.convert(interp["python"], S.PythonSection),
        packages=msgspec.convert(interp["packages"], S.PackagesSection),
    )
    for name in SECTIONS:
        if name in collected:
            setattr(snap, name, collected[name])
        else:
            section = getattr(snap, name)
            section.status, section.source = "absent", "not-probed"
    return snap


def _collect_all(wanted, ctx: ProbeContext) -> dict:
    """section → Section of every name in ``wanted``, each collected from ``ctx``."""
    return _start_all(wanted, ctx)()


def _start_all(wanted, ctx: ProbeContext) -> Callable[[], dict]:
    """:func:`_collect_all`, started: the sections of :data:`INLINE` are collected now,
    the others in threads of their own; the call returned waits for those (until one
    shared deadline, counted from now) and answers what :func:`_collect_all` does."""
    import threading
    import time

    from stackcheck.models import snapshot as S

    types = {
        "platform": S.PlatformSection,
        "hosted": S.HostedSection,
        "accelerators": S.AcceleratorSection,
        "torch": S.TorchSection,
        "toolchain": S.ToolchainSection,
        "kernels": S.KernelsSection,
        "env": S.EnvSection,
        "git": S.GitSection,
        "network": S.NetworkSection,
        "launch": S.LaunchSection,
        "engines": S.EnginesSection,
    }
    out: dict = {}
    funcs = {}
    for name in wanted:
        try:
            module = importlib.import_module(f"stackcheck.probe.{SECTIONS[name]}")
        except ModuleNotFoundError as exc:
            out[name] = types[name](status="absent", source="not-implemented", error=str(exc))
            continue
        funcs[name] = module.collect
    if not funcs:
        return lambda: out
    # one daemon thread a section (not concurrent.futures: its import, with logging's, is a
    # tenth of a snapshot, and its workers are joined at exit, so a hung section would hold
    # the process): every section is waited for until one shared deadline
    answers: dict = {}

    def run(name: str, fn) -> None:
        try:
            answers[name] = (True, fn(ctx))
        except Exception as exc:  # one failing section never sinks the snapshot
            answers[name] = (False, exc)

    threads = [
        threading.Thread(target=run, args=item, name=f"stackcheck-probe-{item[0]}", daemon=True)
        for item in funcs.items()
        if item[0] not in INLINE
    ]
    deadline = time.monotonic() + SECTION_TIMEOUT_S
    for name, fn in funcs.items():
        if name in INLINE:
            run(name, fn)
    for thread in threads:
        thread.start()
    return lambda: _finish(funcs, threads, answers, out, types, deadline)


def _finish(funcs, threads, answers: dict, out: dict, types: dict, deadline: float) -> dict:
    import time

    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    for name in funcs:
        answer = answers.get(name)
        if answer is None:
            out[name] = types[name](
                status="timeout", source="probe", error=f"no answer within {SECTION_TIMEOUT_S:.0f} s"
            )
        elif answer[0]:
            out[name] = answer[1]
        else:
            error = answer[1]
            out[name] = types[name](status="failed", source="probe", error=f"{type(error).__name__}: {error}")
    return out


def _utc_now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
