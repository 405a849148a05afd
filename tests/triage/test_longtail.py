"""The long tail of real pastes: normalization before matching, the family rules that name the
culprit from the text, families ranked below specific rules, and live-environment evidence
used only for pastes from this machine. Texts are synthetic or from the corpus's train split
(tests/data/triage/corpus/train), never from heldout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackcheck.knowledge import load_knowledge
from stackcheck.triage import triage_text
from stackcheck.triage.culprits import package_of_path, symbol_owner
from stackcheck.triage.normalize import match_view, strip_decorations
from stackcheck.triage.signatures import SignatureIndex, cut_variant, loosen
from tests.factories import make_snapshot

from .conftest import TRIAGE_DATA

KB = load_knowledge()
LONGTAIL = [r for r in KB.rules if 201 <= int(r.id[2:]) <= 399]
RULES = Path(__import__("stackcheck").__file__).parent / "knowledge" / "data" / "rules"


def train_text(name: str) -> str:
    return json.loads((TRIAGE_DATA / "corpus" / "train" / name).read_text(encoding="utf-8"))["text"]


def top(text: str, **kw):
    d = triage_text(text, **kw)
    assert d.matches, text
    return d.matches[0]


# ----- the rule files --------------------------------------------------------------------------


def test_new_rules_live_in_their_own_files_with_their_layer():
    files = {"longtail.json": "specific", "families.json": "family"}
    for name, layer in files.items():
        rules = json.loads((RULES / name).read_text(encoding="utf-8"))["rules"]
        assert rules and {r["layer"] for r in rules} == {layer}
        ids = [r["id"] for r in rules]
        assert ids == sorted(ids)
        assert (
            all(200 < int(i[2:]) < 300 for i in ids)
            if layer == "specific"
            else all(300 < int(i[2:]) < 400 for i in ids)
        )
    assert len(LONGTAIL) == 77 + 24
    assert {r.layer for r in KB.rules if int(r.id[2:]) < 200} == {"specific"}


@pytest.mark.parametrize("rule", LONGTAIL, ids=lambda r: r.id)
def test_long_tail_rule_is_sourced_and_ranked_first_on_its_examples(rule):
    assert rule.signatures and rule.examples and rule.counter_examples and rule.explanation and rule.fix
    assert rule.sources and all(s.startswith("https://github.com/") for s in rule.sources)
    index = SignatureIndex([rule])
    for text in rule.examples:
        d = triage_text(text)
        assert d.matches and d.matches[0].rule_id == rule.id, (text[:80], [m.rule_id for m in d.matches])
        assert d.matches[0].layer == rule.layer
    for text in rule.counter_examples:
        assert not index.search(text), f"{rule.id} must not match {text!r}"
        assert rule.id not in [m.rule_id for m in triage_text(text).matches]


def test_categories_of_the_long_tail_are_in_the_vocabulary():
    """Every category the corpus README proposed is now in the vocabulary and used by a rule."""
    from stackcheck.models.rule import CATEGORIES

    from .test_corpus_shape import PROPOSED

    used = {r.category for r in LONGTAIL}
    assert set(PROPOSED) <= set(CATEGORIES) and set(PROPOSED) <= used <= set(CATEGORIES)
    assert KB.rule("KB112").category == "shared-memory"


# ----- normalization -----------------------------------------------------------------------------

WRAPPED_SO = (
    "ImportError: /home/u/.venv/lib/python3.10/site-packages/mmcv/_ext.cpython-310-x86_64-linux-gn\n"
    "u.so: undefined symbol: _ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_RKSs\n"
)


def test_a_so_path_hard_wrapped_by_the_terminal_is_rejoined():
    view = match_view(WRAPPED_SO.splitlines())
    assert view.text.splitlines() == [
        "ImportError: /home/u/.venv/lib/python3.10/site-packages/mmcv/_ext.cpython-310-x86_64-linux-gnu.so: "
        "undefined symbol: _ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_RKSs"
    ]
    assert view.origins == [0] and view.origin(len(view.text) - 1) == 0
    m = top(WRAPPED_SO)
    assert (m.rule_id, m.line, m.culprit) == ("KB301", 1, "mmcv")
    assert (
        "library that failed to load: /home/u/.venv/lib/python3.10/site-packages/mmcv/"
        "_ext.cpython-310-x86_64-linux-gnu.so (from mmcv)" in m.evidence
    )
    assert "mmcv was compiled against another torch than the one it is loaded with" in m.evidence


def test_the_wrapped_path_reaches_the_specific_rule_it_belongs_to():
    text = (
        "ImportError: /opt/conda/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-lin\n"
        "ux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n"
    )
    d = triage_text(text)
    assert [m.rule_id for m in d.matches] == ["KB007", "KB301"]
    assert d.matches[1].culprit == "flash-attn"


def test_a_line_that_only_ends_in_a_path_is_not_joined():
    lines = ["cd /home/u/project/src", "make all", "tail of /var/log/build", "log.txt: 3 lines"]
    assert match_view(lines).text.splitlines() == [
        "cd /home/u/project/src",
        "make all",
        "tail of /var/log/build",
        "log.txt: 3 lines",
    ]
    complete = ["ImportError: /x/site-packages/a.so", "b.so: undefined"]  # a.so is complete already
    assert match_view(complete).origins == [0, 1]


def test_a_message_cut_mid_word_at_its_end_still_matches():
    m = top("TypeError: Descriptors cannot not be created direc")
    assert m.rule_id == "KB201"
    assert m.evidence[0] == "line 1: Descriptors cannot not be created direc"
    # cut between words, or followed by other words, it is another text
    assert not SignatureIndex([KB.rule("KB201")]).search("Descriptors cannot not be created elsewhere")
    pattern, specificity = cut_variant(r"Torch not compiled with CUDA enabled")
    assert specificity == 24
    index = SignatureIndex([KB.rule("KB115")])
    assert index.search("AssertionError: Torch not compiled with CUDA enab")
    assert index.search("AssertionError: Torch not compiled with CUDA enab\nnext line")
    assert not index.search("AssertionError: Torch not compiled with CUDA")  # a complete word: not a cut
    assert cut_variant(r"No matching distribution found for torch\b") is None  # no trailing literal
    assert cut_variant(r"a|b c d e f g h i j k l m n o p q r s t u v w x y z") is None  # alternatives


def test_a_literal_space_matches_a_wrapped_line_break():
    assert (
        loosen(r"Bus error\. It is (?:not )?possible [a ]b")
        == r"Bus\s+error\.\s+It\s+is\s+(?:not\s+)?possible\s+[a ]b"
    )
    assert loosen(r"a ?b  c") == r"a\s?b\s+c"
    text = train_text("042-fastai-docker-containers-21.json")  # KB112's message wrapped in prose
    assert "Bus\nerror" in text
    m = top(text)
    assert (m.rule_id, m.category, m.line) == ("KB112", "shared-memory", 1)


def test_rank_prefixes_do_not_split_a_wrapped_message():
    text = (
        "[rank3]: RuntimeError: DataLoader worker (pid 47) is killed by signal: Bus\n"
        "[rank3]: error. It is possible that dataloader's workers are out of shared\n"
        "[rank3]: memory. Please try to raise your shared memory limit.\n"
    )
    m = top(text)
    assert (m.rule_id, m.line) == ("KB112", 1)
    assert strip_decorations("[rank3]: [RANK 2] x") == "x"


def test_timestamps_of_many_loggers_are_removed_before_matching():
    assert strip_decorations('[2025-02-18T15:24:11.855Z]   File "/tmp/x.py"') == 'File "/tmp/x.py"'
    assert (
        strip_decorations("2023-03-28 20:24:31.407336: E external/xla/x.cc:417] y")
        == "E external/xla/x.cc:417] y"
    )
    assert strip_decorations("2023-07-01 16:41:05,669 - ERROR: Exception") == "ERROR: Exception"
    assert strip_decorations("09/04/2024 02:49:57 - INFO - __main__ - x") == "INFO - __main__ - x"
    assert strip_decorations("May 16 17:44:49 Debian ollama[6012]: time=x") == "time=x"
    assert (
        strip_decorations("(VllmWorker TP0 pid=9311) ERROR 08-25 01:25:18 [multiproc_executor.py:602] ptxas")
        == "ptxas"
    )
    assert (
        strip_decorations("g148:14937:69361 [0] misc/shmutils.cc:93 NCCL WARN x")
        == "misc/shmutils.cc:93 NCCL WARN x"
    )
    text = (
        "[2025-02-18T15:24:11.855Z] RuntimeError: DataLoader worker (pid 47) is killed by signal: Bus\n"
        "[2025-02-18T15:24:11.856Z] error. It is possible that dataloader's workers are out of shared"
        " memory.\n"
    )
    assert top(text).rule_id == "KB112"


def test_ansi_colours_are_removed_before_matching():
    m = top(
        "\x1b[31mImportError\x1b[0m: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: "
        "version `GLIBCXX_3.4.30' not found"
    )
    assert (m.rule_id, m.category) == ("KB302", "glibc")


def test_github_actions_error_markers_and_inline_code_are_removed():
    assert strip_decorations("##[error]The operation was canceled.") == "The operation was canceled."
    assert strip_decorations("`ImportError: x`") == "ImportError: x"
    assert strip_decorations("> quoted   text\twith  tabs") == "quoted text with tabs"
    m = top("2026-08-24T08:20:24Z  ##[error]The operation was canceled.")
    assert (m.rule_id, m.category, m.layer) == ("KB310", "timeout-or-hang", "family")
    m = top(train_text("005-pytorch-pytorch-2104.json"))  # every line of the paste in backticks
    assert m.rule_id == "KB301" and m.culprit == "torch"
    assert (
        "missing symbol: _ZN4thpp10THCSTensorIlEC1EP8THCStateP14THCSLongTensor, "
        "defined by torch (its old TH libraries)" in m.evidence
    )


def test_a_warning_without_an_error_word_opens_the_region():
    """NumPy's warning has no error keyword; the region must start there, not at the traceback."""
    import io

    from stackcheck.triage.reader import iter_lines
    from stackcheck.triage.regions import extract_regions

    noise = "".join(f"step {i}\n" for i in range(40))
    text = (
        noise
        + "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may crash.\n"
        + noise
        + 'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\n'
        + "ImportError: numpy.core.multiarray failed to import\n"
    )
    regions = list(extract_regions(iter_lines(io.BytesIO(text.encode()), "t")))
    assert (
        regions[0].start == 41 - 3
        and "A module that was compiled using NumPy 1.x cannot be run in" in regions[0].lines
    )
    # a signature match that starts on one line and continues on the next opens a region there too
    index = SignatureIndex([KB.rule("KB112")])
    wrapped = (
        noise
        + "RuntimeError: DataLoader worker (pid 47) is killed by signal: Bus\n"
        + "error. It is possible that dataloader's workers are out of shared memory.\n"
        + noise
    )
    found = list(
        extract_regions(iter_lines(io.BytesIO(wrapped.encode()), "t"), index.occurs_in, index.match_starts)
    )
    assert [r.start for r in found] == [38]


