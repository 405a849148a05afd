"""A profile resolved into an install plan: the interpreter, the requirements and constraints,
the packages it forbids, and the torch build (index) chosen from the machine's facts.

``--cuda auto`` picks a CPU build for a profile without a GPU; for a GPU profile, the newest
CUDA build of an allowed torch release that the driver runs (minor-version compatibility, the
knowledge tables' floors) and whose architectures cover every visible GPU
(:meth:`Knowledge.fitting_builds`). A machine without an NVIDIA driver gets no guess: a GPU
profile there needs an explicit ``--cuda cuNNN`` (or ``--snapshot`` of the target machine).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import msgspec
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet

from stackcheck.checks.context import TORCH_FAMILY
from stackcheck.checks.torch_install import torch_index_url, torch_tag
from stackcheck.errors import InputError, Refused
from stackcheck.knowledge.base import Knowledge, version
from stackcheck.models.profile import Forbidden, Profile
from stackcheck.models.snapshot import Snapshot, normalize_name

__all__ = [
    "Plan",
    "Sources",
    "TorchChoice",
    "choose_torch",
    "env_paths",
    "make_plan",
    "profile_digest",
    "torch_spec",
]

_TAG = re.compile(r"cu(\d{2,3})|cpu")


@dataclass(frozen=True)
class TorchChoice:
    """The torch build a plan installs: ``tag`` (``cpu``, ``cu126``; "" when the profile needs
    no torch), the release (``2.14``), the index it comes from (None: the default index) and
    why it was chosen."""

    tag: str = ""
    release: str | None = None
    index_url: str | None = None
    why: str = "the profile installs no torch"

    @property
    def constraint(self) -> str | None:
        """Keeps the resolver on the chosen release (any index, any local label)."""
        return f"torch=={self.release}.*" if self.release else None


@dataclass(frozen=True)
class Sources:
    """Where packages come from: the options pip and uv share (explicit ones and the user's
    pip configuration, merged by :func:`stackcheck.provision.installer.pip_config`)."""

    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    cert: str | None = None
    trusted_hosts: tuple[str, ...] = ()
    constraint_files: tuple[str, ...] = ()

    def args(self) -> list[str]:
        """The index options as pip and uv both spell them."""
        out: list[str] = []
        if self.no_index:
            out.append("--no-index")
        elif self.index_url:
            out += ["--index-url", self.index_url]
        if not self.no_index:
            for url in self.extra_index_urls:
                out += ["--extra-index-url", url]
        for link in self.find_links:
            out += ["--find-links", link]
        for file in self.constraint_files:
            out += ["--constraint", file]
        return out

    @classmethod
    def from_args(cls, args: list[str]) -> Sources:
        """The inverse of :meth:`args` (a lock's header records them)."""
        found: dict = {"extra_index_urls": [], "find_links": [], "constraint_files": []}
        it = iter(args)
        for arg in it:
            if arg == "--no-index":
                found["no_index"] = True
            elif arg == "--index-url":
                found["index_url"] = next(it, None)
            elif arg in ("--extra-index-url", "--find-links", "--constraint"):
                key = {"--extra-index-url": "extra_index_urls", "--find-links": "find_links"}.get(
                    arg, "constraint_files"
                )
                found[key].append(next(it, ""))
            else:
                raise InputError(f"header.sources: unexpected {arg!r} (expected index options)")
        return cls(
            index_url=found.get("index_url"),
            extra_index_urls=tuple(found["extra_index_urls"]),
            find_links=tuple(found["find_links"]),
            no_index=bool(found.get("no_index")),
            constraint_files=tuple(found["constraint_files"]),
        )

    def with_torch(self, choice: TorchChoice) -> Sources:
        """The torch index added as an extra index (not under ``--no-index``; uv searches extra
        indexes first, and pip prefers the ``+cu126`` local label of the same release)."""
        if self.no_index or not choice.index_url or choice.index_url in self.extra_index_urls:
            return self
        return Sources(
            self.index_url,
            (choice.index_url, *self.extra_index_urls),
            self.find_links,
            self.no_index,
            self.cert,
            self.trusted_hosts,
            self.constraint_files,
        )


@dataclass
class Plan:
    profile: Profile
    digest: str
    python: str  # the base interpreter the environment is made from
    python_version: str  # "3.11"
    system: str  # Linux | Darwin | Windows (the facts' platform)
    machine: str
    torch: TorchChoice
    sources: Sources
    requirements: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)

    @property
    def forbidden(self) -> list[Forbidden]:
        return list(self.profile.forbidden)


