"""Accepted exceptions: ``.stackcheck-ignore`` at the repository root.

Each line is a gitignore-style pattern (``*``, ``?``, ``[abc]``, ``**``, a leading ``/``
anchors to the root, a trailing ``/`` matches a directory and everything in it, ``!``
re-includes, ``#`` comments), optionally prefixed by a rule id (``HYG002:models/*.bin``)
to accept only that rule there. The last matching line wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stackcheck.errors import InputError

_RULE_PREFIX = re.compile(r"^([A-Z]{3}\d{3}):(.*)$")


@dataclass(frozen=True)
class IgnoreLine:
    rule: str | None  # None: every rule
    regex: re.Pattern
    negate: bool
    dir_only: bool


def translate(pattern: str) -> str:
    """A gitignore pattern (without ``!`` and trailing ``/``) → a regex over a relative
    POSIX path."""
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.lstrip("/")
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*" and pattern[i : i + 2] == "**" and (i == 0 or pattern[i - 1] == "/") and (i + 2 == n or pattern[i + 2] == "/"):
            if i + 2 == n:
                out.append(".*")  # "dir/**": everything inside
            else:
                out.append("(?:.*/)?")  # "**/" : zero or more directories
                i += 1
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("(?!/)[" + body.replace("\\", "\\\\") + "]")
                i = j
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return ("" if anchored else "(?:.*/)?") + "".join(out)


def parse(text: str, source: str = ".stackcheck-ignore") -> list[IgnoreLine]:
    lines: list[IgnoreLine] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        rule = None
        m = _RULE_PREFIX.match(line)
        if m:
            rule, line = m.group(1), m.group(2).strip()
            if not line:
                raise InputError(f"{source}: line {number}: '{rule}:' needs a path pattern after the colon")
        negate = line.startswith("!")
        line = line[1:] if negate else line
        if line.startswith("\\"):
            line = line[1:] if line[1:2] in ("!", "#") else line
        dir_only = line.endswith("/")
        try:
            regex = re.compile(translate(line.rstrip("/")) + "\\Z")
        except re.error as exc:
            raise InputError(f"{source}: line {number}: not a valid pattern ({exc})") from None
        lines.append(IgnoreLine(rule, regex, negate, dir_only))
    return lines


def load(path: str) -> list[IgnoreLine]:
    from stackcheck.fileio import read_text

    return parse(read_text(path, "ignore file"), source=path)


def is_ignored(lines: list[IgnoreLine], rule: str, path: str, *, is_dir: bool = False) -> bool:
    """Whether a finding of ``rule`` about ``path`` (relative, POSIX) is accepted."""
    parts = path.strip("/").split("/")
    # the path itself, then each directory above it
    candidates = [("/".join(parts), is_dir)] + [("/".join(parts[:k]), True) for k in range(len(parts) - 1, 0, -1)]
    ignored = False
    for line in lines:
        if line.rule is not None and line.rule != rule:
            continue
        if any(line.regex.match(p) and (is_d or not line.dir_only) for p, is_d in candidates):
            ignored = not line.negate
    return ignored