# ----- families name their culprit -------------------------------------------------------------------


def test_package_of_a_path_and_owner_of_a_symbol():
    assert (
        package_of_path(
            "/x/lib/python3.12/site-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12"
        )
        == "nvidia-cusparse-cu12"
    )
    assert (
        package_of_path("/x/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so") == "flash-attn"
    )
    assert package_of_path("C:\\env\\Lib\\site-packages\\torch\\lib\\c10.dll") == "torch"
    assert package_of_path("/home/u/proj/_ext.so") is None
    assert symbol_owner("_ZNK3c106SymInt6sym_neERKS0_") == ("torch (its c10 core library)", "torch")
    assert symbol_owner("__nvJitLinkAddData_12_1") == ("nvJitLink 12.1", "nvidia-nvjitlink-cu12>=12.1")
    assert symbol_owner("PyUnicode_AsUTF8") == ("the Python C API", "")
    assert symbol_owner("_ZN2cv3Mat5setToE") == ("cv", "")


def test_undefined_symbol_names_a_local_build_and_a_cut_nvjitlink_message():
    m = top(train_text("010-unlimblue-knn-cuda-2.json"))
    assert (m.rule_id, m.culprit) == ("KB301", "knn.so")
    assert "knn.so was compiled against another torch than the one it is loaded with" in m.evidence
    m = top(train_text("209-infiniflow-ragflow-4466.json"))  # the title cut at "version libnvJitL"
    assert (m.rule_id, m.category, m.culprit) == ("KB301", "abi-mismatch", "nvidia-cusparse-cu12")
    m = top("`undefined symbol: _nvJitLinkGetErrorLogSize_12_9`")
    assert m.culprit == "nvidia-nvjitlink-cu12"
    assert "`python -m pip install 'nvidia-nvjitlink-cu12>=12.9'`" in m.fix
    m = top(
        "Symbol not found: _torch_library_impl\n"
        "  Referenced from: <4C1E> /x/site-packages/torchaudio/lib/libtorchaudio.so"
    )
    assert m.culprit == "torchaudio"


