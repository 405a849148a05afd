"""The git state of the code being run: commit, branch, dirty.

Commit and branch are read from ``.git`` files (HEAD, refs, packed-refs; worktrees and
submodules via the ``gitdir:`` pointer); only "dirty" needs git itself, run bounded and
ignoring untracked files. Where the files do not say (a reftable repository, an unreadable
HEAD) one bounded ``git rev-parse`` does. Not a repository → ``absent``, found by walking up
for ``.git`` without starting git at all.
"""

from __future__ import annotations

import os
import re

from stackcheck.models.snapshot import GitSection
from stackcheck.probe.files import read_small

STATUS_TIMEOUT_S = 5.0
_OBJECT_ID = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")  # sha1 or sha256


def collect(ctx=None) -> GitSection:
    cwd = ctx.cwd if ctx is not None else os.getcwd()
    found = find_repository(cwd)
    if found is None:
        return GitSection(status="absent", source="files", error=f"{cwd} is not inside a git repository")
    root, git_dir = found
    branch, commit = head(root, git_dir)
    sec = GitSection(status="ok", source="files", root=root, commit=commit, branch=branch)
    sec.dirty, error = dirty(root)
    if error:
        sec.error = error
    else:
        sec.source = "files+git"
    return sec


def find_repository(start: str) -> tuple[str, str] | None:
    """(work tree root, git dir) of the repository enclosing ``start``."""
    here = os.path.abspath(start)
    while True:
        dot_git = os.path.join(here, ".git")
        if os.path.isdir(dot_git):
            return here, dot_git
        if os.path.isfile(dot_git):
            target = read_small(dot_git).strip()
            if target.startswith("gitdir:"):
                path = target[len("gitdir:") :].strip()
                return here, os.path.normpath(os.path.join(here, path))
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def read_head(git_dir: str) -> tuple[str, str]:
    """(branch or "" when detached, commit sha or "" for a branch without commits)."""
    head = read_small(os.path.join(git_dir, "HEAD")).strip()
    if not head.startswith("ref:"):
        return "", head
    ref = head[len("ref:") :].strip()
    branch = ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ref
    common = _common_dir(git_dir)
    for base in dict.fromkeys((git_dir, common)):
        sha = read_small(os.path.join(base, *ref.split("/"))).strip()
        if sha:
            return branch, sha
    for line in read_small(os.path.join(common, "packed-refs"), limit=1 << 24).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1] == ref:
            return branch, parts[0]
    return branch, ""


def _common_dir(git_dir: str) -> str:
    """Where refs live: a linked worktree's git dir points to the main one's."""
    pointer = read_small(os.path.join(git_dir, "commondir")).strip()
    return os.path.normpath(os.path.join(git_dir, pointer)) if pointer else git_dir


def head(root: str, git_dir: str) -> tuple[str, str]:
    """(branch, commit) as :func:`read_head` reads them from the files; from one bounded
    ``git rev-parse`` where the files cannot say (reftable refs, an unreadable or odd HEAD).
    A branch without commits is ("name", "") without starting git."""
    reftable = any(os.path.isdir(os.path.join(d, "reftable")) for d in (git_dir, _common_dir(git_dir)))
    if not reftable:
        branch, commit = read_head(git_dir)
        if (branch and not commit) or _OBJECT_ID.fullmatch(commit):
            return branch, commit
    from stackcheck.probe.proc import run

    done = run(
        ["git", "-C", root, "rev-parse", "HEAD", "--symbolic-full-name", "HEAD"], timeout=STATUS_TIMEOUT_S
    )
    lines = done.stdout.split() if done.ok else []
    if len(lines) != 2 or not _OBJECT_ID.fullmatch(lines[0]):
        return "", ""
    ref = lines[1]
    return (
        ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else "" if ref == "HEAD" else ref
    ), lines[0]


def dirty(
    root: str, *, untracked: bool = False, timeout: float = STATUS_TIMEOUT_S
) -> tuple[bool | None, str | None]:
    """Whether tracked files (and with ``untracked``, untracked ones too) differ from HEAD:
    (dirty, None), or (None, why it is unknown)."""
    from stackcheck.probe.proc import run

    argv = ["git", "-C", root, "status", "--porcelain"] + ([] if untracked else ["--untracked-files=no"])
    done = run(argv, timeout=timeout)
    if not done.ok:
        reason = done.error or (done.stderr.strip().splitlines() or ["git status failed"])[-1]
        return None, f"dirty unknown: {reason}"
    return bool(done.stdout.strip()), None
