"""Error triage: an error text, traceback or CI log → the known causes that explain it, ranked
by how specifically they match and whether the environment agrees, each with its fix.

Nothing is guessed: when no rule signature matches, the diagnosis says so and shows the
failure region it found.
"""

from __future__ import annotations

from stackcheck.triage.diagnose import triage_stream, triage_text
from stackcheck.triage.model import Diagnosis, TriageMatch

__all__ = ["Diagnosis", "TriageMatch", "triage_stream", "triage_text"]