def test_glibcxx_names_the_runtime_library_and_the_version():
    m = top(train_text("012-cvg-pixel-perfect-sfm-11.json"))
    assert (m.rule_id, m.culprit) == (
        "KB302",
        "libstdc++ (/home/kevin/anaconda3/envs/pixSfM/lib/libstdc++.so.6)",
    )
    assert "GLIBCXX_3.4.29 is the C++ runtime of GCC 11" in m.evidence
    assert "a conda environment's own libstdc++" in " ".join(m.evidence)
    assert m.fix.startswith(
        "Update the environment's C++ runtime (`conda install -c conda-forge libstdcxx-ng`)"
    )
    m = top(train_text("125-pytorch-pytorch-6607.json"))
    assert (m.culprit, m.category) == ("glibc (older than 2.17)", "glibc")


def test_resolver_conflict_names_the_pair():
    m = top(train_text("020-torch-torch7-1249.json"))
    assert (m.rule_id, m.category, m.culprit) == (
        "KB303",
        "resolver-conflict",
        "torchvision 0.18.0 vs torch 2.2.1",
    )
    assert "torchvision 0.18.0 requires torch==2.3.0; torch 2.2.1 is installed" in m.evidence
    assert "`python -m pip install torch==2.3.0`" in m.fix
    text = (
        "ERROR: Cannot install -r requirements.txt (line 3) and torch==2.0.0 because these package versions "
        "have "
        "conflicting dependencies.\n\nThe conflict is caused by:\n    The user requested torch==2.0.0\n"
        "    torchvision 0.16.0 depends on torch==2.1.0\n"
    )
    m = top(text)
    assert m.culprit == "The user requested torch==2.0.0 vs torchvision 0.16.0 depends on torch==2.1.0"


