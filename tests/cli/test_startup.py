"""The start-up path (stackcheck.cli.startup): ``--version`` and cached ``--help`` pages are
answered without click, byte for byte what click writes, for every command, every width and
colour setting; a changed key or changed code is a miss; errors still go through click.

Every run is a real process (the console script or ``python -m stackcheck``): the fast path
is taken only there. The reference is click's own output, taken with the cache turned off
(``STACKCHECK_NO_CACHE=1``: the unchanged click path)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.cli import COMMANDS
from tests.factories import drain_pty

STACKCHECK = str(Path(sys.executable).with_name("stackcheck"))
_CLEARED = ("COLUMNS", "NO_COLOR", "FORCE_COLOR", "STACKCHECK_NO_CACHE", "_STACKCHECK_COMPLETE", "PYTHONPATH")


def _env(cache: Path | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    if cache is None:
        env["STACKCHECK_NO_CACHE"] = "1"
    else:
        env["STACKCHECK_CACHE_DIR"] = str(cache)
    env.update(extra or {})
    return env


def run(args, cache: Path | None, extra=None, *, module: bool = False) -> subprocess.CompletedProcess:
    """``stackcheck ARGS`` as a process: (exit code, stdout bytes, stderr bytes)."""
    argv = [sys.executable, "-m", "stackcheck", *args] if module else [STACKCHECK, *args]
    return subprocess.run(argv, env=_env(cache, extra), capture_output=True, timeout=120)


def pages(cache: Path) -> list[str]:
    return sorted(p.name.split(".")[0] + "." + p.name.split(".")[1] for p in (cache / "help").glob("*.*.*"))


def on_pty(args, cache: Path | None, extra=None, columns: int = 120, *, argv=None, code=0) -> bytes:
    """What ``stackcheck ARGS`` (or ``argv``) writes to a terminal ``columns`` wide (stdout on a pty)."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    argv = argv or [STACKCHECK, *args]
    proc = subprocess.Popen(argv, env=_env(cache, extra), stdout=slave, stderr=subprocess.PIPE, cwd=cache)
    os.close(slave)
    out = drain_pty(master)
    os.close(master)
    assert proc.wait(timeout=120) == code, proc.stderr.read() if proc.stderr else b""
    if proc.stderr:
        proc.stderr.close()
    return out


@pytest.mark.parametrize("command", [None, *sorted(COMMANDS)])
def test_every_help_page_is_clicks_own_on_a_miss_and_on_a_hit(tmp_path, command):
    args = ["--help"] if command is None else [command, "--help"]
    reference = run(args, None)
    assert reference.returncode == 0 and reference.stdout.startswith(b"Usage: stackcheck")
    first = run(args, tmp_path)  # click writes it, the cache keeps it
    assert pages(tmp_path) == [f"{command or 'top'}.help"]
    second = run(args, tmp_path)  # served from the cache
    assert (first.returncode, first.stdout, first.stderr) == (0, reference.stdout, b"")
    assert (second.returncode, second.stdout, second.stderr) == (0, reference.stdout, b"")


def test_a_hit_is_served_from_the_cache_and_changed_code_is_a_miss(tmp_path):
    reference = run(["--help"], None).stdout
    run(["--help"], tmp_path)
    (page,) = (tmp_path / "help").iterdir()
    magic, key, size, rest = page.read_bytes().split(b"\n", 3)
    code = rest[: int(size)]
    page.write_bytes(b"\n".join((magic, key, size)) + b"\n" + code + b"from the cache\n")
    assert run(["--help"], tmp_path).stdout == b"from the cache\n"

    # a module file recorded with another mtime (an edited or reinstalled stackcheck or click)
    fields = code.split(b"\0")
    assert any(f.endswith(b"/click/core.py") for f in fields[::2])
    assert any(f.endswith(b"/stackcheck/cli/_group.py") for f in fields[::2])
    mtime, rest_of_stat = fields[1].split(b" ", 1)
    fields[1] = b"%d %s" % (int(mtime) + 1, rest_of_stat)
    stale = b"\0".join(fields)
    page.write_bytes(b"\n".join((magic, key, b"%d" % len(stale))) + b"\n" + stale + b"from the cache\n")
    assert run(["--help"], tmp_path).stdout == reference
    assert page.read_bytes().endswith(reference)  # rewritten from click's page
    assert run(["--help"], tmp_path).stdout == reference

    # a module file that is gone
    fields[0] = b"/nonexistent/stackcheck/__init__.py"
    gone = b"\0".join(fields)
    page.write_bytes(b"\n".join((magic, key, b"%d" % len(gone))) + b"\n" + gone + b"from the cache\n")
    assert run(["--help"], tmp_path).stdout == reference

    # another key (stackcheck's version, the interpreter, the arguments … are all in it)
    page.write_bytes(b"\n".join((magic, key.replace(b"'0.", b"'9."), size)) + b"\n" + code + b"x\n")
    assert run(["--help"], tmp_path).stdout == reference


