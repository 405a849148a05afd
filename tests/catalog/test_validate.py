"""validate(): deliberately broken registries, one exact `file: profile.field: message` line per problem."""

from __future__ import annotations

import pytest

import stackcheck.knowledge.consistency as consistency
from stackcheck.catalog import Problem, validate
from stackcheck.errors import InputError

PROFILE_FIELDS = (
    "id, title, category, purpose, extends, python, requirements, constraints, required_modules, "
    "forbidden, gpu, platform, evidence_scope, docs, notes"
)


def check(write_registry, profiles, **top) -> list[str]:
    path = write_registry(profiles, include_builtin=top.pop("include_builtin", False), **top)
    return [str(p).removeprefix(f"{path}: ") for p in validate(str(path))]


def test_problem_renders_as_one_line():
    p = Problem(file="r.json", profile="X", field="python", message="bad")
    assert str(p) == "r.json: X.python: bad"


def test_unknown_keys_are_problems_not_exceptions(write_registry):
    assert check(
        write_registry,
        [
            {"id": "TOP", "reqs": []},
            {"id": "NESTED", "forbidden": [{"requirement": "vllm", "reasn": "typo"}]},
            {"id": "GPU", "gpu": {"min_cc": "8.0"}},
        ],
    ) == [
        f"TOP.reqs: unknown field (expected one of: {PROFILE_FIELDS})",
        "NESTED.forbidden[0].reasn: unknown field (expected one of: requirement, reason, use_instead)",
        "GPU.gpu.min_cc: unknown field (expected one of: min_count, min_memory_gib, "
        "min_compute_capability, max_compute_capability, torch_cuda)",
    ]


def test_wrong_types_and_enum_values(write_registry):
    assert check(
        write_registry,
        [
            {"id": "T", "python": 3.10},
            {"id": "E", "evidence_scope": "cloud"},
            {"title": "no id"},
            "not an object",
        ],
    ) == [
        "T.python: expected `str | null`, got `float`",
        "E.evidence_scope: invalid enum value 'cloud' (expected one of: cpu-smoke, single-gpu, "
        "multi-gpu, serving)",
        "profiles[2].id: missing required field",
        "profiles[3].(profile): expected a JSON object, got a string",
    ]


def test_registry_level_problems(write_registry, tmp_path):
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    assert [str(p) for p in validate(str(path))] == [
        f'{path}: registry.(top level): expected a JSON object with a "profiles" array, got an array'
    ]
    assert check(write_registry, [], extra_key=1) == [
        "registry.extra_key: unknown field (expected one of: schema_version, profiles, include_builtin)"
    ]
    assert check(write_registry, [], schema_version="2.0") == [
        "registry.schema_version: unsupported schema version '2.0', expected 1.x"
    ]
    assert check(write_registry, [], include_builtin="yes") == [
        "registry.include_builtin: expected `bool`, got `str`"
    ]


def test_bad_pep440_and_pep508(write_registry):
    found = check(
        write_registry,
        [
            {
                "id": "S",
                "python": ">=3.x",
                "requirements": ["torch>>2", "ok>=1"],
                "constraints": ["numpy>=1,<"],
                "forbidden": [{"requirement": "v llm!"}],
                "gpu": {"torch_cuda": "12.8"},
            },
        ],
    )
    assert found[0] == "S.python: invalid PEP 440 specifier '>=3.x'"
    assert found[1] == "S.gpu.torch_cuda: invalid PEP 440 specifier '12.8'"
    assert found[2].startswith("S.requirements[0]: invalid PEP 508 requirement 'torch>>2': Expected")
    assert found[3].startswith("S.constraints[0]: invalid PEP 508 requirement 'numpy>=1,<': Expected")
    assert found[4].startswith("S.forbidden[0].requirement: invalid PEP 508 requirement 'v llm!': ")
    assert len(found) == 5 and all("\n" not in f for f in found)


