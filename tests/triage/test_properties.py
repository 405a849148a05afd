"""Property tests: triage on arbitrary text never raises, and signatures cannot hang it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.errors import InputError
from stackcheck.models.rule import Rule
from stackcheck.triage import triage_text
from stackcheck.triage.reader import clean_line
from stackcheck.triage.signatures import SignatureIndex

FRAGMENTS = st.sampled_from(
    [
        "Traceback (most recent call last):",
        '  File "x.py", line 1, in <module>',
        "ERROR",
        "##[error]",
        "CUDA out of memory. Tried to allocate 2.00 GiB",
        "No module named 'a.b'",
        "\x1b[31m",
        "\r",
        "\t",
        "PyTorch version: 2.1.0+cu121",
        "Nvidia driver version: 470.1",
        "[rank0]: ",
        "During handling of the above exception",
        "Assertion `srcIndex < srcSelectDimSize` failed.",
        "GPU 0 has a total capacity of 0 bytes of which nan is free.",
    ]
)
TEXT = st.lists(st.one_of(st.text(max_size=80), FRAGMENTS), max_size=40).map("\n".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_triage_of_arbitrary_text_never_raises(text):
    try:
        d = triage_text(text)
    except InputError as exc:  # only for inputs with nothing visible to read, or binary ones
        assert "\x00" in text or not any(clean_line(line).strip() for line in text.split("\n")), exc
        return
    assert all(m.evidence and m.fix for m in d.matches)
    assert [m.score for m in d.matches] == sorted((m.score for m in d.matches), reverse=True)


def test_malformed_signature_names_the_rule_and_field():
    bad = Rule(id="KB199", title="t", category="other", signatures=["fine", r"(a)\1"])
    with pytest.raises(InputError, match=r"rule KB199: signatures\[1\]: not a valid RE2 pattern"):
        SignatureIndex([bad])


def test_catastrophic_backtracking_pattern_stays_linear():
    """(a+)+$ takes exponential time in a backtracking engine on 'aaaa…b'; RE2 does not."""
    index = SignatureIndex(
        [Rule(id="KB198", title="t", category="other", signatures=[r"(a+)+$", r"(x|x)*y"])]
    )
    assert index.search("a" * 50_000 + "b") == []
    assert index.search("x" * 50_000) == []
    assert [h.signature.index for h in index.search("a" * 50_000)] == [0]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(
                alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=30
            ),
            FRAGMENTS,
        ),
        max_size=600,
    )
)
def test_regions_are_ordered_disjoint_and_faithful_to_the_input(lines):
    """Regions never overlap, come in input order, and (when not elided) are exactly the
    input lines between their first and last line numbers."""
    from stackcheck.triage.regions import extract_regions

    previous_end = 0
    for region in extract_regions(lines):
        assert previous_end < region.start <= region.end <= len(lines)
        if not region.elided:
            assert region.lines == lines[region.start - 1 : region.end]
        previous_end = region.end
