"""Compare flags a regression only beyond the measured noise, and names what changed.

The timings come from a deterministic fake clock: a real kernel runs, then "sleeps" a chosen
cost with seeded lognormal noise, so a 30 % slowdown and pure noise are reproducible exactly.
"""

from __future__ import annotations

import msgspec
import pytest

from stackcheck.bench.cases import backends_named
from stackcheck.bench.compare import compare, text
from stackcheck.bench.run import BenchRun, CaseResult, run_suite
from tests.bench.conftest import ATTN, GEMM, FakeClock, sleeping

pytest.importorskip("scipy")
pytest.importorskip("torch")

ENV = {"torch": "2.13.0+cpu", "package.torch": "2.13.0+cpu", "driver": "", "python": "3.11.7"}


def timed_run(cpu, cost_s: float, seed: int, *, reps: int = 20, env=ENV, **noise) -> BenchRun:
    clock = FakeClock()
    cases = run_suite(
        backends_named(["sdpa-math", "matmul-fp32"]),
        [ATTN, GEMM],
        device=cpu,
        reps=reps,
        warmup=1,
        clock=clock,
        prepare=sleeping(clock, cost_s, seed=seed, **noise),
    )
    return BenchRun(device=cpu.as_dict(), environment=dict(env), cases=cases)


def test_a_30_percent_slowdown_is_flagged_naming_backend_shape_and_environment(cpu):
    base = timed_run(cpu, 0.010, seed=1)
    slow = timed_run(cpu, 0.013, seed=2, env={**ENV, "package.torch": "2.14.0", "torch": "2.14.0"})
    c = compare(base, slow)
    assert (c.regressions, c.improvements) == (2, 0)
    assert [(x.backend, x.shape, x.verdict) for x in c.cases] == [
        ("sdpa-math", "attn-tiny", "regression"),
        ("matmul-fp32", "gemm-tiny", "regression"),
    ]
    for x in c.cases:
        assert x.ratio == pytest.approx(1.3, abs=0.05) and x.p_value < 1e-6
        assert x.why == f"slower: median {x.ratio - 1:+.1%}, p = {x.p_value:.2g}"
    assert [(e.field, e.baseline, e.current) for e in c.environment] == [
        ("package.torch", "2.13.0+cpu", "2.14.0"),
        ("torch", "2.13.0+cpu", "2.14.0"),
    ]
    out = text(c)
    assert out.startswith(
        "2 regressions, 0 improvements in 2 cases (Mann-Whitney U, alpha 0.01, minimum effect 5%)\n"
    )
    assert "  attention/sdpa sdpa-math × attn-tiny: slower: median +" in out
    assert out.endswith(
        "environment changes:\n  package.torch: 2.13.0+cpu → 2.14.0\n  torch: 2.13.0+cpu → 2.14.0\n"
    )


def test_repeat_runs_of_the_same_code_are_never_flagged(cpu):
    runs = [timed_run(cpu, 0.010, seed=s, sigma=0.08, spike_every=7) for s in range(8)]
    verdicts = [x.verdict for a, b in zip(runs, runs[1:]) for x in compare(a, b).cases]
    assert verdicts == ["same"] * 14
    # and the same noise around a real 30 % slowdown is flagged every time
    slow = [timed_run(cpu, 0.013, seed=100 + s, sigma=0.08, spike_every=7) for s in range(7)]
    assert [compare(a, b).regressions for a, b in zip(runs, slow)] == [2] * 7


def test_a_small_real_shift_is_not_a_regression(cpu):
    base = timed_run(cpu, 0.010, seed=1, sigma=0.005)
    nudged = timed_run(cpu, 0.0102, seed=2, sigma=0.005)
    c = compare(base, nudged)
    assert c.regressions == 0
    assert [x.verdict for x in c.cases] == ["same", "same"]
    assert all(x.why.endswith(": a real shift, under the 5% minimum") for x in c.cases)
    assert compare(base, nudged, min_effect=0.01).regressions == 2


def test_faster_is_an_improvement(cpu):
    c = compare(timed_run(cpu, 0.010, seed=1), timed_run(cpu, 0.007, seed=2))
    assert (c.regressions, c.improvements) == (0, 2)