def test_unknown_and_cyclic_extends_and_duplicate_ids(write_registry):
    assert check(
        write_registry,
        [
            {"id": "BASE"},
            {"id": "TYPO", "extends": ["BASEE"]},
            {"id": "A", "extends": ["B"]},
            {"id": "B", "extends": ["A"]},
            {"id": "BEHIND-CYCLE", "extends": ["A"]},  # broken by its parent, not itself reported as a cycle
            {"id": "BASE", "title": "again"},
            {"id": "bad id"},
        ],
    ) == [
        "BASE.id: duplicate profile ID (first defined at profiles[0])",
        "TYPO.extends: unknown parent profile 'BASEE' (did you mean BASE?)",
        "A.extends: cyclic extends: A -> B -> A",
        "B.extends: cyclic extends: B -> A -> B",
        "bad id.id: expected letters, digits, '.', '_' or '-' (no spaces)",
    ]


def test_ranges_left_empty_by_layering(write_registry):
    assert check(
        write_registry,
        [
            {"id": "BASE", "python": ">=3.13", "requirements": ["torch>=2.6"]},
            {"id": "CHILD", "extends": ["BASE"], "python": "<3.12", "requirements": ["torch<2.5"]},
            {
                "id": "GRANDCHILD",
                "extends": ["CHILD"],
            },  # inherits the contradiction: reported once, at its origin
            {"id": "CONS", "requirements": ["torch==2.8.0"], "constraints": ["torch>=2.9"]},
        ],
    ) == [
        "CHILD.python: no Python version satisfies '<3.12,>=3.13' after layering (BASE: >=3.13; "
        "CHILD: <3.12)",
        "CHILD.requirements: torch: no version satisfies '<2.5,>=2.6' after layering (BASE: "
        ">=2.6; CHILD: <2.5)",
        "CONS.constraints: torch: the constraint '>=2.9' excludes every version the requirement "
        "'torch==2.8.0' admits",
    ]


def test_gpu_thresholds_that_contradict(write_registry):
    assert check(
        write_registry,
        [
            {"id": "NEG", "gpu": {"min_count": -1, "min_memory_gib": -2}},
            {"id": "CC", "gpu": {"min_compute_capability": "9.0", "max_compute_capability": "8.6"}},
            {"id": "FMT", "gpu": {"min_compute_capability": "sm_80"}},
            {"id": "BASE", "gpu": {"min_compute_capability": "9.0", "torch_cuda": ">=13"}},
            {
                "id": "LAYERED",
                "extends": ["BASE"],
                "gpu": {"max_compute_capability": "8.9", "torch_cuda": "<12.9"},
            },
        ],
    ) == [
        "NEG.gpu.min_count: negative GPU count -1",
        "NEG.gpu.min_memory_gib: negative memory -2.0 GiB",
        "CC.gpu: min_compute_capability 9.0 is above max_compute_capability 8.6",
        "FMT.gpu.min_compute_capability: expected a compute capability like '8.0', got 'sm_80'",
        "LAYERED.gpu.torch_cuda: no CUDA build satisfies '<12.9,>=13' after layering",
        "LAYERED.gpu: min_compute_capability 9.0 is above max_compute_capability 8.9 after layering",
    ]


def test_requirement_on_a_package_the_profile_forbids(write_registry):
    assert check(
        write_registry,
        [
            {"id": "GUARD", "forbidden": [{"requirement": "vllm", "use_instead": "SERVE"}]},
            {
                "id": "SERVE",
                "requirements": ["vllm==0.11.0"],
                "forbidden": [{"requirement": "vllm!=0.11.0"}],
            },  # fine: disjoint
            {"id": "TRAIN", "extends": ["GUARD"], "requirements": ["vllm>=0.10"]},
            {"id": "PINNED", "requirements": ["vllm==0.25.1"], "forbidden": [{"requirement": "vllm>=0.20"}]},
            {
                "id": "PARTIAL",
                "requirements": ["vllm>=0.10"],
                "forbidden": [{"requirement": "vllm==0.11.0"}],
            },  # fine: 0.10 remains
            {
                "id": "REF",
                "forbidden": [
                    {"requirement": "sglang", "use_instead": "NOPE"},
                    {"requirement": "x", "use_instead": "REF"},
                ],
            },
        ],
    ) == [
        "TRAIN.forbidden: vllm: required as 'vllm>=0.10' but the profile forbids 'vllm'",
        "PINNED.forbidden: vllm: required as 'vllm==0.25.1' but the profile forbids 'vllm>=0.20'",
        "REF.forbidden[0].use_instead: 'NOPE' is an unknown profile; name the profile where 'sglang' belongs",
        "REF.forbidden[1].use_instead: 'REF' is the profile itself; name the profile where 'x' belongs",
    ]


