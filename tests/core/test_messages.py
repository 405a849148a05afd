"""Messages that say what is wrong (issue 11, item 11): each reproduces a message a new user
got and pins the one they get now."""

from __future__ import annotations

import os
import stat

import pytest

from stackcheck.catalog import load_catalog
from stackcheck.environment import load_collect_env
from stackcheck.errors import InputError
from stackcheck.judge import judge
from tests.factories import DATA, SNAPSHOTS

DRIVER_470 = str(DATA / "collect_env" / "torch21-cu121-driver470.txt")


def test_output_under_a_file_says_the_file_is_not_a_directory(cli_main, tmp_path):
    (tmp_path / "file").write_text("x")
    target = tmp_path / "file" / "x.json"
    code, out, err = cli_main("snapshot", "--snapshot", str(SNAPSHOTS / "cpu-laptop.json"), "-o", str(target))
    assert (code, out) == (2, "")
    assert (
        err == f"stackcheck: error: {target}: cannot write snapshot: "
        f"{tmp_path / 'file'} is a file, not a directory\n"
    )


def test_a_python_that_is_not_executable_or_not_python(tmp_path, monkeypatch):
    from stackcheck.probe.foreign import gather_foreign

    monkeypatch.chdir(tmp_path)
    (tmp_path / "some.bin").write_bytes(b"\x7fELF\x00garbage")
    with pytest.raises(InputError) as err:
        gather_foreign("some.bin")
    assert (
        str(err.value)
        == "some.bin: not executable (expected a Python interpreter, a venv, or a name on PATH)"
    )
    os.chmod(tmp_path / "some.bin", stat.S_IRWXU)
    with pytest.raises(InputError) as err:
        gather_foreign("some.bin")
    assert str(err.value) == "some.bin: not a Python interpreter (cannot run it: Exec format error)"
    with pytest.raises(InputError) as err:
        gather_foreign("nope-not-here")
    assert str(err.value) == "nope-not-here: no such interpreter (not a file, and not a name on PATH)"


def test_a_text_file_is_not_json_not_a_nul_byte(cli_main, tmp_path):
    path = tmp_path / "run.json"
    path.write_text("INFO 2026-01-02 loading model\n")
    code, out, err = cli_main("doctor", "--snapshot", str(path))
    assert (code, out) == (2, "")
    assert (
        err == f"stackcheck: error: {path}: not JSON: starts with 'INFO 2026-01-02…', "
        "expected a stackcheck snapshot\n"
    )


def test_articles_follow_the_noun(tmp_path):
    from stackcheck.fileio import read_text

    (tmp_path / "ignore").write_bytes(b"\xff\xfe")
    with pytest.raises(InputError) as err:
        read_text(tmp_path / "ignore", "ignore file")
    assert str(err.value) == f"{tmp_path / 'ignore'}: line 1: not UTF-8 text (expected an ignore file)"


def test_collect_env_without_locations_or_gpu_lines():
    snap = load_collect_env(DRIVER_470)
    report = judge(snap, command="preflight", profile=load_catalog(None).get("TRAIN-CUDA-MECHANISM"))
    by = {
        c.id: c for c in report.checks if c.verdict in ("warning", "blocked") and c.subject in (None, "torch")
    }
    assert by["PKG001"].observed == "torch 2.1.0+cu121"  # not "(in )": a paste has no locations
    gpu = by["GPU001"]
    assert gpu.verdict == "warning" and gpu.category == "gpu-list-unknown"
    assert gpu.observed == (  # the paste is cut off: the driver is known from torch's warning only
        "the GPU list is unknown: a driver for CUDA 11.4 is installed, "
        "but the collect_env output lists no GPU "
        "(no 'GPU models and configuration' line)"
    )
    assert "no NVIDIA GPU found" not in "".join(c.observed for c in report.checks)
    # the driver is too old for the build: the CUDA build's finding follows from it
    assert by["CUDA001"].consequence_of == "CUDA002"
    gpu002 = next(c for c in report.checks if c.id == "GPU002")
    assert gpu002.verdict == "skipped" and gpu002.reason == "the GPU list is unknown (see GPU001)"


@pytest.mark.parametrize(
    ("asked", "message"),
    [
        ("train-cpu", "unknown profile ID 'train-cpu' in the built-in catalog; did you mean TRAIN-CPU?"),
        (
            "TRAIN-GPU",
            "unknown profile ID 'TRAIN-GPU' in the built-in catalog; did you mean TRAIN-CPU, PT-CPU?",
        ),
        ("NOPE", "unknown profile ID 'NOPE' in the built-in catalog; see `stackcheck profiles list`"),
    ],
)
def test_unknown_profile_messages(cli_main, asked, message):
    code, out, err = cli_main("preflight", "-p", asked, "--snapshot", str(SNAPSHOTS / "cpu-laptop.json"))
    assert (code, out, err) == (2, "", f"stackcheck: error: {message}\n")


def test_unknown_profile_in_a_registry_file_names_the_file(tmp_path):
    path = tmp_path / "reg.json"
    path.write_text('{"include_builtin": false, "profiles": [{"id": "LAB-CPU"}]}')
    with pytest.raises(InputError) as err:
        load_catalog(str(path)).get("lab-cpu")
    assert str(err.value) == f"unknown profile ID 'lab-cpu' in {path}; did you mean LAB-CPU?"


def test_collect_env_with_a_driver_but_gpus_not_collected():
    from stackcheck.importers.collect_env import parse_collect_env

    text = (DATA / "collect_env" / "torch13-conda-t4.txt").read_text()
    snap = parse_collect_env(
        text.replace(
            "GPU models and configuration: GPU 0: Tesla T4", "GPU models and configuration: Could not collect"
        )
    )
    report = judge(snap, command="preflight", profile=load_catalog(None).get("TRAIN-CUDA-MECHANISM"))
    (gpu,) = [c for c in report.checks if c.id == "GPU001"]
    assert (gpu.verdict, gpu.observed) == (
        "warning",
        (
            "the GPU list is unknown: NVIDIA driver 410.104 is installed, "
            "but the collect_env output lists no GPU "
            "(GPU models and configuration: Could not collect)"
        ),
    )
    assert gpu.fix == (
        "list the GPUs on that machine (`nvidia-smi -L`); a snapshot taken there records them: "
        "`stackcheck snapshot --json -o env.json`"
    )


def test_a_live_driver_whose_gpus_cannot_be_read_is_not_no_gpu():
    from tests.factories import make_profile, make_snapshot

    snap = make_snapshot()
    acc = snap.accelerators
    acc.status, acc.vendor, acc.driver_version, acc.looked_for = "ok", "nvidia", "550.54.15", []
    acc.error = "NVML: driver/library mismatch: the loaded kernel module and libnvidia-ml differ"
    (gpu,) = [
        c
        for c in judge(snap, command="preflight", profile=make_profile(gpu={"min_count": 1})).checks
        if c.id == "GPU001"
    ]
    assert (gpu.verdict, gpu.observed) == ("blocked", f"GPU facts could not be gathered: {acc.error}")
