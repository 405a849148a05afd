"""`stackcheck snapshot` end to end, as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.environment import load_snapshot

ROOT = Path(__file__).resolve().parents[2]
EXE = Path(sys.executable).parent / "stackcheck"
SECTIONS = (
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
)


def run(*args, env=None, cwd=ROOT):
    return subprocess.run(
        [str(EXE), "snapshot", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def test_json_has_every_section_and_no_secret():
    done = run("--json", env={"HF_TOKEN": "hf_livesecretvalue123456", "NCCL_DEBUG": "WARN"})
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    # nothing failed or timed out here, and a section is "absent" exactly when it found nothing
    found = {
        "python": True,
        "packages": True,
        "platform": True,
        "env": True,
        "hosted": bool(data["hosted"]["platforms"]),
        "accelerators": bool(data["accelerators"]["gpus"] or data["accelerators"]["driver_version"]),
        "torch": bool(data["torch"]["version"]),
        "toolchain": bool(data["toolchain"]["nvcc"] or data["toolchain"]["gcc"]),
        "kernels": bool(data["kernels"]["kernels"]),
        "git": (ROOT / ".git").exists(),
    }
    assert {name: data[name]["status"] for name in SECTIONS} == {
        n: "ok" if f else "absent" for n, f in found.items()
    }
    assert data["python"]["status"] == "ok" and data["packages"]["distributions"]
    assert data["env"]["variables"]["HF_TOKEN"] == "<redacted>" and "HF_TOKEN" in data["env"]["redacted"]
    assert "hf_livesecretvalue123456" not in done.stdout
    assert data["tool"]["command"] == "live"


def test_output_file_is_a_valid_snapshot(tmp_path):
    target = tmp_path / "deep" / "env.json"
    done = run("-o", str(target))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(target)
    snap = load_snapshot(str(target))
    assert snap.python.executable and snap.platform.status == "ok"
    assert [p.name for p in target.parent.iterdir()] == ["env.json"]  # no temp file left behind


def test_output_with_json_reports_path_and_digest(tmp_path):
    done = run("--json", "-o", str(tmp_path / "s.json"))
    data = json.loads(done.stdout)
    assert data["written"] == str(tmp_path / "s.json") and data["digest"].startswith("sha256:")


def test_summary_names_every_section():
    done = run("--snapshot", str(ROOT / "tests/data/snapshots/multi-gpu-8xa100.json"))
    assert done.returncode == 0, done.stderr
    for name in SECTIONS:
        assert f"  {name} " in done.stdout
    assert "GPU 7: NVIDIA A100-SXM4-80GB 80 GiB cc 8.0" in done.stdout
    assert "slurm (SLURM_JOB_ID is set)" in done.stdout and "2.8.0+cu128 (CUDA 12.8)" in done.stdout


def test_from_collect_env(tmp_path):
    done = run(
        "--from-collect-env", str(ROOT / "tests/data/collect_env/torch113-2gpu-indented.txt"), "--json"
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["torch"]["version"] == "1.13.1+cu117" and data["torch"]["source"] == "collect_env"
    assert len(data["accelerators"]["gpus"]) == 2


@pytest.mark.parametrize("content", [b"just some words\n", b"\x89PNG\r\n\x1a\n\x00\x00binary", b""])
def test_from_collect_env_garbage_exits_2_with_one_line(tmp_path, content):
    bad = tmp_path / "paste.txt"
    bad.write_bytes(content)
    done = run("--from-collect-env", str(bad), "--json")
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and "Traceback" not in done.stderr


def test_conflicting_sources_and_missing_file_exit_2(tmp_path):
    both = run("--snapshot", "a.json", "--from-collect-env", "b.txt")
    assert both.returncode == 2 and "cannot be combined" in both.stderr
    missing = run("--snapshot", str(tmp_path / "none.json"))
    assert missing.returncode == 2 and "no such snapshot" in missing.stderr


def test_unwritable_output_exits_2(tmp_path):
    (tmp_path / "file").write_text("x")
    done = run("-o", str(tmp_path / "file" / "sub" / "s.json"))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1


def test_python_option_probes_another_interpreter(tmp_path):
    import venv

    venv.EnvBuilder(with_pip=False).create(tmp_path / "v")
    py = tmp_path / "v" / "bin" / "python"
    done = run("--python", str(py), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["python"]["prefix"] == str(tmp_path / "v") and data["tool"]["command"].startswith("--python")


def test_help_lists_options():
    done = run("--help")
    for opt in ("--json", "-o, --output", "--deep", "--python", "--from-collect-env", "--snapshot"):
        assert opt in done.stdout


def test_from_collect_env_on_stdin():
    text = (ROOT / "tests/data/collect_env/torch13-conda-t4.txt").read_text()
    done = subprocess.run(
        [str(EXE), "snapshot", "--from-collect-env", "-", "--json"],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["accelerators"]["gpus"][0]["name"] == "Tesla T4" and data["tool"]["command"] == "collect_env"
