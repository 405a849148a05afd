"""KERN001–KERN004: Jupyter kernelspecs that run another Python than the one you think."""

from __future__ import annotations

import os

from stackcheck.checks.registry import DOCTOR, PREFLIGHT, blocked, check, ok, skipped, warning
from stackcheck.models.snapshot import Kernelspec, UnreadableKernelspec
from stackcheck.shellcmd import code, command

BOTH = (PREFLIGHT, DOCTOR)
# judged by `kernel check` too (stackcheck.notebook.check), with the same title and verdict
BARE_PYTHON, MISSING_INTERPRETER = "KERN001", "KERN002"


def _python_kernels(ctx):
    """(kernels, None) or (None, skip outcome) when the snapshot has no kernels section."""
    ks = ctx.snapshot.kernels
    if ks.status == "absent" and ks.data_dirs:
        return [], None  # looked for in these directories, none there
    if ks.status != "ok":
        return None, skipped(f"kernelspecs were not looked for ({ks.status}, {ks.source or 'not probed'})")
    return [k for k in ks.kernels if (k.language or "python").lower() == "python"], None


def _register_fix(ctx, kernel: Kernelspec) -> str:
    display = kernel.display_name or kernel.name
    return command(
        ctx.interpreter,
        "-m",
        "ipykernel",
        "install",
        "--user",
        "--name",
        kernel.name,
        "--display-name",
        display,
    )


@check(
    "KERN001",
    "Kernelspecs name their interpreter by path",
    commands=BOTH,
    explain="""
A kernel.json whose argv starts with a bare `python` / `python3` runs the Python of whichever
process starts the kernel (jupyter_client substitutes the server's own interpreter; other
front ends search PATH), not the environment the kernel was meant for: packages installed in
the venv are "missing" in the notebook. ipykernel's own spec inside an environment
(`<prefix>/share/jupyter/kernels/python3`) is bare on purpose and only seen by that
environment's Jupyter, so it is not reported. A warning, in doctor and in `kernel check`
alike: such a kernel starts, it may just run the wrong environment. Fix: re-register the kernel \
from the intended interpreter
(`/path/to/venv/bin/python -m ipykernel install --user --name NAME`), which writes its absolute
path into argv.""",
)
def bare_python(ctx):
    kernels, skip = _python_kernels(ctx)
    if skip:
        yield skip
        return
    bad = [k for k in kernels if k.bare_python and not _inside_env(k, ctx.snapshot.python.prefix)]
    for k in bad:
        yield warning(
            observed=f"kernel {k.name!r} ({k.path}) starts a bare {k.argv[0] if k.argv else 'python'!r}: "
            "it runs the Python of whichever Jupyter server or front end starts it"
            + (f" (on PATH now: {k.interpreter})" if k.interpreter else ""),
            expected="argv[0] an absolute interpreter path",
            fix=_register_fix(ctx, k),
            subject=k.name,
        )
    if not bad:
        yield ok(observed=f"{len(kernels)} Python kernelspecs, none with a bare `python`")


@check(
    "KERN002",
    "Kernel interpreters exist",
    commands=BOTH,
    explain="""
A kernelspec whose interpreter no longer exists (the venv was deleted or moved, conda env
removed) shows up in Jupyter's kernel list and then fails with "kernel died" or hangs on
"connecting". Blocked, in doctor and in `kernel check` alike: such a kernel cannot start at
all. Fix: remove it (`jupyter kernelspec remove NAME`) or re-register it from an
existing interpreter.""",
)
def missing_interpreter(ctx):
    kernels, skip = _python_kernels(ctx)
    if skip:
        yield skip
        return
    bad = [k for k in kernels if not k.interpreter_exists]
    for k in bad:
        yield blocked(
            observed=f"kernel {k.name!r} ({k.path}) runs "
            f"{k.interpreter or (k.argv[0] if k.argv else '?')}, which does not exist",
            expected="an existing interpreter",
            fix=f"remove it: {code(command('jupyter', 'kernelspec', 'remove', '-y', k.name))}, "
            f"or re-register it from an existing interpreter: {code(_register_fix(ctx, k))}",
            subject=k.name,
        )
    if not bad:
        yield ok(observed=f"{len(kernels)} Python kernelspecs, every interpreter exists")


