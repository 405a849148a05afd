"""The gate of the signature index gives the answers of one set of all forms.

Costly forms (an unbounded broad repeat, a counted repeat, ``.`` across lines) stand in the gate
as fragments of them and are matched themselves, in a second set, only on a text where one of
those fragments occurs. Proven here: each fragment list is a necessary condition (every match
of a costly form in the rules' own examples holds a fragment match inside it), and on texts
made of the rules' examples and counter-examples, wrapped, cut and joined, ``occurs_in`` and
``search`` answer exactly what one ``RE2::Set`` of every form answers."""

from __future__ import annotations

import re2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.models.rule import Rule
from stackcheck.triage.signatures import (
    _COSTLY,
    _MULTILINE,
    FRAGMENT_MIN_LITERALS,
    Hit,
    SignatureIndex,
    _options,
    _Token,
    _tokens,
    forms,
    fragments,
)


def compiled(pattern: str):
    return re2.compile(_MULTILINE + pattern, _options())


class OneSet:
    """The index as it was before the gate: one set of every form."""

    def __init__(self, index: SignatureIndex) -> None:
        self.index = index
        self.set = re2.Set.SearchSet(_options())
        for sig in index.signatures:
            self.set.Add(_MULTILINE + sig.form)
        self.set.Compile()

    def matching(self, text) -> list[int]:
        return sorted(self.set.Match(text) or ())

    def search(self, text: str) -> list[tuple]:
        hits, whole = [], set()
        for k in self.matching(text):
            sig = self.index.signatures[k]
            if sig.cut and (sig.rule.id, sig.index) in whole:
                continue
            whole.add((sig.rule.id, sig.index))
            m = sig.compiled.search(text)  # the form without (?m): it may not match where the set did
            if m is not None:
                hits.append((k, m.start(), m.end(), m.group(0)))
        return hits


def found(index: SignatureIndex, hits: list[Hit]) -> list[tuple]:
    position = {id(sig): k for k, sig in enumerate(index.signatures)}
    return [(position[id(h.signature)], h.start, h.end, h.matched) for h in hits]


_STATE: dict = {}


def indexes(kb) -> tuple[SignatureIndex, OneSet]:
    if "index" not in _STATE:
        index = SignatureIndex(kb.rules)
        _STATE["index"], _STATE["reference"] = index, OneSet(index)
    return _STATE["index"], _STATE["reference"]


def test_fragments_take_the_most_demanding_narrow_run_of_each_alternative():
    form = r"(?s)(?:embedding|wte)\b.*IndexError:\s+index\s+out"
    assert fragments(form) == [r"(?s)IndexError:\s+index\s+out"]
    # one per alternative, after the flags set before it (a flag holds past a "|" in RE2)
    assert fragments(r"foo[^x]*barbazqux|(?i)hello\s+world.+x") == ["barbazqux", r"(?i)hello\s+world"]
    assert compiled("a(?i)b|c").search("C") is not None
    assert fragments(r"(?P<lib>lib\w+)\.so.*") == [r"(?:lib\w+)\.so"]  # named groups become plain
    assert fragments(r"ab.*cd") is None  # too little to gate on
    assert fragments(r"abcdefgh.*x|.*y") is None  # an alternative without a run
    assert fragments(r"(?-i)abcdefgh.*x") is None  # a flag switched off
    assert fragments(r"abcdefgh[^x]{0,9}?zz") == ["abcdefgh"]  # a lazy or counted repeat ends a run
    assert fragments(r"(?:abcdefgh)+.*") == ["(?:abcdefgh)+"]


def test_every_match_of_a_costly_form_in_the_rule_examples_holds_a_fragment_match(kb):
    index, _ = indexes(kb)
    costly = [sig for sig in index.signatures if _COSTLY.search(sig.form) and fragments(sig.form)]
    checked = set()
    for sig in costly:
        pieces = [compiled(piece) for piece in fragments(sig.form)]
        for example in sig.rule.examples:
            for m in compiled(sig.form).finditer(example):
                assert any(p.search(example, m.start(), m.end()) for p in pieces), (sig.form, example)
                checked.add(sig.form)
    # the knowledge base has ~70 costly forms (each fragment demands FRAGMENT_MIN_LITERALS
    # characters); most of them match an example of their rule
    assert len(costly) >= 60 and len(checked) >= 50
    assert all(min(map(len, fragments(sig.form))) >= FRAGMENT_MIN_LITERALS for sig in costly)


