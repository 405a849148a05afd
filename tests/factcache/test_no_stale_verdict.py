"""A warm run never serves a stale verdict: every change to what a cached fact depends on is
seen by the next command, through the real CLI on a throwaway venv (``--python``), with the
probe's metadata cache and the dependency-graph cache both warm before the change."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

STACKCHECK = [sys.executable, "-m", "stackcheck"]


def write_dist(site: Path, name: str, version: str, *requires: str, where: Path | None = None) -> Path:
    d = (where or site) / f"{name}-{version}.dist-info"
    d.mkdir(parents=True)
    head = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    (d / "METADATA").write_text(head + "".join(f"Requires-Dist: {r}\n" for r in requires) + "\nbody\n")
    (d / "RECORD").write_text(f"{name}/__init__.py,,\n")
    (d / "INSTALLER").write_text("pip\n")
    (where or site).joinpath(name).mkdir(exist_ok=True)
    (where or site).joinpath(name, "__init__.py").write_text("")
    return d


@pytest.fixture
def env(tmp_path, monkeypatch):
    """(python, site-packages, cache dir, environment for the CLI) of a venv holding
    alpha 1.0 (requires beta>=2) and beta 2.0."""
    root = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
    python = root / "bin" / "python"
    site = next(root.glob("lib/python*/site-packages"))
    write_dist(site, "alpha", "1.0", "beta>=2")
    write_dist(site, "beta", "2.0")
    cache = tmp_path / "cache"
    run_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "STACKCHECK_NO_CACHE")}
    run_env["STACKCHECK_CACHE_DIR"] = str(cache)
    return python, site, cache, run_env


def cli(env, *args: str) -> subprocess.CompletedProcess:
    python, _, _, run_env = env
    return subprocess.run(
        [*STACKCHECK, *args, "--python", str(python)],
        capture_output=True,
        text=True,
        env=run_env,
        timeout=120,
    )


def conflicts(env) -> list[str]:
    done = cli(env, "deps", "conflicts", "--json")
    assert done.stderr == "" and done.returncode in (0, 1), done.stderr
    return [c["message"] for c in json.loads(done.stdout)["conflicts"]]


def warm(env) -> None:
    """Two runs: the first derives and stores every fact, the second reads them back."""
    assert conflicts(env) == [] and conflicts(env) == []
    [graph] = (env[2] / "facts").glob("depgraph-*.json")
    [edge] = json.loads(graph.read_text())["entries"]["edges"]["alpha"]
    assert edge == ["alpha", "beta", "beta>=2", "satisfied", "2.0", None]
    assert list((env[2] / "metadata").glob("*.json"))


def rewrite_in_place(path: Path, old: str, new: str) -> None:
    """Same size, same inode; the mtime is moved on by a second (coarse file systems)."""
    st = path.stat()
    text = path.read_text()
    assert len(old) == len(new) and old in text
    with open(path, "r+") as fh:
        fh.write(text.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert path.stat().st_ino == st.st_ino and path.stat().st_size == st.st_size


def test_reinstall_of_an_older_version(env):
    warm(env)
    shutil.rmtree(env[1] / "beta-2.0.dist-info")
    write_dist(env[1], "beta", "1.5")
    assert conflicts(env) == ["alpha 1.0 has requirement beta>=2, but you have beta 1.5."]


def test_reinstall_of_the_same_version_with_other_requirements(env):
    warm(env)
    shutil.rmtree(env[1] / "alpha-1.0.dist-info")
    write_dist(env[1], "alpha", "1.0", "gamma")
    assert conflicts(env) == ["alpha 1.0 requires gamma, which is not installed."]


def test_same_size_rewrite_of_metadata_in_place(env):
    warm(env)
    rewrite_in_place(env[1] / "alpha-1.0.dist-info" / "METADATA", "beta>=2", "beta>=3")
    assert conflicts(env) == ["alpha 1.0 has requirement beta>=3, but you have beta 2.0."]


def test_same_size_same_mtime_rewrite_by_rename(env):
    """Only the inode of METADATA tells this rewrite apart: size, its mtime and the
    directory's mtime are put back as they were."""
    warm(env)
    rewrite_by_rename(env[1] / "alpha-1.0.dist-info", "beta>=2", "beta>=3")
    assert conflicts(env) == ["alpha 1.0 has requirement beta>=3, but you have beta 2.0."]


def test_same_size_rewrite_in_place_with_the_mtime_put_back(env):
    """Size, inode and mtime of METADATA all as they were: only its ctime moved."""
    warm(env)
    meta = env[1] / "alpha-1.0.dist-info" / "METADATA"
    st = meta.stat()
    rewrite_in_place(meta, "beta>=2", "beta>=5")
    os.utime(meta, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = meta.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns)
    assert conflicts(env) == ["alpha 1.0 has requirement beta>=5, but you have beta 2.0."]