@pytest.mark.parametrize(
    "garbage", [b"", b"stackcheck-help 1\n", b"\xff" * 100, b"stackcheck-help 1\nk\nx\n"]
)
def test_a_damaged_cache_file_is_a_miss(tmp_path, garbage):
    reference = run(["deps", "--help"], None).stdout
    run(["deps", "--help"], tmp_path)
    (page,) = (tmp_path / "help").iterdir()
    page.write_bytes(garbage)
    assert run(["deps", "--help"], tmp_path).stdout == reference
    assert run(["deps", "--help"], tmp_path).stdout == reference


def test_width_colour_and_flags_each_get_clicks_page(tmp_path):
    settings = [
        (["--help"], {"COLUMNS": "60"}),
        (["--help"], {"COLUMNS": "200"}),
        (["preflight", "--help"], {"COLUMNS": "60"}),
        (["preflight", "-h"], {}),
        (["-h"], {"NO_COLOR": "1"}),
        (["-h"], {"FORCE_COLOR": "1"}),
        (["--help"], {"LANG": "C"}),
    ]
    seen = set()
    for args, extra in settings * 2:  # the second round is served from the cache
        reference = run(args, None, extra)
        got = run(args, tmp_path, extra)
        assert (got.returncode, got.stdout, got.stderr) == (0, reference.stdout, b""), (args, extra)
        seen.add(reference.stdout)
    assert len(seen) == 5  # the top page at 60, 80 and 200 columns, preflight's at 60 and 80
    assert pages(tmp_path) == ["preflight.h", "preflight.help", "top.h", "top.help"]


def test_on_a_terminal_the_page_is_clicks_and_its_width(tmp_path):
    for columns in (120, 70):
        reference = on_pty(["--help"], None, columns=columns)
        assert on_pty(["--help"], tmp_path, columns=columns) == reference  # miss
        assert on_pty(["--help"], tmp_path, columns=columns) == reference  # hit
        assert on_pty(["memory", "--help"], tmp_path, {"FORCE_COLOR": "1"}, columns) == on_pty(
            ["memory", "--help"], None, {"FORCE_COLOR": "1"}, columns
        )
    assert on_pty(["--help"], tmp_path, columns=70) != on_pty(["--help"], tmp_path, columns=120)


def test_the_version_is_clicks_own_without_click(tmp_path):
    from click.testing import CliRunner

    from stackcheck.cli import cli

    clicks = CliRunner().invoke(cli, ["--version"]).output.encode()
    assert clicks == b"stackcheck, version 0.1.0\n"
    for args in (["--version"], ["-V"]):
        for module in (False, True):
            got = run(args, tmp_path, module=module)
            assert (got.returncode, got.stdout, got.stderr) == (0, clicks, b"")
            assert run(args, None, module=module).stdout == clicks
    assert not (tmp_path / "help").exists()  # nothing to cache


LOADED = (
    "import atexit, sys\n"
    "heavy = ('click', 'packaging', 'msgspec', 'typing', 'stackcheck.errors', 'concurrent.futures')\n"
    "atexit.register(lambda: sys.stderr.write(repr(sorted(m for m in sys.modules if m in heavy))))\n"
    "sys.argv = ['stackcheck', *sys.argv[1:]]\n"
    "from stackcheck.cli import main\n"
    "main()\n"
)


def test_version_and_a_cached_page_import_no_click(tmp_path):
    def loaded(*args: str) -> bytes:
        done = subprocess.run(
            [sys.executable, "-c", LOADED, *args], env=_env(tmp_path), capture_output=True, timeout=120
        )
        assert done.returncode == 0
        return done.stderr

    assert loaded("--version") == b"[]"
    assert loaded("doctor", "--help") == b"['click', 'stackcheck.errors', 'typing']"  # a miss: click wrote it
    assert loaded("doctor", "--help") == b"[]"
    assert loaded("doctor", "--json", "--help") == b"['click', 'stackcheck.errors', 'typing']"  # not cached
    assert loaded("snapshot", "--json") == b"['msgspec', 'stackcheck.errors', 'typing']"  # startup.LIGHT


