"""The new environment's probe started during the install (``start_foreign``): what it reports
once told to go equals a probe started afterwards, whatever the install wrote meanwhile; it
never outlives a failed install; and the stackcheck program leaves without the
interpreter's teardown (its atexit handlers and output kept)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from stackcheck.cli import GC_BATCH
from stackcheck.probe import foreign, proc
from stackcheck.probe.foreign import gather_foreign, start_foreign
from tests.provision.conftest import UV, offline


def _venv(path: Path) -> tuple[str, Path]:
    subprocess.run([UV, "venv", "-q", "--python", sys.executable, str(path)], check=True)
    site = next((path / "lib").glob("python*/site-packages"))
    return str(path / "bin" / "python"), site


def _install_by_hand(site: Path, extra: Path) -> None:
    """What an installer may write: a distribution, a .pth path entry (with a distribution
    of its own there) and a .pth that runs code at start-up."""
    (site / "tinymod").mkdir()
    (site / "tinymod" / "__init__.py").write_text("VERSION = '1.0'\n")
    info = site / "tinymod-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tinymod\nVersion: 1.0\n\n")
    (info / "top_level.txt").write_text("tinymod\n")
    (extra / "otherpkg-2.0.dist-info").mkdir(parents=True)
    (extra / "otherpkg-2.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: otherpkg\nVersion: 2.0\n\n"
    )
    (site / "extra.pth").write_text(f"{extra}\n")
    hooked = repr(str(extra / "hooked"))  # once: site may read site-packages twice (lib64 -> lib)
    (site / "hook.pth").write_text(f"import sys; {hooked} in sys.path or sys.path.append({hooked})\n")


@pytest.mark.parametrize("safe_path", [None, "1"])
def test_started_probe_sees_what_was_installed_after_it_started_as_a_new_probe_does(
    tmp_path, monkeypatch, safe_path
):
    if safe_path:
        monkeypatch.setenv("PYTHONSAFEPATH", safe_path)  # no script directory on sys.path either way
    else:
        monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    python, site = _venv(tmp_path / "env")
    modules = ("tinymod", "json", "absentmod")
    started = start_foreign(python, modules)
    _install_by_hand(site, tmp_path / "extra")
    got = started.facts()
    assert got == gather_foreign(python, modules)
    names = {d["name"]: d["version"] for d in got["packages"]["distributions"]}
    assert (names["tinymod"], names["otherpkg"]) == ("1.0", "2.0")
    path = got["python"]["sys_path"]
    assert path[-3:] == [str(site), str(tmp_path / "extra"), str(tmp_path / "extra" / "hooked")]
    assert os.path.dirname(foreign.interpreter.__file__) not in path
    assert [p["path"] for p in got["python"]["pth_files"]] == [
        str(site / n) for n in ("extra.pth", "hook.pth")
    ]
    assert got["python"]["modules"]["tinymod"] == str(site / "tinymod" / "__init__.py")
    assert got["python"]["modules"]["absentmod"] == ""
    assert started.child.proc.returncode == 0


def test_cancelled_probe_is_killed_and_a_dead_interpreter_is_one_line(tmp_path):
    python, _ = _venv(tmp_path / "env")
    started = start_foreign(python)
    started.cancel()
    assert started.child.proc.returncode == -9
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho 'interpreter crashed' >&2\nexit 3\n")
    broken.chmod(0o755)
    with pytest.raises(Exception) as caught:
        start_foreign(str(broken)).facts()
    assert str(caught.value) == f"{broken}: cannot probe this interpreter: interpreter crashed"


def test_proc_start_feeds_stdin_once_and_run_calls_on_start_after_the_spawn():
    child = proc.start(["sh", "-c", "read line; echo got $line; echo err >&2"])
    assert isinstance(child, proc.Started)
    done = child.finish(b"go\n", 10.0)
    assert (done.returncode, done.stdout, done.stderr, done.error) == (0, "got go\n", "err\n", None)
    assert proc.start(["/no/such/program"]) == proc.Completed(None, "", "", "not found: /no/such/program")
    seen: list[int] = []
    done = proc.run(["sh", "-c", "echo ran"], on_start=lambda: seen.append(len(seen)))
    assert (seen, done.stdout) == ([0], "ran\n")


def _recording(monkeypatch) -> list:
    started: list = []
    real = foreign.start_foreign

    def record(*args, **kwargs):
        started.append(real(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(foreign, "start_foreign", record)
    return started


def test_create_verifies_with_the_probe_it_started_and_keeps_the_gc_of_a_caller(
    cli_main, registry, wheelhouse, tmp_path, monkeypatch
):
    import gc

    started = _recording(monkeypatch)
    monkeypatch.setattr(foreign, "gather_foreign", lambda *a, **k: pytest.fail("probed a second time"))
    target = tmp_path / "e"
    code, out, err = cli_main(
        "env", "create", "--registry", registry, "-p", "TINY-CPU", "--path", str(target),
        "--installer", "uv", *offline(wheelhouse), "--json",
    )  # fmt: skip
    assert code == 0, err
    assert (json.loads(out)["packages"], json.loads(out)["verdict"]) == (3, "ok")
    assert [s.child.proc.returncode for s in started] == [0]
    assert gc.isenabled()  # only the stackcheck program itself turns it off


def test_failed_install_kills_the_started_probe_and_leaves_nothing(
    cli_main, tiny_lock, tmp_path, monkeypatch
):
    from stackcheck.provision.lock import load_lock

    lock = load_lock(str(tiny_lock))
    lock.packages[0].hashes = ["0" * 64]
    tiny_lock.write_bytes(lock.sealed().encode())
    started = _recording(monkeypatch)
    code, _, err = cli_main("env", "restore", str(tiny_lock), "--path", str(tmp_path / "r"))
    assert code == 1 and err.startswith("stackcheck: refused: installing 3 packages failed ("), err
    assert [s.child.proc.returncode for s in started] == [-9]
    assert not (tmp_path / "r").exists()


_PROGRAM = """\
import atexit, gc, os, sys

