"""The gates of ``redact_value`` (issue 13, cold preflight): a dict with ``str`` keys judges its
keys once per set of keys and is returned as it is when nothing in it can change; a list of
strings cleans only the strings the gate fires on. Both answer exactly what the general path
answers, which is still the code for everything else: a dict with a key that is not a ``str``,
a list holding a suspect option (``--token VALUE`` hides the next word).

The reference is that general path itself: the same dict with one more key that is not a
``str`` (the value ``None``, which it returns as it is), the same list through ``redact_argv``."""

from __future__ import annotations

import json
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.probe import interpreter
from stackcheck.redaction import REDACTED, redact_argv, redact_value

FRAGMENTS = [
    "token", "TOKEN", "Key", "api_key", "eos_token", "secret", "pass", "pwd", "sig", "pat", "path",
    "--password", "--token", "-p", "--x", "-", "=", "==", "'", '"', ":", " ", "\n", "\t", ";",
    "://", "https://", "git+https://", "user:pw@", "@", "host.example.com", "/t/", "/", "?sig=", "&",
    "sk-", "ant-", "hf_", "ghp_", "github_pat_", "AKIA", "ASIA", "PRIVATE KEY", "Bearer ", "Cookie: ",
    "0123456789abcdefghij", "ABCDEFGHIJKLMNOP", "tokenizers>=0.21", 'extra == "x"', "numpy",
    "\u212a", "\u0130", "\u017f", "\u03a3", "é",
]  # fmt: skip
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=6).map("".join)
keys = st.one_of(
    st.sampled_from(["name", "version", "location", "requires", "token", "api_key", "PASSWORD", "eos_token"]),
    texts,
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False))
values = st.recursive(
    st.one_of(texts, st.lists(texts, max_size=5), scalars),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(keys, inner, max_size=4),
    ),
    max_leaves=12,
)


@settings(max_examples=600, deadline=None)
@given(st.lists(texts, max_size=8), st.booleans())
def test_a_list_of_strings_is_what_the_general_path_makes_of_it(words, as_tuple):
    obj = tuple(words) if as_tuple else words
    got = redact_value(obj)
    given = list(obj)
    expected = redact_argv(given)  # the general path: every word, options and all
    assert list(got) == expected and type(got) is type(obj)
    assert (got is obj) == (expected is given)  # the very object where the general path keeps it


@settings(max_examples=600, deadline=None)
@given(st.dictionaries(keys, values, max_size=6))
def test_a_dict_is_what_the_general_path_makes_of_it(obj):
    given = {**obj, 0: None}
    general = redact_value(given)  # a key that is not a str: the general path
    expected = {k: v for k, v in general.items() if k != 0}
    got = redact_value(obj)
    assert got == expected
    assert (got is obj) == (general is given)


def test_the_same_keys_answer_alike_across_calls():
    for _ in range(2):  # the keys' facts are kept after the first: the second answers the same
        empty = {"name": "numpy", "requires": ["tokenizers>=0.21"], "token": ""}
        assert redact_value(empty) is empty  # a secret-named key with nothing in it
        secret = {"name": "numpy", "requires": ["tokenizers>=0.21"], "token": "abc"}
        assert redact_value(secret) == {**secret, "token": REDACTED}
        scalars = {"name": "numpy", "editable": False, "size": 3, "ratio": 0.5, "url": None}
        assert redact_value(scalars) is scalars


def _dist_info(site, name, metadata: str, direct_url: dict | None = None) -> str:
    entry = f"{name}-1.0.dist-info"
    os.makedirs(os.path.join(site, entry))
    with open(os.path.join(site, entry, "METADATA"), "w", encoding="utf-8") as fh:
        fh.write(metadata)
    with open(os.path.join(site, entry, "RECORD"), "w", encoding="utf-8") as fh:
        fh.write(f"{name}/__init__.py,,\n")
    if direct_url is not None:
        with open(os.path.join(site, entry, "direct_url.json"), "w", encoding="utf-8") as fh:
            json.dump(direct_url, fh)
    return entry


def test_secrets_planted_in_metadata_are_cut_out_as_they_are_read(tmp_path):
    site = str(tmp_path)
    token = "ghp_" + "a1B2" * 9
    planted = _dist_info(
        site,
        "planted",
        "Metadata-Version: 2.1\nName: planted\nVersion: 1.0\n"
        f"Requires-Dist: private @ git+https://user:{token}@github.com/o/r.git\n"
        "Requires-Dist: tokenizers>=0.21\n"
        "Requires-Dist: numpy; extra == 'x'\n"
        f"Requires-Dist: --token {token}\n"
        "Requires-Dist: --token\n"
        "Requires-Dist: hidden\n"
        "Provides-Extra: x\n\nbody\n",
        {"url": "https://bob:hunter2@example.com/simple/planted.tar.gz?sig=abc123&v=1", "dir_info": {}},
    )
    dist = interpreter._read_distribution(site, planted)
    assert dist["requires"] == [
        "private @ git+https://<redacted>@github.com/o/r.git",
        "tokenizers>=0.21",
        "numpy; extra == 'x'",
        "--token <redacted>",
        "--token",
        "<redacted>",  # the word after a secret-named option
    ]
    assert dist["direct_url"] == "https://<redacted>@example.com/simple/planted.tar.gz?sig=<redacted>&v=1"
    plain = _dist_info(
        site, "plain", "Metadata-Version: 2.1\nName: plain\nVersion: 2.0\nRequires-Dist: numpy\n"
    )
    clean = interpreter._read_distribution(site, plain)
    assert clean["requires"] == ["numpy"] and clean["direct_url"] is None