def test_disk_full_names_the_path_and_shared_memory_the_size():
    m = top("OSError: [Errno 28] No space left on device: '/data/ckpt/model-00001.safetensors'")
    assert (m.category, m.culprit) == (
        "disk-full",
        "the filesystem holding /data/ckpt/model-00001.safetensors",
    )
    assert "`df -h /data/ckpt`" in m.fix
    m = top(train_text("144-pytorch-ci-infra-490.json"))
    assert (m.rule_id, m.category, m.culprit) == ("KB220", "shared-memory", "/dev/shm size")
    assert "NCCL needed a 9.19 MiB shared-memory segment (/dev/shm/nccl-WU88OE)" in m.evidence
    small = make_snapshot()
    small.platform.shm_total_bytes = 64 * 2**20
    m = top(train_text("042-fastai-docker-containers-21.json"), snapshot=small)
    assert m.environment == "agrees" and "/dev/shm in the environment is only 64.00 MiB" in m.evidence


def test_vllm_startup_check_and_embedding_mismatch_do_the_arithmetic():
    m = top(
        "ValueError: Free memory on device cuda:0 (12.18/23.56 GiB) on startup is less than desired GPU "
        "memory utilization (0.92, 21.67 GiB). Decrease GPU memory utilization or reduce GPU memory used by "
        "other processes."
    )
    assert (m.rule_id, m.category, m.culprit) == ("KB214", "cuda-oom", "other processes on the GPU")
    assert (
        "vLLM wants 0.92 of 23.56 GiB = 21.67 GiB; 12.18 GiB is free, 11.38 GiB is held by other processes"
        in m.evidence
    )
    assert "`--gpu-memory-utilization 0.49` fits" in m.fix
    m = top(train_text("070-huggingface-peft-2290.json"))  # the excerpt ends mid-message ("the shap")
    assert (m.rule_id, m.category) == ("KB218", "tokenizer-model-mismatch")
    assert m.culprit == "base_model.model.model.embed_tokens.base_layer.weight"


