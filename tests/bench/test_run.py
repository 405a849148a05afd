"""Correctness before timing, skips with reasons, and the real CPU paths of this machine."""

from __future__ import annotations

import pytest

from stackcheck.bench.backends import Device
from stackcheck.bench.cases import BACKENDS, Shape, backends_named
from stackcheck.bench.run import run_suite, skip_reason
from tests.bench.conftest import ATTN, ATTN_CAUSAL, GEMM, FakeClock, sleeping, wrong_by

pytest.importorskip("torch")

BY_NAME = {b.name: b for b in BACKENDS}


def test_an_injected_wrong_backend_is_caught_and_never_timed(cpu):
    backends = backends_named(["sdpa-math", "eager"])
    results = run_suite(
        backends, [ATTN, ATTN_CAUSAL], device=cpu, reps=5, warmup=1, prepare=wrong_by(1.01, "eager")
    )
    got = {(r.backend, r.shape): r for r in results}
    assert [(r.backend, r.shape, r.status) for r in results] == [
        ("sdpa-math", "attn-tiny", "ok"),
        ("sdpa-math", "attn-tiny-causal", "ok"),
        ("eager", "attn-tiny", "wrong"),
        ("eager", "attn-tiny-causal", "wrong"),
    ]
    bad = got["eager", "attn-tiny"]
    assert bad.reason == f"max error {bad.max_error:.3g} exceeds the float32 bound {bad.error_bound:.3g}"
    assert bad.max_error > bad.error_bound
    assert (bad.times_s, bad.stats, bad.tflops) == ([], {}, None)
    good = got["sdpa-math", "attn-tiny"]
    assert good.max_error <= good.error_bound and len(good.times_s) == 5


def test_a_slightly_wrong_bf16_gemm_passes_and_a_wrong_one_fails(cpu):
    gemm = backends_named(["matmul-bf16"])
    assert [r.status for r in run_suite(gemm, [GEMM], device=cpu, reps=5, warmup=0)] == ["ok"]
    broken = run_suite(gemm, [GEMM], device=cpu, reps=5, warmup=0, prepare=wrong_by(1.1, "matmul-bf16"))
    assert [r.status for r in broken] == ["wrong"]


def test_nan_output_is_wrong(cpu):
    res = run_suite(
        backends_named(["matmul-fp32"]),
        [GEMM],
        device=cpu,
        reps=5,
        prepare=wrong_by(float("nan"), "matmul-fp32"),
    )
    assert [(r.status, r.reason) for r in res] == [("wrong", "the output holds NaN or inf")]


def test_skips_carry_their_reason():
    cpu = Device("cpu")
    turing = Device("cuda", "Tesla T4", (7, 5))
    hopper = Device("cuda", "NVIDIA H100 80GB HBM3", (9, 0))
    everything = lambda module: True  # noqa: E731
    bf16 = Shape(name="b", op="attention", dtype="bfloat16")
    fp32 = Shape(name="f", op="attention", dtype="float32")
    big = Shape(name="big", op="attention", dtype="bfloat16", head_dim=512)
    odd = Shape(name="odd", op="gemm", m=17, n=16, k=16)
    cases = [
        (
            BY_NAME["flash-attn"],
            bf16,
            hopper,
            lambda m: m != "flash_attn",
            "not installed: flash-attn (pip install flash-attn)",
        ),
        (
            BY_NAME["xformers"],
            bf16,
            hopper,
            lambda m: False,
            "not installed: xformers (pip install xformers)",
        ),
        (BY_NAME["sdpa-cudnn"], bf16, cpu, everything, "CPU-only: no CUDA GPU here for cuDNN attention"),
        (BY_NAME["matmul-tf32"], odd, cpu, everything, "CPU-only: no CUDA GPU here for TF32 tensor cores"),
        (
            BY_NAME["flash-attn"],
            bf16,
            turing,
            everything,
            "GPU architecture too old: flash-attn needs sm80+, this GPU is sm75",
        ),
        (
            BY_NAME["scaled-mm-fp8"],
            odd,
            Device("cuda", "NVIDIA A100", (8, 0)),
            everything,
            "GPU architecture too old: scaled-mm-fp8 needs sm89+, this GPU is sm80",
        ),
        (
            BY_NAME["flash-attn"],
            fp32,
            hopper,
            everything,
            "dtype unsupported: flash-attn runs bfloat16, float16, the shape is float32",
        ),
        (
            BY_NAME["flash-attn"],
            big,
            hopper,
            everything,
            "dtype unsupported: flash-attn runs head_dim ≤ 256, the shape has 512",
        ),
        (
            BY_NAME["scaled-mm-fp8"],
            odd,
            hopper,
            everything,
            "dtype unsupported: fp8 scaled matmul needs m, n and k divisible by 16",
        ),
        (
            BY_NAME["sdpa-math"],
            Shape(name="f8", op="attention", dtype="float8_e4m3fn"),
            hopper,
            everything,
            "dtype unsupported: sdpa-math has no float8_e4m3fn path (fp8 is a GEMM backend here)",
        ),
        (BY_NAME["sdpa-math"], bf16, cpu, everything, ""),
        (BY_NAME["sdpa-cudnn"], bf16, hopper, everything, ""),
    ]
    assert [skip_reason(b, s, d, avail) for b, s, d, avail, _ in cases] == [why for *_, why in cases]


