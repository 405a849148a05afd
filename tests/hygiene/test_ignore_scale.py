"""A large .stackcheck-ignore is matched without per-line work per finding: literal lines
cost a set lookup, globs are compiled together in a bounded number of regexes, and the answer
is exactly that of the plain "every line in order, the last match wins" reading. The file
size is bounded."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.errors import InputError
from stackcheck.hygiene import ignore
from stackcheck.hygiene.ignore import is_ignored, parse, translate


def reference(text: str, rule: str, path: str, is_dir: bool = False) -> bool:
    """The plain reading: each line's own regex, every line in order, the last match wins."""
    parts = path.strip("/").split("/")
    candidates = [("/".join(parts), is_dir)] + [
        ("/".join(parts[:k]), True) for k in range(len(parts) - 1, 0, -1)
    ]
    ignored = False
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        line_rule = None
        m = re.match(r"^([A-Z]{3}\d{3}):(.*)$", line)
        if m:
            line_rule, line = m.group(1), m.group(2).strip()
        negate = line.startswith("!")
        line = line[1:] if negate else line
        if line.startswith("\\"):
            line = line[1:] if line[1:2] in ("!", "#") else line
        dir_only = line.endswith("/")
        regex = re.compile(translate(line.rstrip("/")) + "\\Z")
        if line_rule is not None and line_rule != rule:
            continue
        if any(regex.match(p) and (d or not dir_only) for p, d in candidates):
            ignored = not negate
    return ignored


_SEGMENT = st.sampled_from(["a", "b", "ab", "*", "?", "**", "a*", "*b", "[ab]", "[!a]", "x?", "c.d", "a\\*"])
_LINE = st.tuples(
    st.sampled_from(["", "", "HYG001:", "HYG002:"]),
    st.booleans(),
    st.booleans(),
    st.lists(_SEGMENT, min_size=1, max_size=3),
    st.booleans(),
).map(lambda t: t[0] + ("!" if t[1] else "") + ("/" if t[2] else "") + "/".join(t[3]) + ("/" if t[4] else ""))
_PATH = st.lists(st.sampled_from(["a", "b", "ab", "ba", "c.d", "a*", "x", "xa"]), min_size=1, max_size=4).map(
    "/".join
)


@given(
    st.lists(_LINE, min_size=1, max_size=12),
    st.lists(st.tuples(_PATH, st.booleans()), min_size=1, max_size=6),
    st.sampled_from(["HYG001", "HYG002", "HYG004"]),
)
@settings(max_examples=400, deadline=None)
def test_same_answer_as_the_plain_reading(lines, paths, rule):
    text = "\n".join(lines) + "\n"
    rules = parse(text)
    for path, is_dir in paths:
        assert is_ignored(rules, rule, path, is_dir=is_dir) == reference(text, rule, path, is_dir), (
            text,
            path,
            is_dir,
        )


def test_many_lines_compile_a_bounded_number_of_regexes(monkeypatch):
    compiled = []
    real = re.compile
    monkeypatch.setattr(ignore.re, "compile", lambda *a, **k: compiled.append(a[0]) or real(*a, **k))
    literals = [f"data/shard-{i:06d}.bin" for i in range(20000)] + [
        f"HYG004:pkg{i}/mod.o" for i in range(20000)
    ]
    globs = [f"logs/run-{i}/*.log" for i in range(5000)] + [f"*.tmp{i}" for i in range(5000)]
    rules = parse("\n".join(literals + globs + ["!pkg7/mod.o", "pkg1*/"]) + "\n")
    assert compiled == []  # parsing compiles nothing (no character classes here)
    assert is_ignored(rules, "HYG004", "pkg3/mod.o") and not is_ignored(rules, "HYG004", "pkg7/mod.o")
    assert is_ignored(rules, "HYG001", "data/shard-000042.bin") and not is_ignored(
        rules, "HYG001", "pkg3/mod.o"
    )
    assert is_ignored(rules, "HYG001", "logs/run-4999/x.log") and is_ignored(rules, "HYG002", "a/b/c.tmp17")
    assert is_ignored(rules, "HYG002", "pkg12/deep/file") and not is_ignored(rules, "HYG002", "pkg12")
    # only the globs a path could match are compiled, GLOBS_PER_REGEX to a regex: the 5000
    # logs/ lines, the one *.tmp17 line and the pkg1*/ line; the 40000 literal lines never
    assert len(compiled) == 5000 // ignore.GLOBS_PER_REGEX + 2, len(compiled)
    for _ in range(3):
        is_ignored(rules, "HYG001", "logs/run-3/y.log")
    assert len(compiled) == 5000 // ignore.GLOBS_PER_REGEX + 2  # once each


def test_an_ignore_file_over_the_size_limit_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(ignore, "MAX_IGNORE_BYTES", 1000)
    path = tmp_path / "big.ignore"
    path.write_text("x\n" * 600)
    with pytest.raises(InputError) as err:
        ignore.load(str(path))
    assert str(err.value) == f"{path}: 1200 bytes, more than an ignore file may hold (1000 bytes)"


def test_a_bad_bracket_still_names_its_line():
    with pytest.raises(InputError) as err:
        parse("ok.txt\n*.log\n[z-a].py\n")
    assert str(err.value).startswith(".stackcheck-ignore: line 3: not a valid pattern (")
