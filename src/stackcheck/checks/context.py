"""What a check may look at: the snapshot, the resolved profile, the knowledge base, and the
facts derived from them once per context.

A check is a function of a :class:`Context`; it reads only the typed fields and derived
facts it needs, so a test can build one by hand (``Context(snapshot=snap)``): the knowledge
base is loaded on first use when none is given, and every derived fact is computed at most
once per context, whichever check asks first.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import msgspec

from stackcheck.models.finding import PipInstall
from stackcheck.models.profile import Profile
from stackcheck.models.snapshot import Snapshot, normalize_name
from stackcheck.shellcmd import chain, command

# torch and the companions download.pytorch.org publishes per build (cpu, cu128 …)
TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio"})
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"

if TYPE_CHECKING:
    from stackcheck.deps.graph import DepGraph
    from stackcheck.knowledge.base import Knowledge
    from stackcheck.knowledge.facts import DriverFit, TorchBuild
    from stackcheck.knowledge.match import ScopeMatch
    from stackcheck.requirements import DistIndex


class Context(msgspec.Struct, dict=True):  # dict: for the cached facts; a dataclass's making: ≈ 0.3 ms
    """One judge run's inputs (``snapshot``; ``profile`` when one was given; ``knowledge``:
    the tables and rules, the loaded ones when None; ``deep``: the probe ran code) and the
    facts derived from them, each computed once."""

    snapshot: Snapshot
    profile: Profile | None = None
    knowledge_base: Knowledge | None = None
    deep: bool = False

    def __repr__(self) -> str:  # as the dataclass wrote it: without the knowledge base
        return f"Context(snapshot={self.snapshot!r}, profile={self.profile!r}, deep={self.deep!r})"

    @cached_property
    def knowledge(self) -> Knowledge:
        """The compatibility knowledge base: the one given, else the loaded one."""
        if self.knowledge_base is not None:
            return self.knowledge_base
        from stackcheck.knowledge import load_knowledge

        return load_knowledge()

    @cached_property
    def dist_index(self) -> DistIndex:
        """The snapshot's installed distributions by name (requirements judged against it)."""
        from stackcheck.requirements import DistIndex

        return DistIndex(self.snapshot)

    @cached_property
    def dep_graph(self) -> DepGraph:
        """The declared-dependency graph of the snapshot's distributions."""
        from stackcheck.deps.graph import DepGraph

        return DepGraph(self.snapshot, self.dist_index, cache=True)

    @cached_property
    def torch_build(self) -> TorchBuild | None:
        """The installed torch and the CUDA it was built for (None: torch not installed)."""
        from stackcheck.knowledge.facts import torch_build

        return torch_build(self.snapshot, self.knowledge, self.dist_index)

    @cached_property
    def cuda_torch(self) -> TorchBuild | ScopeMatch:
        """The installed CUDA build of torch, or why there is none."""
        from stackcheck.knowledge.facts import cuda_torch

        return cuda_torch(self.snapshot, self.knowledge, self.dist_index)

    @cached_property
    def driver_fit(self) -> DriverFit | ScopeMatch:
        """How the NVIDIA driver fits torch's CUDA build, or why that cannot be judged."""
        from stackcheck.knowledge.facts import driver_fit

        return driver_fit(self.snapshot, self.knowledge, self.dist_index)

    @property
    def interpreter(self) -> str:
        """The interpreter that was checked, for fix commands (``python`` when unknown)."""
        return self.snapshot.python.executable or "python"

    def pip_install(self, *args: str) -> str:
        """A paste-able install command for the checked interpreter (``args``: requirements
        and pip options, e.g. ``"torch==2.8.0", "--index-url", URL``); advice instead for an
        interpreter the operating system manages (PEP 668)."""
        return pip_install_for(self.interpreter, args, externally_managed=bool(self.externally_managed))

    def install(
        self, *requirements: str, index_url: str | None = None, options: tuple[str, ...] = ()
    ) -> PipInstall:
        """A pip-install fix as data (``blocked(..., fix=ctx.install(...))`` prints it as a
        command); a torch-family requirement of a CPU profile gets the CPU index where PyPI's
        default is the CUDA build (see :meth:`torch_index`)."""
        if index_url is None:
            index_url = next(filter(None, map(self.torch_index, requirements)), None)
        return PipInstall(
            python=self.interpreter,
            requirements=list(requirements),
            index_url=index_url,
            options=list(options),
            externally_managed=bool(self.externally_managed),
        )

    def torch_index(self, requirement: str) -> str | None:
        """The index a torch-family ``requirement`` should come from for this profile: the CPU
        index for a profile without a GPU on Linux, where PyPI's torch is the multi-GB CUDA
        build (on macOS and Windows PyPI's torch is the CPU build); None (PyPI) otherwise."""
        from stackcheck.deps.index import parse_requirement

        req = parse_requirement(requirement)
        if req is None or normalize_name(req.name) not in TORCH_FAMILY:
            return None
        if self.profile is None or self.profile.gpu is not None:
            return None
        if (self.snapshot.platform.system or "").lower() in ("darwin", "windows"):
            return None
        return TORCH_CPU_INDEX

    def pip_uninstall(self, *names: str) -> str:
        return pip_uninstall_for(self.interpreter, names, externally_managed=bool(self.externally_managed))

    def pip_replace(self, remove: list[str], keep: str) -> str:
        """Uninstall ``remove``, then install ``keep`` (only the install, in a venv, where PEP 668
        forbids changing the interpreter)."""
        if self.externally_managed:
            return self.pip_install(keep)
        return chain(self.pip_uninstall(*remove), self.pip_install(keep))

    @property
    def externally_managed(self) -> str:
        """The PEP 668 marker file of the checked interpreter ("" when pip may change it)."""
        return self.snapshot.python.externally_managed


