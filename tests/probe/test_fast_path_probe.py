"""The probe pays only for what it uses: no NVML without an NVIDIA device node, no compiler
subprocess for a compiler it has asked before, no git outside a repository (and no
`git rev-parse` where the .git files say it all)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

from stackcheck.models.snapshot import GitSection
from stackcheck.probe import ProbeContext, git
from stackcheck.probe import accelerators as acc
from stackcheck.probe import toolchain as tc
from stackcheck.probe.proc import Completed
from tests.probe.test_probe_accelerators import fake_pynvml


# ------------------------------------------------------------------ accelerators
@pytest.fixture
def no_nodes(tmp_path, monkeypatch):
    """No NVIDIA driver file, device node, procfs directory or WSL node; no AMD device."""
    (tmp_path / "dev").mkdir()
    for name, path in (
        ("DEV_DIR", "dev"),
        ("PROCFS_DRIVER_DIR", "proc_driver_nvidia"),
        ("WSL_GPU_NODE", "dev/dxg"),
        ("SYSFS_VERSION", "sys_version"),
        ("PROCFS_VERSION", "proc_driver_nvidia/version"),
        ("AMD_KFD", "dev/kfd"),
    ):
        monkeypatch.setattr(acc, name, str(tmp_path / path))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return tmp_path


def test_without_a_device_node_nvml_is_never_asked(no_nodes, monkeypatch):
    monkeypatch.setattr(
        acc, "query_nvml_bounded", lambda timeout: pytest.fail("NVML asked without a device node")
    )
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml())  # even an importable, working pynvml
    sec = acc.collect()
    assert (sec.status, sec.source, sec.gpus, sec.driver_version, sec.error) == (
        "absent",
        "sysfs+devices",
        [],
        "",
        None,
    )
    assert sec.looked_for == [
        str(no_nodes / "sys_version"),
        str(no_nodes / "proc_driver_nvidia" / "version"),
        f"{no_nodes / 'dev' / 'nvidia*'}, {no_nodes / 'proc_driver_nvidia'}, "
        f"{no_nodes / 'dev' / 'dxg'}: none, NVML not asked",
        f"{no_nodes / 'dev' / 'kfd'} (ROCm)",
    ]


@pytest.mark.parametrize(
    "node", ["dev/nvidia0", "dev/nvidiactl", "dev/nvidia-uvm", "dev/dxg", "proc_driver_nvidia"]
)
def test_any_nvidia_node_lets_nvml_answer(no_nodes, monkeypatch, node):
    path = no_nodes / node
    if node == "proc_driver_nvidia":
        path.mkdir()
    else:
        path.write_text("")
    assert acc.nvidia_device_nodes() == [str(path)]
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml())
    sec = acc.collect()
    assert (sec.status, sec.source, sec.driver_version, sec.driver_source) == (
        "ok",
        "nvml",
        "580.82.07",
        "nvml",
    )
    assert [g.name for g in sec.gpus] == ["NVIDIA H100 80GB HBM3"]


def test_device_nodes_listed_in_order(no_nodes):
    (no_nodes / "proc_driver_nvidia").mkdir()
    for name in ("nvidiactl", "nvidia1", "nvidia0", "null", "kfd"):
        (no_nodes / "dev" / name).write_text("")
    assert acc.nvidia_device_nodes() == [str(no_nodes / "proc_driver_nvidia")] + [
        str(no_nodes / "dev" / n) for n in ("nvidia0", "nvidia1", "nvidiactl")
    ]


def test_amd_still_found_without_nvidia_nodes(no_nodes, monkeypatch):
    monkeypatch.setattr(
        acc, "query_nvml_bounded", lambda timeout: pytest.fail("NVML asked without a device node")
    )
    (no_nodes / "dev" / "kfd").write_text("")
    sec = acc.collect()
    assert (sec.status, sec.vendor, sec.source) == ("ok", "amd", "sysfs")


def test_windows_always_asks_nvml(monkeypatch):
    monkeypatch.setattr(acc.os, "name", "nt")
    assert acc.nvidia_device_nodes() == ["(windows)"]


@pytest.mark.skipif(bool(acc.nvidia_device_nodes()), reason="this machine has an NVIDIA device node")
def test_snapshot_process_never_imports_pynvml_here():
    """On this machine (no NVIDIA device node) a whole probe leaves pynvml unimported."""
    code = (
        "import sys; from stackcheck.probe import gather; s = gather(); "
        "print(s.accelerators.source, 'pynvml' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out[1] == "False" and out[0] in ("sysfs+devices", "sysfs")  # "sysfs": an AMD device here


# ------------------------------------------------------------------ toolchain
@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("STACKCHECK_NO_CACHE", raising=False)
    return tmp_path / "cache"


@pytest.fixture
def runs(monkeypatch):
    """proc.run replaced: every argv it is given, answered "13.2.0"."""
    calls: list[list[str]] = []

    def fake(argv, timeout=5.0, **kw):
        calls.append(list(argv))
        return Completed(0, "13.2.0\n", "")

    monkeypatch.setattr("stackcheck.probe.proc.run", fake)
    return calls


def fake_binary(path, body=b"\x7fELF" + b"\0" * 60):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    path.chmod(0o755)
    return path


def test_gcc_asked_once_until_its_binary_changes(tmp_path, cache_dir, runs, monkeypatch):
    gcc = fake_binary(tmp_path / "bin" / "gcc")
    monkeypatch.setenv("PATH", str(gcc.parent))
    asked = [str(gcc), "-dumpfullversion", "-dumpversion"]
    assert tc.find_gcc().version == "13.2.0" and runs == [asked]
    assert (tc.find_gcc().path, tc.find_gcc().version, tc.find_gcc().note) == (str(gcc), "13.2.0", "")
    assert runs == [asked], "the cached answer is used while the binary is unchanged"
    cache = cache_dir / tc.CACHE_FILE
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o600
    st = os.stat(gcc)
    os.utime(gcc, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # same size, new mtime
    assert tc.find_gcc().version == "13.2.0" and runs == [asked, asked]
    fake_binary(gcc, b"\x7fELF" + b"\0" * 61)
    os.utime(gcc, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # same mtime, new size
    assert tc.find_gcc().version == "13.2.0" and runs == [asked, asked, asked]
    tc.find_gcc()
    assert len(runs) == 3


def test_gcc_symlink_is_keyed_by_the_binary_it_resolves_to(tmp_path, cache_dir, runs, monkeypatch):
    real = fake_binary(tmp_path / "usr" / "bin" / "x86_64-linux-gnu-gcc-13")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "gcc").symlink_to(real)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    tc.find_gcc()
    tc.find_gcc()
    assert len(runs) == 1
    entries = json.loads((cache_dir / tc.CACHE_FILE).read_text())["entries"]
    assert entries == {f"{real}|{os.stat(real).st_mtime_ns}|64|-dumpfullversion": ["13.2.0", ""]}


@pytest.mark.parametrize("kind", ["script", "ccache"])
def test_wrappers_and_launchers_are_asked_every_time(tmp_path, cache_dir, runs, monkeypatch, kind):
    """A wrapper script or a ccache symlink stays the same file when the compiler behind it
    changes, so its answer is never kept."""
    if kind == "script":
        fake_binary(tmp_path / "bin" / "gcc", b'#!/bin/sh\nexec /opt/gcc-14/bin/gcc "$@"\n')
    else:
        launcher = fake_binary(tmp_path / "usr" / "bin" / "ccache")
        (tmp_path / "bin").mkdir()
        (tmp_path / "bin" / "gcc").symlink_to(launcher)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    for _ in range(3):
        assert tc.find_gcc().version == "13.2.0"
    assert len(runs) == 3
    assert not (cache_dir / tc.CACHE_FILE).exists()


def test_no_cache_env_asks_every_time_and_writes_nothing(tmp_path, cache_dir, runs, monkeypatch):
    monkeypatch.setenv("PATH", str(fake_binary(tmp_path / "bin" / "gcc").parent))
    monkeypatch.setenv("STACKCHECK_NO_CACHE", "1")
    tc.find_gcc()
    tc.find_gcc()
    assert len(runs) == 2 and not cache_dir.exists()


def test_a_failed_answer_is_asked_again(tmp_path, cache_dir, monkeypatch):
    calls = []

    def timing_out(argv, timeout=5.0, **kw):
        calls.append(argv)
        return Completed(None, "", "", "timeout after 5 s")

    monkeypatch.setattr("stackcheck.probe.proc.run", timing_out)
    monkeypatch.setenv("PATH", str(fake_binary(tmp_path / "bin" / "gcc").parent))
    assert (tc.find_gcc().version, tc.find_gcc().note) == ("", "timeout after 5 s")
    assert len(calls) == 2 and not (cache_dir / tc.CACHE_FILE).exists()


def test_a_corrupt_cache_is_ignored_and_rewritten(tmp_path, cache_dir, runs, monkeypatch):
    monkeypatch.setenv("PATH", str(fake_binary(tmp_path / "bin" / "gcc").parent))
    cache_dir.mkdir()
    for junk in ('{"entries": [1, 2]}', "not json", '{"entries": {"x": 1}}'):
        (cache_dir / tc.CACHE_FILE).write_text(junk)
        assert tc.find_gcc().version == "13.2.0"
    assert len(runs) == 3
    tc.find_gcc()
    assert len(runs) == 3


def test_nvcc_without_version_files_asked_once(tmp_path, cache_dir, runs, monkeypatch):
    def answer(argv, timeout=5.0, **kw):
        runs.append(list(argv))
        return Completed(0, "Cuda compilation tools, release 12.8, V12.8.61\n", "")

    monkeypatch.setattr("stackcheck.probe.proc.run", answer)
    nvcc = fake_binary(tmp_path / "cuda" / "bin" / "nvcc")
    for _ in range(2):
        assert tc.find_nvcc({"PATH": str(nvcc.parent)}).version == "12.8.61"
    assert runs == [[str(nvcc), "--version"]]


def test_cache_entries_are_bounded(tmp_path, cache_dir, runs, monkeypatch):
    for i in range(tc.CACHE_ENTRIES + 5):
        gcc = fake_binary(tmp_path / f"bin{i}" / "gcc")
        monkeypatch.setenv("PATH", str(gcc.parent))
        tc.find_gcc()
    entries = json.loads((cache_dir / tc.CACHE_FILE).read_text())["entries"]
    assert len(entries) == tc.CACHE_ENTRIES
    assert str(tmp_path / f"bin{tc.CACHE_ENTRIES + 4}" / "gcc") in next(reversed(entries))
    assert not any(str(tmp_path / "bin0" / "gcc") + "|" in k for k in entries), "the oldest went first"


# ------------------------------------------------------------------ git
@pytest.fixture
def no_git(monkeypatch):
    monkeypatch.setattr("stackcheck.probe.proc.run", lambda *a, **k: pytest.fail(f"a subprocess ran: {a[0]}"))


def test_outside_a_repository_git_is_not_started(tmp_path, no_git):
    from stackcheck.results.contract import GitState
    from stackcheck.results.recording import git_state

    (tmp_path / "a" / "b").mkdir(parents=True)
    sec = git.collect(ProbeContext(python={}, packages={}, cwd=str(tmp_path / "a" / "b")))
    assert (sec.status, sec.source, sec.error) == (
        "absent",
        "files",
        f"{tmp_path / 'a' / 'b'} is not inside a git repository",
    )
    assert git_state(tmp_path / "a" / "b") == GitState()


def fake_repo(root, head="ref: refs/heads/main\n", refs=None):
    dot = root / ".git"
    (dot / "refs" / "heads").mkdir(parents=True)
    (dot / "HEAD").write_text(head)
    for name, sha in (refs or {}).items():
        (dot / "refs" / "heads" / name).write_text(sha + "\n")
    return dot


class Calls(list):
    """argv lists, and the fake runner as ``.fake``."""


@pytest.fixture
def git_calls(monkeypatch):
    """proc.run replaced: records argv; `status` answers a clean tree, `rev-parse` a reftable
    repository's HEAD (set ``git_calls.rev_parse``)."""
    calls = Calls()

    def fake(argv, timeout=5.0, **kw):
        calls.append(list(argv))
        if "rev-parse" in argv:
            return Completed(0, getattr(fake, "rev_parse", ""), "")
        return Completed(0, "", "")

    monkeypatch.setattr("stackcheck.probe.proc.run", fake)
    calls.fake = fake
    return calls


