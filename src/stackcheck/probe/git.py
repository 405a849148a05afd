"""The git state of the code being run: commit, branch, dirty.

Commit and branch are read from ``.git`` files (HEAD, refs, packed-refs; worktrees and
submodules via the ``gitdir:`` pointer); only "dirty" needs git itself, run bounded and
ignoring untracked files. Not a repository → ``absent``.
"""

from __future__ import annotations

import os

from stackcheck.models.snapshot import GitSection
from stackcheck.probe.files import read_small

STATUS_TIMEOUT_S = 5.0


def collect(ctx=None) -> GitSection:
    cwd = ctx.cwd if ctx is not None else os.getcwd()
    found = find_repository(cwd)
    if found is None:
        return GitSection(status="absent", source="files", error=f"{cwd} is not inside a git repository")
    root, git_dir = found
    branch, commit = read_head(git_dir)
    sec = GitSection(status="ok", source="files", root=root, commit=commit, branch=branch)
    sec.dirty, error = _dirty(root)
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
    common = git_dir
    pointer = read_small(os.path.join(git_dir, "commondir")).strip()  # linked worktrees share refs
    if pointer:
        common = os.path.normpath(os.path.join(git_dir, pointer))
    for base in dict.fromkeys((git_dir, common)):
        sha = read_small(os.path.join(base, *ref.split("/"))).strip()
        if sha:
            return branch, sha
    for line in read_small(os.path.join(common, "packed-refs"), limit=1 << 24).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1] == ref:
            return branch, parts[0]
    return branch, ""


def _dirty(root: str) -> tuple[bool | None, str | None]:
    from stackcheck.probe.proc import run

    done = run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"], timeout=STATUS_TIMEOUT_S)
    if not done.ok:
        reason = done.error or (done.stderr.strip().splitlines() or ["git status failed"])[-1]
        return None, f"dirty unknown: {reason}"
    return bool(done.stdout.strip()), None
