"""Exact outcomes of PKG003 (every forbidden entry) and GPU004 (only visible GPUs decide).

These pin behaviour a mutation spot-check showed the broader tests let through: a PKG003 that
judged only the first forbidden entry, a GPU004 that looked at every GPU instead of the ones
CUDA_VISIBLE_DEVICES leaves visible.
"""

from __future__ import annotations

from stackcheck.checks.context import Context
from stackcheck.checks.registry import all_checks
from stackcheck.judge import judge
from tests.factories import dist, make_profile, make_snapshot

LOC = "/env/lib/python3.12/site-packages"


def outcomes(check_id: str, snap, profile=None):
    return list(all_checks()[check_id].run(Context(snapshot=snap, profile=profile)))


# ---------------------------------------------------------------- PKG003
FORBIDDEN = [
    {"requirement": "vllm", "reason": "a serving engine pins torch", "use_instead": "SERVE-VLLM"},
    {"requirement": "sglang"},
    {"requirement": "bitsandbytes<0.40"},
    {"requirement": "tensorrt-llm"},
]


def test_pkg003_judges_every_forbidden_entry_in_order():
    """The first entry is absent; the second and third are installed (one outside its
    forbidden range), the last absent: four outcomes, the installed one blocked."""
    snap = make_snapshot(dist("sglang", "0.5.2"), dist("bitsandbytes", "0.45.0"), dist("numpy", "2.1.0"))
    got = [(o.verdict, o.subject, o.observed, o.expected) for o in outcomes("PKG003", snap, make_profile(forbidden=FORBIDDEN))]
    assert got == [
        ("ok", "vllm", "not installed", "no vllm"),
        ("blocked", "sglang", f"sglang 0.5.2 is installed (in {LOC})", "no sglang"),
        ("ok", "bitsandbytes", "bitsandbytes 0.45.0 (outside the forbidden range)", "no bitsandbytes<0.40"),
        ("ok", "tensorrt-llm", "not installed", "no tensorrt-llm"),
    ]


def test_pkg003_blocks_each_installed_forbidden_package_with_its_own_fix():
    snap = make_snapshot(dist("vllm", "0.11.0"), dist("tensorrt-llm", "1.0.0"))
    blocked = [o for o in outcomes("PKG003", snap, make_profile(forbidden=FORBIDDEN)) if o.verdict == "blocked"]
    assert [o.subject for o in blocked] == ["vllm", "tensorrt-llm"]
    vllm, trt = blocked
    assert vllm.expected == "no vllm (a serving engine pins torch)"
    assert vllm.fix.startswith("/env/bin/python -m pip uninstall -y vllm")
    assert vllm.fix.endswith("; or run this experiment under profile SERVE-VLLM")
    assert trt.expected == "no tensorrt-llm"
    assert trt.fix.startswith("/env/bin/python -m pip uninstall -y tensorrt-llm")
    assert "SERVE-VLLM" not in trt.fix
    # the report as a whole is blocked, with one PKG003 result per entry
    report = judge(snap, command="preflight", profile=make_profile(forbidden=FORBIDDEN))
    assert [(c.subject, c.verdict) for c in report.checks if c.id == "PKG003"] == [
        ("vllm", "blocked"), ("sglang", "ok"), ("bitsandbytes", "ok"), ("tensorrt-llm", "blocked"),
    ]
    assert report.verdict == "blocked"


def test_pkg003_only_the_last_entry_installed_still_blocks():
    snap = make_snapshot(dist("tensorrt-llm", "1.0.0"))
    assert [o.verdict for o in outcomes("PKG003", snap, make_profile(forbidden=FORBIDDEN))] == ["ok", "ok", "ok", "blocked"]


# ---------------------------------------------------------------- GPU004
H100 = ("NVIDIA H100 80GB HBM3", "9.0", 79.6)
V100 = ("Tesla V100-SXM2-32GB", "7.0", 31.7)
CU130_ARCHS = "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120"


def h100_v100(visible: list[int]):
    """One node with an H100 (GPU 0) and a V100 (GPU 1) and torch 2.13.0 built for CUDA 13.0
    (which carries no sm_70): CUDA_VISIBLE_DEVICES decides which of them the run uses."""
    snap = make_snapshot(gpus=[H100, V100], driver="580.95.05", driver_cuda="13.0", torch="2.13.0", torch_cuda="13.0")
    for g in snap.accelerators.gpus:
        g.visible = g.index in visible
    snap.accelerators.cuda_visible_devices = ",".join(map(str, visible))
    return snap


def test_gpu004_hidden_v100_does_not_block_the_visible_h100():
    [o] = outcomes("GPU004", h100_v100([0]))
    assert (o.verdict, o.subject) == ("ok", "GPU0 NVIDIA H100 80GB HBM3")
    assert o.observed == f"NVIDIA H100 80GB HBM3 CC 9.0 covered by {CU130_ARCHS}"
    assert judge(h100_v100([0]), command="preflight").verdict == "ok"
    assert judge(h100_v100([1]), command="preflight").verdict == "blocked"


def test_gpu004_visible_v100_blocks_while_the_h100_is_hidden():
    [o] = outcomes("GPU004", h100_v100([1]))
    assert (o.verdict, o.subject, o.category) == ("blocked", "GPU1 Tesla V100-SXM2-32GB", "gpu-arch-unsupported")
    assert o.observed == (
        f"Tesla V100-SXM2-32GB (CC 7.0); torch 2.13.0 (CUDA 13.0) carries {CU130_ARCHS} [knowledge table (PT-REL)]"
    )
    assert o.expected == "a build with sm_70 (or an older sm_7x / PTX <= 7.0)"
    assert o.fix.startswith("Install a torch build that covers CC 7.0: ")
    assert o.fix.endswith("torch==2.13.0 --index-url https://download.pytorch.org/whl/cu126")


def test_gpu004_both_visible_judges_both():
    assert [(o.verdict, o.subject) for o in outcomes("GPU004", h100_v100([0, 1]))] == [
        ("ok", "GPU0 NVIDIA H100 80GB HBM3"),
        ("blocked", "GPU1 Tesla V100-SXM2-32GB"),
    ]


def test_gpu004_nothing_visible_is_skipped():
    [o] = outcomes("GPU004", h100_v100([]))
    assert (o.verdict, o.reason) == ("skipped", "no visible NVIDIA GPU")
