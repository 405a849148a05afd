"""`stackcheck knowledge refresh`, replayed from recorded index responses (tests/data/refresh,
see its README): what it changes, --check / --dry-run / --json, recording, and one-line errors.
No test here touches the network."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.errors import InputError
from stackcheck.knowledge import refresh as kr
from stackcheck.knowledge.loader import DATA_DIR, load_from

RECORDED = Path(__file__).resolve().parents[1] / "data" / "refresh"
STACKCHECK = str(Path(sys.executable).with_name("stackcheck"))
RECORDED_PACKAGES = ("torchvision", "torchaudio", "vllm")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(DATA_DIR, target)
    return target


def replay(data_dir: Path, recorded: Path = RECORDED, **kw) -> kr.RefreshResult:
    kw.setdefault("packages", RECORDED_PACKAGES)
    kw.setdefault("torch_since", "2.11")
    return kr.refresh(data_dir, kr.Fetcher(replay=recorded), **kw)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [STACKCHECK, "knowledge", "refresh", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)


def edit(path: Path, fn) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    fn(doc)
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def test_recorded_indexes_add_the_companion_rows_and_confirm_the_rest():
    result = replay(DATA_DIR)
    assert result.changes == [
        "package_pins: new row torchvision 0.26.0 (torch==2.11.0)",
        "package_pins: new row torchvision 0.27.0 (torch==2.12.0)",
        "package_pins: new row torchvision 0.28.0 (torch==2.13.0)",
        "package_pins: new row torchaudio 2.10.0 (torch==2.10.0)",
        "package_pins: new row torchaudio 2.11.0 (no tracked requirement)",
        "package_pins: new row torchaudio 2.11.1 (torch>=2.11)",
    ]
    # the CUDA builds of torch 2.11-2.14 (cu129 included, 2.12 from 2.12.1) agree with the index pages
    assert result.after["torch_releases.json"] == result.before["torch_releases.json"]
    pins = json.loads(result.after["package_pins.json"])
    vision = [r for r in pins["pins"] if r["package"] == "torchvision"]
    assert [(r["version"], r["requires"], r["min_glibc"]) for r in vision] == [
        ("0.26.0", ["torch==2.11.0"], "2.28"),
        ("0.27.0", ["torch==2.12.0"], "2.28"),
        ("0.28.0", ["torch==2.13.0"], "2.28"),
    ]
    # the vLLM rows the recordings hold (0.25.0, 0.26.0) are unchanged; bare `numpy` is not a pin
    old = json.loads(result.before["package_pins.json"])["pins"]
    before = {r["version"]: r for r in old if r["package"] == "vllm"}
    after = {r["version"]: r for r in pins["pins"] if r["package"] == "vllm"}
    assert after == before
    # the recording is trimmed to the releases these tests need
    assert "vllm 0.11.0: not in PyPI's release list; row kept as it is" in result.notes
    assert "torch 2.15: no wheel on the CUDA indexes read; row kept as it is" in result.notes


def test_refreshed_tables_load_and_a_second_refresh_changes_nothing(data):
    kr.write(replay(data), data)
    kb = load_from(data)
    vision = kb.engine_pins("torchvision", "0.28.0")
    assert [str(r) for r in kb.pins_for(vision, "torch")] == ["torch==2.13.0"]
    assert kb.pins_for(kb.engine_pins("torchaudio", "2.11.0"), "torch") == []
    again = replay(data)
    assert not again.changed and again.changes == [] and again.diff() == ""


def test_stale_facts_are_found_and_rewritten_with_their_source(data):
    def stale_torch(doc):
        rel = next(r for r in doc["releases"] if r["torch"] == "2.13")
        rel["cuda_index_only"] = []  # forget the cu129 build
        rel["cuda_builds"].append("12.8")  # and claim one 2.13 never had

    def stale_pin(doc):
        row = next(r for r in doc["pins"] if (r["package"], r["version"]) == ("vllm", "0.26.0"))
        row["requires"] = [r.replace("==0.6.14", "==0.6.13") for r in row["requires"]]
        row.update(verified=False, unverified_reason="test: copied from 0.25.0")

    edit(data / "torch_releases.json", stale_torch)
    edit(data / "package_pins.json", stale_pin)
    result = replay(data, packages=("vllm",))
    assert result.changes == [
        "package_pins: vllm 0.26.0: requires as the index publishes",
        "torch_releases: 2.13: CUDA 12.9 is published (index only)",
        "torch_releases: 2.13: CUDA 12.8 is listed but not published; removed",
    ]
    diff = result.diff()
    assert '+    "flashinfer-python==0.6.14"' in diff and '-    "flashinfer-python==0.6.13"' in diff
    assert '-   "verified": false,' in diff
    kr.write(result, data)
    row = load_from(data).engine_pins("vllm", "0.26.0")
    assert row.verified and row.sources[-1] == "PYPI-JSON"
    assert load_from(data).torch_release("2.13").all_cuda_builds == ["12.6", "13.0", "13.2", "12.9"]


def test_a_release_the_table_lacks_is_added_unverified_and_its_arch_rows_are_asked_for(data, tmp_path):
    recorded = tmp_path / "recorded"
    shutil.copytree(RECORDED, recorded)
    page = recorded / kr.cache_name(kr.TORCH_INDEX.format(tag="cu132"))
    link = '<a href="/whl/cu132/torch-2.16.0%2Bcu132-cp313-cp313-manylinux_2_28_x86_64.whl">x</a>'
    page.write_text(page.read_text().replace("</body>", f"{link}</body>"))
    result = replay(data, recorded, packages=())
    assert result.changes == ["torch_releases: new release 2.16 (CUDA 13.2)"]
    assert "torch 2.16 CUDA 13.2: no arch-list row in torch_arch_lists.json (add one by hand)" in result.notes
    kr.write(result, data)
    rel = load_from(data).torch_release("2.16")
    assert (rel.cuda_index_only, rel.verified, rel.sources) == (["13.2"], False, ["PT-INDEX"])


def test_check_exits_0_when_the_tables_agree_and_1_when_they_do_not(data, tmp_path):
    common = [
        "--replay",
        str(RECORDED),
        "--data-dir",
        str(data),
        "--package",
        "vllm",
        "--torch-since",
        "2.11",
    ]
    agree = cli("--check", *common, cwd=tmp_path)
    assert agree.returncode == 0 and agree.stdout == ""
    assert agree.stderr.splitlines()[-1] == "the tables agree with the indexes (8 responses read)"

    def forget_cu129(doc):
        next(r for r in doc["releases"] if r["torch"] == "2.11").pop("cuda_index_only")

    edit(data / "torch_releases.json", forget_cu129)
    before = (data / "torch_releases.json").read_bytes()
    disagree = cli("--check", *common, cwd=tmp_path)
    assert disagree.returncode == 1
    assert disagree.stdout.startswith("--- a/torch_releases.json\n+++ b/torch_releases.json\n")
    assert "changed: torch_releases: 2.11: CUDA 12.9 is published (index only)" in disagree.stderr
    assert (data / "torch_releases.json").read_bytes() == before  # --check writes nothing
    dry = cli("--dry-run", *common, cwd=tmp_path)
    assert dry.returncode == 0 and dry.stdout == disagree.stdout
    assert (data / "torch_releases.json").read_bytes() == before
    fixed = cli(*common, cwd=tmp_path)
    assert fixed.returncode == 0 and f"wrote {data / 'torch_releases.json'}" in fixed.stderr
    assert cli("--check", *common, cwd=tmp_path).returncode == 0


def test_json_output_is_only_json(data, tmp_path):
    args = ["--json", "--dry-run", "--replay", str(RECORDED), "--data-dir", str(data)]
    out = cli(*args, "--package", "torchaudio", "--no-torch-index", cwd=tmp_path)
    assert out.returncode == 0 and out.stderr == ""
    doc = json.loads(out.stdout)
    assert doc["changed"] is True
    assert doc["files"] == {"package_pins.json": True, "torch_releases.json": False}
    assert doc["written"] == [] and doc["requests"] == 4 and len(doc["changes"]) == 3
    assert doc["diff"].startswith("--- a/package_pins.json")


def test_missing_recording_and_bad_options_are_one_line_errors(data, tmp_path):
    args = ["--replay", str(RECORDED), "--data-dir", str(data), "--package", "sglang", "--no-torch-index"]
    out = cli(*args, cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1
    assert "https://pypi.org/pypi/sglang/json: no recorded response in" in out.stderr
    assert "Traceback" not in out.stderr
    bad_options = (
        (["--package", "numpy"], "--package 'numpy': one of"),
        (["--cuda", "12.9"], "--cuda '12.9'"),
        (["--cache", str(tmp_path), "--replay", str(RECORDED)], "give one"),
    )
    for bad, expected in bad_options:
        res = cli(*bad, "--data-dir", str(data), "--dry-run", cwd=tmp_path)
        assert res.returncode == 2 and expected in res.stderr, (bad, res.stderr)
        assert res.stderr.count("\n") == 1


def test_unreachable_index_names_the_url(monkeypatch):
    import urllib.error
    import urllib.request

    def refuse(request, timeout):
        assert timeout == 3.0
        raise urllib.error.URLError(ConnectionRefusedError(111, "Connection refused"))

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    with pytest.raises(InputError) as exc:
        kr.Fetcher(timeout=3.0).get("https://pypi.org/pypi/vllm/json")
    assert str(exc.value) == "https://pypi.org/pypi/vllm/json: unreachable ([Errno 111] Connection refused)"


def test_cache_records_what_replay_answers(monkeypatch, tmp_path):
    served = {}

    def fake_download(self, url):
        served[url] = (RECORDED / kr.cache_name(url)).read_bytes()
        return served[url]

    monkeypatch.setattr(kr.Fetcher, "_download", fake_download)
    cache = tmp_path / "cache"
    first = kr.refresh(DATA_DIR, kr.Fetcher(cache=cache), packages=("torchvision",), torch_since="2.13")
    assert sorted(p.name for p in cache.iterdir()) == sorted(kr.cache_name(u) for u in served)
    second = kr.refresh(DATA_DIR, kr.Fetcher(replay=cache), packages=("torchvision",), torch_since="2.13")
    assert second.after == first.after


def test_cache_names_and_glibc_floors():
    assert kr.cache_name("https://pypi.org/pypi/vllm/0.25.0/json") == "pypi.org_pypi_vllm_0.25.0_json"
    index = "https://download.pytorch.org/whl/cu129/torch/"
    assert kr.cache_name(index) == "download.pytorch.org_whl_cu129_torch"
    wheel = lambda name, **kw: {"filename": name, **kw}  # noqa: E731
    x86 = wheel("x-1-cp38-abi3-manylinux_2_31_x86_64.whl")
    arm = wheel("x-1-cp38-abi3-manylinux_2_28_aarch64.whl")
    assert kr._glibc_floor([x86, arm]) == "2.31"  # the x86_64 wheel decides
    assert kr._glibc_floor([wheel("x-1-cp38-abi3-manylinux1_x86_64.whl")]) is None  # legacy: glibc <= 2.17
    assert kr._glibc_floor([wheel("x-1-py3-none-any.whl"), wheel("x-1.tar.gz")]) is None
    assert kr._glibc_floor([wheel("x-1-cp312-cp312-manylinux_2_35_x86_64.whl", yanked=True)]) is None
