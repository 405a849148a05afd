"""The probe's reads and child processes are bounded: METADATA headers (at most 1 MiB, said
when cut), FIFOs where files are expected, captured output (at most ``max_output`` bytes per
stream), hung children (their whole process group killed), and what a ``--python`` target
prints (validated; on a timeout the step it was on is named)."""

from __future__ import annotations

import os
import sys
import time

import pytest

from stackcheck.errors import InputError
from stackcheck.probe import foreign, interpreter
from stackcheck.probe.proc import MAX_OUTPUT_BYTES, run
from tests.bounded.hostile import cli, one_line_error

posix_only = pytest.mark.skipif(os.name != "posix", reason="FIFOs, sessions and process groups are POSIX")


def _dist_info(site, name="foo", version="1.0", metadata=None):
    d = site / f"{name}-{version}.dist-info"
    d.mkdir(parents=True)
    if metadata is not None:
        (d / "METADATA").write_bytes(metadata)
    return d


@pytest.mark.timeout(60)
def test_a_100_mb_metadata_without_a_blank_line_reads_1_mib_and_says_so(tmp_path):
    d = _dist_info(tmp_path, metadata=b"Metadata-Version: 2.1\nName: foo\nVersion: 1.0\nRequires-Dist: bar\n")
    with open(d / "METADATA", "ab") as fh:  # 100 MB of header-ish lines, never a blank one
        fh.truncate(100 * 1024 * 1024)
    dist = interpreter._read_distribution(str(tmp_path), d.name)
    assert (dist["name"], dist["version"], dist["requires"]) == ("foo", "1.0", ["bar"])
    limit = interpreter.HEADER_LIMIT
    assert dist["problems"][0] == f"METADATA: headers longer than {limit} bytes, read up to there only"


def test_headers_cut_at_the_limit_drop_their_partial_last_line(tmp_path):
    line = b"Requires-Dist: pkg%07d\n"  # 26 bytes
    count = interpreter.HEADER_LIMIT // 26 + 10
    body = b"Name: foo\nVersion: 1.0\n" + b"".join(line % i for i in range(count))
    path = tmp_path / "METADATA"
    path.write_bytes(body)
    found = interpreter._read_headers(str(path))
    assert found["truncated"] is True
    assert all(len(r) == len("pkg0000000") for r in found["requires-dist"])  # no half-read name
    assert len(found["requires-dist"]) == (interpreter.HEADER_LIMIT - 23) // 26  # whole lines in 1 MiB


def test_a_blank_line_across_the_first_chunk_still_ends_the_headers(tmp_path):
    head = b"Name: foo\nVersion: 1.0\nSummary: " + b"x" * (8192 - 33) + b"\n"
    assert len(head) == 8192
    path = tmp_path / "METADATA"
    path.write_bytes(head + b"\nRequires-Dist: not-a-header\n")
    found = interpreter._read_headers(str(path))
    assert (found["name"], found["requires-dist"], "truncated" in found) == ("foo", [], False)


@posix_only
@pytest.mark.timeout(30)
def test_fifos_named_like_metadata_files_never_block_the_probe(tmp_path):
    good = _dist_info(tmp_path, metadata=b"Name: foo\nVersion: 1.0\n\n")
    os.mkfifo(good / "RECORD")
    os.mkfifo(good / "top_level.txt.bak")
    fifo_meta = _dist_info(tmp_path, "bar", "2.0")
    os.mkfifo(fifo_meta / "METADATA")
    egg = tmp_path / "baz-3.0.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Name: baz\nVersion: 3.0\n\n")
    os.mkfifo(egg / "requires.txt")
    facts = interpreter.packages_facts([str(tmp_path)])
    got = {d["name"]: d["problems"] for d in facts["distributions"]}
    assert got == {"bar": ["missing METADATA", "missing RECORD"], "baz": [], "foo": ["missing RECORD"]}


def test_captured_output_is_capped_and_the_child_not_left_blocked():
    script = "import sys; sys.stdout.write('x' * 20_000_000); sys.stderr.write('e' * 100_000)"
    done = run([sys.executable, "-c", script], timeout=60)
    got = (done.returncode, len(done.stdout), len(done.stderr), done.truncated)
    assert got == (0, MAX_OUTPUT_BYTES, MAX_OUTPUT_BYTES, True)
    small = run([sys.executable, "-c", "print('ok')"], max_output=10)
    assert (small.stdout, small.truncated) == ("ok\n", False)


