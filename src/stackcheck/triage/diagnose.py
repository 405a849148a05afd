"""Error text in, ranked known causes out.

The input streams through once: lines are cleaned, failure regions extracted and matched as
they complete, and only the best evidence per rule is kept, so memory stays bounded whatever
the size of the log. Short inputs are also matched as a whole (a one-line paste has no
"region"). Signatures see each region through :mod:`stackcheck.triage.normalize` (no
timestamps, rank prefixes or CI markers; hard-wrapped paths re-joined). The environment the
causes are judged against is, in order of preference: a collect_env block found inside the
input, the snapshot the caller gives, the live environment — gathered only when something
matched, and used only when the input shows it comes from this machine (its traceback frames
or interpreter path are this environment's); otherwise the matches are left ``unknown``.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import BinaryIO

from stackcheck.errors import InputError
from stackcheck.models.rule import Rule, Scope
from stackcheck.models.snapshot import Snapshot
from stackcheck.redaction import redact_value
from stackcheck.requirements import DistIndex
from stackcheck.triage import culprits  # noqa: F401 - registers the interpreters of family rules
from stackcheck.triage.evidence import belongs_to, read, traceback_environments
from stackcheck.triage.model import Diagnosis, TriageMatch
from stackcheck.triage.normalize import match_view
from stackcheck.triage.ranking import environment_verdict, score, shifted_confidence
from stackcheck.triage.reader import Chunk, TextLines, iter_chunks
from stackcheck.triage.regions import FailureRegion, RegionExtractor, blocks, keyword_kinds
from stackcheck.triage.signatures import Hit, Signature, SignatureIndex

WHOLE_TEXT_LIMIT = 256 * 1024  # inputs up to this size are also matched as a whole
COLLECT_ENV_LINES = 400  # lines kept after a collect_env heading
REGION_DISPLAY_LINES = 60  # a no-match failure region is shown with at most this many lines
_DECODE_ALL_TRIGGERS = 4  # a chunk with this many trigger lines is decoded whole, not line by line
_COLLECT_ENV_START = re.compile(r"^\W*(?:Collecting environment information|PyTorch version: )")
_COLLECT_ENV_HINTS = ("Collecting environment information", "PyTorch version: ")
_COLLECT_ENV_HINT_BYTES = tuple(hint.encode() for hint in _COLLECT_ENV_HINTS)


@dataclass
class _RuleFinding:
    """The best evidence for one rule so far: which signatures hit, where, and the region."""

    rule: Rule
    hits: dict[int, Hit] = field(default_factory=dict)  # signature index → first hit
    lines: dict[int, int] = field(default_factory=dict)  # signature index → input line
    region: FailureRegion | None = None

    def add(self, hit: Hit, line: int, region: FailureRegion) -> None:
        if hit.signature.index not in self.hits:
            self.hits[hit.signature.index] = hit
            self.lines[hit.signature.index] = line
        best = max(self.hits.values(), key=lambda h: h.signature.specificity)
        if best is hit or self.region is None:
            self.region = region

    @property
    def signatures(self) -> list[Signature]:
        return [h.signature for h in self.hits.values()]

    @property
    def best(self) -> Hit:
        return max(self.hits.values(), key=lambda h: h.signature.specificity)


_COMPILED: set[tuple] = set()  # the keys _loaded_signatures compiled (its cache may have let go of some)


@lru_cache(maxsize=8)
def _loaded_signatures(key: tuple) -> SignatureIndex:
    """The compiled signatures of the knowledge base ``key`` names, once per process (the key
    :func:`~stackcheck.knowledge.load_knowledge` caches it by: directory and extra rule files)."""
    from stackcheck import factcache
    from stackcheck.knowledge import load_knowledge

    directory, extra = key
    paths = [path for path, _, _ in extra]
    # the forms derived from the patterns kept between runs, a file per knowledge base
    where = factcache.digest(str(directory), *map(str, paths))[:20]
    index = SignatureIndex(
        load_knowledge(directory, paths).rules, cached_as=f"facts/triage-forms-{where}.json"
    )
    _COMPILED.add(key)
    return index


def loaded_signatures() -> SignatureIndex:
    """The compiled signatures of the loaded knowledge base (its rules compiled once)."""
    from stackcheck.knowledge import knowledge_key

    return _loaded_signatures(knowledge_key())


def _line_of(region: FailureRegion, index: int) -> int:
    """Input line number of the line at ``index`` of ``region.lines``."""
    head = len(region.head)
    if index < head:
        return region.start + index
    shown = len(region.lines)
    return region.end - (shown - 1 - index)


class _Scan:
    """State of one pass over the input."""

    def __init__(self, index: SignatureIndex, *, whole: bool = True) -> None:
        self.index = index
        self.findings: dict[str, _RuleFinding] = {}
        self.regions = 0
        self.last_region: FailureRegion | None = None
        self.last_traceback: FailureRegion | None = None
        self.collect_env: list[str] | None = None
        self.collect_env_line = 0
        self.whole: list[str] | None = [] if whole else None  # all lines while the input is short
        self.whole_size = 0
        self.content = False
        self.lines_read = 0
        self.prefixes: set[str] = set()  # environments the input's traceback frames come from
        self.prefix_steps: list[set[str]] | None = None  # where kept: each region's new prefixes

    def later_range(self) -> _Scan:
        """A scan of a later part of the same input (which is then not short)."""
        return _Scan(self.index, whole=False)

    def extractor(self) -> RegionExtractor:
        """The region extractor of a scan: rule signatures open regions too."""
        return RegionExtractor(also_trigger=self.index.occurs_in, trigger_offsets=self.index.match_starts)

    def feed(self, chunks: Iterable[Chunk], extractor: RegionExtractor) -> None:
        """Feed ``chunks`` through ``extractor``, taking every region that completes."""
        for chunk in chunks:
            if chunk.text is not None and self.quiet(chunk.text) and not self.index.occurs_in(chunk.text):
                # no signature anywhere in it: one pass finds the lines that trigger a region, and
                # only the lines around them are decoded
                kinds, starts = keyword_kinds(chunk.text)
                lazy = TextLines(chunk.text, len(chunk.lines), starts)
                # with many trigger lines, one decode of it all costs less
                lines: Sequence[str] = lazy.all() if len(kinds) >= _DECODE_ALL_TRIGGERS else lazy
                self.lines_read = chunk.first + len(lines) - 1
                for region in extractor.feed_kinds(chunk.first, lines, kinds):
                    self.take(region)
                continue
            for first, block in blocks(chunk.lines, first=chunk.first):
                self.read(first, block)
                for region in extractor.feed_block(first, block):
                    self.take(region)

    def finding(self, rule: Rule) -> _RuleFinding:
        """The finding of ``rule``, new where there was none."""
        return self.findings.setdefault(rule.id, _RuleFinding(rule))

    def collect_env_until(self) -> int:
        """The last line a collect_env block under way still takes (0: none is)."""
        if self.collect_env is None or len(self.collect_env) >= COLLECT_ENV_LINES:
            return 0
        return self.collect_env_line + COLLECT_ENV_LINES - 1

    def take(self, region: FailureRegion) -> None:
        self.regions += 1
        self.last_region = region
        if region.kind == "traceback":
            self.last_traceback = region
        if len(self.prefixes) < 8:
            found = traceback_environments(region.text)
            if self.prefix_steps is not None and not found <= self.prefixes:
                self.prefix_steps.append(found)
            self.prefixes |= found
        view = match_view(region.lines)
        for hit in self.index.search(view.text):
            finding = self.finding(hit.signature.rule)
            finding.add(hit, _line_of(region, view.origin(hit.start)), region)

    def read(self, first: int, block: list[str]) -> None:
        """Bookkeeping of a block of lines besides regions: content, the whole text of a short
        input, a collect_env block."""
        self.lines_read = first + len(block) - 1
        self.content = self.content or any(line.strip() for line in block)
        if self.whole is not None:
            self.whole_size += sum(len(line) + 1 for line in block)
            self.whole = self.whole + block if self.whole_size <= WHOLE_TEXT_LIMIT else None
        if self.collect_env is None:
            joined = "\n".join(block)  # one search per block, not per line
            if not any(hint in joined for hint in _COLLECT_ENV_HINTS):
                return
        for lineno, line in enumerate(block, first):
            self._watch_collect_env(lineno, line)

    def quiet(self, text: bytes) -> bool:
        """Would :meth:`read` only count the lines of ``text``? (the content is known, the input
        is no longer short, and no collect_env block starts or continues there)"""
        if not self.content or self.whole is not None:
            return False
        if self.collect_env is not None:
            return self.collect_env_line + COLLECT_ENV_LINES <= self.lines_read + 1
        return not any(hint in text for hint in _COLLECT_ENV_HINT_BYTES)

    def _watch_collect_env(self, lineno: int, line: str) -> None:
        if self.collect_env is None:
            if _COLLECT_ENV_START.match(line):
                self.collect_env, self.collect_env_line = [line], lineno
        elif len(self.collect_env) < COLLECT_ENV_LINES and self.collect_env_line + COLLECT_ENV_LINES > lineno:
            self.collect_env.append(line)


def triage_stream(
    stream: BinaryIO,
    *,
    source: str = "<input>",
    rules: list[Rule] | None = None,
    knowledge=None,
    snapshot: Snapshot | None = None,
    environment_source: str | None = None,
    live_environment: Callable[[], Snapshot] | None = None,
    signatures: SignatureIndex | None = None,
    jobs: int | None = None,
) -> Diagnosis:
    """Diagnose the error text in ``stream`` (bytes). ``snapshot`` is the environment to judge
    against (``environment_source`` says where it came from); ``live_environment`` is called
    only when no other environment is known and something matched. ``signatures``: the
    compiled signatures of ``rules`` (or of ``knowledge``'s rules), for a caller that triages
    many texts with one rule list; those of the loaded knowledge base are compiled once.
    ``jobs``: worker processes for a large regular file (see :mod:`stackcheck.triage.parallel`;
    None: ``STACKCHECK_TRIAGE_JOBS`` or the usable CPUs, 1: one process)."""
    from stackcheck.triage import parallel

    ahead = None
    if signatures is None and rules is None and knowledge is None:
        from stackcheck.knowledge import knowledge_key

        key = knowledge_key()
        if key not in _COMPILED:  # the lines to the cuts counted while the rules load and compile
            ahead = parallel.SplitAhead(stream, jobs)
    try:
        if signatures is None:
            if rules is not None:
                signatures = SignatureIndex(rules)
            elif knowledge is not None:
                signatures = SignatureIndex(knowledge.rules)
            else:
                from stackcheck.knowledge import load_knowledge

                knowledge = load_knowledge()
                signatures = _loaded_signatures(key)
        scan = _Scan(signatures)
        extractor = scan.extractor()
    except BaseException:  # the child counting ahead is stopped and reaped, never left behind
        if ahead is not None:
            ahead.stop()
        raise
    split = ahead.split() if ahead is not None else parallel.splits_for(stream, jobs)
    if split is not None:  # a large regular file: its ranges scanned by worker processes
        parallel.scan_ranges(split, source, scan, extractor)
    else:
        scan.feed(iter_chunks(stream, source), extractor)
    for region in extractor.finish():
        scan.take(region)
    if not scan.content:
        raise InputError(f"{source}: only blank lines, expected an error text, traceback or log")
    if scan.whole is not None:
        _match_whole(scan, scan.whole)

    env = _environment(scan, source, snapshot, environment_source, live_environment)
    snapshot = env.snapshot
    if (
        snapshot is not None
        and knowledge is None
        and any(f.rule.scope != Scope() for f in scan.findings.values())
    ):
        from stackcheck.knowledge import load_knowledge

        knowledge = load_knowledge()
    dists = DistIndex(snapshot) if snapshot is not None and scan.findings else None  # once for all matches
    matches = [_to_match(f, snapshot, knowledge, env.unjudged, dists) for f in scan.findings.values()]
    # a family (a kind of failure) never outranks a specific known cause
    matches.sort(key=lambda m: (m.layer == "family", -m.score, m.line, m.rule_id))
    shown = _shown_region(scan, matches, scan.whole)
    # the output stage: a log quotes tokens (Authorization headers, HF_TOKEN=…, URLs with
    # credentials); evidence, fixes and the shown region are redacted before anyone sees them
    return redact_value(
        Diagnosis(
            matches=matches,
            failure_region=shown.text if shown else "",
            failure_region_lines=[shown.start, shown.end] if shown else [],
            failure_region_kind=shown.kind if shown else "",
            environment_source=env.source,
            environment_why=env.why,
            regions_found=scan.regions,
            lines_read=scan.lines_read,
            source=source,
        )
    )


def triage_text(text: str, **kwargs) -> Diagnosis:
    """Diagnose an error text given as a string (see :func:`triage_stream`)."""
    return triage_stream(io.BytesIO(text.encode("utf-8", errors="replace")), **kwargs)


def _match_whole(scan: _Scan, lines: list[str]) -> None:
    """A short input is also matched as a whole: catches messages no region trigger saw and
    signatures that span regions."""
    view = match_view(lines)
    for hit in scan.index.search(view.text):
        line = view.origin(hit.start) + 1
        finding = scan.findings.get(hit.signature.rule.id)
        if finding is None:
            finding = scan.findings[hit.signature.rule.id] = _RuleFinding(hit.signature.rule)
            finding.add(hit, line, _around(lines, line))
        elif hit.signature.index not in finding.hits:
            finding.add(hit, line, finding.region or _around(lines, 1))


def _around(lines: list[str], line: int, before: int = 3, after: int = 8) -> FailureRegion:
    region = FailureRegion(start=max(1, line - before), kind="whole")
    for n in range(region.start, min(len(lines), line + after) + 1):
        region.add(n, lines[n - 1])
    return region


@dataclass
class _Environment:
    snapshot: Snapshot | None
    source: str  # where the facts come from (Diagnosis.environment_source)
    why: str = ""  # for the live environment: what in the input shows it comes from this machine
    unjudged: str = "not-judged"  # the verdict of every match when there is no snapshot


# interpreter prefixes every Debian/Ubuntu/Docker python has: finding one in a paste does not
# show that the paste comes from this machine
_SHARED_PREFIXES = ("/usr", "/usr/local", "/")
_SHARED_BIN_DIRS = ("/usr/bin/", "/usr/local/bin/", "/bin/")


def _environment(scan: _Scan, source: str, snapshot, environment_source, live) -> _Environment:
    embedded = _embedded_collect_env(scan, source)
    if embedded is not None:
        return _Environment(embedded, f"collect_env block in the input (line {scan.collect_env_line})")
    if snapshot is not None:
        return _Environment(snapshot, environment_source or "given snapshot")
    if live is not None and scan.findings:
        current = live()
        why = _from_this_machine(scan, current)
        if why:
            return _Environment(current, "live environment", why)
        foreign = sorted(p for p in scan.prefixes if not belongs_to(p, current))
        if foreign and len(foreign) == len(scan.prefixes):
            # the error happened elsewhere: judging it by this machine would mislead
            return _Environment(
                None, f"none (the input comes from {foreign[0]}, not this environment; give --snapshot)"
            )
        # a bare paste: the machine running triage is not evidence for or against a cause
        why_not = "none (nothing in the input shows it comes from this machine; give --snapshot)"
        return _Environment(None, why_not, unjudged="unknown")
    return _Environment(None, "none")


def _from_this_machine(scan: _Scan, current: Snapshot) -> str:
    """What in the input shows that it comes from the environment ``current`` describes: a
    traceback frame in its prefix or site directories, or its interpreter's path; "" when
    nothing does (paths every system Python has prove nothing)."""
    for prefix in sorted(scan.prefixes):
        if belongs_to(prefix, current) and prefix.replace("\\", "/").rstrip("/") not in _SHARED_PREFIXES:
            return f"traceback frames come from {prefix}, this environment's prefix"
    exe = current.python.executable
    if exe and len(exe) > 8 and not exe.startswith(_SHARED_BIN_DIRS):
        texts = (
            ["\n".join(scan.whole)]
            if scan.whole is not None
            else [f.region.text for f in scan.findings.values() if f.region is not None]
        )
        if any(exe in text for text in texts):
            return f"the input names this environment's interpreter {exe}"
    return ""


def _embedded_collect_env(scan: _Scan, source: str) -> Snapshot | None:
    if not scan.collect_env:
        return None
    from stackcheck.importers.collect_env import find_collect_env_block, parse_collect_env

    block = find_collect_env_block("\n".join(scan.collect_env))
    if not block:
        return None
    try:
        return parse_collect_env(block, source=f"{source}: line {scan.collect_env_line}")
    except InputError:
        return None  # a mangled paste: judge against the other environment instead


def _to_match(
    finding: _RuleFinding,
    snapshot: Snapshot | None,
    knowledge,
    unjudged: str = "not-judged",
    dists: DistIndex | None = None,
) -> TriageMatch:
    rule = finding.rule
    best = finding.best
    region_text = finding.region.text if finding.region else best.matched
    groups: dict[str, str] = {}
    for hit in sorted(finding.hits.values(), key=lambda h: h.signature.specificity):
        groups.update(hit.groups)
    reading = read(groups, region_text, snapshot)
    word, agreement, env_evidence = environment_verdict(rule, snapshot, knowledge, reading, dists)
    if snapshot is None:
        word = unjudged
    matched_line = _matched_line(best)
    evidence = [
        f"line {finding.lines[best.signature.index]}: {matched_line}",
        *reading.evidence,
        *env_evidence,
    ]
    fix = f"{' '.join(reading.fixes)} In general: {rule.fix}" if reading.fixes else rule.fix
    return TriageMatch(
        rule_id=rule.id,
        category=rule.category,
        title=rule.title,
        confidence=shifted_confidence(rule.confidence, agreement),
        evidence=evidence,
        fix=fix,
        score=score(rule, finding.signatures, agreement),
        environment=word,
        layer=rule.layer,
        culprit=reading.culprit,
        explanation=rule.explanation,
        sources=list(rule.sources),
        line=finding.lines[best.signature.index],
    )


def _matched_line(hit: Hit, limit: int = 300) -> str:
    text = " ".join(part.strip() for part in hit.matched.splitlines() if part.strip())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown_region(scan: _Scan, matches: list[TriageMatch], whole: list[str] | None) -> FailureRegion | None:
    if matches:
        return scan.findings[matches[0].rule_id].region
    region = scan.last_traceback or scan.last_region
    if region is None and whole:
        region = _around(whole, len(whole), before=REGION_DISPLAY_LINES - 1, after=0)
        region.kind = "tail"
    if region is not None and len(region.lines) > REGION_DISPLAY_LINES:
        # keep the end: a traceback's exception line and an error's message come last
        cut = FailureRegion(start=region.end - REGION_DISPLAY_LINES + 1, kind=region.kind)
        for offset, line in enumerate(region.lines[-REGION_DISPLAY_LINES:]):
            cut.add(cut.start + offset, line)
        return cut
    return region
