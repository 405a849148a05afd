"""Failure regions: the few lines of a long output that say why it failed.

A region opens at a trigger line (a Python traceback, an error line, a CI error annotation,
an NCCL warning, a pip resolver error, a warning that announces the failure to come — NumPy 2
with a module built for NumPy 1, CUDA initialisation — or any line where a rule signature
matches, also one whose match continues on the next lines), takes a few
lines of context before it, follows a traceback to its exception line, and closes a few
quiet lines after the last trigger. Regions are produced while the input streams by, so only
the open region and a few lines of context are ever held.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import accumulate, islice

CONTEXT_BEFORE = 3  # lines kept before a trigger (the command or step that failed)
CONTEXT_AFTER = 8  # quiet lines kept after the last trigger (multi-line messages, hints)
MAX_TRACEBACK_LINES = 300  # a traceback whose exception line never comes is closed here
REGION_HEAD = 40  # an overlong region keeps its first lines …
REGION_TAIL = 160  # … and its last ones

TRACEBACK_START = "Traceback (most recent call last)"

_ERROR_PATTERN = (
    r"(?m)##\[error\]"
    r"|\b[A-Z][A-Za-z0-9_]*(?:Error|Exception)\b"
    r"|\b(?:ERRORS?|FAIL|FAILED|FAILURES?|FATAL)\b|\b(?:Error|Failure)s?\b:?|\b(?:error|fatal|fail)(?:\[\w+\])?:"
    r"|There (?:was|were) \d+ (?:failure|error)s?|\b[1-9]\d* (?:failing|failed|failures?|errors?)\b"
    r"|\bNCCL WARN\b|\bCUDA error\b|\bnccl\w*Error\b"
    r"|Segmentation fault|core dumped|^Killed\b|\bBus error\b|\baborted!"
    r"|Assertion .{0,300} failed|\bfailed on line\b|\[compilation failed\]"
    r"|exited with (?:code )?[1-9]|exit (?:code|status) [1-9]"
    r"|No matching distribution found|ResolutionImpossible|Could not find a version that satisfies"
    r"|npm ERR!|BUILD FAILED|\bFailed to\b|\bnot ok \d|\x{274c}|\bDubious\b|^Offenses:"
    # warnings without an error word that announce the failure that follows
    r"|compiled using NumPy 1\.x cannot be run in|_ARRAY_API not found|UserWarning: CUDA initialization"
)
BLOCK_LINES = 256  # lines classified together: one RE2 pass finds the few that trigger
# The last line of a Python traceback: "ValueError: …", "torch.OutOfMemoryError: …", "KeyboardInterrupt".
_EXCEPTION_LINE = re.compile(
    r"^(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Warning|Exit|Interrupt|Iteration|Fault)\b"
    r"|^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*: "
)
_CHAIN_LINE = re.compile(
    r"^(?:During handling of the above exception|The above exception was the direct cause)"
)


@lru_cache(maxsize=1)
def _error_regex():
    """The trigger pattern compiled with RE2: linear time, and one pass over a block of lines
    is ~10x faster than Python's re over each line."""
    import re2

    options = re2.Options()
    options.log_errors = False
    return re2.compile(_ERROR_PATTERN, options)


@lru_cache(maxsize=1)
def _keyword_regex():
    """The trigger pattern or a traceback's first line, over UTF-8 bytes."""
    import re2

    options = re2.Options()
    options.log_errors = False
    return re2.compile(_ERROR_PATTERN.encode() + rb"|Traceback \(most recent call last\)", options)


_TRACEBACK_BYTES = TRACEBACK_START.encode()


def keyword_kinds(text: bytes) -> tuple[dict[int, str], dict[int, int]]:
    """The trigger of each line of ``text`` (UTF-8, each line ending with a newline) from the
    error keywords and traceback starts alone, with one pass over ``text``: what
    :meth:`RegionExtractor._triggers` gives a block where no signature occurs (no alternative of
    the pattern spans a line break, so every line with a match holds a match found); and where
    each of those lines starts in ``text``."""
    kinds: dict[int, str] = {}
    starts: dict[int, int] = {}
    line, counted = 0, 0
    for m in _keyword_regex().finditer(text):
        at = m.start()  # (a Python method of the RE2 wrapper: asked once)
        line += text.count(b"\n", counted, at)
        counted = at
        if line not in kinds:
            start = text.rfind(b"\n", 0, counted) + 1
            is_traceback = _TRACEBACK_BYTES in text[start : text.find(b"\n", counted)]
            kinds[line], starts[line] = "traceback" if is_traceback else "error", start
    return kinds, starts


