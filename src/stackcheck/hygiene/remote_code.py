"""``trust_remote_code=True`` without a pinned ``revision=`` in the same call.

Python source is parsed with :mod:`ast`, so the check sees the call, not the line: a
``revision=`` on the next line of the same call counts, one in another call does not.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

_UNPINNED = {"main", "master", "HEAD", "latest"}
_FALLBACK = re.compile(r"trust_remote_code\s*=\s*True")


def _is_true(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _revision_state(call: ast.Call) -> str | None:
    """None when the call pins a revision (or may, through ``**kwargs``), else why not."""
    if any(k.arg is None for k in call.keywords):
        return None  # revision may come through **kwargs; cannot tell
    for k in call.keywords:
        if k.arg == "revision":
            if isinstance(k.value, ast.Constant) and (k.value.value is None or k.value.value in _UNPINNED):
                return f"revision={k.value.value!r} is a moving reference"
            return None
    return "no revision= in the call"


def unpinned_calls(source: str) -> Iterator[tuple[int, str]]:
    """(line, why) for each call with trust_remote_code=True and no pinned revision.
    Source that does not parse falls back to a line search (no revision= on the line)."""
    if "trust_remote_code" not in source:
        return
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        for number, line in enumerate(source.splitlines(), 1):
            if _FALLBACK.search(line) and "revision=" not in line:
                yield number, "no revision= on the line (file does not parse as Python)"
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and any(
            k.arg == "trust_remote_code" and _is_true(k.value) for k in node.keywords
        ):
            why = _revision_state(node)
            if why:
                yield node.lineno, why


def call_name(source: str, line: int) -> str:
    """The source line of a finding, secrets masked, stripped and shortened, for the evidence."""
    from stackcheck.hygiene.secrets import redact

    lines = source.splitlines()
    text = redact(lines[line - 1].strip()) if 0 < line <= len(lines) else ""
    return text if len(text) <= 100 else text[:97] + "..."
