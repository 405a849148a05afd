"""Small, bounded file reads for probes: a missing or unreadable file is an empty string."""

from __future__ import annotations

import os


def read_small(path: str, limit: int = 1 << 16) -> str:
    """Up to ``limit`` characters of a text file; "" when it cannot be read (absent facts)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return ""


def which(cmd: str, path: str | None = None) -> str | None:
    """``shutil.which(cmd, path=path)``, without importing shutil on POSIX (it loads the zlib,
    bz2 and lzma modules: more than a cheap section costs). The same answer: a name holding a
    directory part is checked as given; otherwise the first directory of ``path`` (default
    ``PATH``, else the system's default search path) holding an executable, non-directory
    file of that name."""
    if os.name == "nt":  # PATHEXT, the current directory first: shutil's own rules
        import shutil

        return shutil.which(cmd, path=path)
    if os.path.dirname(cmd):
        return cmd if _executable(cmd) else None
    if path is None:
        path = os.environ.get("PATH")
        if path is None:
            try:
                path = os.confstr("CS_PATH")
            except (AttributeError, ValueError):
                path = os.defpath
    if not path:
        return None
    seen: set[str] = set()
    for directory in path.split(os.pathsep):
        if directory in seen:
            continue
        seen.add(directory)
        name = os.path.join(directory, cmd)
        if _executable(name):
            return name
    return None


def _executable(name: str) -> bool:
    return os.path.exists(name) and os.access(name, os.F_OK | os.X_OK) and not os.path.isdir(name)
