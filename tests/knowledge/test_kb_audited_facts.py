"""The facts an audit of the blocked verdicts found wrong or stale, each pinned at its corrected
value (the source of each is in the data file beside it), and the rule that a fact marked
``"verified": false`` can warn but never block."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import re2

from stackcheck.checks.context import Context
from stackcheck.checks.registry import all_checks
from stackcheck.errors import InputError
from stackcheck.judge import judge
from stackcheck.knowledge import load_knowledge
from stackcheck.knowledge.loader import DATA_DIR, load_from
from tests.factories import dist, make_snapshot

KB = load_knowledge()
V100 = ("Tesla V100-SXM2-32GB", "7.0", 32)
H100 = ("NVIDIA H100 80GB HBM3", "9.0", 79.6)


def run(check_id: str, snap, kb=None):
    ctx = Context(snapshot=snap)
    if kb is not None:
        ctx.knowledge = kb  # a knowledge base from another data directory
    return list(all_checks()[check_id].run(ctx))


def verdicts(check_id: str, snap, kb=None) -> list[str]:
    return [o.verdict for o in run(check_id, snap, kb)]


# ---------------------------------------------------------------- architectures per build


def test_torch_2_11_cu128_dropped_volta_and_2_10_cu128_still_has_it():
    v100_211 = make_snapshot(gpus=[V100], driver="575.57.08", torch="2.11.0+cu128", torch_cuda="12.8")
    [o] = run("GPU004", v100_211)
    assert o.verdict == "blocked"
    assert "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120" in o.observed and "sm_70" not in o.observed
    assert "https://download.pytorch.org/whl/cu126" in o.fix  # the build that still carries sm_70
    v100_210 = make_snapshot(gpus=[V100], driver="575.57.08", torch="2.10.0+cu128", torch_cuda="12.8")
    assert verdicts("GPU004", v100_210) == ["ok"]
    assert KB.arch_list("2.11.0", "12.8") == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
    assert KB.arch_list("2.11.0", "12.6")[:3] == ["sm_50", "sm_60", "sm_70"]


def test_cu130_arch_lists_of_2_9_to_2_11_are_read_from_release_md():
    for release in ("2.9.0", "2.10.0", "2.11.0"):
        row = KB.arch_build(release, "13.0")
        assert row.verified and row.sass[0] == "7.5" and row.ptx == ["12.0"], release


# ---------------------------------------------------------------- CUDA builds per release


def test_cu129_builds_of_2_11_2_12_1_and_2_13_are_known():
    builds = {r.torch: r.all_cuda_builds for r in KB.torch.releases}
    assert sorted(builds["2.13"]) == ["12.6", "12.9", "13.0", "13.2"]
    for release in ("2.9", "2.10", "2.11", "2.12", "2.13"):
        assert "12.9" in KB.torch_release(release).cuda_index_only, release
    assert "12.9" not in builds["2.14"]  # cu129 stops at 2.13.0
    assert KB.torch_release("2.12").cuda_since == {"12.9": "2.12.1"}  # 2.12.0+cu129 was never published
    for release in ("2.11.0", "2.12.1", "2.13.0"):
        assert KB.arch_list(release, "12.9") is not None, release


def test_cu129_arch_list_of_2_11_to_2_13_is_unverified_and_only_warns_on_a_v100():
    assert not KB.arch_build("2.13.0", "12.9").verified
    build = {"driver": "575.57.08", "torch": "2.13.0+cu129", "torch_cuda": "12.9"}
    [o] = run("GPU004", make_snapshot(gpus=[V100], **build))
    assert o.verdict == "warning"
    assert "unverified: the 12.9 arch list of 2.11-2.13 wheels was not read" in o.observed
    assert verdicts("GPU004", make_snapshot(gpus=[H100], **build)) == ["ok"]


# ---------------------------------------------------------------- drivers


def test_driver_table_reaches_cuda_13_3():
    assert KB.driver_requirement("13.1")[:2] == ("580", "590.44.01")
    assert KB.driver_requirement("13.2")[:2] == ("580", "595.45.04")  # 13.2 GA; U1 595.58.03
    assert KB.driver_requirement("13.3")[:2] == ("580", "610.43.02")
    assert KB.newest_cuda_for_driver("590.48.01") == "13.1"
    assert KB.newest_cuda_for_driver("595.58.03") == "13.2"
    assert KB.driver_unverified("13.2") == ""  # its toolkit driver is the verified GA row
    u2 = [t for t in KB.drivers.toolkits if (t.cuda, t.release) == ("13.2", "U2")]
    assert [(t.linux, t.verified) for t in u2] == [("595.71.05", False)]  # from the installer name only


def test_cu132_torch_needs_the_13_2_toolkit_driver():
    snap = make_snapshot(gpus=[H100], driver="590.48.01", torch="2.14.0+cu132", torch_cuda="13.2")
    [o] = run("CUDA002", snap)
    assert o.verdict == "warning" and "driver >= 595.45.04 (CUDA 13.2 toolkit driver)" in o.expected
    snap.accelerators.driver_version = "595.45.04"
    assert verdicts("CUDA002", snap) == ["ok"]


def test_windows_floors_and_toolkit_drivers():
    assert KB.driver_requirement("11.4", "windows")[:2] == ("452.39", "471.11")
    assert KB.driver_requirement("12.8", "windows")[:2] == ("527.41", "570.65")
    assert KB.driver_requirement("11.7", "windows").toolkit_driver == "516.01"
    assert KB.driver_requirement("11.6", "windows").toolkit_driver == "511.23"
    rows = KB.drivers.toolkits
    blank = [(t.cuda, t.release) for t in rows if t.windows is None and t.cuda.startswith(("11.", "12."))]
    assert blank == []  # every 11.x/12.x release has its Windows driver
    a6000 = [("NVIDIA RTX A6000", "8.6", 48)]
    win = make_snapshot(gpus=a6000, driver="452.38", torch="2.0.1+cu118", torch_cuda="11.8", system="Windows")
    assert verdicts("CUDA002", win) == ["blocked"]  # below the 11.x Windows floor 452.39
    win.accelerators.driver_version = "452.39"
    assert verdicts("CUDA002", win) == ["warning"]  # floor met, toolkit driver 520.06 not


# ---------------------------------------------------------------- companions and Python


def test_torchvision_pairs_with_torch_minor_plus_15():
    paired = [(r.torch, r.torchvision) for r in KB.torch.releases if r.torchvision]
    assert len(paired) >= 15
    for torch, vision in paired:
        assert int(vision.split(".")[1]) == int(torch.split(".")[1]) + 15, (torch, vision)
    assert "0.(X+15)" in KB.rule("KB011").explanation and "X+13" not in KB.rule("KB011").explanation


def test_torchaudio_pin_rule_stops_at_2_11():
    text = KB.rule("KB037").explanation
    assert "2.11.0 declares no torch requirement" in text and "2.11.1 requires torch>=2.11" in text
    paired = [KB.torch_release(v).torchaudio for v in ("2.10", "2.11", "2.12", "2.14")]
    assert paired == ["2.10", "2.11", "2.11", "2.11"]


def test_torch_2_13_and_2_14_have_no_python_3_15_wheels():
    for release in ("2.13", "2.14"):
        assert KB.torch_release(release).python == ">=3.10,<3.15", release
    snap = make_snapshot(python="3.15.0", torch="2.13.0+cu130", torch_cuda="13.0")
    [o] = run("KB031", snap)
    assert o.verdict == "warning" and "Python 3.15.0 with torch 2.13.0+cu130" in o.observed


# ---------------------------------------------------------------- error texts


def test_kb002_matches_torch_2_8_wrapped_warning():
    wrapped = (
        "UserWarning:\n    Please install PyTorch with a following CUDA\n"
        "    configurations:  12.6 following instructions at"
    )
    assert any(re2.search(sig, wrapped) for sig in KB.rule("KB002").signatures)


def test_kb031_examples_are_what_pip_prints():
    rule = KB.rule("KB031")
    # torch wheels are CPython-tagged: pip drops them on the tag before Requires-Python is read
    no_wheel = "ERROR: Could not find a version that satisfies the requirement torch=="
    assert any(t.startswith(no_wheel) for t in rule.examples)
    assert not any("Requires-Python >=3.9" in t and "2.5.0" in t for t in rule.examples)  # 2.5.0 says >=3.8.0
    fmt = re.compile(
        r"^ERROR: Ignored the following versions that require a different python version: "
        r"(\S+ Requires-Python \S+(; )?)+$"
    )
    assert all(fmt.match(t) for t in rule.examples if "Ignored the following" in t)


# ---------------------------------------------------------------- vLLM wheels


def test_vllm_default_wheel_cuda_is_not_torchs():
    assert KB.engine_pins("vllm", "0.19.0").wheel_cuda == "12.9"
    for v in ("0.20.0", "0.25.1", "0.33.0"):
        row = KB.engine_pins("vllm", v)
        variants = {"12.9": "https://wheels.vllm.ai/{version}/cu129"}
        assert (row.wheel_cuda, row.cuda_variants) == ("13.0", variants), v
    assert KB.engine_pins("vllm", "0.11.0").wheel_cuda is None  # not verified before 0.12


def spec025_snapshot(torch: str = "2.11.0+cu129", torch_cuda: str = "12.9"):
    return make_snapshot(
        dist("vllm", "0.25.1+cu129", top_level=["vllm"]),
        dist("torchvision", "0.26.0+cu129", top_level=["torchvision"]),
        dist("torchaudio", "2.11.0+cu129", top_level=["torchaudio"]),
        dist("transformers", "5.6.0", top_level=["transformers"]),
        dist("tokenizers", "0.23.0", top_level=["tokenizers"]),
        dist("flashinfer-python", "0.6.13", top_level=["flashinfer"]),
        gpus=[H100],
        driver="575.57.08",
        driver_cuda="12.9",
        torch=torch,
        torch_cuda=torch_cuda,
        modules={
            "torch": "/env/lib/python3.12/site-packages/torch/__init__.py",
            "vllm": "/env/lib/python3.12/site-packages/vllm/__init__.py",
        },
    )


def test_spec025_passes_the_cuda_checks_on_a_cuda_12_9_driver():
    from stackcheck.catalog import load_catalog

    profile = load_catalog(registry=None, cwd="/").get("INF-VLLM-SPEC025")
    report = judge(spec025_snapshot(), command="preflight", profile=profile)
    by_id = {c.id: c.verdict for c in report.checks}
    judged = ("CUDA001", "CUDA002", "GPU004", "KB006", "KB029")
    assert {i: by_id[i] for i in judged} == dict.fromkeys(judged, "ok")
    assert report.verdict == "warning"  # only KB028 (torchaudio without torchcodec) remains
    # torch's cu128 build (the old profile) is refused, with the cu129 index as the fix
    cu128 = judge(spec025_snapshot("2.11.0+cu128", "12.8"), command="preflight", profile=profile)
    [c] = [c for c in cu128.checks if c.id == "CUDA001"]
    assert c.verdict == "blocked"
    assert "torch==2.11.0 --index-url https://download.pytorch.org/whl/cu129" in c.fix


def test_a_vllm_profile_whose_torch_cuda_no_vllm_wheel_has_is_inconsistent():
    from stackcheck.knowledge.consistency import profile_problems
    from tests.factories import make_profile

    old = make_profile(requirements=["vllm==0.25.1", "torch==2.11.0"], gpu={"torch_cuda": "==12.8"})
    [(field, msg)] = profile_problems(old)
    assert field == "gpu.torch_cuda" and "publishes wheels for CUDA 12.9, 13.0 only" in msg
    cu129 = make_profile(requirements=["vllm==0.25.1", "torch==2.11.0"], gpu={"torch_cuda": "==12.9"})
    assert profile_problems(cu129) == []
    unknown = make_profile(requirements=["vllm==0.11.0"], gpu={"torch_cuda": "==12.8"})
    assert profile_problems(unknown) == []  # its wheel CUDA is not known: not judged


# ---------------------------------------------------------------- catalog notes cite real checks


def test_catalog_notes_cite_check_ids_that_explain_knows():
    root = Path(__file__).resolve().parents[2] / "src" / "stackcheck" / "catalog" / "builtin"
    text = " ".join(p.read_text(encoding="utf-8") for p in sorted(root.glob("*.json")))
    assert re.findall(r"\bKB-\d+", text) == []  # the reference's row numbers are not check IDs
    cited = set(re.findall(r"\b(?:KB|CUDA|GPU|PKG|PY)\d{3}\b", text))
    assert {"KB006", "KB029", "KB032", "KB033", "KB003"} <= cited
    assert cited <= set(all_checks()), cited - set(all_checks())


# ---------------------------------------------------------------- unverified facts warn, never block


@pytest.fixture
def data(tmp_path: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(DATA_DIR, target)
    return target


def mark_unverified(data: Path, filename: str, list_name: str, match: dict) -> None:
    path = data / filename
    doc = json.loads(path.read_text(encoding="utf-8"))
    rows = [r for r in doc[list_name] if all(r.get(k) == v for k, v in match.items())]
    assert rows, match
    for r in rows:
        r.update(verified=False, unverified_reason="test: nobody read this")
    path.write_text(json.dumps(doc), encoding="utf-8")


def test_an_unverified_arch_row_downgrades_gpu004_to_a_warning(data):
    mark_unverified(data, "torch_arch_lists.json", "builds", {"torch": "==2.11.*", "cuda": "12.8"})
    snap = make_snapshot(gpus=[V100], driver="575.57.08", torch="2.11.0+cu128", torch_cuda="12.8")
    [o] = run("GPU004", snap, load_from(data))
    assert o.verdict == "warning" and "unverified: test: nobody read this" in o.observed
    assert verdicts("GPU004", snap) == ["blocked"]  # the packaged (verified) row blocks


def test_an_unverified_driver_floor_downgrades_cuda002_to_a_warning(data):
    mark_unverified(data, "cuda_drivers.json", "mvc_floors", {"cuda_major": 12})
    snap = make_snapshot(gpus=[H100], driver="470.256.02", torch="2.3.1+cu121", torch_cuda="12.1")
    [o] = run("CUDA002", snap, load_from(data))
    assert o.verdict == "warning" and "[unverified fact: test: nobody read this]" in o.observed
    assert verdicts("CUDA002", snap) == ["blocked"]


def test_an_unverified_pin_row_downgrades_a_knowledge_rule_to_a_warning(data):
    mark_unverified(data, "package_pins.json", "pins", {"package": "vllm", "version": "0.11.0"})
    snap = make_snapshot(dist("vllm", "0.11.0"), torch="2.9.0+cu128", torch_cuda="12.8")
    [o] = run("KB006", snap, load_from(data))
    assert o.verdict == "warning"
    assert "unverified fact: vllm 0.11.0 pins: test: nobody read this" in o.observed
    assert verdicts("KB006", snap) == ["blocked"]


def test_an_unverified_release_row_downgrades_companion_and_driver_verdicts(data):
    mark_unverified(data, "torch_releases.json", "releases", {"torch": "2.13"})
    kb = load_from(data)
    mismatch = make_snapshot(dist("torchvision", "0.27.0"), torch="2.13.0+cu130", torch_cuda="13.0")
    assert verdicts("KB011", mismatch, kb) == ["warning"]
    assert verdicts("KB011", mismatch) == ["blocked"]
    # an unlabelled wheel's CUDA comes from the release row: inferred CUDA, unverified row -> warning
    plain = make_snapshot(dist("torch", "2.13.0"), gpus=[H100], driver="570.172.08")
    assert verdicts("CUDA002", plain, kb) == ["warning"]
    assert verdicts("CUDA002", plain) == ["blocked"]


def test_torch_2_15_rests_on_an_unverified_row():
    plain = make_snapshot(dist("torch", "2.15.0"), gpus=[H100], driver="570.172.08")
    [o] = run("CUDA002", plain)
    assert o.verdict == "warning" and "torch 2.15: only the Requires-Python" in o.observed


def test_verified_false_needs_a_reason(data):
    path = data / "torch_arch_lists.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["builds"][0]["verified"] = False
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError, match=r"builds\[0\]\.unverified_reason: a fact marked verified=false"):
        load_from(data)
    doc["builds"][0].update(verified=True, unverified_reason="stray")
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError, match=r"builds\[0\]\.unverified_reason: set only on a fact marked"):
        load_from(data)
