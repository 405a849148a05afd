"""The verdict cache (stackcheck.cli.verdicts), through the real CLI: a warm ``preflight`` /
``doctor`` prints the report judged before, byte for byte what judging prints (text and JSON,
exit code), without loading the judge; every change to what the report was judged from is
judged again. Every run is a process of its own in a throwaway working and cache directory; the
capture time is pinned by the runner (it differs on every run otherwise), and the runner says
on stderr which of the judging modules the process loaded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.factcache.test_no_stale_verdict import write_dist

# the probe's clock pinned (argv[1]); on exit: which judging modules the process loaded
RUNNER = """
import atexit, os, sys, types
import stackcheck, stackcheck.probe, stackcheck.probe.launch as launch
when = sys.argv.pop(1)
stackcheck.probe._utc_now = lambda: when
launch.time = types.SimpleNamespace(time_ns=lambda: 1_700_000_000_000_000_000)
if os.environ.get("TEST_STACKCHECK_VERSION"):
    stackcheck.__version__ = os.environ["TEST_STACKCHECK_VERSION"]
WATCH = ("stackcheck.judge", "stackcheck.checks.registry", "stackcheck.catalog.registry",
         "stackcheck.knowledge.loader", "packaging", *os.environ.get("TEST_WATCH", "").split())
atexit.register(lambda: sys.stderr.write(
    "loaded:" + "".join(" " + m for m in WATCH if m in sys.modules) + "\\n"))
