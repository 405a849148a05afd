"""Session-wide test settings."""

import atexit
import os
import shutil
import tempfile

import pytest

# The probe's metadata cache goes to a throwaway directory, never the user's ~/.cache;
# subprocesses (the CLI under test) inherit it.
if "STACKCHECK_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="stackcheck-test-cache-")
    os.environ["STACKCHECK_CACHE_DIR"] = _cache
    atexit.register(shutil.rmtree, _cache, True)



@pytest.fixture
def cli_main(capsys):
    """cli_main(*argv, stdin=bytes) → (exit code, stdout, stderr) of ``stackcheck ARGV`` run
    through the real entry point in this process (``stdin``: what '-' reads)."""
    import io
    import sys

    from tests.factories import run_cli

    def run(*argv, stdin: bytes | None = None):
        old = sys.stdin
        if stdin is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        try:
            return run_cli(capsys, *argv)
        finally:
            sys.stdin = old

    return run
