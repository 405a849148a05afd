"""Session-wide test settings."""

import atexit
import os
import shutil
import tempfile

# The probe's metadata cache goes to a throwaway directory, never the user's ~/.cache;
# subprocesses (the CLI under test) inherit it.
if "STACKCHECK_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="stackcheck-test-cache-")
    os.environ["STACKCHECK_CACHE_DIR"] = _cache
    atexit.register(shutil.rmtree, _cache, True)
