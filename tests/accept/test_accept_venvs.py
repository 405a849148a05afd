"""`stackcheck accept` end to end against real throwaway interpreters (CPU machine)."""

from __future__ import annotations

import json
import shlex

import msgspec
import pytest

from stackcheck.models.snapshot import Snapshot

# building the torch venv takes minutes on a busy 2-core machine (once per session)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def _steps(doc: dict) -> dict[str, dict]:
    return {c["id"]: c for c in doc["checks"]}


def test_full_stack_on_cpu(ml_python, cli, tmp_path, git_repo):
    git_repo.add("train.py", "print('clean')\n")
    out = tmp_path / "acceptance"
    r = cli("accept", "--python", ml_python, "--out", str(out), "--repo", str(git_repo.path), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # only JSON on stdout
    assert doc["kind"] == "accept" and doc["verdict"] == "ok"
    steps = _steps(doc)
    assert {k: v["verdict"] for k, v in steps.items()} == {
        "ACC001": "ok",
        "ACC002": "ok",
        "ACC003": "skipped",
        "ACC004": "ok",
        "ACC005": "ok",
        "ACC006": "ok",
        "ACC007": "skipped",
    }
    assert "CPU-only build" in steps["ACC003"]["reason"] and "sees no GPU" in steps["ACC003"]["reason"]
    losses = [float(x) for x in steps["ACC002"]["evidence"]["losses"].split()]
    assert losses[-1] < losses[0]
    assert "bit-identical" in steps["ACC004"]["observed"]
    assert steps["ACC007"]["reason"] == "no --profile given"

    # the report directory: report.json is what stdout said; the snapshot is a valid contract
    assert json.loads((out / "report.json").read_text()) == doc
    snap = msgspec.json.decode((out / "snapshot.json").read_bytes(), type=Snapshot)
    assert snap.python.executable == ml_python
    summary = (out / "summary.txt").read_text()
    assert "torch 2.13.0" in summary and "safetensors" in summary and "ACC004" in summary
    assert json.loads((out / "hygiene.json").read_text())["kind"] == "hygiene"
    assert sorted(p.name for p in (out / "logs").iterdir()) == [
        "ACC001-numpy.log",
        "ACC002-torch-train.log",
        "ACC003-gpu-matmul.log",
        "ACC004-safetensors.log",
    ]
    assert not list(out.glob(".*.tmp"))  # atomic writes leave no temporary files


def test_profile_preflight_and_hygiene_findings_block(bare_python, cli, tmp_path, git_repo):
    token = "hf_" + "Zz9Yy8Xx7W" * 4
    git_repo.add("notebooks/login.py", f"TOKEN = '{token}'\n")
    out = tmp_path / "acc"
    # TRAIN-CPU needs torch, transformers, accelerate, datasets and safetensors: all missing
    r = cli(
        "accept",
        "--python",
        bare_python,
        "--profile",
        "TRAIN-CPU",
        "--out",
        str(out),
        "--repo",
        str(git_repo.path),
    )
    assert r.returncode == 1, r.stderr
    assert token not in r.stdout and token not in (out / "hygiene.json").read_text()
    doc = json.loads((out / "report.json").read_text())
    steps = _steps(doc)
    assert doc["profile"] == "TRAIN-CPU" and doc["verdict"] == "blocked"
    assert (
        steps["ACC006"]["verdict"] == "blocked"
        and "HYG001 notebooks/login.py line 1" in steps["ACC006"]["observed"]
    )
    assert steps["ACC007"]["verdict"] == "blocked" and steps["ACC007"]["fix"]
    assert "transformers" in steps["ACC007"]["observed"] or "transformers" in steps["ACC007"]["fix"]
    assert json.loads((out / "preflight.json").read_text())["kind"] == "preflight"
    assert steps["ACC004"]["verdict"] == "blocked" and "torch" in steps["ACC004"]["fix"]
    assert "report: " in r.stdout and "BLOCKED" in r.stdout


def test_no_torch_blocks_the_torch_steps_with_the_fix(bare_python, cli, tmp_path):
    r = cli(
        "accept", "--python", bare_python, "--out", str(tmp_path / "o"), "--repo", str(tmp_path), "--json"
    )
    assert r.returncode == 1
    steps = _steps(json.loads(r.stdout))
    for step, packages in (
        ("ACC001", ["numpy"]),
        ("ACC002", ["torch"]),
        ("ACC004", ["torch", "safetensors"]),
    ):
        assert steps[step]["verdict"] == "blocked"
        assert (
            steps[step]["observed"]
            == f"{' and '.join(packages)} {'is' if len(packages) == 1 else 'are'} not installed"
        )
        assert steps[step]["fix"] == f"{shlex.quote(bare_python)} -m pip install {' '.join(packages)}"
    # a CPU-only machine and no profile that needs a GPU: the GPU step is skipped, with why
    assert (steps["ACC003"]["verdict"], steps["ACC003"]["reason"]) == (
        "skipped",
        "torch is not installed (ACC002 reports it) and no GPU was found on this machine",
    )
    assert steps["ACC006"]["verdict"] == "skipped"  # tmp_path is not a git repository


def test_profile_that_needs_no_torch_skips_the_torch_steps(bare_python, cli, tmp_path):
    r = cli(
        "accept",
        "--python",
        bare_python,
        "--profile",
        "INF-SERVICE-DELIVERY",
        "--out",
        str(tmp_path / "o"),
        "--repo",
        str(tmp_path),
        "--json",
    )
    steps = _steps(json.loads(r.stdout))
    for step in ("ACC001", "ACC002", "ACC003", "ACC004"):
        assert steps[step]["verdict"] == "skipped"
        assert "does not need it" in steps[step]["reason"]
    assert steps["ACC007"]["verdict"] == "blocked"  # fastapi & co. are missing
    assert r.returncode == 1


def test_profile_requirement_text_is_in_the_fix(bare_python, cli, tmp_path):
    r = cli(
        "accept",
        "--python",
        bare_python,
        "--profile",
        "BASE-CPU",
        "--out",
        str(tmp_path / "o"),
        "--repo",
        str(tmp_path),
        "--json",
    )
    steps = _steps(json.loads(r.stdout))
    assert steps["ACC002"]["fix"] == f"{shlex.quote(bare_python)} -m pip install 'torch<3,>=2.6'"
    assert steps["ACC001"]["verdict"] == "skipped"  # BASE-CPU does not require numpy


def test_bad_input_exits_2_without_a_traceback(cli, tmp_path):
    r = cli("accept", "--python", str(tmp_path / "nope"), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "no such interpreter" in r.stderr and "Traceback" not in r.stderr
    (tmp_path / "file").write_text("x")
    r = cli("accept", "--out", str(tmp_path / "file"))
    assert r.returncode == 2 and "is a file" in r.stderr
    r = cli("accept", "--profile", "NO-SUCH-PROFILE", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "unknown profile" in r.stderr
