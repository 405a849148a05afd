"""Triage's evidence patterns run in linear time on any text (RE2): long lines of ``/`` or
``~`` took quadratic time in the site-packages search (55 s for a 100 KB line). The tests
only need to finish (a generous timeout, no timed assertion)."""

from __future__ import annotations

import pytest

from stackcheck.triage import triage_text
from stackcheck.triage.evidence import (
    _BY_TORCH,
    _IN_USE,
    _UNALLOCATED,
    _grab,
    traceback_environment,
    traceback_environments,
)

MB3 = 3 * 1024 * 1024


@pytest.mark.timeout(30)
@pytest.mark.parametrize("char", ["/", "~", "\\", '"'])
def test_site_search_on_a_3_mb_line_finishes(char):
    assert traceback_environments(char * MB3) == set()
    assert traceback_environment(char * MB3) is None


@pytest.mark.timeout(30)
def test_site_search_still_finds_every_prefix_in_a_huge_text():
    frame = ' File "/opt/conda/lib/python3.10/site-packages/torch/x.py"\n'
    text = ("/" * MB3) + frame + ("~" * MB3) + "\n~/venv/lib/python3.12/site-packages/a.py"
    assert traceback_environments(text) == {"/opt/conda", "~/venv"}


@pytest.mark.timeout(60)
def test_triage_of_a_2_4_mb_traceback_of_slashes_finishes():
    log = "Traceback (most recent call last):\n" + ("  " + "/" * 4094 + "\n") * 586 + "ValueError: x\n"
    assert len(log) > 2_400_000
    diagnosis = triage_text(log)
    assert (diagnosis.matches, diagnosis.regions_found, diagnosis.lines_read) == ([], 1, 588)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("pattern", [_IN_USE, _BY_TORCH, _UNALLOCATED])
def test_oom_figures_on_a_long_run_of_digits_finish(pattern):
    assert _grab(pattern, "1." * (MB3 // 2)) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('File "/opt/conda/lib/python3.10/site-packages/torch/nn.py", line 1', "/opt/conda"),
        ("File /srv/env/lib/site-packages/x.py", "/srv/env"),  # bare (Jupyter), no pythonX.Y
        ("/at/start/lib/python3.11/dist-packages/x.py", "/at/start"),  # the very start of the text
        ("word/usr/lib/python3.11/site-packages/x.py", None),  # inside a word: not a frame's path
        ('File "C:\\Program Files\\Py\\Lib\\site-packages\\x.py"', "C:\\Program Files\\Py"),
    ],
)
def test_site_search_keeps_its_meaning(text, expected):
    assert traceback_environment(text) == expected


def test_oom_figures_are_still_read():
    detail = (
        "this process has 70.31 GiB memory in use. Of the allocated memory 69.50 GiB is allocated by "
        "PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated."
    )
    assert [_grab(p, detail) for p in (_IN_USE, _BY_TORCH, _UNALLOCATED)] == [
        int(70.31 * 2**30),
        int(69.50 * 2**30),
        300 * 2**20,
    ]
