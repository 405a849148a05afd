"""The packaged knowledge base and the built-in catalog are read without pathlib (issue 13:
pathlib, with urllib.parse and ipaddress, was ≈ 2.5 ms of a cold preflight): what is read,
and every message about it, is what the ``Path`` way reads and says."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck import knowledge
from stackcheck.catalog import load_catalog
from stackcheck.catalog.paths import builtin_files
from stackcheck.catalog.registry import builtin_entries, builtin_label
from stackcheck.errors import InputError
from stackcheck.knowledge import paths
from stackcheck.knowledge.loader import DATA_DIR, load_from, load_rules

MODULES = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write(repr(sorted(m for m in sys.modules if m in "
    "('pathlib', 'urllib.parse', 'ipaddress', 'pkgutil', 'importlib.util')))))\n"
    "sys.argv = ['stackcheck', *sys.argv[1:]]\n"
    "from stackcheck.cli import main\n"
    "main()\n"
)


@pytest.mark.parametrize("args", [["preflight", "-p", "TRAIN-CPU"], ["doctor", "--json"]])
def test_a_cold_run_imports_no_pathlib(tmp_path, args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKCHECK_") and k != "PYTHONPATH"}
    env["STACKCHECK_NO_CACHE"] = "1"
    done = subprocess.run([sys.executable, "-c", MODULES, *args], env=env, capture_output=True, cwd=tmp_path)
    assert done.returncode in (0, 1) and done.stdout
    assert done.stderr == b"[]"


def test_the_packaged_data_is_keyed_and_read_as_its_path_writes_it(monkeypatch):
    monkeypatch.delenv("STACKCHECK_KNOWLEDGE_DIR", raising=False)
    monkeypatch.delenv(paths.RULES_ENV, raising=False)
    monkeypatch.chdir("/")
    assert paths.DATA_DIR_NAME == str(DATA_DIR) == str(Path(paths.DATA_DIR_NAME))
    assert knowledge.knowledge_key() == (paths.DATA_DIR_NAME, ())
    assert knowledge.knowledge_key(DATA_DIR, []) == knowledge.knowledge_key(paths.DATA_DIR_NAME, ())
    assert knowledge.load_knowledge() is knowledge.load_knowledge(DATA_DIR, [])  # one cache entry
    by_str, by_path = load_from(paths.DATA_DIR_NAME), load_from(DATA_DIR)
    assert by_str.files == by_path.files and by_str.rules == by_path.rules
    assert [by_str.drivers, by_str.torch, by_str.archs, by_str.pins] == [
        by_path.drivers,
        by_path.torch,
        by_path.archs,
        by_path.pins,
    ]
    assert load_rules(DATA_DIR / "rules") == load_rules(os.path.join(paths.DATA_DIR_NAME, "rules"))


def test_other_data_or_extra_rules_keep_their_path_key(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(paths.RULES_ENV, raising=False)
    monkeypatch.setenv("STACKCHECK_KNOWLEDGE_DIR", str(tmp_path / "kb/"))
    assert knowledge.knowledge_key() == (tmp_path / "kb", ())
    monkeypatch.delenv("STACKCHECK_KNOWLEDGE_DIR")
    rules = tmp_path / "mined.json"
    rules.write_text("{}")
    directory, ((rule_file, _, size),) = knowledge.knowledge_key(None, [str(rules)])
    assert (directory, rule_file, size) == (DATA_DIR, rules, 2)


@pytest.mark.parametrize("broken", ["cuda_drivers.json", "rules"])
def test_a_broken_copy_says_the_same_read_either_way(tmp_path, broken):
    copy = tmp_path / "kb"
    shutil.copytree(DATA_DIR, copy)
    if broken == "rules":
        first = sorted((copy / "rules").glob("*.json"))[0]
        first.write_text('{"schema_version": "1.0", "rules": [{"id": "KB999"}]}')
    else:
        (copy / broken).write_text('{"schema_version": "9.0"}')
    said = []
    for directory in (copy, str(copy)):
        with pytest.raises(InputError) as exc:
            load_from(directory)
        said.append(str(exc.value))
    assert said[0] == said[1] and said[0].startswith(str(copy / broken))


def test_the_builtin_catalog_is_labelled_alike():
    assert [builtin_label(p) for p in builtin_files()] == [builtin_label(str(p)) for p in builtin_files()]
    entries = builtin_entries()
    assert {e.file for e in entries.values()} == {builtin_label(p) for p in builtin_files()}
    assert load_catalog().source == "built-in" and "TRAIN-CPU" in load_catalog().ids()
