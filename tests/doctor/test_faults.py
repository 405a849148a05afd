"""Each isolation / integrity fault, injected one at a time into a real venv, is found by its
check — and nothing else in the doctor report goes wrong."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_script
from fakeenv import PY_TAG, make_venv, pip_check, write_dist

from stackcheck.environment import obtain_snapshot
from stackcheck.judge import judge
from stackcheck.probe import JUDGED

pytestmark = pytest.mark.slow

OTHER_MINOR = f"python{sys.version_info.major}.{sys.version_info.minor - 1}"


def doctor(python: str):
    snapshot = obtain_snapshot(python_path=python, sections=JUDGED)
    return judge(snapshot, command="doctor")


def findings(python: str) -> dict[str, list]:
    out: dict[str, list] = {}
    for c in doctor(python).checks:
        if c.verdict in ("warning", "blocked"):
            out.setdefault(c.id, []).append(c)
    return out


def test_clean_venv_has_no_findings(env):
    report = doctor(env.python)
    assert report.environment["python"] == env.python
    assert {c.id: c.verdict for c in report.checks if c.verdict not in ("ok", "skipped")} == {}
    ran = {c.id for c in report.checks if c.verdict == "ok"}
    assert {"DEP001", "DEP002", "DEP003", "DEP004", "ISO001", "ISO002", "ISO003", "ISO004", "KERN001"} <= ran


# ----- 1. broken requirements -----


def test_missing_requirement(env):
    write_dist(env.site, "needy", "0.1", ["absent-thing>=1"])
    found = findings(env.python)
    assert set(found) == {"DEP001"}
    (c,) = found["DEP001"]
    assert c.verdict == "blocked" and c.observed == "needy 0.1 requires absent-thing, which is not installed."
    assert "pip install 'absent-thing>=1'" in c.fix and env.python in c.fix


def test_conflicting_requirement_names_the_chain(env):
    shutil.rmtree(env.site / "util-2.1.dist-info")
    write_dist(env.site, "util", "1.5")
    found = findings(env.python)
    assert set(found) == {"DEP001"}
    by_subject = {c.subject: c for c in found["DEP001"]}
    assert by_subject["lib"].observed == "lib 1.2 has requirement util>=2, but you have util 1.5."
    assert by_subject["lib"].evidence["required_by"] == "app -> lib"


def test_requirement_of_an_extra_someone_asks_for(env):
    shutil.rmtree(env.site / "speedup-0.3.dist-info")
    found = findings(env.python)
    assert set(found) == {"DEP001"}
    (c,) = found["DEP001"]
    assert c.verdict == "warning" and "extra [fast]" in c.observed and "speedup" in c.observed
    # pip check does not evaluate extras requested by other packages: it sees nothing here.
    assert pip_check(env.python) == (0, ["No broken requirements found."])


# ----- 2. Requires-Python, wheel tags -----


def test_requires_python_violated(env):
    write_dist(env.site, "future-only", "3.0", requires_python=">=3.99")
    found = findings(env.python)
    assert set(found) == {"DEP002"}
    assert "requires Python >=3.99" in found["DEP002"][0].observed


@pytest.mark.parametrize(
    "tag",
    [
        f"cp{sys.version_info.major}{sys.version_info.minor - 1}-"
        f"cp{sys.version_info.major}{sys.version_info.minor - 1}-manylinux_2_17_x86_64",
        f"{PY_TAG}-{PY_TAG}-macosx_11_0_arm64",
        f"{PY_TAG}-{PY_TAG}-win_amd64",
    ],
)
def test_wheel_for_another_interpreter_or_platform(env, tag):
    write_dist(env.site, "compiled", "1.0", tag=tag)
    found = findings(env.python)
    assert set(found) == {"DEP003"}
    assert tag in found["DEP003"][0].observed


def test_fitting_wheel_tags_are_fine(env):
    write_dist(env.site, "native", "1.0", tag=f"{PY_TAG}-{PY_TAG}-manylinux_2_17_x86_64.manylinux2014_x86_64")
    write_dist(env.site, "stable-abi", "1.0", tag="cp38-abi3-manylinux_2_17_x86_64")
    assert findings(env.python) == {}


# ----- 3 + 5. duplicates and PYTHONPATH pollution: the ROS story -----


def test_ros_pythonpath_shadows_the_venv_copy(env, shell, tmp_path):
    write_dist(env.site, "packaging", "24.0")
    ros = tmp_path / "opt/ros/humble/lib/python3.10/site-packages"
    write_dist(ros, "packaging", "21.3")
    shell.setenv("PYTHONPATH", str(ros))

    # What really happens: the import loads ROS's copy, and pip check says nothing.
    loaded = subprocess.run(
        [env.python, "-c", "import packaging; print(packaging.__version__)"], capture_output=True, text=True
    )
    assert loaded.stdout.strip() == "21.3"
    code, out = pip_check(env.python, env=dict(__import__("os").environ))
    assert code == 0, out

    found = findings(env.python)
    assert set(found) == {"ISO001", "ISO003"}
    (dup,) = found["ISO001"]
    assert dup.verdict == "blocked" and dup.subject == "packaging"
    assert "import` loads " + str(ros / "packaging" / "__init__.py") in dup.observed
    assert (
        "pip list report 21.3" in dup.observed
        and "`uv pip list` (the environment's own site-packages) shows 24.0" in dup.observed
    )
    assert "PYTHONPATH" in dup.fix
    (pol,) = found["ISO003"]
    assert pol.verdict == "blocked" and "Python 3.10" in pol.observed and "ROS" in pol.observed


def test_same_version_twice_on_the_path_is_a_warning(env, shell, tmp_path):
    other = tmp_path / "vendored"
    write_dist(other, "lib", "1.2", ["util>=2"])
    shell.setenv("PYTHONPATH", str(other))
    found = findings(env.python)
    assert set(found) == {"ISO001"}
    assert found["ISO001"][0].verdict == "warning"


def test_pth_file_injecting_another_pythons_directory(env, tmp_path):
    foreign = tmp_path / "old-env" / "lib" / OTHER_MINOR / "site-packages"
    foreign.mkdir(parents=True)
    (env.site / "legacy.pth").write_text(f"{foreign}\n")
    found = findings(env.python)
    assert set(found) == {"ISO003"}
    (c,) = found["ISO003"]
    assert "legacy.pth" in c.observed and "legacy.pth" in c.fix


# ----- 4. import-name collisions -----


def test_pynvml_and_nvidia_ml_py_collide(env):
    write_dist(env.site, "nvidia-ml-py", "12.560.30", modules=("pynvml",), module_file=True)
    write_dist(env.site, "pynvml", "11.5.0", modules=("pynvml",))
    found = findings(env.python)
    assert set(found) == {"ISO002"}
    (c,) = found["ISO002"]
    assert c.subject == "pynvml" and "nvidia-ml-py 12.560.30" in c.observed and "pynvml 11.5.0" in c.observed
    # the package directory wins over the module file: that is what import loads
    assert c.observed.endswith(str(env.site / "pynvml" / "__init__.py"))
    assert c.fix.endswith("pip install nvidia-ml-py")


def test_namespace_packages_are_not_collisions(env):
    write_dist(env.site, "nsp-one", "1.0", modules=("nsp/one",))
    write_dist(env.site, "nsp-two", "1.0", modules=("nsp/two",))
    assert findings(env.python) == {}


# ----- 6. active environment -----


def test_virtual_env_points_elsewhere(env, shell, tmp_path):
    other = make_venv(tmp_path / "other")
    shell.setenv("VIRTUAL_ENV", str(other.root))
    found = findings(env.python)
    assert set(found) == {"ISO004"}
    assert f"VIRTUAL_ENV={other.root}" in found["ISO004"][0].observed


def test_pip_on_path_belongs_to_another_interpreter(env, shell, tmp_path):
    other = make_venv(tmp_path / "other")
    early = write_script(tmp_path / "early-bin" / "pip", other.python)
    shell.setenv("PATH", f"{early.parent}:{env.root / 'bin'}:/usr/bin:/bin")
    found = findings(env.python)
    assert set(found) == {"ISO004"}
    (c,) = found["ISO004"]
    assert c.subject == "pip" and other.python in c.observed and "python -m pip" in c.fix


# ----- 7. Jupyter kernels -----


def _kernel(tmp_path: Path, name: str, argv0: str) -> Path:
    d = tmp_path / "jupyter" / "kernels" / name
    d.mkdir(parents=True)
    spec = {
        "argv": [argv0, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": name,
        "language": "python",
    }
    (d / "kernel.json").write_text(json.dumps(spec))
    return d / "kernel.json"


def test_kernel_with_bare_python(env, tmp_path):
    _kernel(tmp_path, "labenv", "python")
    found = findings(env.python)
    assert set(found) == {"KERN001"}
    assert found["KERN001"][0].subject == "labenv"
    assert "ipykernel install --user --name labenv" in found["KERN001"][0].fix


def test_kernel_whose_interpreter_is_gone(env, tmp_path):
    _kernel(tmp_path, "deleted-env", str(tmp_path / "gone" / "bin" / "python"))
    found = findings(env.python)
    assert set(found) == {"KERN002"}


def test_default_kernel_runs_another_interpreter(env, tmp_path):
    other = make_venv(tmp_path / "other")
    _kernel(tmp_path, "python3", other.python)
    _kernel(tmp_path, "unrelated", other.python)  # another env's own kernel: fine
    found = findings(env.python)
    assert set(found) == {"KERN003"}
    assert [c.subject for c in found["KERN003"]] == ["python3"]


def test_doctor_kernel_option_checks_the_kernels_interpreter(env, tmp_path):
    from click.testing import CliRunner

    from stackcheck.cli import cli

    _kernel(tmp_path, "myenv", env.python)
    result = CliRunner().invoke(cli, ["doctor", "--kernel", "myenv", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["environment"]["python"] == env.python and report["environment"]["kernel"] == "myenv"
    missing = CliRunner().invoke(cli, ["doctor", "--kernel", "nope"])
    # an InputError: stackcheck's main() prints it as one line and exits 2
    assert type(missing.exception).__name__ == "InputError" and missing.output == ""
    assert str(missing.exception) == "no Jupyter kernel named 'nope' (see `jupyter kernelspec list`)"


# ----- 8. mixed builds -----


def _torch(site: Path, version: str, cuda: str | None, requires=()):
    write_dist(site, "torch", version, list(requires), tag=f"{PY_TAG}-{PY_TAG}-manylinux_2_28_x86_64")
    (site / "torch" / "version.py").write_text(
        f"__version__ = {version!r}\ncuda = {cuda!r}\nhip = None\ngit_version = 'abc'\n"
    )


def test_torchvision_of_another_variant(env):
    _torch(env.site, "2.5.1+cpu", None)
    write_dist(env.site, "torchvision", "0.20.1+cu121", ["torch==2.5.1"])
    found = findings(env.python)
    assert set(found) == {"DEP005"}
    assert (
        "+cu121" in found["DEP005"][0].observed and "download.pytorch.org/whl/cpu" in found["DEP005"][0].fix
    )


def test_torchvision_pinned_to_another_torch(env):
    _torch(env.site, "2.5.1", None)
    write_dist(env.site, "torchvision", "0.19.0", ["torch==2.4.0"])
    found = findings(env.python)
    # one fault, three views: the broken pin (what pip check says), the mixed build from the
    # companion's own pin, and the knowledge base's torch <-> torchvision pairing rule
    assert set(found) == {"DEP001", "DEP005", "KB011"}
    assert "torch==2.4.0" in found["DEP005"][0].observed


def test_cuda_runtime_wheels_of_another_major(env):
    _torch(env.site, "2.5.1+cu124", "12.4", ["nvidia-cudnn-cu12==9.1.0.70; platform_system == 'Linux'"])
    write_dist(env.site, "nvidia-cudnn-cu12", "9.1.0.70", modules=("nvidia/cudnn",))
    write_dist(env.site, "nvidia-cudnn-cu11", "8.5.0.96", modules=("nvidia/cudnn",))
    found = findings(env.python)
    assert set(found) == {"DEP005"}
    (c,) = found["DEP005"]
    assert "nvidia-cudnn-cu11" in c.observed and "nvidia-cudnn-cu12" not in c.observed


# ----- 9. broken installs -----


def test_dist_info_without_metadata(env):
    write_dist(env.site, "halfgone", "1.0", metadata=False)
    found = findings(env.python)
    assert set(found) == {"DEP004"}
    assert "missing METADATA" in found["DEP004"][0].observed


def test_leftover_temporary_directory(env):
    (env.site / "~orch").mkdir()
    found = findings(env.python)
    assert set(found) == {"DEP004"}
    assert found["DEP004"][0].verdict == "warning" and "~orch" in found["DEP004"][0].fix


def test_record_lists_a_module_that_is_gone(env):
    shutil.rmtree(env.site / "speedup")
    found = findings(env.python)
    assert set(found) == {"DEP004"}
    assert "'speedup'" in found["DEP004"][0].observed


def test_stackcheck_itself_survives_the_polluted_pythonpath_it_reports(shell, tmp_path):
    """The ROS copy of `packaging` on PYTHONPATH would otherwise be imported by stackcheck
    itself (here: a stub without packaging.requirements). The console script shields itself
    with -E and still probes the interpreter as PYTHONPATH makes it run."""
    ros = tmp_path / "opt/ros/humble/lib/python3.10/site-packages"
    write_dist(ros, "packaging", "21.3")
    shell.setenv("PYTHONPATH", str(ros))
    script = Path(sys.executable).parent / "stackcheck"
    done = subprocess.run([str(script), "doctor", "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr  # blocked: the ROS packaging shadows the venv's
    report = json.loads(done.stdout)
    non_ok = {(c["id"], c["subject"]) for c in report["checks"] if c["verdict"] == "blocked"}
    assert ("ISO003", str(ros)) in non_ok and ("ISO001", "packaging") in non_ok


def test_no_shield_when_stackcheck_itself_comes_from_pythonpath(shell, tmp_path):
    import stackcheck
    from stackcheck.cli import _shield_from_pythonpath

    src = Path(stackcheck.__file__).parent.parent
    shell.setenv("PYTHONPATH", f"{src}:{tmp_path}")
    assert not _shield_from_pythonpath()  # a -E restart could not import stackcheck
    shell.setenv("PYTHONPATH", str(tmp_path))
    assert _shield_from_pythonpath()
