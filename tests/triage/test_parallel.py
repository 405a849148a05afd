"""Triage over worker processes gives what one process gives: the same findings, regions, line
numbers and evidence, on generated logs cut inside regions, tracebacks, collect_env blocks and
runs of errors, at chunk edges of every size and with warm-ups of every length (in-process
workers: the merge and the pickled results exactly as forked workers give them), on every
triage test log, and through real forked workers and the CLI; one job, pipes, stdin and small
files never fork; memory stays bounded per process."""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
import threading
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.errors import InputError
from stackcheck.triage import parallel, reader, triage_stream
from stackcheck.triage.diagnose import _Scan, loaded_signatures
from stackcheck.triage.reader import ALIGN_LINES, iter_chunks

from .conftest import TRIAGE_DATA
from .test_fast_path import HITS, PADDING, QUIET

TRACEBACK = [
    "Traceback (most recent call last):",
    *[f'  File "/opt/venv/lib/python3.11/site-packages/m{i}.py", line {i}, in f{i}' for i in range(40)],
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
]
COLLECT_ENV = [
    "Collecting environment information...",
    "PyTorch version: 2.1.0+cu121",
    "Is debug build: False",
    "CUDA used to build PyTorch: 12.1",
    "OS: Ubuntu 22.04.3 LTS (x86_64)",
    "Python version: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0] (64-bit runtime)",
    "Is CUDA available: True",
    "Nvidia driver version: 470.82.01",
    "Versions of relevant libraries:",
    "[pip3] torch==2.1.0",
]
DENSE = [("error: x.c:{}: expected ';'" if i % 3 == 0 else "   in function f") for i in range(60)]
SNIPPETS = [[hit] for hit in HITS] + [TRACEBACK, COLLECT_ENV, DENSE, ["", "", "ERROR: after blanks"]]


class InProcess:
    """A worker run in this process: the results pickled exactly as a forked one sends them."""

    started: list[int] = []

    def __init__(self, split, k, cut, index) -> None:
        self.data = pickle.dumps(parallel._work(split, k, cut, index))
        InProcess.started.append(k)

    def result(self) -> bytes:
        return self.data

    def stop(self) -> None:
        pass


@contextmanager
def cut_at(lines: list[int], *, warmup: int = parallel.WARMUP_LINES, chunk: int = reader.CHUNK_BYTES):
    """Triage cuts every file at ``lines`` (block starts), with in-process workers; yields the
    count of ranges whose worker's results were merged (the others the parent scanned again)."""
    counts = {"merged": 0}
    merge = parallel._merge

    def merged(*args):
        counts["merged"] += 1
        return merge(*args)

    def splits_for(stream, jobs):
        counter = parallel._LineCounter(stream.fileno(), 0)
        cuts = tuple(cut for cut in map(counter.cut_at, lines) if cut is not None)
        return parallel.Split(stream.fileno(), 0, cuts) if cuts else None

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(parallel, "splits_for", splits_for)
        mp.setattr(parallel, "_Worker", InProcess)
        mp.setattr(parallel, "WARMUP_LINES", warmup)
        mp.setattr(parallel, "_merge", merged)
        mp.setattr(reader, "CHUNK_BYTES", chunk)
        mp.setattr("stackcheck.triage.diagnose.WHOLE_TEXT_LIMIT", 2000)  # past it in the first range
        yield counts


def diagnosis(path: Path, jobs: int | None = None):
    with open(path, "rb") as stream:
        try:
            return msgspec.to_builtins(triage_stream(stream, source="ci.log", jobs=jobs))
        except InputError as exc:
            return str(exc)


