"""Masking the variable parts of a log line, and turning a masked template back into RE2.

A failure message keeps what names the failure — library and module names, error codes,
``.so`` names, symbol names, quoted attribute names — and loses what changes from run to run:
numbers, hex addresses and digests, paths, sizes, ranks, durations, timestamps, temp names.
Each variable part becomes a typed mask (``<NUM>``, ``<PATH>`` …); a token made of masks and
punctuation alone becomes ``<*>``, the wildcard of the template miner (so ``10.1.2.3:8080``
and ``(12)`` are wildcards, while ``rank<NUM>`` and ``libcudart.so.12`` stay words).

The masks run in one pass of one alternation; user patterns (a system's identifiers, say)
run after the timestamps and before the generic masks, so a timestamp is never cut in two.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["Masker", "WILDCARD", "mask", "template_regex"]

WILDCARD = "<*>"

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
TIMESTAMP = (
    r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
    rf"|\b(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),?\s+)?{_MONTH}\s+\d{{1,2}},?\s+\d\d:\d\d:\d\d(?:\s+\d{{4}})?\b"
)
# (name, pattern); the first alternative that matches at a position wins
_GENERIC: tuple[tuple[str, str], ...] = (
    ("URL", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>`]+"),
    ("UUID", r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    ("IP", r"\b(?:\d{1,3}\.){3}\d{1,3}\b"),
    # a shared library keeps its name and soname version, loses its folder
    ("SO", r"(?:[\w.+@~-]*/)*(?P<soname>lib[\w+-]*\.so(?:\.\d+)*)\b"),
    ("PATH", r"(?<![\w.])(?:[A-Za-z]:)?(?:[\\/][\w.+@~-]+){2,}[\\/]?"),
    ("TMP", r"\btmp[a-z0-9_]{6,}\b"),
    ("HEX", r"\b0[xX][0-9a-fA-F]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b"),
    ("RANK", r"\brank\d+\b"),  # rank3, [rank0]: (a separate number is a number anyway)
    # the number after these words is an error code: kept
    ("CODE", r"\b(?:code|errno|signal|exit status)\s*[:=]?\s*-?\d+\b"),
    # a number, with or without a unit glued to it (12ms, 3.5GiB): the unit stays
    ("NUM", r"(?<![\w])[-+]?\d+(?:[.,]\d+)*(?=[A-Za-zµ]{0,3}\b|[^\w]|$)"),
)
_LETTER = re.compile(r"[A-Za-z]")
_MASK_TOKEN = re.compile(r"<(?:TS|URL|UUID|IP|PATH|TMP|HEX|NUM|\*)>")


class Masker:
    """The masks, compiled once; ``extra`` patterns (masked as ``<*>``) run after timestamps."""

    def __init__(self, extra: Iterable[str] = ()) -> None:
        self._pre = [re.compile(p) for p in extra]
        self._ts = re.compile(TIMESTAMP)
        generic = _GENERIC if self._pre else (("TS", TIMESTAMP), *_GENERIC)
        self._rx = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in generic))

    def __call__(self, line: str) -> str:
        return self.mask(line)

    def mask(self, line: str) -> str:
        text = line.strip()
        if self._pre:  # timestamps first, so that no user pattern cuts one in two
            text = self._ts.sub("<TS>", text)
            for rx in self._pre:
                text = rx.sub(WILDCARD, text)
        text = self._rx.sub(_replace, text)
        if "<" not in text:
            return text
        return " ".join(WILDCARD if _only_masks(t) else t for t in text.split())


def _replace(m: re.Match) -> str:
    kind = m.lastgroup
    if kind == "SO":
        return m.group("soname")
    if kind == "CODE":
        return m.group(0)
    if kind == "RANK":
        return "rank<NUM>"
    return f"<{kind}>"


def _only_masks(token: str) -> bool:
    """A token whose letters all belong to masks: ``<NUM>:<NUM>``, ``(<HEX>)``."""
    return (
        "<" in token
        and _MASK_TOKEN.search(token) is not None
        and not _LETTER.search(_MASK_TOKEN.sub("", token))
    )


_DEFAULT = Masker()


def mask(line: str) -> str:
    """``line`` with its variable parts masked (the default masks)."""
    return _DEFAULT.mask(line)


_TOKEN_RE = {
    "<TS>": r".+?",
    "<URL>": r"\S+",
    "<UUID>": r"[0-9a-fA-F-]{36}",
    "<IP>": r"[\d.]+",
    "<PATH>": r"\S+",
    "<TMP>": r"tmp\w+",
    "<HEX>": r"\w+",
    "<NUM>": r"[-+]?\d+(?:[.,]\d+)*",
    WILDCARD: r"\S+",
}
_SPLIT = re.compile(r"(<(?:TS|URL|UUID|IP|PATH|TMP|HEX|NUM|\*)>|\s+)")
_SONAME = re.compile(r"^lib[\w+-]*\.so")


def template_regex(template: str, *, loose: bool = False, max_chars: int = 240) -> str:
    """An RE2 pattern that matches the lines ``template`` was mined from: literal text
    escaped, masks as character classes, whitespace as ``\\s+``. ``loose`` makes every mask
    ``.+?`` (for a variable part that held spaces). Only the first ``max_chars`` of a long
    template are used: that is specific enough, and a message cut short still matches."""
    out: list[str] = []
    used = 0
    for part in _SPLIT.split(template.strip()):
        if not part:
            continue
        if part.isspace():
            piece = r"\s+"
        elif part in _TOKEN_RE:
            piece = r".+?" if loose else _TOKEN_RE[part]
        else:
            if used + len(part) > max_chars:
                break
            used += len(part)
            piece = re.escape(part)
            if _SONAME.match(part):  # the mask kept a library's name and dropped its folder
                piece = r"(?:\S*/)?" + piece
        if out and piece == out[-1] and piece in (r"\s+", r".+?"):
            continue
        out.append(piece)
    while out and out[-1] in (r"\s+", r".+?"):
        out.pop()
    return "".join(out)
