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

# No test reads the real home directory: ~ (Jupyter's user data dir, the user site, git's
# global config, ~/.config) is an empty throwaway directory for the whole session and every
# subprocess it starts; variables that point elsewhere in a user's home are dropped.
_home = tempfile.mkdtemp(prefix="stackcheck-test-home-")
atexit.register(shutil.rmtree, _home, True)
os.environ["HOME"] = _home
for _var in (
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_DIRS",
    "PYTHONUSERBASE",
    "JUPYTER_PATH",
    "JUPYTER_DATA_DIR",
    "JUPYTER_CONFIG_DIR",
    "JUPYTER_RUNTIME_DIR",
    "JUPYTER_CONFIG_PATH",
):
    os.environ.pop(_var, None)

# Property tests are deterministic: the same examples on every run and machine (a failure
# found once is a failure every time, never a 1-in-15 flake), no example database, no
# timing-based deadline or health check (these machines are shared and noisy). Tests keep
# their own max_examples. HYPOTHESIS_PROFILE=explore searches with fresh random seeds.
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("explore", deadline=None, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


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
