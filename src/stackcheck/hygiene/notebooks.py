"""Notebooks as JSON: the code and the stored outputs of each cell, kept apart, so a token
printed by a cell is reported against that cell's output."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

_MAGIC = re.compile(r"^\s*[%!?]")


@dataclass(frozen=True)
class Cell:
    index: int  # 0-based position in the notebook, as Jupyter counts
    kind: str  # code | markdown | raw
    source: str
    outputs: str  # every stored output's text joined


def _text(value) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    if isinstance(value, str):
        return value
    return json.dumps(value)


def cells(raw: str) -> Iterator[Cell] | None:
    """The cells of a notebook, or None when ``raw`` is not notebook JSON."""
    try:
        doc = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        return None
    return _cells(doc["cells"])


def _cells(items: list) -> Iterator[Cell]:
    for index, cell in enumerate(items):
        if not isinstance(cell, dict):
            continue
        parts = []
        for out in cell.get("outputs") or []:
            if not isinstance(out, dict):
                continue
            for key in ("text", "evalue", "traceback"):
                if key in out:
                    parts.append(_text(out[key]))
            for value in (out.get("data") or {}).values():
                parts.append(_text(value))
        yield Cell(index, str(cell.get("cell_type", "")), _text(cell.get("source", "")), "\n".join(parts))


def python_source(cell: Cell) -> str:
    """A code cell's source with IPython magics and shell escapes blanked (lines kept)."""
    return "\n".join("" if _MAGIC.match(line) else line for line in cell.source.splitlines())
