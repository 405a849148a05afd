import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

STACKCHECK = Path(sys.executable).with_name("stackcheck")


def make_venv(root: Path, with_ipykernel: bool) -> Path:
    """A real throwaway venv (no pip, nothing downloaded). ``with_ipykernel`` puts a stub
    ``ipykernel`` package in its site-packages: `kernel check` only *locates* ipykernel
    (importlib.util.find_spec), it never imports or starts it."""
    venv.create(root, with_pip=False, symlinks=os.name != "nt")
    python = root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if with_ipykernel:
        site = Path(
            subprocess.run(
                [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        )
        (site / "ipykernel").mkdir(parents=True)
        (site / "ipykernel" / "__init__.py").write_text("")
        (site / "ipykernel_launcher.py").write_text("raise SystemExit('stub')\n")
    return python


@pytest.fixture(scope="session")
def kernel_python(tmp_path_factory) -> Path:
    """An environment where a kernel can start: a venv that has ipykernel."""
    return make_venv(tmp_path_factory.mktemp("envs") / "withkernel", with_ipykernel=True)


@pytest.fixture
def jupyter(tmp_path, monkeypatch):
    """An isolated Jupyter: its own data dir and JUPYTER_PATH, for subprocesses and in-process."""
    env = dict(os.environ)
    env["JUPYTER_DATA_DIR"] = str(tmp_path / "jupyter-data")
    env["JUPYTER_PATH"] = str(tmp_path / "jupyter-path")
    for key in ("JUPYTER_DATA_DIR", "JUPYTER_PATH"):
        monkeypatch.setenv(key, env[key])

    class J:
        data = Path(env["JUPYTER_DATA_DIR"])
        path = Path(env["JUPYTER_PATH"])

        @staticmethod
        def run(*args, cwd=None):
            return subprocess.run(
                [str(STACKCHECK), "kernel", *map(str, args)],
                capture_output=True,
                text=True,
                env=env,
                cwd=cwd,
                timeout=120,
            )

        @staticmethod
        def spec(name: str, where: Path | None = None) -> dict:
            return json.loads(((where or J.data) / "kernels" / name / "kernel.json").read_text())

        @staticmethod
        def write_spec(name: str, argv: list[str], **extra) -> Path:
            path = J.path / "kernels" / name / "kernel.json"
            path.parent.mkdir(parents=True)
            path.write_text(json.dumps({"argv": argv, "display_name": name, "language": "python", **extra}))
            return path

    return J