from stackcheck.cli import main
main()
"""
WHEN = "2026-01-02T03:04:05Z"
HIT = "loaded:\n"  # a report from the cache: nothing of the judging was imported
PAST = time.time() - 3600  # mtimes outside the racy window (factcache.RACY_NS)


@pytest.fixture
def box(tmp_path):
    """(working directory, cache directory, environment) for the CLI."""
    work, cache = tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    drop = (
        "PYTHONPATH",
        "STACKCHECK_NO_CACHE",
        "STACKCHECK_KNOWLEDGE_DIR",
        "STACKCHECK_RULES",
        "VIRTUAL_ENV",
    )
    env = {
        k: v for k, v in os.environ.items() if k not in drop and not k.startswith(("NO_COLOR", "FORCE_COLOR"))
    }
    env.update(STACKCHECK_CACHE_DIR=str(cache), PYTHONIOENCODING="utf-8")
    return work, cache, env


def cli(box, *args: str, when: str = WHEN, **extra: str) -> subprocess.CompletedProcess:
    work, _, env = box
    return subprocess.run(
        [sys.executable, "-c", RUNNER, when, *args],
        capture_output=True,
        env={**env, **extra},
        cwd=work,
        timeout=180,
    )


def loaded(done: subprocess.CompletedProcess) -> str:
    """The last stderr line: the judging modules the process loaded."""
    return done.stderr.decode().splitlines()[-1] + "\n"


def judged(done: subprocess.CompletedProcess) -> bool:
    assert loaded(done).startswith("loaded:"), done.stderr.decode()
    return "stackcheck.judge" in loaded(done)


def checks(done: subprocess.CompletedProcess) -> dict[str, dict]:
    return {c["id"]: c for c in json.loads(done.stdout)["checks"]}


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "facts").glob("verdicts-*.json"))


def in_the_past(path: Path, seconds: float = 0) -> None:
    os.utime(path, (PAST + seconds, PAST + seconds))


@pytest.mark.parametrize(
    "args",
    [
        ("preflight", "--profile", "BASE-CPU"),
        ("preflight", "-p", "BASE-CPU", "--json"),
        ("doctor",),
        ("doctor", "--json"),
    ],
)
def test_a_hit_prints_what_judging_prints(box, args):
    reference = cli(box, *args, STACKCHECK_NO_CACHE="1")
    miss, hit = cli(box, *args), cli(box, *args)
    assert judged(reference) and judged(miss) and not judged(hit)
    assert loaded(hit) == HIT, "a hit imports no judge, checks, catalog, knowledge loader or packaging"
    assert reference.stdout and reference.returncode in (0, 1)
    assert (
        (hit.stdout, hit.returncode)
        == (miss.stdout, miss.returncode)
        == (reference.stdout, reference.returncode)
    )
    assert len(entries(box[1])) == 1


@pytest.mark.parametrize("args", [("preflight", "--profile", "BASE-CPU"), ("doctor", "--json")])
def test_a_hit_loads_no_openssl_pathlib_or_dataclasses(box, args):
    """What a hit needs no longer imports hashlib (OpenSSL's libcrypto), pathlib (with urllib and
    ipaddress) or dataclasses (with the source-of-facts table): ≈ 6 ms of a warm preflight."""
    heavy = "_hashlib hashlib pathlib dataclasses stackcheck.sources"
    miss = cli(box, *args, TEST_WATCH=heavy)
    assert judged(miss) and "dataclasses" in loaded(miss)  # judging loads it (the watch works)
    assert "pathlib" not in loaded(miss)  # nor does judging load pathlib (issue 13: cold path)
    assert loaded(cli(box, *args, TEST_WATCH=heavy)) == HIT


def test_a_hit_carries_this_runs_capture_time_and_snapshot_digest(box):
    args = ("preflight", "-p", "BASE-CPU", "--json")
    assert judged(cli(box, *args))
    later = "2027-05-06T07:08:09Z"
    hit, reference = cli(box, *args, when=later), cli(box, *args, when=later, STACKCHECK_NO_CACHE="1")
    assert not judged(hit) and judged(reference)
    report = json.loads(hit.stdout)
    assert report["environment"]["captured_at"] == later
    assert hit.stdout == reference.stdout


def test_output_options_are_applied_to_a_cached_report(box):
    """-v, --strict and --markdown go through click: the report judged by the fast path is
    served there too, printed as judging would print it."""
    assert judged(cli(box, "preflight", "-p", "BASE-CPU"))
    for extra in (["-v"], ["--strict"], ["--markdown"]):
        args = ("preflight", "-p", "BASE-CPU", *extra)
        hit, reference = cli(box, *args), cli(box, *args, STACKCHECK_NO_CACHE="1")
        assert not judged(hit) and judged(reference), extra
        assert (hit.stdout, hit.returncode) == (reference.stdout, reference.returncode), extra


def test_the_served_report_is_the_stored_one(box):
    """A doctored entry is what prints: hits really come from the cache."""
    args = ("preflight", "-p", "BASE-CPU", "--json")
    assert judged(cli(box, *args))
    [entry] = entries(box[1])
    data = json.loads(entry.read_text())
    data["entries"]["report"]["checks"][0]["title"] = "doctored in the cache"
    entry.write_text(json.dumps(data))
    hit = cli(box, *args)
    assert not judged(hit)
    assert json.loads(hit.stdout)["checks"][0]["title"] == "doctored in the cache"


def test_an_environment_variable_the_snapshot_records(box, tmp_path):
    args = ("preflight", "-p", "BASE-CPU", "--json")
    assert judged(cli(box, *args)) and not judged(cli(box, *args))
    elsewhere = tmp_path / "other-venv"
    elsewhere.mkdir()
    done = cli(box, *args, VIRTUAL_ENV=str(elsewhere))
    assert judged(done)
    iso = checks(done)["ISO004"]
    assert (iso["verdict"], iso["subject"]) == ("warning", "VIRTUAL_ENV")


def test_a_symlink_the_checks_resolve(box, tmp_path):
    """VIRTUAL_ENV names a link: the snapshot stays the same when the link is pointed
    elsewhere, only the answer of os.path.realpath changes (ISO004 compares those)."""
    link = tmp_path / "active"
    link.symlink_to(sys.prefix)
    args = ("preflight", "-p", "BASE-CPU", "--json")
    first, second = cli(box, *args, VIRTUAL_ENV=str(link)), cli(box, *args, VIRTUAL_ENV=str(link))
    assert judged(first) and not judged(second)
    assert checks(second)["ISO004"]["verdict"] == "ok"
    link.unlink()
    (tmp_path / "other").mkdir()
    link.symlink_to(tmp_path / "other")
    done = cli(box, *args, VIRTUAL_ENV=str(link))
    assert judged(done)
    assert checks(done)["ISO004"]["verdict"] == "warning"


def lab_registry(work: Path, requirement: str, title: str = "lab") -> Path:
    """requirements/environment-profiles.json in the working directory (found upwards), one
    profile LAB on top of the built-in catalog, written an hour ago."""
    reg = work / "requirements" / "environment-profiles.json"
    reg.parent.mkdir(exist_ok=True)
    profile = {"id": "LAB", "title": title, "category": "cpu", "requirements": [requirement]}
    reg.write_text(json.dumps({"schema_version": "1.0", "profiles": [profile]}))
    in_the_past(reg)
    return reg


def test_a_changed_profile_file(box):
    reg = lab_registry(box[0], "pip>=1")
    args = ("preflight", "-p", "LAB", "--json")
    first, second = cli(box, *args), cli(box, *args)
    assert judged(first) and not judged(second)
    assert checks(second)["PKG001"]["verdict"] == "ok"
    assert json.loads(second.stdout)["environment"]["registry"] == str(reg)
    lab_registry(box[0], "pip>=999")
    in_the_past(reg, 1)  # same size, other content, other mtime
    done = cli(box, *args)
    assert judged(done)
    assert checks(done)["PKG001"]["verdict"] == "blocked"


def test_a_registry_given_with_the_option(box, tmp_path):
    """--registry (click) names the file; without it (no registry above the working
    directory) the built-in catalog has no LAB."""
    (tmp_path / "elsewhere").mkdir()
    reg = lab_registry(tmp_path / "elsewhere", "pip>=1", title="given")
    args = ("preflight", "-p", "LAB", "--registry", str(reg), "--json")
    assert judged(cli(box, *args))
    done = cli(box, *args)
    assert not judged(done)
    assert json.loads(done.stdout)["profile"] == "LAB"
    unknown = cli(box, "preflight", "-p", "LAB", "--json")  # no registry in the working directory
    assert unknown.returncode == 2 and b"unknown profile ID 'LAB'" in unknown.stderr


def test_a_registry_written_just_now_is_neither_trusted_nor_kept(box):
    reg = lab_registry(box[0], "pip>=1")
    os.utime(reg)  # now: within the racy window
    args = ("preflight", "-p", "LAB", "--json")
    assert judged(cli(box, *args)) and judged(cli(box, *args))
    assert entries(box[1]) == []


def test_a_changed_knowledge_file(box, tmp_path):
    from stackcheck.knowledge.paths import DATA_DIR

    kb = tmp_path / "knowledge"
    shutil.copytree(DATA_DIR, kb)  # copy2: the mtimes of the packaged files
    args = ("preflight", "-p", "BASE-CPU", "--json")
    first = cli(box, *args, STACKCHECK_KNOWLEDGE_DIR=str(kb))
    assert judged(first) and not judged(cli(box, *args, STACKCHECK_KNOWLEDGE_DIR=str(kb)))
    rules = kb / "rules" / "curated.json"
    data = json.loads(rules.read_text())
    [rule] = [r for r in data["rules"] if r["id"] == "KB013"]
    rule["title"] = "KB013 as edited"
    rules.write_text(json.dumps(data, indent=1))
    in_the_past(rules)
    done = cli(box, *args, STACKCHECK_KNOWLEDGE_DIR=str(kb))
    assert judged(done)
    assert checks(done)["KB013"]["title"] == "KB013 as edited"
    assert judged(cli(box, *args)), "the packaged knowledge base is another key"


def test_an_extra_rule_folder(box, tmp_path):
    """STACKCHECK_RULES adds a rule: judged again, and the rule is in the report."""
    from stackcheck.knowledge.paths import DATA_DIR

    args = ("preflight", "-p", "BASE-CPU", "--json")
    assert judged(cli(box, *args)) and not judged(cli(box, *args))
    data = json.loads((DATA_DIR / "rules" / "curated.json").read_text())
    [rule] = [r for r in data["rules"] if r["id"] == "KB013"]
    folder = tmp_path / "mined"
    folder.mkdir()
    (folder / "mined.json").write_text(json.dumps({**data, "rules": [{**rule, "id": "KB9001"}]}))
    in_the_past(folder / "mined.json")
    done = cli(box, *args, STACKCHECK_RULES=str(folder))
    assert judged(done)
    assert checks(done)["KB9001"]["title"] == rule["title"]


def test_another_profile_skip_or_deep_is_another_key(box):
    base, train = ("preflight", "-p", "BASE-CPU", "--json"), ("preflight", "-p", "TRAIN-CPU", "--json")
    assert judged(cli(box, *base)) and judged(cli(box, *train))
    assert not judged(cli(box, *base)) and not judged(cli(box, *train)), "one entry each: no eviction"
    skipping = cli(box, *base, "--skip", "PLAT")
    assert judged(skipping)
    assert {c["id"] for c in checks(skipping).values() if c["reason"] == "skipped by --skip"} >= {"PLAT001"}
    assert not judged(cli(box, *base, "--skip", "PLAT"))
    assert not judged(cli(box, *base))


def test_another_stackcheck_version(box):
    args = ("preflight", "-p", "BASE-CPU", "--json")
    assert judged(cli(box, *args)) and not judged(cli(box, *args))
    bumped = cli(box, *args, TEST_STACKCHECK_VERSION="999.0")
    assert judged(bumped)
    assert not judged(cli(box, *args, TEST_STACKCHECK_VERSION="999.0"))


def source_copy(tmp_path: Path) -> Path:
    """A copy of the stackcheck package (mtimes kept), run instead of the installed one."""
    import stackcheck

    src = tmp_path / "src"
    shutil.copytree(
        Path(stackcheck.__file__).parent, src / "stackcheck", ignore=shutil.ignore_patterns("__pycache__")
    )
    return src


def test_edited_check_code_and_a_new_check_module(box, tmp_path):
    src = source_copy(tmp_path)
    run = {"PYTHONPATH": str(src)}
    args = ("preflight", "-p", "BASE-CPU", "--json")
    assert judged(cli(box, *args, **run)) and not judged(cli(box, *args, **run))
    module = src / "stackcheck" / "checks" / "python.py"
    text = module.read_text()
    assert '"PY001",\n    "' in text
    module.write_text(text.replace('"PY001",\n    "', '"PY001",\n    "Edited: ', 1))
    in_the_past(module)
    done = cli(box, *args, **run)
    assert judged(done)
    assert checks(done)["PY001"]["title"].startswith("Edited: ")
    assert not judged(cli(box, *args, **run))
    extra = src / "stackcheck" / "checks" / "zz_added.py"
    extra.write_text(
        "from stackcheck.checks.registry import check, ok\n\n\n"
        '@check("ZZZ001", "An added check", explain="Added by a test.")\n'
        "def added(ctx):\n    yield ok(observed='here')\n"
    )
    in_the_past(extra)
    done = cli(box, *args, **run)
    assert judged(done)
    assert checks(done)["ZZZ001"]["observed"] == "here"


@pytest.mark.parametrize(
    "junk",
    [
        "{torn",
        '{"stackcheck_cache": 1, "key": "another", "entries": {}}',
        '{"stackcheck_cache": 2, "key": null, "entries": null}',
        "[1, 2, 3]",
    ],
)
def test_a_corrupt_or_foreign_entry_is_judged_again_and_rewritten(box, junk):
    args = ("preflight", "-p", "BASE-CPU", "--json")
    first = cli(box, *args)
    [entry] = entries(box[1])
    entry.write_text(junk)
    again = cli(box, *args)
    assert judged(again) and again.stderr.decode() == loaded(again)
    assert (again.stdout, again.returncode) == (first.stdout, first.returncode)
    assert json.loads(entry.read_text())["entries"]["report"]["profile"] == "BASE-CPU"
    assert not judged(cli(box, *args))


def test_an_entry_of_the_right_key_but_another_shape_is_judged_again(box):
    args = ("preflight", "-p", "BASE-CPU", "--json")
    first = cli(box, *args)
    [entry] = entries(box[1])
    data = json.loads(entry.read_text())
    data["entries"]["report"] = {"checks": "not a list"}
    entry.write_text(json.dumps(data))
    again = cli(box, *args)
    assert judged(again) and again.stdout == first.stdout


def test_an_entry_whose_modules_disagree_with_the_profile(box):
    """The probe looks up what the entry says the profile requires; when that is not what
    the profile says, the environment is probed again for the profile's own modules."""
    args = ("preflight", "-p", "BASE-CPU", "--json")
    first = cli(box, *args)
    [entry] = entries(box[1])
    data = json.loads(entry.read_text())
    data["entries"]["modules"] = ["json"]
    entry.write_text(json.dumps(data))
    again, reference = cli(box, *args), cli(box, *args, STACKCHECK_NO_CACHE="1")
    assert judged(again)
    assert again.stdout == reference.stdout == first.stdout
    assert json.loads(entry.read_text())["entries"]["modules"] != ["json"]