def rewrite_by_rename(d: Path, old: str, new: str) -> None:
    """METADATA of ``d`` rewritten through a new file renamed over it; its size, its mtime and
    the directory's mtime put back (only the inode differs)."""
    meta = d / "METADATA"
    st, dst = meta.stat(), d.stat()
    (d / "METADATA.tmp").write_text(meta.read_text().replace(old, new))
    os.replace(d / "METADATA.tmp", meta)
    os.utime(meta, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.utime(d, ns=(dst.st_atime_ns, dst.st_mtime_ns))
    after = meta.stat()
    assert (after.st_size, after.st_mtime_ns, d.stat().st_mtime_ns) == (
        st.st_size,
        st.st_mtime_ns,
        dst.st_mtime_ns,
    )
    assert after.st_ino != st.st_ino


def test_removal_and_addition(env):
    warm(env)
    shutil.rmtree(env[1] / "beta-2.0.dist-info")
    assert conflicts(env) == ["alpha 1.0 requires beta, which is not installed."]
    write_dist(env[1], "beta", "2.1")
    assert conflicts(env) == []


def test_an_editable_install_through_a_pth_file(env, tmp_path):
    """A .pth file puts a source checkout on sys.path: its dist-info comes and goes with it."""
    warm(env)
    shutil.rmtree(env[1] / "beta-2.0.dist-info")
    checkout = tmp_path / "checkout"
    write_dist(env[1], "beta", "2.5", where=checkout)
    assert conflicts(env) == ["alpha 1.0 requires beta, which is not installed."]
    (env[1] / "__editable__.beta-2.5.pth").write_text(f"{checkout}\n")
    assert conflicts(env) == []
    rewrite_in_place(checkout / "beta-2.5.dist-info" / "METADATA", "Version: 2.5", "Version: 1.5")
    assert conflicts(env) == ["alpha 1.0 has requirement beta>=2, but you have beta 1.5."]
    (env[1] / "__editable__.beta-2.5.pth").unlink()
    assert conflicts(env) == ["alpha 1.0 requires beta, which is not installed."]


def test_direct_url_json_rewritten_in_place(env):
    """An editable install's direct_url.json rewritten in place (same size, the directory's
    mtime put back): the snapshot shows the new target and editable flag."""
    d = env[1] / "beta-2.0.dist-info"
    (d / "direct_url.json").write_text(json.dumps({"url": "file:///src/aaa", "dir_info": {"editable": True}}))

    def beta():
        done = cli(env, "snapshot", "--json")
        assert done.returncode == 0, done.stderr
        [found] = [x for x in json.loads(done.stdout)["packages"]["distributions"] if x["name"] == "beta"]
        return found["direct_url"], found["editable"]

    assert beta() == beta() == ("file:///src/aaa", True)
    dst = d.stat()
    old, new = (
        '"file:///src/aaa", "dir_info": {"editable": true}',
        '"file:///src/bbb", "dir_info": {"editable": null}',
    )
    rewrite_in_place(d / "direct_url.json", old, new)
    os.utime(d, ns=(dst.st_atime_ns, dst.st_mtime_ns))
    assert beta() == ("file:///src/bbb", False)


def test_a_changed_profile(env, tmp_path):
    warm(env)
    reg = tmp_path / "profiles.json"

    def verdict(requirement: str) -> str:
        profile = {"id": "LAB", "title": "lab", "category": "cpu", "requirements": [requirement]}
        reg.write_text(json.dumps({"schema_version": "1.0", "include_builtin": False, "profiles": [profile]}))
        done = cli(env, "preflight", "-p", "LAB", "--registry", str(reg), "--json")
        [pkg] = [c for c in json.loads(done.stdout)["checks"] if c["id"] == "PKG001"]
        return pkg["verdict"]

    assert verdict("beta>=2") == verdict("beta>=2") == "ok"
    assert verdict("beta>=3") == "blocked"


def test_a_changed_knowledge_file(env, tmp_path):
    """A rule's scope edited in a knowledge directory (STACKCHECK_KNOWLEDGE_DIR)."""
    from stackcheck.knowledge.loader import DATA_DIR

    kb = tmp_path / "knowledge"
    shutil.copytree(DATA_DIR, kb)
    env[3]["STACKCHECK_KNOWLEDGE_DIR"] = str(kb)
    warm(env)

    def kb013() -> str:
        done = cli(env, "preflight", "-p", "BASE-CPU", "--json")
        [rule] = [c for c in json.loads(done.stdout)["checks"] if c["id"] == "KB013"]
        return rule["verdict"]

    assert kb013() == kb013() == "ok"
    rules = kb / "rules" / "curated.json"
    data = json.loads(rules.read_text())
    [rule] = [r for r in data["rules"] if r["id"] == "KB013"]
    rule["scope"] = {"packages": ["alpha>=1", "beta>=2"]}
    rules.write_text(json.dumps(data))
    assert kb013() == "warning"


@pytest.mark.parametrize("junk", ["{torn", '{"stackcheck_cache": 1, "key": "x", "entries": {}}'])
def test_a_corrupt_graph_cache_is_rebuilt_without_a_word(env, junk):
    warm(env)
    [graph] = (env[2] / "facts").glob("depgraph-*.json")
    graph.write_text(junk)
    before = cli(env, "deps", "tree")
    assert (before.returncode, before.stderr) == (0, "")
    assert before.stdout == "alpha 1.0\n  - beta [required: >=2, installed: 2.0]\n"
    assert json.loads(graph.read_text())["entries"]["edges"]["beta"] == [], "rewritten"


def test_no_cache_writes_nothing(env):
    assert cli(env, "deps", "conflicts", "--no-cache").returncode == 0
    assert cli(env, "preflight", "-p", "BASE-CPU", "--no-cache").returncode in (0, 1)
    assert not env[2].exists()
