"""Triage of a large regular file over worker processes, with the findings of one process.

A regular file of at least :data:`PARALLEL_MIN_BYTES` is cut at line boundaries into ranges
that start on a block of :data:`~stackcheck.triage.reader.ALIGN_LINES` lines (the blocks are
those a single pass reads, so every block is classified as it would be). This process scans
the first range while forked workers scan the others; each worker returns only what the
merge needs: its findings (the first hit of every signature, the region of the best one), its
last region and traceback, the new traceback prefixes, a collect_env block, counts, and the
state of its region extractor where its range starts and where it ends.

A worker starts :data:`WARMUP_LINES` before its range with an empty extractor: a region open
across the cut has usually been opened there exactly as the single pass opens it. The merge
goes in file order: where the state the single pass has at a cut equals the worker's state
there, the worker's results are the single pass's (the extractor's state decides everything
after it), and they are taken; otherwise (a region longer than the warm-up, or a worker that
failed) this process scans the range itself. Either way the findings, regions, line numbers and
evidence are those of one process feeding the whole file through its scan.

Memory stays bounded per process: every process streams its range as a single pass does.

Placing the cuts means counting the lines before them (~20 ms for 50 MiB). Where the rules are
still to be loaded and compiled, a forked child counts them meanwhile (:class:`SplitAhead`), so
the scan starts as soon as the rules are ready; the cuts are the same either way.
"""

from __future__ import annotations

import io
import os
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from stackcheck.errors import InputError
from stackcheck.triage.reader import ALIGN_LINES, Chunk, _bulk_chunks, iter_chunks
from stackcheck.triage.regions import RegionExtractor
from stackcheck.triage.signatures import Hit

Scan = Any  # diagnose's scan (feed, take, findings …): that module calls this one
PARALLEL_MIN_BYTES = 16 << 20  # smaller files (and pipes, stdin) are read by one process
MAX_JOBS = 4  # the merge is sequential: more workers than this gain little
MIN_RANGE_BYTES = 4 << 20  # no range is cut smaller
WARMUP_LINES = 16 * ALIGN_LINES  # a worker reads this many lines before its range …
WARMUP_BYTES = 1 << 20  # … at most this many bytes of them
# lines before the first cut: the start is read line by line up to a block boundary past the
# first 8 KiB (reader._PROBE_BYTES), which every line adds at least one byte to
MIN_SPLIT_LINES = 8192 + WARMUP_LINES
_COUNT_BYTES = 1 << 20  # read at once while counting lines
# what a line costs the scan, in bytes' worth (fitted on the halves and quarters of the 100 MiB
# mixed log of benchmarks/triage_throughput.py: 0.3-0.5 us per line besides ~4.5 ns per byte)
LINE_WORK_BYTES = 100
# … and per colour code (an ESC byte; its removal ~0.15 us), fitted on the same log's two
# ranges: the second has 2.4 times the colour codes, and its worker took 2-5 % more CPU without it
ESCAPE_WORK_BYTES = 30
SAMPLES = 64  # windows read to see where the lines are dense …
SAMPLE_BYTES = 1 << 16  # … of this many bytes each
JOBS_ENV = "STACKCHECK_TRIAGE_JOBS"


def resolve_jobs(jobs: int | None) -> int:
    """``jobs``, else ``STACKCHECK_TRIAGE_JOBS``, else the usable CPUs (at most MAX_JOBS)."""
    if jobs is None:
        value = os.environ.get(JOBS_ENV, "").strip()
        if value:
            if not value.isdigit() or int(value) < 1:
                raise InputError(
                    f"{JOBS_ENV}: expected a whole number of worker processes >= 1, got {value!r}"
                )
            return int(value)
        try:
            usable = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            usable = os.cpu_count() or 1
        return max(1, min(MAX_JOBS, usable))
    if jobs < 1:
        raise InputError(f"jobs: expected a whole number of worker processes >= 1, got {jobs}")
    return jobs


@dataclass(frozen=True)
class Cut:
    """Where a range starts: its first line number and byte offset, and where its worker's
    warm-up starts."""

    line: int
    offset: int
    warm_line: int
    warm_offset: int


@dataclass(frozen=True)
class Split:
    """A file cut into ranges: the first from ``start`` (line 1) to ``cuts[0]``, then one per cut."""

    fd: int
    start: int
    cuts: tuple[Cut, ...]