def profile_digest(profile: Profile) -> str:
    """sha256 of the resolved profile (canonical JSON): a lock names the exact profile."""
    data = msgspec.json.encode(msgspec.to_builtins(profile, order="sorted"))
    return "sha256:" + hashlib.sha256(data).hexdigest()


def torch_spec(profile: Profile) -> SpecifierSet | None:
    """The torch specifier of the profile's requirements (None: it installs no torch)."""
    found = None
    for line in profile.requirements:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if normalize_name(req.name) == "torch":
            found = req.specifier if found is None else found & req.specifier
    return found


def _python_fits(rel, python: str) -> bool:
    if not python or not rel.python:
        return True
    return SpecifierSet(rel.python).contains(f"{python}.0") or python in rel.python_experimental


def _torch_cuda_fits(profile: Profile, cuda: str) -> bool:
    want = profile.gpu.torch_cuda if profile.gpu else None
    return not want or SpecifierSet(want).contains(cuda, prereleases=True)


def _cuda_of(tag: str) -> str:
    digits = tag[2:]
    return f"{digits[:-1]}.{digits[-1]}"


def choose_torch(
    profile: Profile, snapshot: Snapshot | None, kb: Knowledge, cuda: str = "auto", python: str = ""
) -> TorchChoice:
    """The torch build for ``profile`` on the machine ``snapshot`` describes (None: no facts),
    for Python ``python`` ("3.11"); ``cuda``: auto | cpu | cuNNN. Refused (with why) when no
    build fits; InputError for a malformed ``cuda``."""
    spec = torch_spec(profile)
    if spec is None:
        return TorchChoice()
    cuda = cuda.strip().lower()
    if cuda != "auto" and _TAG.fullmatch(cuda) is None:
        raise InputError(f"--cuda: {cuda!r} is not auto, cpu or cuNNN (e.g. cu126)")
    releases = [
        r
        for r in sorted(kb.torch.releases, key=lambda r: tuple(map(int, r.torch.split("."))), reverse=True)
        if r.cuda_builds is not None  # a release the tables know only by its wheel metadata: no guess
        and any(spec.contains(f"{r.torch}.{p}", prereleases=True) for p in range(10))
        and _python_fits(r, python)
    ]
    if not releases:
        raise Refused(
            f"profile {profile.id}: no torch release in the knowledge tables satisfies torch{spec} "
            f"on Python {python or '?'}"
        )
    system = (snapshot.platform.system if snapshot else "") or "Linux"
    machine = (snapshot.platform.machine if snapshot else "") or "x86_64"
    if cuda == "cpu" or (cuda == "auto" and profile.gpu is None):
        if profile.gpu is not None:
            raise Refused(
                f"--cuda cpu: profile {profile.id} needs a GPU (torch CUDA build "
                f"{profile.gpu.torch_cuda or 'any'}); a CPU build would fail its preflight"
            )
        # PyPI's torch is the CPU build on macOS and Windows; on Linux it is the CUDA build
        index = None if system.lower() in ("darwin", "windows") else torch_index_url("cpu")
        where = "the default index (its torch is the CPU build here)" if index is None else index
        return TorchChoice(
            "cpu", releases[0].torch, index, f"a CPU profile: torch {releases[0].torch} from {where}"
        )
    if system.lower() == "darwin":
        raise Refused(f"profile {profile.id} needs an NVIDIA GPU: PyTorch publishes no CUDA build for macOS")
    if cuda != "auto":
        want = _cuda_of(cuda)
        if not _torch_cuda_fits(profile, want):
            raise Refused(
                f"--cuda {cuda}: profile {profile.id} needs torch's CUDA build {profile.gpu.torch_cuda}"  # type: ignore[union-attr]
            )
        for rel in releases:
            if want in (*(rel.cuda_builds or []), *rel.cuda_experimental, *rel.cuda_index_only):
                return TorchChoice(
                    cuda, rel.torch, torch_index_url(cuda), f"--cuda {cuda}: torch {rel.torch}"
                )
        names = ", ".join(r.torch for r in releases)
        raise Refused(f"--cuda {cuda}: no allowed torch release ({names}) publishes a {cuda} build")
    if snapshot is None:
        return _portable(profile, releases)
    return _auto_cuda(profile, snapshot, kb, releases, system, machine)


