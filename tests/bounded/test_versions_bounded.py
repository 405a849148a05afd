"""No version text crashes a check: an oversized or non-PEP 440 version is an observed fact.

The hostile snapshots are the recorded machines with every version-like text replaced by a
4,400-digit number (Python refuses to convert more than 4,300 digits to an int, and
packaging's Version raised ValueError, not InvalidVersion, on them)."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.specifiers import InvalidSpecifier
from packaging.version import InvalidVersion, Version

from stackcheck import versions
from stackcheck.catalog import load_catalog
from stackcheck.checks.context import Context
from stackcheck.checks.registry import all_checks
from stackcheck.environment import load_snapshot
from stackcheck.knowledge.archs import cc_tuple
from tests.bounded.hostile import BIG
from tests.factories import SNAPSHOTS


@given(st.text(max_size=300) | st.from_regex(r"\A[0-9.]{250,5000}\Z"))
def test_parse_version_never_raises(text):
    parsed = versions.parse_version(text)
    assert parsed is None or isinstance(parsed, Version)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2.8.0+cu128", Version("2.8.0+cu128")),
        ("1" * 256, Version("1" * 256)),  # at the limit: still parsed
        ("1" * 257, None),
        (BIG, None),
        ("1." * 5000 + "1", None),
        ("", None),
        (None, None),
        (3.12, None),
        ("３.１２", None),  # full-width digits are not PEP 440 digits
        ("not a version", None),
    ],
)
def test_parse_version_cases(text, expected):
    assert versions.parse_version(text) == expected


def test_unparsable_versions_are_shown_short():
    shown = f"'{'1' * 28}…{'1' * 8}'"
    assert versions.unparsable_version(BIG) == f"{shown} (not a PEP 440 version, 4400 characters)"
    assert versions.unparsable_version("abc") == "'abc' (not a PEP 440 version)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3.12.3", (3, 12)),
        ("3.13.0a1+", (3, 13)),
        ("3.¹²", None),
        (BIG + ".1", None),
        ("3", None),
        ("", None),
        (None, None),
    ],
)
def test_major_minor(text, expected):
    assert versions.major_minor(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8.6", (8, 6)),
        ("8.6.1", None),
        (BIG + ".0", None),
        ("8.²", None),
    ],
)
def test_compute_capability_tuples(text, expected):
    assert cc_tuple(text) == expected


def test_specifiers_with_oversized_versions_are_invalid_not_a_crash():
    with pytest.raises(InvalidSpecifier, match=r"^>= a version of 4400 characters \(at most 256\)$"):
        versions.parse(">=" + BIG)
    with pytest.raises(InvalidVersion):
        versions.contains(">=1", BIG)
    assert versions.contains(">=1", "2.0")


def test_requirements_with_oversized_versions_are_invalid_in_the_index():
    from stackcheck.deps.index import DistIndex, parse_requirement
    from tests.factories import dist, make_snapshot

    assert parse_requirement("foo==" + BIG) is None
    index = DistIndex(make_snapshot(dist("foo", "1.0")))
    assert index.evaluate("foo>=" + BIG).state == "invalid"
    assert index.evaluate("foo>=0.5").state == "satisfied"


_RUN = re.compile(r"\d+")


def _walk(value, change):
    if isinstance(value, dict):
        return {k: v if k == "schema_version" else _walk(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, change) for v in value]
    return change(value) if isinstance(value, str) else value


VARIANTS = {
    # every text that starts like a number ("2.8.0", "12.8", "535.104.05", "8.0") → 4,400 digits
    "leading": lambda s: BIG if s[:1].isdigit() else s,
    # every digit run inside version-like texts ("2.8.0+cu128", "nvidia-cublas-cu12", "sm_90", "python3.12")
    "runs": lambda s: _RUN.sub(BIG, s) if re.search(r"\d\.\d|cu\d|sm_\d", s) else s,
}


def _hostile_snapshots():
    files = sorted(Path(SNAPSHOTS).glob("*.json"))
    if not files:
        pytest.skip("no recorded snapshots")
    for f in files:
        base = load_snapshot(str(f))
        raw = msgspec.to_builtins(base)
        for name, change in VARIANTS.items():
            yield f"{f.stem}/{name}", msgspec.convert(_walk(raw, change), type(base))
        # packages and torch kept readable, so the checks that need them reach the other facts
        machine = {
            k: v if k in ("packages", "torch") else _walk(v, VARIANTS["leading"]) for k, v in raw.items()
        }
        yield f"{f.stem}/machine", msgspec.convert(machine, type(base))


def test_no_check_crashes_on_oversized_versions_anywhere():
    """Every registered check over every hostile snapshot (preflight with every built-in
    profile, doctor without one): no ``error`` outcome, so no check raised."""
    catalog = load_catalog()
    profiles = [catalog.get(pid) for pid in catalog.ids()]
    specs = list(all_checks().values())
    crashes = []
    for label, snap in _hostile_snapshots():
        runs = [("preflight", p) for p in profiles] + [("doctor", None)]
        for command, profile in runs:
            ctx = Context(snapshot=snap, profile=profile)
            for spec in specs:
                if command not in spec.commands or (spec.needs_profile and profile is None):
                    continue
                try:
                    list(spec.run(ctx))
                except Exception as exc:  # noqa: BLE001 — collected and reported below
                    what = f"{type(exc).__name__}: {str(exc)[:80]}"
                    crashes.append((label, command, profile.id if profile else None, spec.id, what))
    assert crashes == []


def test_hostile_snapshot_commands_exit_with_a_verdict_not_a_traceback(tmp_path):
    from tests.bounded.hostile import cli

    label, snap = next(s for s in _hostile_snapshots() if s[0].endswith("/leading"))
    path = tmp_path / "hostile.json"
    path.write_bytes(msgspec.json.encode(snap))
    for args, code in (
        (("preflight", "--snapshot", str(path), "-p", "GUARD-NO-ENGINES"), 1),
        (("doctor", "--snapshot", str(path)), 1),
        (("deps", "conflicts", "--snapshot", str(path)), 1),
    ):
        proc = cli(*args)
        got = (proc.returncode, "Traceback" in proc.stderr, "internal error" in proc.stdout)
        assert got == (code, False, False), (label, args, proc.stdout[-1500:], proc.stderr[-1500:])
