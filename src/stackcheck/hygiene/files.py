"""Which files a hygiene scan looks at: what git tracks, or a directory walk outside git."""

from __future__ import annotations

import os
from dataclasses import dataclass

from stackcheck.errors import InputError
from stackcheck.probe.proc import LARGE_OUTPUT_BYTES, run

GIT_TIMEOUT_S = 30.0
# Never descended into by the directory walk (a venv is recognised by its pyvenv.cfg too).
_WALK_SKIP = {
    ".git",
    "node_modules",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".hg",
    ".svn",
}
TEXT_SNIFF = 8192


@dataclass(frozen=True)
class FileSet:
    root: str  # absolute; findings name files relative to it
    files: list[str]  # relative POSIX paths
    mode: str  # "git" | "walk"


def repository_root(path: str) -> str | None:
    """The top of the git work tree containing ``path``, or None."""
    done = run(["git", "-C", path, "rev-parse", "--show-toplevel"], timeout=GIT_TIMEOUT_S)
    if not done.ok or not done.stdout.strip():
        return None
    return os.path.realpath(done.stdout.strip())


def list_files(path: str) -> FileSet:
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file or directory")
    if not os.path.isdir(path):
        raise InputError(f"{path}: not a directory (expected a repository or a folder to scan)")
    top = repository_root(path)
    if top is None:
        return FileSet(os.path.realpath(path), sorted(_walk(path)), "walk")
    done = run(
        ["git", "-C", path, "ls-files", "-z", "--full-name", "--cached"],
        timeout=GIT_TIMEOUT_S,
        max_output=LARGE_OUTPUT_BYTES,
    )
    if not done.ok:
        raise InputError(f"{path}: git ls-files failed: {done.error or done.stderr.strip()}")
    if done.truncated:  # a partial list would scan part of the repository and say it was clean
        mib = LARGE_OUTPUT_BYTES >> 20
        raise InputError(f"{path}: git ls-files printed more than {mib} MiB of file names")
    return FileSet(top, sorted({f for f in done.stdout.split("\0") if f}), "git")


def _walk(path: str):
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = [
            d
            for d in dirnames
            if d not in _WALK_SKIP and not os.path.exists(os.path.join(dirpath, d, "pyvenv.cfg"))
        ]
        rel = os.path.relpath(dirpath, path)
        for name in filenames:
            yield name if rel == "." else f"{rel}/{name}".replace(os.sep, "/")


def is_binary(head: bytes) -> bool:
    """git's own heuristic: a NUL byte in the first block means binary."""
    return b"\0" in head[:TEXT_SNIFF]
