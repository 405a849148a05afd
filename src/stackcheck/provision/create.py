"""The steps of ``env create``, ``env lock`` and ``env restore``, one after the other:

1. make the environment (``uv venv`` / ``python -m venv``);
2. resolve the plan's requirements and constraints into exact pins with hashes (``uv pip
   compile`` / ``pip install --dry-run --report``), without installing anything; uv resolves
   for the base interpreter (the one the environment is made from: the same markers) while
   the environment is being made;
3. refuse the plan when the resolution holds a package the profile forbids (naming the chain
   of requirements that pulls it in);
4. install exactly the hashed pins (``uv pip sync`` / ``pip install --no-deps --require-hashes``),
   the same step a restore runs from a lock;
5. verify the installed set against the pins, register the kernel, run the preflight (what
   those need is imported, and the new environment's interpreter started for its probe,
   while the installer works, so it costs no time after it).

A failure at any step removes what this run created (nothing half-created is left behind).
The files the steps read and write live in ``DIR/stackcheck/`` (the lock among them, so
``env diff DIR/stackcheck/lock.json`` works later).
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from stackcheck.errors import InputError, Refused
from stackcheck.models.finding import Report
from stackcheck.models.snapshot import Snapshot, normalize_name
from stackcheck.provision.installer import Installer, child_env
from stackcheck.provision.lock import Lock, LockedPackage, LockHeader, drift, installed_versions
from stackcheck.provision.plan import Plan, Sources, env_paths

if TYPE_CHECKING:
    from stackcheck.notebook.register import Registration
    from stackcheck.probe.foreign import StartedProbe

__all__ = ["Outcome", "check_target", "create", "find_python", "forbidden_chains", "lock_plan", "restore"]

STEP_TIMEOUT = 3600.0  # an install of a CUDA torch stack downloads gigabytes
FILES = "stackcheck"  # DIR/stackcheck/: the plan's inputs, the pins and the lock


@dataclass
class Outcome:
    path: str
    python: str  # the new environment's interpreter
    steps: list[list[str]] = field(default_factory=list)  # every command run (or, dry: to run)
    lock: Lock | None = None
    warnings: list[str] = field(default_factory=list)
    kernel: Registration | None = None
    report: Report | None = None  # the preflight of the new environment


def interpreter(path: str, system: str) -> str:
    """The absolute interpreter path of an environment at ``path`` on ``system`` (a Windows
    path stays a Windows path when planned from another platform)."""
    import ntpath

    absolute = ntpath.abspath(path) if system.lower() == "windows" else os.path.abspath(path)
    return env_paths(absolute, system)[0]


def machine_facts() -> Snapshot:
    """What a plan needs of this machine: its platform and accelerators (the interpreter and its
    packages are not probed: the new environment's are, after the install)."""
    from stackcheck.probe import accelerators, platform

    return Snapshot(platform=platform.collect(), accelerators=accelerators.collect())


def find_python(want: str | None, spec: str | None) -> tuple[str, str]:
    """(interpreter, "X.Y") for ``--python``: a path, ``X.Y`` (``pythonX.Y`` on PATH) or None
    (this interpreter); its version must satisfy the profile's ``python`` specifier."""
    if want is None:
        exe = sys.executable  # this interpreter: its facts are at hand (no child process)
        full = ".".join(map(str, sys.version_info[:3]))
        _check_python(exe, full, spec)
        return exe, full.rsplit(".", 1)[0]
    if os.sep in want or want.startswith("."):
        exe = os.path.abspath(want)
    else:
        parts = want.split(".")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise InputError(f"--python: {want!r} is not X.Y (e.g. 3.12) or an interpreter path")
        found = shutil.which(f"python{want}")
        if found is None:
            raise InputError(f"--python {want}: no python{want} on PATH (give the interpreter's path)")
        exe = found
    from stackcheck.notebook.interpreter import ask

    facts = ask(exe)
    if not facts.ran or not facts.version:
        raise InputError(f"--python: {exe} is not a working interpreter ({facts.error or 'no version'})")
    _check_python(exe, facts.version, spec)
    return exe, ".".join(facts.version.split(".")[:2])


def _check_python(exe: str, full_version: str, spec: str | None) -> None:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if spec:
        try:
            ok = SpecifierSet(spec).contains(full_version, prereleases=True)
        except InvalidSpecifier:
            ok = True  # the catalog validates profiles; an odd one is not a reason to stop here
        if not ok:
            raise InputError(
                f"--python: {exe} is Python {full_version}; the profile needs python{spec} "
                "(give --python X.Y)"
            )


def check_target(path: str, *, force: bool) -> None:
    """InputError unless ``path`` can become a new environment: not a file, empty or absent,
    or (``force``) an existing environment (a pyvenv.cfg) that may be replaced."""
    from stackcheck.fileio import require_creatable_dir

    require_creatable_dir(path, "a directory for the environment")
    p = Path(path)
    if p.is_dir() and any(p.iterdir()):
        if not force:
            raise InputError(
                f"--path {path}: exists and is not empty (--force replaces an environment there)"
            )
        if not (p / "pyvenv.cfg").is_file():
            raise InputError(
                f"--path {path}: exists and is not an environment (no pyvenv.cfg); not replacing it"
            )
    parent = next(a for a in (p, *p.parents) if a.exists())
    if not os.access(parent, os.W_OK):
        raise InputError(f"--path {path}: cannot create it ({parent} is not writable)")


@contextmanager
def _target(path: str, *, force: bool) -> Iterator[None]:
    """Make ``path`` (replacing an environment there with ``force``); remove it again when the
    work inside fails, so a failed run leaves nothing behind."""
    p = Path(path)
    if force and (p / "pyvenv.cfg").is_file():
        shutil.rmtree(p)
    existed = p.exists()
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--path {path}: cannot create it ({exc.strerror or exc})") from None
    try:
        yield
    except BaseException:
        if existed:  # an empty directory that was there: empty it again
            for child in p.iterdir():
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        else:
            shutil.rmtree(p, ignore_errors=True)
        raise


def _run(argv: list[str], what: str, sources: Sources, *, progress: bool, on_start=None) -> str:
    """Run one step (``on_start`` is called once it runs); Refused with the installer's last
    error line when it fails."""
    from stackcheck.probe.proc import LARGE_OUTPUT_BYTES, run
    from stackcheck.progress import ticking

    with ticking(what, enabled=progress):
        env = child_env(sources)
        done = run(argv, timeout=STEP_TIMEOUT, env=env, max_output=LARGE_OUTPUT_BYTES, on_start=on_start)
    if not done.ok:
        lines = [ln.strip() for ln in (done.stderr or done.stdout).splitlines() if ln.strip()]
        detail = done.error or next(
            (ln for ln in reversed(lines) if "error" in ln.lower() or "×" in ln), lines[-1] if lines else ""
        )
        from stackcheck.identifiers import printable
        from stackcheck.redaction import redact_argv, redact_text
        from stackcheck.shellcmd import command

        # an index URL may carry a token: neither the installer's words nor the command show it
        shown = redact_text(printable(detail)[:300])
        raise Refused(f"{what} failed ({shown}): {command(*redact_argv(argv))}")
    return done.stdout


def forbidden_chains(plan: Plan, resolved: list[LockedPackage]) -> list[str]:
    """One line per forbidden package in the resolution, with the chain that pulls it in."""
    from packaging.requirements import Requirement

    by_name = {p.name: p for p in resolved}
    out = []
    for f in plan.forbidden:
        req = Requirement(f.requirement)
        hit = by_name.get(normalize_name(req.name))
        if hit is None or not req.specifier.contains(hit.version, prereleases=True):
            continue
        chain = _chain(hit.name, by_name)
        via = " -> ".join(f"{n} {by_name[n].version}" for n in chain)
        why = f" ({f.reason})" if f.reason else ""
        where = f" (it belongs in {f.use_instead})" if f.use_instead else ""
        out.append(f"{f.requirement}{why}{where}: pulled in by {via}")
    return out


def _chain(name: str, by_name: dict[str, LockedPackage]) -> list[str]:
    """The shortest path from a requirement of the profile down to ``name``."""
    paths = {name: [name]}
    queue = [name]
    while queue:
        current = queue.pop(0)
        row = by_name.get(current)
        if row is None:
            continue
        if "-r" in row.via:
            return paths[current]
        for parent in sorted(row.via):
            if parent not in paths:
                paths[parent] = [parent, *paths[current]]
                queue.append(parent)
    return [name]


def _write_inputs(folder: Path, plan: Plan) -> tuple[str, str]:
    from stackcheck.fileio import atomic_write

    folder.mkdir(parents=True, exist_ok=True)
    reqs = folder / "requirements.in"
    cons = folder / "constraints.txt"
    pin = [plan.torch.constraint] if plan.torch.constraint else []
    # read by the installer at once, and inside the environment a failure removes: no fsync
    atomic_write(reqs, "".join(f"{r}\n" for r in plan.requirements), durable=False)
    atomic_write(cons, "".join(f"{c}\n" for c in [*plan.constraints, *pin]), durable=False)
    return str(reqs), str(cons)


def _header(plan: Plan, installer: Installer, sources: Sources) -> LockHeader:
    from stackcheck import __version__
    from stackcheck.provision.installer import redact_url

    return LockHeader(
        profile=plan.profile.id,
        profile_digest=plan.digest,
        system=plan.system,
        machine=plan.machine,
        python=plan.python_version,
        torch_build=plan.torch.tag,
        torch_index=plan.torch.index_url or "",
        installer=installer.name,
        sources=[redact_url(a) for a in sources.args()],
        stackcheck=__version__,
    )


def _resolve(
    plan: Plan, installer: Installer, target: str, folder: Path, *, progress: bool, outcome: Outcome
):
    reqs, cons = _write_inputs(folder, plan)
    sources = plan.sources.with_torch(plan.torch)
    report = str(folder / "resolution.json")
    argv = installer.resolve_argv(target, reqs, cons, sources, report)
    outcome.steps.append(argv)
    stdout = _run(argv, f"resolving {plan.profile.id}", sources, progress=progress)
    resolved = installer.parse_resolution(stdout, report, sources)
    problems = forbidden_chains(plan, resolved)
    if problems:
        raise Refused(f"profile {plan.profile.id} forbids " + "; ".join(problems) + "; nothing was installed")
    return Lock(header=_header(plan, installer, sources), packages=resolved).sealed()


def _new_env(installer: Installer, base: str, path: str, system: str, outcome: Outcome, sources, progress):
    """Record the step that makes the environment; the callable returned runs it and gives the
    new environment's interpreter (recorded first, so the steps keep their order when it runs
    in another thread)."""
    argv = installer.venv(base, path)
    outcome.steps.append(argv)

    def make() -> str:
        _run(argv, f"creating {path}", sources, progress=progress)
        return interpreter(path, system)

    return make


def _resolver(installer: Installer, plan: Plan, target: str) -> str:
    """The interpreter the resolution is made for: uv resolves for the base interpreter (the
    environment's markers are its own), so it need not wait for the environment; pip runs
    inside the new environment."""
    return plan.python if installer.name == "uv" else target


def _env_and_lock(plan: Plan, installer: Installer, path: str, folder: Path, outcome: Outcome, progress):
    """Make the environment and resolve the plan (refusing a forbidden package): with uv both
    at once, the environment in a thread; both have finished when this returns or raises."""
    if installer.name != "uv":
        target = _new_env(installer, plan.python, path, plan.system, outcome, plan.sources, progress)()
        lock = _resolve(plan, installer, target, folder, progress=progress, outcome=outcome)
        return target, lock
    made: list[BaseException | str] = []
    new_env = _new_env(installer, plan.python, path, plan.system, outcome, plan.sources, False)

    def make() -> None:
        try:
            made.append(new_env())
        except BaseException as exc:  # re-raised below, in the caller's thread
            made.append(exc)

    worker = threading.Thread(target=make, name="stackcheck-venv", daemon=True)
    worker.start()
    try:
        lock = _resolve(plan, installer, plan.python, folder, progress=progress, outcome=outcome)
    finally:
        worker.join()  # before anything is cleaned up: the environment is written until then
    if isinstance(made[0], BaseException):
        raise made[0]
    return made[0], lock


class _Preload(threading.Thread):
    """Started once the installer runs (this process only waits on it) and joined after it:
    starts the new environment's interpreter for the verify's probe (it waits until the
    install is done: :func:`~stackcheck.probe.foreign.start_foreign`) and imports what the
    verify and the preflight need."""

    def __init__(self, target: str, modules: tuple[str, ...], lock: Lock, folder: Path):
        super().__init__(name="stackcheck-preload", daemon=True)
        self.target, self.modules, self.lock, self.folder = target, modules, lock, folder
        self.probe: StartedProbe | None = None
        self.error: OSError | None = None

    def run(self) -> None:
        try:
            from stackcheck.probe.foreign import start_foreign

            self.probe = start_foreign(self.target, self.modules)
        except Exception:  # noqa: BLE001 - then the verify probes the interpreter the usual way
            pass
        from stackcheck.fileio import atomic_write

        try:  # now rather than after the verify: a failure removes it with the environment
            atomic_write(self.folder / "lock.json", self.lock.encode())
        except OSError as exc:
            self.error = exc
        try:
            import importlib

            import stackcheck.deps.graph  # noqa: F401 - the dependency checks' graph
            import stackcheck.environment  # noqa: F401
            import stackcheck.judge  # noqa: F401
            import stackcheck.render.text  # noqa: F401 - the preflight's report
            import stackcheck.sources  # noqa: F401
            from stackcheck.checks.registry import all_checks
            from stackcheck.probe import JUDGED, SECTIONS

            all_checks()
            for name in JUDGED:  # the collectors of the sections the verify's snapshot holds
                importlib.import_module(f"stackcheck.probe.{SECTIONS[name]}")
        except Exception:  # noqa: BLE001 - the caller imports them again and meets the error there
            pass


def _install_and_verify(
    lock: Lock, installer: Installer, target: str, folder: Path, sources, outcome, progress, modules=()
) -> Snapshot:
    """Install the pins and write the lock (DIR/stackcheck/lock.json), then the new
    environment's snapshot, verified against the lock."""
    preload = _Preload(target, modules, lock, folder)
    try:
        _install(lock, installer, target, folder, sources, outcome, progress, on_start=preload.start)
    except BaseException:
        if preload.ident is not None:
            preload.join()
        if preload.probe is not None:
            preload.probe.cancel()
        raise
    preload.join()  # started: the install ran
    if preload.error is not None:
        if preload.probe is not None:
            preload.probe.cancel()
        from stackcheck.fileio import cannot_write

        raise cannot_write(str(folder / "lock.json"), "lock", preload.error)
    return _verify(lock, target, modules, preload.probe)


def _install(
    lock: Lock, installer: Installer, target: str, folder: Path, sources, outcome, progress, on_start=None
):
    from stackcheck.fileio import atomic_write

    pins = folder / "requirements.lock.txt"
    atomic_write(pins, lock.requirements(), durable=False)  # as _write_inputs
    argv = installer.install_argv(target, str(pins), sources)
    outcome.steps.append(argv)
    _run(argv, f"installing {len(lock.packages)} packages", sources, progress=progress, on_start=on_start)


def _verify(lock: Lock, target: str, modules: tuple[str, ...] = (), started: StartedProbe | None = None):
    """The new environment's snapshot (what a preflight probes; its interpreter's facts from
    ``started`` when it was started ahead); Refused when its packages drift from the lock."""
    from stackcheck.environment import obtain
    from stackcheck.probe import JUDGED
    from stackcheck.sources import FactSource

    if started is not None:
        started.go()  # it probes while the sections that need none of its facts are collected
    facts = started.facts if started is not None else None
    try:
        snap = obtain(FactSource("python", target), sections=JUDGED, modules=modules, interpreter_facts=facts)
    except BaseException:
        if started is not None:
            started.cancel()  # a no-op once it has answered
        raise
    found = drift(lock, installed_versions(snap))
    if found:
        raise Refused(f"{target}: the installed set differs from the lock: " + "; ".join(found.lines()))
    return snap


def create(
    plan: Plan,
    path: str,
    installer: Installer,
    *,
    kernel: str | None = None,
    force: bool = False,
    progress: bool = False,
    on_step: Callable[[str], None] | None = None,
) -> Outcome:
    """Make the environment of ``plan`` at ``path`` (see the module docstring)."""
    check_target(path, force=force)
    outcome = Outcome(path=path, python=interpreter(path, plan.system))
    say = on_step or (lambda _text: None)
    folder = Path(path) / FILES
    with _target(path, force=force):
        say(f"resolving {len(plan.requirements)} requirements with {installer.name}")
        target, lock = _env_and_lock(plan, installer, path, folder, outcome, progress)
        outcome.python, outcome.lock = target, lock
        say(f"installing {len(lock.packages)} packages")
        sources = plan.sources.with_torch(plan.torch)
        modules = tuple(plan.profile.required_modules)
        snap = _install_and_verify(lock, installer, target, folder, sources, outcome, progress, modules)
        if kernel:
            from stackcheck.notebook.register import register

            # --force replaces the environment, not another environment's kernel of that name
            outcome.kernel = register(name=kernel, python=target)
    from stackcheck.judge import judge

    outcome.report = judge(snap, command="preflight", profile=plan.profile)
    return outcome


def planned_steps(plan: Plan, path: str, installer: Installer, kernel: str | None) -> list[list[str]]:
    """The commands :func:`create` runs, for ``--dry-run`` (the files under DIR/stackcheck/ are
    written by stackcheck between them)."""
    folder = Path(path) / FILES
    target = interpreter(path, plan.system)
    sources = plan.sources.with_torch(plan.torch)
    steps = [
        installer.venv(plan.python, path),
        installer.resolve_argv(
            _resolver(installer, plan, target),
            str(folder / "requirements.in"),
            str(folder / "constraints.txt"),
            sources,
            str(folder / "resolution.json"),
        ),
        installer.install_argv(target, str(folder / "requirements.lock.txt"), sources),
    ]
    if kernel:
        steps.append(["stackcheck", "kernel", "register", "--name", kernel, "--python", target])
    steps.append(["stackcheck", "preflight", "--profile", plan.profile.id, "--python", target])
    return steps


def lock_plan(plan: Plan, installer: Installer, *, progress: bool = False) -> Lock:
    """The lock of ``plan``: uv resolves for the base interpreter itself; pip in a throwaway
    environment of that interpreter."""
    import tempfile

    outcome = Outcome(path="", python="")
    with tempfile.TemporaryDirectory(prefix="stackcheck-lock-") as tmp:
        if installer.name == "uv":  # no environment needed: uv resolves for the base interpreter
            target = plan.python
        else:
            env = os.path.join(tmp, "env")
            target = _new_env(installer, plan.python, env, plan.system, outcome, plan.sources, progress)()
        return _resolve(plan, installer, target, Path(tmp) / FILES, progress=progress, outcome=outcome)


def restore(
    lock: Lock,
    path: str,
    installer: Installer,
    *,
    python: str,
    system: str,
    sources: Sources,
    force: bool = False,
    progress: bool = False,
) -> Outcome:
    """Recreate the environment of ``lock`` at ``path``: the hashed pins, no resolution; then
    verify the installed set against the lock."""
    check_target(path, force=force)
    outcome = Outcome(path=path, python=interpreter(path, system), lock=lock)
    folder = Path(path) / FILES
    with _target(path, force=force):
        target = _new_env(installer, python, path, system, outcome, sources, progress)()
        outcome.python = target
        _install_and_verify(lock, installer, target, folder, sources, outcome, progress)
    return outcome


def lock_fits(lock: Lock, *, python: str, system: str, machine: str) -> list[str]:
    """What differs between the machine and interpreter at hand and what ``lock`` is valid for."""
    h = lock.header
    out = []
    if h.python != python:
        out.append(f"Python {h.python} (this interpreter is {python}; give --python {h.python})")
    if h.system.lower() != system.lower():
        out.append(f"{h.system} (this machine runs {system})")
    if _arch(h.machine) != _arch(machine):
        out.append(f"{h.machine} (this machine is {machine})")
    return out


def _arch(machine: str) -> str:
    m = machine.lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(m, m)
