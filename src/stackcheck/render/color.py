"""Colour for people: verdict words in ANSI colours (OK green, WARNING yellow, BLOCKED red,
skipped dim). Renderers paint only when told to; whether to (a terminal, NO_COLOR,
FORCE_COLOR, --no-color, never for JSON or Markdown) is the command line's decision."""

from __future__ import annotations

_SGR = {
    "ok": "32",
    "fits": "32",
    "warning": "33",
    "blocked": "31",
    "does-not-fit": "31",
    "error": "1;31",
    "skipped": "2",
}


def paint(text: str, verdict: str, on: bool = True) -> str:
    """``text`` in the colour of ``verdict`` (unchanged when ``on`` is false or the verdict has none)."""
    code = _SGR.get(verdict)
    return f"\x1b[{code}m{text}\x1b[0m" if on and code else text