def test_this_cpu_runs_the_cpu_paths_and_skips_the_rest_with_reasons(cpu):
    from stackcheck.bench.backends import installed

    backends = [b for b in BACKENDS if b.name != "block-compile"]
    block = Shape(name="block-tiny", op="block", batch=2, seq_q=4, dim=8, dtype="float32")
    results = run_suite(backends, [ATTN, GEMM, block], device=cpu, reps=5, warmup=1)
    assert len(results) == len(backends)  # one shape per operation
    status = {r.backend: (r.status, r.reason) for r in results}
    expect = {
        "sdpa-math": ("ok", ""),
        "sdpa-efficient": (
            "skipped",
            "no kernel: torch has no sdpa-efficient kernel for these inputs (cpu, float32)",
        ),
        "sdpa-flash": ("ok", ""),
        "sdpa-cudnn": ("skipped", "CPU-only: no CUDA GPU here for cuDNN attention"),
        "eager": ("ok", ""),
        "flex": ("ok", ""),
        "flash-attn": ("skipped", "CPU-only: no CUDA GPU here for flash-attn")
        if installed("flash_attn")
        else ("skipped", "not installed: flash-attn (pip install flash-attn)"),
        "xformers": ("skipped", "CPU-only: no CUDA GPU here for xformers memory-efficient attention")
        if installed("xformers")
        else ("skipped", "not installed: xformers (pip install xformers)"),
        "matmul-fp32": ("ok", ""),
        "matmul-tf32": ("skipped", "CPU-only: no CUDA GPU here for TF32 tensor cores"),
        "matmul-bf16": ("ok", ""),
        "matmul-fp16": ("ok", ""),
        "scaled-mm-fp8": ("skipped", "CPU-only: no CUDA GPU here for fp8 scaled matmul (cuBLASLt)"),
        "block-eager": ("ok", ""),
    }
    assert status == expect
    for r in results:
        if r.status == "ok":
            assert len(r.times_s) == 5 and r.warmup == 1 and r.timer == "wall"
            assert r.stats["median"] == sorted(r.times_s)[2]
            assert r.tflops == pytest.approx(r.flops / r.stats["median"] / 1e12)
            assert r.peak_fraction is None  # no peak is known for a CPU


@pytest.mark.timeout(600)  # torch.compile takes seconds to tens of seconds on a loaded CPU
def test_compile_on_and_off_for_a_small_block(cpu):
    block = Shape(name="block-tiny", op="block", batch=2, seq_q=4, dim=8, dtype="float32")
    results = run_suite(backends_named(["block/compile"]), [block], device=cpu, reps=5, warmup=1)
    assert [(r.backend, r.status, r.reason) for r in results] == [
        ("block-eager", "ok", ""),
        ("block-compile", "ok", ""),
    ]
    assert results[1].max_error <= results[1].error_bound


def test_timing_loop_uses_the_injected_clock(cpu):
    clock = FakeClock()
    res = run_suite(
        backends_named(["sdpa-math"]),
        [ATTN],
        device=cpu,
        reps=7,
        warmup=2,
        clock=clock,
        prepare=sleeping(clock, 0.002, seed=1, sigma=0.0),
    )
    # 1 correctness run + 2 warm-up + 7 timed runs advanced the clock; 7 were measured
    assert clock.now == pytest.approx(0.002 * 10)
    assert res[0].times_s == pytest.approx([0.002] * 7) and res[0].timer == "injected"
    assert res[0].stats["cv"] == pytest.approx(0.0, abs=1e-9)


