"""Names a user gives stackcheck, checked by one rule wherever they are accepted; and text
made safe to show on a terminal.

A *name* is a profile ID, a kernel name, a run label: 1-128 letters, digits, ``.``, ``_``
or ``-``, starting with a letter or digit (so never ``..``, ``.``, an option such as ``-rf``,
a path, a space, a quote or a control character). Every built-in profile ID, Jupyter's
default kernel names (``python3``) and hub-style labels (``baseline-sdpa``) are names.
A *topic* is one or more names joined by ``/`` (``inference/qwen2.5-0.5b-latency``), at most
256 characters. Jupyter allows kernel names that begin with ``.``, ``_`` or ``-``
(jupyter_client's ``^[a-z0-9._-]+$``); stackcheck does not register or look up those, as
``..`` would name the directory above ``kernels/``.

Identifiers are checked where they enter (CLI options and arguments, registry files, result
drafts); free text (titles, reasons, paths read from a snapshot) is shown through
:func:`printable`, which escapes control characters so a value cannot rewrite the terminal.
"""

from __future__ import annotations

import re

from stackcheck.errors import InputError

__all__ = [
    "MAX_NAME",
    "MAX_TOPIC",
    "NAME",
    "TOPIC",
    "and_join",
    "name_problem",
    "printable",
    "problem",
    "require",
    "shown",
    "text_problem",
    "topic_problem",
]

MAX_NAME = 128
MAX_TOPIC = 256
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
TOPIC = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9][A-Za-z0-9._-]*)*")
NAME_CHARS = "expected letters, digits, '.', '_' or '-' (no spaces)"
# C0 and C1 controls, DEL, line/paragraph separators, bidirectional overrides and isolates
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shown(value: str) -> str:
    """``value`` for a message: quoted, control characters escaped (``repr``), cut at 60."""
    return repr(value) if len(value) <= 60 else repr(value[:60]) + "…"


def name_problem(value: object) -> str | None:
    """What is wrong with ``value`` as a name (None: it is one)."""
    if not isinstance(value, str) or not value:
        return "must not be empty"
    if len(value) > MAX_NAME:
        return f"at most {MAX_NAME} characters, got {len(value)}"
    if not NAME.fullmatch(value):
        if _CONTROL.search(value):
            return f"must be one line without control characters, got {shown(value)}"
        if value[0] in "._-" and NAME.fullmatch("a" + value[1:]):
            return f"must start with a letter or digit, got {shown(value)}"
        return NAME_CHARS
    return None


def topic_problem(value: object) -> str | None:
    """What is wrong with ``value`` as a topic (None: it is one)."""
    if not isinstance(value, str) or not value.strip():
        return "must not be empty"
    if _CONTROL.search(value):
        return f"must be one line without control characters, got {shown(value)}"
    if len(value) > MAX_TOPIC:
        return f"at most {MAX_TOPIC} characters, got {len(value)}"
    if not TOPIC.fullmatch(value):
        return f"expected names of letters, digits, '.', '_' or '-' joined by '/', got {shown(value)}"
    if any(len(part) > MAX_NAME for part in value.split("/")):
        return f"each '/'-separated part at most {MAX_NAME} characters"
    return None


def text_problem(value: object) -> str | None:
    """What is wrong with ``value`` as one line of free text (a decision, a display name)."""
    if not isinstance(value, str):
        return "expected text"
    if _CONTROL.search(value):
        return f"must be one line without control characters, got {shown(value)}"
    return None


_RULES = {"name": name_problem, "topic": topic_problem, "text": text_problem}


def problem(value: object, kind: str = "name") -> str | None:
    """What is wrong with ``value`` as a ``kind`` ("name", "topic" or "text"), showing the
    value (escaped) where that helps; None when it is valid."""
    found = _RULES[kind](value)
    return f"{NAME_CHARS}, got {shown(value)}" if found == NAME_CHARS else found


def require(value: str, field: str, kind: str = "name") -> str:
    """``value`` when it is a valid ``kind``; else InputError naming ``field``."""
    found = problem(value, kind)
    if found is not None:
        raise InputError(f"{field}: {found}")
    return value


def printable(text: str) -> str:
    """``text`` with every control character (newline, escape, carriage return, bidi override …)
    written as a visible escape (``\\n``, ``\\x1b``, ``\\u202e``): one line that shows what it says."""
    if not text or not _CONTROL.search(text):
        return text
    return _CONTROL.sub(
        lambda m: _NAMED.get(
            m.group(), f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}"
        ),
        text,
    )


def and_join(words: list[str]) -> str:
    """``["a", "b", "c"]`` → ``a, b and c`` (for messages)."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
