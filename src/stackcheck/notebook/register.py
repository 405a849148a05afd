"""Register a Jupyter kernel that runs *this* environment's interpreter, by absolute path.

The kernelspec's argv names the interpreter by its absolute path (a bare ``python`` would run
whatever interpreter started Jupyter), and its ``env`` puts the repository root on
PYTHONPATH, so ``import mytools`` works from a notebook in any subfolder. jupyter_client's
KernelSpecManager installs the spec where it is importable; otherwise the directory is written
directly into Jupyter's data dirs (JUPYTER_DATA_DIR, ``<prefix>/share/jupyter``).
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field

from stackcheck import identifiers
from stackcheck.errors import InputError, Refused
from stackcheck.fileio import require_creatable_dir


@dataclass
class Registration:
    name: str
    path: str  # the kernel.json written
    spec: dict
    via: str  # jupyter_client | direct
    replaced: str | None = None  # interpreter of the spec that was overwritten
    warnings: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)


def default_name(python: str) -> str:
    """The environment's directory name (``.venv`` → its parent's), as a valid kernel name
    (:mod:`stackcheck.identifiers`: starts with a letter or digit, at most 128 characters)."""
    prefix = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    base = os.path.basename(prefix)
    if base.startswith(".") or base in ("venv", "env"):
        base = os.path.basename(os.path.dirname(prefix)) + "-" + base.lstrip(".")
    name = re.sub(r"[^a-z0-9._-]+", "-", base.lower()).lstrip("._-")[: identifiers.MAX_NAME].rstrip("-")
    return name or "python"


def find_repo_root(start: str) -> str:
    """The nearest directory at or above ``start`` with a ``.git``; else ``start`` itself."""
    here = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return os.path.abspath(start)
        here = parent


def destination_dir(*, user: bool = False, prefix: str | None = None, data_dir: str | None = None) -> str:
    """The ``kernels`` directory to write into, as jupyter_client would choose it."""
    if sum(bool(x) for x in (user, prefix, data_dir)) > 1:
        raise InputError("--user, --prefix and --data-dir cannot be combined: choose one destination")
    if data_dir:
        return os.path.join(os.path.abspath(data_dir), "kernels")
    if prefix:
        return os.path.join(os.path.abspath(prefix), "share", "jupyter", "kernels")
    from stackcheck.probe.kernels import jupyter_data_dirs

    # the user data dir: Jupyter's path without JUPYTER_PATH's entries in front of it
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_PATH"}
    return os.path.join(jupyter_data_dirs(env=env)[0], "kernels")


def kernelspec(python: str, display_name: str, repo: str | None) -> dict:
    from stackcheck import __version__

    spec: dict = {
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": display_name,
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {
            "debugger": True,
            "stackcheck": {"version": __version__, "python": python, "repo": repo},
        },
    }
    if repo:
        spec["env"] = {"PYTHONPATH": repo}
    return spec


def register(
    *,
    name: str | None = None,
    display_name: str | None = None,
    python: str | None = None,
    repo: str | None = None,
    user: bool = False,
    prefix: str | None = None,
    data_dir: str | None = None,
    force: bool = False,
) -> Registration:
    """Write the kernelspec; refuse to replace a same-named kernel that runs another
    interpreter unless ``force``. Warns (does not fail) when ipykernel is missing there."""
    from stackcheck.notebook.interpreter import ask

    python = os.path.abspath(python or sys.executable)
    if not os.path.isfile(python) or not os.access(python, os.X_OK):
        raise InputError(f"--python: {python} is not an executable interpreter")
    # the name is a directory under kernels/: one rule for every name stackcheck accepts,
    # stricter than jupyter_client's ("." and ".." match its ^[a-z0-9._-]+$)
    name = identifiers.require((name or default_name(python)).lower(), "--name")
    if display_name is not None:
        identifiers.require(display_name, "--display-name", "text")
    repo_given = bool(repo)
    repo = os.path.abspath(repo) if repo else find_repo_root(os.getcwd())
    if not os.path.isdir(repo):
        raise InputError(f"--repo: {repo} is not a directory")
    kernels_dir = destination_dir(user=user, prefix=prefix, data_dir=data_dir)
    what = (
        "a Jupyter data directory for --data-dir"
        if data_dir
        else "an environment prefix for --prefix"
        if prefix
        else "Jupyter's user data directory"
    )
    require_creatable_dir(os.path.join(kernels_dir, name), what)
    user = not (prefix or data_dir)  # the default destination is the user's data dir
    target = os.path.join(kernels_dir, name, "kernel.json")

    replaced, unreadable = _existing_interpreter(target)
    if unreadable and not force:
        from stackcheck.shellcmd import command

        given = [
            ("--display-name", display_name),
            ("--repo", repo if repo_given else None),
            ("--prefix", prefix),
            ("--data-dir", data_dir),
        ]
        again = command(
            "stackcheck",
            "kernel",
            "register",
            "--name",
            name,
            "--python",
            python,
            *[word for opt, value in given if value for word in (opt, value)],
            "--force",
        )
        raise Refused(f"kernel {name!r} ({target}) is unreadable ({unreadable}); replace it: {again}")
    if replaced is not None and not force and not _same_env(replaced, python):
        raise Refused(
            f"kernel {name!r} ({target}) runs {replaced}, not {python}; "
            "use --force to replace it, or --name to register another kernel"
        )

    facts = ask(python, env={"PYTHONPATH": repo})
    display = display_name or f"Python {facts.version or ''} ({name})".replace("  ", " ")
    spec = kernelspec(python, display, repo)
    via, target = _install(spec, name, kernels_dir, user=user, prefix=prefix, data_dir=data_dir)
    result = Registration(name=name, path=target, spec=spec, via=via, replaced=replaced)
    if not facts.ran:
        result.warnings.append(f"{python} did not answer ({facts.error}): the kernel will not start")
    elif not facts.ipykernel:
        result.warnings.append(f"ipykernel is not installed for {python}: the kernel will not start")
        result.fixes.append(facts.pip_install_ipykernel)
    shadow = _shadowing_spec(name, target)
    if shadow:
        result.warnings.append(
            f"another kernel named {name!r} comes earlier in Jupyter's path ({shadow}) and hides this one"
        )
    return result


def _existing_interpreter(kernel_json: str) -> tuple[str | None, str]:
    """argv[0] of an existing spec ('' when unreadable) and why it is unreadable ('' when it
    is not); (None, '') when there is none."""
    from stackcheck.probe.kernels import read_kernelspec

    if not os.path.lexists(kernel_json):
        return None, ""
    spec, reason = read_kernelspec("", kernel_json)
    return (spec.argv[0], "") if spec is not None else ("", reason)


def _same_env(a: str, b: str) -> bool:
    """Two interpreter paths of one environment: the same bin directory. (Not samefile:
    every venv's python links to the same base interpreter.)"""
    return bool(a) and os.path.realpath(os.path.dirname(a)) == os.path.realpath(os.path.dirname(b))


def _install(
    spec: dict, name: str, kernels_dir: str, *, user: bool, prefix: str | None, data_dir: str | None
) -> tuple[str, str]:
    """Install via jupyter_client where it is importable (not for --data-dir, which it has no
    option for); otherwise write ``kernels/NAME/kernel.json`` atomically. Returns (how, the
    kernel.json written)."""
    from stackcheck.fileio import atomic_write

    payload = json.dumps(spec, indent=1) + "\n"
    if not data_dir:
        try:
            from jupyter_client.kernelspec import KernelSpecManager
        except ImportError:
            pass
        else:
            import tempfile

            with tempfile.TemporaryDirectory(prefix="stackcheck-kernel-") as tmp:
                src = os.path.join(tmp, name)
                atomic_write(os.path.join(src, "kernel.json"), payload)
                dest = KernelSpecManager().install_kernel_spec(
                    src, kernel_name=name, user=user, prefix=prefix
                )
            return "jupyter_client", os.path.join(dest, "kernel.json")
    target = os.path.join(kernels_dir, name, "kernel.json")
    if os.path.isdir(target) and not os.path.islink(target):  # a directory named kernel.json (--force)
        import shutil

        shutil.rmtree(target)
    atomic_write(target, payload)
    return "direct", target


def _shadowing_spec(name: str, written: str) -> str | None:
    """A same-named kernelspec that Jupyter finds before the one just written."""
    from stackcheck.probe.kernels import find_kernelspecs

    for spec in find_kernelspecs():
        if spec.name == name:
            return None if os.path.realpath(spec.path) == os.path.realpath(written) else spec.path
    return None
