"""The pytest plugin (entry point ``stackcheck``): ``pytest --stackcheck-bench`` adds the
backend regression suite to a test run, one test per backend × shape.

pytest loads this module in every run, ours included: it only declares its options. Without
``--stackcheck-bench`` nothing else happens and nothing else is imported; with it, the
session plugin of :mod:`stackcheck.bench.pytest_session` adds the cases, and at the end
writes the run's files (bench.json, the matrix, pytest-benchmark JSON) and, when asked,
the records and a comparison with a baseline.
"""

from __future__ import annotations


def pytest_addoption(parser) -> None:
    group = parser.getgroup("stackcheck", "stackcheck backend regression suite")
    group.addoption(
        "--stackcheck-bench",
        action="store_true",
        default=False,
        help="Add the backend regression suite (one test per backend × shape).",
    )
    group.addoption(
        "--stackcheck-bench-shapes",
        metavar="SET|FILE",
        default="default",
        help="Built-in shape set (default, tiny) or a JSON shape file.",
    )
    group.addoption(
        "--stackcheck-bench-backend",
        metavar="NAME",
        action="append",
        default=[],
        help="Only this backend or group (repeatable).",
    )
    group.addoption("--stackcheck-bench-reps", metavar="N", type=int, default=20, help="Timed repetitions.")
    group.addoption("--stackcheck-bench-warmup", metavar="N", type=int, default=3, help="Warm-up runs.")
    group.addoption(
        "--stackcheck-bench-out",
        metavar="DIR",
        default=".stackcheck/bench",
        help="Where bench.json, matrix.txt, matrix.md and pytest-benchmark.json go.",
    )
    group.addoption(
        "--stackcheck-bench-record",
        action="store_true",
        default=False,
        help="Store each case in the evidence ledger (STACKCHECK_LEDGER_DIR / STACKCHECK_LEDGER).",
    )
    group.addoption(
        "--stackcheck-bench-baseline",
        metavar="RUN",
        default=None,
        help="Compare with this run (bench.json, its directory or pytest-benchmark JSON); "
        "a regression fails the session.",
    )


def pytest_configure(config) -> None:
    if not config.getoption("stackcheck_bench", False):
        return
    if getattr(config.option, "numprocesses", None) or hasattr(config, "workerinput"):
        import pytest

        raise pytest.UsageError(
            "--stackcheck-bench times kernels: run it without -n (pytest-xdist workers would share "
            "the machine and time each other)"
        )
    from stackcheck.bench.pytest_session import BenchSession

    config.addinivalue_line("markers", "stackcheck_bench: a case of the stackcheck backend regression suite")

    config.pluginmanager.register(BenchSession(config), "stackcheck-bench-session")
