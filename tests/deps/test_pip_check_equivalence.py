"""`stackcheck deps conflicts --no-extras` finds exactly what the real `pip check` finds, on real
venvs with randomly injected missing / conflicting requirements, markers, extras, odd name
spellings, pre-releases and local version labels."""

from __future__ import annotations

import json
import random
import re

import pytest
from click.testing import CliRunner
from fakeenv import make_venv, pip_check, write_dist
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from stackcheck.cli import cli

pytestmark = pytest.mark.slow

NAMES = ["alpha", "Beta_Lib", "gamma.core", "delta", "eps-ilon", "zeta", "eta", "theta", "iota", "kappa"]
VERSIONS = ["0.3", "1.0", "1.2.1", "1.5", "2.0rc1", "2.0", "2.4+cu121", "3.1"]
SPECS = ["", ">=1.0", "<2", "==1.5", "!=0.3", "~=1.2", ">=0.5,<3", "==2.4", ">2.0a0"]
MARKERS = [
    "",
    "",
    "; python_version >= '3.8'",
    "; python_version < '3.0'",
    "; sys_platform == 'win32'",
    "; platform_system == 'Linux'",
    "; extra == 'x'",
    "; extra == 'y' and python_version > '3'",
]


def spelled(name: str, rng: random.Random) -> str:
    """The same project written another way (pip and stackcheck must both normalize)."""
    return rng.choice([name, name.upper(), name.replace("-", "_").replace(".", "-")])


def inject(site, rng: random.Random) -> None:
    installed = rng.sample(NAMES, 7)
    for name in installed:
        reqs = []
        for _ in range(rng.randint(0, 4)):
            target = rng.choice(NAMES)
            if target == name:
                continue
            extras = rng.choice(["", "", "[x]"])
            reqs.append(f"{spelled(target, rng)}{extras}{rng.choice(SPECS)}{rng.choice(MARKERS)}")
        write_dist(
            site,
            name,
            rng.choice(VERSIONS),
            reqs,
            provides_extras=("x", "y"),
            modules=(re.sub(r"\W", "_", name.lower()),),
        )


def pip_findings(lines: list[str]) -> set[tuple]:
    out = set()
    for line in lines:
        if m := re.match(r"^(\S+) (\S+) requires (\S+), which is not installed\.$", line):
            out.add(("missing", canonicalize_name(m[1]), canonicalize_name(m[3]), None))
        elif m := re.match(r"^(\S+) (\S+) has requirement (.+), but you have (\S+) (\S+)\.$", line):
            out.add(("mismatch", canonicalize_name(m[1]), canonicalize_name(m[4]), str(Requirement(m[3]))))
        elif line != "No broken requirements found.":
            raise AssertionError(f"unexpected pip check line: {line}")
    return out


def our_findings(python: str, *extra_args: str) -> tuple[int, list[dict]]:
    result = CliRunner().invoke(cli, ["deps", "conflicts", "--python", python, "--json", *extra_args])
    conflicts = json.loads(result.output)["conflicts"]
    assert result.exit_code == (1 if conflicts else 0), result.output  # exit 1 exactly when there are any
    return result.exit_code, conflicts


def as_pip_set(conflicts: list[dict]) -> set[tuple]:
    return {
        (
            c["state"],
            canonicalize_name(c["package"]),
            c["name"],
            str(Requirement(c["requirement"])) if c["state"] == "mismatch" else None,
        )
        for c in conflicts
    }


@pytest.mark.parametrize("seed", range(6))
def test_same_findings_as_pip_check(tmp_path, monkeypatch, seed):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    env = make_venv(tmp_path / "venv")
    inject(env.site, random.Random(seed))
    pip_code, lines = pip_check(env.python)
    code, conflicts = our_findings(env.python, "--no-extras")
    assert as_pip_set(conflicts) == pip_findings(lines)
    assert code == pip_code
    # with extras propagated we only ever add findings, each marked with its extra
    _, with_extras = our_findings(env.python)
    base = [c for c in with_extras if c["via_extra"] is None]
    assert as_pip_set(base) == pip_findings(lines)


def test_the_seeds_cover_both_kinds_of_finding(tmp_path, monkeypatch):
    """Guard against a generator that stopped producing faults (the test above would pass)."""
    kinds = set()
    for seed in range(6):
        env = make_venv(tmp_path / f"v{seed}")
        inject(env.site, random.Random(seed))
        kinds |= {c["state"] for c in our_findings(env.python, "--no-extras")[1]}
    assert kinds == {"missing", "mismatch"}