def test_inside_a_repository_only_status_runs(tmp_path, git_calls):
    from stackcheck.results.contract import GitState
    from stackcheck.results.recording import git_state

    fake_repo(tmp_path, refs={"main": "a" * 40})
    (tmp_path / "src").mkdir()
    sec = git.collect(ProbeContext(python={}, packages={}, cwd=str(tmp_path / "src")))
    assert sec == GitSection(
        status="ok", source="files+git", root=str(tmp_path), commit="a" * 40, branch="main", dirty=False
    )
    assert git_state(tmp_path / "src") == GitState(commit="a" * 40, dirty=False, source="observed")
    assert git_calls == [
        [
            "git",
            "-C",
            str(tmp_path),
            "status",
            "--porcelain",
            "--untracked-files=no",
        ],  # the probe: tracked files
        ["git", "-C", str(tmp_path), "status", "--porcelain"],  # a record: untracked files count too
    ]


def test_branch_without_commits_starts_no_git_for_a_record(tmp_path, git_calls):
    from stackcheck.results.contract import GitState
    from stackcheck.results.recording import git_state

    fake_repo(tmp_path)
    assert git.head(str(tmp_path), str(tmp_path / ".git")) == ("main", "")
    assert git_state(tmp_path) == GitState()
    assert git_calls == []


