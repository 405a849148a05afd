"""stackcheck: keeps ML/LLM experiment environments honest.

The library is the product; the CLI in :mod:`stackcheck.cli` is a thin shell over it::

    import stackcheck
    report = stackcheck.preflight("TRAIN-CPU")                      # -> models.finding.Report
    snap = stackcheck.snapshot(stackcheck.FactSource.python(".venv/bin/python"))
    diagnosis = stackcheck.triage("ModuleNotFoundError: No module named 'torch'")
    stackcheck.results.record("result.json")                        # -> results.recording.Recorded

Nothing heavy is imported here (the names resolve on first use, through ``__getattr__``), so
``import stackcheck`` stays cheap.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs a third of a bare interpreter start
if TYPE_CHECKING:
    from typing import Any

    from stackcheck.sources import FactSource as FactSource

__version__ = "0.1.0"
__all__ = ["FactSource", "InputError", "__version__", "preflight", "results", "snapshot", "triage"]


# name → the module that holds it, imported on first use (dynamically: the calls live on the
# top layer, stackcheck.api, and every layer may import this package for __version__)
_LAZY = {
    "preflight": "stackcheck.api",
    "snapshot": "stackcheck.api",
    "FactSource": "stackcheck.sources",
    "InputError": "stackcheck.errors",
}


def __getattr__(name: str) -> Any:
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in ("results", "triage"):
        return importlib.import_module(f"stackcheck.{name}")  # triage is callable: triage(text)
    raise AttributeError(f"module 'stackcheck' has no attribute {name!r}")
