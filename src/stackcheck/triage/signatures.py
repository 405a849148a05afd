"""Rule signatures compiled once into an RE2 index.

RE2 matches in time linear in the text, so neither a hostile log nor a careless rule can hang
triage. One ``RE2::Set`` pass tells which signatures occur in a line or region; only those are
then searched individually to get their position and named groups.
"""

from __future__ import annotations

from dataclasses import dataclass

from stackcheck.errors import InputError
from stackcheck.models.rule import Rule

_CLASS_ESCAPES = set("dDwWsSbBpPAzZ")
_META = set(".^$*+?()[]{}|")


@dataclass(frozen=True)
class Signature:
    rule: Rule
    index: int  # position in rule.signatures
    pattern: str
    compiled: object  # re2 compiled pattern
    specificity: int  # literal characters the pattern demands


@dataclass(frozen=True)
class Hit:
    """One signature found in one text."""

    signature: Signature
    start: int
    end: int
    matched: str
    groups: dict[str, str]


def literal_length(pattern: str) -> int:
    """How many literal characters a pattern demands: the measure of its specificity.
    ``No module named`` counts 15, ``\\d+ GiB`` counts 4 (the space and "GiB"); character
    classes, quantified atoms' repeats, group syntax and flags count nothing."""
    count = 0
    last_literal = False  # did the previous atom count? (an optional one is then uncounted)
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            last_literal = not (pattern[i + 1] in _CLASS_ESCAPES or pattern[i + 1].isalpha())
            count += last_literal
            i += 2
            continue
        last_was, last_literal = last_literal, False
        if ch == "[":  # a character class matches one unknown character
            j = i + 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
        elif ch == "{":  # {m,n} repeat counts
            j = pattern.find("}", i)
            i = j + 1 if j != -1 else i + 1
        elif ch == "(" and pattern.startswith("?", i + 1):  # (?:, (?i), (?P<name>
            if pattern.startswith("?P<", i + 1):
                i = pattern.find(">", i) + 1
            else:
                j = i + 2
                while j < n and pattern[j] not in ":)":
                    j += 1
                i = j + 1
        elif ch in _META:
            if ch in "?*" and last_was:  # an optional literal is not demanded
                count -= 1
            i += 1
        else:
            count += 1
            last_literal = True
            i += 1
    return count


def _options():
    import re2

    options = re2.Options()
    options.log_errors = False  # an invalid pattern is reported as InputError, not on stderr
    return options


class SignatureIndex:
    """All signatures of a rule list, compiled once."""

    def __init__(self, rules: list[Rule]) -> None:
        import re2

        options = _options()
        self.signatures: list[Signature] = []
        self._set = re2.Set.SearchSet(options)
        for rule in rules:
            for j, pattern in enumerate(rule.signatures):
                try:
                    compiled = re2.compile(pattern, options)
                except re2.error as exc:
                    raise InputError(f"rule {rule.id}: signatures[{j}]: not a valid RE2 pattern ({exc})") from None
                self._set.Add(pattern)
                self.signatures.append(Signature(rule, j, pattern, compiled, literal_length(pattern)))
        self._empty = not self.signatures
        if not self._empty:
            self._set.Compile()

    def occurs_in(self, text: str) -> bool:
        """Does any signature occur in ``text``? (one linear pass)"""
        return not self._empty and self._set.Match(text) is not None

    def search(self, text: str) -> list[Hit]:
        """Every signature that occurs in ``text``, with its first match."""
        if self._empty:
            return []
        found = self._set.Match(text)
        hits = []
        for k in sorted(found or ()):
            sig = self.signatures[k]
            m = sig.compiled.search(text)
            if m is None:  # cannot happen (same pattern); be safe
                continue
            groups = {name: value for name, value in m.groupdict().items() if value}
            hits.append(Hit(sig, m.start(), m.end(), m.group(0), groups))
        return hits
