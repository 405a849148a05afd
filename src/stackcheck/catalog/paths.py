"""Where profile registries are found: standard library only, so that a warm verdict cache
(:mod:`stackcheck.cli.verdicts`) can name the files a catalog would be read from without
loading the catalog."""

from __future__ import annotations

import os
from pathlib import Path

REGISTRY_PATH = Path("requirements") / "environment-profiles.json"
BUILTIN_DIR = Path(__file__).parent / "builtin"


def find_registry(cwd: str | os.PathLike | None = None) -> Path | None:
    """The nearest ``requirements/environment-profiles.json`` at or above ``cwd``."""
    here = Path(cwd or os.getcwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / REGISTRY_PATH
        if candidate.is_file():
            return candidate
    return None


def builtin_files() -> list[Path]:
    return sorted(BUILTIN_DIR.glob("*.json"))
