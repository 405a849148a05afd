"""Exact triage scores and confidence steps: the environment's +25 / 0 / −25 and one
confidence step, and the +5 per further matching signature of a rule (at most +10).

The ranking tests elsewhere compare scores with `<`; these pin the numbers, so a dropped
contradiction penalty or a dropped multi-signature bonus fails here.
"""

from __future__ import annotations

import pytest

from stackcheck.environment import load_snapshot
from stackcheck.triage import triage_text
from stackcheck.triage.ranking import shifted_confidence

from .conftest import SNAPSHOTS, TRIAGE_DATA
from .test_ranking import DRIVER_AND_MODULE


def matches(text: str, snapshot_name: str | None = None) -> dict[str, tuple[float, str, str]]:
    snapshot = load_snapshot(str(SNAPSHOTS / snapshot_name)) if snapshot_name else None
    return {
        m.rule_id: (m.score, m.confidence, m.environment)
        for m in triage_text(text, snapshot=snapshot).matches
    }


# ---------------------------------------------------------------- the environment's points
def test_driver_too_old_scores_plus_and_minus_25_around_not_judged():
    """KB003 (confidence high, one signature of 60 literal characters: 15 + 30 = 45)."""
    assert matches(DRIVER_AND_MODULE)["KB003"] == (45.0, "high", "not-judged")
    assert matches(DRIVER_AND_MODULE, "old-driver-470-cu121.json")["KB003"] == (70.0, "high", "agrees")
    assert matches(DRIVER_AND_MODULE, "h200-drv580-cu130.json")["KB003"] == (20.0, "medium", "contradicts")


def test_module_rule_is_judged_by_its_reading_not_the_driver():
    """KB101 in the same log: the interpreters' reading agrees on both machines (+25)."""
    assert matches(DRIVER_AND_MODULE)["KB101"] == (42.0, "high", "not-judged")
    assert matches(DRIVER_AND_MODULE, "old-driver-470-cu121.json")["KB101"] == (67.0, "high", "agrees")
    assert matches(DRIVER_AND_MODULE, "h200-drv580-cu130.json")["KB101"] == (67.0, "high", "agrees")


def test_contradiction_reorders_the_driver_rule_below_the_module_rule():
    old = triage_text(DRIVER_AND_MODULE, snapshot=load_snapshot(str(SNAPSHOTS / "old-driver-470-cu121.json")))
    new = triage_text(DRIVER_AND_MODULE, snapshot=load_snapshot(str(SNAPSHOTS / "h200-drv580-cu130.json")))
    assert [m.rule_id for m in old.matches] == ["KB003", "KB101"]
    assert [m.rule_id for m in new.matches] == ["KB101", "KB003"]


def test_cpu_torch_on_a_cpu_only_machine_loses_25_and_one_confidence_step():
    text = (TRIAGE_DATA / "torch-cpu-build.txt").read_text()
    assert matches(text)["KB115"] == (39.0, "high", "not-judged")
    assert matches(text, "cpu-laptop.json")["KB115"] == (14.0, "medium", "contradicts")


def test_agreement_raises_a_medium_rule_one_step():
    text = (TRIAGE_DATA / "libcudart-10-mmcv.txt").read_text()
    assert matches(text) == {"KB103": (60.0, "high", "not-judged"), "KB104": (29.75, "medium", "not-judged")}
    assert matches(text, "h100-single.json") == {
        "KB103": (85.0, "high", "agrees"),
        "KB104": (54.75, "high", "agrees"),
    }


@pytest.mark.parametrize(
    "confidence, agreement, shown",
    [
        ("low", -1, "low"),
        ("low", 0, "low"),
        ("low", 1, "medium"),
        ("medium", -1, "low"),
        ("medium", 0, "medium"),
        ("medium", 1, "high"),
        ("high", -1, "medium"),
        ("high", 0, "high"),
        ("high", 1, "high"),
    ],
)
def test_confidence_moves_exactly_one_step_and_stays_in_range(confidence, agreement, shown):
    assert shifted_confidence(confidence, agreement) == shown


# ---------------------------------------------------------------- further signatures of one rule
# KB002's three signatures (the K80 warning torch prints; its install hint; the kernel error).
K80 = (
    "UserWarning: Found GPU0 Tesla K80 which is of cuda capability 3.7. Minimum and Maximum cuda capability "
    "supported by this version of PyTorch is (5.0) - (9.0)\n"
)
HINT = "Please install PyTorch with a following CUDA configurations: 11.8 following instructions at https://pytorch.org/get-started/locally/\n"
NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
# KB001's first signature (its second is NO_KERNEL).
SM120 = (
    "UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 "
    "is not compatible with the current PyTorch installation.\n"
)


def test_each_further_signature_adds_5_points():
    assert matches(K80) == {"KB002": (58.75, "high", "not-judged")}  # 28.75 + 30
    assert matches(K80 + HINT) == {"KB002": (63.75, "high", "not-judged")}
    assert matches(K80 + HINT + NO_KERNEL)["KB002"] == (
        68.75,
        "high",
        "not-judged",
    )  # +10, the cap of 2 further
    assert matches(SM120) == {"KB001": (50.0, "high", "not-judged")}
    assert matches(SM120 + NO_KERNEL) == {
        "KB001": (55.0, "high", "not-judged"),
        "KB002": (44.0, "high", "not-judged"),
    }


def test_second_signature_breaks_a_tie_between_two_rules():
    """The kernel error alone matches KB001 and KB002 equally; KB002's install hint as well
    puts it 5.5 ahead (+5 for the second signature, its longer literal decides the rest)."""
    alone = triage_text(NO_KERNEL).matches
    assert [(m.rule_id, m.score) for m in alone] == [("KB001", 44.0), ("KB002", 44.0)]
    both = triage_text(HINT + NO_KERNEL).matches
    assert [(m.rule_id, m.score) for m in both] == [("KB002", 49.5), ("KB001", 44.0)]
