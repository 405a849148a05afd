"""``stackcheck bench``: the backend regression suite (run, compare, matrix)."""

from __future__ import annotations

import click

from stackcheck.cli.common import checked, emit_json, finish, json_option, registry_option
from stackcheck.cli.results import ledger_options

FORMATS = ("text", "markdown", "json", "pytest-benchmark")


@click.group()
def bench():
    """Backend regression suite: attention and GEMM paths checked, timed and recorded.

    \b
    Every backend (SDPA with each kernel forced, eager, FlexAttention, flash-attn,
    xformers; torch.matmul in fp32/tf32/bf16/fp16, fp8 scaled matmul; a block with
    torch.compile off and on) runs on fixed shapes, is checked against a float64
    reference first, then timed. A path that cannot run here is skipped with the reason.

    \b
    Examples:
      stackcheck bench run --shapes tiny -o bench-cpu
      stackcheck bench run --backend attention/sdpa --shapes my-shapes.json -o today
      stackcheck bench compare baseline/ today/
      stackcheck bench matrix today/ --format markdown
    """


@bench.command("run", short_help="Run the suite; write the run, the matrix and the records.")
@click.option(
    "--shapes",
    "shapes_from",
    metavar="SET|FILE",
    help="A built-in shape set (default: the GPU suite; tiny: a few milliseconds each on a CPU) "
    "or a JSON shape file. Without it: default on a GPU, tiny on a CPU.",
)
@click.option(
    "--backend",
    "backend_names",
    multiple=True,
    metavar="NAME",
    help="Only this backend or group (sdpa-math, attention/sdpa, gemm …); repeatable.",
)
@click.option("--warmup", type=click.IntRange(0, 1000), default=3, show_default=True)
@click.option(
    "--reps", type=click.IntRange(1, 100000), default=20, show_default=True, help="Timed repetitions."
)
@click.option("--seed", type=click.IntRange(0, 2**31 - 1), default=0, show_default=True)
@click.option(
    "--device", "device_kind", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True
)
@click.option(
    "-o", "--out", "out_dir", metavar="DIR", required=True, help="Where bench.json and the matrix files go."
)
@click.option("--record/--no-record", default=True, show_default=True, help="Store each case in the ledger.")
@click.option(
    "--profile",
    "profile_id",
    metavar="ID",
    callback=checked(),
    help="The profile the records are judged by (default: PERF-CUDA-MECHANISM on a GPU, BASE-CPU).",
)
@click.option(
    "--label", "run_label", default="bench", show_default=True, callback=checked(), help="Run label."
)
@registry_option
@ledger_options
@json_option
def run_cmd(
    shapes_from,
    backend_names,
    warmup,
    reps,
    seed,
    device_kind,
    out_dir,
    record,
    profile_id,
    run_label,
    registry,
    ledger,
    as_json,
):
    """Run every backend on every shape of its operation and write DIR/bench.json (every
    repetition), DIR/matrix.txt, DIR/matrix.md and DIR/pytest-benchmark.json.

    Exit 1 when a case is wrong or broke (an error), 0 otherwise: a skipped case is not a failure.

    \b
    Examples:
      stackcheck bench run --shapes tiny -o bench-cpu --no-record
      stackcheck bench run --backend attention/sdpa --shapes my-shapes.json -o today --json
    """
    from stackcheck.bench import backends as kernels
    from stackcheck.bench import matrix
    from stackcheck.bench.cases import backends_named, shapes_for
    from stackcheck.bench.run import check_reps
    from stackcheck.bench.suite import run_and_write

    check_reps(reps)
    shapes = shapes_for(shapes_from) if shapes_from else None  # bad input before torch is imported
    backends = backends_named(backend_names)
    device = kernels.device_info(device_kind)
    if device_kind == "cuda" and not device.cuda:
        raise click.UsageError("--device cuda: torch sees no CUDA GPU here")
    if shapes is None:  # the GPU suite would take many minutes of float64 references on a CPU
        shapes = shapes_for("default" if device.cuda else "tiny")

    def progress(case):
        if not as_json:
            click.echo(f"  {case.status:<7} {case.backend} × {case.shape}", err=True)

    outcome = run_and_write(
        backends,
        shapes,
        out_dir=out_dir,
        ledger=ledger if record else None,
        profile=profile_id,
        run_label=run_label,
        registry=registry,
        device=device,
        warmup=warmup,
        reps=reps,
        seed=seed,
        progress=progress,
    )
    if as_json:
        emit_json(outcome.run)
    else:
        click.echo(matrix.text(outcome.run), nl=False)
        notes: dict[str, int] = {}
        for f in outcome.filed:
            if f.note and f.id:
                notes[f.note] = notes.get(f.note, 0) + 1
        for note, n in notes.items():
            click.echo(f"{n} case{'s' * (n != 1)} recorded at smoke: {note}", err=True)
        recorded = sum(bool(f.id) for f in outcome.filed)
        if record:
            click.echo(f"{recorded} records in {ledger.root}", err=True)
        click.echo(f"wrote {', '.join(str(p) for p in outcome.written)}", err=True)
    finish(1 if any(c.status in ("wrong", "error") for c in outcome.run.cases) else 0)


