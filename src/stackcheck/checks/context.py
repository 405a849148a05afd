"""What a check may look at: the snapshot, the resolved profile, the knowledge base."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from stackcheck.models.profile import Profile
from stackcheck.models.snapshot import Snapshot
from stackcheck.shellcmd import command


@dataclass
class Context:
    snapshot: Snapshot
    profile: Profile | None = None
    deep: bool = False
    options: dict = field(default_factory=dict)

    @property
    def interpreter(self) -> str:
        """The interpreter that was checked, for fix commands (``python`` when unknown)."""
        return self.snapshot.python.executable or "python"

    def pip_install(self, *args: str) -> str:
        """A paste-able install command for the checked interpreter (``args``: requirements
        and pip options, e.g. ``"torch==2.8.0", "--index-url", URL``)."""
        return command(self.interpreter, "-m", "pip", "install", *_positional_last(args))

    def pip_uninstall(self, *names: str) -> str:
        return command(self.interpreter, "-m", "pip", "uninstall", "-y", *_positional_last(names))

    @cached_property
    def knowledge(self):
        """The compatibility knowledge base, loaded on first use."""
        from stackcheck.knowledge import load_knowledge

        return load_knowledge()


_PIP_OPTIONS_WITH_VALUE = frozenset({"--index-url", "--extra-index-url", "-i"})
_PIP_FLAGS = frozenset({"--force-reinstall", "--no-deps", "-U", "--upgrade", "--no-build-isolation", "--pre"})


def _positional_last(args) -> list[str]:
    """pip's options as given; when a requirement or name (from a snapshot) starts with ``-``,
    the names after ``--`` so pip cannot read one as an option (``--index-url=…``)."""
    options: list[str] = []
    names: list[str] = []
    it = iter(args)
    for arg in it:
        if arg in _PIP_OPTIONS_WITH_VALUE:
            options += [arg, next(it, "")]
        elif arg in _PIP_FLAGS:
            options.append(arg)
        else:
            names.append(arg)
    if not any(n.startswith("-") for n in names):
        return list(args)
    return [*options, "--", *names]