def test_the_gate_answers_what_one_set_answers_on_every_rule_example_and_counter_example(kb):
    index, reference = indexes(kb)
    costly = {k for k, sig in enumerate(index.signatures) if k in index._costly_of}
    decided_by_second_set = 0
    for rule in kb.rules:
        for text in (*rule.examples, *rule.counter_examples):
            for variant in (text, text.replace(" ", "\n"), text.replace("\n", " ")):
                assert index._matching(variant) == reference.matching(variant)
                assert found(index, index.search(variant)) == reference.search(variant)
                decided_by_second_set += bool(costly & set(reference.matching(variant)))
    assert decided_by_second_set >= 100


def pieces_of(kb) -> list[str]:
    texts = [t for rule in kb.rules for t in (*rule.examples, *rule.counter_examples)]
    return sorted({line for text in texts for line in text.splitlines() if line.strip()})


@st.composite
def texts(draw, pool):
    """Lines of the rules' examples and counter-examples, some hard-wrapped at a space, cut or
    with their spaces doubled, joined by newlines or run together."""
    lines = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=12))
    out = []
    for line in lines:
        how = draw(st.sampled_from(["as is", "wrap", "cut", "spaces", "join"]))
        if how == "wrap" and " " in line:
            at = draw(st.integers(0, line.count(" ") - 1))
            head, _, tail = line.replace(" ", "\0", at).partition(" ")
            line = head.replace("\0", " ") + "\n" + tail
        elif how == "cut":
            line = line[: draw(st.integers(0, len(line)))]
        elif how == "spaces":
            line = line.replace(" ", "  ")
        elif how == "join" and out:
            out[-1] += line
            continue
        out.append(line)
    return "\n".join(out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_gate_answers_what_one_set_of_all_forms_answers(kb, data):
    index, reference = indexes(kb)
    if "pool" not in _STATE:
        _STATE["pool"] = pieces_of(kb)
    text = data.draw(texts(_STATE["pool"]))
    assert index._matching(text) == reference.matching(text)
    assert index.occurs_in(text) == bool(reference.matching(text)) == index.occurs_in(text.encode())
    assert found(index, index.search(text)) == reference.search(text)


def test_a_costly_form_is_decided_by_the_second_set_where_only_its_fragment_occurs():
    rule = Rule(id="KB196", title="t", category="other", signatures=[r"(?s)Traceback.*MagicBoomError: x"])
    index = SignatureIndex([rule])
    assert index._gate_of == [-1] and index._costly_of == [0]  # the gate holds only the fragment
    assert not index.occurs_in("MagicBoomError: x\nTraceback")  # fragment, but not the form
    assert index.occurs_in("Traceback (most recent call last):\n  ...\nMagicBoomError: x")
    assert [h.start for h in index.search("ok\nTraceback\nMagicBoomError: x")] == [3]
    assert index.search("MagicBoomError: x") == []


def test_a_named_group_in_re2s_other_syntax_never_stands_as_a_flag_in_a_fragment():
    """``(?<name>…)`` is a named group, read as ``(?P<name>…)`` is: taken as a flag it would join
    what follows it in a fragment (``(?<k>CUDA)error`` for ``(?<k>CUDA) error.*illegal…``) that
    the form's matches do not hold. Both spellings give the same fragments, forms and hits."""
    text = "RuntimeError: CUDA error: an illegal memory access was encountered"
    found = []
    for group in ("(?<kind>", "(?P<kind>"):
        pattern = group + r"CUDA) error.*illegal memory access"
        index = SignatureIndex([Rule(id="KB900", title="t", category="other", signatures=[pattern])])
        found.append((index.occurs_in(text), [h.start for h in index.search(text)]))
    assert found == [(True, [14]), (True, [14])]
    spelled = [g + r"CUDA)\s+error.*illegal\s+memory\s+access" for g in ("(?<kind>", "(?P<kind>")]
    assert fragments(spelled[0]) == fragments(spelled[1]) == [r"illegal\s+memory\s+access"]
    assert _tokens(spelled[0])[0] == _Token("(?<kind>", "open")  # a group, never a flag token
    (loose, cut), other = forms(spelled[0]), forms(spelled[1])
    respelled = (loose.replace("(?<", "(?P<"), cut and (cut[0].replace("(?<", "(?P<"), cut[1]))
    assert respelled == other  # the loosened form and the cut variant alike
    assert fragments(r"(?i)CUDA\s+error.*illegal\s+memory\s+access") == [r"(?i)illegal\s+memory\s+access"]