@posix_only
@pytest.mark.timeout(120)
def test_a_gcc_that_prints_300_mb_gives_a_bounded_toolchain_fact(tmp_path, monkeypatch):
    from stackcheck.probe.toolchain import find_gcc

    gcc = tmp_path / "gcc"
    gcc.write_text(
        f"#!{sys.executable}\nimport sys\nfor _ in range(300):\n    sys.stdout.write('9' * 1_000_000)\n"
    )
    gcc.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    tool = find_gcc()
    assert (tool.path, len(tool.version), tool.note) == (str(gcc), MAX_OUTPUT_BYTES, "")


def test_a_larger_cap_is_per_call():
    done = run([sys.executable, "-c", "import sys; sys.stdout.write('y' * 200_000)"], max_output=1 << 20)
    assert (len(done.stdout), done.truncated) == (200_000, False)


def _gone(pid: int) -> bool:
    """Not running any more: no such process, or a zombie waiting for init to reap it."""
    for _ in range(100):  # init reaps orphans asynchronously: wait up to ~10 s for that
        try:
            with open(f"/proc/{pid}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.1)
    return False


SPAWNER = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
print(child.pid, flush=True)
{tail}
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.timeout(60)
def test_a_timeout_kills_the_whole_process_group():
    done = run([sys.executable, "-c", SPAWNER.format(tail="time.sleep(300)")], timeout=2)
    assert (done.returncode, done.error) == (None, "timeout after 2 s")
    assert _gone(int(done.stdout.split()[0]))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.timeout(60)
def test_a_grandchild_holding_the_pipes_after_its_parent_exits_is_killed_at_the_deadline():
    done = run([sys.executable, "-c", SPAWNER.format(tail="sys.exit(0)")], timeout=2)
    assert (done.returncode, done.error) == (0, None)
    assert _gone(int(done.stdout.split()[0]))


FAKE_OUTPUTS = {
    "empty-object": ("echo '{}'", "printed '{}'; no python section"),
    "null": ("echo null", "printed 'null'; expected a JSON object with python and packages sections"),
    "array": ("echo '[1, 2]'", "printed '[1, 2]'; expected a JSON object with python and packages sections"),
    "text": ("echo hello", "printed 'hello'; no JSON: is it a Python >= 3.8?"),
    "nothing": ("exit 0", "printed nothing; no JSON: is it a Python >= 3.8?"),
    "wrong-type": (
        """echo '{"python": {"version": 3}, "packages": {}}'""",
        """printed '{"python": {"version": 3}, "packages": {}}'; """
        "python: Expected `str`, got `int` - at `$.version`",
    ),
    "deep": ("""python3 -c 'print("[" * 100000 + "]" * 100000)'""", "no JSON: is it a Python >= 3.8?"),
}


@posix_only
@pytest.mark.parametrize("case", sorted(FAKE_OUTPUTS))
def test_a_python_that_prints_something_else_is_one_line(tmp_path, case):
    script, said = FAKE_OUTPUTS[case]
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\n{script}\n")
    fake.chmod(0o755)
    line = one_line_error(cli("preflight", "--python", str(fake), "-p", "BASE-CPU"))
    assert line.startswith(f"stackcheck: error: {fake}: not a Python interpreter that stackcheck can probe (")
    assert line.endswith(said + ")")


@posix_only
@pytest.mark.timeout(60)
def test_a_probe_timeout_names_what_the_child_was_reading(tmp_path, monkeypatch):
    """A directory on sys.path whose listing hangs (a dead network mount, simulated by a
    sitecustomize that makes listing it sleep): the error names that directory."""
    slow = tmp_path / "slow-mount"
    slow.mkdir()
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(
        "import os, time\n_listdir = os.listdir\n"
        f"def listdir(path='.'):\n    if str(path) == {str(slow)!r}:\n        time.sleep(300)\n"
        "    return _listdir(path)\n"
        "os.listdir = listdir\n"
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(hooks), str(slow)]))
    monkeypatch.setattr(foreign, "FOREIGN_TIMEOUT_S", 3.0)
    with pytest.raises(InputError) as failed:
        foreign.gather_foreign(sys.executable)
    said = f"the interpreter probe did not finish (timeout after 3 s); it was reading {slow}"
    assert str(failed.value) == f"{sys.executable}: {said}"


@posix_only
def test_progress_lines_are_not_mistaken_for_the_error(tmp_path):
    fake = tmp_path / "python"
    progress = f"echo '{interpreter.PROGRESS}/somewhere' >&2"
    fake.write_text(f"#!/bin/sh\n{progress}\necho 'real problem' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(InputError) as failed:
        foreign.gather_foreign(str(fake))
    assert str(failed.value) == f"{fake}: cannot probe this interpreter: real problem"


def test_a_real_interpreter_still_probes():
    facts = foreign.gather_foreign(sys.executable)
    assert facts["python"]["source"] == "interpreter-subprocess" and facts["packages"]["distributions"]