def splits_for(stream: BinaryIO, jobs: int | None) -> Split | None:
    """How to cut the regular file behind ``stream`` for ``jobs`` processes; None where one
    process reads it (one job, a pipe or a small file, no ``fork``, other threads running)."""
    found = _splittable(stream, jobs)
    if found is None:
        return None
    return _split(found, plan(*found))


def _split(found: tuple[int, int, int, int], cuts: tuple[Cut, ...]) -> Split | None:
    """The split of the file :func:`_splittable` found, at ``cuts`` (None: no cut, one process)."""
    return Split(found[0], found[1], cuts) if cuts else None


def _splittable(stream: BinaryIO, jobs: int | None) -> tuple[int, int, int, int] | None:
    """(descriptor, start, size, jobs) of a file to cut (see :func:`splits_for`), else None."""
    jobs = resolve_jobs(jobs)
    if jobs < 2 or not hasattr(os, "fork") or _other_threads():
        return None
    try:
        fd = stream.fileno()
        info = os.fstat(fd)
        start = stream.tell()
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return None
    size = info.st_size - start
    if not stat.S_ISREG(info.st_mode) or size < PARALLEL_MIN_BYTES:
        return None
    jobs = min(jobs, size // MIN_RANGE_BYTES)
    return (fd, start, size, jobs) if jobs >= 2 else None


class SplitAhead:
    """:func:`splits_for`, its lines counted by a forked child while this process does other
    work (loads and compiles the rules): the count up to the cuts (~20 ms for 50 MiB) then
    costs no time before the scan. The cuts are those :func:`plan` gives in this process (where
    the child fails, this process plans them)."""

    def __init__(self, stream: BinaryIO, jobs: int | None) -> None:
        self._found = found = _splittable(stream, jobs)
        self._child = None if found is None else _Child(lambda: plan(*found))

    def split(self) -> Split | None:
        """The split (waits for the child); None where one process reads the file."""
        found, child = self._found, self._child
        if found is None or child is None:
            return None
        import pickle

        data, self._child = child.result(), None
        if _other_threads():  # started since: forking the workers next to them is unsafe
            return None
        return _split(found, pickle.loads(data) if data else plan(*found))

    def stop(self) -> None:
        """End the child where its answer is not wanted (this process failed first)."""
        if self._child is not None:
            self._child.stop()
            self._child = None


def _other_threads() -> bool:
    """Does this process run other threads? (a fork copies only this one: a lock another
    thread holds would never be released in the worker)"""
    return threading.active_count() > 1


def plan(fd: int, start: int, size: int, jobs: int) -> tuple[Cut, ...]:
    """Cuts near the offsets that give each process about the same work (see :func:`targets`),
    each at the start of a block of lines."""
    cuts: list[Cut] = []
    counter = _LineCounter(fd, start)
    for target in targets(fd, start, size, jobs):
        lines = counter.lines_before(target)
        line = max((lines // ALIGN_LINES + 1) * ALIGN_LINES, MIN_SPLIT_LINES) + 1  # past those lines
        if cuts:
            line = max(line, cuts[-1].line + ALIGN_LINES)
        cut = counter.cut_at(line)
        if cut is None or cut.offset >= start + size:
            break
        cuts.append(cut)
    return tuple(cuts)


def targets(fd: int, start: int, size: int, jobs: int) -> list[int]:
    """The offsets that cut ``size`` bytes from ``start`` into ``jobs`` ranges of about equal
    work. The work of a stretch is its bytes plus LINE_WORK_BYTES per line and ESCAPE_WORK_BYTES
    per colour code (the scan pays per byte, per line and per code removed: a stretch of short
    or coloured lines takes longer than one of long plain lines of the same size); the lines and
    codes are estimated from SAMPLES evenly spaced windows of SAMPLE_BYTES."""
    step = size / SAMPLES
    work = []
    for k in range(SAMPLES):
        window = os.pread(fd, max(1, min(SAMPLE_BYTES, int(step))), start + int(k * step))
        extra = LINE_WORK_BYTES * window.count(b"\n") + ESCAPE_WORK_BYTES * window.count(b"\x1b")
        work.append(step * (1 + extra / max(1, len(window))))
    total, done, k = sum(work), 0.0, 0
    out: list[int] = []
    for j in range(1, jobs):
        goal = total * j / jobs
        while k < SAMPLES - 1 and done + work[k] < goal:
            done, k = done + work[k], k + 1
        out.append(start + min(size, int((k + (goal - done) / work[k]) * step)))
    return out


class _LineCounter:
    """Counts the lines of a file forward from ``start``, reading it in large pieces."""

    def __init__(self, fd: int, start: int) -> None:
        self.fd, self.start = fd, start
        self.pos, self.lines = start, 0  # lines: newlines in [start, pos)

    def lines_before(self, offset: int) -> int:
        while self.pos < offset:
            data = os.pread(self.fd, min(_COUNT_BYTES, offset - self.pos), self.pos)
            if not data:
                break
            self.lines += data.count(b"\n")
            self.pos += len(data)
        return self.lines

    def cut_at(self, line: int) -> Cut | None:
        """The cut where line ``line`` starts (None past the end), counting on to it."""
        while self.lines < line - 1:
            data = os.pread(self.fd, _COUNT_BYTES, self.pos)
            if not data:
                return None
            missing, count = line - 1 - self.lines, data.count(b"\n")
            if count < missing:
                self.lines += count
                self.pos += len(data)
                continue
            end = -1
            for _ in range(missing):
                end = data.find(b"\n", end + 1)
            self.lines, self.pos = line - 1, self.pos + end + 1
        warm_line, warm_offset = self._warm_start(line)
        return Cut(line, self.pos, warm_line, warm_offset)

    def _warm_start(self, line: int) -> tuple[int, int]:
        """The furthest block start before line ``line`` (at ``self.pos``) within the warm-up."""
        low = max(self.start, self.pos - WARMUP_BYTES)
        data = os.pread(self.fd, self.pos - low, low)
        best_line, best_offset, end = line, self.pos, len(data) - 1  # data[end] is the newline before
        for back in range(1, WARMUP_LINES + 1):
            end = data.rfind(b"\n", 0, end)
            if end == -1 and low > self.start:
                break
            if back % ALIGN_LINES == 0:
                best_line, best_offset = line - back, low + end + 1
            if end == -1:
                break
        return best_line, best_offset


class _Range(io.RawIOBase):
    """Bytes ``[offset, end)`` of a file (to its end where ``end`` is None), read with pread:
    processes that share the descriptor never move each other's position."""

    def __init__(self, fd: int, offset: int, end: int | None) -> None:
        super().__init__()
        self._fd, self._pos, self._end = fd, offset, end

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        want = len(buffer) if self._end is None else min(len(buffer), self._end - self._pos)
        if want <= 0:
            return 0
        data = os.pread(self._fd, want, self._pos)
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)


def _reader(fd: int, offset: int, end: int | None) -> BinaryIO:
    return io.BufferedReader(_Range(fd, offset, end), buffer_size=1 << 17)


def _end_of(split: Split, k: int) -> int | None:
    """Where range ``k`` (0: the first) ends; None: at the end of the file."""
    return split.cuts[k].offset if k < len(split.cuts) else None


def _range_chunks(split: Split, k: int, cut: Cut) -> Iterator[Chunk]:
    """The chunks of range ``k`` (1 or later; ``cut``: where it starts), read in bulk."""
    return _bulk_chunks(_reader(split.fd, cut.offset, _end_of(split, k)), cut.line)


def scan_ranges(split: Split, source: str, scan: Scan, extractor: RegionExtractor) -> None:
    """``scan.feed`` over the whole file, its ranges after the first scanned by workers."""
    import pickle

    workers: list[_Worker] = []
    try:
        for k, cut in enumerate(split.cuts, 1):
            workers.append(_Worker(split, k, cut, scan))
        scan.feed(iter_chunks(_reader(split.fd, split.start, _end_of(split, 0)), source), extractor)
        for k, (cut, worker) in enumerate(zip(split.cuts, workers, strict=True), 1):
            data = worker.result()
            result = pickle.loads(data) if data else None
            if result is not None and scan.whole is None and result["start"] == extractor.state():
                _continue_collect_env(split, k, cut, scan)
                _merge(scan, extractor, result)
            else:  # this process scans the range itself
                scan.feed(_range_chunks(split, k, cut), extractor)
    finally:
        for worker in workers:
            worker.stop()


class _Child:
    """A forked process that runs ``task`` and writes what it returns (pickled) to a pipe."""

    def __init__(self, task: Callable[[], object]) -> None:
        import pickle

        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: its results down the pipe, then out without any clean-up
            code = 1
            try:
                os.close(read_end)
                data = pickle.dumps(task(), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_end, "wb") as out:
                    out.write(data)
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        self._pid, self._pipe = pid, read_end

    def result(self) -> bytes:
        """All the child wrote, or b"" where it did not finish well."""
        with os.fdopen(self._pipe, "rb") as stream:
            self._pipe = -1
            data = stream.read()  # up to the end: where the child closes the pipe or exits
        _, status = os.waitpid(self._pid, 0)
        self._pid = 0
        return data if os.waitstatus_to_exitcode(status) == 0 else b""

    def stop(self) -> None:
        """End a child whose result was not read (this process failed first)."""
        import signal

        if self._pipe != -1:
            os.close(self._pipe)
            self._pipe = -1
        if self._pid:
            try:
                os.kill(self._pid, signal.SIGKILL)
                os.waitpid(self._pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self._pid = 0


class _Worker(_Child):
    """A forked process that scans one range and writes its results (pickled) to a pipe."""

    def __init__(self, split: Split, k: int, cut: Cut, scan: Scan) -> None:
        super().__init__(lambda: _work(split, k, cut, scan))


def _work(split: Split, k: int, cut: Cut, parent: Scan) -> dict:
    """Scan range ``k`` in a worker, from its warm-up on; what the merge needs of it."""
    index = parent.index
    extractor = parent.extractor()
    warm = parent.later_range()
    warm.content = True  # the warm-up's regions and bookkeeping are the previous range's
    warm.feed(_bulk_chunks(_reader(split.fd, cut.warm_offset, cut.offset), cut.warm_line), extractor)
    start = extractor.state()
    scan = parent.later_range()
    scan.prefix_steps = []
    scan.feed(_range_chunks(split, k, cut), extractor)
    position = {id(sig): n for n, sig in enumerate(index.signatures)}
    findings = {
        rule_id: (
            [
                (position[id(hit.signature)], hit.start, hit.end, hit.matched, hit.groups, finding.lines[key])
                for key, hit in finding.hits.items()
            ],
            finding.region,
        )
        for rule_id, finding in scan.findings.items()
    }
    return {
        "start": start,
        "end": extractor.state(),
        "findings": findings,
        "regions": scan.regions,
        "last_region": scan.last_region,
        "last_traceback": scan.last_traceback,
        "prefix_steps": scan.prefix_steps,
        "collect_env": (scan.collect_env, scan.collect_env_line),
        "content": scan.content,
        "lines_read": scan.lines_read,
    }


def _continue_collect_env(split: Split, k: int, cut: Cut, scan: Scan) -> None:
    """A collect_env block that started before range ``k`` takes its next lines from it."""
    last = scan.collect_env_until()
    if last < cut.line:
        return
    for chunk in _range_chunks(split, k, cut):
        for lineno, line in enumerate(chunk.lines, chunk.first):
            if lineno > last:
                return
            scan._watch_collect_env(lineno, line)


def _merge(scan: Scan, extractor: RegionExtractor, result: dict) -> None:
    """Take a worker's results as if the single pass had gone on through its range."""
    extractor.set_state(result["end"])
    signatures = scan.index.signatures
    for hits, region in result["findings"].values():
        ours = [(Hit(signatures[n], *found), line) for n, *found, line in hits]
        finding = scan.finding(ours[0][0].signature.rule)
        best = finding.best.signature.specificity if finding.hits else -1
        for hit, line in ours:
            if hit.signature.index not in finding.hits:
                finding.hits[hit.signature.index] = hit
                finding.lines[hit.signature.index] = line
        # the region of the first hit past the best so far: the worker's best one
        if max(hit.signature.specificity for hit, _ in ours) > best:
            finding.region = region
    scan.regions += result["regions"]
    scan.last_region = result["last_region"] or scan.last_region
    scan.last_traceback = result["last_traceback"] or scan.last_traceback
    for found in result["prefix_steps"]:
        if len(scan.prefixes) < 8:
            scan.prefixes |= found
    lines, line = result["collect_env"]
    if scan.collect_env is None and lines is not None:
        scan.collect_env, scan.collect_env_line = lines, line
    scan.content = scan.content or result["content"]
    scan.lines_read = max(scan.lines_read, result["lines_read"])
