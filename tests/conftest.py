"""Session-wide test settings."""

import os
import tempfile

# The probe's metadata cache goes to a throwaway directory, never the user's ~/.cache;
# subprocesses (the CLI under test) inherit it.
os.environ.setdefault("STACKCHECK_CACHE_DIR", tempfile.mkdtemp(prefix="stackcheck-test-cache-"))
