"""Layering: how ``extends`` merges profiles (base runtime → capability → backend)."""

from __future__ import annotations

import msgspec
import pytest

from stackcheck.catalog.layering import ProfileError, ancestry, resolve
from stackcheck.models.profile import Profile


def catalog(*profiles: dict):
    table = {p["id"]: msgspec.convert(p, Profile) for p in profiles}
    return table.get


def test_requirements_are_merged_per_package_and_intersected():
    lookup = catalog(
        {"id": "BASE", "requirements": ["torch>=2.6", "transformers[torch]>=4.56", "numpy"]},
        {
            "id": "CHILD",
            "extends": ["BASE"],
            "requirements": ["torch<2.9", "Transformers[sentencepiece]<5", "peft>=0.14"],
        },
    )
    p = resolve("CHILD", lookup)
    assert p.requirements == [
        "torch<2.9,>=2.6",
        "transformers[sentencepiece,torch]<5,>=4.56",
        "numpy",
        "peft>=0.14",
    ]
    assert p.extends == [] and p.layers == ["BASE", "CHILD"]


def test_marker_conditional_requirements_stay_separate():
    lookup = catalog(
        {"id": "BASE", "requirements": ["xformers==0.0.32.post1; platform_machine == 'x86_64'"]},
        {"id": "CHILD", "extends": ["BASE"], "requirements": ["xformers>=0.0.30"]},
    )
    assert resolve("CHILD", lookup).requirements == [
        'xformers==0.0.32.post1; platform_machine == "x86_64"',
        "xformers>=0.0.30",
    ]


def test_python_ranges_are_intersected_and_simplified():
    lookup = catalog(
        {"id": "BASE", "python": ">=3.10,<3.15"},
        {"id": "CHILD", "extends": ["BASE"], "python": ">=3.9,<3.14"},
    )
    assert resolve("CHILD", lookup).python == "<3.14,>=3.10"
    only_child = catalog({"id": "BASE"}, {"id": "CHILD", "extends": ["BASE"], "python": ">=3.11"})
    assert resolve("CHILD", only_child).python == ">=3.11"


def test_an_empty_range_is_kept_as_written_for_validation_to_report():
    lookup = catalog(
        {"id": "BASE", "requirements": ["torch>=2.6"]},
        {"id": "CHILD", "extends": ["BASE"], "requirements": ["torch<2.5"]},
    )
    assert resolve("CHILD", lookup).requirements == ["torch<2.5,>=2.6"]


def test_lists_union_in_order_without_duplicates():
    lookup = catalog(
        {"id": "BASE", "required_modules": ["torch", "transformers"], "notes": ["a", "b"]},
        {"id": "CHILD", "extends": ["BASE"], "required_modules": ["peft", "torch"], "notes": ["b", "c"]},
    )
    p = resolve("CHILD", lookup)
    assert p.required_modules == ["torch", "transformers", "peft"]
    assert p.notes == ["a", "b", "c"]


def test_scalars_child_wins_unless_left_at_default():
    lookup = catalog(
        {"id": "BASE", "title": "base", "category": "base", "purpose": "p", "evidence_scope": "single-gpu"},
        {"id": "CHILD", "extends": ["BASE"], "title": "child"},
    )
    p = resolve("CHILD", lookup)
    assert (p.title, p.category, p.purpose, p.evidence_scope) == ("child", "base", "p", "single-gpu")


def test_gpu_stricter_wins_field_by_field():
    lookup = catalog(
        {
            "id": "BASE",
            "gpu": {
                "min_count": 1,
                "min_compute_capability": "7.5",
                "max_compute_capability": "12.0",
                "min_memory_gib": 24,
                "torch_cuda": ">=12.6",
            },
        },
        {
            "id": "CHILD",
            "extends": ["BASE"],
            "gpu": {
                "min_count": 2,
                "min_compute_capability": "10.0",
                "max_compute_capability": "9.0",
                "min_memory_gib": 16,
                "torch_cuda": "<13",
            },
        },
    )
    gpu = resolve("CHILD", lookup).gpu
    # CC compares as a version: "10.0" is above "7.5"
    assert (gpu.min_count, gpu.min_compute_capability, gpu.max_compute_capability, gpu.min_memory_gib) == (
        2,
        "10.0",
        "9.0",
        24,
    )
    assert gpu.torch_cuda == "<13,>=12.6"