def is_error_line(line: str) -> bool:
    return _error_regex().search(line) is not None


def error_lines(block: str) -> set[int]:
    """Indices of the lines of ``block`` (joined with newlines) that carry an error keyword."""
    hits: set[int] = set()
    line, counted = 0, 0
    for m in _error_regex().finditer(block):
        at = m.start()
        line += block.count("\n", counted, at)
        counted = at
        hits.add(line)
    return hits


@dataclass
class FailureRegion:
    start: int  # 1-based line number of its first line
    kind: str  # traceback | error | signature
    head: list[str] = field(default_factory=list)
    tail: deque = field(default_factory=lambda: deque(maxlen=REGION_TAIL))
    elided: int = 0
    end: int = 0  # 1-based line number of its last line

    def add(self, lineno: int, line: str) -> None:
        if len(self.head) < REGION_HEAD:
            self.head.append(line)
        else:
            if len(self.tail) == self.tail.maxlen:
                self.elided += 1
            self.tail.append(line)
        self.end = lineno

    @property
    def lines(self) -> list[str]:
        middle = [f"… {self.elided} lines elided …"] if self.elided else []
        return [*self.head, *middle, *self.tail]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


class RegionExtractor:
    """Feed cleaned lines one by one; completed regions come back from :meth:`feed` and
    :meth:`finish`. ``also_trigger`` lets rule signatures open regions on lines that carry
    no error keyword (warnings such as "driver too old", "Disabling PyTorch because …")."""

    def __init__(
        self,
        also_trigger: Callable[[str], bool] | None = None,
        trigger_offsets: Callable[[str], Iterable[int]] | None = None,
    ) -> None:
        self._also = also_trigger
        self._offsets = trigger_offsets  # where matches start in a block (a match may span lines)
        self._before: deque[tuple[int, str]] = deque(maxlen=CONTEXT_BEFORE)
        self._open: FailureRegion | None = None
        self._budget = 0
        self._in_traceback = False
        self._tb_prefix = ""
        self._tb_lines = 0
        self._blank_run = 0

    def state(self) -> tuple:
        """What decides the rest of the scan (a copy): the look-back lines while no region is
        open, else the open region and where it stands (two extractors with equal states give the same
        regions from here on, whatever they were fed before)."""
        if self._open is None:
            return (tuple(self._before),)
        traceback = (self._tb_prefix, self._tb_lines) if self._in_traceback else None
        region = replace(
            self._open, head=list(self._open.head), tail=deque(self._open.tail, maxlen=REGION_TAIL)
        )
        return (tuple(self._before), region, self._budget, traceback, self._blank_run)

    def set_state(self, state: tuple) -> None:
        """Continue from ``state`` (what :meth:`state` gave, also in another process)."""
        self._before = deque(state[0], maxlen=CONTEXT_BEFORE)
        self._open, self._budget, self._in_traceback = None, 0, False
        if len(state) > 1:
            self._open, self._budget, traceback, self._blank_run = state[1:]
            self._in_traceback = traceback is not None
            if traceback is not None:
                self._tb_prefix, self._tb_lines = traceback

    def _trigger(self, line: str) -> str | None:
        if TRACEBACK_START in line:
            return "traceback"
        if is_error_line(line):
            return "error"
        if self._also is not None and self._also(line):
            return "signature"
        return None

    def _triggers(self, lines: list[str]) -> list[str | None]:
        """The trigger of each line of a block, with one RE2 pass per kind over the block."""
        block = "\n".join(lines)
        kinds: list[str | None] = [None] * len(lines)
        if self._also is not None and self._also(block):
            for i, line in enumerate(lines):
                if self._also(line):
                    kinds[i] = "signature"
            if self._offsets is not None:  # a match that continues on later lines opens at its first
                starts = list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
                for offset in self._offsets(block):
                    kinds[bisect_right(starts, offset) - 1] = "signature"
        for i in error_lines(block):
            kinds[i] = "error"
        if TRACEBACK_START in block:
            for i, line in enumerate(lines):
                if TRACEBACK_START in line:
                    kinds[i] = "traceback"
        return kinds

    def feed_block(self, first_lineno: int, lines: list[str]) -> list[FailureRegion]:
        """Feed consecutive lines starting at ``first_lineno`` (faster than line by line: while
        no region is open, the lines up to the next trigger only pass through the look-back,
        so only its last ``CONTEXT_BEFORE`` of them are fed)."""
        kinds = {i: kind for i, kind in enumerate(self._triggers(lines)) if kind is not None}
        return self.feed_kinds(first_lineno, lines, kinds)

    def feed_kinds(
        self, first_lineno: int, lines: Sequence[str], kinds: dict[int, str]
    ) -> list[FailureRegion]:
        """:meth:`feed_block` with the triggers already known: ``kinds`` maps the index of each
        line that triggers to its kind, in increasing order of the index."""
        done: list[FailureRegion] = []
        triggers = [*kinds, len(lines)]
        i = t = 0
        while i < len(lines):
            if self._open is None:
                while triggers[t] < i:
                    t += 1
                quiet_end = triggers[t]
                for k in range(max(i, quiet_end - CONTEXT_BEFORE), quiet_end):
                    self._before.append((first_lineno + k, lines[k]))
                i = quiet_end
                if i == len(lines):
                    break
            done.extend(self.feed(first_lineno + i, lines[i], kinds.get(i)))
            i += 1
        return done

    def _start_traceback(self, line: str) -> None:
        self._in_traceback = True
        # "[rank0]: Traceback …" → later lines carry the same prefix; a long one is a heading
        # (Jupyter's "IndexError      Traceback …"), not a prefix
        prefix = line[: line.index(TRACEBACK_START)]
        self._tb_prefix = prefix if len(prefix) <= 40 else ""
        self._tb_lines = 0

    def _traceback_step(self, line: str) -> None:
        """Inside a traceback: the exception line ends it (then a few lines of message follow)."""
        body = line[len(self._tb_prefix) :] if self._tb_prefix and line.startswith(self._tb_prefix) else line
        self._tb_lines += 1
        if TRACEBACK_START in body:
            self._tb_lines = 0
            return
        if not body.strip() or body[:1].isspace() or body.startswith(("File ", "Cell In", "---")):
            return
        if (
            _EXCEPTION_LINE.match(body)
            and not _CHAIN_LINE.match(body)
            or self._tb_lines >= MAX_TRACEBACK_LINES
        ):
            self._in_traceback = False
            self._budget = CONTEXT_AFTER

    def feed(self, lineno: int, line: str, kind: str | None | bool = False) -> list[FailureRegion]:
        """Feed one line; ``kind`` is its trigger when already known (see :meth:`feed_block`)."""
        done: list[FailureRegion] = []
        if kind is False:
            kind = self._trigger(line)
        region = self._open
        if region is not None:
            if self._in_traceback:
                region.add(lineno, line)
                self._traceback_step(line)
                return done
            if kind is not None:
                region.add(lineno, line)
                if kind == "traceback":
                    region.kind = "traceback"
                    self._start_traceback(line)
                self._budget = CONTEXT_AFTER
                self._blank_run = 0
                return done
            self._blank_run = self._blank_run + 1 if not line.strip() else 0
            if self._budget > 0 and self._blank_run < 2:
                region.add(lineno, line)
                self._budget -= 1
                return done
            done.append(self._close())
        if kind is not None:
            context = list(self._before)
            while context and not context[0][1].strip():
                context.pop(0)
            region = FailureRegion(start=context[0][0] if context else lineno, kind=kind)
            for n, before in context:
                region.add(n, before)
            region.add(lineno, line)
            self._before.clear()
            self._open = region
            self._budget = CONTEXT_AFTER
            self._blank_run = 0
            if kind == "traceback":
                self._start_traceback(line)
        else:
            self._before.append((lineno, line))
        return done

    def _close(self) -> FailureRegion:
        region = self._open
        assert region is not None
        self._open = None
        self._in_traceback = False
        self._budget = 0
        # drop trailing blank lines
        while region.tail and not region.tail[-1].strip():
            region.tail.pop()
            region.end -= 1
        while not region.tail and len(region.head) > 1 and not region.head[-1].strip():
            region.head.pop()
            region.end -= 1
        return region

    def finish(self) -> list[FailureRegion]:
        return [self._close()] if self._open is not None else []


def extract_regions(
    lines: Iterable[str],
    also_trigger: Callable[[str], bool] | None = None,
    trigger_offsets: Callable[[str], Iterable[int]] | None = None,
) -> Iterator[FailureRegion]:
    """All failure regions of ``lines`` in order (a convenience over :class:`RegionExtractor`)."""
    extractor = RegionExtractor(also_trigger, trigger_offsets)
    for first, block in blocks(lines):
        yield from extractor.feed_block(first, block)
    yield from extractor.finish()


def blocks(lines: Iterable[str], size: int = BLOCK_LINES, first: int = 1) -> Iterator[tuple[int, list[str]]]:
    """(first line number, lines) in blocks of ``size``, numbered from ``first``."""
    it = iter(lines)
    while block := list(islice(it, size)):
        yield first, block
        first += size
