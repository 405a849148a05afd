"""pytest's terminal output, read as it streams by: which tests failed, with what, where.

pytest prints each failure in a section (``____ test_name ____``) with ``E`` lines for the
exception and ``path:line: in function`` lines for the frames, then a short summary
(``FAILED tests/x.py::test_name - Error: message…``, whose message it cuts to the terminal
width). The section gives the whole message and the frames; the summary gives the node ID.
The same text is the body of a JUnit ``<failure>``, so the JUnit reader parses it here too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from stackcheck.mining.signature import TOP_FRAMES, Failure, frame_name, in_app

__all__ = ["PytestWatcher", "parse_longrepr"]

MAX_SECTIONS = 200  # failures kept per job
MAX_E_LINES = 8

_SECTION = re.compile(r"^={3,} ?(FAILURES|ERRORS|short test summary info|warnings summary|.*) ?={3,}$")
_TEST_HEADER = re.compile(r"^_{3,} (.+?) _{3,}$")
_E_LINE = re.compile(r"^E(?:\s+(.*)|$)")
_LOCATION = re.compile(r"^(\S+?\.py):(\d+):(?: in (\S+)| ([A-Za-z_][\w.]*)(?:: (.*))?)?\s*$")
_DEF = re.compile(r"^\s*(?:async\s+)?def (\w+)\(")
_SUMMARY = re.compile(r"^(FAILED|ERROR) (\S+)(?: - (.*))?$")
_RESULT = re.compile(
    r"^=+ (.*\b(?:passed|failed|errors?|skipped|deselected|no tests ran)\b.*) in [\d.]+s\b.* =+$"
)
_EXC_MESSAGE = re.compile(r"^((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*): (.*)$")
_ERROR_HEADER = re.compile(r"^ERROR (?:at (?:setup|teardown) of|collecting) (.+)$")


@dataclass
class _Section:
    name: str
    line: int
    e_lines: list[tuple[int, str]] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)  # outermost first, as pytest prints them
    exception: str = ""
    function: str = ""  # the last ``def`` seen: the function of a location line without "in"
    test_file: str = ""

    def failure(self, test: str) -> Failure:
        exception, message, line = self.exception, "", self.line
        for n, text in self.e_lines:
            m = _EXC_MESSAGE.match(text)
            if m and (not exception or m.group(1).split(".")[-1] == exception.split(".")[-1]):
                exception, message, line = m.group(1), m.group(2), n
                break
        else:
            if self.e_lines:
                line, message = self.e_lines[0]
        frames = tuple(reversed(self.frames))[:TOP_FRAMES]
        return Failure(exception, message, frames, test=test, line=line, kind="pytest")


class PytestWatcher:
    """Feed every line; :meth:`failures` at the end. Knows nothing of other tools' output."""

    def __init__(self) -> None:
        self._where = ""  # the section pytest is printing: FAILURES, ERRORS, summary …
        self._current: _Section | None = None
        self._sections: dict[str, _Section] = {}
        self._summary: list[tuple[str, str, int]] = []  # (node ID, message, line)
        self.result = ""  # "3 failed, 3 passed" from the last result line
        self.span = (0, 0)  # first and last line of pytest's failure report

    def feed(self, lineno: int, line: str) -> None:
        if line.startswith("="):
            m = _SECTION.match(line)
            if m:
                self._close()
                self._where = m.group(1).strip()
                if self._where in ("FAILURES", "ERRORS") and not self.span[0]:
                    self.span = (lineno, lineno)
                r = _RESULT.match(line)
                if r:
                    self.result = r.group(1).strip()
                    self._where = ""
                    if self.span[0]:
                        self.span = (self.span[0], lineno)
                return
        where = self._where
        if where in ("FAILURES", "ERRORS"):
            self._section_line(lineno, line)
        elif where == "short test summary info":
            m = _SUMMARY.match(line)
            if m and len(self._summary) < MAX_SECTIONS:
                self._summary.append((m.group(2), (m.group(3) or "").removesuffix("..."), lineno))

    def _section_line(self, lineno: int, line: str) -> None:
        if line.startswith("___"):
            m = _TEST_HEADER.match(line)
            if m:
                self._close()
                name = m.group(1)
                e = _ERROR_HEADER.match(name)
                if len(self._sections) < MAX_SECTIONS:
                    self._current = _Section(e.group(1) if e else name, lineno)
                return
        if self._current is not None:
            _body_line(self._current, lineno, line)

    def _close(self) -> None:
        if self._current is not None:
            self._sections.setdefault(self._current.name, self._current)
            self._current = None

    def failures(self) -> list[Failure]:
        """One failure per failed test: the summary's node IDs joined with their sections;
        a section without a summary line (``-r`` off) still counts, named by its file."""
        self._close()
        out: list[Failure] = []
        used: set[str] = set()
        for node, head, line in self._summary:
            name = node.split("::", 1)[1].replace("::", ".") if "::" in node else node
            section = self._sections.get(name) or self._sections.get(node)
            if section is not None:
                used.add(section.name)
                out.append(section.failure(node))
            else:
                m = _EXC_MESSAGE.match(head)
                exception, message = (m.group(1), m.group(2)) if m else ("", head)
                out.append(Failure(exception, message, test=node, line=line, kind="pytest"))
        for name, section in self._sections.items():
            if name not in used:
                test = f"{section.test_file}::{name.replace('.', '::')}" if section.test_file else name
                out.append(section.failure(test))
        return out


def _body_line(section: _Section, lineno: int, line: str) -> None:
    """A line of one test's report: an ``E`` line, a ``def``, a location."""
    if line.startswith("E"):
        m = _E_LINE.match(line)
        if m and m.group(1) and len(section.e_lines) < MAX_E_LINES:
            section.e_lines.append((lineno, m.group(1).strip()))
        return
    m = _DEF.match(line)
    if m:
        section.function = m.group(1)
    elif ".py:" in line:
        _location(section, lineno, line)


def _location(section: _Section, lineno: int, line: str) -> None:
    """A ``path:line: in function`` line: a frame, and at the end the exception type."""
    m = _LOCATION.match(line.strip())
    if not m:
        return
    path, function, exception, message = m.group(1), m.group(3), m.group(4), m.group(5)
    function = function or section.function
    if not section.test_file and "test" in path.rsplit("/", 1)[-1]:
        section.test_file = path
    if exception:
        section.exception = exception
        if message is not None and not section.e_lines:  # --tb=line: "path:N: Error: message"
            section.e_lines.append((lineno, f"{exception}: {message}"))
    if in_app(path) and len(section.frames) < 64:
        name = frame_name(path, function)
        if not section.frames or section.frames[-1] != name:
            section.frames.append(name)


def parse_longrepr(text: str, test: str, line: int = 0) -> Failure:
    """The failure in a JUnit ``<failure>`` body (pytest's report of one test)."""
    section = _Section(test, line)
    for raw in text.splitlines():
        _body_line(section, line, raw)
    return section.failure(test)
