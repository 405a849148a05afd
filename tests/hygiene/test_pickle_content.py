"""Pickles are found by their content, whatever the file is called, and inside what loaders
open for you: gzip / bz2 / xz / lzma / zlib, zip archives (torch checkpoints, .npz) and
object-array .npy files. Every hostile pickle here calls os.system("touch pwned") on load;
the scans run with the working directory set to where that file would appear."""

from __future__ import annotations

import bz2
import gzip
import importlib.util
import io
import json
import lzma
import os
import pickle
import subprocess
import sys
import tempfile
import tracemalloc
import zipfile
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.hygiene import pickles, scan
from tests.hygiene.conftest import Evil, plant

np = pytest.importorskip("numpy")

SYSTEM = f"{os.system.__module__}.system"  # posix.system here (nt.system on Windows)
PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)


def evil(protocol: int = 4) -> bytes:
    return pickle.dumps({"weights": [0.5, 1.5], "hook": Evil("pwned")}, protocol=protocol)


def proto_label(protocol: int) -> str:
    return "pickle protocol 0/1" if protocol < 2 else f"pickle protocol {protocol}"


def npy_bytes(array, protocol: int | None = None) -> bytes:
    """np.save output; with ``protocol`` an object array's payload pickled with that protocol
    (np.load unpickles whatever protocol follows the header)."""
    buf = io.BytesIO()
    if protocol is None:
        np.save(buf, array, allow_pickle=True)
    else:
        np.lib.format.write_array_header_1_0(
            buf, {"descr": "|O", "fortran_order": False, "shape": array.shape}
        )
        pickle.dump(array, buf, protocol=protocol)
    return buf.getvalue()


def npy_protocol(data: bytes) -> int:
    """The PROTO byte of the pickle after a .npy header (the header ends with a newline)."""
    return data[data.index(b"\n") + 2]


