"""`stackcheck preflight` end to end: a real throwaway venv with injected faults, recorded
snapshots, and bad input (one line on stderr, exit 2, no traceback)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.factories import SNAPSHOTS

STACKCHECK = [sys.executable, "-m", "stackcheck"]


def run(*args: str, env: dict | None = None, cwd: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*STACKCHECK, *args], capture_output=True, text=True, timeout=120, env=env, cwd=cwd)


def write_dist(site: Path, name: str, version: str, *requires: str, top_level: str | None = None) -> None:
    """A minimal installed distribution, as pip would leave it (metadata only)."""
    d = site / f"{name.replace('-', '_')}-{version}.dist-info"
    d.mkdir(parents=True)
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        *(f"Requires-Dist: {r}" for r in requires),
    ]
    (d / "METADATA").write_text("\n".join(lines) + "\n\nlong description\n")
    (d / "INSTALLER").write_text("pip\n")
    mod = top_level or name.replace("-", "_")
    (d / "top_level.txt").write_text(mod + "\n")
    (site / mod).mkdir(exist_ok=True)
    (site / mod / "__init__.py").write_text("")


@pytest.fixture
def faulty_venv(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = Path(
        subprocess.check_output(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    write_dist(site, "transformers", "4.40.0", "tokenizers>=0.19,<0.20")
    write_dist(site, "tokenizers", "0.19.1")
    write_dist(site, "vllm", "0.11.0")
    registry = {
        "schema_version": "1.0",
        "include_builtin": False,
        "profiles": [
            {
                "id": "LAB-TRAIN",
                "title": "Lab training mechanism",
                "category": "cpu",
                "python": f">={sys.version_info.major}.{sys.version_info.minor}",
                "requirements": ["transformers>=4.45,<5", "tokenizers>=0.19"],
                "required_modules": ["transformers", "safetensors"],
                "forbidden": [
                    {
                        "requirement": "vllm",
                        "reason": "serving engine pins torch",
                        "use_instead": "INF-VLLM-011-CU128",
                    }
                ],
            }
        ],
    }
    reg = tmp_path / "environment-profiles.json"
    reg.write_text(json.dumps(registry))
    return python, site, reg


def test_preflight_finds_each_injected_fault_and_names_the_checked_interpreter(faulty_venv):
    python, site, reg = faulty_venv
    proc = run("preflight", "--registry", str(reg), "-p", "LAB-TRAIN", "--python", str(python), "--json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["verdict"] == "blocked" and report["profile"] == "LAB-TRAIN"
    bad = {(c["id"], c["subject"]) for c in report["checks"] if c["verdict"] == "blocked"}
    # the profile's own findings, plus the knowledge rule that vLLM 0.11 needs a newer transformers
    assert bad == {("PKG001", "transformers"), ("PKG003", "vllm"), ("MOD001", "safetensors"), ("KB029", None)}
    fixes = {c["id"]: c["fix"] for c in report["checks"] if c["verdict"] == "blocked"}
    assert fixes["PKG001"] == f"{python} -m pip install 'transformers<5,>=4.45'"
    assert fixes["PKG003"].startswith(f"{python} -m pip uninstall -y vllm")

    # repair the environment: the same command now passes
    import shutil

    shutil.rmtree(next(site.glob("vllm-*.dist-info")))
    shutil.rmtree(next(site.glob("transformers-*.dist-info")))
    shutil.rmtree(next(site.glob("tokenizers-*.dist-info")))
    write_dist(site, "transformers", "4.57.1", "tokenizers<=0.23.0,>=0.22.0")
    write_dist(site, "tokenizers", "0.22.1")
    write_dist(site, "safetensors", "0.6.2")
    proc = run("preflight", "--registry", str(reg), "-p", "LAB-TRAIN", "--python", str(python))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("preflight LAB-TRAIN: OK")


def test_strict_makes_warnings_fail(tmp_path):
    snap = SNAPSHOTS / "h100-single.json"
    if not snap.exists():
        pytest.skip("recorded snapshot missing")
    data = json.loads(snap.read_text())
    data["torch"]["cuda"] = None  # a CPU build of torch on a GPU machine: CUDA003 warns without a GPU profile
    data["torch"]["version"] = data["torch"]["version"].split("+")[0] + "+cpu"
    f = tmp_path / "s.json"
    f.write_text(json.dumps(data))
    reg = tmp_path / "r.json"
    reg.write_text(json.dumps({"include_builtin": False, "profiles": [{"id": "P", "title": "any"}]}))
    assert run("preflight", "--registry", str(reg), "-p", "P", "--snapshot", str(f)).returncode == 0
    assert (
        run("preflight", "--registry", str(reg), "-p", "P", "--snapshot", str(f), "--strict").returncode == 1
    )


@pytest.mark.parametrize(
    "content, needle",
    [
        (b'{"schema_version": "1.0", "python": {"version": "3.1', "truncated"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00garbage", "malformed"),
        (b'{"python": {"version": 3}}', "python.version"),
        (b"", "empty"),
    ],
)
def test_bad_snapshot_is_one_line_and_exit_2(tmp_path, content, needle):
    f = tmp_path / "snap.json"
    f.write_bytes(content)
    reg = tmp_path / "r.json"
    reg.write_text(json.dumps({"include_builtin": False, "profiles": [{"id": "P"}]}))
    proc = run("preflight", "--registry", str(reg), "-p", "P", "--snapshot", str(f))
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(f) in lines[0] and needle in lines[0].lower(), proc.stderr
    assert "Traceback" not in proc.stderr


def test_malformed_registry_and_unknown_profile_exit_2(tmp_path):
    reg = tmp_path / "r.json"
    reg.write_text('{"profiles": [ {"id": "A", "pyhton": ">=3.10"} ]}')
    proc = run("preflight", "--registry", str(reg), "-p", "A")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and str(reg) in proc.stderr
    reg.write_text(json.dumps({"include_builtin": False, "profiles": [{"id": "BASE"}]}))
    proc = run("preflight", "--registry", str(reg), "-p", "BASEE")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"stackcheck: error: unknown profile ID 'BASEE' in {reg}; did you mean BASE?\n"


def test_recorded_snapshots_judge_without_errors_against_every_builtin_profile():
    """Every built-in profile over every recorded machine: a report, never a crash or an
    'internal error' skip."""
    from stackcheck.catalog import load_catalog
    from stackcheck.environment import load_snapshot
    from stackcheck.judge import judge

    catalog = load_catalog()
    files = sorted(SNAPSHOTS.glob("*.json"))
    if not files:
        pytest.skip("no recorded snapshots")
    for f in files:
        snap = load_snapshot(str(f))
        for pid in catalog.ids():
            report = judge(snap, command="preflight", profile=catalog.get(pid))
            internal = [c for c in report.checks if c.reason and "internal error" in c.reason]
            assert not internal, (f.name, pid, internal)
