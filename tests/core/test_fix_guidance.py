"""Fixes that lead somewhere (issue 11, item 6): torch from the CPU index for CPU profiles on
Linux, findings ordered by cause with consequences marked, MOD001 deferring to PKG001, and one
combined install line (``fix_all``) at the end of every report format."""

from __future__ import annotations

import json

import msgspec

from stackcheck.catalog import load_catalog
from stackcheck.judge import judge
from stackcheck.models.finding import by_severity_then_cause
from stackcheck.models.profile import GpuRequirement
from stackcheck.render.text import report_markdown, report_text
from tests.factories import dist, make_profile, make_snapshot, recorded

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PIP = "/env/bin/python -m pip install"


def _fixes(report, check_id):
    return [c.fix for c in report.checks if c.id == check_id and c.verdict in ("warning", "blocked")]


def test_cpu_profile_installs_torch_from_the_cpu_index_on_linux_only():
    profile = make_profile(requirements=["torch>=2.6,<3"])
    for system, tail in (("Linux", f" --index-url {CPU_INDEX}"), ("Darwin", ""), ("Windows", "")):
        snap = make_snapshot(dist("numpy", "2.1.0", top_level=["numpy"]), system=system)
        report = judge(snap, command="preflight", profile=profile)
        assert _fixes(report, "PKG001") == [f"{PIP} 'torch<3,>=2.6'{tail}"], system
    # a GPU profile keeps PyPI's default (the CUDA build) on Linux
    gpu = make_profile(requirements=["torch>=2.6,<3"], gpu={"min_count": 1})
    report = judge(make_snapshot(system="Linux"), command="preflight", profile=gpu)
    assert _fixes(report, "PKG001") == [f"{PIP} 'torch<3,>=2.6'"]


def test_mod001_guess_for_torch_uses_the_cpu_index_too():
    profile = make_profile(required_modules=["torch"])
    snap = make_snapshot(dist("numpy", "2.1.0", top_level=["numpy"]))
    report = judge(snap, command="preflight", profile=profile)
    assert _fixes(report, "MOD001") == [f"{PIP} torch --index-url {CPU_INDEX}"]


