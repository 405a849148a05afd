"""Hostile facts: a recorded snapshot, a colleague's bug report or a repository whose paths,
names and labels try to run something when a printed command is pasted."""

from __future__ import annotations

import copy
from pathlib import Path

from stackcheck.models import snapshot as S
from tests.factories import dist, make_profile, make_snapshot

PAYLOADS = (
    "$(touch pwned)",
    "`touch pwned`",
    "; touch pwned",
    "' ; touch pwned ; '",
    '" $(touch pwned) "',
    "&& touch pwned",
    "| touch pwned",
    "!! !-1",
    "* ? [a]",
    "~root",
    "{a,b}",
    "\\",
    "# comment",
    "\n touch pwned",
    "\r\x1b[2K forged line",
    "\u202e reversed",
)
# One directory name holding every payload: the interpreter of the hostile snapshots lives here.
ENV_DIR = "env " + " ".join(PAYLOADS)
NAME = "evil$(touch pwned)`touch pwned`;touch pwned"
OPTION_NAME = "--index-url=https://evil.example/simple"  # a distribution name pip would read as an option


def hostile_python(root: Path) -> tuple[str, str]:
    """(interpreter, prefix) under ``root`` whose path holds every payload."""
    prefix = root / ENV_DIR
    return str(prefix / "bin" / "python"), str(prefix)


def with_interpreter(snap: S.Snapshot, python: str, prefix: str) -> S.Snapshot:
    """A recorded snapshot as if it came from the hostile interpreter."""
    snap = copy.deepcopy(snap)
    snap.python.executable, snap.python.prefix = python, prefix
    return snap


def broken_environment(python: str, prefix: str) -> S.Snapshot:
    """Every isolation / integrity / kernel fault at once, named by payloads."""
    site = f"{prefix}/lib/python3.12/site-packages"
    other_site = f"{prefix}/other {PAYLOADS[0]}/lib/python3.12/site-packages"
    ros = "/opt/ros/humble/lib/python3.10/site-packages"
    user = f"/home/u {PAYLOADS[1]}/.local/lib/python3.12/site-packages"
    dists = [
        dist("packaging", "24.0", location=site, top_level=["packaging"]),
        dist("packaging", "21.0", location=ros, top_level=["packaging"]),
        dist(NAME, "1.0", location=site, top_level=["collide"]),
        dist(NAME, "2.0", location=other_site, top_level=["collide"]),
        dist(f"other{PAYLOADS[2]}", "1.0", location=site, top_level=["collide"]),
        dist("needs-things", "1.0", f"missing-dep{PAYLOADS[3].strip()}>=1", "packaging>=99", location=site),
        dist(f"old{PAYLOADS[4].strip()}", "1.0", location=site, requires_python="<3"),
        dist(
            "wrong-wheel", f"1.0+{PAYLOADS[0]}", location=site, wheel_tags=["cp27-cp27mu-manylinux1_x86_64"]
        ),
        dist("half", "1.0", location=site, problems=["missing METADATA"]),
        dist(OPTION_NAME, "1.0", location=site, problems=["missing METADATA"]),
        dist("torch", "2.8.0+cu128", location=site, top_level=["torch"]),
        dist("torchvision", "0.23.0+cpu", location=site, top_level=["torchvision"]),
        dist("torchaudio", "2.7.0", "torch==2.7.0", location=site, top_level=["torchaudio"]),
        dist("nvidia-cublas-cu11", "11.11.3.6", location=site),
        dist("requests", "2.0", location=user),
    ]
    snap = make_snapshot(*dists, python="3.12.3", torch="2.8.0+cu128", torch_cuda="12.8")
    py = snap.python
    py.executable, py.prefix, py.base_prefix, py.env_kind = python, prefix, "/usr", "venv"
    py.site_dirs = [site, other_site]
    py.user_site, py.user_site_enabled = user, True
    py.pythonpath = [ros]
    py.sys_path = [
        "/usr/lib/python312.zip",
        "/usr/lib/python3.12",
        ros,
        site,
        other_site,
        user,
        f"{site}/x{PAYLOADS[5]}",
    ]
    py.pth_files = [
        S.PthFile(path=f"{site}/evil{PAYLOADS[6]}.pth", entries=["/usr/lib/python3.10/site-packages"])
    ]
    py.sys_path.append("/usr/lib/python3.10/site-packages")
    py.isolation = S.IsolationFacts(
        virtual_env=f"/home/u/other env{PAYLOADS[0]}",
        path_tools=[
            S.PathTool(name="python", path=python, interpreter=python),
            S.PathTool(
                name="pip", path=f"/usr/local/bin/pip{PAYLOADS[1]}", interpreter="/usr/local/bin/python3.11"
            ),
        ],
    )
    snap.packages.stray_entries = [f"{site}/~orch{PAYLOADS[0]}", f"{site}/~-rf"]
    kernels_dir = "/home/u/.local/share/jupyter/kernels"
    snap.kernels = S.KernelsSection(
        status="ok",
        source="test",
        kernels=[
            S.Kernelspec(
                name=f"bare{PAYLOADS[2]}",
                path=f"{kernels_dir}/bare/kernel.json",
                argv=["python"],
                display_name=f"Bare {PAYLOADS[0]}",
                interpreter="/usr/bin/python3",
                bare_python=True,
            ),
            S.Kernelspec(
                name=f"gone{PAYLOADS[1]}",
                path=f"{kernels_dir}/gone/kernel.json",
                argv=["/gone/bin/python"],
                interpreter="/gone/bin/python",
                interpreter_exists=False,
            ),
            S.Kernelspec(
                name="python3",
                path=f"{kernels_dir}/python3/kernel.json",
                argv=["/usr/bin/python3"],
                display_name=f"Python 3 {PAYLOADS[13]}",
                interpreter="/usr/bin/python3",
            ),
        ],
        unreadable=[
            S.UnreadableKernelspec(
                name=f"broken{PAYLOADS[3]}",
                path=f"/home/u {PAYLOADS[0]}/kernels/b{PAYLOADS[2]}/kernel.json",
                reason="empty file",
            ),
        ],
    )
    return snap