def test_no_cache_writes_nothing(box):
    assert judged(cli(box, "preflight", "-p", "BASE-CPU", "--no-cache"))
    assert judged(cli(box, "doctor", "--no-cache"))
    assert judged(cli(box, "preflight", "-p", "BASE-CPU", STACKCHECK_NO_CACHE="1"))
    assert judged(cli(box, "doctor", "--json", STACKCHECK_NO_CACHE="1"))
    assert not box[1].exists()


def test_a_changed_distribution_of_another_interpreter(box, tmp_path):
    """--python: the probe reads a throwaway venv; a reinstall there is judged again."""
    import venv

    root = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
    site = next(root.glob("lib/python*/site-packages"))
    write_dist(site, "alpha", "1.0", "beta>=2")
    write_dist(site, "beta", "2.0")
    args = ("preflight", "-p", "BASE-CPU", "--json", "--python", str(root / "bin" / "python"))
    first, second = cli(box, *args), cli(box, *args)
    assert judged(first) and not judged(second)
    assert checks(second)["DEP001"]["verdict"] == "ok"
    shutil.rmtree(site / "beta-2.0.dist-info")
    write_dist(site, "beta", "1.5")
    done = cli(box, *args)
    assert judged(done)
    assert checks(done)["DEP001"]["verdict"] == "blocked"
    assert "beta>=2" in checks(done)["DEP001"]["observed"]