def _portable(profile: Profile, releases) -> TorchChoice:
    """Without machine facts (an export): PyPI's own CUDA build of the newest allowed release
    when it fits the profile (no extra index needed), else the newest build published for it
    (stable, experimental or index-only) that does."""
    for rel in releases:
        if rel.pypi_default_cuda and _torch_cuda_fits(profile, rel.pypi_default_cuda):
            tag = torch_tag(rel.pypi_default_cuda)
            why = f"torch {rel.torch} {tag}, PyPI's default build (no machine facts; --cuda picks another)"
            return TorchChoice(tag, rel.torch, None, why)
    for rel in releases:
        for cuda in sorted(rel.all_cuda_builds, key=lambda c: tuple(map(int, c.split("."))), reverse=True):
            if _torch_cuda_fits(profile, cuda):
                tag = torch_tag(cuda)
                why = f"torch {rel.torch} {tag}, the newest build the profile allows (no machine facts)"
                return TorchChoice(tag, rel.torch, torch_index_url(tag), why)
    raise Refused(
        f"profile {profile.id}: no CUDA build of an allowed torch release fits torch CUDA "
        f"{profile.gpu.torch_cuda if profile.gpu else ''}"
    )


def _auto_cuda(profile, snapshot, kb, releases, system, machine) -> TorchChoice:
    acc = snapshot.accelerators if snapshot else None
    driver = acc.driver_version if acc else ""
    if not driver and not (acc and acc.cuda_driver_version):
        raise Refused(
            f"--cuda auto: profile {profile.id} needs a GPU and this machine shows no NVIDIA driver, so "
            "no CUDA build can be chosen from its facts; give --cuda cuNNN (e.g. cu126) for the target "
            "machine, or --snapshot FILE recorded there"
        )
    assert snapshot is not None and acc is not None
    ccs = sorted({g.compute_capability for g in snapshot.visible_gpus() if g.compute_capability})
    allowed = {r.torch for r in releases}
    for rel, cuda in kb.fitting_builds(
        driver=driver or None,
        ccs=ccs,
        platform=system.lower(),
        machine=machine,
        strict=False,
        driver_cuda=acc.cuda_driver_version or None,
    ):
        if rel.torch in allowed and _torch_cuda_fits(profile, cuda):
            tag = torch_tag(cuda)
            gpus = ", ".join(f"sm_{cc.replace('.', '')}" for cc in ccs) or "no visible GPU"
            shown = f"driver {driver}" if driver else f"a driver for CUDA <= {acc.cuda_driver_version}"
            why = (
                f"torch {rel.torch} {tag}: the newest allowed build that {shown} runs and that covers {gpus}"
            )
            need = kb.driver_requirement(cuda, system.lower()).toolkit_driver
            have, own = version(driver), version(need or "")
            if have is not None and own is not None and have < own:
                why += f" (by minor-version compatibility: CUDA {cuda}'s own driver is {need})"
            return TorchChoice(tag, rel.torch, torch_index_url(tag), why)
    return _none_fits(profile, snapshot, kb, releases, driver, ccs, system, machine)


