"""The compatibility knowledge base: sourced data files under ``data/`` and their loaders.

``load_knowledge()`` reads and validates every table and rule file once per process;
the lookups (``driver_requirement``, ``torch_release``, ``arch_list``, ``covers``,
``engine_pins`` …) live on :class:`~stackcheck.knowledge.base.Knowledge`.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stackcheck.knowledge.base import Knowledge

__all__ = ["load_knowledge", "Knowledge"]


def load_knowledge(data_dir: str | os.PathLike | None = None) -> Knowledge:
    """The knowledge base from ``data_dir`` (default: the packaged data, or
    ``STACKCHECK_KNOWLEDGE_DIR``), cached per directory for the life of the process."""
    from stackcheck.knowledge.loader import data_dir as default_dir

    return _load(Path(data_dir) if data_dir is not None else default_dir())


@lru_cache(maxsize=8)
def _load(directory: Path) -> Knowledge:
    from stackcheck.knowledge.loader import load_from

    return load_from(directory)


def __getattr__(name: str):
    if name == "Knowledge":
        from stackcheck.knowledge.base import Knowledge

        return Knowledge
    raise AttributeError(name)