def test_specific_rules_name_their_culprit_from_the_text():
    assert top("RuntimeError: operator torchvision::nms does not exist").culprit == "torchvision"
    assert (
        top("ImportError: cannot import name 'cached_download' from 'huggingface_hub'").culprit
        == "huggingface_hub"
    )
    m = top(train_text("139-unslothai-unsloth-1992.json"))
    assert (m.rule_id, m.culprit) == ("KB312", "unsloth-zoo")


FAMILY_CULPRITS = {  # family rule → the culprit its first example names
    "KB301": "mmcv",
    "KB302": "libstdc++ (/home/u/anaconda3/envs/x/lib/libstdc++.so.6)",
    "KB303": "torchvision 0.18.0 vs torch 2.2.1",
    "KB304": "tensorflow==1.15",
    "KB305": "the filesystem holding /root/.cache/huggingface/hub/tmpab12",
    "KB311": "network access to huggingface.co",
    "KB312": "unsloth-zoo",
    "KB313": "torch",
    "KB314": "deepspeed==0.17.2",
    "KB315": "Half on the CPU",
    "KB316": "lm.lm_head.weight",
    "KB317": "C:\\env\\Lib\\site-packages\\torch\\lib\\c10_xpu.dll",
    "KB318": "NCCL (internal error, NCCL version 2.14.3)",
    "KB319": "libcudnn.so.8",
    "KB320": "/usr/bin/gcc",
    "KB321": "inductor",
}


@pytest.mark.parametrize("rule_id", sorted(FAMILY_CULPRITS))
def test_each_family_names_the_culprit_its_text_gives(rule_id):
    m = top(KB.rule(rule_id).examples[0])
    assert (m.rule_id, m.layer, m.culprit) == (rule_id, "family", FAMILY_CULPRITS[rule_id])


def test_families_whose_text_names_nothing_say_nothing():
    """Illegal memory access, a device-side assert, a CI cancellation: no culprit is invented."""
    for rule_id in ("KB307", "KB308", "KB310"):
        m = top(KB.rule(rule_id).examples[0])
        assert (m.rule_id, m.culprit) == (rule_id, "")


# ----- rules written from the second train batch (KB255-KB261, KB323; KB229/KB242/KB318 widened) ---

