"""Test factories: snapshots and profiles in a line, recorded snapshots by name."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import msgspec
import pytest

from stackcheck.models import snapshot as S
from stackcheck.models.profile import Profile

DATA = Path(__file__).parent / "data"
SNAPSHOTS = DATA / "snapshots"


def shared_dir() -> Path:
    """The project's shared/ tree: $STACKCHECK_SHARED_DIR, else the nearest ``shared/`` beside
    the checkout or beside one of the folders above it (CI lays it beside the checkout; a
    worktree checkout sits a level or two deeper). No absolute path of any machine."""
    if os.environ.get("STACKCHECK_SHARED_DIR"):
        return Path(os.environ["STACKCHECK_SHARED_DIR"])
    checkout = Path(__file__).resolve().parents[1]
    for folder in checkout.parents:
        if (folder / "shared").is_dir():
            return folder / "shared"
    return checkout.parent / "shared"  # absent: the tests that need it say so


def missing_prerequisite(reason: str) -> NoReturn:
    """A test's prerequisite (a server, an interpreter with torch) is missing: skip, saying
    why — but fail in CI (CI=true), which provides every prerequisite, so a broken CI setup
    never passes as a row of skips."""
    if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


SHARED = shared_dir()


def dist(
    name: str, version: str, *requires: str, location: str = "/env/lib/python3.12/site-packages", **kw
) -> S.Distribution:
    return S.Distribution(name=name, version=version, location=location, requires=list(requires), **kw)


def make_snapshot(
    *dists: S.Distribution,
    python: str = "3.12.3",
    gpus: list[tuple[str, str, float]] | None = None,  # (name, compute capability, GiB)
    driver: str = "",
    driver_cuda: str = "",
    torch: str | None = None,
    torch_cuda: str | None = None,
    system: str = "Linux",
    machine: str = "x86_64",
    glibc: str = "2.39",
    hosted: list[S.HostedPlatform] | None = None,
    modules: dict[str, str] | None = None,
) -> S.Snapshot:
    """A consistent snapshot of a Linux venv; GPU, driver and torch facts only when given."""
    snap = S.Snapshot(
        python=S.PythonSection(
            status="ok",
            source="test",
            version=python,
            implementation="CPython",
            executable="/env/bin/python",
            prefix="/env",
            env_kind="venv",
            modules=modules or {},
        ),
        packages=S.PackagesSection(status="ok", source="test", distributions=list(dists)),
        platform=S.PlatformSection(
            status="ok",
            source="test",
            system=system,
            machine=machine,
            libc_family="glibc" if system == "Linux" else "",
            libc_version=glibc if system == "Linux" else "",
        ),
        hosted=S.HostedSection(status="ok", source="test", platforms=hosted or []),
    )
    if gpus:
        snap.accelerators = S.AcceleratorSection(
            status="ok",
            source="test",
            vendor="nvidia",
            driver_version=driver,
            cuda_driver_version=driver_cuda,
            gpus=[
                S.Gpu(index=i, name=n, compute_capability=cc, memory_total_bytes=int(gib * 1024**3))
                for i, (n, cc, gib) in enumerate(gpus)
            ],
        )
    else:
        snap.accelerators = S.AcceleratorSection(
            status="absent", source="test", looked_for=["/sys/module/nvidia/version"]
        )
    if torch:
        snap.torch = S.TorchSection(status="ok", source="test", version=torch, cuda=torch_cuda)
        if not any(d.name == "torch" for d in dists):
            snap.packages.distributions.append(dist("torch", torch, top_level=["torch"]))
    return snap


def make_profile(**kw) -> Profile:
    kw.setdefault("id", "TEST-PROFILE")
    return msgspec.convert(kw, Profile)


def recorded(name: str) -> S.Snapshot:
    from stackcheck.environment import load_snapshot

    path = SNAPSHOTS / f"{name}.json"
    if not path.exists():
        pytest.skip(f"recorded snapshot {path.name} not present")
    return load_snapshot(str(path))


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``stackcheck ARGV`` through the real entry point in this process → (exit code, stdout, stderr)."""
    from stackcheck.cli import main

    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def drain_pty(master: int) -> bytes:
    """Everything written to the terminal whose master end is ``master`` until the child closes it."""
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)