class Teardown:
    def __del__(self, write=os.write):
        write(2, b"teardown\\n")

keep = Teardown()
atexit.register(lambda: print("atexit ran, gc:", gc.isenabled(), gc.get_threshold()[0], file=sys.stderr))
sys.argv = ["stackcheck", *sys.argv[1:]]
from stackcheck.cli import main
main()
"""


def test_the_stackcheck_program_leaves_without_teardown_after_its_output(
    cli_main, registry, wheelhouse, tmp_path
):
    def create(target):
        return ["env", "create", "--registry", registry, "-p", "TINY-CPU", "--path", str(target),
                "--installer", "uv", *offline(wheelhouse)]  # fmt: skip

    target = tmp_path / "e"
    done = subprocess.run([sys.executable, "-c", _PROGRAM, *create(target)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    batched = f"atexit ran, gc: True {GC_BATCH}\n"  # cli.short_lived: collections in batches
    assert done.stderr.endswith(batched)  # and no "teardown" after it
    code, out, err = cli_main(*create(tmp_path / "same"))  # in this process: the usual exit
    assert (code, err) == (0, done.stderr.replace(batched, ""))
    assert out.replace(str(tmp_path / "same"), str(target)) == done.stdout  # every line written
    assert f"created {target} (3 packages)\n" in done.stdout
    lock = str(target / "stackcheck" / "lock.json")
    other = subprocess.run(
        [sys.executable, "-c", _PROGRAM, "env", "diff", lock, "--python", str(target / "bin" / "python")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert (other.returncode, other.stderr) == (
        0,
        f"atexit ran, gc: True {gc.get_threshold()[0]}\nteardown\n",
    )


def test_only_the_lock_is_fsynced_and_it_is_written_while_the_installer_runs(
    cli_main, registry, wheelhouse, tmp_path, monkeypatch
):
    synced: list[tuple[str, str]] = []
    real = os.fsync

    def fsync(fd):
        synced.append((threading.current_thread().name, os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    target = tmp_path / "e"
    code, _, err = cli_main(
        "env", "create", "--registry", registry, "-p", "TINY-CPU", "--path", str(target),
        "--installer", "uv", *offline(wheelhouse),
    )  # fmt: skip
    assert code == 0, err
    assert [(thread, name.split(".")[1:3]) for thread, name in synced] == [
        ("stackcheck-preload", ["lock", "json"])
    ]
    files = target / "stackcheck"
    assert (files / "requirements.lock.txt").read_text().startswith("jinja2==3.1.6 --hash=sha256:")
    assert sorted(p.name for p in files.iterdir()) == [
        "constraints.txt", "lock.json", "requirements.in", "requirements.lock.txt",
    ]  # fmt: skip


def test_lock_that_cannot_be_written_is_one_line_and_leaves_nothing(
    cli_main, registry, wheelhouse, tmp_path, monkeypatch
):
    import errno

    from stackcheck import fileio

    real = fileio.atomic_write

    def full(path, data, **kwargs):
        if os.path.basename(path) == "lock.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, data, **kwargs)

    monkeypatch.setattr(fileio, "atomic_write", full)
    started = _recording(monkeypatch)
    target = tmp_path / "e"
    code, out, err = cli_main(
        "env", "create", "--registry", registry, "-p", "TINY-CPU", "--path", str(target),
        "--installer", "uv", *offline(wheelhouse),
    )  # fmt: skip
    assert (code, out) == (2, "")
    assert err.endswith(
        f"stackcheck: error: {target}/stackcheck/lock.json: cannot write lock: No space left on device\n"
    )
    assert [s.child.proc.returncode for s in started] == [-9]
    assert not target.exists()


def test_atomic_write_without_fsync_is_still_never_a_partial_file(tmp_path, monkeypatch):
    from stackcheck.fileio import atomic_write

    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    atomic_write(tmp_path / "a.txt", "one\n", durable=False)
    assert synced == []
    atomic_write(tmp_path / "a.txt", "two\n")
    assert len(synced) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"] and (tmp_path / "a.txt").read_text() == "two\n"


def test_sections_collected_beside_the_started_probe_never_read_its_facts():
    import importlib

    from stackcheck.probe import JUDGED, NO_CONTEXT, SECTIONS

    class Unread:
        def __getattr__(self, name):
            raise AssertionError(f"ctx.{name} was read")

    assert set(JUDGED) > NO_CONTEXT
    for name in sorted(NO_CONTEXT):
        importlib.import_module(f"stackcheck.probe.{SECTIONS[name]}").collect(Unread())


def test_snapshot_with_a_started_probe_equals_the_snapshot_of_a_probe_after_the_install(tmp_path):
    import msgspec

    from stackcheck.probe import JUDGED, gather

    python, site = _venv(tmp_path / "env")
    started = start_foreign(python, ("tinymod",))
    _install_by_hand(site, tmp_path / "extra")
    started.go()
    got = gather(python, sections=JUDGED, modules=("tinymod",), interpreter_facts=started.facts)
    want = gather(python, sections=JUDGED, modules=("tinymod",))
    got.tool.captured_at = want.tool.captured_at
    assert msgspec.json.encode(got) == msgspec.json.encode(want)
    assert got.python.modules == {"tinymod": str(site / "tinymod" / "__init__.py")}


def test_cancel_after_the_answer_signals_nothing(tmp_path, monkeypatch):
    python, _ = _venv(tmp_path / "env")
    started = start_foreign(python)
    facts = started.facts()
    assert facts["python"]["executable"] == python
    monkeypatch.setattr(proc, "_kill_group", lambda p: pytest.fail("signalled a process that was waited for"))
    started.cancel()
    assert started.child.proc.returncode == 0
