"""Property: whatever facts a snapshot holds (garbage included), every rule scope and the
compat checks give an answer, never a traceback."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from stackcheck.checks.context import Context
from stackcheck.checks.registry import all_checks
from stackcheck.knowledge import load_knowledge
from stackcheck.knowledge.scope import evaluate
from stackcheck.models import snapshot as S

KB = load_knowledge()
SCOPED = [r for r in KB.rules if r.scope != type(r.scope)()]

versionish = st.one_of(
    st.sampled_from(
        [
            "",
            "N/A",
            "2.8.0+cu128",
            "2.3.1+cu121",
            "2.13.0",
            "2.13.0+cpu",
            "470.256.02",
            "580",
            "12.8",
            "13.0",
            "x.y",
        ]
    ),
    st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,3}){0,3}(\+[a-z0-9]{1,6})?", fullmatch=True),
    st.text(max_size=8),
)
cc = st.one_of(
    st.sampled_from(["", "7.0", "8.0", "9.0", "12.0", "6.1", "garbage", "10"]), st.text(max_size=4)
)
names = st.sampled_from(
    [
        "torch",
        "vllm",
        "xformers",
        "transformers",
        "tokenizers",
        "torchvision",
        "torchaudio",
        "numpy",
        "flash-attn",
        "sglang",
        "bitsandbytes",
        "trl",
        "deepspeed",
        "nvidia-cusparse-cu12",
    ]
)


@st.composite
def snapshots(draw) -> S.Snapshot:
    dists = [
        S.Distribution(name=n, version=draw(versionish), location="/x")
        for n in draw(st.lists(names, max_size=6, unique=True))
    ]
    gpus = [
        S.Gpu(
            index=i,
            name=draw(st.sampled_from(["", "Tesla V100", "NVIDIA H100"])),
            compute_capability=draw(cc),
        )
        for i in range(draw(st.integers(0, 3)))
    ]
    return S.Snapshot(
        python=S.PythonSection(status=draw(st.sampled_from(["ok", "failed"])), version=draw(versionish)),
        packages=S.PackagesSection(
            status=draw(st.sampled_from(["ok", "failed", "absent"])), distributions=dists
        ),
        platform=S.PlatformSection(
            system=draw(st.sampled_from(["", "Linux", "Windows", "Darwin"])),
            machine=draw(st.sampled_from(["", "x86_64", "aarch64"])),
            libc_family=draw(st.sampled_from(["", "glibc", "musl"])),
            libc_version=draw(versionish),
        ),
        accelerators=S.AcceleratorSection(
            status=draw(st.sampled_from(["ok", "absent", "failed"])),
            driver_version=draw(versionish),
            gpus=gpus,
            looked_for=draw(st.sampled_from([[], ["/sys/module/nvidia/version"]])),
        ),
        torch=S.TorchSection(
            status=draw(st.sampled_from(["ok", "absent"])),
            version=draw(versionish),
            cuda=draw(st.one_of(st.none(), versionish)),
            arch_list=draw(
                st.lists(st.sampled_from(["sm_70", "sm_90a", "compute_120", "bogus"]), max_size=3)
            ),
        ),
        toolchain=S.ToolchainSection(nvcc=draw(st.one_of(st.none(), st.builds(S.Tool, version=versionish)))),
        env=S.EnvSection(
            variables=draw(
                st.dictionaries(st.just("LD_LIBRARY_PATH"), st.sampled_from(["", "/usr/local/cuda/lib64:/x"]))
            )
        ),
    )


def _unparsable_glibc(libc_version: str) -> S.Snapshot:
    """torch 2.8.0 (its wheels need glibc 2.28) on Linux whose glibc version is no version."""
    return S.Snapshot(
        packages=S.PackagesSection(
            status="ok", distributions=[S.Distribution(name="torch", version="2.8.0+cu128", location="/x")]
        ),
        platform=S.PlatformSection(
            system="Linux", machine="x86_64", libc_family="glibc", libc_version=libc_version
        ),
        torch=S.TorchSection(status="ok", version="2.8.0+cu128", cuda="12.8"),
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshots())
@example(_unparsable_glibc("N/A"))  # found by this property: glibc-below-wheel compared None with a Version
def test_scopes_and_compat_checks_never_raise(snap):
    for rule in SCOPED:
        m = evaluate(rule.scope, snap, KB)
        assert not (m.matches and not m.applicable)
        assert not m.matches or m.evidence
    ctx = Context(snapshot=snap)
    for check_id in ("CUDA002", "GPU004"):
        outcomes = list(all_checks()[check_id].run(ctx))
        assert outcomes
        for o in outcomes:
            assert o.verdict in ("ok", "warning", "blocked", "skipped")
            assert o.verdict != "skipped" or o.reason
            assert o.verdict not in ("warning", "blocked") or (o.observed and o.expected and o.fix)


@pytest.mark.parametrize("libc_version", ["N/A", "x.y", ""])
def test_unparsable_glibc_version_leaves_the_glibc_rule_unjudged(libc_version):
    """KB030 (glibc-below-wheel:torch): no parsable glibc version -> unknown, not a crash."""
    [rule] = [r for r in KB.rules if r.scope.predicate == "glibc-below-wheel:torch"]
    m = evaluate(rule.scope, _unparsable_glibc(libc_version), KB)
    assert (m.matches, m.applicable, m.missing) == (False, False, ["glibc version"])
    held = evaluate(rule.scope, _unparsable_glibc("2.17"), KB)
    assert (held.matches, held.evidence) == (True, ["glibc 2.17 with torch 2.8.0+cu128"])
