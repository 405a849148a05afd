"""The ISO/DEP/KERN checks as pure functions: recorded snapshots of real machine types and
hand-made snapshots for the cases a throwaway venv cannot stage (conda, user site, system
site, missing facts)."""

from __future__ import annotations

import pytest

from stackcheck.environment import load_snapshot
from stackcheck.judge import judge
from stackcheck.models import snapshot as S
from tests.factories import SNAPSHOTS, dist, make_snapshot

MINE = ("ISO", "DEP", "KERN")


def mine(snapshot, verdicts=("warning", "blocked")):
    report = judge(snapshot, command="doctor")
    return [
        (c.id, c.verdict, c.subject) for c in report.checks if c.id.startswith(MINE) and c.verdict in verdicts
    ]


def test_ros_polluted_workstation():
    found = mine(load_snapshot(str(SNAPSHOTS / "ros-polluted.json")))
    assert found == [
        ("ISO001", "blocked", "packaging"),
        ("ISO002", "warning", "pynvml"),
        ("ISO003", "blocked", "/opt/ros/humble/lib/python3.10/site-packages"),
        ("ISO003", "blocked", "/opt/ros/humble/local/lib/python3.10/dist-packages"),
        ("KERN001", "warning", "python3"),
    ]


@pytest.mark.parametrize("name", sorted(p.stem for p in SNAPSHOTS.glob("*.json") if p.stem != "ros-polluted"))
def test_healthy_recorded_machines_have_no_isolation_findings(name):
    assert mine(load_snapshot(str(SNAPSHOTS / f"{name}.json"))) == []


def _venv_snapshot(*dists, **python):
    snap = make_snapshot(*dists, python="3.11.9")
    py = snap.python
    py.prefix, py.base_prefix, py.executable = "/home/u/proj/.venv", "/usr", "/home/u/proj/.venv/bin/python"
    py.site_dirs = ["/home/u/proj/.venv/lib/python3.11/site-packages"]
    py.sys_path = [
        "/usr/lib/python311.zip",
        "/usr/lib/python3.11",
        "/usr/lib/python3.11/lib-dynload",
        *py.site_dirs,
    ]
    for k, v in python.items():
        setattr(py, k, v)
    return snap


def test_clean_venv_snapshot():
    assert (
        mine(_venv_snapshot(dist("a", "1", location="/home/u/proj/.venv/lib/python3.11/site-packages"))) == []
    )


def test_user_site_leaking_into_a_venv():
    user = "/home/u/.local/lib/python3.11/site-packages"
    snap = _venv_snapshot(dist("requests", "2.0", location=user), user_site=user, user_site_enabled=True)
    snap.python.sys_path.append(user)
    assert mine(snap) == [("ISO003", "warning", user)]


def test_system_dist_packages_in_a_venv():
    snap = _venv_snapshot()
    snap.python.sys_path.append("/usr/lib/python3/dist-packages")
    ((cid, verdict, subject),) = mine(snap)
    assert (cid, verdict, subject) == ("ISO003", "warning", "/usr/lib/python3/dist-packages")
    fix = next(
        c.fix for c in judge(snap, command="doctor").checks if c.id == "ISO003" and c.verdict == "warning"
    )
    assert "--system-site-packages" in fix


def test_conda_prefix_of_another_env():
    snap = _venv_snapshot(isolation=S.IsolationFacts(conda_prefix="/opt/conda/envs/other"))
    snap.python.prefix = snap.python.base_prefix = "/opt/conda/envs/proj"
    snap.python.env_kind = "conda"
    snap.python.site_dirs = ["/opt/conda/envs/proj/lib/python3.11/site-packages"]
    snap.python.sys_path = ["/opt/conda/envs/proj/lib/python3.11", *snap.python.site_dirs]
    assert mine(snap) == [("ISO004", "warning", "CONDA_PREFIX")]


def test_pip_and_python_on_path_disagree():
    tools = [
        S.PathTool(
            name="python", path="/home/u/proj/.venv/bin/python", interpreter="/home/u/proj/.venv/bin/python"
        ),
        S.PathTool(name="pip", path="/usr/local/bin/pip", interpreter="/usr/local/bin/python3.11"),
        S.PathTool(name="pip3", path="/usr/local/bin/pip3", interpreter=""),  # a shim: unknown, not judged
    ]
    assert mine(_venv_snapshot(isolation=S.IsolationFacts(path_tools=tools))) == [
        ("ISO004", "warning", "pip")
    ]


def test_kernels_of_other_envs_are_fine_but_the_default_one_is_not():
    snap = _venv_snapshot()
    snap.kernels = S.KernelsSection(
        status="ok",
        source="test",
        kernels=[
            S.Kernelspec(
                name="python3",
                path="/home/u/.local/share/jupyter/kernels/python3/kernel.json",
                argv=["/usr/bin/python3"],
                interpreter="/usr/bin/python3",
            ),
            S.Kernelspec(
                name="other",
                path="/home/u/.local/share/jupyter/kernels/other/kernel.json",
                argv=["/opt/x/bin/python"],
                interpreter="/opt/x/bin/python",
            ),
            S.Kernelspec(
                name="mine",
                path="/home/u/.local/share/jupyter/kernels/mine/kernel.json",
                argv=["/home/u/proj/.venv/bin/python"],
                interpreter="/home/u/proj/.venv/bin/python",
            ),
            S.Kernelspec(
                name="bundled",
                path="/home/u/proj/.venv/share/jupyter/kernels/bundled/kernel.json",
                argv=["python"],
                interpreter="/usr/bin/python",
                bare_python=True,
            ),
        ],
    )
    assert mine(snap) == [("KERN003", "warning", "python3")]


def test_checks_skip_when_facts_are_missing():
    snap = S.Snapshot()  # e.g. a partial import: nothing gathered
    report = judge(snap, command="doctor")
    verdicts = {c.id: c.verdict for c in report.checks if c.id.startswith(MINE)}
    assert verdicts and set(verdicts.values()) == {"skipped"}
    assert all(c.reason for c in report.checks if c.id.startswith(MINE))


def test_pin_free_pypi_torch_uses_its_cuda_requirements():
    snap = make_snapshot(
        dist(
            "torch",
            "2.13.0",
            "cuda-toolkit[cudart]==13.0.3; platform_system == 'Linux'",
            "nvidia-cudnn-cu13==9.20.0.48",
        ),
        dist("cuda-toolkit", "13.0.3"),
        dist("nvidia-cudnn-cu13", "9.20.0.48"),
        dist("nvidia-cublas-cu12", "12.8.4.1"),
    )
    assert mine(snap) == [("DEP005", "warning", "nvidia-runtime-wheels")]