def test_platform_allowed_sets_intersect_and_higher_glibc_wins():
    lookup = catalog(
        {"id": "BASE", "platform": {"os": ["linux", "windows"], "arch": [], "min_glibc": "2.28"}},
        {
            "id": "CHILD",
            "extends": ["BASE"],
            "platform": {"os": ["linux"], "arch": ["x86_64"], "min_glibc": "2.35"},
        },
    )
    plat = resolve("CHILD", lookup).platform
    assert (plat.os, plat.arch, plat.min_glibc) == (["linux"], ["x86_64"], "2.35")


def test_platform_sets_that_do_not_meet_keep_the_childs_list():
    lookup = catalog(
        {"id": "BASE", "platform": {"os": ["linux"]}},
        {"id": "CHILD", "extends": ["BASE"], "platform": {"os": ["windows"]}},
    )
    assert resolve("CHILD", lookup).platform.os == ["windows"]  # never widened to "any"; validate reports it


def test_forbidden_union_and_a_restated_entry_takes_the_childs_reason():
    lookup = catalog(
        {
            "id": "BASE",
            "forbidden": [
                {"requirement": "vllm", "reason": "base", "use_instead": "SERVE"},
                {"requirement": "sglang"},
            ],
        },
        {
            "id": "CHILD",
            "extends": ["BASE"],
            "forbidden": [
                {"requirement": "vllm", "reason": "child", "use_instead": "RL"},
                {"requirement": "bitsandbytes"},
            ],
        },
    )
    forbidden = resolve("CHILD", lookup).forbidden
    assert [(f.requirement, f.reason) for f in forbidden] == [
        ("vllm", "child"),
        ("sglang", ""),
        ("bitsandbytes", ""),
    ]


def test_diamond_resolves_each_ancestor_once_parents_left_to_right():
    lookup = catalog(
        {"id": "ROOT", "requirements": ["torch>=2.6"]},
        {"id": "HF", "extends": ["ROOT"], "requirements": ["transformers"]},
        {"id": "CUDA", "extends": ["ROOT"], "gpu": {"min_count": 1}},
        {"id": "LEAF", "extends": ["HF", "CUDA"]},
    )
    p = resolve("LEAF", lookup)
    assert p.layers == ["ROOT", "HF", "CUDA", "LEAF"]
    assert p.requirements == ["torch>=2.6", "transformers"] and p.gpu.min_count == 1


def test_cycles_are_errors_naming_the_cycle():
    lookup = catalog(
        {"id": "A", "extends": ["B"]}, {"id": "B", "extends": ["C"]}, {"id": "C", "extends": ["A"]}
    )
    with pytest.raises(ProfileError) as info:
        resolve("A", lookup)
    assert str(info.value) == "A.extends: cyclic extends: A -> B -> C -> A"
    assert info.value.cycle == ["A", "B", "C"]
    self_loop = catalog({"id": "S", "extends": ["S"]})
    with pytest.raises(ProfileError, match="cyclic extends: S -> S"):
        ancestry("S", self_loop)


def test_unknown_parents_are_errors():
    lookup = catalog({"id": "CHILD", "extends": ["NOPE"]})
    with pytest.raises(ProfileError) as info:
        resolve("CHILD", lookup)
    assert str(info.value) == "CHILD.extends: unknown parent profile 'NOPE'"


def test_invalid_requirement_names_profile_and_field():
    lookup = catalog({"id": "BASE"}, {"id": "CHILD", "extends": ["BASE"], "requirements": ["ok", "torch>>2"]})
    with pytest.raises(ProfileError) as info:
        resolve("CHILD", lookup)
    assert str(info.value).startswith("CHILD.requirements[1]: invalid PEP 508 requirement 'torch>>2': ")
    assert "\n" not in str(info.value)