def _case(status, reason="", times=(), backend="eager", shape="s") -> CaseResult:
    return CaseResult(
        backend=backend,
        group="attention/eager",
        op="attention",
        shape=shape,
        dtype="float32",
        status=status,
        reason=reason,
        times_s=list(times),
        stats={"median": sorted(times)[len(times) // 2]} if times else {},
    )


def test_status_changes_new_gone_and_too_few_repetitions():
    ok = _case("ok", times=[1.0] * 10)
    base = BenchRun(
        cases=[ok, _case("ok", times=[1.0] * 3, shape="few"), _case("ok", times=[1.0] * 9, shape="old")]
    )
    cur = BenchRun(
        cases=[
            _case("wrong", "max error 0.1 exceeds the float32 bound 0.0001"),
            _case("ok", times=[1.0] * 9, shape="few"),
            _case("skipped", "not installed: xformers (pip install xformers)", backend="xformers", shape="s"),
        ]
    )
    got = [(x.backend, x.shape, x.verdict, x.why) for x in compare(base, cur).cases]
    assert got == [
        ("eager", "s", "regression", "was ok, now wrong: max error 0.1 exceeds the float32 bound 0.0001"),
        ("eager", "few", "not-judged", "3 repetitions; at least 5 on each side to test"),
        ("eager", "old", "gone", "not in the current run"),
        ("xformers", "s", "new", "not in the baseline"),
    ]


def test_cli_compare_exit_1_on_regression_0_on_noise(cli_main, tmp_path, cpu):
    paths = {}
    for name, cost, seed in (("base", 0.010, 1), ("again", 0.010, 2), ("slow", 0.013, 3)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_bytes(msgspec.json.encode(timed_run(cpu, cost, seed)))
    code, out, err = cli_main("bench", "compare", str(paths["base"]), str(paths["again"]))
    assert (code, err) == (0, "")
    assert out.startswith("0 regressions, 0 improvements in 2 cases")
    assert "environment: no change between the runs" in out
    code, out, _ = cli_main("bench", "compare", str(paths["base"]), str(paths["slow"]), "--json")
    doc = msgspec.json.decode(out)
    assert code == 1 and doc["regressions"] == 2
    assert [c["verdict"] for c in doc["cases"]] == ["regression", "regression"]
    code, _, err = cli_main("bench", "compare", str(paths["base"]), str(tmp_path / "none.json"))
    assert code == 2 and err.count("\n") == 1 and "none.json: no such bench run" in err


def test_several_baselines_raise_the_bar_by_their_run_to_run_drift(cpu):
    quiet = dict(sigma=0.01)
    drifting = [timed_run(cpu, 0.010, seed=1, **quiet), timed_run(cpu, 0.011, seed=2, **quiet)]
    within = timed_run(cpu, 0.0112, seed=3, **quiet)  # ~7 % over the pooled median, drift is 10 %
    c = compare(drifting, within)
    assert c.regressions == 0 and [x.verdict for x in c.cases] == ["same", "same"]
    for x in c.cases:  # the drift measured between the baselines (~10 %) is the bar
        shown = x.why.split("baseline runs drift ")[1].split(":")[0]
        drift = float(shown.rstrip("%")) / 100
        assert 0.08 < drift < 0.12 and 1.05 < x.ratio < 1 + drift
        assert x.why.endswith(f"baseline runs drift {shown}: a real shift, under the {shown} minimum")
    assert compare(drifting[1], within).regressions == 0  # 2 % over the newest alone: under 5 %
    assert compare(drifting[0], within).regressions == 2  # 12 % over the older alone
    beyond = timed_run(cpu, 0.013, seed=4, **quiet)
    c = compare(drifting, beyond)
    assert c.regressions == 2 and all(x.ratio > 1.2 for x in c.cases)


def test_cli_compare_takes_several_baselines(cli_main, tmp_path, cpu):
    paths = []
    for i, cost in enumerate((0.010, 0.011, 0.0112)):
        paths.append(tmp_path / f"run{i}.json")
        paths[-1].write_bytes(msgspec.json.encode(timed_run(cpu, cost, seed=i, sigma=0.01)))
    code, out, _ = cli_main("bench", "compare", *map(str, paths))
    assert code == 0 and out.startswith("0 regressions, 0 improvements in 2 cases")
    code, out, err = cli_main("bench", "compare", str(paths[0]))
    assert (code, out) == (2, "") and "give at least one BASELINE and the CURRENT run" in err
