"""The one way a fix installs torch from a PyTorch wheel index.

``download.pytorch.org/whl/<tag>`` publishes one index per build: ``cpu``, ``cu128`` (CUDA
12.8), ``rocm6.2`` …; the tag of a CUDA build is what the knowledge tables name it ("12.8")
without the dot. Every check whose fix reinstalls torch for another build goes through
:func:`torch_install` (a PipInstall, printed as a command) or :func:`torch_index_url`.
"""

from __future__ import annotations

import re

from stackcheck.models.finding import PipInstall

__all__ = ["torch_index_url", "torch_install", "torch_release_install", "torch_tag"]

TORCH_INDEX = "https://download.pytorch.org/whl/{}"
_CUDA = re.compile(r"[0-9]+(?:\.[0-9]+)+")  # a CUDA version as the knowledge tables write it


def torch_tag(build: str) -> str:
    """The index tag of a build: '12.8' → 'cu128', '13.0.1' → 'cu130'; anything else (a tag:
    'cpu', 'cu121', 'rocm6.2'; a local version label) stays as it is."""
    if _CUDA.fullmatch(build) is None:
        return build
    major, _, minor = build.partition(".")
    return f"cu{major}{minor.split('.')[0] or '0'}"


def torch_index_url(build: str) -> str:
    """The PyTorch wheel index of a build ('12.8', 'cu128', 'cpu' …)."""
    return TORCH_INDEX.format(torch_tag(build))


def torch_install(ctx, *requirements: str, build: str) -> PipInstall:
    """Install ``requirements`` (torch and its companions) in the checked interpreter from the
    index of ``build``."""
    return ctx.install(*requirements, index_url=torch_index_url(build))


def torch_release_install(ctx, torch_version: str, build: str) -> PipInstall:
    """This torch release (its local label dropped: '2.8.0+cu126' → 'torch==2.8.0') from the
    index of ``build``."""
    return torch_install(ctx, f"torch=={torch_version.split('+')[0]}", build=build)
