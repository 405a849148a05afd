"""Helpers: write throwaway registries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def write_registry(tmp_path: Path):
    """write_registry(profiles, path="reg.json", **top) -> Path of a registry JSON file."""

    def write(profiles: list, path: str = "reg.json", **top) -> Path:
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            json.dumps({"schema_version": "1.0", **top, "profiles": profiles}), encoding="utf-8"
        )
        return target

    return write
