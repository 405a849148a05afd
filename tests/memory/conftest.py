import json
from pathlib import Path

import pytest

from tests.factories import SHARED

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"
WORKED = SHARED / "reference" / "memory_worked_examples.json"


def load_config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


@pytest.fixture(scope="session")
def worked() -> dict:
    """The reference worked figures (FACTS.md §6b); tests skip where the shared tree is absent."""
    if not WORKED.exists():
        pytest.skip("shared reference memory_worked_examples.json not present")
    return json.loads(WORKED.read_text())