SECOND_BATCH = [  # train case number → (top rule, the start of the evidence line it quotes)
    ("229", "KB255", "line 3: PyTorch no longer"),
    ("230", "KB255", "line 1: The minimum cuda"),
    ("232", "KB255", "line 1: The minimum required"),
    ("234", "KB255", "line 1: No CUDA device found"),
    ("236", "KB229", "line 1: TensileLibrary.dat: Illegal"),
    ("237", "KB229", "line 1: TensileLibrary.dat: No such"),
    ("239", "KB257", "line 10: assert torch.cuda"),
    ("242", "KB256", "line 1: a CUDA-enabled jaxlib"),
    ("245", "KB258", "line 1: ProcessGroupNCCL"),
    ("246", "KB259", "line 10: invalid device ordinal"),
    ("247", "KB259", "line 3: invalid device ordinal"),
    ("250", "KB260", "line 3: CUBLAS_STATUS_ALLOC_FAILED"),
    ("252", "KB260", "line 1: RESOURCE_EXHAUSTED: Out of"),
    ("253", "KB260", "line 1: RESOURCE_EXHAUSTED: Failed"),
    ("254", "KB242", "line 1: DefaultCPUAllocator: not"),
    ("256", "KB242", "line 1: DefaultCPUAllocator: can't"),
    ("258", "KB323", "line 1: Bus error (core"),
    ("259", "KB323", "line 1: Bus error (core"),
    ("261", "KB261", "line 4: piece id"),
    ("262", "KB261", "line 10: piece id"),
    ("264", "KB262", "line 1: Failed to initialize NVML"),
    ("265", "KB262", "line 1: nvml error: driver/library"),
    ("266", "KB263", "line 1: cuda runtime error (802)"),
    ("267", "KB324", "line 1: Unexpected error from cudaGetDeviceCount()"),
    ("275", "KB251", "line 1: numpy.ndarray size changed"),
    ("276", "KB251", "line 1: numpy.ndarray size changed"),
    ("278", "KB264", "line 1: Detected that PyTorch and torch_sparse"),
    ("279", "KB264", "line 1: Detected that PyTorch and torch_sparse"),
    ("280", "KB253", "line 12: KeyError: 'qwen2'"),
    ("281", "KB253", "line 1: KeyError: 'qwen2'"),
]


def train_case(number: str) -> dict:
    [path] = (TRIAGE_DATA / "corpus" / "train").glob(f"{number}-*.json")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("number,rule_id,quote", SECOND_BATCH, ids=[c[0] for c in SECOND_BATCH])
def test_second_batch_train_text_is_answered_by_its_rule(number, rule_id, quote):
    case = train_case(number)
    d = triage_text(case["text"])
    m = d.matches[0]
    assert (m.rule_id, m.category, m.layer) == (rule_id, case["category"], KB.rule(rule_id).layer)
    assert m.evidence[0].startswith(quote), m.evidence[0]
    assert [x.rule_id for x in d.matches] == [rule_id]  # nothing else claims these texts


def test_second_batch_rules_capture_the_facts_the_text_gives():
    m = top(train_case("235")["text"])  # hard-wrapped by the reporter
    assert (m.rule_id, m.evidence[1:]) == ("KB255", ["min capability: 3.5", "capability: 3.0"])
    m = top(train_case("237")["text"])
    assert "gfx arch: gfx1201" in m.evidence
    m = top(train_case("243")["text"])
    assert (m.rule_id, m.culprit) == ("KB256", "jaxlib")
    m = top(train_case("252")["text"])
    assert "bytes requested: 4770354232" in m.evidence
    m = top(train_case("279")["text"])
    assert (m.culprit, m.evidence[1:3]) == (
        "torch_sparse",
        ["torch has cuda: 11.1", "extension has cuda: 11.2"],
    )
    m = top(KB.rule("KB264").examples[1])  # torchvision says it the same way: one rule for both
    assert (m.rule_id, m.culprit, m.evidence[1]) == ("KB264", "torchvision", "torch has cuda: 11.8")
    m = top(KB.rule("KB260").examples[2])  # TensorFlow names the GPU
    assert (m.rule_id, "gpu index: 0" in m.evidence) == ("KB260", True)


def test_second_batch_rules_stay_quiet_where_the_text_gives_no_ground():
    for text in (
        "assert torch.cuda.is_available() or args.cpu",  # a fallback in code, not a failed assertion
        "Bus error counters: 0",
        "ProcessGroupNCCL initialized with 8 GPUs",
        "OOM when allocating tensor with shape[100,4096,32]",  # TensorFlow on the CPU: not the GPU
        "Found device 0 with properties: name: GeForce GTX 1080 major: 6 minor: 1",
        "KeyError: 'input_ids'",  # a KeyError names a model type only when transformers' lookup raised it
        "KeyError: 'llama3_custom'",
    ):
        assert triage_text(text).matches == [], text
    # a bus error is a family: a specific shared-memory rule on the same paste ranks first
    d = triage_text(
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
        "memory (shm).\nBus error (core dumped)"
    )
    assert [(x.rule_id, x.layer) for x in d.matches] == [("KB112", "specific"), ("KB323", "family")]
    # CUDA's initialisation family: the error number that names a known cause ranks first
    d = triage_text(train_case("269")["text"])  # Error 804 on a GeForce GPU
    assert [(x.rule_id, x.category) for x in d.matches] == [
        ("KB004", "driver-too-old"),
        ("KB324", "cuda-not-available"),
    ]
    d = triage_text(KB.rule("KB263").examples[1])  # Error 802: Fabric Manager
    assert [x.rule_id for x in d.matches] == ["KB263", "KB324"]


