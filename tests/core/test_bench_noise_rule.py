"""benchmarks/_refenv.py's noise rule: a ratio is printed only from a run where the load, less
the benchmark's own process, stayed at or under the cores and every command compared had
(max - min) / median <= 1; otherwise NOISY and exit 3, unless --force. (Timings here are
given, never measured.)"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "refenv", Path(__file__).parents[2] / "benchmarks" / "_refenv.py"
)
refenv = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(refenv)


@pytest.fixture
def load(monkeypatch):
    """load.value is what os.getloadavg() says; the machine has 4 cores."""
    state = type("Load", (), {"value": 1.0})()
    monkeypatch.setattr(refenv, "machine_load", lambda: (state.value, 4))
    return state


def bench(load, *, force=False, at_start=1.0, at_end=1.0, **samples):
    b = refenv.Bench(force=force)
    load.value = at_start
    b.load("at start")
    for label, values in samples.items():
        b.add(label, values)
    load.value = at_end
    b.load("at end")
    return b


def test_spread_is_max_minus_min_over_median():
    assert refenv.spread([1.0, 2.0, 3.0]) == 1.0
    assert refenv.spread([0.010, 0.011, 0.012]) == pytest.approx(0.002 / 0.011)
    assert refenv.summary([3.0, 1.0, 2.0]) == {"median": 2.0, "min": 1.0, "max": 3.0, "spread": 1.0}


def test_a_quiet_run_reports_its_ratio(load):
    b = bench(load, a=[1.0, 1.1, 1.2], b=[2.0, 2.0, 3.0])
    assert b.noise("a", "b") == []
    assert (
        b.budget_line("a / b", 0.5, ("a", "b"), "budget <= 1x", True)
        == "  a / b =   0.50x   (budget <= 1x)   PASS"
    )
    b.finish()  # nothing withheld: returns


def test_load_over_the_cores_at_start_or_end_withholds(load, capsys):
    for start, end in ((5.5, 1.0), (1.0, 5.01)):
        b = bench(load, at_start=start, at_end=end, a=[1.0], b=[1.0])
        assert b.noise("a") == [f"load {max(start, end):.2f} - 1 (this benchmark) > 4 cores"]
        line = b.budget_line("a / b", 1.0, ("a", "b"), "budget <= 2x", True)
        assert line == (
            "  a / b = NOISY — not reported, rerun on a quieter machine "
            f"(load {max(start, end):.2f} - 1 (this benchmark) > 4 cores)"
        )
        with pytest.raises(SystemExit) as done:
            b.finish()
        assert done.value.code == refenv.EXIT_NOISY == 3
    assert "1 ratio(s) withheld by the noise rule" in capsys.readouterr().out


def test_a_wide_spread_withholds_only_the_ratios_it_is_part_of(load):
    b = bench(load, steady=[1.0, 1.0, 1.0], wild=[1.0, 2.5, 1.2], other=[2.0, 2.0, 2.0])
    assert b.noise("steady", "other") == []
    assert b.noise("steady", "wild") == ["wild: (max-min)/median = 1.25 > 1"]
    assert b.ratio(1.0, "steady", "wild") is None and b.withheld == 1
    assert b.ratio(0.5, "steady", "other") == "  0.50x" and b.withheld == 1


def test_exactly_at_the_limits_is_reported(load):
    b = bench(
        load, at_start=5.0, at_end=5.0, a=[1.0, 1.5, 2.0]
    )  # the benchmark's own 1 + 4 cores of other work
    assert b.noise("a") == []


def test_force_reports_and_marks_the_figure(load):
    b = bench(load, force=True, at_end=6.0, a=[1.0], b=[1.0])
    line = b.line("per dist", "0.0400 ms", ("a", "b"), "budget <= 0.05 ms", True)
    assert (
        line == "  per dist = 0.0400 ms   (budget <= 0.05 ms)   PASS "
        " [forced: load 6.00 - 1 (this benchmark) > 4 cores]"
    )
    b.finish()  # forced: no exit 3
    assert b.withheld == 0


def test_interleave_gives_each_step_its_runs_in_turn(load):
    order = []
    results = refenv.interleave(
        {"x": lambda i: order.append(("x", i)), "y": lambda i: order.append(("y", i))}, 2
    )
    assert order == [("x", -1), ("y", -1), ("x", 0), ("y", 0), ("x", 1), ("y", 1)]
    assert set(results) == {"x", "y"} and set(results["x"]) == {"median", "min", "max", "spread"}
