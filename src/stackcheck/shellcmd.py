"""Every command stackcheck prints is built here, from an argv list, so that pasting it into a
POSIX shell runs exactly that argv: nothing in a path, a package name, a label or a profile
ID is expanded, split or run (``$(…)``, backticks, ``;``, globs, newlines stay arguments).

A printed fix has one of these shapes (``tests/quoting`` pastes every one into bash):

- a command: ``CMD``, ``CMD && CMD`` for steps that belong together, ``CMD  # note``;
- prose that ends in a command: ``Upgrade the driver, or install a build it runs: CMD``;
- prose with commands in backticks: ``reinstall it (`CMD`), then run `CMD```.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from stackcheck.identifiers import printable

__all__ = ["chain", "code", "command", "join", "with_note"]


def join(argv: Iterable[object]) -> str:
    """``argv`` as one shell command line (``shlex.join``; ``shlex.split`` gives ``argv`` back)."""
    return shlex.join(str(a) for a in argv)


def command(*argv: object) -> str:
    """``command("pip", "install", "torch<3")`` → ``pip install 'torch<3'``."""
    return join(argv)


def chain(*commands: str) -> str:
    """Commands that run one after the other, each only if the one before succeeded."""
    return " && ".join(commands)


def code(cmd: str) -> str:
    """A command inside prose, in backticks (every backtick inside it is quoted by :func:`join`)."""
    return f"`{cmd}`"


def with_note(cmd: str, note: str) -> str:
    """A command followed by a shell comment (one line: a newline in ``note`` would end the
    comment and start a command)."""
    return f"{cmd}  # {printable(note)}"
