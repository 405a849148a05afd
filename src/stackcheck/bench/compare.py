"""``bench compare``: a regression only when the difference is larger than the measured noise.

Two runs of a case are compared on their repetitions, not their medians alone: a two-sided
Mann-Whitney U test (``scipy.stats.mannwhitneyu``) says whether the two samples differ at all,
and the change of the median must also exceed a minimum effect size. Both must hold: the test
alone flags 1 % shifts on quiet machines, a threshold alone flags noise on loud ones. A case
that was ok and now is wrong, skipped or broken is a regression whatever its timing. Each
verdict names the backend and shape, and the report names what changed in the environment
between the two runs (package versions, driver, torch build).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from stackcheck.bench.run import BenchRun, CaseResult

__all__ = ["CaseChange", "Comparison", "compare", "text"]

ALPHA = 0.01
MIN_EFFECT = 0.05  # 5 % slower (or faster) median at least
MIN_REPS = 5

Verdict = Literal["regression", "improvement", "same", "new", "gone", "not-judged"]


class CaseChange(msgspec.Struct, kw_only=True):
    backend: str
    group: str
    shape: str
    verdict: Verdict
    why: str
    baseline_status: str = ""
    current_status: str = ""
    baseline_median_s: float | None = None
    current_median_s: float | None = None
    ratio: float | None = None  # current / baseline median
    p_value: float | None = None


class EnvChange(msgspec.Struct, kw_only=True):
    field: str
    baseline: str | None
    current: str | None


class Comparison(msgspec.Struct, kw_only=True):
    alpha: float
    min_effect: float
    regressions: int
    improvements: int
    cases: list[CaseChange]
    environment: list[EnvChange]
    device: list[EnvChange]


def compare(
    baseline: BenchRun | list[BenchRun],
    current: BenchRun,
    *,
    alpha: float = ALPHA,
    min_effect: float = MIN_EFFECT,
) -> Comparison:
    """``current`` against one baseline run, or several: then the baseline's repetitions are
    pooled, and the spread between the baseline runs' medians (run-to-run drift, which no test
    on one run's repetitions can see) raises the effect a change must exceed."""
    baselines = baseline if isinstance(baseline, list) else [baseline]
    latest = {c.key: c for c in baselines[-1].cases}  # statuses: the newest baseline
    keys = list(dict.fromkeys(c.key for run in baselines for c in run.cases))
    after = {c.key: c for c in current.cases}
    changes: list[CaseChange] = []
    for key in keys + [k for k in after if k not in keys]:
        before = [c for run in baselines for c in run.cases if c.key == key]
        a = latest.get(key) or (before[-1] if before else None)
        pooled, drift = _pooled(before) if a is not None and a.status == "ok" else (a, 0.0)
        changes.append(case_change(pooled, after.get(key), alpha, max(min_effect, drift), drift))
    return Comparison(
        alpha=alpha,
        min_effect=min_effect,
        regressions=sum(c.verdict == "regression" for c in changes),
        improvements=sum(c.verdict == "improvement" for c in changes),
        cases=changes,
        environment=_changed(baselines[-1].environment, current.environment),
        device=_changed(baselines[-1].device, current.device),
    )


def _pooled(runs: list[CaseResult]) -> tuple[CaseResult, float]:
    """One baseline case from the ok runs of a case: every repetition, and the drift
    (slowest / fastest median - 1) between the runs."""
    import statistics

    ok = [c for c in runs if c.status == "ok" and c.times_s]
    if len(ok) < 2:
        return runs[-1], 0.0
    medians = [statistics.median(c.times_s) for c in ok]
    times = [t for c in ok for t in c.times_s]
    drift = max(medians) / min(medians) - 1 if min(medians) > 0 else 0.0
    return msgspec.structs.replace(ok[-1], times_s=times, stats={"median": statistics.median(times)}), drift


def _changed(a: dict[str, str], b: dict[str, str]) -> list[EnvChange]:
    return [
        EnvChange(field=k, baseline=a.get(k), current=b.get(k))
        for k in sorted(a.keys() | b.keys())
        if a.get(k) != b.get(k)
    ]