def test_snapshot_json_without_click_is_the_commands_output(tmp_path):
    import json

    def snapshot(code: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-c", code], env=_env(tmp_path), capture_output=True, timeout=120, cwd=tmp_path
        )
        assert (done.returncode, done.stderr) == (0, b"")
        facts = json.loads(done.stdout)
        assert facts["tool"].pop("captured_at")
        facts["launch"].pop("wall_clock_ns")  # a clock reading, like captured_at
        return facts

    light = snapshot(
        "import sys; sys.argv[1:] = ['snapshot', '--json']; from stackcheck.cli import main; main()"
    )
    clicks = snapshot("from stackcheck.cli import main; main(['snapshot', '--json'])")  # argv given: click
    assert light == clicks
    assert light["packages"]["distributions"]


def test_python_m_and_the_console_script_answer_alike(tmp_path):
    for args in (["--help"], ["triage", "--help"], ["--version"]):
        script = run(args, tmp_path)
        module = run(args, tmp_path, module=True)
        assert (module.returncode, module.stdout, module.stderr) == (0, script.stdout, b"")


@pytest.mark.parametrize(
    "args, code, said",
    [
        (["--bogus"], 2, b"Error: No such option '--bogus'"),
        (["nope", "--help"], 2, b"Error: No such command 'nope'."),
        (["--help", "nope"], 0, b""),  # click: the help, eagerly (not a page that is cached)
        ([], 2, b"Usage: stackcheck [OPTIONS] COMMAND [ARGS]..."),  # no command: help on stderr
        (["--version", "--bogus"], 2, b"Error: No such option '--bogus'"),
        (["preflight", "--help", "--bogus"], 2, b"Error: No such option '--bogus'"),
    ],
)
def test_errors_still_go_through_click(tmp_path, args, code, said):
    reference = run(args, None)
    got = run(args, tmp_path)
    assert (got.returncode, got.stdout, got.stderr) == (
        reference.returncode,
        reference.stdout,
        reference.stderr,
    )
    assert got.returncode == code
    assert said in got.stderr if said else got.stderr == b""
    assert not (tmp_path / "help").exists()  # only the pages of `[COMMAND] --help|-h` are kept


def test_shell_completion_and_no_cache_go_through_click(tmp_path):
    completion = {"_STACKCHECK_COMPLETE": "bash_source"}
    reference = run(["--version"], None, completion)
    assert reference.returncode == 0 and b"_stackcheck_completion" in reference.stdout
    assert run(["--version"], tmp_path, completion).stdout == reference.stdout
    assert run(["--help"], tmp_path, completion).stdout == reference.stdout
    assert not (tmp_path / "help").exists()