def externally_managed(snap: S.Snapshot) -> S.Snapshot:
    """The same environment as an interpreter the operating system manages (PEP 668)."""
    snap.python.externally_managed = f"/usr/lib/python3.12 {PAYLOADS[0]}/EXTERNALLY-MANAGED"
    return snap


def gpu_machine(python: str, prefix: str, *, cpu_torch: bool = False) -> S.Snapshot:
    """An old-driver V100 box (GPU count, memory, architecture, CUDA build and driver faults)."""
    site = f"{prefix}/lib/python3.12/site-packages"
    snap = make_snapshot(
        dist("transformers", "4.40.0", location=site, top_level=["transformers"]),
        dist(f"cv{PAYLOADS[0]}", "1.0", location=site, top_level=["cv2"]),
        dist("forbidden-pkg", "1.0", location=site),
        python="3.12.3",
        gpus=[("Tesla V100-SXM2-16GB", "7.0", 16.0)],
        driver="470.82.01",
        driver_cuda="11.4",
        torch="2.8.0+cpu" if cpu_torch else "2.8.0+cu128",
        torch_cuda=None if cpu_torch else "12.8",
        modules={"cv2": ""},
    )
    snap.python.executable, snap.python.prefix = python, prefix
    return snap


def cpu_runner(python: str, prefix: str) -> S.Snapshot:
    """A GitHub-hosted runner without a GPU."""
    snap = make_snapshot(
        python="3.12.3",
        hosted=[S.HostedPlatform(name="github-actions", signal="GITHUB_ACTIONS=true", gpu_expected=False)],
    )
    snap.python.executable, snap.python.prefix = python, prefix
    return snap


def hostile_profile():
    """A profile built through the library API (the catalog refuses such an ID): every profile
    check fires on :func:`gpu_machine`, and its ID lands in printed commands."""
    return make_profile(
        id=f"P{PAYLOADS[0]}{PAYLOADS[2]}",
        python=">=3.13",
        requirements=["transformers>=99", "absent-pkg>=1"],
        constraints=["transformers<4.30"],
        required_modules=["cv2", "absent_mod"],
        forbidden=[{"requirement": "forbidden-pkg", "use_instead": f"OTHER{PAYLOADS[0]}"}],
        gpu={"min_count": 2, "min_memory_gib": 40, "min_compute_capability": "8.0", "torch_cuda": "==12.6"},
    )