def case_change(
    a: CaseResult | None, b: CaseResult | None, alpha: float, min_effect: float, drift: float = 0.0
) -> CaseChange:
    some = b or a
    assert some is not None

    def change(verdict: Verdict, why: str, ratio: float | None = None, p: float | None = None) -> CaseChange:
        return CaseChange(
            backend=some.backend,
            group=some.group,
            shape=some.shape,
            verdict=verdict,
            why=why,
            baseline_status=a.status if a else "",
            current_status=b.status if b else "",
            baseline_median_s=a.median_s if a else None,
            current_median_s=b.median_s if b else None,
            ratio=ratio,
            p_value=p,
        )

    if a is None:
        return change("new", "not in the baseline")
    if b is None:
        return change("gone", "not in the current run")
    if a.status == "ok" and b.status != "ok":
        return change("regression", f"was ok, now {b.status}: {b.reason}")
    if a.status != "ok" and b.status == "ok":
        return change("improvement", f"was {a.status}, now ok")
    if a.status != "ok":
        return change("same", f"{b.status} in both: {b.reason}")
    n = min(len(a.times_s), len(b.times_s))
    if n < MIN_REPS:
        return change("not-judged", f"{n} repetitions; at least {MIN_REPS} on each side to test")
    ratio, p = shift(a.times_s, b.times_s)
    moved = f"median {ratio - 1:+.1%}, p = {p:.2g}" + (
        f", baseline runs drift {_pct(drift)}" if drift else ""
    )
    if p < alpha and ratio > 1 + min_effect:
        return change("regression", f"slower: {moved}", ratio, p)
    if p < alpha and ratio < 1 - min_effect:
        return change("improvement", f"faster: {moved}", ratio, p)
    if p < alpha:
        return change("same", f"{moved}: a real shift, under the {_pct(min_effect)} minimum", ratio, p)
    return change("same", f"{moved}: within the noise", ratio, p)


def shift(baseline: list[float], current: list[float]) -> tuple[float, float]:
    """(current / baseline median, two-sided Mann-Whitney U p-value)."""
    import statistics

    try:
        from scipy.stats import mannwhitneyu
    except ImportError:
        from stackcheck.errors import InputError

        raise InputError(
            "bench compare: needs scipy for the test on the repetitions (pip install 'stackcheck[bench]')"
        ) from None
    p = float(mannwhitneyu(current, baseline, alternative="two-sided").pvalue)
    base = statistics.median(baseline)
    return (statistics.median(current) / base if base else float("inf")), p


def text(c: Comparison) -> str:
    """The comparison for a reader: regressions first, each naming backend and shape, then
    improvements, then what changed in the environment between the runs."""
    lines = [
        f"{c.regressions} regression{'s' * (c.regressions != 1)}, {c.improvements} "
        f"improvement{'s' * (c.improvements != 1)} in {len(c.cases)} {_cases(len(c.cases))} "
        f"(Mann-Whitney U, alpha {c.alpha:g}, minimum effect {_pct(c.min_effect)})"
    ]
    for verdict in ("regression", "improvement", "not-judged"):
        shown = [x for x in c.cases if x.verdict == verdict]
        if shown:
            lines += ["", f"{verdict}:"]
            lines += [f"  {x.group} {x.backend} × {x.shape}: {x.why}" for x in shown]
    for verdict, where in (("new", "not in the baseline"), ("gone", "not in the current run")):
        names = [f"{x.backend} × {x.shape}" for x in c.cases if x.verdict == verdict]
        if names:  # a partial run leaves many: named briefly
            more = f", … {len(names) - 4} more" if len(names) > 4 else ""
            lines += [
                "",
                f"{verdict}: {len(names)} {_cases(len(names))} {where}: {', '.join(names[:4])}{more}",
            ]
    same = sum(x.verdict == "same" for x in c.cases)
    if same:
        lines += ["", f"{same} {_cases(same)} unchanged (within the noise, or the same status)"]
    changes = c.device + c.environment
    lines += ["", "environment changes:" if changes else "environment: no change between the runs"]
    lines += [f"  {e.field}: {e.baseline or '(none)'} → {e.current or '(none)'}" for e in changes]
    return "\n".join(lines) + "\n"


def _cases(n: int) -> str:
    return "case" if n == 1 else "cases"


def _pct(x: float) -> str:
    """0.05 → "5%", 0.0946 → "9.5%"."""
    return f"{x:.1%}".replace(".0%", "%")
