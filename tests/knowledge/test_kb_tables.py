"""The table lookups: driver requirements, torch releases, arch lists and coverage, pins."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from stackcheck.knowledge import load_knowledge
from stackcheck.knowledge.archs import arch_span, covers

KB = load_knowledge()

majors = st.integers(min_value=3, max_value=13)
minors = st.integers(min_value=0, max_value=9)


def test_driver_requirement_linux():
    assert KB.driver_requirement("12.1") == ("525.60.13", "530.30.02", "12.1", "linux")
    assert KB.driver_requirement("cu128")[:2] == ("525.60.13", "570.26")
    assert KB.driver_requirement("13.0.2")[:2] == ("580", "580.65.06")
    assert KB.driver_requirement("11.8")[:2] == ("450.80.02", "520.61.05")


def test_driver_requirement_windows_and_legacy():
    assert KB.driver_requirement("12.4", "Windows")[:2] == ("527.41", "551.61")
    assert KB.driver_requirement("13.0", "windows")[:2] == (None, None)  # no Windows driver bundled
    # before CUDA 11 there is no minor-version compatibility: floor == toolkit driver
    assert KB.driver_requirement("10.2")[:2] == ("440.33", "440.33")
    assert KB.driver_requirement("11.4")[:2] == ("450.80.02", "470.42.01")
    # the driver a toolkit shipped with runs it natively, even below the family's MVC floor
    assert KB.driver_requirement("11.0")[:2] == ("450.51.05", "450.51.05")
    # CUDA 13.2 GA shipped with 595.45.04 (release notes Table 3, 13.3 edition; installer name)
    assert KB.driver_requirement("13.2")[:2] == ("580", "595.45.04")


def test_newest_cuda_for_driver():
    assert KB.newest_cuda_for_driver("535.104.05") == "12.2"
    assert KB.newest_cuda_for_driver("580.82.07") == "13.0"
    assert KB.newest_cuda_for_driver("470.256.02") == "11.4"


def test_torch_release_pairings():
    r = KB.torch_release("2.6.0+cu124")
    assert (r.torchvision, r.torchaudio, r.pypi_default_cuda) == ("0.21", "2.6", "12.4")
    assert KB.torch_release("2.13.0").torchaudio == "2.11"  # torchaudio in maintenance mode
    assert KB.torch_release("2.11.0").pypi_default_cuda == "13.0"
    assert KB.torch_release("2.7.1").min_glibc == "2.28"
    assert KB.torch_release("1.13.1") is None


def test_arch_lists_from_the_tables():
    assert KB.arch_list("2.3.1+cu121", "12.1") == [
        "sm_50",
        "sm_60",
        "sm_70",
        "sm_75",
        "sm_80",
        "sm_86",
        "sm_90",
    ]
    assert KB.arch_list("2.13.0", "13.0")[-1] == "compute_120"
    assert "compute_120" not in KB.arch_list("2.13.0", "13.0", platform="Windows")  # +PTX on Linux only
    assert KB.arch_list("2.13.0", "12.6", machine="aarch64") == ["sm_80", "sm_90"]
    assert "sm_70" not in KB.arch_list("2.7.0", "12.8") and "sm_70" in KB.arch_list("2.8.0", "12.8")
    assert KB.arch_list("2.3.0", "13.0") is None
    assert KB.arch_build("2.10.0", "12.8").verified is True  # RELEASE.md "For Release 2.9 and 2.10"
    assert KB.arch_build("2.12.1", "12.9").verified is False  # cu129 of 2.11-2.13: inferred


def test_coverage_rule_examples():
    assert covers(["sm_80", "sm_86"], "8.9")  # same major, minor <=
    assert not covers(["sm_80", "sm_90"], "12.0")
    assert covers(["sm_90", "compute_90"], "12.0")  # PTX JIT forward
    assert not covers(["sm_90a"], "10.0") and covers(["sm_90a"], "9.0")  # arch-specific: exact only
    assert not covers(["sm_75", "compute_120"], "7.0")
    assert covers(["sm_120"], "12.1")  # DGX Spark GB10 runs sm_120 SASS
    assert not covers([], "8.0") and not covers(["sm_80"], "garbage")
    assert arch_span(["sm_50", "sm_90", "compute_120"]) == ("5.0", "12.0")


@given(majors, minors, minors)
def test_sass_covers_exactly_same_major_not_newer_minor(major, target_minor, gpu_minor):
    assert covers([f"sm_{major}{target_minor}"], f"{major}.{gpu_minor}") == (target_minor <= gpu_minor)


@given(majors, minors, majors, minors)
def test_sass_never_crosses_majors_but_ptx_runs_forward(tmaj, tmin, gmaj, gmin):
    if tmaj != gmaj:
        assert not covers([f"sm_{tmaj}{tmin}"], f"{gmaj}.{gmin}")
    assert covers([f"compute_{tmaj}{tmin}"], f"{gmaj}.{gmin}") == ((tmaj, tmin) <= (gmaj, gmin))
    assert covers([f"sm_{tmaj}{tmin}a"], f"{gmaj}.{gmin}") == ((tmaj, tmin) == (gmaj, gmin))


@given(
    st.lists(st.sampled_from(["sm_50", "sm_70", "sm_80", "sm_90a", "compute_90", "sm_120"]), max_size=5),
    majors,
    minors,
)
def test_coverage_is_monotone_in_the_arch_list(archs, major, minor):
    cc = f"{major}.{minor}"
    if covers(archs, cc):
        assert covers(archs + ["sm_61"], cc)


def test_engine_pins():
    row = KB.engine_pins("vllm", "0.11.0")
    assert [str(r) for r in KB.pins_for(row, "torch")] == ["torch==2.8.0"]
    assert KB.pins_for(row, "xformers")  # Linux x86_64 marker holds by default
    assert not KB.pins_for(row, "xformers", {"platform_machine": "aarch64"})
    assert KB.engine_pins("vllm", "0.6.4.post1").version == "0.6.4"
    assert KB.engine_pins("vllm", "0.99.0") is None  # beyond the table: unknown, not guessed
    assert KB.engine_pins("xformers", "0.0.29.post3").version == "0.0.29.post2"
    sg = KB.engine_pins("sglang", "0.4.6")
    assert [str(r.specifier) for r in KB.pins_for(sg, "torch")] == ["==2.6.0"]  # via the [srt] extra
    assert KB.engine_pins("transformers", "5.17.0").version == "5.16.0"
    assert "vllm" in KB.pinned_packages() and "trl" in KB.pinned_packages()


def test_fitting_builds_prefer_newest_and_respect_driver_and_gpu():
    first = next(KB.fitting_builds(driver="580.82.07", ccs=["9.0"]))
    assert (first[0].torch, first[1]) == ("2.14", "13.0")  # 13.2 needs its toolkit driver 595.45.04
    rel, cuda = next(KB.fitting_builds(driver="580.82.07", ccs=["7.0"]))
    assert cuda == "12.6"  # CUDA 13 builds start at 7.5
    assert next(KB.fitting_builds(driver="470.256.02", ccs=["7.0"], strict=False))[1] == "11.8"
    assert list(KB.fitting_builds(driver="470.256.02", ccs=["7.0"], strict=True)) == []
