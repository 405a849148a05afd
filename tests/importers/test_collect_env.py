"""The collect_env importer on real outputs pasted into GitHub issues (see
tests/data/collect_env/ORIGINS.md), embedded blocks, and arbitrary text."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.errors import InputError
from stackcheck.importers.collect_env import find_collect_env_block, parse_collect_env
from stackcheck.models.snapshot import Snapshot
from tests.factories import missing_prerequisite

DATA = Path(__file__).resolve().parents[1] / "data" / "collect_env"


def load(name: str) -> Snapshot:
    return parse_collect_env((DATA / name).read_text(encoding="utf-8"), source=name)


def test_every_section_says_collect_env_and_round_trips():
    for path in DATA.glob("*.txt"):
        if path.name.startswith("fragment-"):
            continue
        snap = load(path.name)
        assert snap.tool.command == "collect_env"
        for name in (
            "python",
            "packages",
            "platform",
            "hosted",
            "accelerators",
            "torch",
            "toolchain",
            "kernels",
            "env",
            "git",
        ):
            assert getattr(snap, name).source == "collect_env", (path.name, name)
        for name in ("hosted", "kernels", "env", "git"):
            assert getattr(snap, name).status == "absent"
        assert msgspec.json.decode(msgspec.json.encode(snap), type=Snapshot) == snap


def test_torch1_layout_with_conda_lines():
    snap = load("torch13-conda-t4.txt")
    assert (snap.torch.version, snap.torch.cuda, snap.torch.cuda_available) == ("1.3.0", "10.1.243", False)
    assert snap.python.version == "3.7"
    assert (snap.platform.system, snap.platform.distro_id, snap.platform.distro_version) == (
        "Linux",
        "debian",
        "9.11",
    )
    assert snap.accelerators.driver_version == "410.104" and [g.name for g in snap.accelerators.gpus] == [
        "Tesla T4"
    ]
    assert snap.toolchain.nvcc.version == "10.0.130" and snap.toolchain.gcc.version == "6.3.0"
    by_name = {d.name: d for d in snap.packages.distributions}
    assert by_name["numpy"].installer == "pip" and by_name["mkl-service"].installer == "conda"
    assert by_name["mkl"].version == "2019.4"
    # pip says torch==1.2.0 but the import says 1.3.0: the import wins, the disagreement is kept
    assert by_name["torch"].version == "1.3.0" and "1.2.0" in by_name["torch"].problems[0]
    assert by_name["torchvision"].version == "0.4.0"  # pip's view over conda's 0.4.1


def test_eight_gpus_in_a_fence():
    snap = load("torch13-8gpu.txt")
    assert [g.index for g in snap.accelerators.gpus] == list(range(8))
    assert {g.name for g in snap.accelerators.gpus} == {"TITAN Xp"}
    assert snap.accelerators.driver_version == "410.48" and snap.torch.cuda_available is False


def test_not_available_everywhere():
    snap = load("mac-not-available.txt")
    assert snap.torch.status == "absent" and "N/A" in snap.torch.error
    assert snap.accelerators.status == "absent" and any(
        "Could not collect" in x for x in snap.accelerators.looked_for
    )
    assert (snap.platform.system, snap.platform.machine, snap.platform.distro_version) == (
        "Darwin",
        "x86_64",
        "10.15.5",
    )
    assert snap.python.version == "2.7"
    assert [d.installer for d in snap.packages.distributions] == [
        "pip",
        "pip",
        "pip",
    ]  # "[conda] Could not collect" adds nothing
    assert snap.toolchain.status == "absent"


def test_rocm_build():
    snap = load("rocm-torch17.txt")
    assert (snap.torch.cuda, snap.torch.hip) == (None, "3.7.20315-077bcfa0")
    assert snap.accelerators.vendor == "amd" and snap.accelerators.gpus[0].name == "Device 66a1"
    assert "mkl" not in {
        d.name for d in snap.packages.distributions
    }  # "[conda] mkl" without a version is skipped


def test_torch2_layout_after_warnings_cut_off_mid_line():
    snap = load("torch21-cu121-driver470.txt")
    assert (snap.torch.version, snap.torch.cuda) == ("2.1.0+cu121", "12.1")
    assert snap.torch.cuda_available is None  # the paste ends in "Is CUDA av"
    assert (snap.platform.kernel, snap.platform.libc_family, snap.platform.libc_version) == (
        "5.15.107+",
        "glibc",
        "2.31",
    )
    assert snap.python.version == "3.11.6" and snap.python.implementation == "CPython"
    assert snap.distribution("torch").version == "2.1.0+cu121"


def test_indented_block_two_gpus_and_cpu_section():
    snap = load("torch113-2gpu-indented.txt")
    assert (
        snap.torch.version == "1.13.1+cu117"
        and snap.torch.cuda_available is True
        and snap.torch.device_count == 2
    )
    assert [g.name for g in snap.accelerators.gpus] == [
        "NVIDIA GeForce RTX 3090",
        "NVIDIA GeForce RTX 3080 Ti",
    ]
    assert snap.accelerators.driver_version == "510.108.03"
    assert snap.platform.kernel == "5.15.0-67-generic" and snap.platform.machine == "x86_64"


def test_windows_cpu_build():
    snap = load("windows-cpu-torch28.txt")
    assert (snap.torch.version, snap.torch.cuda) == ("2.8.0.dev20250528+cpu", None)
    assert (
        snap.platform.system == "Windows" and snap.platform.cpu_model == "12th Gen Intel(R) Core(TM) i7-1270P"
    )
    assert snap.platform.libc_family == "" and snap.accelerators.status == "absent"
    assert snap.python.version == "3.10.17"


def test_shell_prompt_and_warning_before_block():
    snap = load("torch17-centos-warning.txt")
    assert (snap.torch.version, snap.torch.cuda) == ("1.7.1", "10.2")
    assert (snap.platform.distro_id, snap.platform.distro_version) == ("centos", "7")
    assert snap.toolchain.gcc.version == "4.8.5" and snap.toolchain.nvcc.version == "11.1.105"
    assert {d.name for d in snap.packages.distributions} >= {"torchmeta", "torchtext", "torchaudio"}


def test_mig_line_marks_gpu():
    snap = load("torch18-a100-mig.txt")
    [gpu] = snap.accelerators.gpus
    assert (gpu.name, gpu.mig_mode) == ("A100-SXM4-40GB", "enabled")
    assert snap.accelerators.driver_version == "450.80.02"


def test_fragment_without_header_is_refused_in_one_line():
    with pytest.raises(InputError) as err:
        load("fragment-8xh100-no-header.txt")
    assert (
        str(err.value)
        == "fragment-8xh100-no-header.txt: not a collect_env output: no 'PyTorch version:' line"
    )


def test_find_block_in_issue_body_with_traceback():
    body = (
        '### Describe the bug\nTraceback (most recent call last):\n  File "x.py", line 1\n'
        "RuntimeError: CUDA error\n\n"
        "### Versions\n"
        + (DATA / "torch13-8gpu.txt").read_text().replace("```\n", "", 1)
        + "```\n\nThanks!\n"
    )
    block = find_collect_env_block(body)
    assert block.startswith("PyTorch version: 1.3.1") and block.endswith("[pip3] numpy==1.17.4")
    assert "Thanks" not in block and "Traceback" not in block
    prose = (
        "PyTorch version: 2.2.0\nIs debug build: False\n\nI installed it with pip and then it broke\nGPU 0: X"
    )
    assert find_collect_env_block(prose) == "PyTorch version: 2.2.0\nIs debug build: False"


def test_find_block_quoted_reply():
    text = (
        "> PyTorch version: 2.4.0+cu121\n> Is debug build: False\n"
        "> CUDA used to build PyTorch: 12.1\n>\n> OS: Ubuntu 22.04.4 LTS (x86_64)\n\nmy reply"
    )
    block = find_collect_env_block(text)
    assert block.splitlines()[0] == "PyTorch version: 2.4.0+cu121" and "my reply" not in block
    assert block.splitlines()[-1] == "OS: Ubuntu 22.04.4 LTS (x86_64)"
    snap = parse_collect_env(text)
    assert snap.torch.cuda == "12.1" and snap.platform.distro_name == "Ubuntu 22.04.4 LTS"


def test_vllm_padded_layout():
    text = """==============================
        System Info