def test_peak_fraction_where_the_gpu_is_known():
    from stackcheck.bench.run import peak_tflops

    assert peak_tflops(Device("cuda", "NVIDIA H100 80GB HBM3", (9, 0)), "bfloat16") == 989.5
    assert peak_tflops(Device("cuda", "NVIDIA H100 PCIe", (9, 0)), "bfloat16") == 756
    assert peak_tflops(Device("cuda", "NVIDIA H200", (9, 0)), "float8_e4m3fn") == 1979
    assert peak_tflops(Device("cuda", "NVIDIA L40S", (8, 9)), "bfloat16") == 362
    assert peak_tflops(Device("cuda", "Tesla T4", (7, 5)), "bfloat16") is None
    assert peak_tflops(Device("cuda", "Some New GPU", (12, 0)), "bfloat16") is None
    assert peak_tflops(Device("cpu"), "float32") is None


def test_cli_run_defaults_to_the_tiny_set_on_a_cpu_and_prints_json(cli_main, tmp_path, monkeypatch):
    import msgspec

    from stackcheck.bench.run import BenchRun

    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the default set would be the GPU suite")
    monkeypatch.chdir(tmp_path)
    code, out, err = cli_main(
        "bench", "run", "--backend", "matmul-fp32", "--reps", "5", "-o", "out", "--no-record", "--json"
    )
    assert (code, err) == (0, "")
    run = msgspec.json.decode(out, type=BenchRun)
    assert [(c.backend, c.shape, c.status, len(c.times_s)) for c in run.cases] == [
        ("matmul-fp32", "gemm-64", "ok", 5)
    ]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "bench.json",
        "matrix.md",
        "matrix.txt",
        "pytest-benchmark.json",
    ]
    assert run.device["kind"] == "cpu" and run.snapshot_digest.startswith("sha256:")


def test_cli_run_refuses_an_unknown_profile_and_an_unusable_out_dir_before_any_case_runs(
    cli_main, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    base = ("bench", "run", "--backend", "matmul-fp32", "--reps", "5", "--shapes", "tiny")
    code, out, err = cli_main(*base, "-o", "out", "--profile", "NO-SUCH-PROFILE", "--ledger-dir", "led")
    assert (code, out) == (2, "")
    assert err == (
        "stackcheck: error: unknown profile ID 'NO-SUCH-PROFILE' in the built-in catalog; "
        "see `stackcheck profiles list`\n"
    )
    (tmp_path / "a-file").write_text("")
    code, out, err = cli_main(*base, "-o", "a-file/out", "--no-record")
    assert (code, out) == (2, "")
    assert err == (
        "stackcheck: error: a-file/out: a-file is a file, not a directory "
        "(expected the output directory, -o)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_a_run_is_redacted_where_it_is_built(tmp_path):
    """make_run redacts once, so bench.json and the matrix files written from it hold no secret."""
    from stackcheck.bench.run import CaseResult
    from stackcheck.bench.suite import make_run, write_outputs
    from stackcheck.environment import load_snapshot

    token = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"
    reason = f"skipped: 401 Unauthorized for https://huggingface.co (token {token})"
    case = CaseResult(
        backend="matmul-fp32",
        group="gemm",
        op="matmul",
        shape="gemm-64",
        dtype="float32",
        status="skipped",
        reason=reason,
    )
    run = make_run(
        [case], device={"kind": "cpu"}, snapshot=load_snapshot("tests/data/snapshots/cpu-laptop.json")
    )
    assert "<redacted>" in run.cases[0].reason and token not in run.cases[0].reason
    written = write_outputs(run, tmp_path / "out")
    assert written and all(token.encode() not in p.read_bytes() for p in written)


def test_a_breaking_path_is_an_error_case_with_its_message_redacted(cpu):
    def broken(backend, shape, device, seed):
        raise RuntimeError("load failed: https://bob:s3cretPa55@hub.example/x\nsecond line")

    (result,) = run_suite(backends_named(["eager"]), [ATTN], device=cpu, reps=5, warmup=1, prepare=broken)
    assert (result.status, result.reason) == (
        "error",
        "RuntimeError: load failed: https://<redacted>@hub.example/x",
    )