def test_a_cache_that_cannot_be_written_is_only_slower(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    reference = run(["--help"], None)
    for _ in range(2):
        got = run(["--help"], blocked)
        assert (got.returncode, got.stdout, got.stderr) == (0, reference.stdout, b"")
    assert blocked.read_text() == "not a directory"


def clicks(*args: str) -> list[str]:
    """``stackcheck ARGS`` through click (main() given its arguments never takes the start-up
    path), run by the console script's interpreter (a report names it)."""
    with open(STACKCHECK, encoding="utf-8") as fh:
        python = fh.readline()[2:].strip()
    return [python, "-c", f"from stackcheck.cli import main; main({list(args)!r})"]


def _comparable(out: bytes) -> bytes:
    """A report without what differs from run to run (when the snapshot was taken, its digest)."""
    import re

    return re.sub(rb'"(captured_at|snapshot_digest)": "[^"]*"', rb'"\1": ""', out)


@pytest.mark.parametrize(
    "args, colour",
    [
        (["preflight", "-p", "TRAIN-CPU"], {}),
        (["preflight", "-p", "TRAIN-CPU"], {"FORCE_COLOR": "1"}),
        (["preflight", "-p", "TRAIN-CPU"], {"NO_COLOR": "1", "FORCE_COLOR": "1"}),
        (["preflight", "--profile", "BASE-CPU"], {}),
        (["preflight", "--profile=TRAIN-CPU", "--json"], {}),
        (["preflight", "--json", "-p", "BASE-CPU"], {"FORCE_COLOR": "1"}),
        (["preflight", "-p", "NO-SUCH-PROFILE"], {}),  # exit 2, the catalog's message
        (["preflight", "-p", "bad/id"], {}),  # exit 2, the identifier rule's message
        (["preflight", "-p", "--json"], {}),  # not taken: click reads "--json" as the ID
        (["preflight", "-p", "TRAIN-CPU", "-v"], {}),  # not taken
        (["doctor"], {}),
        (["doctor"], {"FORCE_COLOR": "1"}),
        (["doctor", "--json"], {}),
        (["doctor", "--strict"], {}),  # not taken
        (["deps", "conflicts"], {}),
        (["deps", "conflicts", "--json"], {}),
        (["deps", "tree"], {}),
        (["deps", "tree", "--json"], {}),
        (["deps", "conflicts", "--no-extras"], {}),  # not taken
        (["deps", "tree", "--depth", "1"], {}),  # not taken
    ],
)
def test_preflight_and_doctor_without_click_are_the_commands_output(tmp_path, args, colour):
    light = subprocess.run([STACKCHECK, *args], env=_env(tmp_path, colour), capture_output=True, cwd=tmp_path)
    reference = subprocess.run(clicks(*args), env=_env(tmp_path, colour), capture_output=True, cwd=tmp_path)
    assert light.returncode == reference.returncode
    assert (_comparable(light.stdout), light.stderr) == (_comparable(reference.stdout), reference.stderr)
    assert light.returncode in (0, 1) if light.stdout else light.returncode == 2
    if light.stdout and "--json" not in str(args):
        painted = bool(colour.get("FORCE_COLOR")) and not colour.get("NO_COLOR")  # even through a pipe
        assert (b"\x1b[" in light.stdout) == painted


def test_preflight_without_click_on_a_terminal(tmp_path):
    args = ["preflight", "-p", "TRAIN-CPU"]
    painted = on_pty(args, tmp_path, code=1)
    assert b"\x1b[" in painted
    assert painted == on_pty(args, tmp_path, argv=clicks(*args), code=1)
    plain = on_pty(args, tmp_path, {"NO_COLOR": "1"}, code=1)
    assert b"\x1b[" not in plain
    assert plain == on_pty(args, tmp_path, {"NO_COLOR": "1"}, argv=clicks(*args), code=1)


def test_preflight_without_click_imports_no_click_but_not_on_an_ascii_stdout(tmp_path):
    def loaded(extra=None) -> bytes:
        argv = [sys.executable, "-c", LOADED, "preflight", "-p", "TRAIN-CPU"]
        done = subprocess.run(argv, env=_env(tmp_path, extra), capture_output=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 1
        return done.stderr

    assert b"'click'" not in loaded()
    assert b"'click'" in loaded({"PYTHONIOENCODING": "ascii"})  # click.echo re-wraps such a stdout
    doctor = [sys.executable, "-c", LOADED, "doctor"]
    done = subprocess.run(doctor, env=_env(tmp_path), capture_output=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 1 and b"'click'" not in done.stderr


def test_warm_deps_without_click_import_neither_click_nor_packaging(tmp_path):
    """``deps conflicts`` and ``deps tree``, plain: no click; warm (the graph from the fact
    cache, pip's wording of each conflict with it), no packaging either; what click's commands
    print, cold and warm. Other arguments, and an ASCII stdout, go through click."""

    def loaded(*args, extra=None) -> tuple[int, bytes, bytes]:
        argv = [sys.executable, "-c", LOADED, *args]
        done = subprocess.run(argv, env=_env(tmp_path, extra), capture_output=True, timeout=120, cwd=tmp_path)
        return done.returncode, done.stdout, done.stderr

    for command in ("conflicts", "tree"):
        reference = subprocess.run(clicks("deps", command), env=_env(None), capture_output=True, cwd=tmp_path)
        code, cold, modules = loaded("deps", command)
        assert (code, cold) == (reference.returncode, reference.stdout)
        derived = command == "conflicts"  # the first run derives the graph; tree's first is warm
        assert b"'click'" not in modules and (b"'packaging'" in modules) == derived
        code, warm, modules = loaded("deps", command)
        assert (code, warm) == (reference.returncode, reference.stdout)
        assert b"'click'" not in modules and b"'packaging'" not in modules
    assert b"'click'" in loaded("deps", "conflicts", "--no-extras")[2]
    # the graph doctor's DEP001 stored is the one deps reads: the same key (a deps run asks for
    # the platform section, whose kernel release is a marker variable)
    shared = tmp_path / "shared"
    doctor = [sys.executable, "-c", LOADED, "doctor"]  # the same interpreter path: the same graph file
    subprocess.run(doctor, env=_env(shared), capture_output=True, timeout=120, cwd=tmp_path)
    assert len(list((shared / "facts").glob("depgraph-*.json"))) == 1
    argv = [sys.executable, "-c", LOADED, "deps", "tree"]
    done = subprocess.run(argv, env=_env(shared), capture_output=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0 and b"'packaging'" not in done.stderr and b"'click'" not in done.stderr
