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


def test_every_id_explain_knows_has_exactly_one_spec():
    import importlib

    from stackcheck.checks import registry

    checks = registry.all_checks(everywhere=True)
    prefixes = {i.rstrip("0123456789") for i in checks}
    assert {"ACC", "HYG", "KERN", "KB", "PY"} <= prefixes
    assert {f"ACC00{n}" for n in range(1, 8)} | {f"HYG00{n}" for n in range(1, 8)} <= set(checks)
    assert {"KERN001", "KERN002", "KERN010", "KERN011", "KERN012", "KERN013"} <= set(checks)
    for name in registry.ELSEWHERE:  # importing a declaring module again declares nothing twice
        importlib.import_module(name)
    assert registry.all_checks(everywhere=True) == checks
    for check_id, spec in checks.items():
        assert spec.id == check_id and registry.registered(check_id) is spec
    from stackcheck.accept.steps import STEPS
    from stackcheck.hygiene.rules import RULES

    assert all(checks[i] is s for i, s in {**STEPS, **RULES}.items())


def test_preflight_does_not_import_the_commands_that_declare_their_own_verdicts():
    import subprocess
    import sys

    code = (
        "import sys; from stackcheck.checks.registry import all_checks; all_checks(); "
        "print(sorted(m for m in sys.modules "
        "if m.split('.')[1:2] in (['accept'], ['notebook'], ['hygiene'])))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_kern001_and_kern002_give_one_verdict_in_doctor_and_kernel_check(tmp_path):
    from stackcheck.models import snapshot as S
    from stackcheck.notebook.check import judge_kernel

    gone = str(tmp_path / "gone" / "bin" / "python")
    bare = S.Kernelspec(
        name="bare", path=str(tmp_path / "k" / "bare" / "kernel.json"), argv=["python"], bare_python=True
    )
    dead = S.Kernelspec(
        name="dead",
        path=str(tmp_path / "k" / "dead" / "kernel.json"),
        argv=[gone],
        interpreter=gone,
        interpreter_exists=False,
    )
    snap = make_snapshot()
    snap.kernels = S.KernelsSection(status="ok", source="test", kernels=[bare, dead])
    doctor = {
        (c.id, c.subject): c for c in judge(snap, command="doctor").checks if c.id in ("KERN001", "KERN002")
    }
    kernel = {
        (c.id, c.subject): c
        for spec in (bare, dead)
        for c in judge_kernel(spec, {}, None)
        if c.id in ("KERN001", "KERN002") and c.verdict != "ok" and c.verdict != "skipped"
    }
    assert {k: (c.verdict, c.title) for k, c in kernel.items()} == {
        ("KERN001", "bare"): ("warning", "Kernelspecs name their interpreter by path"),
        ("KERN002", "dead"): ("blocked", "Kernel interpreters exist"),
    }
    assert {k: (c.verdict, c.title) for k, c in doctor.items() if k in kernel} == {
        k: (c.verdict, c.title) for k, c in kernel.items()
    }
