"""``stackcheck report --html DIR``: the review page, a static site that works from ``file://``.

:func:`stackcheck.report.gather.gather` collects what the page shows (from the ledger, preflight
reports and snapshots, mined rule files), :func:`stackcheck.report.page.render_page` writes it as
one self-contained HTML file, :func:`write_site` puts it in place atomically.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_site"]

INDEX = "index.html"


def write_site(out_dir: str | os.PathLike, site, *, generated_at: str = "") -> Path:
    """Render ``site`` (a :class:`stackcheck.report.gather.Site`) to ``OUT_DIR/index.html``
    atomically; an unwritable directory is one ``InputError``."""
    from datetime import datetime, timezone

    from stackcheck import __version__
    from stackcheck.fileio import atomic_write, cannot_write, require_creatable_dir
    from stackcheck.report.page import render_page

    require_creatable_dir(out_dir, "the report directory, --html")
    when = generated_at or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = render_page(site, generated_at=when, version=__version__)
    target = Path(out_dir) / INDEX
    try:
        return atomic_write(target, text, shared=True)  # a page to publish
    except OSError as exc:
        raise cannot_write(target, "the review page", exc) from None