def test_no_gpu_is_the_cause_and_the_cuda_build_its_consequence():
    catalog = load_catalog(None)
    report = judge(recorded("cpu-laptop"), command="preflight", profile=catalog.get("TRAIN-CUDA-MECHANISM"))
    bad = [(c.id, c.consequence_of) for c in by_severity_then_cause(report.checks) if c.verdict == "blocked"]
    assert bad == [("GPU001", None), ("CUDA001", "GPU001")]
    text = report_text(report)
    assert text.index("GPU001  GPU count") < text.index("CUDA001 torch CUDA build matches the profile")
    assert "  BLOCKED CUDA001 torch CUDA build matches the profile  (follows from GPU001)\n" in text
    md = report_markdown(report)
    rows = [line for line in md.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert rows[0].startswith("| GPU001 GPU count | blocked |")
    assert rows[1].startswith(
        "| CUDA001 torch CUDA build matches the profile | blocked (follows from GPU001) |"
    )
    assert [r.split(" | ")[1].split()[0] for r in rows] == sorted(
        (r.split(" | ")[1].split()[0] for r in rows), key=["blocked", "warning", "ok", "skipped"].index
    )
    # installing the CUDA build on a machine without a GPU fixes nothing: not in the combined line
    assert report.fix_all == []
    data = json.loads(msgspec.json.encode(report))
    assert {c["id"]: c["consequence_of"] for c in data["checks"] if c["verdict"] == "blocked"} == {
        "GPU001": None,
        "CUDA001": "GPU001",
    }


def test_a_cpu_only_hosted_platform_explains_the_missing_gpu():
    from stackcheck.models.snapshot import HostedPlatform

    colab = HostedPlatform(name="Google Colab", signal="COLAB_RELEASE_TAG", gpu_expected=False)
    snap = make_snapshot(torch="2.8.0+cpu", hosted=[colab])
    profile = make_profile(requirements=["torch>=2.6"], gpu={"min_count": 1, "torch_cuda": ">=12.6"})
    report = judge(snap, command="preflight", profile=profile)
    bad = [(c.id, c.consequence_of) for c in by_severity_then_cause(report.checks) if c.verdict == "blocked"]
    assert bad == [("PLAT001", None), ("CUDA001", "PLAT001"), ("GPU001", "PLAT001")]


def test_a_missing_module_whose_distribution_pkg001_reports_is_not_fixed_twice():
    profile = make_profile(requirements=["pyyaml>=6", "requests>=2"], required_modules=["yaml"])
    snap = make_snapshot(dist("numpy", "2.1.0", top_level=["numpy"]))
    report = judge(snap, command="preflight", profile=profile)
    (mod,) = [c for c in report.checks if c.id == "MOD001"]
    assert mod.verdict == "blocked" and mod.consequence_of == "PKG001" and mod.install is None
    assert mod.fix == "installing pyyaml (PKG001 above) provides it"
    assert _fixes(report, "PKG001") == [f"{PIP} 'pyyaml>=6'", f"{PIP} 'requests>=2'"]
    assert report.fix_all == [f"{PIP} 'pyyaml>=6' 'requests>=2'"]
    assert report_text(report).endswith(f"  fix all:  {PIP} 'pyyaml>=6' 'requests>=2'\n")


def test_fix_all_puts_the_torch_index_line_first_and_merges_requirements():
    # accelerate depends on torch: installed first from PyPI it would pull the CUDA build
    profile = make_profile(
        requirements=["torch>=2.6,<3", "accelerate>=1.3", "numpy<2"], constraints=["numpy>=1.26,!=2.1.0"]
    )
    snap = make_snapshot(dist("numpy", "2.1.0", top_level=["numpy"]))
    report = judge(snap, command="preflight", profile=profile)
    assert report.fix_all == [
        f"{PIP} 'torch<3,>=2.6' --index-url {CPU_INDEX}",
        f"{PIP} 'accelerate>=1.3' 'numpy<2,>=1.26'",
    ]
    text = report_text(report)
    assert text.endswith(f"  fix all:  {report.fix_all[0]}\n            {report.fix_all[1]}\n")
    md = report_markdown(report)
    assert md.endswith(
        "\n**Fix all** (one command per package index):\n\n```sh\n" + "\n".join(report.fix_all) + "\n```\n"
    )
    data = json.loads(msgspec.json.encode(report))
    assert data["fix_all"] == report.fix_all


def test_a_single_fix_is_not_repeated_as_fix_all_in_text():
    profile = make_profile(requirements=["requests>=2"])
    report = judge(make_snapshot(dist("numpy", "2.1.0")), command="preflight", profile=profile)
    assert report.fix_all == [f"{PIP} 'requests>=2'"]
    assert "fix all" not in report_text(report) and "Fix all" not in report_markdown(report)


def test_a_gpu_profile_torch_fix_keeps_its_cuda_index_on_its_own_line():
    profile = make_profile(
        requirements=["torch>=2.6", "requests>=2"],
        gpu=msgspec.to_builtins(GpuRequirement(min_count=1, torch_cuda=">=12.6")),
    )
    snap = make_snapshot(
        gpus=[("NVIDIA H100 80GB HBM3", "9.0", 79.6)],
        driver="580.82.07",
        driver_cuda="13.0",
        torch="2.8.0+cpu",
    )
    report = judge(snap, command="preflight", profile=profile)
    assert [c.id for c in report.checks if c.verdict == "blocked"] == ["CUDA001", "CUDA003", "PKG001"]
    # CUDA001 and CUDA003 give the same install: it appears once
    assert report.fix_all == [
        f"{PIP} torch==2.8.0 --index-url https://download.pytorch.org/whl/cu128",
        f"{PIP} 'requests>=2'",
    ]


def test_too_few_gpus_do_not_explain_the_torch_build():
    profile = make_profile(gpu={"min_count": 2, "torch_cuda": "==12.6"})
    snap = make_snapshot(
        gpus=[("NVIDIA H100 80GB HBM3", "9.0", 79.6)],
        driver="580.82.07",
        driver_cuda="13.0",
        torch="2.8.0+cu128",
        torch_cuda="12.8",
    )
    report = judge(snap, command="preflight", profile=profile)
    bad = [
        (c.id, c.category, c.consequence_of)
        for c in by_severity_then_cause(report.checks)
        if c.verdict == "blocked"
    ]
    assert bad == [("CUDA001", None, None), ("GPU001", None, None)]


def test_the_combined_fix_of_an_externally_managed_interpreter_stays_advice():
    """PEP 668: fix_all merges the installs of several findings, and must not turn the advice
    each finding gives (a venv, never pip on the system interpreter) back into a pip command."""
    profile = make_profile(requirements=["requests>=2", "rich>=13"])
    snap = make_snapshot(dist("numpy", "2.1.0", top_level=["numpy"]))
    snap.python.externally_managed = "/usr/lib/python3.12/EXTERNALLY-MANAGED"
    report = judge(snap, command="preflight", profile=profile)
    assert [c.id for c in report.checks if c.verdict == "blocked"] == ["PKG001", "PKG001"]
    (line,) = report.fix_all
    assert line.startswith("the checked interpreter is externally managed (PEP 668")
    assert line.endswith("python -m pip install 'requests>=2' 'rich>=13'")
    assert f"{PIP} " not in line  # never pip on the managed interpreter itself
