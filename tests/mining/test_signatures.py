"""Masks, templates, patterns and signatures: what is kept, what is masked, what matches."""

from __future__ import annotations

import pytest
import re2
from hypothesis import given
from hypothesis import strategies as st

from stackcheck.mining.masks import Masker, mask, template_regex
from stackcheck.mining.signature import Failure, frame_name, in_app, normalize_test

# real lines (the matrix's, PyTorch/NCCL issue texts as triage's corpus has them)
CASES = [
    (
        "AttributeError: `np.float_` was removed in the NumPy 2.0 release. Use `np.float64` instead.",
        "AttributeError: `np.float_` was removed in the NumPy <*> release. Use `np.float64` instead.",
    ),
    (
        "OSError: /usr/local/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
        "_ZN3c104cuda20CUDACachingAllocator9allocatorE",
        "OSError: libtorch_cuda.so: undefined symbol: _ZN3c104cuda20CUDACachingAllocator9allocatorE",
    ),
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. "
        "GPU 0 has a total capacity of "
        "79.15 GiB of which 6.56 MiB is free.",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate <*> MiB. "
        "GPU <*> has a total capacity of "
        "<*> GiB of which <*> MiB is free.",
    ),
    (
        "[rank3]: RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
        "unhandled cuda error, NCCL version 2.19.3",
        "[rank<NUM>]: RuntimeError: NCCL error in: "
        "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:<NUM>, "
        "unhandled cuda error, NCCL version <*>",
    ),
    (
        "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory",
        "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory",
    ),
    (
        "RuntimeError: CUDA error: an illegal memory access at 0x7f3a2c000000 "
        "(took 1.5s, rank=2, /tmp/tmpk2j4x9ab)",
        "RuntimeError: CUDA error: an illegal memory access at <*> (took <NUM>s, rank=<NUM>, <*>",
    ),
    ("Process completed with exit code 137.", "Process completed with exit code 137."),
    (
        "sm_120 is not compatible; errno 28 on cuda:1 at 2023-09-21T17:21:33.6742923Z",
        "sm_120 is not compatible; errno 28 on cuda:<NUM> at <*>",
    ),
]


@pytest.mark.parametrize("line, masked", CASES)
def test_masks_keep_names_codes_and_symbols_and_mask_the_rest(line, masked):
    assert mask(line) == masked


@pytest.mark.parametrize("line, masked", CASES)
def test_the_pattern_of_a_template_compiles_in_re2_and_matches_its_line(line, masked):
    pattern = template_regex(masked)
    assert re2.compile(pattern).search(line) is not None


def test_a_pattern_does_not_match_another_library_or_symbol():
    pattern = re2.compile(template_regex(mask(CASES[1][0])))
    assert pattern.search(CASES[1][0].replace("libtorch_cuda.so", "libc10_cuda.so")) is None
    assert pattern.search(CASES[1][0].replace("9allocatorE", "8allocateE")) is None


def test_extra_patterns_run_after_timestamps():
    masker = Masker([r"blk_-?\d+"])
    assert (
        masker("Receiving block blk_-160899 at 2008-11-09 20:35:18 size 91178")
        == "Receiving block <*> at <*> size <*>"
    )


def test_long_templates_are_cut_but_still_match():
    line = "ValueError: " + " ".join(f"word{i}" for i in range(200))
    pattern = template_regex(mask(line), max_chars=100)
    assert len(pattern) < 400 and re2.compile(pattern).search(line)


@given(st.text(max_size=200))
def test_every_template_gives_a_pattern_re2_accepts_and_matches_with_its_loose_form(text):
    text = " ".join(text.split())  # one line, as the reader gives it
    masked = mask(text)
    for loose in (False, True):
        pattern = template_regex(masked, loose=loose)
        compiled = re2.compile(pattern)  # never a pattern RE2 rejects
        if loose and pattern:
            assert compiled.search(text) is not None


def test_frames_and_in_app():
    assert in_app("src/matrixpkg/stats.py") and in_app("tests/test_x.py")
    assert not in_app("../venv-3.11-2.2.6/lib/python3.11/site-packages/numpy/__init__.py")
    assert not in_app("/usr/lib/python3.11/importlib/__init__.py") and not in_app("<frozen runpy>")
    assert frame_name("/home/runner/work/repo/repo/src/pkg/stats.py", "mean") == "src/pkg/stats.py:mean"
    assert frame_name("/Users/me/x/y/z.py", "f") == "x/y/z.py:f"
    assert frame_name("./tests/test_a.py", "test_b") == "tests/test_a.py:test_b"


def test_pytest_node_ids_and_junit_names_agree():
    assert normalize_test("tests/test_stats.py::test_total") == normalize_test("tests.test_stats::test_total")
    assert normalize_test("tests/test_x.py::TestA::test_b[1-2]") == "tests.test_x.TestA.test_b[1-2]"


def test_the_key_is_the_same_whatever_the_numbers():
    a = Failure(
        "RuntimeError", "CUDA out of memory. Tried to allocate 20.00 MiB", ("src/a.py:f",), test="t::x"
    )
    b = Failure("RuntimeError", "CUDA out of memory. Tried to allocate 1.50 MiB", ("src/a.py:f",), test="t.x")
    c = Failure("RuntimeError", "CUDA out of memory. Tried to allocate 1.50 MiB", ("src/a.py:g",), test="t.x")
    assert a.key == b.key != c.key
    assert a.example == "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB"
