"""Profile consistency: what a profile asks for must be able to exist together."""

from __future__ import annotations

import pytest

from stackcheck.knowledge.consistency import profile_problems
from tests.factories import make_profile


def problems(**kw):
    return profile_problems(make_profile(**kw))


def test_engine_pin_contradicts_the_profiles_torch():
    [(field, msg)] = problems(requirements=["vllm==0.11.0", "torch==2.6.*"])
    assert field == "requirements"
    assert "vllm 0.11.0 pins torch==2.8.0" in msg
    assert problems(requirements=["vllm==0.11.0", "torch==2.8.0"]) == []


def test_engine_range_is_fine_when_one_release_fits():
    assert problems(requirements=["vllm>=0.10,<0.12", "torch==2.8.0"]) == []
    assert problems(requirements=["vllm>=0.10,<0.12", "torch==2.6.*"])  # none of them pins 2.6


def test_constraint_counts_like_a_requirement_and_names_its_field():
    [(field, _)] = problems(requirements=["vllm==0.11.0"], constraints=["torch<2.8"])
    assert field == "constraints"


def test_unknown_engine_versions_are_not_judged():
    assert problems(requirements=["vllm==0.99.0", "torch==2.6.*"]) == []


def test_cuda_build_never_offered_for_the_torch_range():
    [(field, msg)] = problems(requirements=["torch>=2.6,<2.7"], gpu={"torch_cuda": "==12.8"})
    assert field == "gpu.torch_cuda" and "11.8, 12.4, 12.6" in msg
    assert problems(requirements=["torch>=2.6,<2.8"], gpu={"torch_cuda": "==12.8"}) == []


def test_cuda_build_follows_the_engines_torch_pin():
    [(field, msg)] = problems(requirements=["vllm==0.11.0"], gpu={"torch_cuda": "==13.0"})
    assert field == "gpu.torch_cuda" and "pins torch==2.8.0" in msg
    assert problems(requirements=["vllm==0.11.0"], gpu={"torch_cuda": ">=12.8"}) == []


def test_forbidden_package_installed_by_an_engine_pin():
    [(field, msg)] = problems(requirements=["vllm==0.11.0"], forbidden=[{"requirement": "xformers"}])
    assert field == "forbidden" and "xformers==0.0.32.post1" in msg
    assert (
        problems(requirements=["vllm==0.13.0"], forbidden=[{"requirement": "xformers"}]) == []
    )  # 0.12+ dropped it
    # the pin is Linux x86_64 only: a macOS-only profile is fine
    assert (
        problems(
            requirements=["vllm==0.11.0"],
            forbidden=[{"requirement": "xformers"}],
            platform={"os": ["darwin"]},
        )
        == []
    )


def test_forbidden_version_range_outside_the_pin_is_fine():
    assert problems(requirements=["vllm==0.11.0"], forbidden=[{"requirement": "xformers<0.0.30"}]) == []


def test_transformers_and_tokenizers_ranges():
    [(field, msg)] = problems(requirements=["transformers==4.57.1", "tokenizers==0.21.*"])
    assert "tokenizers<=0.23.0,>=0.22.0" in msg
    assert problems(requirements=["transformers>=4.40", "tokenizers==0.21.*"]) == []
    assert problems(requirements=["transformers>=5.0", "huggingface-hub<1.0"])


def test_python_window_of_the_engine():
    [(field, _)] = problems(requirements=["vllm==0.32.0"], python="==3.10.*")
    assert field == "python"


def test_python_window_of_torch():
    [(field, msg)] = problems(requirements=["torch>=2.9"], python="==3.9.*")
    assert field == "python" and ">=3.10,<3.15" in msg
    assert problems(requirements=["torch>=2.6"], python="==3.9.*") == []
    assert problems(requirements=["torch==2.2.*"], python="==3.12.*") == []  # experimental there
    assert problems(requirements=["torch==2.1.*"], python="==3.12.*")


def test_sglang_exact_transformers_pin_via_its_srt_extra():
    assert problems(requirements=["sglang[srt]==0.4.6", "transformers>=4.52"])
    assert problems(requirements=["sglang==0.5.6", "transformers==4.57.1"]) == []


def test_builtin_catalog_is_consistent_with_the_knowledge_base():
    catalog_module = pytest.importorskip("stackcheck.catalog.registry")
    catalog = catalog_module.load_entries(None)
    entries, _ = catalog
    if not entries:
        pytest.skip("built-in catalog not present yet")
    cat = catalog_module.Catalog(entries, "built-in")
    found = {pid: profile_problems(cat.get(pid)) for pid in cat.ids(include_bases=True)}
    assert {pid: p for pid, p in found.items() if p} == {}


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PACKAGES = [
    "vllm",
    "torch",
    "transformers",
    "tokenizers",
    "sglang[srt]",
    "xformers",
    "huggingface-hub",
    "trl",
    "bitsandbytes",
    "accelerate",
    "numpy",
]
_SPECS = [
    "",
    "==0.11.0",
    ">=0.10,<0.12",
    "==2.6.*",
    "==2.8.0",
    ">=4.56,<5",
    "==0.21.*",
    ">=5",
    "<1.0",
    "!=2.7.0",
    ">=2.4,<3",
    "==99",
    "~=0.5.4",
    ">0.0.32.post1",
]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_PACKAGES), st.sampled_from(_SPECS)), max_size=5),
    st.lists(st.tuples(st.sampled_from(_PACKAGES), st.sampled_from(_SPECS)), max_size=2),
    st.lists(st.sampled_from(["xformers", "vllm!=0.11.0", "torch<2", "tokenizers"]), max_size=2, unique=True),
    st.one_of(st.none(), st.sampled_from(["==12.8", ">=13.0", "==11.2", "<12"])),
    st.one_of(st.none(), st.sampled_from([">=3.10,<3.14", "==3.9.*", ">=3.11"])),
)
def test_any_profile_gets_an_answer_never_a_traceback(reqs, cons, forbidden, torch_cuda, python):
    out = problems(
        requirements=[n + s for n, s in reqs],
        constraints=[n + s for n, s in cons],
        forbidden=[{"requirement": f} for f in forbidden],
        gpu={"torch_cuda": torch_cuda} if torch_cuda else None,
        python=python,
    )
    assert all(
        field in ("requirements", "constraints", "forbidden", "python", "gpu.torch_cuda") and msg
        for field, msg in out
    )
