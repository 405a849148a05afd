"""Stored answers (``startup.stored_answer``, ``cli/answers.py``): ``deps conflicts`` and ``deps
tree`` are written back from what the last run printed while nothing they depend on changed,
and every change to what they depend on is a miss. Through the real CLI (``python -m
stackcheck`` of a throwaway venv that sees stackcheck through a ``.pth`` file), each stale case
starts from a *poisoned* stored answer: it is served while the key holds (so a hit really comes
from the file), and after the change the run must print what a run without any cache prints."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
import venv
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import packaging
import pytest

import stackcheck
from stackcheck.cli import answers, startup
from tests.factcache.test_no_stale_verdict import rewrite_by_rename, rewrite_in_place, write_dist

CONFLICTS, CONFLICTS_JSON = ("deps", "conflicts"), ("deps", "conflicts", "--json")
TREE, TREE_JSON = ("deps", "tree"), ("deps", "tree", "--json")
POISON = b"poisoned: served from the stored answer\n"
SETTLE_S = answers.RACY_NS / 1e9 + 0.02  # files written before a recording run must be older


@dataclass
class Live:
    """A venv holding alpha 1.0 (requires beta>=2) and beta 2.0, whose own interpreter runs
    stackcheck (the live probe: the path stored answers are taken on)."""

    root: Path
    python: Path
    site: Path
    lib: Path
    cache: Path
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)

    def run(self, *args: str, extra: dict[str, str] | None = None, flags=()) -> subprocess.CompletedProcess:
        argv = [str(self.python), *flags, "-m", "stackcheck", *args]
        env = {**self.env, **(extra or {})}
        return subprocess.run(argv, env=env, cwd=self.cwd, capture_output=True, timeout=120)

    def fresh(self, *args: str, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """What the command prints with every cache off: the reference."""
        return self.run(*args, extra={**(extra or {}), "STACKCHECK_NO_CACHE": "1"})

    def stored(self, args) -> Path:
        name = ".".join(a.lstrip("-") for a in args)
        [path] = [p for p in (self.cache / "answers").glob(name + ".*") if len(p.name) == len(name) + 9]
        return path  # NAME.<8 hex digits of the interpreter>


def _link(lib: Path, module) -> None:
    (lib / module.__name__).symlink_to(Path(module.__file__).parent)


@pytest.fixture
def live(tmp_path) -> Live:
    root = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
    site = next(root.glob("lib/python*/site-packages"))
    lib = tmp_path / "lib"  # stackcheck and what it imports, and no metadata directory
    lib.mkdir()
    for module in (stackcheck, msgspec, packaging):
        _link(lib, module)
    (site / "zz-stackcheck.pth").write_text(f"{lib}\n")
    write_dist(site, "alpha", "1.0", "beta>=2")
    write_dist(site, "beta", "2.0")
    cwd = tmp_path / "work"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "STACKCHECK_"))}
    env.pop("COLUMNS", None), env.pop("NO_COLOR", None), env.pop("FORCE_COLOR", None)
    env["STACKCHECK_CACHE_DIR"] = str(tmp_path / "cache")
    return Live(root, root / "bin" / "python", site, lib, tmp_path / "cache", cwd, env)


def outcome(done: subprocess.CompletedProcess) -> tuple[int, bytes, bytes]:
    return done.returncode, done.stdout, done.stderr


def poison(path: Path, code: int = 0) -> None:
    """The stored answer at ``path`` with its body replaced, its key and code block kept."""
    magic, key, size, rest = path.read_bytes().split(b"\n", 3)
    path.write_bytes(b"\n".join((magic, key, size, rest[: int(size)] + b"%d\n" % code + POISON)))


def warm(live: Live, args=CONFLICTS_JSON, extra=None) -> None:
    """Record the answer of ``args`` and poison it: while the key holds, the poison is served."""
    time.sleep(SETTLE_S)
    first = live.run(*args, extra=extra)
    assert outcome(first) == outcome(live.fresh(*args, extra=extra))
    poison(live.stored(args))
    assert outcome(live.run(*args, extra=extra)) == (0, POISON, b"")


def conflicts(done: subprocess.CompletedProcess) -> list[str]:
    assert done.stderr == b"" and done.returncode in (0, 1), done.stderr
    return [c["message"] for c in json.loads(done.stdout)["conflicts"]]


def test_a_stored_answer_is_the_commands_own_output_and_is_served_from_the_file(live):
    time.sleep(SETTLE_S)
    for args in (CONFLICTS, CONFLICTS_JSON, TREE, TREE_JSON):
        reference = outcome(live.fresh(*args))
        assert outcome(live.run(*args)) == reference  # a miss: run and recorded
        assert outcome(live.run(*args)) == reference  # a hit
        path = live.stored(args)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert outcome(live.run(*TREE)) == (0, b"alpha 1.0\n  - beta [required: >=2, installed: 2.0]\n", b"")
    assert sorted(p.name.rsplit(".", 1)[0] for p in (live.cache / "answers").iterdir()) == [
        "deps.conflicts",
        "deps.conflicts.json",
        "deps.tree",
        "deps.tree.json",
    ]
    poison(live.stored(TREE), code=1)
    assert outcome(live.run(*TREE)) == (1, POISON, b"")  # the stored exit code too
    # a hit imports neither the probe nor msgspec
    hit = live.run(*TREE, flags=("-X", "importtime"))
    assert hit.returncode == 1 and hit.stdout == POISON
    imported = {line.rsplit("|", 1)[-1].strip() for line in hit.stderr.decode().splitlines()}
    assert "stackcheck.cli.answers" in imported
    assert not {"msgspec", "stackcheck.probe", "stackcheck.deps", "hashlib", "json"} & imported


def _reinstall(live: Live):
    shutil.rmtree(live.site / "beta-2.0.dist-info")
    write_dist(live.site, "beta", "1.5")
    return ["alpha 1.0 has requirement beta>=2, but you have beta 1.5."]


def _rename_rewrite_with_size_and_mtimes_put_back(live: Live):
    rewrite_by_rename(live.site / "alpha-1.0.dist-info", "beta>=2", "beta>=3")
    return ["alpha 1.0 has requirement beta>=3, but you have beta 2.0."]


def _in_place_rewrite(live: Live):
    rewrite_in_place(live.site / "alpha-1.0.dist-info" / "METADATA", "beta>=2", "beta>=4")
    return ["alpha 1.0 has requirement beta>=4, but you have beta 2.0."]


def _in_place_rewrite_with_the_mtime_put_back(live: Live):
    meta = live.site / "alpha-1.0.dist-info" / "METADATA"
    st = meta.stat()
    rewrite_in_place(meta, "beta>=2", "beta>=6")
    os.utime(meta, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (meta.stat().st_ino, meta.stat().st_mtime_ns) == (st.st_ino, st.st_mtime_ns)
    return ["alpha 1.0 has requirement beta>=6, but you have beta 2.0."]


def _removal(live: Live):
    shutil.rmtree(live.site / "beta-2.0.dist-info")
    return ["alpha 1.0 requires beta, which is not installed."]


def _addition(live: Live):
    write_dist(live.site, "gamma", "0.1", "delta")
    return ["gamma 0.1 requires delta, which is not installed."]


def _editable_pth_added(live: Live):
    checkout = live.root.parent / "checkout"
    write_dist(live.site, "gamma", "0.2", "alpha<1", where=checkout)
    (live.site / "__editable__.gamma-0.2.pth").write_text(f"{checkout}\n")
    return ["gamma 0.2 has requirement alpha<1, but you have alpha 1.0."]


def _editable_pth_changed(live: Live):
    one, two = live.root.parent / "one", live.root.parent / "two"
    write_dist(live.site, "gamma", "0.3", where=one)
    write_dist(live.site, "gamma", "0.4", "zeta", where=two)
    pth = live.site / "__editable__.gamma.pth"
    pth.write_text(f"{one}\n")
    assert conflicts(live.run(*CONFLICTS_JSON)) == []
    warm(live)
    pth.write_text(f"{two}\n")
    return ["gamma 0.4 requires zeta, which is not installed."]


def _direct_url_rewritten_in_place(live: Live):
    d = live.site / "beta-2.0.dist-info"
    (d / "direct_url.json").write_text('{"url": "file:///src/aaa"}')
    warm(live)
    dst = d.stat()
    rewrite_in_place(d / "direct_url.json", "aaa", "bbb")
    os.utime(d, ns=(dst.st_atime_ns, dst.st_mtime_ns))
    return []  # not part of what deps prints, but of what the probe reads: a miss all the same


@pytest.mark.parametrize(
    "change",
    [
        _reinstall,
        _rename_rewrite_with_size_and_mtimes_put_back,
        _in_place_rewrite,
        _in_place_rewrite_with_the_mtime_put_back,
        _removal,
        _addition,
        _editable_pth_added,
        _editable_pth_changed,
        _direct_url_rewritten_in_place,
    ],
    ids=lambda f: f.__name__.strip("_"),
)
def test_a_change_to_the_distributions_is_never_served_the_stored_answer(live, change):
    warm(live)
    expected = change(live)
    done = live.run(*CONFLICTS_JSON)
    assert outcome(done) == outcome(live.fresh(*CONFLICTS_JSON))
    assert conflicts(done) == expected
    time.sleep(SETTLE_S)
    assert outcome(live.run(*CONFLICTS_JSON)) == outcome(done), "recorded again, and served"
    assert outcome(live.run(*CONFLICTS_JSON)) == outcome(done)


@pytest.mark.parametrize(
    "extra",
    [
        {"COLUMNS": "50"},
        {"NO_COLOR": "1"},
        {"FORCE_COLOR": "1"},
        {"LANG": "C"},
        {"PYTHONIOENCODING": "latin-1"},
        {"STACKCHECK_NO_CACHE": "1"},
    ],
    ids=lambda e: "-".join(e),
)
def test_another_output_setting_is_a_miss(live, extra):
    warm(live, CONFLICTS)
    assert outcome(live.run(*CONFLICTS, extra=extra)) == outcome(live.fresh(*CONFLICTS, extra=extra))
    assert live.run(*CONFLICTS, extra=extra).stdout == b"No broken requirements found (2 distributions).\n"


def test_other_arguments_json_or_text_and_no_cache_are_each_their_own(live):
    warm(live, CONFLICTS)
    json_out = live.run(*CONFLICTS_JSON)
    assert outcome(json_out) == outcome(live.fresh(*CONFLICTS_JSON)) and json_out.stdout.startswith(b"{")
    for args in (("deps", "conflicts", "--no-cache"), ("deps", "conflicts", "--no-extras"), TREE):
        assert outcome(live.run(*args)) == outcome(live.fresh(*args)) and POISON not in live.run(*args).stdout
    assert outcome(live.run(*CONFLICTS)) == (0, POISON, b""), "the text answer is still stored"


def test_pythonpath_is_a_miss(live, tmp_path):
    warm(live)
    extra_dir = tmp_path / "extra"
    write_dist(live.site, "omega", "1.0", "beta<2", where=extra_dir)
    expected = ["omega 1.0 has requirement beta<2, but you have beta 2.0."]
    # stackcheck not on PYTHONPATH: it shields itself (-E) and probes the interpreter as it
    # runs, in a child: no stored answer is read or written
    shielded = live.run(*CONFLICTS_JSON, extra={"PYTHONPATH": str(extra_dir)})
    assert conflicts(shielded) == expected
    assert outcome(shielded) == outcome(live.fresh(*CONFLICTS_JSON, extra={"PYTHONPATH": str(extra_dir)}))
    assert outcome(live.run(*CONFLICTS_JSON)) == (0, POISON, b""), "untouched by the shielded run"
    # stackcheck on PYTHONPATH too: no shield, another sys.path
    both = {"PYTHONPATH": f"{extra_dir}{os.pathsep}{live.lib}"}
    assert conflicts(live.run(*CONFLICTS_JSON, extra=both)) == expected
    assert outcome(live.run(*CONFLICTS_JSON, extra=both)) == outcome(live.fresh(*CONFLICTS_JSON, extra=both))


def test_edited_code_is_a_miss(live):
    """A copy of stackcheck whose deps_report words its verdict otherwise: the stored answer
    names the stat of every module the recording run loaded."""
    (live.lib / "stackcheck").unlink()
    shutil.copytree(
        Path(stackcheck.__file__).parent,
        live.lib / "stackcheck",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    warm(live, CONFLICTS)
    report = live.lib / "stackcheck" / "cli" / "deps_report.py"
    report.write_text(report.read_text().replace("No broken requirements found", "Nothing broken"))
    assert live.run(*CONFLICTS).stdout == b"Nothing broken (2 distributions).\n"


def test_an_upgraded_packaging_is_a_miss_though_a_warm_run_never_imports_it(live):
    """packaging words the conflicts the graph keeps; its __init__ is stat'ed, not imported.
    The answer is recorded by a run on a warm graph (deps tree derived it), which never
    imports packaging."""
    (live.lib / "packaging").unlink()
    shutil.copytree(
        Path(packaging.__file__).parent, live.lib / "packaging", ignore=shutil.ignore_patterns("__pycache__")
    )
    time.sleep(SETTLE_S)
    assert live.run(*TREE).returncode == 0  # derives and stores the graph
    warm(live)
    init = live.lib / "packaging" / "__init__.py"
    init.write_text(init.read_text() + "\n# upgraded\n")
    assert outcome(live.run(*CONFLICTS_JSON)) == outcome(live.fresh(*CONFLICTS_JSON))
    assert live.run(*CONFLICTS_JSON).stdout != POISON


@pytest.mark.parametrize("damage", ["torn", "garbage", "empty", "other-key", "symlink", "fifo", "directory"])
def test_a_damaged_stored_answer_is_a_miss_and_is_rewritten(live, tmp_path, damage):
    warm(live)
    path = live.stored(CONFLICTS_JSON)
    data = path.read_bytes()
    path.unlink()
    if damage == "torn":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(os.urandom(4096))
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "other-key":
        path.write_bytes(data.replace(b"\n", b"\nX", 1))
    elif damage == "symlink":  # a well-formed poisoned answer, planted elsewhere
        (tmp_path / "planted").write_bytes(data)
        path.symlink_to(tmp_path / "planted")
    elif damage == "fifo":
        os.mkfifo(path)  # never read: a read would block the command
    else:
        path.mkdir()
    done = live.run(*CONFLICTS_JSON)
    assert outcome(done) == outcome(live.fresh(*CONFLICTS_JSON)) and conflicts(done) == []
    if damage != "directory":
        assert path.is_file() and not path.is_symlink() and path.read_bytes() != data, "rewritten"


def test_read_page_refuses_what_the_fact_cache_refuses(tmp_path, monkeypatch):
    """The reader of stored answers and help pages: a file over the limit, or another user's,
    is not read."""
    page = tmp_path / "page"
    code = os.fsencode(__file__) + b"\0" + startup._stat(__file__)
    page.write_bytes(b"\n".join((startup.MAGIC, b"k", b"%d" % len(code), code + b"body")))
    assert startup.read_page(str(page), "k") == b"body"
    assert startup.read_page(str(page), "k", limit=10) is None
    monkeypatch.setattr(os, "geteuid", lambda: page.stat().st_uid + 1)
    assert startup.read_page(str(page), "k") is None


@pytest.fixture
def site(tmp_path, monkeypatch) -> Path:
    """In-process: ``sys.path`` is one directory holding alpha 1.0; a cache directory of its own."""
    site = tmp_path / "site"
    write_dist(site, "alpha", "1.0")
    monkeypatch.setattr(sys, "path", [str(site)])
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("STACKCHECK_NO_CACHE", raising=False)
    return site


def test_a_change_while_the_command_runs_is_not_recorded(site, tmp_path, capsysbinary):
    """The fingerprint is taken again after the run: a distribution installed meanwhile means
    the printed answer may be of either state, and none is kept."""
    time.sleep(SETTLE_S)

    def installing() -> int:
        write_dist(site, "beta", "1.0")
        sys.stdout.write("answer\n")
        return 0

    assert startup.stored_answer(list(CONFLICTS), installing)() == 0
    assert capsysbinary.readouterr().out == b"answer\n"  # passed through
    assert not (tmp_path / "cache" / "answers").exists()
    time.sleep(SETTLE_S)
    assert startup.stored_answer(list(CONFLICTS), lambda: 0 if sys.stdout.write("still\n") else 1)() == 0
    assert [p.name.split(".")[:2] for p in (tmp_path / "cache" / "answers").iterdir()] == [
        ["deps", "conflicts"]
    ]


def test_an_answer_is_not_recorded_right_after_a_change(site, tmp_path, monkeypatch):
    """Within the racy window of a file's ctime the run is not recorded; after it, it is (the
    clock is set, not waited for)."""
    meta = site / "alpha-1.0.dist-info" / "METADATA"
    changed = meta.stat().st_ctime_ns
    monkeypatch.setattr(time, "time_ns", lambda: changed + answers.RACY_NS // 2)
    assert startup.stored_answer(list(CONFLICTS), lambda: 0)() == 0
    assert not (tmp_path / "cache" / "answers").exists()
    monkeypatch.setattr(time, "time_ns", lambda: changed + answers.COARSE_RACY_NS + 1)
    assert startup.stored_answer(list(CONFLICTS), lambda: 0)() == 0
    assert len(list((tmp_path / "cache" / "answers").iterdir())) == 1


def test_a_file_changed_just_before_the_run_is_racy(tmp_path, monkeypatch):
    site = tmp_path / "site"
    meta = write_dist(site, "alpha", "1.0") / "METADATA"
    monkeypatch.setattr(sys, "path", [str(site)])
    stamp, newest = answers.environment_stamp()
    assert newest == max(os.stat(p).st_ctime_ns for p in (site, meta.parent, meta))
    fine = 5 * 10**9 + 123_456  # a file system keeping nanoseconds
    assert answers.racy(fine, fine + answers.RACY_NS // 2)
    assert not answers.racy(fine, fine + answers.RACY_NS + 1)
    whole = 5 * 10**9  # a file system keeping whole seconds: a wider window
    assert answers.racy(whole, whole + answers.RACY_NS * 2)
    assert not answers.racy(whole, whole + answers.COARSE_RACY_NS + 1)
    assert (
        (f"{site}\0d" in stamp) and "alpha-1.0.dist-info\0d " in stamp and "- 2" in stamp
    )  # no direct_url.json


def test_another_kernel_release_is_a_miss(site, monkeypatch, capsysbinary):
    """platform_release is a marker variable: the same interpreter on an upgraded kernel
    answers afresh (the stored answer is served, and exits, only under the same release)."""
    from types import SimpleNamespace

    time.sleep(SETTLE_S)
    assert startup.stored_answer(list(CONFLICTS), lambda: 0 if sys.stdout.write("kept\n") else 1)() == 0
    with pytest.raises(SystemExit) as hit:
        startup.stored_answer(list(CONFLICTS), lambda: 2)
    assert hit.value.code == 0 and capsysbinary.readouterr().out == b"kept\nkept\n"
    real = os.uname()
    facts = {k: getattr(real, k) for k in ("sysname", "nodename", "release", "version", "machine")}
    monkeypatch.setattr(os, "uname", lambda: SimpleNamespace(**{**facts, "release": real.release + "-next"}))
    assert startup.stored_answer(list(CONFLICTS), lambda: 2)() == 2  # a miss: the command ran


def test_the_marker_environment_is_part_of_the_key(monkeypatch):
    from types import SimpleNamespace

    real = os.uname()
    facts = {k: getattr(real, k) for k in ("sysname", "nodename", "release", "version", "machine")}
    before = answers.settings()
    for name, value in (("release", real.release + "-other"), ("machine", "riscv64"), ("sysname", "Darwin")):
        monkeypatch.setattr(
            os, "uname", lambda name=name, value=value: SimpleNamespace(**{**facts, name: value})
        )
        assert answers.settings() != before, name
    monkeypatch.setattr(os, "uname", lambda: SimpleNamespace(**{**facts, "nodename": "elsewhere"}))
    assert answers.settings() == before  # the host name is not a marker variable
