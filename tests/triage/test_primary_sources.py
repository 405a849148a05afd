"""Rules written from the libraries' own messages (issue 12: rules that generalise). Each message
is the format string of its primary source (torch, the CUDA runtime's error names, NVML,
nvidia-container-cli, Docker, TensorFlow, vLLM, SGLang, llama.cpp, DeepSpeed, setuptools, pip,
NumPy, pydantic, Triton) filled in, not corpus text; the last section takes the corpus's train
cases (never held-out). The tests prove each family is answered in the forms real pastes take
(logger and rank prefixes, a hard wrap, a cut end), names what the text names, ranks a family
below the specific rule, and stays quiet where the text gives no ground."""

from __future__ import annotations

import json

import pytest

from stackcheck.knowledge import load_knowledge
from stackcheck.triage import triage_text

from .conftest import TRIAGE_DATA

KB = load_knowledge()

ANSWERED_BY_CATEGORY = {  # category → (top rule, a message of its primary source, as pasted)
    "cuda-not-available": [
        ("KB246", "[rank1]: RuntimeError: No HIP GPUs are available"),
        ("KB246", "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorNoDevice"),
        (
            "KB265",
            "2025-03-01 10:00:00,123 - WARNING - torch.cuda.amp.GradScaler is enabled, but CUDA is "
            "not available.  Disabling.",
        ),
        ("KB265", "ERROR 08-25 01:25:18 [engine.py:400] RuntimeError: Failed to infer device type"),
        ("KB115", "RuntimeError: PyTorch was compiled without CUDA support"),
        ("KB266", "nvidia-container-cli: initialization error: nvml error: driver not\nloaded: unknown."),
        ("KB266", "$ nvidia-smi\nFailed to initialize NVML: Driver Not Loaded"),
        (
            "KB103",
            "ImportError: /usr/lib/x86_64-linux-gnu/libcusparseLt.so.0: cannot open shared object "
            "file: No such file or directory",
        ),
        (
            "KB319",
            "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic "
            "library 'cublas64_11.dll'; dlerror: cublas64_11.dll not found",
        ),
    ],
    "driver-too-old": [
        (
            "KB247",
            "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.9, please "
            "update your driver to a newer version, or use an earlier cuda container: unknown.",
        ),
        ("KB247", "RuntimeError: CUDA error: API call is not supported in the installed CUDA driver"),
    ],
    "gpu-arch-unsupported": [
        (
            "KB267",
            "UserWarning: Found GPU0 NVIDIA GeForce GTX 1080 Ti which is of compute capability (CC) 6.1.",
        ),
        ("KB230", "CUDA_ERROR_NO_BINARY_FOR_GPU"),
        ("KB229", "[rank0]: HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid."),
    ],
    "cuda-oom": [
        (
            "KB268",
            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current "
            "value: mem_fraction_static=0.88",
        ),
        (
            "KB268",
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9000.00 MiB on device 0: "
            "cudaMalloc failed: out of memory",
        ),
        (
            "KB260",
            "W tensorflow/core/common_runtime/bfc_allocator.cc:474] Allocator (GPU_0_bfc) ran out of "
            "memory trying to allocate 512.0KiB (rounded to 524288)requested by op Conv2D",
        ),
        ("KB260", "RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED"),
        (
            "KB020",
            "ValueError: To serve at least one request with the models's max seq len (8192), (1.00 "
            "GiB KV cache is needed, which is larger than the available KV cache memory (0.50 GiB).",
        ),
        ("KB260", "Out of memory error on GPU 0. Cannot allocate 1.000000GB memory on GPU 0, 14.7GB memory"),
    ],
    "shared-memory": [
        ("KB269", "OSError: [Errno 28] No space left on device: '/dev/shm/sem.mp-abc'"),
        ("KB269", "cp: cannot create regular file '/dev/shm/x': No space left on device"),
        (
            "KB221",
            "RuntimeError: unable to allocate shared memory(shm) for file </torch_1_2_3>: No space "
            "left on device (28)",
        ),
    ],
    "tokenizer-model-mismatch": [
        ("KB261", "ValueError: Token id 128256 is out of vocabulary"),
    ],
    "extension-build": [
        ("KB208", "AssertionError: CUDA_HOME does not exist, unable to compile CUDA op(s)"),
        ("KB270", "error: command 'gcc' failed: No such file or directory"),
        ("KB270", "RuntimeError: Ninja is required to load C++ exte"),
        (
            "KB208",
            "csrc/ops.cu:1:10: fatal error: cuda_runtime.h: No such file or directory\ncompilation "
            "terminated.\nerror: command '/usr/bin/gcc' failed with exit code 1",
        ),
        ("KB270", "error: invalid command 'bdist_wheel'\n  ERROR: Failed building wheel for pycocotools"),
        ("KB270", "      error: can't find Rust compiler\n      ERROR: Failed building wheel for tokenizers"),
        (
            "KB320",
            "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
        ),
        ("KB320", "  × Getting requirements to build wheel did not run successfully.\n  │ exit code: 1"),
    ],
    "dependency-conflict": [
        (
            "KB271",
            '  File "/app/utils.py", line 12, in <module>\n    x = np.NaN\nAttributeError: `np.NaN` '
            "was removed in the NumPy 2.0 release. Use `np.nan` instead.",
        ),
        (
            "KB271",
            "pydantic.errors.PydanticImportError: `BaseSettings` has been moved to the "
            "`pydantic-settings` package. See https://errors.pydantic.dev/2.5/u/import-error",
        ),
        (
            "KB271",
            "ImportError: This example requires a source install from HuggingFace Transformers (see "
            "`https://huggingface.co/docs/transformers/installation#install-from-source`), but the "
            "version found is 4.38.2.",
        ),
        (
            "KB277",
            'time=2025-01-01T00:00:00Z level=ERROR source=server.go:1 msg="llama runner terminated" '
            'error="llama_model_load: error loading model: error loading model architecture: unknown '
            "model architecture: 'qwen3'\"",
        ),
        (
            "KB277",
            "Fail: [ONNXRuntimeError] : 1 : FAIL : Unsupported model IR version: 11, max supported "
            "IR version: 10",
        ),
    ],
    "abi-mismatch": [
        (
            "KB272",
            "ImportError: DLL load failed while importing _C: The specified procedure could not be found.",
        ),
        ("KB251", "RuntimeError: module compiled against API version 0x10 but this version of numpy is 0xe"),
        (
            "KB276",
            "ImportError: Python version mismatch: module was compiled for Python 3.10, but the "
            "interpreter version is incompatible: 3.12.3.",
        ),
        ("KB276", "(mach-o file, but is an incompatible architecture (have 'x86_64', need 'arm64'))"),
    ],
    "triton-or-compile-failure": [
        (
            "KB273",
            "[rank0]: triton.runtime.errors.OutOfResources: out of resource: shared memory, "
            "Required: 81920, Hardware limit: 65536. Reducing block sizes or `num_stages` may help.",
        ),
        (
            "KB273",
            "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: "
            "Failed to find C compiler. Please specify via CC environment variable.",
        ),
    ],
    "infrastructure": [
        (
            "KB237",
            "huggingface_hub.errors.LocalEntryNotFoundError: An error happened while trying to "
            "locate the file on the Hub and we cannot find the\nrequested files in the local cache.",
        ),
    ],
    "nccl-failure": [
        (
            "KB318",
            "[rank1]:[E1101 10:00:00.000000 123 ProcessGroupNCCL.cpp:1600] [PG ID 0 PG GUID "
            "0(default_pg) Rank 1] Some NCCL operations have failed or timed out.",
        ),
    ],
}
ANSWERED = [(t, r, c) for c, rows in ANSWERED_BY_CATEGORY.items() for r, t in rows]


