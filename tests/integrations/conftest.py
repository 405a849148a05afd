"""The ledger of tests/report (built once per session) and a snapshot that carries secrets."""

from __future__ import annotations

import importlib

import pytest

from tests.factories import SNAPSHOTS, missing_prerequisite
from tests.report.conftest import SECRET_PASSWORD, SECRET_TOKEN, built  # noqa: F401  (fixture)
from tests.results.conftest import registry_file  # noqa: F401  (fixture)


@pytest.fixture
def secret_snapshot():
    """h100-single with an HF token in its environment and an index password in a pip option."""
    import msgspec

    from stackcheck.models.snapshot import Snapshot

    # decoded, not loaded: load_snapshot redacts (and marks) what it loads, and this one must
    # reach the exporters with its secrets in place
    snap = msgspec.json.decode((SNAPSHOTS / "h100-single.json").read_bytes(), type=Snapshot)
    snap.env.variables = {
        **snap.env.variables,
        "HF_TOKEN": SECRET_TOKEN,
        "PIP_EXTRA_INDEX_URL": f"https://ci:{SECRET_PASSWORD}@pypi.example.org/simple",
    }
    return snap


def no_secret_under(root) -> list[str]:
    """Files under ``root`` whose bytes hold either secret (an empty list: none)."""
    hits = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if SECRET_TOKEN.encode() in data or SECRET_PASSWORD.encode() in data:
                hits.append(str(path))
    return hits


def need(module: str, extra: str):
    """``module`` imported, or the test skips (fails under CI=true) naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        missing_prerequisite(f"{module} is not installed (pip install 'stackcheck[{extra}]')")
