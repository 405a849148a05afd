"""Property tests for the pieces that read untrusted bytes: pickle opcodes, secret
patterns, ignore patterns (checked against git's own matcher)."""

from __future__ import annotations

import collections
import os
import pickle
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.hygiene import pickles
from stackcheck.hygiene.ignore import is_ignored, parse
from stackcheck.hygiene.scan import parse_size
from stackcheck.hygiene.secrets import find_secrets, mask


@given(st.binary(max_size=2000))
@settings(max_examples=300)
def test_pickle_scan_never_raises_on_garbage(data):
    scan = pickles.scan_bytes(data)
    assert isinstance(scan.imports, list)


@given(st.binary(max_size=300))
@settings(max_examples=200)
def test_truncated_pickles_never_raise_and_keep_what_they_saw(tail):
    # pickle executes opcodes as it reads them: a stream cut before STOP still runs os.system
    evil = pickle.dumps([os.system, tail], protocol=4)
    for cut in range(0, len(evil), max(1, len(evil) // 7)):
        pickles.scan_bytes(evil[:cut], pickle_expected=True)
    scan = pickles.scan_bytes(evil[:-1], pickle_expected=True)
    assert scan.error and scan.unsafe() == [(os.system.__module__, "system")]


@pytest.mark.parametrize("protocol", range(0, pickle.HIGHEST_PROTOCOL + 1))
def test_every_protocol_resolves_imports(protocol):
    data = pickle.dumps({"a": collections.OrderedDict(x=1), "f": os.system, "g": eval}, protocol=protocol)
    scan = pickles.scan_bytes(data, pickle_expected=True)
    assert scan.unresolved == 0
    builtins = "__builtin__" if protocol < 3 else "builtins"  # pickle's Python 2 names
    assert {f"{m}.{n}" for m, n in scan.unsafe()} == {f"{os.system.__module__}.system", f"{builtins}.eval"}
    assert all(pickles.is_dangerous(m, n) for m, n in scan.unsafe())


def test_memo_tricks_cannot_hide_a_stack_global():
    # push "collections","OrderedDict" then "os","system" via the memo, pop the decoys: the
    # stack simulation must resolve the operands STACK_GLOBAL really receives.
    body = (
        b"\x80\x04"
        b"\x8c\x02os\x94"  # memo 0 = "os"
        b"\x8c\x06system\x94"  # memo 1 = "system"
        b"0"
        b"0"  # POP POP
        b"\x8c\x0bcollections\x8c\x0bOrderedDict0"
        b"0"  # decoys, popped
        b"h\x00h\x01\x93"  # BINGET 0, BINGET 1, STACK_GLOBAL
        b"\x8c\x02id\x85R."
    )
    scan = pickles.scan_bytes(body)
    assert scan.unsafe() == [("os", "system")]


token_chars = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=34, max_size=40
)


@given(
    st.text(max_size=200),
    token_chars.filter(lambda t: any(c.isdigit() for c in t) and any(c.isalpha() for c in t)),
    st.text(alphabet=" \n.,:=", min_size=1, max_size=5),
)
@settings(max_examples=200, suppress_health_check=[HealthCheck.filter_too_much])
def test_planted_token_found_on_its_line_and_masked(prose, body, sep):
    token = "hf_" + body
    text = prose + sep + token + sep
    hits = [s for s in find_secrets(text) if s.kind == "Hugging Face token"]
    assert any(s.line == text[: text.index(token)].count("\n") + 1 and s.masked == mask(token) for s in hits)
    assert all(token not in s.masked for s in find_secrets(text))


@given(st.text(max_size=500))
def test_secret_scan_never_raises(text):
    for s in find_secrets(text, filename=".netrc"):
        assert s.line >= 1


def test_sizes():
    assert parse_size("10MiB") == 10 * 1024**2
    assert parse_size("500 MB") == 500 * 1000**2
    assert parse_size("2048") == 2048


PATTERNS = [
    "*.pyc",
    "build/",
    "/top.txt",
    "docs/*.md",
    "**/cache/*",
    "a/**/b",
    "data/**",
    "file?.bin",
    "[ab]x.py",
    "*.egg-info/",
    "logs/**/*.log",
]
PATHS = [
    "x.pyc",
    "a/b/c.pyc",
    "build/out.o",
    "src/build/x",
    "top.txt",
    "sub/top.txt",
    "docs/a.md",
    "docs/sub/a.md",
    "cache/x",
    "deep/er/cache/y",
    "a/b",
    "a/x/y/b",
    "a/bb",
    "data/1/2",
    "file1.bin",
    "file12.bin",
    "ax.py",
    "cx.py",
    "pkg.egg-info/PKG-INFO",
    "logs/a/b/c.log",
    "logs/c.log",
    "logs/c.txt",
]


def test_patterns_match_like_git(tmp_path):
    """Each pattern alone against every path, compared with `git check-ignore --no-index`."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for pattern in PATTERNS:
        (tmp_path / ".gitignore").write_text(pattern + "\n")
        done = subprocess.run(
            ["git", "-C", str(tmp_path), "check-ignore", "--no-index", "--stdin"],
            input="\n".join(PATHS),
            capture_output=True,
            text=True,
        )
        by_git = set(done.stdout.split())
        # git decides "dir/" patterns for paths it can see as directories; a file under one counts
        ours = {p for p in PATHS if is_ignored(parse(pattern), "HYG001", p)}
        assert ours == by_git, pattern


def test_torchscript_class_references_are_not_python_imports():
    data = pickle.dumps(0, protocol=2).replace(b"K\x00", b"c__torch__.___torch_mangle_26\nDemoModule\n)\x81")
    scan = pickles.scan_bytes(data)
    assert scan.imports == ["__torch__.___torch_mangle_26 DemoModule"] and scan.unsafe() == []


_SEGMENT = st.sampled_from(["a", "b", "*", "?", "**", "a*", "*b", "[ab]", "[!a]", "x?"])
_PATTERN = st.tuples(st.booleans(), st.lists(_SEGMENT, min_size=1, max_size=3), st.booleans()).map(
    lambda t: ("/" if t[0] else "") + "/".join(t[1]) + ("/" if t[2] else "")
)
_PATHS = st.lists(
    st.lists(st.sampled_from(["a", "b", "ab", "ba", "xa", "c"]), min_size=1, max_size=4).map("/".join),
    min_size=1,
    max_size=8,
    unique=True,
)


@pytest.fixture(scope="module")
def git_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("gitignore")
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


@given(_PATTERN, _PATHS)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_generated_patterns_match_like_git(git_dir, pattern, paths):
    (git_dir / ".gitignore").write_text(pattern + "\n")
    done = subprocess.run(
        ["git", "-C", str(git_dir), "check-ignore", "--no-index", "--stdin"],
        input="\n".join(paths),
        capture_output=True,
        text=True,
    )
    assert {p for p in paths if is_ignored(parse(pattern), "HYG001", p)} == set(done.stdout.split()), pattern
