"""ISO001–ISO004: is the code that runs the code that was installed?

Duplicate copies of one project on sys.path, two projects owning one import name, sys.path
entries from PYTHONPATH / .pth files / system or user site that do not belong to this
interpreter, and a shell whose active environment or ``pip`` is not the checked interpreter's.
"""

from __future__ import annotations

import os
import posixpath
import re

from stackcheck.checks.deps import no_package_metadata
from stackcheck.checks.registry import DOCTOR, PREFLIGHT, blocked, check, ok, skipped, warning
from stackcheck.deps.index import one_per_install
from stackcheck.models.snapshot import Distribution, normalize_name
from stackcheck.shellcmd import code, command, with_note
from stackcheck.versions import major_minor

BOTH = (PREFLIGHT, DOCTOR)
_PY_DIR = re.compile(r"(?:^|/)(?:lib|lib64)/python(\d{1,6})\.(\d{1,6})(?:/|$)")
# For a contested import name, the owner to keep; otherwise the alphabetically last one is kept.
_PREFERRED = {"pynvml": "nvidia-ml-py", "cv2": "opencv-python-headless"}
_KNOWN_NAMESPACES = {
    "google",
    "nvidia",
    "azure",
    "backports",
    "jaraco",
    "sphinxcontrib",
    "zope",
    "ruamel",
    "mpl_toolkits",
    "cuda",
}


def _norm(path: str) -> str:
    return posixpath.normpath(path.replace("\\", "/")) if path else path


def _inside(path: str, root: str) -> bool:
    path, root = _norm(path), _norm(root)
    return bool(root) and (path == root or path.startswith(root.rstrip("/") + "/"))


def _origins(py) -> dict[str, str]:
    """sys.path entry → where it came from: PYTHONPATH, a .pth file, the user site, site dirs."""
    out: dict[str, str] = {}
    for entry in py.pythonpath:
        out.setdefault(_norm(entry), "PYTHONPATH")
    for pth in py.pth_files:
        for line in pth.entries:
            if not line.startswith(("import ", "import\t")):
                target = line if os.path.isabs(line) else posixpath.join(posixpath.dirname(pth.path), line)
                out.setdefault(_norm(target), f".pth file {pth.path}")
    if py.user_site:
        out.setdefault(_norm(py.user_site), "the user site (~/.local)")
    for d in py.site_dirs:
        out.setdefault(_norm(d), "site")
    return out


def _python_minor(path: str) -> tuple[int, int] | None:
    m = _PY_DIR.search(_norm(path))
    return (int(m.group(1)), int(m.group(2))) if m else None


def _own_minor(py) -> tuple[int, int] | None:
    return major_minor(py.version)


def _unset_fix(origin: str, entry: str) -> str:
    if origin == "PYTHONPATH":
        ros = ", or do not source /opt/ros/*/setup.bash in this shell" if "/opt/ros/" in entry + "/" else ""
        return f"remove {entry} from PYTHONPATH (e.g. `unset PYTHONPATH`{ros})"
    if origin.startswith(".pth file "):
        return f"delete the line {entry!r} from {origin[len('.pth file ') :]}"
    if origin.startswith("the user site"):
        no_user_site = code(command("export", "PYTHONNOUSERSITE=1"))
        return f"set {no_user_site} in the shell, or move those packages into this environment"
    return (
        "recreate the environment without --system-site-packages (include-system-site-packages = "
        f"false in pyvenv.cfg) so {entry} is not on sys.path"
    )


