"""Where profile registries are found: standard library only, and without ``pathlib`` on the way
that a warm verdict cache (:mod:`stackcheck.cli.verdicts`) takes to name the files a catalog would
be read from without loading the catalog: the ``*_name(s)`` functions answer in ``str``, the
others in ``Path``."""

from __future__ import annotations

import os

from stackcheck.fileio import json_files, nearest_above

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    REGISTRY_PATH: Path
    BUILTIN_DIR: Path

_REGISTRY = os.path.join("requirements", "environment-profiles.json")
_BUILTIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "builtin")


def __getattr__(name: str):
    # REGISTRY_PATH and BUILTIN_DIR as Paths, made on first use: no pathlib on a warm preflight
    if name in ("REGISTRY_PATH", "BUILTIN_DIR"):
        from pathlib import Path

        return Path(_REGISTRY if name == "REGISTRY_PATH" else _BUILTIN)
    raise AttributeError(name)


def find_registry(cwd: str | os.PathLike | None = None) -> Path | None:
    """The nearest ``requirements/environment-profiles.json`` at or above ``cwd``."""
    found = find_registry_name(cwd)
    if found is None:
        return None
    from pathlib import Path

    return Path(found)


def find_registry_name(cwd: str | os.PathLike | None = None) -> str | None:
    """:func:`find_registry` as a ``str``."""
    return nearest_above(_REGISTRY, cwd, os.path.isfile)


def builtin_files() -> list[Path]:
    from pathlib import Path

    return [Path(p) for p in builtin_names()]


def builtin_names() -> list[str]:
    """The built-in registry files (``builtin/*.json``), sorted, as ``str``s."""
    return json_files(_BUILTIN)