@pytest.mark.parametrize(
    "text,rule_id,category", ANSWERED, ids=[f"{r}-{i}" for i, (_, r, _) in enumerate(ANSWERED)]
)
def test_each_message_of_a_family_is_answered_by_its_rule(text, rule_id, category):
    d = triage_text(text)
    assert d.matches, text
    assert (d.matches[0].rule_id, d.matches[0].category) == (rule_id, category)
    assert d.matches[0].layer == KB.rule(rule_id).layer


def test_the_rules_name_what_the_text_gives():
    m = triage_text(ANSWERED_BY_CATEGORY["driver-too-old"][0][1]).matches[
        0
    ]  # nvidia-container-cli's requirement
    assert m.evidence[1:] == ["required cuda: 12.9"]
    m = triage_text(ANSWERED_BY_CATEGORY["gpu-arch-unsupported"][0][1]).matches[0]  # torch 2.13's notice
    assert m.evidence[1:] == ["capability: 6.1"]
    m = triage_text("llama_model_load: error loading model: unable to allocate CUDA0 buffer").matches[0]
    assert (m.rule_id, m.evidence[1:]) == ("KB268", ["buffer: CUDA0"])
    m = triage_text("error: command 'x86_64-linux-gnu-gcc' failed: No such file or directory").matches[0]
    assert (m.rule_id, m.culprit) == ("KB270", "x86_64-linux-gnu-gcc")
    m = triage_text(ANSWERED_BY_CATEGORY["shared-memory"][0][1]).matches[0]  # /dev/shm full
    assert m.evidence[1:] == [
        "the write that failed: /dev/shm/sem.mp-abc",
        "/dev/shm is shared memory: the container's shm size, not the disk",
    ]
    m = triage_text(ANSWERED_BY_CATEGORY["tokenizer-model-mismatch"][0][1]).matches[0]
    assert m.evidence[1:] == ["token id: 128256"]
    m = triage_text(ANSWERED_BY_CATEGORY["dependency-conflict"][0][1]).matches[0]
    assert (m.line, m.evidence[1:]) == (3, ["removed: NaN"])
    m = triage_text(ANSWERED_BY_CATEGORY["dependency-conflict"][2][1]).matches[0]
    assert (m.culprit, m.evidence[1]) == ("HuggingFace Transformers", "transformers version: 4.38.2")
    m = triage_text(ANSWERED_BY_CATEGORY["triton-or-compile-failure"][0][1]).matches[0]
    assert m.evidence[1:] == ["resource: shared memory", "required: 81920", "limit: 65536"]
    m = triage_text(ANSWERED_BY_CATEGORY["extension-build"][3][1]).matches[0]
    assert (m.culprit, m.evidence[1:]) == ("cuda_runtime.h", ["missing header: cuda_runtime.h"])