@check(
    "ISO001",
    "One copy of each distribution on sys.path",
    commands=BOTH,
    explain="""
The same project installed more than once on sys.path — venv and user site, venv and a
PYTHONPATH directory (ROS), two site directories. `import` loads the first copy on sys.path;
`pip list` / importlib.metadata report the first copy's metadata; `uv pip list` and the
installer of the environment see only the copy in the environment's own site-packages. Two
different versions mean the code that runs is not the one pip reports or upgrades. A
.dist-info and an .egg-info of one project and version in one directory (Debian's packages
ship both) are one install, not two copies. Fix: remove the foreign directory from the path
(PYTHONPATH, .pth) or uninstall the stray copy.""",
)
def duplicates(ctx):
    if (skip := no_package_metadata(ctx)) is not None:
        yield skip
        return
    pk = ctx.snapshot.packages
    projects = {normalize_name(d.name) for d in pk.distributions}
    if len(projects) == len(pk.distributions):  # no name twice: nothing to group, order or merge
        yield ok(observed=f"{len(projects)} projects, one copy each")
        return
    py = ctx.snapshot.python
    origins = _origins(py)
    order = {_norm(e): i for i, e in reversed(list(enumerate(py.sys_path)))}
    groups: dict[str, list[Distribution]] = {}
    for dist in sorted(
        one_per_install(pk.distributions),
        key=lambda d: (d.shadowed, order.get(_norm(d.location), len(order))),
    ):
        groups.setdefault(normalize_name(dist.name), []).append(dist)
    found = 0
    for key, copies in sorted(groups.items()):
        if len(copies) < 2:
            continue
        found += 1
        first = copies[0]
        loads = next((pk.import_origins[m] for m in first.top_level if m in pk.import_origins), "")
        own = next(
            (d for d in copies if any(_inside(d.location, s) for s in py.site_dirs if _inside(s, py.prefix))),
            None,
        )
        listed = "; ".join(
            f"{d.version} in {d.location}"
            + (
                f" ({origins[_norm(d.location)]})"
                if _norm(d.location) in origins and origins[_norm(d.location)] != "site"
                else ""
            )
            for d in copies
        )
        observed = (
            f"{len(copies)} copies of {first.name}: {listed}. importlib.metadata / pip list report "
            f"{first.version}"
        )
        if loads:
            observed += f"; `import` loads {loads}"
        if own is not None and own is not first:
            observed += f"; `uv pip list` (the environment's own site-packages) shows {own.version}"
        differ = len({d.version for d in copies}) > 1
        foreign = first if own is not first else copies[1]
        origin = origins.get(_norm(foreign.location), "site")
        if origin != "site":
            fix = _unset_fix(origin, foreign.location)
        else:
            note = f"removes the copy in {first.location}; repeat until one remains"
            fix = with_note(ctx.pip_uninstall(first.name), note)
        yield (blocked if differ else warning)(
            observed=observed,
            expected=f"one copy of {first.name}",
            fix=fix,
            subject=key,
            evidence={"copies": ", ".join(d.metadata_dir or d.location for d in copies)},
        )
    if not found:
        yield ok(observed=f"{len(groups)} projects, one copy each")


@check(
    "ISO002",
    "No two distributions install the same import name",
    commands=BOTH,
    explain="""
Two different projects that install the same top-level import package overwrite each other's
files: pynvml vs nvidia-ml-py (`import pynvml`), opencv-python vs opencv-python-headless
(`import cv2`), two torch builds. Which one you get depends on install order, and uninstalling
either breaks the other. Read from top_level.txt / RECORD; namespace packages (`google`,
`nvidia`) are not collisions. Fix: uninstall both, then install the one you want.""",
)
def import_collisions(ctx):
    if (skip := no_package_metadata(ctx)) is not None:
        yield skip
        return
    pk = ctx.snapshot.packages
    owners: dict[str, dict[str, Distribution]] = {}
    for dist in pk.distributions:
        if dist.shadowed:
            continue
        for mod in dist.top_level:
            owners.setdefault(mod, {}).setdefault(normalize_name(dist.name), dist)
    found = 0
    for mod, dists in sorted(owners.items()):
        if len(dists) < 2:
            continue
        origin = pk.import_origins.get(mod, "")
        if _is_namespace(origin, mod):
            continue
        found += 1
        names = sorted(d.name for d in dists.values())
        keep = _PREFERRED.get(mod) if _PREFERRED.get(mod) in {normalize_name(n) for n in names} else names[-1]
        listed = ", ".join(f"{d.name} {d.version} ({d.location})" for d in dists.values())
        yield warning(
            observed=f"`import {mod}` is installed by {listed}" + (f"; it loads {origin}" if origin else ""),
            expected=f"one distribution providing `{mod}`",
            fix=ctx.pip_replace(names, keep),
            subject=mod,
        )
    if not found:
        yield ok(observed="every import name has one owner")


def _is_namespace(origin: str, mod: str) -> bool:
    """A shared namespace package: located as a directory without ``__init__``, or (for recorded
    snapshots that lack the location) one of the well-known vendor namespaces."""
    if origin:
        return origin != "built-in" and not origin.endswith((".py", ".so", ".pyd"))
    return mod in _KNOWN_NAMESPACES


