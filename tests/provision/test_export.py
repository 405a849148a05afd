"""`profiles export --format requirements|pyproject|conda|pixi`: every built-in profile in
every format parses as that format, with the torch index in the format's own way."""

from __future__ import annotations

import json

import pytest
import tomllib
from packaging.requirements import Requirement

from stackcheck.catalog import load_catalog
from stackcheck.knowledge import load_knowledge
from stackcheck.provision.export import FORMATS, export_profile
from stackcheck.provision.plan import choose_torch

CATALOG = load_catalog(None)
KB = load_knowledge()
IDS = [s.id for s in CATALOG.summaries(include_bases=False)]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def export(pid: str, fmt: str, cuda: str = "auto") -> str:
    profile = CATALOG.get(pid)
    return export_profile(profile, choose_torch(profile, None, KB, cuda), fmt)


def requirement_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln and not ln.startswith(("#", "--"))]


def conda_pip_items(text: str) -> list[str]:
    return [json.loads(ln.split("- ", 1)[1]) for ln in text.splitlines() if ln.startswith("      - ")]


@pytest.mark.parametrize("pid", IDS)
def test_every_profile_parses_in_every_format(pid):
    profile = CATALOG.get(pid)
    reqs = [str(Requirement(r)) for r in requirement_lines(export(pid, "requirements"))]
    assert [Requirement(r).name for r in reqs] == [Requirement(r).name for r in profile.requirements]
    project = tomllib.loads(export(pid, "pyproject"))["project"]
    assert [Requirement(r).name for r in project["dependencies"]] == [Requirement(r).name for r in reqs]
    pixi = tomllib.loads(export(pid, "pixi"))
    assert list(pixi["pypi-dependencies"]) == [Requirement(r).name for r in reqs]
    items = conda_pip_items(export(pid, "conda"))
    assert [Requirement(i).name for i in items if not i.startswith("--")] == [
        Requirement(r).name for r in reqs
    ]


def test_cpu_profile_gets_the_cpu_index_in_each_format():
    text = export("TRAIN-CPU", "requirements")
    assert f"--extra-index-url {CPU_INDEX}\n" in text
    assert "torch<3,==2.14.*,>=2.6\n" in text  # held to the chosen release
    uv = tomllib.loads(export("TRAIN-CPU", "pyproject"))["tool"]["uv"]
    assert uv["index"] == [{"name": "pytorch-cpu", "url": CPU_INDEX, "explicit": True}]
    assert uv["sources"] == {"torch": [{"index": "pytorch-cpu"}]}
    assert uv["constraint-dependencies"] == ["tokenizers>=0.22", "huggingface-hub>=0.34"]
    assert conda_pip_items(export("TRAIN-CPU", "conda"))[0] == f"--extra-index-url {CPU_INDEX}"
    pixi = tomllib.loads(export("TRAIN-CPU", "pixi"))
    assert pixi["pypi-dependencies"]["torch"] == {"version": "<3,==2.14.*,>=2.6", "index": CPU_INDEX}
    assert pixi["workspace"]["platforms"] == ["linux-64", "osx-arm64", "win-64"]


def test_gpu_profile_without_facts_uses_pypis_cuda_build_and_cuda_picks_another():
    text = export("PT-SFT-CUDA", "requirements")
    assert "--extra-index-url" not in text
    assert (
        "# torch: torch 2.14 cu130, PyPI's default build (no machine facts; --cuda picks another)\n" in text
    )
    pixi = tomllib.loads(export("PT-SFT-CUDA", "pixi", cuda="cu126"))
    assert pixi["pypi-dependencies"]["torch"]["index"] == "https://download.pytorch.org/whl/cu126"
    assert pixi["workspace"]["platforms"] == ["linux-64"]
    pinned = tomllib.loads(export("INF-VLLM-011-CU128", "pixi"))["pypi-dependencies"]
    assert pinned["torch"] == {"version": "==2.8.0"}  # PyPI's 2.8.0 is the cu128 build


def test_cli_export_formats_and_errors(cli_main, tmp_path):
    out_file = tmp_path / "environment.yml"
    code, out, _ = cli_main("profiles", "export", "TRAIN-CPU", "--format", "conda", "-o", str(out_file))
    assert (code, out) == (0, f"{out_file}\n")
    assert out_file.read_text() == export("TRAIN-CPU", "conda")
    code, out, err = cli_main("profiles", "export", "TRAIN-CPU", "PT-CPU", "--format", "pixi")
    assert (code, out, err) == (2, "", "stackcheck: error: --format pixi: exports one profile (got 2)\n")


def test_export_never_prints_index_credentials(cli_main, tmp_path):
    reg = tmp_path / "reg.json"
    reg.write_text(json.dumps({"profiles": [{
        "id": "PRIVATE", "requirements": ["tool @ https://alice:s3cr3t-token@pkgs.example/tool-1.0.whl"],
    }]}))  # fmt: skip
    for fmt in FORMATS:
        code, out, err = cli_main("profiles", "export", "PRIVATE", "--registry", str(reg), "--format", fmt)
        assert code == 0, err
        assert "s3cr3t-token" not in out and "pkgs.example/tool-1.0.whl" in out
