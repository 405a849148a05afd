"""`stackcheck kernel register|check` against a temporary Jupyter data dir and real venvs."""

import importlib.util
import json
import os
import subprocess

import pytest

from stackcheck.models.finding import Report
from stackcheck.models.snapshot import Kernelspec
from stackcheck.notebook.check import check_kernels, judge_kernel

from .conftest import make_venv


def verdicts(report: dict, kernel: str) -> dict:
    return {c["id"]: c["verdict"] for c in report["checks"] if c.get("subject") == kernel}


def test_register_then_check_ok(jupyter, kernel_python, tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    r = jupyter.run("register", "--name", "proj", "--python", kernel_python, "--json", cwd=repo)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    # the CLI runs in this interpreter's environment: jupyter_client installs where importable
    via = "jupyter_client" if importlib.util.find_spec("jupyter_client") else "direct"
    assert out["warnings"] == [] and out["via"] == via
    spec = jupyter.spec("proj")
    assert spec["argv"] == [str(kernel_python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    assert os.path.isabs(spec["argv"][0])
    assert spec["env"] == {"PYTHONPATH": str(repo)}  # the git root above the working directory
    assert spec["metadata"]["stackcheck"]["python"] == str(kernel_python)

    c = jupyter.run("check", "proj", "--json")
    assert c.returncode == 0, c.stdout + c.stderr
    report = json.loads(c.stdout)
    Report(**{k: v for k, v in report.items() if k != "checks"})  # the preflight Report shape
    assert report["kind"] == "kernel" and report["verdict"] == "ok"
    assert verdicts(report, "proj") == {
        k: "ok" for k in ("KERN010", "KERN001", "KERN002", "KERN011", "KERN012", "KERN013")
    }


def test_repo_importable_from_any_subfolder(jupyter, kernel_python, tmp_path):
    repo = tmp_path / "repo"
    deep = repo / "notebooks" / "week1"
    deep.mkdir(parents=True)
    (repo / "course_tools.py").write_text("ANSWER = 42\n")
    assert (
        jupyter.run("register", "--name", "course", "--python", kernel_python, "--repo", repo).returncode == 0
    )
    spec = jupyter.spec("course")
    cmd = [spec["argv"][0], "-c", "import course_tools; print(course_tools.ANSWER)"]
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # as Jupyter starts the kernel: the spec's env on top of the server's, cwd = the notebook's folder
    ran = subprocess.run(
        cmd, cwd=deep, env={**clean, **spec["env"]}, capture_output=True, text=True, timeout=60
    )
    assert ran.stdout.strip() == "42", ran.stderr
    without = subprocess.run(cmd, cwd=deep, env=clean, capture_output=True, text=True, timeout=60)
    assert without.returncode == 1  # the env entry is what makes it work
    assert without.stderr.strip().endswith("ModuleNotFoundError: No module named 'course_tools'")


def test_missing_ipykernel_warns_on_register_and_blocks_check(jupyter, tmp_path):
    bare_env = make_venv(tmp_path / "noipy", with_ipykernel=False)
    r = jupyter.run("register", "--name", "noipy", "--python", bare_env)
    assert r.returncode == 0
    assert "ipykernel is not installed" in r.stdout and f"{bare_env} -m pip install ipykernel" in r.stdout
    c = jupyter.run("check", "noipy", "--json")
    assert c.returncode == 1
    report = json.loads(c.stdout)
    assert verdicts(report, "noipy")["KERN012"] == "blocked"
    fix = next(x["fix"] for x in report["checks"] if x["id"] == "KERN012")
    assert fix == f"{bare_env} -m pip install ipykernel"


def test_bare_python_kernelspec_is_flagged(jupyter):
    jupyter.write_spec("barepy", ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"])
    c = jupyter.run("check", "barepy", "--json")
    report = json.loads(c.stdout)
    v = verdicts(report, "barepy")
    assert v["KERN001"] == "warning"
    # what a bare python runs depends on who starts the kernel: not judged from this PATH
    assert v["KERN002"] == v["KERN011"] == v["KERN012"] == "skipped"
    finding = next(x for x in report["checks"] if x["id"] == "KERN001")
    assert (
        "whichever interpreter starts Jupyter" in finding["observed"] and "kernel register" in finding["fix"]
    )


def test_missing_interpreter_is_blocked(jupyter, tmp_path):
    jupyter.write_spec(
        "gone",
        [
            str(tmp_path / "deleted-env" / "bin" / "python"),
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
        ],
    )
    c = jupyter.run("check", "gone", "--json")
    assert c.returncode == 1
    v = verdicts(json.loads(c.stdout), "gone")
    assert v["KERN002"] == "blocked" and v["KERN001"] == "ok" and v["KERN011"] == "skipped"


def test_interpreter_that_is_not_what_it_claims(jupyter, tmp_path):
    broken = make_venv(tmp_path / "broken", with_ipykernel=True)
    (tmp_path / "broken" / "pyvenv.cfg").unlink()  # the venv now runs as its base interpreter
    jupyter.write_spec("broken", [str(broken), "-m", "ipykernel_launcher", "-f", "{connection_file}"])
    report = json.loads(jupyter.run("check", "broken", "--json").stdout)
    assert verdicts(report, "broken")["KERN011"] == "warning"
    finding = next(x for x in report["checks"] if x["id"] == "KERN011")
    assert str(tmp_path / "broken") in finding["expected"]


def test_force_semantics(jupyter, kernel_python, tmp_path):
    other = make_venv(tmp_path / "other", with_ipykernel=True)
    assert jupyter.run("register", "--name", "shared", "--python", kernel_python).returncode == 0
    before = jupyter.spec("shared")
    # same interpreter again: an update, not a conflict
    assert (
        jupyter.run(
            "register", "--name", "shared", "--python", kernel_python, "--display-name", "New"
        ).returncode
        == 0
    )
    assert jupyter.spec("shared")["display_name"] == "New"
    refused = jupyter.run("register", "--name", "shared", "--python", other)
    assert refused.returncode == 1
    assert "--force" in refused.stderr and str(kernel_python) in refused.stderr
    assert jupyter.spec("shared")["argv"][0] == before["argv"][0]  # untouched
    forced = jupyter.run("register", "--name", "shared", "--python", other, "--force", "--json")
    assert forced.returncode == 0
    assert json.loads(forced.stdout)["replaced"] == str(kernel_python)
    assert jupyter.spec("shared")["argv"][0] == str(other)


def test_destinations(jupyter, kernel_python, tmp_path):
    prefix = tmp_path / "prefix"
    assert (
        jupyter.run(
            "register", "--name", "inprefix", "--python", kernel_python, "--prefix", prefix
        ).returncode
        == 0
    )
    assert jupyter.spec("inprefix", prefix / "share" / "jupyter")["argv"][0] == str(kernel_python)
    assert (
        jupyter.run(
            "register", "--name", "onpath", "--python", kernel_python, "--data-dir", jupyter.path
        ).returncode
        == 0
    )
    assert jupyter.spec("onpath", jupyter.path)["argv"][0] == str(kernel_python)
    # no NAME: every kernel Jupyter sees (the JUPYTER_PATH one, not the stray prefix)
    report = json.loads(jupyter.run("check", "--json").stdout)
    assert "onpath" in report["environment"]["kernels"].split(",")
    assert "inprefix" not in report["environment"]["kernels"].split(",")


@pytest.mark.parametrize(
    "args, expected",
    [
        (["register", "--name", "bad name!"], "--name"),
        (["register", "--user", "--prefix", "/tmp/x"], "cannot be combined"),
        (["register", "--python", "/nonexistent/python"], "--python"),
        (["register", "--repo", "/nonexistent/repo"], "--repo"),
        (["check", "--profile", "NO-SUCH-PROFILE"], "NO-SUCH-PROFILE"),
    ],
)
def test_bad_options_exit_2(jupyter, args, expected):
    r = jupyter.run(*args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert expected in r.stderr and "Traceback" not in r.stderr


def test_unknown_kernel_is_blocked(jupyter):
    r = jupyter.run("check", "nope", "--json")
    assert r.returncode == 1
    assert verdicts(json.loads(r.stdout), "nope") == {"KERN010": "blocked"}


def test_with_profile_judges_the_kernel_environment(jupyter, kernel_python):
    assert jupyter.run("register", "--name", "prof", "--python", kernel_python).returncode == 0
    r = jupyter.run("check", "prof", "--profile", "BASE-CPU", "--json")
    report = json.loads(r.stdout)
    assert report["profile"] == "BASE-CPU"
    profile_checks = [c for c in report["checks"] if (c.get("subject") or "").startswith("kernel prof")]
    assert profile_checks, report["checks"]
    assert not any(
        c["id"].startswith("KERN") for c in profile_checks
    )  # other kernels are not this one's environment
    assert report["snapshot_digest"].startswith("sha256:")
    assert r.returncode == (1 if report["verdict"] == "blocked" else 0)


def test_non_python_kernel_is_not_judged_as_python():
    spec = Kernelspec(
        name="ir", path="/x/kernel.json", language="R", argv=["R", "--slave"], interpreter_exists=True
    )
    results = judge_kernel(spec, {}, None)
    assert results[0].verdict == "ok"
    assert {r.verdict for r in results[1:]} == {"skipped"}


def test_register_through_jupyter_client_where_installed(jupyter, kernel_python, monkeypatch, tmp_path):
    pytest.importorskip("jupyter_client")
    from stackcheck.notebook.register import register

    monkeypatch.chdir(tmp_path)
    result = register(name="viajc", python=str(kernel_python))
    assert result.via == "jupyter_client"
    assert jupyter.spec("viajc")["argv"][0] == str(kernel_python)


def test_ipykernel_own_spec_inside_an_environment_is_fine(jupyter, tmp_path):
    """ipykernel installs share/jupyter/kernels/python3 with a bare `python` into each
    environment; a Jupyter started from that environment runs the environment's interpreter."""
    python = make_venv(tmp_path / "env", with_ipykernel=True)
    spec = tmp_path / "env" / "share" / "jupyter" / "kernels" / "envpy" / "kernel.json"
    spec.parent.mkdir(parents=True)
    spec.write_text(
        json.dumps(
            {
                "argv": ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3",
                "language": "python",
            }
        )
    )
    report = check_kernels(["envpy"], data_dirs=[str(tmp_path / "env" / "share" / "jupyter")])
    v = {c.id: c.verdict for c in report.checks}
    assert v["KERN001"] == "ok" and v["KERN011"] == "ok" and v["KERN012"] == "ok", report.checks
    assert str(python) in next(c.observed for c in report.checks if c.id == "KERN002")


@pytest.mark.parametrize(
    "option, what, below",
    [
        ("--data-dir", "a Jupyter data directory for --data-dir", "kernels/k"),
        ("--prefix", "an environment prefix for --prefix", "share/jupyter/kernels/k"),
    ],
)
def test_destination_that_is_a_file_is_one_line(jupyter, kernel_python, tmp_path, option, what, below):
    f = tmp_path / "f"
    f.write_text("")
    r = jupyter.run("register", "--name", "k", "--python", kernel_python, option, f)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == f"stackcheck: error: {f / below}: {f} is a file, not a directory (expected {what})\n"
    assert f.read_text() == ""
