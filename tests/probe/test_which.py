"""probe.files.which answers what shutil.which answers (the probe sections use it so that the
snapshot fast path need not import shutil)."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from stackcheck.probe.files import which

pytestmark = pytest.mark.skipif(os.name == "nt", reason="Windows delegates to shutil.which")


def _tree(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for d in (a, b, c):
        d.mkdir()
    (a / "tool").write_text("#!/bin/sh\n")  # not executable: skipped
    (b / "tool").write_text("#!/bin/sh\n")
    (b / "tool").chmod(0o755)
    (c / "tool").write_text("#!/bin/sh\n")
    (c / "tool").chmod(0o755)
    (a / "dironly").mkdir()  # a directory, even an executable one, is no command
    (b / "script").write_text("x")
    (b / "script").chmod(0o755)
    return a, b, c


def test_which_matches_shutil_on_every_case(tmp_path, monkeypatch):
    a, b, c = _tree(tmp_path)
    searches = [
        os.pathsep.join([str(a), str(b), str(c)]),
        os.pathsep.join([str(a), str(a), str(c)]),
        os.pathsep.join([str(c), str(b)]),
        str(a),
        "",
        os.pathsep,
    ]
    names = ["tool", "dironly", "script", "missing", str(b / "tool"), str(a / "tool"), str(a / "dironly")]
    answers = []
    for search in searches:
        for name in names:
            mine = which(name, path=search)
            assert mine == shutil.which(name, path=search), (name, search)
            answers.append(mine)
        monkeypatch.setenv("PATH", search)
        for name in names:
            assert which(name) == shutil.which(name), (name, search)
    assert answers[:4] == [str(b / "tool"), None, str(b / "script"), None]
    assert which("tool", path=os.pathsep.join([str(c), str(b)])) == str(c / "tool")


def test_which_without_path_variable_uses_the_system_default(monkeypatch):
    monkeypatch.delenv("PATH", raising=False)
    exe = os.path.basename(sys.executable)
    assert which(exe) == shutil.which(exe)
    default = os.confstr("CS_PATH").split(os.pathsep)
    expected = next(os.path.join(d, "sh") for d in default if os.access(os.path.join(d, "sh"), os.X_OK))
    assert which("sh") == shutil.which("sh") == expected
