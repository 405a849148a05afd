"""Profiles, registries, snapshots and drafts that used to end in a traceback (exit 1): each
is now a one-line error (exit 2) or a listed problem (``profiles validate``, exit 1)."""

from __future__ import annotations

import json

import pytest

from stackcheck.catalog.layering import MAX_EXTENDS_DEPTH, ProfileError, ancestry, resolve
from stackcheck.models.profile import Profile
from tests.bounded.hostile import BIG, cli, one_line_error

CUT = "'" + "1" * 48 + "…11111111"  # how messages show a 4,400-digit text (versions.clip)


def _registry(tmp_path, profiles, name="reg.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"schema_version": "1.0", "include_builtin": False, "profiles": profiles}))
    return str(path)


TOO_LONG = "a version of 4400 characters (at most 256)"
HUGE = {
    "requirements": (
        {"requirements": ["foo==" + BIG]},
        "A.requirements[0]",
        f"invalid PEP 508 requirement 'foo=={'1' * 43}…11111111': == {TOO_LONG}",
    ),
    "constraints": (
        {"constraints": ["foo<" + BIG]},
        "A.constraints[0]",
        f"invalid PEP 508 requirement 'foo<{'1' * 44}…11111111': < {TOO_LONG}",
    ),
    "forbidden": (
        {"forbidden": [{"requirement": "vllm>=" + BIG}]},
        "A.forbidden[0].requirement",
        f"invalid PEP 508 requirement 'vllm>={'1' * 42}…11111111': >= {TOO_LONG}",
    ),
    "python": ({"python": ">=" + BIG}, "A.python", f"invalid PEP 440 specifier '>={'1' * 46}…11111111'"),
    "torch_cuda": (
        {"gpu": {"torch_cuda": "==" + BIG}},
        "A.gpu.torch_cuda",
        f"invalid PEP 440 specifier '=={'1' * 46}…11111111'",
    ),
    "min_glibc": (
        {"platform": {"min_glibc": BIG + ".1"}},
        "A.platform.min_glibc",
        f"expected a glibc version like '2.28', got '{'1' * 48}…111111.1'",
    ),
    "min_cc": (
        {"gpu": {"min_compute_capability": BIG + ".0"}},
        "A.gpu.min_compute_capability",
        f"expected a compute capability like '8.0', got '{'1' * 48}…111111.0'",
    ),
}


@pytest.mark.parametrize("case", sorted(HUGE))
def test_profiles_validate_lists_a_huge_version_as_one_problem(tmp_path, case):
    fields, where, message = HUGE[case]
    reg = _registry(tmp_path, [{"id": "A", **fields}])
    proc = cli("profiles", "validate", reg)
    assert (proc.returncode, proc.stdout.splitlines()) == (1, [f"{reg}: {where}: {message}"])
    assert proc.stderr == f"1 problem in {reg}\n"


@pytest.mark.parametrize("case", ["requirements", "constraints", "forbidden", "python", "torch_cuda"])
def test_preflight_refuses_a_profile_with_a_huge_version_in_one_line(tmp_path, case):
    fields, where, message = HUGE[case]
    reg = _registry(tmp_path, [{"id": "A", **fields}])
    one_line_error(cli("preflight", "--registry", reg, "-p", "A"), f"{reg}: {where}: {message}")


def _chain(n: int) -> list[dict]:
    return [{"id": "P0"}] + [{"id": f"P{i}", "extends": [f"P{i - 1}"]} for i in range(1, n)]


def test_an_extends_chain_of_1000_profiles_is_one_line_not_a_recursion_error(tmp_path):
    reg = _registry(tmp_path, _chain(1000))
    said = "P999.extends: extends chain longer than 32 profiles (P999 -> P998 -> P997 -> … -> P967)"
    one_line_error(cli("preflight", "--registry", reg, "-p", "P999"), f"{reg}: {said}")


def test_profiles_validate_names_the_first_profile_too_deep_only(tmp_path):
    reg = _registry(tmp_path, _chain(1000))
    proc = cli("profiles", "validate", reg)
    assert (proc.returncode, proc.stdout.splitlines(), proc.stderr) == (
        1,
        [
            f"{reg}: P32.extends: extends chain longer than 32 profiles (P32 -> P31 -> P30 -> … -> P0)",
        ],
        f"1 problem in {reg}\n",
    )


def test_the_depth_limit_is_exact():
    profiles = {
        f"P{i}": Profile(id=f"P{i}", extends=[f"P{i - 1}"] if i else []) for i in range(MAX_EXTENDS_DEPTH + 1)
    }
    deepest_ok = f"P{MAX_EXTENDS_DEPTH - 1}"
    assert resolve(deepest_ok, profiles.get).layers == [f"P{i}" for i in range(MAX_EXTENDS_DEPTH)]
    with pytest.raises(ProfileError) as too_deep:
        ancestry(f"P{MAX_EXTENDS_DEPTH}", profiles.get)
    assert too_deep.value.too_deep and too_deep.value.field == "extends"


def test_a_wide_diamond_is_not_too_deep():
    """Depth counts profiles on one path, not ancestors: 200 parents of one child is fine."""
    profiles = {f"B{i}": Profile(id=f"B{i}", extends=["ROOT"]) for i in range(200)}
    profiles["ROOT"] = Profile(id="ROOT")
    profiles["LEAF"] = Profile(id="LEAF", extends=[f"B{i}" for i in range(200)])
    assert len(ancestry("LEAF", profiles.get)) == 202


NESTED = "[" * 100_000 + "]" * 100_000  # msgspec recurses per level: RecursionError, caught in fileio


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (("preflight", "--snapshot", "{file}", "-p", "BASE-CPU"), "expected a stackcheck snapshot"),
        (("profiles", "validate", "{file}"), "expected a profile registry"),
        (("results", "validate", "{file}"), None),
        (("memory", "--config", "{file}"), "expected a Hugging Face config.json"),
    ],
)
def test_json_nested_100k_deep_is_one_line_exit_2(tmp_path, args, what):
    path = tmp_path / "deep.json"
    path.write_text('{"schema_version": "1.0", "profiles": ' + NESTED + "}")
    proc = cli(*(a.format(file=path) for a in args))
    if what is None:  # results validate lists each unreadable file on stdout
        assert (proc.returncode, "Traceback" in proc.stderr) == (2, False)
        said = "JSON nested too deeply (hundreds of levels), expected a result record or draft"
        assert proc.stdout.splitlines()[1].strip() == said
        return
    one_line_error(proc, f"{path}: JSON nested too deeply (hundreds of levels), {what}")


def test_a_deeply_nested_kernel_json_is_an_unreadable_kernelspec(tmp_path):
    from stackcheck.probe.kernels import read_kernelspec

    path = tmp_path / "kernel.json"
    path.write_text('{"argv": ' + NESTED + "}")
    assert read_kernelspec("k", str(path)) == (None, "malformed JSON: nested too deeply")
