"""A CI log quotes secrets; nothing that mining keys, stores or writes keeps them."""

from __future__ import annotations

from stackcheck.mining.extract import scan_lines

TOKEN = "ghp_" + "Zq9x" + "0" * 32  # assembled at run time, so the repo passes hygiene
PASSWORD = "Zq8xpw" + "1234"


def test_a_failure_and_the_env_facts_of_a_job_are_redacted_before_they_are_kept():
    lines = [
        "Collecting privlib",
        f"privlib @ git+https://ci:{PASSWORD}@github.com/org/privlib.git",
        "Traceback (most recent call last):",
        '  File "/w/app/train.py", line 3, in <module>',
        f"RuntimeError: 401 from https://ci:{PASSWORD}@mirror.example.com/simple (token {TOKEN})",
        "##[error]Process completed with exit code 1.",
    ]
    scan = scan_lines(lines)
    kept = repr(scan.failures) + repr(scan.facts) + repr(list(scan.counts))
    assert scan.failures, "the traceback is a failure"
    assert PASSWORD not in kept and TOKEN not in kept
    messages = [f.message for f in scan.failures.values()]
    assert any("https://<redacted>@mirror.example.com/simple" in m for m in messages)