def test_a_specific_cause_ranks_above_its_family():
    # error 803 inside torch's initialisation warning: the driver first, CUDA's init family second
    text = (
        "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some "
        "cuda functions before calling NumCudaDevices() that might have already set an error? Error 803: "
        "system has unsupported display driver / cuda driver combination"
    )
    assert [(m.rule_id, m.category, m.layer) for m in triage_text(text).matches] == [
        ("KB247", "driver-too-old", "specific"),
        ("KB324", "cuda-not-available", "family"),
    ]
    # a full /dev/shm is shared memory first; the disk-full family only second
    assert [
        (m.rule_id, m.category) for m in triage_text(ANSWERED_BY_CATEGORY["shared-memory"][0][1]).matches
    ] == [
        ("KB269", "shared-memory"),
        ("KB305", "disk-full"),
    ]
    d = triage_text(
        ANSWERED_BY_CATEGORY["shared-memory"][2][1]
    )  # torch's shm file: its own rule, then the family
    assert [m.rule_id for m in d.matches] == ["KB221", "KB305"]
    # the missing tool or header first; the build failure it caused is the family that follows
    for text, first in (
        (ANSWERED_BY_CATEGORY["extension-build"][3][1], "KB208"),
        (ANSWERED_BY_CATEGORY["extension-build"][4][1], "KB270"),
    ):
        assert [(m.rule_id, m.layer) for m in triage_text(text).matches] == [
            (first, "specific"),
            ("KB320", "family"),
        ]
    text = ANSWERED_BY_CATEGORY["triton-or-compile-failure"][1][1]
    assert [m.rule_id for m in triage_text(text).matches] == ["KB273", "KB321"]
    # procedure not found is a build mismatch; module not found stays the generic DLL rule
    text = ANSWERED_BY_CATEGORY["abi-mismatch"][0][1]
    assert [(m.rule_id, m.category) for m in triage_text(text).matches] == [
        ("KB272", "abi-mismatch"),
        ("KB105", "other"),
    ]
    text = "ImportError: DLL load failed while importing _C: The specified module could not be found."
    assert [m.rule_id for m in triage_text(text).matches] == ["KB105"]


