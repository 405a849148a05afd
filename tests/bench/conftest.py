"""Fixtures for the bench tests: tiny shapes, a deterministic clock, injected kernels."""

from __future__ import annotations

import json
import math
import random

import pytest

from stackcheck.bench.cases import Shape

ATTN = Shape(name="attn-tiny", op="attention", dtype="float32", heads=4, kv_heads=2, seq_q=16, head_dim=16)
ATTN_CAUSAL = Shape(
    name="attn-tiny-causal", op="attention", dtype="float32", heads=2, seq_q=16, head_dim=32, causal=True
)
GEMM = Shape(name="gemm-tiny", op="gemm", m=16, n=16, k=32)


class FakeClock:
    """A clock that only moves when a fake kernel says it took time."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def sleeping(clock: FakeClock, cost_s: float, *, seed: int, sigma: float = 0.05, spike_every: int = 0):
    """A ``prepare`` that runs the real kernel and then "sleeps" ``cost_s`` on the fake clock,
    times lognormal noise (``sigma``) from a seeded generator; every ``spike_every``-th run
    takes three times as long (the outliers a loaded machine gives)."""
    from stackcheck.bench.backends import prepare

    rng = random.Random(seed)
    calls = [0]

    def _prepare(backend, shape, device, case_seed):
        fn, inputs = prepare(backend, shape, device, case_seed)

        def run():
            out = fn()
            calls[0] += 1
            spike = 3.0 if spike_every and calls[0] % spike_every == 0 else 1.0
            clock.now += cost_s * spike * math.exp(rng.gauss(0.0, sigma))
            return out

        return run, inputs

    return _prepare


def wrong_by(factor: float, only: str):
    """A ``prepare`` whose backend ``only`` returns its output scaled by ``factor`` (a broken kernel)."""
    from stackcheck.bench.backends import prepare

    def _prepare(backend, shape, device, seed):
        fn, inputs = prepare(backend, shape, device, seed)
        if backend.name != only:
            return fn, inputs
        return (lambda: fn() * factor), inputs

    return _prepare


@pytest.fixture
def cpu():
    from stackcheck.bench.backends import Device

    return Device("cpu", "test cpu", (0, 0), "2.13.0+cpu")


@pytest.fixture(scope="session")
def bench_catalog(tmp_path_factory):
    """The test profiles of tests/results (LAB-CPU: a cpu-smoke profile every snapshot passes)."""
    from stackcheck.catalog import load_catalog
    from tests.results.conftest import REGISTRY

    path = tmp_path_factory.mktemp("bench-registry") / "environment-profiles.json"
    path.write_text(json.dumps(REGISTRY))
    return load_catalog(str(path))


@pytest.fixture(scope="session")
def laptop():
    from stackcheck.environment import load_snapshot
    from tests.factories import SNAPSHOTS

    return load_snapshot(SNAPSHOTS / "cpu-laptop.json")


@pytest.fixture
def ledger(tmp_path):
    from stackcheck.results.ledger import Ledger

    with Ledger(tmp_path / "ledger") as led:
        yield led
