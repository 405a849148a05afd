"""The result of triage: ranked matches, the failure region, where the environment came from."""

from __future__ import annotations

import msgspec


class TriageMatch(msgspec.Struct, kw_only=True):
    rule_id: str
    category: str
    title: str
    confidence: str  # high | medium | low: the rule's, raised or lowered by the environment
    evidence: list[str]  # the matched line first, then what the numbers and the environment say
    fix: str
    score: float  # the ranking key (specificity + confidence + environment agreement)
    environment: str  # agrees | contradicts | unknown | not-judged
    explanation: str = ""
    sources: list[str] = []
    line: int = 0  # 1-based line of the input where the signature matched
    # specific: a known failure with its known cause; family: a kind of failure, its culprit
    # taken from the text (ranked below every specific match)
    layer: str = "specific"
    culprit: str = ""  # what the text names as at fault (a package, library, file, setting), if anything


class Diagnosis(msgspec.Struct, kw_only=True):
    matches: list[TriageMatch]  # best first; empty when no known cause matched
    failure_region: str  # the region the best match came from, else the most telling one
    failure_region_lines: list[int] = []  # [first, last], 1-based
    # traceback | error | signature | whole (a short input matched as a whole) | tail (no
    # failure region was found: the last lines of the input)
    failure_region_kind: str = ""
    environment_source: str = "none"  # where the environment facts came from
    # for the live environment: what in the input shows it comes from this machine
    environment_why: str = ""
    regions_found: int = 0
    lines_read: int = 0
    source: str = ""  # the input: a path or "<stdin>"