def _none_fits(profile, snapshot, kb, releases, driver, ccs, system, machine):
    """Refused, saying which of driver, architectures or the profile's CUDA spec rules out
    every build."""
    runs = list(
        kb.fitting_builds(
            driver=driver or None,
            ccs=[],
            platform=system.lower(),
            machine=machine,
            strict=False,
            driver_cuda=snapshot.accelerators.cuda_driver_version or None,
        )
    )
    allowed = {r.torch for r in releases}
    runs = [(r, c) for r, c in runs if r.torch in allowed]
    shown = (
        f"driver {driver}" if driver else f"the driver (CUDA <= {snapshot.accelerators.cuda_driver_version})"
    )
    want = profile.gpu.torch_cuda if profile.gpu else None
    if not runs:
        why = f"{shown} runs no CUDA build of the allowed torch releases ({', '.join(sorted(allowed))})"
    elif want and not any(_torch_cuda_fits(profile, c) for _, c in runs):
        newest = max((c for _, c in runs), key=lambda c: tuple(map(int, c.split("."))))
        why = f"{shown} runs CUDA builds up to {newest}, and profile {profile.id} needs torch CUDA {want}"
    else:
        gpus = ", ".join(f"sm_{cc.replace('.', '')}" for cc in ccs)
        why = f"no CUDA build that {shown} runs carries kernels for the GPUs ({gpus})"
    raise Refused(f"--cuda auto: no torch build fits this machine: {why}; upgrade the driver or give --cuda")


def make_plan(
    profile: Profile,
    facts: Snapshot | None,
    kb: Knowledge,
    *,
    python: str,
    python_version: str,
    cuda: str = "auto",
    sources: Sources | None = None,
) -> Plan:
    """The plan of ``profile`` for the machine ``facts`` describes, made from ``python``."""
    requirements, constraints = profile_lines(profile)
    choice = choose_torch(profile, facts, kb, cuda, python_version)
    return Plan(
        profile=profile,
        digest=profile_digest(profile),
        python=python,
        python_version=python_version,
        system=(facts.platform.system if facts else "") or "Linux",
        machine=(facts.platform.machine if facts else "") or "x86_64",
        torch=choice,
        sources=sources or Sources(),
        requirements=requirements,
        constraints=constraints,
    )


def profile_lines(profile: Profile) -> tuple[list[str], list[str]]:
    """(requirements, constraints) of a profile, each line checked as PEP 508."""
    for field_name in ("requirements", "constraints"):
        for i, line in enumerate(getattr(profile, field_name)):
            try:
                Requirement(line)
            except InvalidRequirement as exc:
                raise InputError(f"profile {profile.id}: {field_name}[{i}]: {exc}") from None
    return list(profile.requirements), list(profile.constraints)


def is_torch_family(name: str) -> bool:
    return normalize_name(name) in TORCH_FAMILY


def env_paths(path: str, system: str) -> tuple[str, list[list[str]]]:
    """(interpreter, activation commands as argv lists) of an environment at ``path`` on
    ``system``: ``bin/python`` and ``source bin/activate`` on POSIX, ``Scripts\\python.exe``
    and ``Scripts\\activate`` (cmd) / ``Scripts\\Activate.ps1`` (PowerShell) on Windows."""
    if system.lower() == "windows":
        base = path.rstrip("\\/").replace("/", "\\")
        return f"{base}\\Scripts\\python.exe", [
            [f"{base}\\Scripts\\activate"],
            [f"{base}\\Scripts\\Activate.ps1"],
        ]
    base = path.rstrip("/") or "/"
    return f"{base}/bin/python", [["source", f"{base}/bin/activate"]]