def test_reftable_repository_asks_rev_parse(tmp_path, git_calls):
    dot = fake_repo(tmp_path, head="ref: refs/heads/.invalid\n")
    (dot / "reftable").mkdir()
    git_calls.fake.rev_parse = "b" * 40 + "\nrefs/heads/exp\n"
    assert git.head(str(tmp_path), str(dot)) == ("exp", "b" * 40)
    git_calls.fake.rev_parse = "b" * 40 + "\nHEAD\n"  # detached
    assert git.head(str(tmp_path), str(dot)) == ("", "b" * 40)
    git_calls.fake.rev_parse = "fatal: not a git repository\n"
    assert git.head(str(tmp_path), str(dot)) == ("", "")
    assert (
        git_calls == [["git", "-C", str(tmp_path), "rev-parse", "HEAD", "--symbolic-full-name", "HEAD"]] * 3
    )


def test_odd_head_asks_rev_parse(tmp_path, git_calls):
    dot = fake_repo(tmp_path, head="not a ref or an object id\n")
    git_calls.fake.rev_parse = "c" * 64 + "\nrefs/heads/sha256-repo\n"
    assert git.head(str(tmp_path), str(dot)) == ("sha256-repo", "c" * 64)
    assert len(git_calls) == 1


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_untracked_file_dirties_a_record_not_the_probe(tmp_path):
    from stackcheck.results.recording import git_state

    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for argv in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "one"]):
        subprocess.run(["git", "-C", str(tmp_path), *argv], check=True, capture_output=True, env=env)
    sha = subprocess.run(
        ["git", "-C", str(tmp_path), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    (tmp_path / "new.txt").write_text("x")
    sec = git.collect(ProbeContext(python={}, packages={}, cwd=str(tmp_path)))
    assert (sec.commit, sec.branch, sec.dirty) == (sha, "main", False)
    state = git_state(tmp_path)
    assert (state.commit, state.dirty, state.source) == (sha, True, "observed")


# ------------------------------------------------------------------ module presence
@pytest.mark.parametrize(
    ("entries", "present"),
    [
        (["mod"], True),
        (["mod.py"], True),
        (["mod.cpython-311-x86_64-linux-gnu.so"], True),
        (["mod.pyd"], True),
        (["mod.abi3.so"], True),
        (["module.py", "mo.so", "mod_x", "mod.txt", "mod.so.txt"], False),
        ([], False),
    ],
)
def test_module_presence_from_one_listing(entries, present):
    from stackcheck.probe.interpreter import _Listing, _module_present

    assert _module_present(_Listing(entries), "mod") is present
