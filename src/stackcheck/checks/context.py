"""What a check may look at: the snapshot, the resolved profile, the knowledge base."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from functools import cached_property

from stackcheck.models.profile import Profile
from stackcheck.models.snapshot import Snapshot


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

    def pip_install(self, *requirements: str) -> str:
        """A paste-able install command for the checked interpreter."""
        reqs = " ".join(shlex.quote(r) for r in requirements)
        return f"{shlex.quote(self.interpreter)} -m pip install {reqs}"

    def pip_uninstall(self, *names: str) -> str:
        return f"{shlex.quote(self.interpreter)} -m pip uninstall -y {' '.join(shlex.quote(n) for n in names)}"

    @cached_property
    def knowledge(self):
        """The compatibility knowledge base, loaded on first use."""
        from stackcheck.knowledge import load_knowledge

        return load_knowledge()
