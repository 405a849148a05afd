"""The suite never reads the real home directory: ~ is a throwaway folder (tests/conftest.py),
for this process and for every CLI it starts."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import tempfile
from pathlib import Path

from stackcheck.probe import kernels


def test_home_is_a_throwaway_directory():
    real = Path(pwd.getpwuid(os.getuid()).pw_dir)
    home = Path.home()
    assert home != real and home.parent == Path(tempfile.gettempdir())
    assert home.name.startswith("stackcheck-test-home-")
    assert not any(v in os.environ for v in ("XDG_DATA_HOME", "JUPYTER_PATH", "JUPYTER_DATA_DIR"))


def test_jupyter_user_dir_of_the_probe_is_inside_it():
    user_dir = kernels.jupyter_data_dirs(sys.prefix)[0]  # JUPYTER_PATH is unset: the user dir comes first
    assert user_dir == str(Path.home() / ".local" / "share" / "jupyter")
    assert not user_dir.startswith(pwd.getpwuid(os.getuid()).pw_dir + os.sep)


def test_subprocesses_inherit_it():
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.path.expanduser('~'))"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == str(Path.home())