def zip_bytes(members: dict[str, bytes], method=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def objects(protocol: int | None = None) -> bytes:
    return npy_bytes(np.array([Evil("pwned")], dtype=object), protocol)


# container: (file name, wrap(payload), found_in for a payload of protocol p)
CONTAINERS = {
    "raw": ("blob", lambda b: b, lambda p: proto_label(p)),
    "gzip": ("blob.gz", gzip.compress, lambda p: f"gzip > {proto_label(p)}"),
    "bz2": ("blob.bz2", bz2.compress, lambda p: f"bz2 > {proto_label(p)}"),
    "xz": ("blob.xz", lzma.compress, lambda p: f"xz > {proto_label(p)}"),
    "lzma": (
        "blob.lzma",
        lambda b: lzma.compress(b, format=lzma.FORMAT_ALONE),
        lambda p: f"lzma > {proto_label(p)}",
    ),
    "zlib": ("blob.z", zlib.compress, lambda p: f"zlib > {proto_label(p)}"),
    "zip data.pkl": (
        "ckpt.pt",
        lambda b: zip_bytes({"ckpt/data.pkl": b}),
        lambda p: f"ckpt/data.pkl > {proto_label(p)}",
    ),
    "zip, any name": (
        "bundle.zip",
        lambda b: zip_bytes({"x/blob": b}),
        lambda p: f"x/blob > {proto_label(p)}",
    ),
    "zip > gzip": (
        "bundle.zip",
        lambda b: zip_bytes({"inner.gz": gzip.compress(b)}, zipfile.ZIP_STORED),
        lambda p: f"inner.gz > gzip > {proto_label(p)}",
    ),
    "gzip > zip": (
        "bundle.zip.gz",
        lambda b: gzip.compress(zip_bytes({"m.pkl": b})),
        lambda p: f"gzip > m.pkl > {proto_label(p)}",
    ),
}


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("container", list(CONTAINERS))
def test_every_container_and_protocol_is_read(tmp_path, monkeypatch, container, protocol):
    name, wrap, where = CONTAINERS[container]
    (tmp_path / name).write_bytes(wrap(evil(protocol)))
    monkeypatch.chdir(tmp_path)
    result = pickles.scan_file(str(tmp_path / name))
    assert [f"{m}.{n}" for m, n in result.unsafe()] == [SYSTEM]
    assert result.found_in == [where(protocol)]
    assert (result.streams, result.error, result.limit, result.unresolved) == (1, None, None, 0)
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("container", ["npy", "npz"])
def test_object_arrays_in_npy_and_npz_are_read_in_every_protocol(tmp_path, monkeypatch, container, protocol):
    data = objects(protocol)
    name, found_in = "arr.npy", f"npy object array > {proto_label(protocol)}"
    if container == "npz":
        name, data, found_in = (
            "arr.npz",
            zip_bytes({"a.npy": npy_bytes(np.arange(3.0)), "b.npy": data}),
            f"b.npy > {found_in}",
        )
    (tmp_path / name).write_bytes(data)
    monkeypatch.chdir(tmp_path)
    result = pickles.scan_file(str(tmp_path / name))
    assert [f"{m}.{n}" for m, n in result.unsafe()] == [SYSTEM]
    assert result.found_in == [found_in] and (result.error, result.limit) == (None, None)
    assert not (tmp_path / "pwned").exists()


def _npy_with_header(header: str, array) -> bytes:
    raw = header.encode("latin-1")
    raw += b" " * (117 - len(raw)) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(raw).to_bytes(2, "little") + raw + pickle.dumps(array, protocol=2)


@pytest.mark.parametrize(
    "header",
    [
        "{'descr': 'object', 'fortran_order': False, 'shape': (1,), }",
        "{'descr': 'O8', 'fortran_order': False, 'shape': (1,), }",
        "{'descr': [('a', 'object')], 'fortran_order': False, 'shape': (1,), }",
        "{'descr': '|O', 'fortran_order': False, 'shape': (1L,), }",  # written by Python 2
    ],
    ids=["object", "O8", "structured", "python2 long"],
)
def test_npy_headers_are_read_the_way_np_load_reads_them(tmp_path, monkeypatch, header):
    # each of these is unpickled by np.load(allow_pickle=True)
    array = np.array([Evil("pwned")], dtype=object)
    if "[(" in header:
        array = np.zeros(1, dtype=[("a", "O")])
        array["a"][0] = Evil("pwned")
    (tmp_path / "x.npy").write_bytes(_npy_with_header(header, array))
    monkeypatch.chdir(tmp_path)
    result = pickles.scan_file(str(tmp_path / "x.npy"))
    assert [f"{m}.{n}" for m, n in result.unsafe()] == [SYSTEM]
    assert result.found_in == ["npy object array > pickle protocol 2"]
    assert not (tmp_path / "pwned").exists()


def test_a_zip_member_zipfile_refuses_is_not_checked(tmp_path):
    # the local header names another file than the directory: zipfile refuses to open the
    # member, a laxer zip reader (torch's) may not
    data = zip_bytes({"ckpt/data.pkl": evil(2)}, zipfile.ZIP_STORED).replace(
        b"ckpt/data.pkl", b"ckpt/data.pkx", 1
    )
    (tmp_path / "ckpt.pt").write_bytes(data)
    result = pickles.scan_file(str(tmp_path / "ckpt.pt"))
    assert result.limit == (
        "ckpt/data.pkl: not read (BadZipFile: "
        "File name in directory 'ckpt/data.pkl' and header b'ckpt/data.pkx' differ.)"
    )
    (finding,) = [c for c in scan(str(tmp_path)).checks if c.id == "HYG006"]
    assert finding.verdict == "blocked"


@pytest.fixture
def hostile_repo(tmp_path):
    """A git repository with hostile pickles under names that do not say pickle, and benign
    ones that must stay quiet."""
    repo = tmp_path / "repo"
    obj = objects()
    files = {
        "models/clf.joblib": evil(4),
        "models/clf.sav": evil(2),
        "models/clf.pkl.gz": gzip.compress(evil(4)),
        "models/latest": evil(5),
        "models/weights.bin": evil(3),
        "models/notes.txt": evil(0),  # protocol 0 is text: read as a pickle and as text
        "data/objects.npy": obj,
        "data/bundle.npz": zip_bytes({"floats.npy": npy_bytes(np.arange(4.0)), "objs.npy": obj}),
        "models/trunc.pkl": evil(4)[:9],  # breaks off before any import
        "models/cut": evil(4)[:-3],  # breaks off after os.system was imported
        "models/corrupt.pkl": evil(4)[:2] + b"\xff" + evil(4)[2:],
        # benign: a float array, a float .npz, a dict of ints, prose
        "data/floats.npy": npy_bytes(np.linspace(0.0, 1.0, 50)),
        "data/floats.npz": zip_bytes({"x.npy": npy_bytes(np.ones((3, 3)))}),
        "models/counts.pkl": pickle.dumps({"epochs": 3, "steps": 1200}, protocol=4),
        "README.md": "# models\n\nTrained with sklearn.\n",
    }
    plant(repo, files)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-f", "--", *files], check=True)
    return repo


def _pickle_findings(report) -> dict[str, tuple]:
    return {
        c.evidence["file"]: (
            c.verdict,
            c.evidence.get("imports"),
            c.evidence.get("found_in"),
            c.evidence.get("error"),
        )
        for c in report.checks
        if c.id == "HYG006" and c.verdict != "ok"
    }


def test_hostile_pickles_are_flagged_whatever_their_name(hostile_repo, monkeypatch):
    monkeypatch.chdir(hostile_repo)
    report = scan(str(hostile_repo))
    npy_p = npy_protocol(objects())
    assert _pickle_findings(report) == {
        "models/clf.joblib": ("blocked", SYSTEM, "pickle protocol 4", None),
        "models/clf.sav": ("blocked", SYSTEM, "pickle protocol 2", None),
        "models/clf.pkl.gz": ("blocked", SYSTEM, "gzip > pickle protocol 4", None),
        "models/latest": ("blocked", SYSTEM, "pickle protocol 5", None),
        "models/weights.bin": ("blocked", SYSTEM, "pickle protocol 3", None),
        "models/notes.txt": ("blocked", SYSTEM, "pickle protocol 0/1", None),
        "data/objects.npy": ("blocked", SYSTEM, f"npy object array > pickle protocol {npy_p}", None),
        "data/bundle.npz": (
            "blocked",
            SYSTEM,
            f"objs.npy > npy object array > pickle protocol {npy_p}",
            None,
        ),
        "models/trunc.pkl": (
            "warning",
            None,
            "pickle protocol 4",
            "pickle protocol 4: ends at byte 9 before its STOP opcode",
        ),
        "models/cut": (
            "blocked",
            SYSTEM,
            "pickle protocol 4",
            f"pickle protocol 4: ends at byte {len(evil(4)) - 3} before its STOP opcode",
        ),
        "models/corrupt.pkl": (
            "warning",
            None,
            "pickle protocol 4",
            "pickle protocol 4: breaks at byte 3: ValueError: at position 2, opcode b'\\xff' unknown",
        ),
    }
    assert report.environment["pickle_files"] == "12"  # not the README, nor the float .npy / .npz (no pickle)
    checks = {c.evidence["file"]: c for c in report.checks if c.id == "HYG006" and c.verdict != "ok"}
    gz = checks["models/clf.pkl.gz"]
    assert gz.observed == f"unpickling imports {SYSTEM} (runs code) (in gzip > pickle protocol 4)"
    assert checks["models/cut"].observed == (
        f"unpickling imports {SYSTEM} (runs code); "
        f"unreadable pickle (pickle protocol 4: ends at byte {len(evil(4)) - 3} before its STOP opcode)"
    )
    assert checks["models/trunc.pkl"].fix == (
        "loading it fails where it breaks; replace it with a complete copy from its source, "
        "or git rm -r --cached -- models/trunc.pkl"
    )
    assert not (hostile_repo / "pwned").exists()


def test_cli_text_and_json(hostile_repo, cli):
    done = cli("hygiene", str(hostile_repo), cwd=str(hostile_repo))
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    at = lines.index("  BLOCKED HYG006  pickle checkpoint imports unsafe callables [models/clf.pkl.gz]")
    assert (
        lines[at + 1].split(":", 1)[1].strip()
        == f"unpickling imports {SYSTEM} (runs code) (in gzip > pickle protocol 4)"
    )
    assert "  WARNING HYG006  pickle checkpoint imports unsafe callables [models/trunc.pkl]" in lines

    done = cli("hygiene", str(hostile_repo), "--json", cwd=str(hostile_repo))
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    latest = next(c for c in report["checks"] if c["subject"] == "models/latest")
    assert (latest["id"], latest["verdict"]) == ("HYG006", "blocked")
    assert latest["evidence"] == {
        "file": "models/latest",
        "imports": SYSTEM,
        "streams": "1",
        "found_in": "pickle protocol 5",
    }
    assert latest["fix"] == (
        "do not load it: take it out with `git rm -r --cached -- models/latest` and find out "
        "where it came from"
    )
    assert not (hostile_repo / "pwned").exists()


def _gzip_bomb(claimed: int) -> bytes:
    """A gzip of a pickle whose first value is a BINBYTES8 of ``claimed`` zero bytes, with
    os.system behind it; built from concatenated gzip members (one 1 MiB block of zeros,
    compressed once), so nothing of that size is ever in memory here."""
    block = gzip.compress(b"\0" * (1 << 20))
    head = gzip.compress(b"\x80\x04\x8e" + claimed.to_bytes(8, "little"))
    tail = gzip.compress(b"0" + pickle.dumps(Evil("pwned"), protocol=2)[2:])  # POP, then the hostile call
    return head + block * (claimed >> 20) + tail


def test_gzip_bomb_is_read_to_the_limit_in_bounded_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(pickles, "MAX_STREAM_BYTES", 1 << 20)
    bomb = tmp_path / "repo" / "data.gz"
    bomb.parent.mkdir()
    bomb.write_bytes(_gzip_bomb(32 << 20))  # 32 MiB inflated, 33 KiB on disk
    monkeypatch.chdir(tmp_path)
    tracemalloc.start()
    try:
        result = pickles.scan_file(str(bomb))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20  # inflating it whole would take 32 MiB
    assert result.limit == "gzip > pickle protocol 4: stream larger than the scan limit"
    assert (result.imports, result.error) == ([], None)
    (finding,) = [c for c in scan(str(bomb.parent)).checks if c.id == "HYG006"]
    assert finding.verdict == "blocked"  # what lies past the limit would run on load, unseen
    assert (
        finding.observed
        == "not checked past a scan limit (gzip > pickle protocol 4: stream larger than the scan limit)"
    )
    assert not (tmp_path / "pwned").exists()


def test_zip_member_bomb_and_member_count_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(pickles, "MAX_STREAM_BYTES", 1 << 20)
    bomb = tmp_path / "bomb.pt"
    bomb.write_bytes(
        zip_bytes({"bomb/data.pkl": b"\x80\x02\x8e" + (8 << 20).to_bytes(8, "little") + b"\0" * (8 << 20)})
    )
    assert (
        pickles.scan_file(str(bomb)).limit
        == "bomb/data.pkl > pickle protocol 2: stream larger than the scan limit"
    )
    monkeypatch.setattr(pickles, "MAX_MEMBERS", 3)
    many = tmp_path / "many.npz"
    many.write_bytes(zip_bytes({f"a{i}.npy": npy_bytes(np.zeros(2)) for i in range(5)}))
    assert pickles.scan_file(str(many)).limit == "zip lists 5 members (limit 3)"


def test_nesting_depth_is_bounded(tmp_path):
    data = evil()
    for _ in range(pickles.MAX_DEPTH + 1):
        data = gzip.compress(data)
    (tmp_path / "deep").write_bytes(data)
    assert (
        pickles.scan_file(str(tmp_path / "deep")).limit
        == "gzip > gzip > gzip > gzip > gzip: containers nested deeper than 4"
    )


def test_stack_and_memo_limits_fail_closed(monkeypatch):
    monkeypatch.setattr(pickles, "MAX_STACK", 100)
    deep = b"\x80\x04" + b"N" * 200 + b"."
    assert (
        pickles.scan_bytes(deep).limit
        == "pickle protocol 4: more than 100 values on the pickle stack at byte 102"
    )
    # once the memo is full, a STACK_GLOBAL whose strings come back from it is unresolved (blocked)
    monkeypatch.setattr(pickles, "MAX_MEMO", 2)
    hidden = b"\x80\x04" + b"N\x94" * 2 + b"\x8c\x02os\x94\x8c\x06system\x94" + b"h\x02h\x03\x93N\x85R."
    result = pickles.scan_bytes(hidden)
    assert (result.unresolved, result.imports, result.streams) == (1, [], 1)


def test_opcodes_per_file_are_bounded(monkeypatch):
    monkeypatch.setattr(pickles, "MAX_OPCODES", 1000)
    busy = b"\x80\x04" + b"N0" * 1000 + b"N."  # NONE, POP: a flat stack, one opcode per byte
    assert pickles.scan_bytes(busy).limit == "pickle protocol 4: more than 1000 opcodes in one file"


def test_a_scan_stops_reading_pickles_when_its_budget_is_spent(tmp_path, monkeypatch):
    monkeypatch.setattr(pickles, "MAX_RUN_OPCODES", 3000)
    for name in ("a.pkl", "b.pkl", "c.pkl", "d.pkl"):
        (tmp_path / name).write_bytes(b"\x80\x04" + b"N0" * 600 + b"N.")  # 1203 opcodes each
    findings = {
        c.evidence["file"]: c.evidence["limit"] for c in scan(str(tmp_path)).checks if c.id == "HYG006"
    }
    assert findings == {  # a and b are read whole, c is cut, d is not started; c and d block
        "c.pkl": "pickle protocol 4: this scan's budget for pickles (3000 opcodes) is spent",
        "d.pkl": "not read: this scan's budget for pickles (3000 opcodes) is spent",
    }


def test_unread_formats_are_named_when_the_name_promises_a_pickle(tmp_path):
    (tmp_path / "clf.joblib").write_bytes(b"\x04\x22\x4d\x18" + b"\0" * 32)
    assert pickles.scan_file(str(tmp_path / "clf.joblib"), pickle_expected=True).limit == (
        "lz4-compressed (the standard library has no lz4 decoder)"
    )
    (tmp_path / "logs.lz4").write_bytes(b"\x04\x22\x4d\x18" + b"\0" * 32)
    assert pickles.scan_file(str(tmp_path / "logs.lz4")) == pickles.PickleScan()


@pytest.mark.parametrize(
    "data",
    [
        b"\x8c\x05posix\x8c\x06system\x93\x8c\x0btouch pwned\x85R\xff",  # binary opcodes, no PROTO
        b"cposix\nsystem\n(S'touch pwned'\ntR\xff",  # protocol 0
    ],
    ids=["binary", "protocol 0"],
)
def test_a_pickle_without_proto_or_stop_counts_once_it_has_called_an_import(tmp_path, monkeypatch, data):
    # pickle.loads runs os.system at R, then fails on the bad opcode: nothing promises a pickle
    # here (no PROTO, no STOP, no name), but the call was reached
    (tmp_path / "blob").write_bytes(data)
    monkeypatch.chdir(tmp_path)
    assert pickles.sniff(data) == "pickle"
    result = pickles.scan_file(str(tmp_path / "blob"))
    assert result.imports == ["posix system"] and result.streams == 0
    end = len(data)
    assert result.error == (
        f"pickle protocol 0/1: breaks at byte {end}: "
        f"ValueError: at position {end - 1}, opcode b'\\xff' unknown"
    )
    assert not (tmp_path / "pwned").exists()


def test_look_alikes_are_not_pickles(tmp_path):
    plain = {
        "words.txt": b"cat\ndog\nemu\nfox\n",  # a GLOBAL at.dog, then no call: nothing runs
        "relnotes.txt": b"Git v2.31.7 Release Notes\n",  # a BINFLOAT and a STOP: a pickle of a float
        "notes.md": b"x^2 + y^2 = r^2\n",  # a valid zlib header, not a zlib stream
        "copyright.txt": b"(c) 2024 Example Corp\nAll rights reserved.\n",
        "script.py": b"import os\nprint(os.getcwd())\n",
        "archive.gz": gzip.compress(b"a,b\n1,2\n"),
        "table.npy": npy_bytes(np.zeros((4, 2), dtype=[("a", "f4"), ("b", "i8")])),
        "empty.zip": zip_bytes({}),
        "random.bin": bytes(range(256)) * 4,
    }
    for name, data in plain.items():
        (tmp_path / name).write_bytes(data)
        assert pickles.scan_file(str(tmp_path / name)) == pickles.PickleScan(), name


_MAGICS = [
    b"\x80\x04",
    b"\x1f\x8b\x08\x00",
    b"BZh9",
    b"\xfd7zXZ\x00",
    b"\x5d\x00\x00",
    b"x\x9c",
    b"PK\x03\x04",
    b"\x93NUMPY\x01\x00",
    b"(",
    b"c",
]


@given(st.sampled_from(_MAGICS), st.binary(max_size=600))
@settings(max_examples=300, deadline=None)
def test_garbage_behind_any_magic_never_raises(magic, body):
    with tempfile.NamedTemporaryFile() as fh:
        fh.write(magic + body)
        fh.flush()
        result = pickles.scan_file(fh.name, pickle_expected=True)
    assert result.error is None or isinstance(result.error, str)


def _arrays():
    return {
        "w": np.arange(6, dtype="f8").reshape(2, 3),
        "names": np.array(["ab", "c"]),
        "objs": np.array([1, "x", None], dtype=object),
        "rec": np.zeros(3, dtype=[("a", "f4"), ("b", "i8", (2,))]),
        "fortran": np.asfortranarray(np.ones((3, 2), dtype="i2")),
    }


@pytest.mark.parametrize("compress", [0, "zlib", "gzip", "bz2", "lzma", "xz"])
def test_joblib_files_are_read_past_their_arrays(tmp_path, monkeypatch, compress):
    joblib = pytest.importorskip("joblib")
    kind = "" if compress == 0 else f"{compress} > "
    monkeypatch.chdir(tmp_path)
    joblib.dump(_arrays(), tmp_path / "clean.joblib", compress=(compress, 3) if compress else 0)
    clean = pickles.scan_file(str(tmp_path / "clean.joblib"), pickle_expected=True)
    assert (clean.unsafe(), clean.streams, clean.error, clean.limit) == ([], 1, None, None)
    assert clean.found_in == [f"{kind}pickle protocol {pickle.DEFAULT_PROTOCOL}"]
    # the hostile object sits behind every kind of array joblib writes into the stream
    joblib.dump(
        {**_arrays(), "hook": Evil("pwned")},
        tmp_path / "model.joblib",
        compress=(compress, 3) if compress else 0,
    )
    hostile = pickles.scan_file(str(tmp_path / "model.joblib"), pickle_expected=True)
    assert [f"{m}.{n}" for m, n in hostile.unsafe()] == [SYSTEM]
    assert (hostile.streams, hostile.error, hostile.limit) == (1, None, None)
    assert not (tmp_path / "pwned").exists()


TORCH_MAKE = r"""
import os, sys, torch
out = sys.argv[1]
class Evil:
    def __reduce__(self):
        return (os.system, ("touch pwned",))
sd = torch.nn.Linear(4, 2).state_dict()
torch.save({"state": sd, "hook": Evil()}, os.path.join(out, "ckpt.tar"))
torch.save(sd, os.path.join(out, "clean.pt"))
torch.jit.save(torch.jit.script(torch.nn.Linear(3, 2)), os.path.join(out, "scripted.pt"))
"""


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_torch_zip_checkpoints(tmp_path, monkeypatch):
    out = tmp_path / "ckpts"
    out.mkdir()
    subprocess.run([sys.executable, "-c", TORCH_MAKE, str(out)], check=True, timeout=300, capture_output=True)
    monkeypatch.chdir(out)
    findings = {
        c.evidence["file"]: c for c in scan(str(out)).checks if c.id == "HYG006" and c.verdict != "ok"
    }
    assert list(findings) == ["ckpt.tar"]  # the state dict and the TorchScript archive are clean
    assert findings["ckpt.tar"].evidence == {
        "file": "ckpt.tar",
        "imports": SYSTEM,
        "streams": "1",
        "found_in": "ckpt/data.pkl > pickle protocol 2",
    }
    scripted = pickles.scan_file(str(out / "scripted.pt"))
    assert scripted.unsafe() == [] and "scripted/constants.pkl > pickle protocol 2" in scripted.found_in
    assert not (out / "pwned").exists()
