"""Where the ledger lives when no --ledger-dir is given: $STACKCHECK_LEDGER_DIR, else
`.stackcheck` at the git root above the working directory, else in the working directory."""

from __future__ import annotations

import pytest

from stackcheck.results.ledger import default_root


@pytest.fixture
def no_env(monkeypatch):
    monkeypatch.delenv("STACKCHECK_LEDGER_DIR", raising=False)


def test_git_root_above_the_working_directory(tmp_path, no_env):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    deep = tmp_path / "repo" / "a" / "b"
    deep.mkdir(parents=True)
    assert default_root(deep) == tmp_path / "repo" / ".stackcheck"
    assert default_root(tmp_path / "repo") == tmp_path / "repo" / ".stackcheck"


def test_a_worktree_git_file_counts_as_a_root(tmp_path, no_env):
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")
    assert default_root(tmp_path / "wt" / "sub") == tmp_path / "wt" / ".stackcheck"


def test_outside_git_the_working_directory(tmp_path, no_env):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert default_root(plain) == plain / ".stackcheck"


def test_environment_variable_wins(tmp_path, monkeypatch):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    monkeypatch.setenv("STACKCHECK_LEDGER_DIR", str(tmp_path / "team-ledger"))
    assert default_root(tmp_path / "repo") == tmp_path / "team-ledger"
    monkeypatch.setenv("STACKCHECK_LEDGER_DIR", "")  # empty: as if unset
    assert default_root(tmp_path / "repo") == tmp_path / "repo" / ".stackcheck"


def test_cli_uses_the_discovered_ledger(tmp_path, monkeypatch, cli_main):
    monkeypatch.delenv("STACKCHECK_LEDGER_DIR", raising=False)
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    deep = tmp_path / "repo" / "notebooks"
    deep.mkdir()
    monkeypatch.chdir(deep)
    assert cli_main("results", "list") == (
        0,
        f"no records in the ledger at {tmp_path / 'repo' / '.stackcheck'}\n",
        "",
    )
    monkeypatch.setenv("STACKCHECK_LEDGER_DIR", str(tmp_path / "team"))
    assert cli_main("results", "list") == (0, f"no records in the ledger at {tmp_path / 'team'}\n", "")
    assert not (deep / ".stackcheck").exists()
