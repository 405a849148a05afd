"""One CI job's log → its failures (signatures), its environment facts and its outcome.

The log streams through once. Triage's region extraction (:mod:`stackcheck.triage.regions`)
finds the failure regions; mining adds one kind of its own, the last lines of every step that
exited non-zero (``step``), because a build's reason is most often printed just before its
step gives up, whatever the tool. pytest's own report is read by
:class:`~stackcheck.mining.pytest_output.PytestWatcher` (node IDs, whole messages, frames);
a Python traceback elsewhere gives exception, message and frames; any other error region
gives its first error line. Step ends and summaries ("exit code 1", "3 failed") never make
a signature of their own: they say *that* a job failed, not why.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from stackcheck.mining.envfacts import EnvWatcher
from stackcheck.mining.pytest_output import PytestWatcher
from stackcheck.mining.signature import TOP_FRAMES, Failure, frame_name, in_app
from stackcheck.redaction import redact_value
from stackcheck.triage.regions import FailureRegion, RegionExtractor, blocks, is_error_line

__all__ = ["JobScan", "mining_regions", "scan_lines"]

STEP_TAIL_LINES = 20  # lines before a step's non-zero exit that make a "step" region
MAX_REGION_FAILURES = 50  # failures taken from regions outside pytest's report, per job

_STEP_END = re.compile(
    r"Process completed with exit code [1-9]|exited with (?:code )?[1-9]|exit (?:code|status) [1-9]"
    r"|Done\. Your build exited with [1-9]"
)
_GENERIC = re.compile(
    r"Process completed with exit code|exited with (?:code )?-?\d|exit (?:code|status) -?\d"
    r"|^Error: Process completed"
    r"|^make(?:\[\d+\])?: \*\*\* |^ERROR: InvocationError|^=+ .* =+$|^(?:FAILED|ERROR) \S+(?: - |$)"
    r"|short test summary info|^npm ERR! (?:code|errno|A complete log|Exit status|Failed at)"
    r"|^The command .* exited"
    r"|^FAILURES?!*$|^BUILD FAILED$|^\d+ (?:failed|passed|errors?)\b|^Error: The operation was canceled"
    r"|^##\[error\]The (?:operation|job) was canceled"
)
_ANNOTATION = re.compile(r"^(?:##\[error\]|::error(?: [^:]*)?::|\[error\]\s*|error:\s+|ERROR:\s+|E\s{3,})")
_EXCEPTION_LINE = re.compile(
    r"^((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Warning|Exit|Interrupt|Fault))"
    r"(?:: (.*))?$|^((?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*): (.*)$"
)
_FILE_FRAME = re.compile(r'^\s*File "([^"]+)", line \d+, in (\S+)')
_CHAIN = ("During handling of the above exception", "The above exception was the direct cause")
_TRACEBACK = "Traceback (most recent call last)"


def mining_regions(lines: Iterable[str]) -> Iterator[FailureRegion]:
    """Triage's failure regions of ``lines``, and a ``step`` region of the last
    :data:`STEP_TAIL_LINES` lines before each non-zero step end, in order of completion."""
    extractor = RegionExtractor()
    tail: deque[tuple[int, str]] = deque(maxlen=STEP_TAIL_LINES)
    for first, block in blocks(lines):
        yield from extractor.feed_block(first, block)
        yield from _step_regions(first, block, tail)
    yield from extractor.finish()


def _step_regions(first: int, block: list[str], tail: deque) -> Iterator[FailureRegion]:
    text = "\n".join(block)
    ends = {text.count("\n", 0, m.start()) for m in _STEP_END.finditer(text)} if "xit" in text else set()
    if not ends:
        tail.extend(zip(range(first, first + len(block)), block))
        return
    for offset, line in enumerate(block):
        if offset in ends and tail:
            region = FailureRegion(start=tail[0][0], kind="step")
            for n, before in tail:
                region.add(n, before)
            tail.clear()
            yield region
        else:
            tail.append((first + offset, line))


@dataclass
class JobScan:
    """What one pass over a job's log found."""

    failures: dict[str, Failure] = field(default_factory=dict)  # key → first failure with it
    counts: dict[str, int] = field(default_factory=dict)  # key → occurrences
    facts: dict[str, str] = field(default_factory=dict)
    failed_marker: bool = False  # a step exited non-zero, or the runner annotated an error
    pytest_result: str = ""
    lines: int = 0
    regions: int = 0

    def add(self, failure: Failure) -> None:
        key = failure.key
        self.counts[key] = self.counts.get(key, 0) + 1
        self.failures.setdefault(key, failure)

    @property
    def failed(self) -> bool:
        r = self.pytest_result
        return self.failed_marker or " failed" in f" {r}" or " error" in f" {r}"


