"""Unreadable kernelspecs (garbage, empty, truncated, a directory named kernel.json, no argv)
are facts of the probe, reported by `kernel check` and doctor with a fix that works, and
`kernel register --force` replaces them (its refusal names them)."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from stackcheck.judge import judge
from stackcheck.models import snapshot as S
from stackcheck.probe import ProbeContext, kernels
from stackcheck.shellcmd import command
from tests.factories import make_snapshot

# name → (how the kernel.json is made, the reason the probe gives)
BROKEN = {
    "garbage": (b"\x89PNG\r\n\x1a\n\x00\xff", "not UTF-8 text"),
    "empty": (b"", "empty file"),
    "truncated": (
        b'{"argv": ["/x/python", "-m"',
        "malformed JSON: Expecting ',' delimiter at line 1 column 28",
    ),
    "notobject": (b"[1, 2]", "expected a JSON object"),
    "noargv": (b'{"display_name": "x", "argv": []}', "argv: expected a non-empty list of strings"),
    "isdir": (None, "kernel.json is a directory"),
}


def make_broken(data_dir, name):
    content, _ = BROKEN[name]
    path = data_dir / "kernels" / name / "kernel.json"
    path.parent.mkdir(parents=True)
    if content is None:
        path.mkdir()
        (path / "stray").write_text("x")
    else:
        path.write_bytes(content)
    return path


def test_probe_reports_each_unreadable_spec_with_its_reason(tmp_path, monkeypatch):
    data = tmp_path / "data"
    paths = {name: make_broken(data, name) for name in BROKEN}
    monkeypatch.setenv("JUPYTER_PATH", str(data))
    # an empty prefix: the test venv's own share/jupyter (ipykernel's python3) is not looked at
    sec = kernels.collect(ProbeContext(python={"prefix": str(tmp_path / "prefix")}, packages={}))
    assert sec.status == "ok" and sec.kernels == []
    assert [(u.name, u.path, u.reason) for u in sec.unreadable] == [
        (name, str(paths[name]), BROKEN[name][1]) for name in sorted(BROKEN)
    ]


def test_an_unreadable_spec_hides_a_later_one_of_its_name_a_directory_does_not(tmp_path):
    first, later = tmp_path / "first", tmp_path / "later"
    make_broken(first, "empty")
    make_broken(first, "isdir")
    for name in ("empty", "isdir"):
        spec = later / "kernels" / name / "kernel.json"
        spec.parent.mkdir(parents=True)
        spec.write_text(json.dumps({"argv": ["/later/python"], "language": "python"}))
    specs, unreadable = kernels.scan_kernelspecs([str(first), str(later)])
    # Jupyter picks the first kernel.json *file* of a name (and fails on it); it skips a
    # directory named kernel.json, which still blocks writing a spec into that directory
    assert [s.name for s in specs] == ["isdir"]
    assert [(u.name, u.reason) for u in unreadable] == [
        ("empty", "empty file"),
        ("isdir", "kernel.json is a directory"),
    ]


# ------------------------------------------------------------------ doctor (KERN004)
def test_doctor_reports_unreadable_kernelspecs_with_a_fix():
    snap = make_snapshot()
    snap.kernels = S.KernelsSection(
        status="ok",
        source="kernelspec dirs",
        data_dirs=["/home/u/.local/share/jupyter"],
        unreadable=[
            S.UnreadableKernelspec(
                name="thesis",
                path="/home/u/.local/share/jupyter/kernels/thesis/kernel.json",
                reason="empty file",
            )
        ],
    )
    found = [c for c in judge(snap, command="doctor").checks if c.id == "KERN004"]
    assert [(c.verdict, c.subject) for c in found] == [("warning", "thesis")]
    assert found[0].observed == (
        "kernel 'thesis' (/home/u/.local/share/jupyter/kernels/thesis/kernel.json) is "
        "unreadable (empty file): Jupyter lists it and cannot start it"
    )
    snap.kernels.unreadable[0].listed = False
    found = [c for c in judge(snap, command="doctor").checks if c.id == "KERN004"]
    assert found[0].observed == (
        "kernel 'thesis' (/home/u/.local/share/jupyter/kernels/thesis/kernel.json) is "
        "unreadable (empty file): Jupyter skips it, and it blocks registering a kernel "
        "of that name there"
    )
    assert found[0].fix == (
        "remove it: `rm -r /home/u/.local/share/jupyter/kernels/thesis`, or replace it with a kernel of this "
        "environment: `stackcheck kernel register --name thesis --python /env/bin/python "
        "--data-dir /home/u/.local/share/jupyter --force`"
    )


def test_doctor_kern004_ok_without_unreadable_specs():
    snap = make_snapshot()
    snap.kernels = S.KernelsSection(status="absent", source="kernelspec dirs", data_dirs=["/d"])
    found = [(c.id, c.verdict) for c in judge(snap, command="doctor").checks if c.id == "KERN004"]
    assert found == [("KERN004", "ok")]


# ------------------------------------------------------------------ kernel check / register
def test_kernel_check_reports_every_unreadable_spec(jupyter):
    for name in BROKEN:
        make_broken(jupyter.path, name)
    r = jupyter.run("check", "--json")
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    # the kernels Jupyter finds in the test venv's own prefix (ipykernel's python3) are judged too
    found = {c["subject"]: c for c in report["checks"] if c["verdict"] != "ok" and c["subject"] in BROKEN}
    assert sorted(found) == sorted(BROKEN)
    assert [
        c["subject"] for c in report["checks"] if c["id"] == "KERN010" and c["verdict"] == "blocked"
    ] == sorted(BROKEN)
    for name, (_, reason) in BROKEN.items():
        c = found[name]
        path = jupyter.path / "kernels" / name / "kernel.json"
        assert (c["id"], c["verdict"]) == ("KERN010", "blocked")
        assert c["observed"].startswith(f"{path} is unreadable ({reason})")
        replace = command(
            "stackcheck",
            "kernel",
            "register",
            "--name",
            name,
            "--python",
            "/path/to/env/bin/python",
            "--data-dir",
            str(jupyter.path),
            "--force",
        )
        assert c["fix"] == f"remove it: `{command('rm', '-r', str(path.parent))}`, or replace it: `{replace}`"


def test_kernel_check_name_of_an_unreadable_spec_says_so(jupyter):
    path = make_broken(jupyter.path, "empty")
    r = jupyter.run("check", "empty")
    assert r.returncode == 1
    assert f"{path} is unreadable (empty file)" in r.stdout
    assert "no kernel named" not in r.stdout


@pytest.mark.parametrize("name", ["garbage", "empty", "isdir"])
def test_register_refusal_names_the_unreadable_spec_and_force_replaces_it(jupyter, kernel_python, name):
    path = make_broken(jupyter.data, name)
    refused = jupyter.run("register", "--name", name, "--python", kernel_python, "--data-dir", jupyter.data)
    assert refused.returncode == 1
    assert refused.stderr == (
        f"stackcheck: refused: kernel {name!r} ({path}) is unreadable ({BROKEN[name][1]}); replace it: "
        + command(
            "stackcheck",
            "kernel",
            "register",
            "--name",
            name,
            "--python",
            str(kernel_python),
            "--data-dir",
            str(jupyter.data),
            "--force",
        )
        + "\n"
    )
    forced = jupyter.run(
        "register", "--name", name, "--python", kernel_python, "--data-dir", jupyter.data, "--force"
    )
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.startswith(f"replaced kernel {name!r}: {path}")
    assert jupyter.spec(name)["argv"][0] == str(kernel_python)


def test_register_force_replaces_a_directory_named_kernel_json_via_jupyter_client(
    jupyter, kernel_python, tmp_path, monkeypatch
):
    pytest.importorskip("jupyter_client")
    from stackcheck.notebook.register import register

    path = make_broken(jupyter.data, "isdir")
    monkeypatch.chdir(tmp_path)
    result = register(name="isdir", python=str(kernel_python), force=True)
    assert result.via == "jupyter_client" and result.replaced == ""
    assert os.path.isfile(path) and jupyter.spec("isdir")["argv"][0] == str(kernel_python)
    shutil.rmtree(path.parent)


def test_doctor_kernel_option_names_an_unreadable_spec(jupyter):
    import subprocess

    from .conftest import STACKCHECK

    path = make_broken(jupyter.path, "empty")
    env = {**os.environ, "JUPYTER_PATH": str(jupyter.path), "JUPYTER_DATA_DIR": str(jupyter.data)}
    r = subprocess.run(
        [str(STACKCHECK), "doctor", "--kernel", "empty"], capture_output=True, text=True, env=env, timeout=120
    )
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (
        f"stackcheck: error: kernel 'empty': {path} is unreadable (empty file); "
        "see `stackcheck kernel check` for how to fix it\n"
    )