@check(
    "ISO003",
    "sys.path holds only this interpreter's directories",
    commands=BOTH,
    explain="""
Entries that PYTHONPATH, a .pth file, the system or the user site put on sys.path although
they belong to another interpreter: `lib/python3.10/site-packages` in a Python 3.11 (compiled
modules of the wrong ABI, old pure-Python copies that win over the venv's), ROS's
`/opt/ros/<distro>/lib/python3.X/site-packages`, the system's `dist-packages` or `~/.local`
leaking into a venv. `pip check` and `uv pip list` do not look there, so nobody notices.
Fix: remove the entry at its origin (unset PYTHONPATH, delete the .pth line, set
PYTHONNOUSERSITE=1, or recreate the venv without --system-site-packages).""",
)
def path_pollution(ctx):
    py = ctx.snapshot.python
    if py.status != "ok" or not py.sys_path:
        yield skipped("the snapshot does not record sys.path")
        return
    origins = _origins(py)
    own = _own_minor(py)
    venv = py.prefix and _norm(py.prefix) != _norm(py.base_prefix or py.prefix)
    own_sites = [d for d in py.site_dirs if _inside(d, py.prefix)]
    found = 0
    for entry in dict.fromkeys(_norm(e) for e in py.sys_path if e):
        origin = origins.get(entry, "site" if entry in map(_norm, py.site_dirs) else "")
        minor = _python_minor(entry)
        if own and minor and minor != own and origin:
            found += 1
            yield blocked(
                observed=f"{entry} (Python {minor[0]}.{minor[1]}) is on sys.path of a Python "
                f"{own[0]}.{own[1]} interpreter, from {origin}"
                + (" — a ROS installation" if "/opt/ros/" in entry + "/" else ""),
                expected=f"only Python {own[0]}.{own[1]} directories on sys.path",
                fix=_unset_fix(origin, entry),
                subject=entry,
            )
        elif "/opt/ros/" in entry + "/" and origin:
            found += 1
            yield warning(
                observed=f"ROS directory {entry} on sys.path, from {origin}",
                expected="ROS Python packages only in a ROS-specific environment",
                fix=_unset_fix(origin, entry),
                subject=entry,
            )
        elif origin.startswith("the user site") and venv:
            found += 1
            count = sum(1 for d in ctx.snapshot.packages.distributions if _inside(d.location, entry))
            yield warning(
                observed=f"user site {entry} ({count} distributions) is on sys.path of the environment "
                f"{py.prefix}",
                expected="a venv isolated from ~/.local",
                fix=_unset_fix(origin, entry),
                subject=entry,
            )
        elif (
            venv
            and entry.endswith(("site-packages", "dist-packages"))
            and not _inside(entry, py.prefix)
            and origin != "the user site (~/.local)"
        ):
            if any(_inside(entry, s) for s in own_sites):
                continue
            found += 1
            yield warning(
                observed=f"{entry} is on sys.path of the environment {py.prefix}, from "
                f"{origin or 'the system site'}",
                expected=f"only {', '.join(own_sites) or py.prefix} as site directory",
                fix=_unset_fix(origin or "site", entry),
                subject=entry,
            )
    if not found:
        yield ok(observed=f"{len(py.sys_path)} sys.path entries, all this interpreter's")


def _env_root(interpreter: str) -> str:
    """``/x/venv/bin/python3`` → ``/x/venv``: the directory above the interpreter's bin."""
    bindir = _norm(os.path.realpath(posixpath.dirname(interpreter)))
    return posixpath.dirname(bindir) if posixpath.basename(bindir) in ("bin", "Scripts") else bindir


@check(
    "ISO004",
    "The active environment is the checked one",
    commands=BOTH,
    explain="""
VIRTUAL_ENV (or CONDA_PREFIX) names the environment the shell has activated; when the checked
interpreter belongs to another one, `pip install` in that shell changes a different
environment than the one your code runs in. Likewise a `pip` first on PATH whose `#!` line
names another interpreter than the `python` first on PATH installs somewhere else than where
`python` looks. Fix: activate the right environment, and always install with
`python -m pip` (or `uv pip --python PATH`).""",
)
def active_environment(ctx):
    py = ctx.snapshot.python
    iso = py.isolation
    if py.status != "ok" or not py.prefix:
        yield skipped("the snapshot does not record the interpreter's prefix")
        return
    found = 0
    active, var = (iso.virtual_env, "VIRTUAL_ENV") if iso.virtual_env else (iso.conda_prefix, "CONDA_PREFIX")
    if active and _norm(os.path.realpath(active)) != _norm(os.path.realpath(py.prefix)):
        found += 1
        activate = command("source", posixpath.join(py.prefix, "bin", "activate"))
        yield warning(
            observed=f"{var}={active} is active, but the checked interpreter {py.executable} belongs to "
            f"{py.prefix}",
            expected=f"{var} = {py.prefix}",
            fix=f"activate {py.prefix}: {code(activate)}, "
            f"or check the active one: {code(command('stackcheck', 'doctor', '--python', active))}",
            subject=var,
        )
    tools = {t.name: t for t in iso.path_tools}
    for py_name, pip_name in (("python", "pip"), ("python3", "pip3")):
        p, q = tools.get(py_name), tools.get(pip_name)
        if not (p and q and p.interpreter and q.interpreter):
            continue
        if _env_root(p.interpreter) != _env_root(q.interpreter):
            found += 1
            yield warning(
                observed=f"`{pip_name}` on PATH ({q.path}) installs for {q.interpreter}, but `{py_name}` "
                f"on PATH is {p.interpreter}",
                expected=f"`{pip_name}` and `{py_name}` of one environment",
                fix=f"install with {code(command(py_name, '-m', 'pip', 'install', '...'))} "
                f"instead of {code(command(pip_name, 'install', '...'))}",
                subject=pip_name,
            )
    if not found:
        yield ok(observed=f"active environment and PATH tools agree with {py.prefix}")
