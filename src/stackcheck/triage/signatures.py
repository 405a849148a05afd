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

A few forms cost an ``RE2::Set`` far more than all the others together: a broad atom repeated
without bound (``.*``, ``[^)]+``), a counted repeat, ``.`` matching line breaks. The DFA of a
set runs every form at once, and such a form keeps states alive across the text, so the
number of states to build multiplies. The set every text passes through (the *gate*) holds
each such form as :func:`fragments` of it — parts that occur inside every match of the form —
and the costly forms themselves are matched, in a second set, only on a text where one of
those fragments occurs. The answers are those of one set of all forms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from stackcheck.errors import InputError
from stackcheck.models.rule import Rule

_CLASS_ESCAPES = set("dDwWsSbBpPAzZ")
_META = set(".^$*+?()[]{}|")
_NAMED = ("(?P<", "(?<")  # a named group opens with either spelling in RE2
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
        elif ch == "(" and pattern.startswith("?", i + 1):  # (?:, (?i), (?P<name>, (?<name>
            if pattern.startswith(_NAMED, i):
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


class _Token(NamedTuple):  # a tuple: made ~30,000 times per knowledge base, at every start
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
                if pattern.startswith(_NAMED, i):
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


# ----- the gate: fragments of the forms a set pays dearly for -------------------------------

# unbounded broad repeats, counted repeats, "." across lines (a syntactic test: one that also
# catches a harmless form only costs that form a second check)
_COSTLY = re.compile(r"\.[*+]|\[\^(?:\\.|[^]\\])*\][*+]|\{\d*,\d+\}|\(\?[a-z]*s[a-z]*[:)]")
FRAGMENT_MIN_LITERALS = 6  # a fragment must demand this many literal characters (else no gate)
_NARROW_ESCAPES = {r"\s", r"\d", r"\w", r"\b"}
_SETS_FLAGS = re.compile(r"\(\?[A-Za-z]*\)")  # a flag token that only sets flags: (?i), (?s) …


def _top_atoms(tokens: list[_Token]) -> list[tuple[list[_Token], str]]:
    """The top-level atoms of ``tokens`` (a group with all it holds is one atom), each with the
    quantifiers that follow it ("" for none)."""
    atoms: list[tuple[list[_Token], str]] = []
    depth = 0
    for tok in tokens:
        if depth == 0 and tok.kind == "quant" and atoms:
            atoms[-1] = (atoms[-1][0], atoms[-1][1] + tok.text)
            continue
        if depth == 0:
            atoms.append(([tok], ""))
        else:
            atoms[-1][0].append(tok)
        depth += (tok.kind == "open") - (tok.kind == "close")
    return atoms


def _narrow(atom: list[_Token]) -> bool:
    """Can ``atom`` stand in a fragment: not a broad one (``.``, a negated class, ``\\S`` …),
    not a group that holds a costly part or a cut variant's line-end chain?"""
    first = atom[0]
    if first.kind == "open":
        text = "".join(t.text for t in atom)
        return _COSTLY.search(text) is None and "(?m:$)" not in text
    if first.kind == "class":
        return not first.text.startswith("[^")
    if first.kind == "escape":
        return first.text in _NARROW_ESCAPES
    return first.kind == "literal" or first.text in "^$"


def fragments(form: str) -> list[str] | None:
    """Patterns of which one matches inside every match of ``form``: for each of its top-level
    alternatives, the run of consecutive top-level atoms (each narrow, once or repeated with
    ``+``) that demands the most literal characters, after the flags set before it; named
    groups become plain groups. A match of the form matches each atom of a run in turn, so it
    holds a match of the run. None where an alternative has no run that demands
    FRAGMENT_MIN_LITERALS characters, or a flag token does not only set flags: one switched off
    (``(?-i)``), or a group the tokens read as one (``(?<name>…)``, RE2's other named group)."""
    tokens = _tokens(form)
    if not tokens or any(t.kind == "flag" and not _SETS_FLAGS.fullmatch(t.text) for t in tokens):
        return None
    out: list[str] = []
    flags, best, run = "", "", ""
    best_length = length = 0  # literal characters of best and run (a run's atoms add up)
    for atom, quant in [*_top_atoms(tokens), ([_Token("|", "alt")], "")]:
        kind = atom[0].kind
        if kind in ("flag", "alt") or quant not in ("", "+") or not _narrow(atom):
            if length > best_length:
                best, best_length = run, length
            run, length = "", 0
            if kind == "flag":
                flags += atom[0].text
            elif kind == "alt":
                if best_length < FRAGMENT_MIN_LITERALS:
                    return None
                out.append(best)
                best, best_length = "", 0
            continue
        text = "".join("(?:" if t.text.startswith(_NAMED) else t.text for t in atom) + quant
        run, length = (run or flags) + text, length + literal_length(text)
    return out


_MULTILINE = "(?m)"  # what the set compiles before each form (see SignatureIndex.occurs_in)


def _options():
    import re2

    options = re2.Options()
    options.log_errors = False  # an invalid pattern is reported as InputError, not on stderr
    return options


def _pieces(form: str) -> list[str] | None:
    """The fragments the gate holds of a costly form; None: the form itself stands in the gate."""
    return fragments(form) if _COSTLY.search(form) else None


Variant = tuple[str, int, bool, "list[str] | None"]  # form, specificity, cut?, pieces (_pieces)


def variants(pattern: str) -> list[Variant]:
    """What the index compiles of ``pattern``: its loosened form and, where it has one, its cut
    variant, each with its specificity and the gate's fragments of it."""
    loosened, cut = forms(pattern)
    out: list[Variant] = [(loosened, literal_length(pattern), False, _pieces(loosened))]
    if cut is not None:
        out.append((cut[0], cut[1], True, _pieces(cut[0])))
    return out


