"""The deps tests share the fake-environment toolkit of tests/doctor."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "doctor"))