def scan_lines(lines: Iterable[str]) -> JobScan:
    """Scan a job's cleaned lines (see :func:`stackcheck.triage.reader.iter_lines`)."""
    scan = JobScan()
    pytest = PytestWatcher()
    env = EnvWatcher()
    extractor = RegionExtractor()
    tail: deque[tuple[int, str]] = deque(maxlen=STEP_TAIL_LINES)
    pending: list[tuple[FailureRegion, Failure]] = []
    steps: list[FailureRegion] = []
    last = 0
    for first, block in blocks(lines):
        last = first + len(block) - 1
        for offset, line in enumerate(block):
            pytest.feed(first + offset, line)
            env.feed(line)
        done = extractor.feed_block(first, block)
        done.extend(_step_regions(first, block, tail))
        for region in done:
            _take(scan, region, pending, steps)
    for region in extractor.finish():
        _take(scan, region, pending, steps)
    scan.lines = last
    scan.facts = redact_value(env.finish())  # a pip freeze line may name a URL with a token
    scan.pytest_result = pytest.result
    for failure in pytest.failures():
        scan.add(failure)
    lo, hi = pytest.span
    for region, failure in pending:  # what pytest's own report holds is counted once, above
        if not (lo and region.start <= hi and region.end >= lo):
            scan.add(failure)
    if scan.failed and not scan.failures and steps:
        step_failure = _step_failure(steps[-1])
        if step_failure is not None:
            scan.add(step_failure)
    return scan


def _take(scan: JobScan, region: FailureRegion, pending: list, steps: list) -> None:
    scan.regions += 1
    if region.kind == "step":
        scan.failed_marker = True
        steps[:] = [region]
        return
    lines = region.lines
    if not scan.failed_marker and any(line.startswith("##[error]") for line in lines):
        scan.failed_marker = True
    if len(pending) >= MAX_REGION_FAILURES:
        return
    failure = (
        _traceback_failure(region, lines) if region.kind == "traceback" else _error_failure(region, lines)
    )
    if failure is not None:
        pending.append((region, failure))


def _traceback_failure(region: FailureRegion, lines: list[str]) -> Failure | None:
    """The exception of a Python traceback: its last exception line, and the in-app frames of
    the traceback that raised it (innermost first)."""
    frames: list[str] = []
    exception = None
    for offset, line in enumerate(lines):
        body = line.split("]: ", 1)[1] if line.startswith("[rank") and "]: " in line else line
        if _TRACEBACK in body:
            frames = []
            continue
        m = _FILE_FRAME.match(body)
        if m:
            if in_app(m.group(1)):
                frames.append(frame_name(m.group(1), m.group(2)))
            continue
        if body[:1].isspace() or body.startswith(_CHAIN):
            continue
        e = _EXCEPTION_LINE.match(body.strip())
        if e:
            exception = (
                e.group(1) or e.group(3),
                e.group(2) or e.group(4) or "",
                offset,
                tuple(reversed(frames)),
            )
    if exception is None:
        return _error_failure(region, lines)
    name, message, offset, tb_frames = exception
    return Failure(name, message, tb_frames[:TOP_FRAMES], line=_line_at(region, offset), kind="traceback")


def _error_failure(region: FailureRegion, lines: list[str]) -> Failure | None:
    """The first error line of a region that says more than "it failed"."""
    for offset, line in enumerate(lines):
        text = line.strip()
        if not text or _GENERIC.search(text) or not is_error_line(text):
            continue
        text = _ANNOTATION.sub("", text, count=1).strip()
        if not text or _GENERIC.search(text):
            continue
        e = _EXCEPTION_LINE.match(text)
        if e and (e.group(2) or e.group(4)):
            return Failure(
                e.group(1) or e.group(3),
                e.group(2) or e.group(4),
                line=_line_at(region, offset),
                kind="error",
            )
        return Failure("", text, line=_line_at(region, offset), kind="error")
    return None


def _step_failure(region: FailureRegion) -> Failure | None:
    """A failed job with no other failure: the last telling line before its step gave up."""
    lines = region.lines
    for offset in range(len(lines) - 1, -1, -1):
        text = _ANNOTATION.sub("", lines[offset].strip(), count=1).strip()
        if text and not _GENERIC.search(text) and not text.startswith(("##[", "…")):
            return Failure("", text, line=_line_at(region, offset), kind="step")
    return None


def _line_at(region: FailureRegion, offset: int) -> int:
    head = len(region.head)
    if offset < head:
        return region.start + offset
    return region.end - (len(region.lines) - 1 - offset)