@pytest.mark.parametrize(
    "text",
    [
        # TensorFlow's allocator warning that says it is not a failure
        "W tensorflow/core/common_runtime/bfc_allocator.cc:290] Allocator (GPU_0_bfc) ran out of memory "
        "trying to allocate 1.42GiB with freed_by_count=0. The caller indicates that this is not a failure, "
        "but this may mean that there could be performance gains if more memory were available.",
        "ninja: no work to do.",
        "Found GPU0 NVIDIA H100 80GB HBM3 with compute capability 9.0",
        "torch.cuda.is_available(): True",
        "nvidia-container-cli: requirement satisfied: cuda>=12.8",
        "Token id 3 is in vocabulary",
        "Not enough memory to show the preview",
        "Successfully built pycocotools",
        "`np.float64` is the replacement",
        "torch.cuda.is_available() returns True",
        "Process rank: 0, device: cuda:0, n_gpu: 1, distributed training: True",
        ">>> print(torch.version.cuda)\n12.4",
    ],
)
def test_the_new_rules_stay_quiet_without_ground(text):
    assert triage_text(text).matches == []


def test_near_misses_go_to_the_rule_they_belong_to():
    d = triage_text("OSError: [Errno 28] No space left on device: '/data/ckpt.pt'")  # a disk, not /dev/shm
    assert [(m.rule_id, m.category) for m in d.matches] == [("KB305", "disk-full")]
    d = triage_text("error: command '/usr/bin/gcc' failed with exit code 1")  # the compiler ran and failed
    assert [(m.rule_id, m.category) for m in d.matches] == [("KB320", "extension-build")]


# ----- the new train cases (merged from i12-gather), answered by the family-wide rules -------------

GATHERED_TRAIN = [  # train case number → every match, in rank order, and the start of the top evidence
    ("284", ["KB265"], "line 1: No CUDA runtime is found"),  # torch found the toolkit, not the runtime
    ("285", ["KB265"], "line 1: Process rank: 0, device: cpu"),
    ("288", ["KB247", "KB324"], "line 1: system has unsupported display driver"),  # error 803
    ("298", ["KB115", "KB275"], "line 10: torch.version.cuda"),
    ("299", ["KB274"], "line 1: Not compiled with GPU support"),
    ("303", ["KB261"], "line 2: vocab size of the tokenizer"),
    ("313", ["KB273", "KB230"], "line 1: Triton Error [CUDA]: device kernel"),
    ("314", ["KB273"], "line 5: Triton Error [CUDA]: invalid device context"),
    ("317", ["KB303"], "line 3: because these package versions"),  # pip's list wrapped over 4 lines
    ("325", ["KB271"], "line 1: you need flash_attn package version"),
    ("327", ["KB112"], "line 1: bus error encountered in worker, This"),  # retyped by the reporter
    ("340", ["KB204"], "line 1: A matching Triton is not available"),
    ("343", ["KB204", "KB101"], "line 1: ModuleNotFoundError: No module named 'triton"),
    ("344", ["KB204", "KB101"], "line 1: ModuleNotFoundError: No module named 'triton'"),
    ("356", ["KB275"], "line 1: torch.cuda.is_available() return false"),
]


@pytest.mark.parametrize("number,rules,quote", GATHERED_TRAIN, ids=[c[0] for c in GATHERED_TRAIN])
def test_gathered_train_case_is_answered_by_the_family_rule(number, rules, quote):
    [path] = (TRIAGE_DATA / "corpus" / "train").glob(f"{number}-*.json")
    case = json.loads(path.read_text(encoding="utf-8"))
    d = triage_text(case["text"])
    assert [m.rule_id for m in d.matches] == rules
    assert d.matches[0].category == case["category"]
    assert d.matches[0].evidence[0].startswith(quote), d.matches[0].evidence[0]
