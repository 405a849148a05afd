"""Error triage: an error text, traceback or CI log → the known causes that explain it, ranked
by how specifically they match and whether the environment agrees, each with its fix.

Nothing is guessed: when no rule signature matches, the diagnosis says so and shows the
failure region it found.
"""

from __future__ import annotations

import sys
import types

from stackcheck.triage.diagnose import triage_stream, triage_text
from stackcheck.triage.model import Diagnosis, TriageMatch

__all__ = ["Diagnosis", "TriageMatch", "triage_stream", "triage_text"]


class _Callable(types.ModuleType):
    """``stackcheck.triage(text)``: the package is also the library call (the package and the
    function share the name ``stackcheck.triage``)."""

    def __call__(self, text: str, **kwargs):
        """:func:`stackcheck.api.triage` (``source=`` a FactSource, default the live environment)."""
        import importlib

        # the call obtains the environment: it lives on the top layer, the package forwards
        return importlib.import_module("stackcheck.api").triage(text, **kwargs)


sys.modules[__name__].__class__ = _Callable
