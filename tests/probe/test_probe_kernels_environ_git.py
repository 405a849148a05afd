"""kernelspec discovery, secret redaction, git state."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.probe import ProbeContext, environ, git, kernels


# ------------------------------------------------------------------ kernels
def _spec(data_dir, name, argv, language="python", display=None):
    d = data_dir / "kernels" / name
    d.mkdir(parents=True)
    (d / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": display or name, "language": language})
    )
    return d / "kernel.json"


def test_kernelspecs_resolve_interpreters(tmp_path):
    user, system = tmp_path / "user", tmp_path / "system"
    _spec(
        user,
        "thesis",
        [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        display="Python (thesis)",
    )
    _spec(user, "gone", [str(tmp_path / "deleted-venv" / "bin" / "python"), "-m", "ipykernel_launcher"])
    _spec(system, "python3", ["python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"])
    _spec(system, "ir", ["R", "--slave", "-e", "IRkernel::main()"], language="R")
    specs = {s.name: s for s in kernels.find_kernelspecs([str(user), str(system)])}
    assert set(specs) == {"thesis", "gone", "python3", "ir"}
    assert (
        specs["thesis"].interpreter == sys.executable
        and specs["thesis"].interpreter_exists
        and not specs["thesis"].bare_python
    )
    assert specs["thesis"].display_name == "Python (thesis)"
    assert not specs["gone"].interpreter_exists
    bare = specs["python3"]
    assert bare.bare_python and bare.interpreter == (shutil.which("python3") or "python3")
    assert bare.interpreter_exists == (shutil.which("python3") is not None)
    assert specs["ir"].interpreter == "" and not specs["ir"].bare_python


def test_first_data_dir_wins_and_malformed_specs_are_reported(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _spec(a, "py", ["/a/python"])
    _spec(b, "py", ["/b/python"])
    bad = b / "kernels" / "broken"
    bad.mkdir(parents=True)
    (bad / "kernel.json").write_text("{not json")
    _spec(b, "noargv", [])
    specs = kernels.find_kernelspecs([str(a), str(b)])
    assert [(s.name, s.argv[0]) for s in specs] == [("py", "/a/python")]
    ctx = ProbeContext(python={"prefix": str(tmp_path / "prefix")}, packages={})
    os.environ["JUPYTER_PATH"] = os.pathsep.join([str(a), str(b)])
    try:
        sec = kernels.collect(ctx)
    finally:
        del os.environ["JUPYTER_PATH"]
    assert sec.status == "ok" and sec.data_dirs[:2] == [str(a), str(b)]
    assert str(tmp_path / "prefix" / "share" / "jupyter") in sec.data_dirs
    assert "broken" in sec.error and "noargv" in sec.error


def test_jupyter_data_dirs_order(tmp_path):
    env = {"JUPYTER_PATH": os.pathsep.join(["/x", "/y"]), "JUPYTER_DATA_DIR": "/home/me/jd"}
    dirs = kernels.jupyter_data_dirs("/opt/venv", env)
    assert dirs[:4] == ["/x", "/y", "/home/me/jd", os.path.join("/opt/venv", "share", "jupyter")]


def test_no_kernels_is_absent(tmp_path):
    sec = kernels.collect(ProbeContext(python={"prefix": str(tmp_path)}, packages={}))
    assert sec.data_dirs and (sec.status == "absent") == (not sec.kernels)


# ------------------------------------------------------------------ environ
# Fake credentials, assembled at run time so the repository itself passes `stackcheck hygiene`.
SECRETS = {
    "HF_TOKEN": "hf" + "_abcdefghijklmnopqrstuvwxyz012345",
    "HUGGING_FACE_HUB_TOKEN": "hf" + "_zyxwvutsrqponmlkjihgfedcba543210",
    "OPENAI_API_KEY": "sk" + "-proj-0123456789abcdefSECRET",
    "WANDB_API_KEY": "0123456789abcdef" * 2 + "01234567",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "MLFLOW_TRACKING_PASSWORD": "hunter2hunter2",
}


def test_secrets_never_reach_the_section():
    env = {
        **SECRETS,
        "CUDA_VISIBLE_DEVICES": "0,1",
        "PYTHONPATH": "/opt/ros/humble/lib/python3.10/site-packages",
        "PIP_INDEX_URL": "https://alice:s3cr3tpass@pypi.internal/simple",
        "HOME": "/home/me",
        "EDITOR": "vim",
    }
    variables, redacted = environ.select(env)
    assert set(SECRETS) <= set(redacted)
    for name in SECRETS:
        assert variables[name] == "<redacted>"
    assert variables["CUDA_VISIBLE_DEVICES"] == "0,1" and variables["PYTHONPATH"].startswith("/opt/ros")
    assert (
        variables["PIP_INDEX_URL"] == "https://<redacted>@pypi.internal/simple"
        and "PIP_INDEX_URL" in redacted
    )
    assert "HOME" not in variables and "EDITOR" not in variables
    blob = json.dumps(variables)
    for value in [*SECRETS.values(), "s3cr3tpass"]:
        assert value not in blob


def test_live_collect_redacts(monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("NCCL_DEBUG", "INFO")
    sec = environ.collect()
    assert sec.status == "ok" and sec.variables["NCCL_DEBUG"] == "INFO"
    import msgspec

    encoded = msgspec.json.encode(sec).decode()
    assert all(v not in encoded for v in SECRETS.values())


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["HF_TOKEN", "HF_HOME", "PIP_INDEX_URL", "CUDA_HOME", "WANDB_API_KEY", "UV_INDEX"]),
        st.text(min_size=6, alphabet=st.characters(blacklist_categories=("Cs",))),
    )
)
def test_redaction_property(env):
    variables, _ = environ.select(env)
    for name in ("HF_TOKEN", "WANDB_API_KEY"):
        if name in env:
            assert variables[name] == "<redacted>"
    for value in variables.values():
        assert (
            "://" not in value
            or "@" not in value.split("://", 1)[1].split("/", 1)[0]
            or "<redacted>@" in value
        )


# ------------------------------------------------------------------ git
def _git(cwd, *args):
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_git_state_commit_branch_dirty(tmp_path):
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "exp")
    (repo / "f.txt").write_text("1")
    _git(repo, "add", "f.txt")
    _git(repo, "commit", "-q", "-m", "one")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    sec = git.collect(ProbeContext(python={}, packages={}, cwd=str(repo / "sub")))
    assert (sec.status, sec.root, sec.branch, sec.commit, sec.dirty) == ("ok", str(repo), "exp", head, False)
    (repo / "f.txt").write_text("2")
    assert git.collect(ProbeContext(python={}, packages={}, cwd=str(repo))).dirty is True
    _git(repo, "pack-refs", "--all")  # commit now only in packed-refs
    assert git.read_head(str(repo / ".git")) == ("exp", head)
    _git(repo, "checkout", "-q", "--detach")
    assert git.read_head(str(repo / ".git")) == ("", head)


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_git_worktree(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "f").write_text("x")
    _git(repo, "add", "f")
    _git(repo, "commit", "-q", "-m", "one")
    _git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "wt"))
    sec = git.collect(ProbeContext(python={}, packages={}, cwd=str(tmp_path / "wt")))
    assert sec.branch == "side" and len(sec.commit) == 40 and sec.root == str(tmp_path / "wt")


def test_not_a_repository(tmp_path):
    sec = git.collect(ProbeContext(python={}, packages={}, cwd=str(tmp_path)))
    assert sec.status == "absent" and "not inside a git repository" in sec.error


def test_git_missing_leaves_dirty_unknown(tmp_path, monkeypatch):
    (tmp_path / ".git" / "refs" / "heads").mkdir(parents=True)
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / ".git" / "refs" / "heads" / "main").write_text("a" * 40 + "\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    sec = git.collect(ProbeContext(python={}, packages={}, cwd=str(tmp_path)))
    assert (sec.status, sec.branch, sec.commit, sec.dirty) == ("ok", "main", "a" * 40, None)
    assert "dirty unknown" in sec.error
