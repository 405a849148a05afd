"""Where the ledger lives: ``--ledger-dir`` that is a file is one line (no traceback);
``--ledger`` takes a PostgreSQL DSN, ``sqlite:///abs/path``, ``sqlite:relative/path`` or a
file path in an existing directory, and nothing else (no stray files named after a URL)."""

from __future__ import annotations

import json
import os

import pytest

from stackcheck.errors import InputError
from stackcheck.results.index import parse_ledger_url
from tests.results.conftest import cli_runner, full_draft, snapshot_path


@pytest.fixture
def sc(tmp_path, registry_file, capsys, monkeypatch):
    """sc(*argv) → (exit code, stdout, stderr), run in tmp_path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STACKCHECK_LEDGER", raising=False)
    monkeypatch.delenv("STACKCHECK_LEDGER_DIR", raising=False)
    return cli_runner(capsys, registry_file)


def _draft(tmp_path) -> str:
    path = tmp_path / "draft.json"
    path.write_text(json.dumps(full_draft()))
    return str(path)


# ------------------------------------------------------------------ --ledger-dir
@pytest.mark.parametrize("command", ["list", "reindex", "assets", "validate", "record"])
def test_ledger_dir_that_is_a_file_is_one_line(sc, tmp_path, command):
    (tmp_path / "f").write_text("")
    extra = [_draft(tmp_path), "--snapshot", str(snapshot_path("h100-single"))] if command == "record" else []
    code, out, err = sc(command, *extra, "--ledger-dir", "f")
    assert (code, out) == (2, "")
    assert (
        err == "stackcheck: error: f: exists and is not a directory (expected the ledger directory, "
        "--ledger-dir)\n"
    )


def test_ledger_dir_below_a_file_is_one_line(sc, tmp_path):
    (tmp_path / "f").write_text("")
    code, out, err = sc("list", "--ledger-dir", "f/sub")
    assert (code, out) == (2, "")
    assert (
        err == "stackcheck: error: f/sub: f is a file, not a directory (expected the ledger directory, "
        "--ledger-dir)\n"
    )


# ------------------------------------------------------------------ --ledger
SUPPORTED = (
    "give a PostgreSQL DSN (postgresql://HOST/DB), sqlite:///ABSOLUTE/PATH, "
    "sqlite:RELATIVE/PATH or a file path in an existing directory"
)


@pytest.mark.parametrize(
    "url", ["mysql://x", "mysql://user:hunter2@db/x", "http://example.org/l.db", "sqlite://host/x.db"]
)
def test_other_url_schemes_are_refused_and_create_nothing(sc, tmp_path, url):
    code, out, err = sc("list", "--ledger", url, "--ledger-dir", "d")
    assert (code, out) == (2, "")
    shown = url.replace("user:hunter2", "<redacted>")
    scheme = url.partition(":")[0]
    reason = "a sqlite URL has no host" if url.startswith("sqlite") else f"unsupported URL scheme {scheme!r}"
    assert err == f"stackcheck: error: --ledger {shown}: {reason}; {SUPPORTED}\n"
    assert "hunter2" not in err
    assert sorted(os.listdir(tmp_path)) == []  # no ./mysql:/x, no ledger dir


def test_sqlite_urls_name_the_real_file(sc, tmp_path):
    absolute = tmp_path / "data" / "x.db"
    absolute.parent.mkdir()
    code, _, err = sc("list", "--ledger", f"sqlite://{absolute}", "--ledger-dir", "d")
    assert code == 0, err
    assert absolute.is_file() and not (tmp_path / "sqlite:").exists()
    code, _, err = sc("list", "--ledger", "sqlite:data/rel.db", "--ledger-dir", "d")
    assert code == 0, err
    assert (tmp_path / "data" / "rel.db").is_file()


def test_plain_path_needs_an_existing_directory(sc, tmp_path):
    code, out, err = sc("list", "--ledger", "typo/ledger.sqlite", "--ledger-dir", "d")
    assert (code, out) == (2, "")
    assert err == (
        f"stackcheck: error: --ledger typo/ledger.sqlite: directory {tmp_path / 'typo'} does not exist "
        "(create it, or give a file in an existing directory)\n"
    )
    assert sorted(os.listdir(tmp_path)) == []
    code, _, err = sc("list", "--ledger", "index.sqlite", "--ledger-dir", "d")
    assert code == 0, err
    assert (tmp_path / "index.sqlite").is_file()


def test_a_directory_is_not_an_index_file(sc, tmp_path):
    (tmp_path / "dir").mkdir()
    code, out, err = sc("list", "--ledger", "dir", "--ledger-dir", "d")
    assert (code, out) == (2, "")
    assert err == (
        f"stackcheck: error: --ledger dir: {tmp_path / 'dir'} is a directory, expected the SQLite "
        f"index file (e.g. {tmp_path / 'dir' / 'ledger.sqlite'})\n"
    )


def test_parse_ledger_url_forms(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    assert parse_ledger_url("postgresql://u@h/db") == "postgresql://u@h/db"
    assert parse_ledger_url("postgres://u@h/db") == "postgres://u@h/db"
    assert parse_ledger_url(f"sqlite://{tmp_path}/a.db") == f"{tmp_path}/a.db"
    assert parse_ledger_url(f"sqlite:///{tmp_path}/a.db") == f"{tmp_path}/a.db"  # sqlite:////abs (SQLAlchemy)
    assert parse_ledger_url("sqlite:sub/a.db") == f"{tmp_path}/sub/a.db"
    assert parse_ledger_url("sub/a.db") == f"{tmp_path}/sub/a.db"
    for bad in ("sqlite:", "sqlite://", "sqlite:///"):
        with pytest.raises(InputError, match="a sqlite URL needs a file path"):
            parse_ledger_url(bad)