==============================
OS                           : Ubuntu 22.04.5 LTS (x86_64)
GCC version                  : (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0
Libc version                 : glibc-2.35

==============================
       PyTorch Info
==============================
PyTorch version              : 2.8.0+cu128
Is debug build               : False
CUDA used to build PyTorch   : 12.8

==============================
    Python Environment
==============================
Python version               : 3.12.11 (main, Jun  4 2025, 08:56:18) [GCC 11.4.0] (64-bit runtime)
Python platform              : Linux-5.15.0-153-generic-x86_64-with-glibc2.35

==============================
       CUDA / GPU Info
==============================
Is CUDA available            : True
GPU models and configuration : GPU 0: NVIDIA H100 80GB HBM3
Nvidia driver version        : 570.172.08
"""
    snap = parse_collect_env(text)
    assert (snap.torch.version, snap.torch.cuda, snap.torch.cuda_available) == ("2.8.0+cu128", "12.8", True)
    assert (
        snap.accelerators.driver_version == "570.172.08"
        and snap.accelerators.gpus[0].name == "NVIDIA H100 80GB HBM3"
    )
    assert snap.python.version == "3.12.11"


@pytest.mark.parametrize(
    "text", ["", "hello world", "\x00\x01\x02binary", "Is CUDA available: True\n", "pytorch version 2.0"]
)
def test_garbage_is_input_error(text):
    with pytest.raises(InputError, match=r"^paste.txt: not a collect_env output"):
        parse_collect_env(text, source="paste.txt")


_LINES = st.sampled_from(
    [
        "PyTorch version: 2.5.1+cu124",
        "PyTorch version: N/A",
        "Is CUDA available: True",
        "GPU models and configuration:",
        "GPU 0: NVIDIA A100",
        "GPU 99999999999999999999: X",
        "  MIG 1g.10gb Device 0:",
        "Nvidia driver version: 550.54.15",
        "OS: Ubuntu 22.04 (x86_64)",
        "Python platform: Linux-6.8-x86_64-with-glibc2.35",
        "Libc version: glibc-",
        "CPU:",
        "CPU(s): ²",
        "Versions of relevant libraries:",
        "[pip3] torch==",
        "[conda] pytorch",
        "[conda] x 1 2 3",
        "```",
        "",
        "    ",
        "Python version: ",
        "cuDNN version: Probably one of the following:",
        "/usr/lib/libcudnn.so",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_LINES, st.text(max_size=40)), max_size=30))
def test_arbitrary_text_only_ever_raises_input_error(lines):
    text = "\n".join(lines)
    try:
        snap = parse_collect_env(text, source="x")
    except InputError as exc:
        assert str(exc).startswith("x: ") and "\n" not in str(exc)
    else:
        msgspec.json.encode(snap)  # always a serializable snapshot


def test_newest_layout_from_this_machine():
    snap = load("torch213-cpu-debian-live.txt")
    assert (snap.torch.version, snap.torch.cuda, snap.torch.cuda_available) == ("2.13.0+cpu", None, False)
    assert (snap.platform.distro_id, snap.platform.distro_version, snap.platform.kernel) == (
        "debian",
        "12",
        "6.18.44-fc-v782",
    )
    assert (snap.platform.cpu_model, snap.platform.cpu_count) == ("AMD EPYC", 2)
    assert snap.toolchain.nvcc.version == "13.0.88" and snap.toolchain.gcc.version == "12.2.0"
    assert [(d.name, d.version) for d in snap.packages.distributions] == [
        ("numpy", "2.4.6"),
        ("torch", "2.13.0+cpu"),
    ]


def _torch_python():
    """An interpreter with torch: $STACKCHECK_TORCH_PYTHON or the benchmark reference venv."""
    import os

    root = Path(__file__).resolve().parents[2]
    for cand in (os.environ.get("STACKCHECK_TORCH_PYTHON"), str(root / ".benchvenv" / "bin" / "python")):
        if cand and Path(cand).exists():
            return cand
    return None


@pytest.mark.slow
def test_live_collect_env_agrees_with_live_snapshot():
    """Run the real collect_env and our default-tier probe on the same interpreter: every fact
    collect_env states, the snapshot states the same way (the superset claim of DESIGN.md)."""
    import subprocess

    from stackcheck.probe import gather

    python = _torch_python()
    if python is None:
        missing_prerequisite(
            "no interpreter with torch (set STACKCHECK_TORCH_PYTHON or build benchmarks/_refenv.py)"
        )
    done = subprocess.run(
        [python, "-m", "torch.utils.collect_env"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    theirs = parse_collect_env(done.stdout, source="live collect_env")
    ours = gather(python)
    assert ours.torch.version == theirs.torch.version and ours.torch.cuda == theirs.torch.cuda
    assert ours.python.version == theirs.python.version
    for field in ("system", "machine", "kernel", "libc_family", "libc_version", "distro_name"):
        if getattr(theirs.platform, field):
            assert getattr(ours.platform, field) == getattr(theirs.platform, field), field
    assert ours.platform.cpu_count == theirs.platform.cpu_count
    assert (ours.accelerators.driver_version or None) == (theirs.accelerators.driver_version or None)
    assert [g.name for g in ours.accelerators.gpus] == [g.name for g in theirs.accelerators.gpus]
    if theirs.toolchain.gcc:
        assert ours.toolchain.gcc.version == theirs.toolchain.gcc.version
    if theirs.toolchain.nvcc:
        assert ours.toolchain.nvcc.version == theirs.toolchain.nvcc.version
    for dist in theirs.packages.distributions:
        assert ours.distribution(dist.name).version == dist.version, dist.name


def test_driver_too_old_warning_gives_the_drivers_cuda_version():
    """torch's warning "found version 11040" means the driver supports CUDA 11.4; CUDA002 can
    then judge a pasted report that has no driver line."""
    from pathlib import Path

    from stackcheck.importers.collect_env import parse_collect_env

    path = Path(__file__).parents[1] / "data" / "collect_env" / "torch21-cu121-driver470.txt"
    snap = parse_collect_env(path.read_text(), source=str(path))
    assert snap.accelerators.cuda_driver_version == "11.4"
    assert snap.accelerators.status == "ok"
