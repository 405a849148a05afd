"""Wheel tags against the checked interpreter and platform (from snapshot facts)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stackcheck.deps.wheeltags import Target, wheel_fits
from tests.factories import make_snapshot


def target(
    python="3.12.3",
    system="Linux",
    machine="x86_64",
    glibc="2.31",
    soabi="cpython-312-x86_64-linux-gnu",
    tag="linux-x86_64",
):
    snap = make_snapshot(python=python, system=system, machine=machine, glibc=glibc)
    snap.python.soabi = soabi
    snap.python.platform_tag = tag
    return Target(snap)


@pytest.mark.parametrize(
    "tag, fits",
    [
        ("py3-none-any", True),
        ("py2.py3-none-any", True),
        ("cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64", True),
        ("cp312-cp312-manylinux1_x86_64", True),
        ("cp38-abi3-manylinux_2_17_x86_64", True),
        ("cp311-cp311-manylinux_2_17_x86_64", False),  # another CPython minor
        ("cp313-abi3-manylinux_2_17_x86_64", False),  # abi3 built for a newer minimum
        ("cp312-cp312-manylinux_2_34_x86_64", False),  # needs glibc 2.34, machine has 2.31
        ("cp312-cp312-manylinux_2_17_aarch64", False),
        ("cp312-cp312-musllinux_1_2_x86_64", False),
        ("cp312-cp312-macosx_11_0_arm64", False),
        ("cp312-cp312-win_amd64", False),
        ("cp312-cp312t-manylinux_2_17_x86_64", False),  # free-threaded ABI
        ("pp310-pypy310_pp73-manylinux_2_17_x86_64", False),
        ("py2-none-any", False),
    ],
)
def test_linux_cpython(tag, fits):
    assert wheel_fits([tag], target()) is fits


def test_macos_and_windows():
    mac = target(
        system="Darwin", machine="arm64", glibc="", tag="macosx-14.0-arm64", soabi="cpython-312-darwin"
    )
    assert wheel_fits(["cp312-cp312-macosx_11_0_arm64"], mac)
    assert wheel_fits(["cp312-cp312-macosx_10_9_universal2"], mac)
    assert not wheel_fits(["cp312-cp312-macosx_10_9_x86_64"], mac)
    win = target(system="Windows", machine="AMD64", glibc="", tag="win-amd64", soabi="")
    assert wheel_fits(["cp312-cp312-win_amd64"], win)
    assert not wheel_fits(["cp312-cp312-win32"], win)


def test_unknown_is_not_a_fault():
    assert wheel_fits([], target()) is None
    assert wheel_fits(["not a tag"], target()) is None
    assert wheel_fits(["cp312-cp312-some_future_platform"], target()) is True
    assert wheel_fits(["cp312-cp312-manylinux_2_99_x86_64"], target(glibc="")) is True  # libc unknown


@given(st.lists(st.text(max_size=40), max_size=4), st.sampled_from(["3.12.3", "3.8.0", "", "garbage"]))
def test_never_raises(tags, python):
    assert wheel_fits(tags, target(python=python)) in (True, False, None)
