"""Jupyter kernelspecs and the interpreter each one really runs — without importing jupyter.

A kernel whose ``argv[0]`` is a bare ``python`` runs whatever is first on the PATH of the
server that starts it, which is the classic "notebook uses another environment" bug; so each
spec records the resolved interpreter, whether it exists, and whether argv[0] was bare.
Search order and precedence follow jupyter_core.paths.jupyter_path(): JUPYTER_PATH, the user
data dir, the environment's prefix, then system dirs; the first spec of a name wins. The argv
is kept redacted (``--IdentityProvider.token=…``, ``--ServerApp.password=…`` and the like).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys

from stackcheck.models.snapshot import Kernelspec, KernelsSection
from stackcheck.redaction import redact_argv

_PYTHON_NAME = re.compile(r"^python(\d+(\.\d+)?)?(\.exe)?$", re.IGNORECASE)


def collect(ctx=None) -> KernelsSection:
    prefix = (ctx.python.get("prefix") if ctx is not None else None) or sys.prefix
    dirs = jupyter_data_dirs(prefix)
    specs, errors = _scan(dirs)
    return KernelsSection(
        status="ok" if specs else "absent",
        source="kernelspec dirs",
        kernels=specs,
        data_dirs=dirs,
        error="; ".join(errors) or None,
    )


def jupyter_data_dirs(prefix: str | None = None, env=None) -> list[str]:
    """Jupyter's data path for an environment whose sys.prefix is ``prefix``."""
    env = os.environ if env is None else env
    dirs = [p for p in env.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    dirs.append(_user_data_dir(env))
    dirs.append(os.path.join(prefix or sys.prefix, "share", "jupyter"))
    if os.name == "nt":
        dirs.append(os.path.join(env.get("PROGRAMDATA", r"C:\ProgramData"), "jupyter"))
    else:
        dirs += ["/usr/local/share/jupyter", "/usr/share/jupyter"]
    seen: list[str] = []
    for d in dirs:
        if d not in seen:
            seen.append(d)
    return seen


def _user_data_dir(env) -> str:
    if env.get("JUPYTER_DATA_DIR"):
        return env["JUPYTER_DATA_DIR"]
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Jupyter")
    if os.name == "nt":
        return os.path.join(env.get("APPDATA", os.path.join(home, "AppData", "Roaming")), "jupyter")
    return os.path.join(env.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share"), "jupyter")


def find_kernelspecs(data_dirs: list[str] | None = None) -> list[Kernelspec]:
    """Every kernelspec visible to Jupyter (first of a name wins); malformed ones are skipped."""
    return _scan(jupyter_data_dirs() if data_dirs is None else data_dirs)[0]


def _scan(data_dirs: list[str]) -> tuple[list[Kernelspec], list[str]]:
    specs: dict[str, Kernelspec] = {}
    errors: list[str] = []
    for data_dir in data_dirs:
        kernels_dir = os.path.join(data_dir, "kernels")
        try:
            names = sorted(os.listdir(kernels_dir))
        except OSError:
            continue
        for name in names:
            path = os.path.join(kernels_dir, name, "kernel.json")
            if name.lower() in specs or not os.path.isfile(path):
                continue
            spec, error = read_kernelspec(name.lower(), path)
            if spec is None:
                errors.append(error)
            else:
                specs[spec.name] = spec
    return list(specs.values()), errors


def read_kernelspec(name: str, path: str) -> tuple[Kernelspec | None, str]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deeply
        return None, f"{path}: unreadable kernel.json ({type(exc).__name__})"
    argv = data.get("argv") if isinstance(data, dict) else None
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return None, f"{path}: argv: expected a non-empty list of strings"
    language = data.get("language") if isinstance(data.get("language"), str) else ""
    display = data.get("display_name") if isinstance(data.get("display_name"), str) else ""
    spec = Kernelspec(name=name, path=path, display_name=display, language=language, argv=list(argv))
    head = argv[0]
    bare = os.sep not in head and "/" not in head
    spec.bare_python = bare and bool(_PYTHON_NAME.match(head))
    spec.argv = redact_argv(spec.argv)
    if language.lower() == "python" or _PYTHON_NAME.match(os.path.basename(head)):
        resolved = shutil.which(head) if bare else head
        spec.interpreter = resolved or head
        spec.interpreter_exists = resolved is not None and os.path.exists(resolved)
    return spec, ""
