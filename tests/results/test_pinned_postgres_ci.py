"""The PostgreSQL tests fail, never skip, in CI when the server did not start."""

from __future__ import annotations

import pytest

from .conftest import postgres_dsn


@pytest.mark.parametrize("ci", ["true", "1", "TRUE"])
def test_no_server_in_ci_fails(monkeypatch, ci):
    monkeypatch.delenv("STACKCHECK_TEST_POSTGRES_DSN", raising=False)
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception) as info:
        postgres_dsn()
    assert str(info.value).startswith(
        "CI=true but STACKCHECK_TEST_POSTGRES_DSN is not set: the PostgreSQL server did not start"
    )


@pytest.mark.parametrize("ci", [None, "", "false"])
def test_no_server_outside_ci_skips_saying_why(monkeypatch, ci):
    monkeypatch.delenv("STACKCHECK_TEST_POSTGRES_DSN", raising=False)
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception) as info:
        postgres_dsn()
    assert "source .ci/postgres.sh" in str(info.value)


def test_a_server_is_used_whatever_ci_says(monkeypatch):
    monkeypatch.setenv("STACKCHECK_TEST_POSTGRES_DSN", "postgresql://u@127.0.0.1:1/db")
    monkeypatch.setenv("CI", "true")
    assert postgres_dsn() == "postgresql://u@127.0.0.1:1/db"
