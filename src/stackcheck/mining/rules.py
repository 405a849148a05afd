"""The whole store → knowledge rules with provenance ``mined`` (``stackcheck mine rules``).

1. Every signature of a failed job, from one SQL aggregate.
2. Their messages through Drain (behind the masks and the cache), so messages that differ
   only in a word the masks did not catch share a template; signatures are then grouped
   exactly on (exception, template, frames, test).
3. Per group and cell, attempts, failures and false positives, from one SQL aggregate.
4. Per group: the environment scope by contrast, the failure rate and its Wilson bound over
   the scope's cells, coverage, support; an RE2 pattern from the template, compiled and
   checked against the group's own example lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stackcheck.mining.masks import template_regex
from stackcheck.mining.scope import CellStat, ScopeResult, contrast
from stackcheck.mining.signature import signature_key
from stackcheck.mining.stats import REPRODUCIBLE, min_attempts, reproducibility, wilson_lower
from stackcheck.mining.store import MineStore
from stackcheck.models.mining import Dropped, MinedRules, SummaryRow
from stackcheck.models.rule import Category, MinedCell, MinedStats, Rule, RuleSet

__all__ = ["MineOptions", "MinedRules", "SummaryRow", "build_rules"]

RULE_PREFIX = "KBM-"


@dataclass
class MineOptions:
    min_support: int = 2  # failed jobs a signature needs to become a rule
    max_false_positive_rate: float = 0.2  # share of passing jobs of its family that may carry it
    confidence: float = 0.95
    target: float = REPRODUCIBLE
    sim_th: float = 0.4  # Drain's similarity threshold for the messages
    merge_similarity: float = 0.75  # TF-IDF cosine from which two rules are suggested for merging


@dataclass
class _Group:
    key: str
    exception: str
    template: str
    frames: tuple[str, ...]
    tests: set[str] = field(default_factory=set)
    sigs: list[str] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)

    @property
    def text(self) -> str:
        return f"{self.exception}: {self.template}" if self.exception else self.template


def _group(store: MineStore, options: MineOptions) -> dict[str, _Group]:
    from stackcheck.mining.templates import TemplateMiner

    miner = TemplateMiner(sim_th=options.sim_th, depth=4)
    sigs = store.failing_signatures()
    cluster_of = {s["sig"]: miner.add(f"{s['exception'] or '-'} {s['template']}") for s in sigs}
    groups: dict[str, _Group] = {}
    for s in sigs:
        template = miner.template(cluster_of[s["sig"]]).split(" ", 1)
        message = template[1] if len(template) > 1 else ""
        frames = tuple(f for f in s["frames"].split("\n") if f)
        key = signature_key(s["exception"], message, frames, s["test"])
        g = groups.setdefault(key, _Group(key, s["exception"], message, frames))
        g.sigs.append(s["sig"])
        g.kinds.add(s["kind"])
        if s["test"]:
            g.tests.add(s["test"])
    return groups


def _pattern(group: _Group, examples: list[str]) -> tuple[str, str]:
    """(RE2 pattern, problem): the template as a pattern that compiles and matches every example."""
    import re2

    from stackcheck.knowledge.loader import signature_problem

    for loose in (False, True):
        pattern = template_regex(group.text, loose=loose)
        if not pattern:
            return "", "empty template"
        problem = signature_problem(pattern)
        if problem:
            return "", f"pattern does not compile in RE2 ({problem})"
        options = re2.Options()
        options.log_errors = False
        compiled = re2.compile(pattern, options)
        if all(compiled.search(e) for e in examples):
            return pattern, ""
    return "", "pattern does not match its own examples"


_CATEGORIES: tuple[tuple[tuple[str, ...], Category], ...] = (
    (("ModuleNotFoundError", "ImportError", "No module named"), "module-not-found"),
    (("OutOfMemoryError", "out of memory"), "cuda-oom"),
    (("NCCL", "nccl"), "nccl-failure"),
    (("undefined symbol", "ABI"), "abi-mismatch"),
    (("no kernel image", "not compatible with the current PyTorch"), "gpu-arch-unsupported"),
    (("driver version is insufficient", "driver is too old"), "driver-too-old"),
    (("ResolutionImpossible", "conflicting dependencies"), "dependency-conflict"),
    (("triton", "inductor", "Triton"), "triton-or-compile-failure"),
    (("CUDA is not available", "Torch not compiled with CUDA"), "cuda-not-available"),
)


def _category(text: str) -> Category:
    for needles, category in _CATEGORIES:
        if any(n in text for n in needles):
            return category
    return "other"


def _complement_command(scope: ScopeResult) -> str:
    """A pip command that leaves a one-package scope (``numpy>=2`` → ``pip install 'numpy<2'``)."""
    from stackcheck.mining.envfacts import PKG
    from stackcheck.shellcmd import command

    if len(scope.conditions) != 1 or not scope.conditions[0].fact.startswith(PKG):
        return ""
    cond = scope.conditions[0]
    spec = cond.spec
    flipped = {">=": "<", "<": ">="}
    for op, other in flipped.items():
        if spec.startswith(op) and "," not in spec:
            return command("pip", "install", f"{cond.fact[len(PKG) :]}{other}{spec[len(op) :]}")
    return ""


def _fix(scope: ScopeResult, word: str, failures: int, attempts: int, tests: list[str]) -> str:
    named = ", ".join(tests[:3]) or "the failing code"
    if scope.separated:
        cmd = _complement_command(scope)
        head = f"It fails only where {scope.text.split(' (')[0]}; the same jobs pass outside it."
        return (
            f"{head} Make the code work there, or stay outside it: {cmd}"
            if cmd
            else f"{head} Make the code work there, or keep CI and users outside it."
        )
    if word == "flaky":
        return (
            f"Flaky: it failed {failures} of {attempts} attempts, independent of the environment. "
            f"Fix or quarantine {named}; pinning the environment will not help."
        )
    if word == "unconfirmed":
        return (
            f"Every attempt failed, but only {attempts}: rerun to confirm. No environment fact separates it."
        )
    return f"No environment fact separates failing from passing cells: a code bug. Fix {named}."


def _label(facts: dict[str, str], varying: list[str]) -> str:
    shown = [f for f in varying if f in facts] or sorted(facts)[:4]
    return " ".join(f"{f.removeprefix('pkg:')}={facts[f]}" for f in shown)


def build_rules(store: MineStore, options: MineOptions | None = None) -> MinedRules:
    options = options or MineOptions()
    totals = store.totals()
    failed_jobs, passing_jobs = totals["failed"], totals["passed"]
    groups = _group(store, options)
    store.set_groups((sig, g.key) for g in groups.values() for sig in g.sigs)
    all_cells = store.cells()
    per_group: dict[str, list[CellStat]] = {}
    for grp, family, cell, attempts, failures, fps, passing in store.group_cells():
        per_group.setdefault(grp, []).append(
            CellStat(
                f"{family}\x1f{cell}",
                all_cells.get(cell, {}),
                int(attempts),
                int(failures or 0),
                int(fps or 0),
                int(passing or 0),
            )
        )
    examples: dict[str, list[str]] = {}
    for grp, example in store.group_examples():
        examples.setdefault(grp, []).append(example)

    rules: list[Rule] = []
    rows: list[SummaryRow] = []
    dropped: list[Dropped] = []
    need = min_attempts(options.target, options.confidence)
    ordered = sorted(
        groups.values(), key=lambda g: (-sum(c.failures for c in per_group.get(g.key, [])), g.key)
    )
    for g in ordered:
        cells = per_group.get(g.key, [])
        support = sum(c.failures for c in cells)
        fps = sum(c.false_positives for c in cells)
        passing = sum(c.passing for c in cells)
        fp_rate = fps / passing if passing else 0.0
        if support < options.min_support:
            dropped.append(
                Dropped(signature=g.key, template=g.text, reason=f"support {support} < {options.min_support}")
            )
            continue
        if fp_rate > options.max_false_positive_rate:
            dropped.append(
                Dropped(
                    signature=g.key,
                    template=g.text,
                    reason=f"false-positive rate {fp_rate:.2f} > {options.max_false_positive_rate:g}",
                )
            )
            continue
        scope = contrast(cells, " ".join((g.text, *g.frames, *g.tests)))
        counted = [c for c in cells if c.cell in scope.in_scope] if scope.separated else cells
        attempts = sum(c.attempts for c in counted)
        failures = sum(c.failures for c in counted)
        lower = wilson_lower(failures, attempts, options.confidence)
        word = reproducibility(failures, attempts, options.confidence, options.target)
        pattern, problem = _pattern(g, examples.get(g.key, [g.text]))
        if problem:
            dropped.append(Dropped(signature=g.key, template=g.text, reason=problem))
            continue
        varying = sorted(
            {
                f
                for c in cells
                for f in c.facts
                if len({c2.facts.get(f) for c2 in cells}) > 1 and not f.startswith("matrix.")
            }
        )
        tests = sorted(g.tests)
        stats = MinedStats(
            signature=g.key,
            exception=g.exception,
            template=g.template,
            frames=list(g.frames),
            tests=tests,
            support=support,
            coverage=round(support / failed_jobs, 4) if failed_jobs else 0.0,
            attempts=attempts,
            failures=failures,
            failure_rate=round(failures / attempts, 4) if attempts else 0.0,
            wilson_lower=round(lower, 4),
            confidence=options.confidence,
            min_attempts=need,
            reproducibility=word,
            false_positives=fps,
            passing_jobs=passing,
            false_positive_rate=round(fp_rate, 4),
            env_scope=scope.text,
            separated=scope.separated,
            store=store.name,
            cells=[
                MinedCell(
                    cell=f"{c.cell.split(chr(31))[0]}: {_label(c.facts, varying)}",
                    attempts=c.attempts,
                    failures=c.failures,
                    failure_rate=round(c.failures / c.attempts, 4) if c.attempts else 0.0,
                    wilson_lower=round(wilson_lower(c.failures, c.attempts, options.confidence), 4),
                    in_scope=c.cell in scope.in_scope,
                )
                for c in cells
            ][:64],
        )
        rule_id = RULE_PREFIX + g.key[:8].upper()
        shown = (examples.get(g.key) or [g.text])[0]  # a real line reads better than its template
        title = shown if len(shown) <= 90 else shown[:89] + "…"
        explanation = (
            f"Mined from CI logs ({store.name}): carried by {support} failed job(s), "
            f"{stats.coverage:.0%} of the failed jobs. In its scope {failures} of {attempts} attempts "
            f"failed ({stats.failure_rate:.0%}; Wilson lower bound {lower:.2f} at {options.confidence:.0%}: "
            f"{word}, which needs >= {options.target:g} and so >= {need} "
            f"attempts). Seen in {fps} of {passing} passing job(s) of its job family. Scope: {scope.text}."
            + (f" Also separated by: {', '.join(scope.also)}." if scope.also else "")
            + (f" Tests: {', '.join(tests[:5])}." if tests else "")
        )
        rules.append(
            Rule(
                id=rule_id,
                title=title,
                category=_category(g.text),
                scope=scope.scope,
                signatures=[pattern],
                explanation=explanation,
                fix=_fix(scope, word, failures, attempts, tests),
                expected=f"not {scope.text.split(' (')[0]}" if scope.separated else "",
                sources=[
                    f"mined from {totals['runs']} run(s), {failed_jobs + passing_jobs} job(s) in {store.name}"
                ],
                confidence="high"
                if word == "reproducible" and scope.separated and fps == 0
                else "medium"
                if word == "reproducible"
                else "low",
                examples=examples.get(g.key, [])[:3],
                origin=f"mined:{store.name}",
                provenance="mined",
                mined=stats,
            )
        )
        rows.append(
            SummaryRow(
                id=rule_id,
                title=title,
                coverage=stats.coverage,
                support=support,
                failure_rate=stats.failure_rate,
                wilson_lower=stats.wilson_lower,
                attempts=attempts,
                reproducibility=word,
                false_positive_rate=stats.false_positive_rate,
                scope=scope.text,
                separated=scope.separated,
                tests=tests,
            )
        )
    suggestions = _merges(rules, options.merge_similarity)
    store.keep_groups(r.mined.signature for r in rules if r.mined)
    explained = store.explained_failed_jobs() if rules else 0
    return MinedRules(
        store=store.name,
        jobs=failed_jobs + passing_jobs,
        failed_jobs=failed_jobs,
        passing_jobs=passing_jobs,
        runs=totals["runs"],
        coverage=round(explained / failed_jobs, 4) if failed_jobs else 0.0,
        rules=RuleSet(rules=rules),
        summary=rows,
        dropped=dropped,
        merge_suggestions=suggestions,
    )


def _merges(rules: list[Rule], threshold: float) -> list[list[str]]:
    from stackcheck.mining.similarity import similar_pairs

    # the pairs index the mined rules, so the texts and the rules are taken from one list
    mined = [(r, r.mined) for r in rules if r.mined is not None]
    texts = [" ".join((m.exception, m.template, *m.frames)) for _, m in mined]
    out = []
    for i, j, cos in similar_pairs(texts, threshold):
        (a, a_stats), (b, b_stats) = mined[i], mined[j]
        a_stats.merge_candidates.append(b.id)
        b_stats.merge_candidates.append(a.id)
        out.append([a.id, b.id, f"{cos:.2f}"])
    return out