def test_platform_values(write_registry):
    assert check(
        write_registry,
        [{"id": "P", "platform": {"os": ["linux", "beos"], "arch": ["riscv"], "min_glibc": "new"}}],
    ) == [
        "P.platform.os: unknown os 'beos', expected one of linux, darwin, windows",
        "P.platform.arch: unknown arch 'riscv', expected one of x86_64, aarch64, arm64, amd64",
        "P.platform.min_glibc: expected a glibc version like '2.28', got 'new'",
    ]


def test_platform_sets_that_layering_empties(write_registry):
    assert check(
        write_registry,
        [
            {"id": "LINUX", "platform": {"os": ["linux"], "arch": ["x86_64", "aarch64"]}},
            {"id": "WIN", "extends": ["LINUX"], "platform": {"os": ["windows"], "arch": ["aarch64"]}},
        ],
    ) == ["WIN.platform.os: no os is allowed by every layer (LINUX: linux; WIN: windows)"]


def test_knowledge_consistency_becomes_problems(write_registry, monkeypatch):
    def profile_problems(profile):
        if "vllm==0.11.0" in profile.requirements and "torch==2.9.0" in profile.requirements:
            return [("requirements", "vllm 0.11.0 pins torch==2.8.0, the profile requires torch==2.9.0")]
        return []

    monkeypatch.setattr(consistency, "profile_problems", profile_problems)
    assert check(
        write_registry,
        [
            {"id": "SERVE", "requirements": ["vllm==0.11.0", "torch==2.9.0"]},
            {"id": "OK", "requirements": ["vllm==0.11.0"]},
        ],
    ) == [
        "SERVE.requirements: vllm 0.11.0 pins torch==2.8.0, the profile requires torch==2.9.0",
    ]


def test_user_registry_over_builtin_validates_against_it(write_registry):
    path = write_registry(
        [
            {"id": "MY-SFT", "extends": ["PT-SFT-CUDA"], "requirements": ["wandb"]},
            {"id": "MY-BAD", "extends": ["PT-SFT-CUDA"], "requirements": ["torch<2.5", "bitsandbytes"]},
        ]
    )
    assert [str(p) for p in validate(str(path))] == [
        f"{path}: MY-BAD.requirements: torch: no version satisfies '<2.5,<3,>=2.6' after "
        "layering (LAYER-TORCH: <3,>=2.6; MY-BAD: <2.5)",
        f"{path}: MY-BAD.forbidden: bitsandbytes: required as 'bitsandbytes' but the profile "
        "forbids 'bitsandbytes'",
    ]


def test_discovers_the_registry_like_load_catalog(write_registry, tmp_path):
    write_registry([{"id": "X", "extends": ["NOPE"]}], path="requirements/environment-profiles.json")
    (tmp_path / "sub").mkdir()
    found = validate(cwd=str(tmp_path / "sub"))
    assert [(p.profile, p.field) for p in found] == [("X", "extends")]


@pytest.mark.parametrize("content", [b'{"profiles": [', b"\x89PNG\r\n\x1a\n\x00\x00", b"{'profiles': []}"])
def test_unreadable_registries_raise(tmp_path, content):
    path = tmp_path / "reg.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        validate(str(path))
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)
