"""The command builder: whatever the argv, the printed text gives it back (shlex and bash)."""

from __future__ import annotations

import os
import shlex

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.checks.context import Context
from stackcheck.identifiers import problem
from stackcheck.models.snapshot import PythonSection, Snapshot
from stackcheck.shellcmd import chain, code, command, join, with_note
from tests.quoting.sandbox import Sandbox, parse, simple_commands

ANY_TEXT = st.text()
ARGV = st.lists(ANY_TEXT, max_size=8)
# what a terminal can carry: no NUL (argv strings end there), no lone surrogates
PASTEABLE = st.lists(
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12),
    min_size=1,
    max_size=5,
)


@settings(derandomize=True, deadline=None, max_examples=500)
@given(ARGV)
def test_the_printed_command_splits_back_into_its_argv(argv):
    text = join(argv)
    assert shlex.split(text) == argv
    assert shlex.split(text, comments=True) == argv  # no argument starts a comment
    assert command(*argv) == text


@settings(derandomize=True, deadline=None, max_examples=300)
@given(ARGV.filter(bool), ANY_TEXT)
def test_a_note_never_runs_and_never_ends_the_line(argv, note):
    text = with_note(join(argv), note)
    assert shlex.split(text, comments=True) == argv
    assert "\n" not in text[len(join(argv)) :] and "\r" not in text[len(join(argv)) :]


@settings(derandomize=True, deadline=None, max_examples=300)
@given(st.lists(ARGV.filter(bool), min_size=1, max_size=3))
def test_backticks_and_chains_delimit_exactly_the_commands(argvs):
    text = chain(*(join(a) for a in argvs))
    inline = code(text) + " and prose `after`"
    tokens, end = parse(inline[1:], in_backticks=True)
    assert end == len(text)  # the first unquoted backtick is the one code() added
    assert simple_commands(tokens) == (argvs, [])


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    return Sandbox(tmp_path_factory.mktemp("sandbox"))


@settings(
    derandomize=True,
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(PASTEABLE)
def test_bash_runs_exactly_the_printed_argv(sandbox, argv):
    assert sandbox.check(command("python", "-m", "pip", "install", *argv)) == 1


@settings(derandomize=True, deadline=None, max_examples=500)
@given(st.one_of(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", fullmatch=True), ANY_TEXT))
def test_an_accepted_name_needs_no_quoting_and_names_one_path_component(value):
    if problem(value) is None:
        assert shlex.quote(value) == value and os.path.basename(value) == value
        assert value not in (".", "..") and not value.startswith("-") and value.isascii()


def test_pip_reads_a_hostile_name_as_a_name_never_as_an_option():
    ctx = Context(snapshot=Snapshot(python=PythonSection(executable="/env/bin/python")))
    assert ctx.pip_install("torch==2.8.0", "--index-url", "https://x/cu128") == (
        "/env/bin/python -m pip install torch==2.8.0 --index-url https://x/cu128"
    )
    assert ctx.pip_install("--force-reinstall", "--no-deps", "--index-url=https://evil/simple==1.0") == (
        "/env/bin/python -m pip install --force-reinstall --no-deps -- --index-url=https://evil/simple==1.0"
    )
    assert ctx.pip_uninstall("-e", "ok") == "/env/bin/python -m pip uninstall -y -- -e ok"
    assert (
        ctx.pip_install("a", "--index-url", "https://x", "-rf")
        == "/env/bin/python -m pip install --index-url https://x -- a -rf"
    )
