"""The compatibility knowledge base: sourced data files under ``data/`` and their loaders.

``load_knowledge()`` reads and validates every table and rule file once per process;
the lookups (``driver_requirement``, ``torch_release``, ``arch_list``, ``covers``,
``engine_pins`` …) live on :class:`~stackcheck.knowledge.base.Knowledge`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path  # imported where used: a warm preflight reads knowledge.paths only

    from stackcheck.knowledge.base import Knowledge

__all__ = ["load_knowledge", "knowledge_key", "use_rule_files", "Knowledge"]

_GIVEN_RULES: tuple[str, ...] = ()


def load_knowledge(
    data_dir: str | os.PathLike | None = None, rules: Sequence[str | os.PathLike] | None = None
) -> Knowledge:
    """The knowledge base from ``data_dir`` (default: the packaged data, or
    ``STACKCHECK_KNOWLEDGE_DIR``) with the extra rule files ``rules`` (default: those of
    :func:`~stackcheck.knowledge.loader.extra_rule_paths`: ``--rules``, ``$STACKCHECK_RULES``,
    ``requirements/stackcheck-rules/``), cached per directory and rule files (as they are on
    disk) for the life of the process."""
    return _load(*knowledge_key(data_dir, rules))


def knowledge_key(
    data_dir: str | os.PathLike | None = None, rules: Sequence[str | os.PathLike] | None = None
) -> tuple[str | Path, tuple[tuple[Path, int, int], ...]]:
    """What :func:`load_knowledge` caches a knowledge base by: its directory and its extra rule
    files as they are on disk (what was compiled from one, e.g. triage's signatures, is
    cached by the same key). The packaged data without extra rule files (a plain preflight)
    is keyed by its directory as a ``str``, as ``Path`` writes it: no pathlib."""
    from stackcheck.knowledge import paths

    directory = paths.data_dir_name() if data_dir is None else os.fspath(data_dir)
    if directory == paths.DATA_DIR_NAME and not (paths.extra_rule_names() if rules is None else rules):
        return paths.DATA_DIR_NAME, ()
    from pathlib import Path

    from stackcheck.knowledge.paths import data_dir as default_dir
    from stackcheck.knowledge.paths import extra_rule_paths

    extra = tuple(Path(p) for p in rules) if rules is not None else extra_rule_paths()
    return Path(data_dir) if data_dir is not None else default_dir(), tuple(_stamp(p) for p in extra)


def use_rule_files(paths: Sequence[str | os.PathLike]) -> None:
    """Rule files (or folders) every later default :func:`load_knowledge` adds: what a
    command's ``--rules`` option sets for the process (``()`` clears it)."""
    global _GIVEN_RULES
    _GIVEN_RULES = tuple(str(p) for p in paths)


def given_rule_files() -> tuple[str, ...]:
    return _GIVEN_RULES


def _stamp(path: Path) -> tuple[Path, int, int]:
    """A rule path with its modification time and size (a folder: of its rule files), so an
    edited file is read again."""
    try:
        if path.is_dir():
            files = [(f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in sorted(path.glob("*.json"))]
            return (path, hash(tuple(files)), -2)
        st = path.stat()
    except OSError:
        return (path, 0, -1)  # the loader says what is wrong with it
    return (path, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=8)
def _load(directory: str | Path, extra: tuple[tuple[Path, int, int], ...] = ()) -> Knowledge:
    from stackcheck.knowledge.loader import load_from

    return load_from(directory, [p for p, _, _ in extra])


def __getattr__(name: str):
    if name == "Knowledge":
        from stackcheck.knowledge.base import Knowledge

        return Knowledge
    raise AttributeError(name)
