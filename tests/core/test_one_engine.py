"""One judging engine: a typed check context whose derived facts are computed once, and the
knowledge base passed explicitly."""

from __future__ import annotations

from stackcheck.checks.context import Context
from stackcheck.checks.registry import all_checks
from stackcheck.judge import judge
from stackcheck.knowledge import load_knowledge
from tests.factories import dist, make_snapshot


def _old_driver():
    return make_snapshot(
        dist("torchvision", "0.19.0"),
        gpus=[("NVIDIA A100-SXM4-80GB", "8.0", 80.0)],
        driver="470.82.01",
        torch="2.4.0+cu121",
        torch_cuda="12.1",
    )


def test_a_check_runs_on_a_context_built_by_hand_with_only_a_snapshot():
    ctx = Context(snapshot=_old_driver())
    outcomes = list(all_checks()["CUDA002"].run(ctx))
    assert [(o.verdict, o.category) for o in outcomes] == [("blocked", "driver-too-old")]
    via_judge = [c for c in judge(_old_driver(), command="preflight").checks if c.id == "CUDA002"]
    assert [(c.verdict, c.observed, c.fix) for c in via_judge] == [
        (o.verdict, o.observed, o.fix) for o in outcomes
    ]


def test_derived_facts_are_computed_once_per_context():
    ctx = Context(snapshot=_old_driver())
    assert ctx.dist_index is ctx.dist_index
    assert ctx.dep_graph.index is ctx.dist_index  # the graph reuses the context's index
    assert ctx.torch_build is ctx.torch_build
    assert ctx.torch_build is not None and ctx.torch_build.cuda == "12.1"
    assert ctx.driver_fit is ctx.driver_fit
    other = Context(snapshot=ctx.snapshot)
    assert other.dist_index is not ctx.dist_index  # per context, not per process


def test_the_knowledge_base_is_a_parameter_not_a_global():
    kb = load_knowledge()
    assert Context(snapshot=_old_driver(), knowledge_base=kb).knowledge is kb
    assert Context(snapshot=_old_driver()).knowledge is kb  # default: the loaded one
    given = judge(_old_driver(), command="preflight", knowledge=kb)
    default = judge(_old_driver(), command="preflight")
    assert [(c.id, c.verdict) for c in given.checks] == [(c.id, c.verdict) for c in default.checks]