# ----- ranking ----------------------------------------------------------------------------------


def test_a_family_never_outranks_a_specific_match():
    text = (
        "torchvision 0.18.0 requires torch==2.3.0, but you have torch 2.2.1 which is incompatible.\n"
        "ModuleNotFoundError: No module named 'einops'\n"
    )
    d = triage_text(text)
    assert [(m.rule_id, m.layer) for m in d.matches] == [("KB101", "specific"), ("KB303", "family")]
    assert d.matches[1].score > d.matches[0].score  # scored higher, still second


def test_the_text_output_says_a_match_is_generic_and_names_its_culprit():
    from stackcheck.cli.triage import render_text

    out = render_text(triage_text(WRAPPED_SO, source="paste"))
    assert "category abi-mismatch, generic family, confidence medium" in out
    assert "   culprit: mmcv\n" in out


def test_nothing_answers_without_ground_in_the_text():
    for text in (
        "Epoch 3/10 loss=0.42",
        "Downloading model.safetensors 100%",
        "All tests passed",
        "Warning: the given NumPy array is not writable",
        "error: 0 errors",
    ):
        assert triage_text(text).matches == [], text


# ----- environment evidence from the machine running triage ------------------------------------------


def _live(prefix: str = "/home/me/.venv"):
    snap = make_snapshot(torch="2.5.1", torch_cuda=None)
    snap.python.executable, snap.python.prefix = f"{prefix}/bin/python", prefix
    snap.python.site_dirs = [f"{prefix}/lib/python3.12/site-packages"]
    calls = []

    def gather():
        calls.append(1)
        return snap

    return gather, calls


def test_a_bare_paste_is_not_judged_by_the_machine_running_triage():
    gather, calls = _live()
    d = triage_text("AssertionError: Torch not compiled with CUDA enabled", live_environment=gather)
    assert calls == [1]
    assert (
        d.environment_source
        == "none (nothing in the input shows it comes from this machine; give --snapshot)"
    )
    assert [(m.rule_id, m.environment, m.confidence) for m in d.matches] == [("KB115", "unknown", "high")]


def test_a_paste_naming_this_machine_s_paths_is_judged():
    gather, _ = _live()
    text = (
        '  File "/home/me/.venv/lib/python3.12/site-packages/app/main.py", line 3, in <module>\n'
        "AssertionError: Torch not compiled with CUDA enabled\n"
    )
    d = triage_text(text, live_environment=gather)
    assert d.environment_source == "live environment"
    assert d.environment_why == "traceback frames come from /home/me/.venv, this environment's prefix"
    assert d.matches[0].environment != "unknown"
    text = "$ /home/me/.venv/bin/python train.py\nAssertionError: Torch not compiled with CUDA enabled\n"
    d = triage_text(text, live_environment=gather)
    assert d.environment_why == "the input names this environment's interpreter /home/me/.venv/bin/python"


def test_a_system_wide_prefix_does_not_show_the_paste_is_from_this_machine():
    gather, _ = _live("/usr/local")
    text = (
        '  File "/usr/local/lib/python3.12/site-packages/app/main.py", line 3, in <module>\n'
        "AssertionError: Torch not compiled with CUDA enabled\n"
    )
    d = triage_text(text, live_environment=gather)
    assert d.environment_source.startswith("none (nothing in the input shows")
    assert d.matches[0].environment == "unknown"