# No path and no names in this prose (paths are quoted in the command that follows); it starts
# with a word and has no ": " before a program name, so a fix may put it after ": ".
_MANAGED = (
    "the checked interpreter is externally managed (PEP 668: an EXTERNALLY-MANAGED file beside its standard "
    "library), and pip must not change it (that would break packages of the operating system)"
)


def pip_install_for(python: str, args, *, externally_managed: bool = False) -> str:
    """``python -m pip install ARGS``; for an interpreter the operating system manages
    (PEP 668), the reason and the same install in a new venv."""
    if externally_managed:
        install = command("python", "-m", "pip", "install", *_positional_last(args))
        return (
            f"{_MANAGED}; use the operating system's package manager (e.g. apt), or work in a virtual "
            f"environment instead: {chain(_new_venv(python), install)}"
        )
    return command(python, "-m", "pip", "install", *_positional_last(args))


def pip_uninstall_for(python: str, names, *, externally_managed: bool = False) -> str:
    """``python -m pip uninstall -y NAMES``; for an interpreter the operating system manages
    (PEP 668), advice: its package manager, or a venv without them."""
    if externally_managed:
        them = "it" if len(names) == 1 else "them"
        return (
            f"{_MANAGED}; remove {them} with the operating system's package manager (e.g. apt), or work in a "
            f"virtual environment without {them}: {_new_venv(python)}"
        )
    return command(python, "-m", "pip", "uninstall", "-y", *_positional_last(names))


def _new_venv(python: str) -> str:
    return chain(command(python, "-m", "venv", ".venv"), command("source", ".venv/bin/activate"))


def pip_command(fix: PipInstall) -> str:
    """The paste-able command of a pip-install fix: options, requirements, then the index
    (advice instead, for an interpreter the operating system manages)."""
    index = ["--index-url", fix.index_url] if fix.index_url else []
    return pip_install_for(
        fix.python, [*fix.options, *fix.requirements, *index], externally_managed=fix.externally_managed
    )


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