@check(
    "KERN004",
    "Kernelspecs are readable",
    commands=BOTH,
    explain="""
A kernel directory whose kernel.json is empty, truncated, not JSON, has no argv, or is itself a
directory. Jupyter lists a kernel whose kernel.json is a file (the first of a name on its path
wins, so it hides any later one of that name) and fails when it is started; a directory named
kernel.json is skipped by Jupyter but makes registering a kernel of that name there fail.
Fix: remove the kernel directory (`rm -r DIR`), or replace it
(`stackcheck kernel register --name NAME --data-dir DATA_DIR --force`).""",
)
def unreadable_kernelspecs(ctx):
    ks = ctx.snapshot.kernels
    if ks.status not in ("ok", "absent") or (ks.status == "absent" and not ks.data_dirs):
        yield skipped(f"kernelspecs were not looked for ({ks.status}, {ks.source or 'not probed'})")
        return
    for u in ks.unreadable:
        yield warning(
            observed=f"kernel {u.name!r} ({u.path}) is unreadable ({u.reason}): {unreadable_effect(u)}",
            expected="a kernel.json with a non-empty argv",
            fix=unreadable_fix(u, ctx.interpreter, "replace it with a kernel of this environment"),
            subject=u.name,
        )
    if not ks.unreadable:
        yield ok(observed=f"{len(ks.kernels)} kernelspecs, every one readable")


def unreadable_effect(spec: UnreadableKernelspec) -> str:
    if spec.listed:
        return "Jupyter lists it and cannot start it"
    return "Jupyter skips it, and it blocks registering a kernel of that name there"


def unreadable_fix(spec: UnreadableKernelspec, python: str, replace: str = "replace it") -> str:
    """Remove the kernel directory, or write a spec over it in the same data dir."""
    kernel_dir = os.path.dirname(spec.path)
    data_dir = os.path.dirname(os.path.dirname(kernel_dir))
    register = command(
        "stackcheck",
        "kernel",
        "register",
        "--name",
        spec.name,
        "--python",
        python,
        "--data-dir",
        data_dir,
        "--force",
    )
    return f"remove it: {code(command('rm', '-r', kernel_dir))}, or {replace}: {code(register)}"


def _inside_env(kernel: Kernelspec, prefix: str) -> bool:
    """The kernelspec lives in the environment's own data dir (``<prefix>/share/jupyter``)."""
    if not prefix:
        return False
    root = os.path.realpath(prefix).rstrip("/") + "/"
    return os.path.realpath(kernel.path).startswith(root)


def _same_env(a: str, b: str) -> bool:
    """Two interpreter paths of one environment: same bin directory after symlinks."""
    if not a or not b:
        return True
    return os.path.realpath(os.path.dirname(a)) == os.path.realpath(os.path.dirname(b))


@check(
    "KERN003",
    "The environment's kernels run the environment",
    commands=BOTH,
    explain="""
Kernels that belong to the checked environment — registered inside its prefix
(`<prefix>/share/jupyter/kernels`), or the default `python3` kernel a notebook opens — but
run another interpreter: `pip install` in the environment then never reaches the notebook.
Kernels of other environments registered elsewhere are fine and not reported. Fix: register a
kernel from the checked interpreter and select it in the notebook.""",
)
def foreign_kernel(ctx):
    kernels, skip = _python_kernels(ctx)
    if skip:
        yield skip
        return
    py = ctx.snapshot.python
    found = 0
    for k in kernels:
        if not k.interpreter or not k.interpreter_exists or k.bare_python:
            continue  # KERN001/KERN002 report those
        ours = _inside_env(k, py.prefix)
        if not (ours or k.name == "python3"):
            continue
        if _same_env(k.interpreter, py.executable):
            continue
        found += 1
        where = "registered inside this environment" if ours else "Jupyter's default kernel"
        yield warning(
            observed=f"kernel {k.name!r} ({where}) runs {k.interpreter}, not {py.executable}",
            expected=f"a kernel of {py.prefix or py.executable} that runs its interpreter",
            fix=_register_fix(ctx, k),
            subject=k.name,
        )
    if not found:
        yield ok(
            observed=f"{len(kernels)} Python kernelspecs; none of this environment runs another interpreter"
        )