def test_inside_python_nothing_is_cached(tmp_path, monkeypatch):
    """click's test runner (or main(argv)) judges every time and keeps no report: checks may
    be patched in memory there, which no file's stat shows."""
    from click.testing import CliRunner

    from stackcheck.cli import startup
    from stackcheck.cli._group import cli as group

    monkeypatch.setattr(startup, "COMMAND_LINE", False)
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    for _ in range(2):
        result = CliRunner().invoke(group, ["preflight", "-p", "BASE-CPU", "--json"])
        assert json.loads(result.output)["profile"] == "BASE-CPU"
    assert list((tmp_path / "cache").glob("facts/depgraph-*.json")), "the other facts are kept"
    assert list((tmp_path / "cache").glob("facts/verdicts-*.json")) == []


def test_a_kept_report_is_redacted_like_the_printed_one(box):
    """Secrets never leave the process: a credential in the profile (here in a requirement's
    URL) is ``<redacted>`` in the cache file as in the output, and a hit prints what a miss printed."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    lab_registry(box[0], f"nosuchpkg @ https://alice:{token}@example.com/nosuchpkg-1.0-py3-none-any.whl")
    args = ("preflight", "-p", "LAB", "--json")
    first, second = cli(box, *args), cli(box, *args)
    assert judged(first) and not judged(second)
    assert second.stdout == first.stdout
    assert token.encode() not in first.stdout
    (kept,) = entries(box[1])
    assert token.encode() not in kept.read_bytes()
    assert b"<redacted>" in kept.read_bytes()