FORMS_FORMAT = 1  # the shape of a kept file of derived forms; another number is a foreign file


def derived_forms(patterns: list[str], cached_as: str | None = None) -> list[list[Variant]]:
    """:func:`variants` of each pattern. With ``cached_as`` they are read from that file below
    the cache directory (:func:`stackcheck.cachedir.cache_root`; none with
    ``STACKCHECK_NO_CACHE``) where it was written for the same patterns by the same deriving
    code (this module's bytes) under the same Python (its Unicode tables decide what a word
    is), else derived and written there."""
    root = None
    if cached_as is not None:
        from stackcheck.cachedir import cache_root

        root = cache_root()
    if root is None:
        return [variants(p) for p in patterns]
    import sys

    from stackcheck import __version__, factcache

    key = [FORMS_FORMAT, __version__, sys.version, _code_digest(), factcache.digest(*patterns), len(patterns)]
    kept = factcache.load(root, cached_as, key, _kept_forms())  # a file of another shape: None
    if kept is not None and len(kept) == len(patterns):
        return kept
    derived = [variants(p) for p in patterns]
    factcache.store(root, cached_as, key, derived)
    return derived


def _code_digest() -> str:
    """A digest of this module's bytes (the code that derives the forms)."""
    from stackcheck import factcache

    try:
        with open(__file__, "rb") as fh:
            return factcache.digest(fh.read())
    except OSError:
        return ""


def _kept_forms() -> object:
    """The type of a kept file's entries (what :func:`derived_forms` returns), for msgspec."""
    from typing import Annotated

    import msgspec

    return list[
        Annotated[list[tuple[str, int, bool, list[str] | None]], msgspec.Meta(min_length=1, max_length=2)]
    ]


class SignatureIndex:
    """All signatures of a rule list, compiled once. ``cached_as``: a file name below the cache
    directory where the forms derived from the patterns are kept between runs (see
    :func:`derived_forms`); None derives them afresh."""

    def __init__(self, rules: list[Rule], *, cached_as: str | None = None) -> None:
        import re2

        options = _options()
        self.signatures: list[Signature] = []
        self._gate = re2.Set.SearchSet(options)  # every form, or fragments of a costly one
        self._gate_of: list[int] = []  # per entry of the gate: the signature it is, -1 a fragment
        self._costly = re2.Set.SearchSet(options)  # the forms the gate holds fragments of
        self._costly_of: list[int] = []  # per entry: the signature it is
        derived = iter(derived_forms([p for rule in rules for p in rule.signatures], cached_as))
        for rule in rules:
            for j, pattern in enumerate(rule.signatures):
                for form, specificity, is_cut, pieces in next(derived):
                    try:
                        self._add(form, pieces)
                    except re2.error:
                        try:  # the pattern as written is invalid: say why
                            re2.compile(pattern, options)
                        except re2.error as exc:
                            where = f"rule {rule.id}: signatures[{j}]"
                            raise InputError(f"{where}: not a valid RE2 pattern ({exc})") from None
                        if is_cut:  # a form this module derived failed: keep the pattern as written
                            continue
                        form = pattern
                        self._add(form, _pieces(form))
                    self.signatures.append(Signature(rule, j, pattern, form, specificity, is_cut))
        self._empty = not self.signatures
        if not self._empty:
            self._gate.Compile()
        if self._costly_of:
            self._costly.Compile()

    def _add(self, form: str, pieces: list[str] | None) -> None:
        """Add the form of the next signature to the gate, or where it is costly (``pieces``: its
        fragments, see :func:`_pieces`), to the second set and its fragments to the gate (raises
        re2.error where it is not valid RE2)."""
        import re2

        k = len(self.signatures)
        if pieces is None:
            self._gate.Add(_MULTILINE + form)
            self._gate_of.append(k)
            return
        self._costly.Add(_MULTILINE + form)
        self._costly_of.append(k)
        for piece in pieces:
            try:
                self._gate.Add(_MULTILINE + piece)
            except re2.error:  # cannot happen for a part of a valid form; be safe: the form itself
                self._gate.Add(_MULTILINE + form)
                self._gate_of.append(k)
                return
            self._gate_of.append(-1)

    def _matching(self, text: str | bytes, any_one: bool = False) -> list[int]:
        """The signatures whose form occurs in ``text``, in order (with ``any_one``, as soon as
        one is known: the gate's own form, else those of the second set)."""
        found = self._gate.Match(text)
        if not found:
            return []
        gate = self._gate_of
        hits = [gate[i] for i in found if gate[i] >= 0]
        if len(hits) < len(found) and not (any_one and hits):  # a fragment occurs
            costly = self._costly_of
            hits += [costly[i] for i in self._costly.Match(text) or ()]
        return sorted(set(hits))

    def occurs_in(self, text: str | bytes) -> bool:
        """Can a signature occur in ``text`` (or in any block of its lines)? One linear pass (and
        a second where a fragment of a costly form occurs); the sets match ``^`` and ``$`` at
        every line, so a block's match is also one of the text around it, and :meth:`search`
        confirms each with the signature as written."""
        return not self._empty and bool(self._matching(text, any_one=True))

    def match_starts(self, text: str) -> list[int]:
        """Where in ``text`` the signatures that occur in it first match."""
        return [hit.start for hit in self.search(text)]

    def search(self, text: str) -> list[Hit]:
        """Every signature that occurs in ``text``, with its first match."""
        if self._empty:
            return []
        hits = []
        whole = set()
        for k in self._matching(text):
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
