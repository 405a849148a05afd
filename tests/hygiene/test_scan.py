"""The hygiene scan on a real git repository with every kind of finding planted."""

from __future__ import annotations

import json
import subprocess

from stackcheck.hygiene import scan


def _by_rule(report):
    found: dict[str, list] = {}
    for c in report.checks:
        if c.verdict != "ok":
            found.setdefault(c.id, []).append(c)
    return found


def test_every_planted_finding_and_no_near_miss(planted_repo):
    report = scan(str(planted_repo), max_weight_size=1024)
    found = _by_rule(report)
    assert report.verdict == "blocked"
    assert report.environment["mode"] == "git"

    kinds = sorted(c.evidence["kind"] for c in found["HYG001"])
    assert kinds == sorted(
        [
            "Hugging Face token",
            "Hugging Face token",
            "OpenAI API key",
            "Anthropic API key",
            "GitHub token",
            "GitHub token",
            "W&B API key",
            "AWS access key id",
            "AWS secret access key",
            "private key",
            ".netrc password",
        ]
    )
    files = {c.evidence["file"] for c in found["HYG001"]}
    assert "README.md" not in files  # "sk-" in prose, a commit hash, the documented example key
    assert "untracked-notes.txt" not in files  # git mode scans tracked files only
    config = {c.evidence["kind"]: c for c in found["HYG001"] if c.evidence["file"] == "src/config.py"}
    assert config["OpenAI API key"].subject == "src/config.py line 2"

    assert [c.evidence["file"] for c in found["HYG002"]] == [
        "models/big.safetensors"
    ]  # small.bin is under it
    assert [c.subject for c in found["HYG003"]] == ["hub/models--org--tiny/"]
    assert sorted(c.evidence["file"] for c in found["HYG004"]) == sorted(
        [
            "cache/torch_extensions/",
            "csrc/kernel.o",
            "pkg.egg-info/",
            "pkg/__pycache__/",
            "pkg/_C.so",
        ]
    )
    (nb,) = found["HYG005"]
    assert nb.evidence["cell"] == "1" and nb.evidence["file"] == "notebooks/train.ipynb"
    assert sorted(c.evidence["file"] for c in found["HYG006"]) == [
        "checkpoints/evil.pkl",
        "checkpoints/old.ckpt",
    ]
    assert all("os.system" in c.observed or "posix.system" in c.observed for c in found["HYG006"])
    quoted = next(c.observed for c in found["HYG007"] if c.subject == "src/load.py line 8")
    assert "token='hf_A..." in quoted and "hf_Ab3dE" not in quoted  # the quoted line is masked too
    remote = sorted(c.subject for c in found["HYG007"])
    assert remote == ["notebooks/train.ipynb cell 2 line 2", "src/load.py line 2", "src/load.py line 8"]
    for c in found["HYG001"] + found["HYG005"] + found["HYG006"]:
        assert c.verdict == "blocked" and c.fix
    for c in found["HYG002"] + found["HYG003"] + found["HYG004"] + found["HYG007"]:
        assert c.verdict == "warning" and c.fix


def test_malicious_pickle_is_never_executed(planted_repo):
    scan(str(planted_repo))
    assert not (planted_repo.parent / "PWNED").exists()


def test_ignore_file_accepts_rules_and_paths(planted_repo):
    (planted_repo / ".stackcheck-ignore").write_text(
        "# accepted exceptions\n"
        "HYG002:models/*.safetensors\n"
        "deploy/\n"
        "HYG004:**/__pycache__/\n"
        "HYG001:src/config.py\n"
        "!src/config.py\n"  # a later negation re-includes it
    )
    report = scan(str(planted_repo), max_weight_size=1024)
    found = _by_rule(report)
    assert "HYG002" not in found
    assert not any(c.evidence["file"].startswith("deploy/") for c in found["HYG001"])
    assert "pkg/__pycache__/" not in {c.evidence["file"] for c in found["HYG004"]}
    assert any(c.evidence["file"] == "src/config.py" for c in found["HYG001"])
    assert report.environment["ignored"] == "3"


def test_git_lfs_tracked_weights_are_not_bloat(planted_repo):
    (planted_repo / ".gitattributes").write_text("*.safetensors filter=lfs diff=lfs merge=lfs -text\n")
    found = _by_rule(scan(str(planted_repo), max_weight_size=1024))
    assert "HYG002" not in found


def test_directory_walk_outside_git_skips_venvs(tmp_path, secrets):
    (tmp_path / "proj" / ".venv").mkdir(parents=True)
    (tmp_path / "proj" / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "proj" / "env2").mkdir()
    (tmp_path / "proj" / "env2" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "proj" / "env2" / "leak.py").write_text(f"t = '{secrets['hf']}'\n")
    (tmp_path / "proj" / "node_modules").mkdir()
    (tmp_path / "proj" / "node_modules" / "x.js").write_text(f"t = '{secrets['hf']}'\n")
    (tmp_path / "proj" / "train.py").write_text(f"t = '{secrets['hf']}'\n")
    report = scan(str(tmp_path / "proj"))
    assert report.environment["mode"] == "walk"
    assert [c.evidence["file"] for c in _by_rule(report)["HYG001"]] == ["train.py"]


def test_subdirectory_scan_names_files_from_the_repository_root(planted_repo):
    report = scan(str(planted_repo / "src"))
    assert {c.evidence["file"] for c in _by_rule(report)["HYG001"]} == {"src/config.py", "src/load.py"}


def test_clean_repository_is_ok(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "a.py").write_text("print('hello')\n")
    subprocess.run(["git", "-C", str(tmp_path), "add", "a.py"], check=True)
    report = scan(str(tmp_path))
    assert report.verdict == "ok"
    assert sorted(c.id for c in report.checks) == [f"HYG00{i}" for i in range(1, 8)]
    assert json.loads(__import__("msgspec").json.encode(report))["kind"] == "hygiene"
