"""Ranking by specificity and by agreement with the environment (recorded snapshots)."""

from __future__ import annotations

from stackcheck.environment import load_snapshot
from stackcheck.triage import triage_text
from stackcheck.triage.signatures import literal_length

from .conftest import SNAPSHOTS, TRIAGE_DATA

# A CI log tail where two known causes appear: the driver warning torch prints at CUDA
# initialisation (https://github.com/pytorch/pytorch/issues/112553) and, later, a missing
# module (https://github.com/ThioJoe/YT-Spammer-Purge/issues/229).
DRIVER_AND_MODULE = (
    "/opt/asdf/data/installs/python/3.11.6/lib/python3.11/site-packages/torch/cuda/__init__.py:138: "
    "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). "
    "Please update your GPU driver by downloading and installing a new version from the URL: "
    "http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org/ "
    "to install a PyTorch version that has been compiled with your version of the CUDA driver. "
    "(Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n"
    "  return torch._C._cuda_getDeviceCount() > 0\n"
    + (TRIAGE_DATA / "module-not-found-windows.txt").read_text()
)


def ranked(snapshot_name: str | None, text: str = DRIVER_AND_MODULE):
    snapshot = load_snapshot(str(SNAPSHOTS / snapshot_name)) if snapshot_name else None
    return triage_text(text, snapshot=snapshot, environment_source=snapshot_name)


def test_old_driver_snapshot_puts_driver_too_old_first_with_evidence():
    d = ranked("old-driver-470-cu121.json")
    best = d.matches[0]
    assert best.rule_id == "KB003" and best.category == "driver-too-old"
    assert best.environment == "agrees" and best.confidence == "high"
    assert any("470.256.02" in e for e in best.evidence)
    assert d.environment_source == "old-driver-470-cu121.json"


def test_current_driver_snapshot_demotes_driver_too_old_and_says_why():
    d = ranked("h200-drv580-cu130.json")
    driver = next(m for m in d.matches if m.rule_id == "KB003")
    assert driver.environment == "contradicts"
    assert any(e.startswith("environment contradicts") for e in driver.evidence)
    assert d.matches[0].rule_id == "KB101"  # the missing module outranks the demoted driver
    agreeing = ranked("old-driver-470-cu121.json").matches[0]
    assert driver.score < agreeing.score
    assert driver.confidence == "medium"  # one step down from high


def test_without_environment_nothing_is_judged():
    d = ranked(None)
    assert d.environment_source == "none"
    assert {m.environment for m in d.matches} == {"not-judged"}


def test_specificity_counts_demanded_literals_only():
    assert literal_length(r"No module named") == 15
    assert literal_length(r"\d+ GiB") == 4
    assert literal_length(r"(?P<library>lib[\w.]*\.so)") == len("lib") + len(".so")
    assert literal_length(r"(?i)colou?r") == len("colour") - 1


def test_more_specific_signature_wins_on_the_same_line():
    d = triage_text(
        "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory"
    )
    assert [m.rule_id for m in d.matches][:2] == ["KB103", "KB104"]
    assert d.matches[0].score > d.matches[1].score


def test_module_not_found_says_which_environment_has_the_package():
    """The traceback ran in /home/u/.venv; the snapshot's conda env has the package."""
    snap = load_snapshot(str(SNAPSHOTS / "old-driver-470-cu121.json"))
    present = next(d for d in snap.packages.distributions if d.top_level)
    module = present.top_level[0]
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/.venv/lib/python3.10/site-packages/app/main.py", line 3, in <module>\n'
        f"    import {module}\n"
        f"ModuleNotFoundError: No module named '{module}'\n"
    )
    best = triage_text(text, snapshot=snap).matches[0]
    joined = "\n".join(best.evidence)
    assert "the failing code ran in /home/u/.venv" in joined
    assert f"installed in {snap.python.executable}" in joined and "different interpreter" in joined
    assert snap.python.executable in best.fix


def test_cuda_library_major_compared_with_the_environment_torch():
    snap = load_snapshot(str(SNAPSHOTS / "h100-single.json"))
    best = triage_text((TRIAGE_DATA / "libcudart-10-mmcv.txt").read_text(), snapshot=snap).matches[0]
    assert best.rule_id == "KB103" and best.environment == "agrees"
    assert any("wants the CUDA 10 runtime" in e for e in best.evidence)


def test_cpu_torch_rule_agrees_only_where_a_gpu_is_present():
    text = (TRIAGE_DATA / "torch-cpu-build.txt").read_text()
    laptop = triage_text(text, snapshot=load_snapshot(str(SNAPSHOTS / "cpu-laptop.json"))).matches[0]
    assert laptop.rule_id == "KB115"
    assert laptop.environment == "contradicts"  # a CPU-only machine: run on CPU instead
    assert laptop.evidence[-1] == "environment contradicts: no GPU"


def test_traceback_environment_prefixes_in_all_layouts():
    from stackcheck.triage.evidence import traceback_environments

    text = (
        '  File "F:\\Program Files\\python3.6.1\\lib\\site-packages\\torch\\__init__.py", '
        "line 78, in <module>\n"
        "File /opt/conda/lib/python3.8/site-packages/torch/nn/modules/sparse.py:158, "
        "in Embedding.forward\n"
        "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:118: "
        "UserWarning: CUDA initialization\n"
    )
    assert traceback_environments(text) == {"F:\\Program Files\\python3.6.1", "/opt/conda", "/usr/local"}


def test_live_environment_is_not_used_for_an_error_from_another_environment():
    live = load_snapshot(str(SNAPSHOTS / "old-driver-470-cu121.json"))  # /opt/conda/envs/proj
    calls = []

    def gather():
        calls.append(1)
        return live

    elsewhere = (TRIAGE_DATA / "libgl-opencv-docker.txt").read_text()  # frames in /usr/local
    d = triage_text(elsewhere, live_environment=gather)
    assert calls and d.environment_source.startswith("none (the input comes from /usr")
    assert {m.environment for m in d.matches} == {"not-judged"}
    here = elsewhere.replace(
        "/usr/local/lib/python3.6/dist-packages", "/opt/conda/envs/proj/lib/python3.10/site-packages"
    )
    assert triage_text(here, live_environment=gather).environment_source == "live environment"
    assert triage_text("just words", live_environment=gather).environment_source == "none"
    assert len(calls) == 2  # not gathered when nothing matched


def test_module_missing_in_another_environment_names_the_failing_one():
    snap = load_snapshot(str(SNAPSHOTS / "old-driver-470-cu121.json"))
    text = (
        '  File "/home/u/.venv/lib/python3.12/site-packages/app/main.py", line 3, in <module>\n'
        "    import definitely_not_installed\n"
        "ModuleNotFoundError: No module named 'definitely_not_installed'\n"
    )
    best = triage_text(text, snapshot=snap).matches[0]
    assert best.environment == "unknown"
    assert "not the environment that failed (/home/u/.venv)" in "\n".join(best.evidence)
    assert "<python of /home/u/.venv> -m pip install definitely-not-installed" in best.fix
