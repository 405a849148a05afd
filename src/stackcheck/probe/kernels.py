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
import sys

from stackcheck.models.snapshot import Kernelspec, KernelsSection, UnreadableKernelspec
from stackcheck.probe.files import which
from stackcheck.redaction import redact_argv

_PYTHON_NAME = re.compile(r"^python(\d+(\.\d+)?)?(\.exe)?$", re.IGNORECASE)


def collect(ctx=None) -> KernelsSection:
    prefix = (ctx.python.get("prefix") if ctx is not None else None) or sys.prefix
    dirs = jupyter_data_dirs(prefix)
    specs, unreadable = scan_kernelspecs(dirs)
    return KernelsSection(
        status="ok" if specs or unreadable else "absent",
        source="kernelspec dirs",
        kernels=specs,
        unreadable=unreadable,
        data_dirs=dirs,
        error="; ".join(f"{u.path}: {u.reason}" for u in unreadable) or None,
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
    """Every readable kernelspec visible to Jupyter (first of a name wins)."""
    return scan_kernelspecs(jupyter_data_dirs() if data_dirs is None else data_dirs)[0]


def scan_kernelspecs(data_dirs: list[str]) -> tuple[list[Kernelspec], list[UnreadableKernelspec]]:
    """The kernelspecs Jupyter would use and the unreadable ones, by name. As in
    jupyter_client, the first kernel.json *file* of a name wins, readable or not (an unreadable
    one hides later ones); a directory named kernel.json is skipped by Jupyter but reported."""
    specs: dict[str, Kernelspec] = {}
    unreadable: dict[str, UnreadableKernelspec] = {}
    for data_dir in data_dirs:
        kernels_dir = os.path.join(data_dir, "kernels")
        try:
            names = sorted(os.listdir(kernels_dir))
        except OSError:
            continue
        for name in names:
            key, path = name.lower(), os.path.join(kernels_dir, name, "kernel.json")
            if key in specs or (key in unreadable and unreadable[key].listed):
                continue
            if os.path.isdir(path):
                unreadable.setdefault(
                    key,
                    UnreadableKernelspec(
                        name=key, path=path, reason="kernel.json is a directory", listed=False
                    ),
                )
                continue
            if not os.path.isfile(path):
                continue
            spec, error = read_kernelspec(key, path)
            if spec is None:
                unreadable[key] = UnreadableKernelspec(name=key, path=path, reason=error)
            else:
                specs[key] = spec
    return list(specs.values()), list(unreadable.values())


MAX_KERNEL_JSON = 1 << 20  # a kernel.json is a few hundred bytes; more is not one


def load_kernel_json(path: str) -> tuple[dict | None, str]:
    """The object in a kernel.json, or None and why it cannot be used ("empty file" …)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_KERNEL_JSON + 1)
    except IsADirectoryError:
        return None, "kernel.json is a directory"
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or type(exc).__name__}"
    if len(raw) > MAX_KERNEL_JSON:
        return None, f"larger than {MAX_KERNEL_JSON >> 20} MiB"
    if not raw.strip():
        return None, "empty file"
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    except RecursionError:
        return None, "malformed JSON: nested too deeply"
    except ValueError as exc:
        where = f" at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        return None, f"malformed JSON: {getattr(exc, 'msg', exc)}{where}"
    if not isinstance(data, dict):
        return None, "expected a JSON object"
    return data, ""


def read_kernelspec(name: str, path: str) -> tuple[Kernelspec | None, str]:
    """The spec, or None and why it cannot be used."""
    data, error = load_kernel_json(path)
    if data is None:
        return None, error
    argv = data.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return None, "argv: expected a non-empty list of strings"
    language = data["language"] if isinstance(data.get("language"), str) else ""
    display = data["display_name"] if isinstance(data.get("display_name"), str) else ""
    spec = Kernelspec(name=name, path=path, display_name=display, language=language, argv=list(argv))
    head = argv[0]
    bare = os.sep not in head and "/" not in head
    spec.bare_python = bare and bool(_PYTHON_NAME.match(head))
    spec.argv = redact_argv(spec.argv)
    if language.lower() == "python" or _PYTHON_NAME.match(os.path.basename(head)):
        resolved = which(head) if bare else head
        spec.interpreter = resolved or head
        spec.interpreter_exists = resolved is not None and os.path.exists(resolved)
    return spec, ""
