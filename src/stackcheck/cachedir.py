"""Where stackcheck keeps what it can always recompute (the probe's metadata cache, toolchain
facts, the help pages): one directory, found without importing anything (``stackcheck --help``
reads it before click is loaded)."""

from __future__ import annotations

import os


def cache_root() -> str | None:
    """The cache directory, or None when ``STACKCHECK_NO_CACHE`` is set.
    ``STACKCHECK_CACHE_DIR`` moves it."""
    if os.environ.get("STACKCHECK_NO_CACHE"):
        return None
    return os.environ.get("STACKCHECK_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME")
        or os.environ.get("LOCALAPPDATA")
        or os.path.join(os.path.expanduser("~"), ".cache"),
        "stackcheck",
    )
