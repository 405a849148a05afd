"""Accepted exceptions: ``.stackcheck-ignore`` at the repository root.

Each line is a gitignore-style pattern (``*``, ``?``, ``[abc]``, ``**``, a leading ``/``
anchors to the root, a trailing ``/`` matches a directory and everything in it, ``!``
re-includes, ``#`` comments), optionally prefixed by a rule id (``HYG002:models/*.bin``)
to accept only that rule there. The last matching line wins.

Matching does no per-line work per finding, so a generated list of hundreds of thousands of
lines costs what reading it costs: a line without glob characters is a dictionary entry (by
path when anchored, by file name otherwise); glob lines are bucketed by what a path must
have to match them (the first directory of an anchored pattern, the extension of a file
name pattern) and each bucket is compiled into a few combined regexes, highest line first,
on first use, so one match finds the last matching line of the bucket.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from stackcheck.errors import InputError

_RULE_PREFIX = re.compile(r"^([A-Z]{3}\d{3}):(.*)$")
_GLOB_CHARS = frozenset("*?[\\")
GLOBS_PER_REGEX = 1000  # alternatives in one combined regex
MAX_IGNORE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class IgnoreLine:
    rule: str | None  # None: every rule
    pattern: str  # the gitignore pattern, without "!" and the trailing "/"
    negate: bool
    dir_only: bool


def translate(pattern: str) -> str:
    """A gitignore pattern (without ``!`` and trailing ``/``) → a regex over a relative
    POSIX path."""
    return _translate(pattern)[0]


def _translate(pattern: str) -> tuple[str, list[str]]:
    """The regex, and the character classes in it (the only part that can be invalid)."""
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.lstrip("/")
    out: list[str] = []
    classes: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if (
            c == "*"
            and pattern[i : i + 2] == "**"
            and (i == 0 or pattern[i - 1] == "/")
            and (i + 2 == n or pattern[i + 2] == "/")
        ):
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
                cls = "[" + body.replace("\\", "\\\\") + "]"
                classes.append(cls)
                out.append("(?!/)" + cls)
                i = j
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return ("" if anchored else "(?:.*/)?") + "".join(out), classes


class _Bucket:
    """Glob lines that share what a path needs to match them; compiled on first use into
    combined regexes of GLOBS_PER_REGEX alternatives, highest line first."""

    __slots__ = ("lines", "chunks")

    def __init__(self) -> None:
        self.lines: list[tuple[int, str]] = []  # (line index, regex source), ascending
        self.chunks: list[tuple[int, re.Pattern, list[int]]] | None = None

    def last_match(self, subject: str, above: int) -> int:
        """The highest line index above ``above`` whose regex matches ``subject``, else ``above``."""
        if self.chunks is None:
            self.chunks = []
            ordered = self.lines[::-1]
            for start in range(0, len(ordered), GLOBS_PER_REGEX):
                part = ordered[start : start + GLOBS_PER_REGEX]
                regex = re.compile("|".join(f"({source}\\Z)" for _, source in part))
                self.chunks.append((part[0][0], regex, [0] + [index for index, _ in part]))
        for top, regex, indices in self.chunks:
            if top <= above:
                break
            m = regex.match(subject)
            if m and m.lastindex is not None:
                return max(above, indices[m.lastindex])
        return above


class IgnoreRules:
    """The lines of an ignore file, indexed for matching (see the module docstring)."""

    def __init__(self, lines: list[IgnoreLine], sources: list[str]) -> None:
        self.lines = lines
        # literal patterns: path (anchored) or file name (unanchored) → (index, rule, dir_only), highest first
        self._paths: dict[str, list[tuple[int, str | None, bool]]] = {}
        self._names: dict[str, list[tuple[int, str | None, bool]]] = {}
        # glob buckets: (on the path or the name, key, rule, dir_only) → bucket
        self._globs: dict[tuple[bool, str, str | None, bool], _Bucket] = {}
        for index, (line, source) in enumerate(zip(lines, sources)):
            body = line.pattern.lstrip("/")
            anchored = "/" in line.pattern.rstrip("/")
            if not _GLOB_CHARS.intersection(body):
                table = self._paths if anchored else self._names
                table.setdefault(body, []).append((index, line.rule, line.dir_only))
                continue
            on_path = anchored or body == "**"
            if on_path:
                first = body.split("/", 1)[0]
                key = "" if _GLOB_CHARS.intersection(first) else first
            else:
                source = source[len("(?:.*/)?") :]  # a name pattern: matched against the file name
                tail = body[max(body.rfind(c) for c in "*?[]\\") + 1 :]
                key = tail.rpartition(".")[2] if "." in tail else ""
            self._globs.setdefault((on_path, key, line.rule, line.dir_only), _Bucket()).lines.append(
                (index, source)
            )
        for table in (self._paths, self._names):
            for entries in table.values():
                entries.reverse()

    def __len__(self) -> int:
        return len(self.lines)

    def __iter__(self):
        return iter(self.lines)

    def matches(self, rule: str, path: str, is_dir: bool = False) -> bool:
        parts = path.strip("/").split("/")
        # the path itself, then each directory above it
        candidates = [("/".join(parts), is_dir)] + [
            ("/".join(parts[:k]), True) for k in range(len(parts) - 1, 0, -1)
        ]
        best = -1
        for p, is_d in candidates:
            name = p.rpartition("/")[2]
            for entries in (self._paths.get(p), self._names.get(name)):
                for index, line_rule, dir_only in entries or ():
                    if index <= best:
                        break
                    if (line_rule is None or line_rule == rule) and (is_d or not dir_only):
                        best = index
                        break
            first = p.split("/", 1)[0]
            ext = name.rpartition(".")[2] if "." in name else None
            for line_rule in (None, rule):
                for dir_only in (False, True) if is_d else (False,):
                    for on_path, key, subject in (
                        (True, first, p),
                        (True, "", p),
                        (False, ext, name),
                        (False, "", name),
                    ):
                        bucket = (
                            self._globs.get((on_path, key, line_rule, dir_only)) if key is not None else None
                        )
                        if bucket is not None:
                            best = bucket.last_match(subject, best)
        return best >= 0 and not self.lines[best].negate


def parse(text: str, source: str = ".stackcheck-ignore") -> IgnoreRules:
    lines: list[IgnoreLine] = []
    sources: list[str] = []
    valid: set[str] = set()  # character classes compiled once each, to name a bad line
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
        pattern = line.rstrip("/")
        regex, classes = _translate(pattern)
        for cls in classes:
            if cls not in valid:
                try:
                    re.compile(cls)
                except re.error as exc:
                    raise InputError(f"{source}: line {number}: not a valid pattern ({exc})") from None
                valid.add(cls)
        lines.append(IgnoreLine(rule, pattern, negate, dir_only))
        sources.append(regex)
    return IgnoreRules(lines, sources)


def load(path: str) -> IgnoreRules:
    from stackcheck.fileio import read_text

    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0  # read_text names what is wrong with it
    if size > MAX_IGNORE_BYTES:
        raise InputError(
            f"{path}: {size} bytes, more than an ignore file may hold ({MAX_IGNORE_BYTES} bytes)"
        )
    return parse(read_text(path, "ignore file"), source=path)


def is_ignored(rules: IgnoreRules | list, rule: str, path: str, *, is_dir: bool = False) -> bool:
    """Whether a finding of ``rule`` about ``path`` (relative, POSIX) is accepted (an empty
    list: no ignore file)."""
    return isinstance(rules, IgnoreRules) and bool(rules) and rules.matches(rule, path, is_dir)
