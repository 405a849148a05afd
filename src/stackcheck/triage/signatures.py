"""Rule signatures compiled once into an RE2 index.

RE2 matches in time linear in the text, so neither a hostile log nor a careless rule can hang
triage. One ``RE2::Set`` pass tells which signatures occur in a line or region; only those are
then searched individually to get their position and named groups.

Two tolerances for real pastes are compiled into every signature (the rule data keeps the
pattern as written, and its specificity is that of the written pattern):

* a literal space matches any run of whitespace, a line break included, so a message that a
  terminal or an issue form hard-wrapped at a space still matches (:func:`loosen`);
* a message cut mid-word at the end of a line or of the text still matches the pattern's
  trailing literal up to the cut (:func:`cut_variant`), as long as the part before the cut
  demands ``CUT_MIN_LITERALS`` characters; the variant is a second compiled form of the same
  signature, with the specificity of what it demands.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from stackcheck.errors import InputError
from stackcheck.models.rule import Rule

_CLASS_ESCAPES = set("dDwWsSbBpPAzZ")
_META = set(".^$*+?()[]{}|")
CUT_MIN_LITERALS = 24  # a cut message must still show this many of the signature's literal characters


@dataclass(frozen=True)
class Signature:
    rule: Rule
    index: int  # position in rule.signatures
    pattern: str
    form: str  # what is compiled: the loosened pattern, or its cut variant
    specificity: int  # literal characters the pattern demands
    cut: bool = False  # the variant that matches the message cut at its end

    @cached_property
    def compiled(self):
        """The compiled form (compiled on first use: most signatures never occur in a log)."""
        import re2

        return re2.compile(self.form, _options())


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


# ----- pattern forms: tokens of the RE2 syntax, enough to find literals ---------------------

_QUANT = set("*+?")


@dataclass(frozen=True)
class _Token:
    text: str  # the token as written
    # literal | escape (a class escape or assertion) | class | open | close | flag | quant | alt | other
    kind: str
    char: str = ""  # for literals: the character it stands for


def _tokens(pattern: str) -> list[_Token] | None:
    """The pattern as tokens; None for syntax this reader does not follow (``\\Q…\\E``)."""
    out: list[_Token] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= n or pattern[i + 1] == "Q":
                return None
            nxt = pattern[i + 1]
            if nxt in "pPx" and i + 2 < n and pattern[i + 2] == "{":
                end = pattern.find("}", i)
                if end == -1:
                    return None
                out.append(_Token(pattern[i : end + 1], "escape"))
                i = end + 1
            elif nxt in "pP":
                out.append(_Token(pattern[i : i + 3], "escape"))
                i += 3
            elif nxt == "x":
                out.append(_Token(pattern[i : i + 4], "escape"))
                i += 4
            elif nxt.isalnum():
                out.append(_Token(pattern[i : i + 2], "escape"))
                i += 2
            else:
                out.append(_Token(pattern[i : i + 2], "literal", nxt))
                i += 2
        elif ch == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                if pattern[j] == "\\":
                    j += 2
                elif pattern.startswith("[:", j):
                    end = pattern.find(":]", j + 2)
                    j = end + 2 if end != -1 else j + 1
                else:
                    j += 1
            if j >= n:
                return None
            out.append(_Token(pattern[i : j + 1], "class"))
            i = j + 1
        elif ch == "(":
            if pattern.startswith("(?", i):
                j = i + 2
                if pattern.startswith("P<", j):
                    end = pattern.find(">", j)
                    if end == -1:
                        return None
                    out.append(_Token(pattern[i : end + 1], "open"))
                    i = end + 1
                    continue
                while j < n and pattern[j] not in ":)":
                    j += 1
                if j >= n:
                    return None
                out.append(_Token(pattern[i : j + 1], "open" if pattern[j] == ":" else "flag"))
                i = j + 1
            else:
                out.append(_Token("(", "open"))
                i += 1
        elif ch == ")":
            out.append(_Token(ch, "close"))
            i += 1
        elif ch in _QUANT or ch == "{":
            j = pattern.find("}", i) + 1 if ch == "{" else i + 1
            if j == 0:
                return None
            if j < n and pattern[j] in "?+":  # lazy / possessive marker
                j += 1
            out.append(_Token(pattern[i:j], "quant"))
            i = j
        elif ch == "|":
            out.append(_Token(ch, "alt"))
            i += 1
        elif ch in _META:
            out.append(_Token(ch, "other"))
            i += 1
        else:
            out.append(_Token(ch, "literal", ch))
            i += 1
    return out


def _is_space(token: _Token) -> bool:
    return token.kind == "literal" and token.char == " "


def _loosened(tokens: list[_Token]) -> list[str]:
    """Each token as it is compiled: a literal space as ``\\s+`` (``\\s`` before a quantifier; a
    run of spaces is one run of whitespace), everything else as written."""
    out: list[str] = []
    for k, tok in enumerate(tokens):
        if not _is_space(tok):
            out.append(tok.text)
        elif k + 1 < len(tokens) and tokens[k + 1].kind == "quant":
            out.append(r"\s")
        else:
            out.append("" if k > 0 and _is_space(tokens[k - 1]) else r"\s+")
    return out


def loosen(pattern: str) -> str:
    """The pattern with each literal space (outside character classes) matching any run of
    whitespace, line breaks included: ``Bus error\\.`` also matches ``Bus\\nerror.``."""
    return forms(pattern)[0]


def cut_variant(pattern: str) -> tuple[str, int] | None:
    """(pattern, specificity) that also matches the message cut mid-word at the end of a line,
    inside the pattern's trailing literal; None where the pattern cannot be cut that way (no
    trailing literal, alternatives at the top, too few literals before any possible cut)."""
    return forms(pattern)[1]


def forms(pattern: str) -> tuple[str, tuple[str, int] | None]:
    """The loosened pattern and its cut variant (see :func:`loosen`, :func:`cut_variant`)."""
    tokens = _tokens(pattern)
    if not tokens:
        return pattern, None
    parts = _loosened(tokens)
    return "".join(parts), _cut(tokens, parts)


def _cut(tokens: list[_Token], parts: list[str]) -> tuple[str, int] | None:
    depth = 0
    for tok in tokens:
        depth += (tok.kind == "open") - (tok.kind == "close")
        if tok.kind == "alt" and depth == 0:
            return None
    run = 0
    while run < len(tokens) and tokens[-1 - run].kind == "literal":
        run += 1
    if run < 4:
        return None
    head, tail = tokens[: len(tokens) - run], tokens[len(tokens) - run :]
    head_literals = literal_length("".join(t.text for t in head))
    keep = max(1, CUT_MIN_LITERALS - head_literals)
    if keep >= len(tail):
        return None

    def mid_word(k: int) -> bool:  # a cut after tail[k] splits a word
        return k + 1 < len(tail) and tail[k].char.isalnum() and tail[k + 1].char.isalnum()

    if not any(mid_word(k) for k in range(keep - 1, len(tail))):
        return None  # no word to cut inside
    # from the end: rest matches tail[k:] or, where a cut splits a word, stops at the line end
    rest = ""
    for k in range(len(tail) - 1, keep - 1, -1):
        atom = r"\s+" if _is_space(tail[k]) else tail[k].text
        rest = atom + (f"(?:{rest}|(?m:$))" if mid_word(k) else rest)
    if mid_word(keep - 1):
        rest = f"(?:{rest}|(?m:$))"
    return "".join(parts[: len(head) + keep]) + rest, head_literals + keep


_MULTILINE = "(?m)"  # what the set compiles before each form (see SignatureIndex.occurs_in)


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
                loosened, cut = forms(pattern)
                variants = [(loosened, literal_length(pattern), False)]
                if cut is not None:
                    variants.append((cut[0], cut[1], True))
                for form, specificity, is_cut in variants:
                    try:
                        self._set.Add(_MULTILINE + form)
                    except re2.error:
                        try:  # the pattern as written is invalid: say why
                            re2.compile(pattern, options)
                        except re2.error as exc:
                            where = f"rule {rule.id}: signatures[{j}]"
                            raise InputError(f"{where}: not a valid RE2 pattern ({exc})") from None
                        if is_cut:  # a form this module derived failed: keep the pattern as written
                            continue
                        form = pattern
                        self._set.Add(_MULTILINE + form)
                    self.signatures.append(Signature(rule, j, pattern, form, specificity, is_cut))
        self._empty = not self.signatures
        if not self._empty:
            self._set.Compile()

    def occurs_in(self, text: str | bytes) -> bool:
        """Can a signature occur in ``text`` (or in any block of its lines)? One linear pass; the
        set matches ``^`` and ``$`` at every line, so a block's match is also one of the text
        around it, and :meth:`search` confirms each with the signature as written."""
        return not self._empty and self._set.Match(text) is not None

    def match_starts(self, text: str) -> list[int]:
        """Where in ``text`` the signatures that occur in it first match."""
        return [hit.start for hit in self.search(text)]

    def search(self, text: str) -> list[Hit]:
        """Every signature that occurs in ``text``, with its first match."""
        if self._empty:
            return []
        found = self._set.Match(text)
        hits = []
        whole = set()
        for k in sorted(found or ()):
            sig = self.signatures[k]
            key = (sig.rule.id, sig.index)
            if sig.cut and key in whole:  # the uncut form matched: the variant adds nothing
                continue
            whole.add(key)
            m = sig.compiled.search(text)
            if m is None:  # cannot happen (same pattern); be safe
                continue
            groups = {name: value for name, value in m.groupdict().items() if value}
            hits.append(Hit(sig, m.start(), m.end(), m.group(0), groups))
        return hits
