"""Shared fixtures of the triage tests: the knowledge base, the real error texts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackcheck.knowledge import load_knowledge

DATA = Path(__file__).parent.parent / "data"
TRIAGE_DATA = DATA / "triage"
SNAPSHOTS = DATA / "snapshots"


@pytest.fixture(scope="session")
def kb():
    return load_knowledge()


@pytest.fixture(scope="session")
def everyday(kb):
    rules = [r for r in kb.rules if 101 <= int(r.id[2:]) <= 149]
    assert rules, "everyday.json rules are loaded with the knowledge base"
    return rules


def cases() -> list[dict]:
    return json.loads((TRIAGE_DATA / "cases.json").read_text(encoding="utf-8"))["cases"]
