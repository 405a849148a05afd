"""What the signatures see: a region's lines as a person reads them, without what the paste
added around the message.

Real pastes carry decorations that split or hide a message: per-line timestamps of many
loggers (ISO, Docker, Jenkins, syslog/journald, Python logging, vLLM), ``[rank3]:`` and
``(VllmWorker TP0 pid=…)`` prefixes, NCCL's ``host:pid:tid [dev]`` prefix, GitHub Actions'
``##[error]`` markers, markdown quotes and inline-code backticks, runs of spaces and tabs, and
paths that a terminal or an issue form hard-wrapped in the middle (``…-linux-gn`` /
``u.so: undefined symbol``). :func:`match_view` removes the decorations, collapses whitespace
and re-joins such paths, and remembers which input line each view line came from, so a match
is still reported at its line. The lines shown to the user (failure regions) stay as read.

Everything here is per line with anchored, bounded patterns: linear in the region's size.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

_MAX_DECORATIONS = 4  # prefixes stripped from one line at most (a timestamp, then a rank tag …)
_DECORATION = re.compile(
    "|".join(
        (
            # ISO dates with time: Docker, Jenkins "[2025-02-18T15:24:11.855Z]", glog/absl, Python logging
            r"\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z| ?[+-]\d\d:?\d\d| UTC)?\]?:?(?: -)?",
            # accelerate / logging "09/04/2024 02:49:57 -"
            r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?: -)?",
            # "[21:34:20]", sdnext "23:58:13-803766"
            r"\[?\d\d:\d\d:\d\d(?:[.,]\d{1,9})?\]?(?:-\d{1,9})?(?: -)?",
            # vLLM / SGLang logger: "ERROR 08-25 01:25:18 [multiproc_executor.py:602]"
            r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,9})?"
            r" \[[\w./-]{1,128}:\d{1,7}\]",
            # syslog / journald: "May 16 17:44:49 host unit[6012]:"
            r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [\w.-]{1,64} [\w.@/-]{1,64}(?:\[\d{1,10}\])?:",
            r"\[(?:rank|RANK|Rank) ?\d{1,6}\]:?",  # torchrun "[rank3]:"
            r"\[default\d{1,6}\]:",  # torchrun --tee "[default0]:"
            r"\[\d{1,6},\d{1,6}\]<(?:stdout|stderr)>:",  # Open MPI "[1,0]<stderr>:"
            # vLLM / Ray workers: "(VllmWorker TP0 pid=9311)", "(RayWorkerWrapper pid=7106, ip=10.0.0.1)"
            r"\([A-Za-z][\w.-]{0,40}(?: [\w.-]{1,20}){0,3} pid=\d{1,10}(?:, ip=[\w.:-]{1,64})?\)",
            r"[\w.-]{1,128}:\d{1,10}:\d{1,10} \[\d{1,4}\]",  # NCCL "host:pid:tid [dev]"
            r"##\[(?:error|warning|notice|debug|group|endgroup|section|command)\]",  # GitHub Actions
            r"> ",  # a markdown quote
        )
    )
)
_SPACE = re.compile(r"[ \t\u00a0\u3000]+")
# the last word of a line that a wrap split inside a path, and the first word of its continuation
_PATH_TAIL = re.compile(r"(?:[A-Za-z]:)?[\w.~+-]*[/\\][\w.+/\\-]*")  # fullmatch of the last word
_PATH_HEAD = re.compile(r"[\w.+-]*(?:[/\\][\w.+-]*)*")
_FILE_END = re.compile(r"\.(?:so(?:\.\d+)*|dll|dylib|pyd|py|pyx|h|hpp|c|cc|cpp|cu|cuh)$")
_MAX_JOINED = 512  # a "path" longer than this is not a wrapped path


def strip_decorations(line: str) -> str:
    """One line without the prefixes loggers and launchers add, its inline-code backticks and
    its extra whitespace: ``[rank0]: 2024-05-01 10:00:00 ImportError: x`` → ``ImportError: x``."""
    text = line.strip()
    for _ in range(_MAX_DECORATIONS):
        m = _DECORATION.match(text)
        if m is None or not m.end():
            break
        text = text[m.end() :].lstrip()
    if text.startswith("`"):
        text = text.strip("`").strip()
    # without a tab, a wide space or two spaces in a row, every run is one space (and sub is costly)
    if "  " in text or "\t" in text or "\u00a0" in text or "\u3000" in text:
        text = _SPACE.sub(" ", text)
    return text


def _continues_path(previous: str, following: str) -> bool:
    """Does ``previous`` end inside a path that a hard wrap split, and ``following`` start with
    the rest of it (the two pieces together name a file, neither alone does)?"""
    last = previous.rpartition(" ")[2]
    if "/" not in last and "\\" not in last:  # what _PATH_TAIL demands, tested first (cheaper)
        return False
    if len(last) > _MAX_JOINED or not _PATH_TAIL.fullmatch(last) or _FILE_END.search(last):
        return False  # not a path, or a complete file name already
    head = _PATH_HEAD.match(following)
    piece = head.group(0) if head else ""
    joined = last + piece
    return bool(piece) and len(joined) <= _MAX_JOINED and _FILE_END.search(joined) is not None


@dataclass
class MatchView:
    """The normalized text of some lines, and where each of its lines came from."""

    text: str
    starts: list[int]  # offset of each view line in ``text``
    origins: list[int]  # index (into the lines given) of the first line each view line holds

    def origin(self, offset: int) -> int:
        """Index of the given line that the character at ``offset`` of ``text`` came from."""
        return self.origins[max(0, bisect_right(self.starts, offset) - 1)]


def match_view(lines: list[str]) -> MatchView:
    """Lines as the signatures should see them (see the module docstring)."""
    out: list[str] = []
    origins: list[int] = []
    for i, raw in enumerate(lines):
        line = strip_decorations(raw)
        if out and out[-1] and line and not raw[:1].isspace() and _continues_path(out[-1], line):
            out[-1] += line  # the wrapped rest of the path and whatever follows it
            continue
        out.append(line)
        origins.append(i)
    starts, offset = [], 0
    for line in out:
        starts.append(offset)
        offset += len(line) + 1
    return MatchView("\n".join(out), starts, origins)