def scan_state(path: Path, jobs: int | None = None):
    """Everything the scan leaves for the diagnosis: findings with their hits, lines and
    regions, the last region and traceback, prefixes, the collect_env block, counts."""
    index = loaded_signatures()
    scan = _Scan(index)
    extractor = scan.extractor()
    with open(path, "rb") as stream:
        split = parallel.splits_for(stream, jobs)
        if split is None:
            scan.feed(iter_chunks(stream, "ci.log"), extractor)
        else:
            parallel.scan_ranges(split, "ci.log", scan, extractor)
    for region in extractor.finish():
        scan.take(region)
    findings = {
        rule: (
            [(k, h.signature.form, h.start, h.matched, h.groups) for k, h in f.hits.items()],
            f.lines,
            f.region,
        )
        for rule, f in scan.findings.items()
    }
    return (
        findings,
        scan.last_region,
        scan.last_traceback,
        scan.prefixes,
        (scan.collect_env, scan.collect_env_line),
        (scan.regions, scan.lines_read, scan.content),
    )


def single(path: Path):
    """The diagnosis and the scan of one process (the same knobs, no cuts)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("stackcheck.triage.diagnose.WHOLE_TEXT_LIMIT", 2000)
        return diagnosis(path, jobs=1), scan_state_single(path)


def scan_state_single(path: Path):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(parallel, "splits_for", lambda stream, jobs: None)
        return scan_state(path)


@st.composite
def cut_logs(draw):
    """The probe's padding, then 2-6 blocks of quiet lines with hits, tracebacks, collect_env
    blocks and runs of errors placed anywhere, often just before, on or after a block start
    (where the cuts are); and the cuts: some block starts."""
    blocks = draw(st.integers(2, 6))
    n = blocks * ALIGN_LINES + draw(st.integers(0, 40))
    body = [QUIET[i % len(QUIET)] for i in range(n)]
    near = st.sampled_from([d for d in range(-12, 13)]).flatmap(
        lambda d: st.integers(1, blocks).map(lambda b: b * ALIGN_LINES + d)
    )
    for spot in draw(st.lists(st.one_of(near, st.integers(0, n - 1)), max_size=8)):
        snippet = draw(st.sampled_from(SNIPPETS))
        if 0 <= spot < n:
            body[spot : spot + len(snippet)] = snippet[: n - spot]
    cuts = draw(st.lists(st.integers(1, blocks), unique=True, min_size=1, max_size=4))
    lines = [len(PADDING) + b * ALIGN_LINES + 1 for b in sorted(cuts)]
    if draw(st.booleans()):
        lines = [len(PADDING) + 1, *lines]  # the first range is the probe alone
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = end.join(PADDING + body) + draw(st.sampled_from(["", end]))
    return text.encode(), lines


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cut_logs(),
    st.sampled_from([0, 1, ALIGN_LINES, 2 * ALIGN_LINES, 16 * ALIGN_LINES]),
    st.sampled_from([1, 2000, reader.CHUNK_BYTES]),
)
def test_cut_logs_give_the_findings_and_regions_of_one_process(tmp_path_factory, log, warmup, chunk):
    data, lines = log
    path = tmp_path_factory.mktemp("cut") / "ci.log"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reader, "CHUNK_BYTES", chunk)
        expected = single(path)
    with cut_at(lines, warmup=warmup, chunk=chunk) as counts:
        got = diagnosis(path), scan_state(path)
    assert got == expected
    assert counts["merged"] <= 2 * len(lines)


def write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "ci.log"
    path.write_text("\n".join(PADDING + lines) + "\n", encoding="utf-8")
    return path


def block_start(b: int) -> int:
    """The line number of body block ``b`` (0: the first block after the padding)."""
    return len(PADDING) + b * ALIGN_LINES + 1


def test_a_traceback_across_a_cut_is_taken_from_the_worker_that_warmed_up_through_it(tmp_path):
    body = ["step ok"] * (4 * ALIGN_LINES)
    at = 2 * ALIGN_LINES - 10  # 10 lines before the cut at the third block
    body[at : at + len(TRACEBACK)] = TRACEBACK
    path = write(tmp_path, body)
    expected = single(path)
    with cut_at([block_start(2)], warmup=ALIGN_LINES) as counts:
        got = diagnosis(path), scan_state(path)
    assert got == expected
    assert counts == {"merged": 2}  # once for the diagnosis, once for the scan
    region = got[1][0]["KB102"][2]
    assert (region.start, region.end, region.kind) == (block_start(2) - 13, block_start(2) + 39, "traceback")


def test_a_region_longer_than_the_warm_up_is_scanned_again_by_the_parent(tmp_path):
    body = ["step ok"] * (4 * ALIGN_LINES)
    body[ALIGN_LINES - 20 : 3 * ALIGN_LINES] = [DENSE[i % 3] for i in range(2 * ALIGN_LINES + 20)]
    path = write(tmp_path, body)
    expected = single(path)
    with cut_at([block_start(2)], warmup=ALIGN_LINES) as counts:
        got = diagnosis(path), scan_state(path)
    assert got == expected
    assert counts["merged"] == 0  # the worker's region opened one block before the cut, not where ours did


def test_a_collect_env_block_across_a_cut_takes_its_lines_from_the_next_range(tmp_path):
    body = ["step ok"] * (3 * ALIGN_LINES)
    at = ALIGN_LINES - 4
    body[at : at + len(COLLECT_ENV)] = COLLECT_ENV
    body[2 * ALIGN_LINES] = "The NVIDIA driver on your system is too old (found version 11040)."
    path = write(tmp_path, body)
    expected = single(path)
    with cut_at([block_start(1), block_start(1) + ALIGN_LINES]) as counts:
        got = diagnosis(path), scan_state(path)
    assert got == expected
    assert counts["merged"] == 4
    collect_env, line = got[1][4]
    assert line == block_start(0) + at and collect_env[: len(COLLECT_ENV)] == COLLECT_ENV
    assert got[0]["environment_source"] == f"collect_env block in the input (line {line})"


def test_an_input_still_short_after_the_first_range_is_scanned_by_one_process(tmp_path):
    body = ["ERROR: x"] + ["ok"] * (3 * ALIGN_LINES)
    path = write(tmp_path, body)
    expected = diagnosis(path, jobs=1)  # matched as a whole too: under WHOLE_TEXT_LIMIT
    with cut_at([block_start(1)]) as counts, pytest.MonkeyPatch.context() as mp:
        mp.setattr("stackcheck.triage.diagnose.WHOLE_TEXT_LIMIT", 256 * 1024)
        assert diagnosis(path) == expected
    assert counts["merged"] == 0


def test_a_worker_that_fails_has_its_range_scanned_by_the_parent(tmp_path):
    body = ["step ok"] * (3 * ALIGN_LINES)
    body[2 * ALIGN_LINES + 5] = "ModuleNotFoundError: No module named 'flash_attn'"
    path = write(tmp_path, body)
    expected = single(path)

    class Failed(InProcess):
        def result(self) -> bytes:
            return b""

    with cut_at([block_start(1)]) as counts, pytest.MonkeyPatch.context() as mp:
        mp.setattr(parallel, "_Worker", Failed)
        assert (diagnosis(path), scan_state(path)) == expected
    assert counts["merged"] == 0


@pytest.mark.parametrize("name", sorted(p.name for p in TRIAGE_DATA.glob("*.txt")))
def test_every_triage_test_log_cut_in_every_block_gives_the_same_findings(tmp_path, name):
    """The test log three times over 2+ blocks of noise, cut at every block start."""
    text = (TRIAGE_DATA / name).read_text(encoding="utf-8").splitlines()
    noise = [f"step {i}: ok" for i in range(ALIGN_LINES - 7)]
    path = write(tmp_path, [*noise, *text, *noise, *text, *noise, *text])
    blocks = (len(text) * 3 + len(noise) * 3) // ALIGN_LINES
    expected = single(path)
    with cut_at([block_start(b) for b in range(1, blocks + 1)], warmup=ALIGN_LINES) as counts:
        got = diagnosis(path), scan_state(path)
    assert got == expected
    assert counts["merged"] >= 2


# ----- real workers, the CLI, when not to fork ---------------------------------------------


REAL_OTHER_THREADS = parallel._other_threads


@pytest.fixture
def small_thresholds(monkeypatch):
    # threads other tests leave behind (daemon threads of the probe …) would keep us from forking
    monkeypatch.setattr(parallel, "_other_threads", lambda: False)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1 << 20)
    monkeypatch.setattr(parallel, "MIN_RANGE_BYTES", 1 << 18)
    monkeypatch.setattr(parallel, "MIN_SPLIT_LINES", 4 * ALIGN_LINES)


@pytest.fixture
def forks(monkeypatch):
    started: list[int] = []
    fork = os.fork

    def counted():
        pid = fork()
        if pid:
            started.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted)
    return started


def big_log(tmp_path: Path, megabytes: float) -> Path:
    """CI noise with failures every few thousand lines, a traceback and an OOM at the end."""
    lines = []
    for i in range(int(megabytes * 2**20 / 60)):
        if i % 3001 == 1000:
            lines.append("ERROR: No matching distribution found for torch==9.9")
        elif i % 7919 == 3:
            lines.extend(TRACEBACK)
        else:
            lines.append(f"2024-01-02T03:04:05.1234567Z step {i:07d}: compiling module ... ok")
    path = tmp_path / "big.log"
    path.write_bytes(
        ("\n".join(lines) + "\n").encode() + (TRIAGE_DATA / "oom-fragmentation.txt").read_bytes()
    )
    return path


def test_forked_workers_give_the_findings_of_one_process(tmp_path, small_thresholds, forks):
    path = big_log(tmp_path, 3)
    expected = scan_state_single(path), diagnosis(path, jobs=1)
    assert forks == []
    for jobs in (2, 3):
        assert (scan_state(path, jobs), diagnosis(path, jobs=jobs)) == expected
    assert len(forks) == 2 * (1 + 2)  # one worker per range after the first, twice


def test_splits_only_for_a_large_regular_file_and_more_than_one_job(tmp_path, small_thresholds, monkeypatch):
    path = big_log(tmp_path, 2)
    with open(path, "rb") as stream:
        assert parallel.splits_for(stream, 1) is None
        split = parallel.splits_for(stream, 3)
        assert split is not None and len(split.cuts) == 2
        monkeypatch.setenv("STACKCHECK_TRIAGE_JOBS", "1")
        assert parallel.splits_for(stream, None) is None
        monkeypatch.setenv("STACKCHECK_TRIAGE_JOBS", "2")
        assert len(parallel.splits_for(stream, None).cuts) == 1
        stream.seek(path.stat().st_size - (1 << 19))  # what is left is under the threshold
        assert parallel.splits_for(stream, 2) is None
    small = tmp_path / "small.log"
    small.write_bytes(path.read_bytes()[: (1 << 20) - 1])
    with open(small, "rb") as stream:
        assert parallel.splits_for(stream, 4) is None
    assert parallel.splits_for(io.BytesIO(path.read_bytes()), 4) is None
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as pipe:
        os.close(write_end)
        assert parallel.splits_for(pipe, 4) is None
    monkeypatch.setattr(parallel, "_other_threads", REAL_OTHER_THREADS)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with open(path, "rb") as stream:
            assert parallel.splits_for(stream, 4) is None  # forking next to another thread is unsafe
    finally:
        stop.set()
        other.join()


def test_cuts_start_blocks_at_their_offsets(tmp_path, small_thresholds):
    path = big_log(tmp_path, 2)
    data = path.read_bytes()
    with open(path, "rb") as stream:
        split = parallel.splits_for(stream, 4)
    assert split is not None and len(split.cuts) == 3
    previous = 0
    for cut in split.cuts:
        assert (cut.line - 1) % ALIGN_LINES == 0 and (cut.warm_line - 1) % ALIGN_LINES == 0
        assert data.count(b"\n", 0, cut.offset) == cut.line - 1 and data[cut.offset - 1 : cut.offset] == b"\n"
        assert data.count(b"\n", 0, cut.warm_offset) == cut.warm_line - 1
        assert cut.line - cut.warm_line == parallel.WARMUP_LINES
        assert previous < cut.offset < len(data)
        previous = cut.offset
    sizes = [
        b - a
        for a, b in zip((0, *(c.offset for c in split.cuts)), (*(c.offset for c in split.cuts), len(data)))
    ]
    assert max(sizes) - min(sizes) < 2 * ALIGN_LINES * 70


def test_ranges_of_short_lines_are_shorter_the_work_of_each_process_is_about_equal(tmp_path):
    long, short = b"x" * 399 + b"\n", b"y" * 19 + b"\n"
    edge = 10_000 * len(long)  # 4 MB of long lines, then 1 MB of short ones
    path = tmp_path / "mixed.log"
    path.write_bytes(long * 10_000 + short * 50_000)
    size = path.stat().st_size

    def work(a: int, b: int) -> float:  # bytes plus LINE_WORK_BYTES per line, on [a, b)
        per_byte = [1 + parallel.LINE_WORK_BYTES / len(line) for line in (long, short)]
        return (min(b, edge) - min(a, edge)) * per_byte[0] + (max(b, edge) - max(a, edge)) * per_byte[1]

    with open(path, "rb") as stream:
        for jobs in (2, 3, 4):
            edges = [0, *parallel.targets(stream.fileno(), 0, size, jobs), size]
            assert edges == sorted(edges)
            done = [work(a, b) for a, b in zip(edges, edges[1:])]
            assert max(done) / min(done) < 1.05, (jobs, edges, done)
            # the first range takes more than its share of the bytes: the dense lines come later
            assert edges[1] > size // jobs + 100_000
    uniform = tmp_path / "uniform.log"  # where the lines are alike everywhere: equal sizes
    uniform.write_bytes(long * 10_000)
    with open(uniform, "rb") as stream:
        offsets = parallel.targets(stream.fileno(), 0, edge, 4)
    assert [abs(offset - edge * k // 4) <= len(long) for k, offset in enumerate(offsets, 1)] == [True] * 3


def test_stdin_and_small_files_never_fork(tmp_path, monkeypatch):
    def refuse():
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", refuse)
    path = big_log(tmp_path, 0.5)
    assert diagnosis(path, jobs=4)["matches"][0]["rule_id"] == "KB102"
    read_end, write_end = os.pipe()
    writer = threading.Thread(
        target=lambda: (os.write(write_end, path.read_bytes()[:60000]), os.close(write_end))
    )
    writer.start()
    with os.fdopen(read_end, "rb") as pipe:
        d = triage_stream(pipe, source="<stdin>", jobs=4)
    writer.join()
    assert d.lines_read == path.read_bytes()[:60000].count(b"\n") + 1


def test_the_jobs_setting_must_be_a_whole_number(tmp_path, monkeypatch):
    path = write(tmp_path, ["ERROR: x"])
    for value in ("0", "two", "-1"):
        monkeypatch.setenv("STACKCHECK_TRIAGE_JOBS", value)
        assert diagnosis(path) == (
            f"STACKCHECK_TRIAGE_JOBS: expected a whole number of worker processes >= 1, got {value!r}"
        )
    with pytest.raises(InputError, match="jobs: expected a whole number of worker processes >= 1, got 0"):
        parallel.resolve_jobs(0)


STACKCHECK = [sys.executable, "-m", "stackcheck"]
# the CLI in a process that counts its forks (on stderr, after the CLI's own output)
COUNTING_CLI = [
    sys.executable,
    "-c",
    "import atexit, os, sys; n = []; fork = os.fork; "
    "os.fork = lambda: (lambda pid: pid and n.append(pid) or pid)(fork()); "
    "atexit.register(lambda: print('forks', len(n), file=sys.stderr)); "
    "from stackcheck.cli import main; sys.argv[0] = 'stackcheck'; main()",
]


def peak_rss_of(cmd: list[str], env: dict[str, str]) -> tuple[bytes, str, int]:
    """The output and error output of ``cmd``, and the largest peak RSS (KiB) of it and the
    workers it forked."""
    code = (
        "import resource, subprocess, sys; out = subprocess.run(sys.argv[1:], capture_output=True); "
        "sys.stdout.buffer.write(out.stdout); sys.stderr.buffer.write(out.stderr); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code, *cmd], env=env, capture_output=True, timeout=300)
    *errors, rss = done.stderr.decode().split("\n")[:-1]
    return done.stdout, "\n".join(errors), int(rss)


def test_the_cli_with_workers_prints_what_one_process_prints_in_bounded_memory(tmp_path):
    path = big_log(tmp_path, 17)  # past PARALLEL_MIN_BYTES
    assert path.stat().st_size >= parallel.PARALLEL_MIN_BYTES
    cmd = [*COUNTING_CLI, "triage", str(path), "--no-env", "--json"]
    env = {**os.environ, "STACKCHECK_TRIAGE_JOBS": "1"}
    one, forks_one, rss_one = peak_rss_of(cmd, env)
    two, forks_two, rss_two = peak_rss_of([*cmd, "--jobs", "2"], env)
    three, forks_three, _ = peak_rss_of(cmd, {**env, "STACKCHECK_TRIAGE_JOBS": "3"})
    # one worker per range after the first, and the child that counts the lines to the cuts
    # while the rules load and compile (parallel.SplitAhead)
    assert (forks_one, forks_two, forks_three) == ("forks 0", "forks 2", "forks 3")
    assert json_of(two) == json_of(three) == json_of(one) and json_of(one)["matches"][0]["rule_id"] == "KB102"
    assert rss_two < rss_one + 16 * 1024, (rss_one, rss_two)
    small = subprocess.run([*STACKCHECK, "triage", str(path), "--jobs", "0"], capture_output=True)
    assert small.returncode == 2 and b"--jobs" in small.stderr
    piped = subprocess.run(
        [*COUNTING_CLI, "triage", "-", "--no-env", "--json"],
        input=path.read_bytes(),
        capture_output=True,
        env={**env, "STACKCHECK_TRIAGE_JOBS": "2"},
        timeout=300,
    )
    assert (
        piped.stderr.decode().splitlines()[-1] == "forks 0"
        and json_of(piped.stdout)["lines_read"] == json_of(one)["lines_read"]
    )


def json_of(out: bytes):
    import json

    return json.loads(out)


def test_in_process_workers_stay_bounded_in_memory(tmp_path, small_thresholds, monkeypatch):
    path = big_log(tmp_path, 6)
    monkeypatch.setattr(parallel, "_Worker", InProcess)
    InProcess.started = []
    loaded_signatures()
    tracemalloc.start()
    try:
        d = diagnosis(path, jobs=4)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert d["matches"][0]["rule_id"] == "KB102" and InProcess.started == [1, 2, 3]
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.1f} MiB for a 6 MiB log over 4 ranges"


def test_binary_input_is_refused_as_by_one_process_and_the_workers_are_ended(
    tmp_path, small_thresholds, forks
):
    path = tmp_path / "model.bin"
    path.write_bytes(b"\x00\x01binary\n" * 300_000)  # 3.3 MiB: cut into ranges, refused in the first
    assert (
        diagnosis(path, jobs=3)
        == diagnosis(path, jobs=1)
        == "ci.log: binary data, expected an error text, traceback or log"
    )
    assert len(forks) == 2
    for pid in forks:  # ended and reaped: none is left
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_the_split_planned_ahead_is_the_one_planned_here_and_its_child_is_reaped(
    tmp_path, small_thresholds, forks
):
    path = big_log(tmp_path, 3)
    with open(path, "rb") as stream:
        for jobs in (2, 3, 4):
            here = parallel.splits_for(stream, jobs)
            ahead = parallel.SplitAhead(stream, jobs)
            assert len(forks) == jobs - 1 and here is not None
            assert ahead.split() == here and ahead.split() is None  # asked once
            with pytest.raises(ChildProcessError):
                os.waitpid(forks[-1], os.WNOHANG)
        assert parallel.SplitAhead(stream, 1).split() is None
        stopped = parallel.SplitAhead(stream, 2)
        stopped.stop()
        assert stopped.split() is None
    assert len(forks) == 3 + 1
    with pytest.raises(ChildProcessError):
        os.waitpid(forks[-1], os.WNOHANG)


def test_where_the_child_fails_this_process_plans_the_same_cuts(tmp_path, small_thresholds, monkeypatch):
    path = big_log(tmp_path, 3)
    parent, plan = os.getpid(), parallel.plan

    def failing(*args):  # in the child only
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return plan(*args)

    monkeypatch.setattr(parallel, "plan", failing)
    with open(path, "rb") as stream:
        expected = parallel.splits_for(stream, 3)
        assert expected is not None and parallel.SplitAhead(stream, 3).split() == expected


def test_triage_plans_ahead_only_while_the_rules_compile(tmp_path, small_thresholds, forks, monkeypatch):
    from stackcheck.triage import diagnose

    path = big_log(tmp_path, 3)
    expected = diagnosis(path, jobs=1)
    monkeypatch.setattr(diagnose, "_COMPILED", set())
    diagnose._loaded_signatures.cache_clear()
    assert diagnosis(path, jobs=2) == expected
    assert len(forks) == 2  # the child that counts the lines, one worker
    assert diagnosis(path, jobs=2) == expected
    assert len(forks) == 3  # compiled: the lines counted here, one worker
    for pid in forks:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_a_failure_after_the_rules_load_still_reaps_the_child_counting_ahead(
    tmp_path, small_thresholds, forks, monkeypatch
):
    from stackcheck.triage import diagnose

    path = big_log(tmp_path, 3)
    monkeypatch.setattr(diagnose, "_COMPILED", set())
    diagnose._loaded_signatures.cache_clear()

    def broken(index):
        raise RuntimeError("the scan cannot start")

    monkeypatch.setattr(diagnose, "_Scan", broken)
    with pytest.raises(RuntimeError, match="cannot start"):
        diagnosis(path, jobs=2)
    assert len(forks) == 1  # the child that counted ahead, and no worker
    with pytest.raises(ChildProcessError):  # stopped and reaped
        os.waitpid(forks[0], os.WNOHANG)


def test_a_range_of_coloured_lines_is_shorter_by_the_work_of_its_colour_codes(tmp_path):
    plain, coloured = b"x" * 99 + b"\n", b"\x1b[31m" + b"x" * 90 + b"\x1b[0m\n"  # 100 bytes each
    path = tmp_path / "coloured.log"
    path.write_bytes(plain * 40_000 + coloured * 40_000)
    size = path.stat().st_size
    per_byte = [1 + (parallel.LINE_WORK_BYTES + parallel.ESCAPE_WORK_BYTES * codes) / 100 for codes in (0, 2)]

    def work(a: int, b: int) -> float:
        edge = size // 2
        return (min(b, edge) - min(a, edge)) * per_byte[0] + (max(b, edge) - max(a, edge)) * per_byte[1]

    with open(path, "rb") as stream:
        for jobs in (2, 3):
            edges = [0, *parallel.targets(stream.fileno(), 0, size, jobs), size]
            done = [work(a, b) for a, b in zip(edges, edges[1:])]
            assert max(done) / min(done) < 1.02, (jobs, edges, done)
        assert (
            parallel.targets(stream.fileno(), 0, size, 2)[0] > size // 2 + 100_000
        )  # the plain half is longer