@bench.command(short_help="Regressions between runs, beyond the measured noise.")
@click.argument("runs", nargs=-1, required=True, metavar="BASELINE... CURRENT")
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.01,
    show_default=True,
    help="Significance level of the Mann-Whitney U test on the repetitions.",
)
@click.option(
    "--min-effect",
    type=click.FloatRange(0, 10),
    default=0.05,
    show_default=True,
    help="Smallest change of the median that counts (0.05 = 5 %).",
)
@json_option
def compare(runs, alpha, min_effect, as_json):
    """Compare the run CURRENT (the last one given) with BASELINE (each a bench.json, its
    directory, or a pytest-benchmark JSON saved with --benchmark-save-data).

    A case regressed when it was ok and is now wrong, skipped or broken, or when it is slower
    by more than --min-effect and the test on the repetitions says it is not noise. Several
    baseline runs pool their repetitions, and the drift between their medians raises the
    effect that counts (a machine's run-to-run noise). Names the environment changes between
    the newest baseline and CURRENT. Exit 1 when anything regressed.

    \b
    Examples:
      stackcheck bench compare baseline/ today/
      stackcheck bench compare mon/ tue/ wed/ today/bench.json --min-effect 0.1 --json
    """
    from stackcheck.bench.compare import compare as compare_runs
    from stackcheck.bench.compare import text as comparison_text
    from stackcheck.bench.matrix import load_run

    if len(runs) < 2:
        raise click.UsageError("give at least one BASELINE and the CURRENT run")
    loaded = [load_run(r) for r in runs]
    result = compare_runs(loaded[:-1], loaded[-1], alpha=alpha, min_effect=min_effect)
    if as_json:
        emit_json(result)
    else:
        click.echo(comparison_text(result), nl=False)
    finish(1 if result.regressions else 0)


@bench.command("matrix", short_help="Print a run as the backend × shape matrix.")
@click.argument("run_file", metavar="RUN")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("-o", "--output", metavar="FILE", help="Write to FILE instead of stdout.")
def matrix_cmd(run_file, fmt, output):
    """The matrix of RUN (a bench.json, its directory, or a pytest-benchmark JSON):
    ok with the median time and its spread, WRONG, skipped or error with the reason.

    \b
    Examples:
      stackcheck bench matrix today/ --format markdown -o matrix.md
      stackcheck bench matrix .benchmarks/Linux-CPython-3.11-64bit/0001_run.json
    """
    import msgspec

    from stackcheck.bench import matrix

    run = matrix.load_run(run_file)
    if fmt == "text":
        data = matrix.text(run)
    elif fmt == "markdown":
        data = matrix.markdown(run)
    else:
        doc = run if fmt == "json" else matrix.to_pytest_benchmark(run)
        data = (msgspec.json.format(msgspec.json.encode(doc), indent=2) + b"\n").decode()
    if output:
        from stackcheck.fileio import atomic_write, cannot_write

        try:
            atomic_write(output, data)
        except OSError as exc:
            raise cannot_write(output, "the matrix", exc) from None
    else:
        click.echo(data, nl=False)
    finish(0)
