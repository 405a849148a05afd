"""torch probe (version.py read as text, --deep child) and toolchain probe."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.probe import ProbeContext
from stackcheck.probe import toolchain as tc
from stackcheck.probe import torch as tp
from tests.factories import missing_prerequisite

VERSION_PY_213 = """from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'rocm', 'xpu']
__version__ = '2.13.0'
debug = False
cuda: Optional[str] = '13.0'
git_version = 'cf30153c4c131c8164ee7798e5022d810682e2cb'
hip: Optional[str] = None
rocm: Optional[str] = None
xpu: Optional[str] = None
"""

VERSION_PY_OLD = """__version__ = '1.13.1+cu117'
debug = False
cuda = '11.7'
git_version = '49444c3e546bf240bed24a101e747422d1f8a0ee'
hip = None
"""


def _ctx(site, deep=False, executable=sys.executable, shadowed=False):
    dists = [{"name": "torch", "version": "x", "location": str(site), "shadowed": shadowed}]
    return ProbeContext(python={"executable": executable}, packages={"distributions": dists}, deep=deep)


def _site(tmp_path, text):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "version.py").write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("text", "version", "cuda"),
    [(VERSION_PY_213, "2.13.0", "13.0"), (VERSION_PY_OLD, "1.13.1+cu117", "11.7")],
)
def test_version_file_read_as_text(tmp_path, text, version, cuda):
    sec = tp.collect(_ctx(_site(tmp_path, text)))
    assert sec.status == "ok" and sec.source == "torch/version.py"
    assert (sec.version, sec.cuda, sec.hip) == (version, cuda, None)
    assert sec.location == os.path.join(str(tmp_path), "torch") and not sec.deep


def test_real_cpu_wheel_version_file(tmp_path):
    """The version.py of the torch 2.13.0 CPU wheel CI installs, found without importing torch."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        missing_prerequisite("torch is not installed in the test environment")
    text = (Path(spec.submodule_search_locations[0]) / "version.py").read_text()
    sec = tp.collect(_ctx(_site(tmp_path, text)))
    assert (sec.version, sec.cuda, sec.hip) == ("2.13.0+cpu", None, None)
    assert len(sec.git_version) == 40


def test_code_in_version_file_is_never_executed(tmp_path):
    marker = tmp_path / "ran"
    text = (
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\n__version__ = '2.0.0'\n"
        "cuda = __import__('os').getcwd()\n"
    )
    sec = tp.collect(_ctx(_site(tmp_path, text)))
    assert sec.version == "2.0.0" and sec.cuda is None and not marker.exists()


def test_missing_or_broken_version_file(tmp_path):
    (tmp_path / "torch").mkdir()
    sec = tp.collect(_ctx(tmp_path))
    assert sec.status == "failed" and "missing" in sec.error
    (tmp_path / "torch" / "version.py").write_text("def broken(:\n")
    sec = tp.collect(_ctx(tmp_path))
    assert sec.status == "failed" and "__version__" in sec.error


def test_no_torch_or_only_shadowed_torch_is_absent(tmp_path):
    assert tp.collect(ProbeContext(python={}, packages={"distributions": []})).status == "absent"
    assert tp.collect(_ctx(tmp_path, shadowed=True)).status == "absent"


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_parse_version_assignments_never_raises(text):
    assert isinstance(tp.parse_version_assignments(text), dict)


def _fake_torch_pkg(tmp_path, is_available):
    pkg = tmp_path / "fake_site" / "torch"
    (pkg / "cuda").mkdir(parents=True)
    (pkg / "backends" / "cudnn").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import cuda, backends\n")
    (pkg / "cuda" / "__init__.py").write_text(
        f"def is_available(): return {is_available}\ndef device_count(): return 2\n"
        "def get_arch_list(): return ['sm_80', 'sm_90']\n"
    )
    (pkg / "backends" / "__init__.py").write_text("from . import cudnn\n")
    (pkg / "backends" / "cudnn" / "__init__.py").write_text(
        "def is_available(): return True\ndef version(): return 91002\n"
    )
    (pkg / "version.py").write_text("__version__ = '2.8.0+cu128'\ncuda = '12.8'\n")
    return pkg.parent


def test_deep_imports_torch_in_a_child(tmp_path, monkeypatch):
    site = _fake_torch_pkg(tmp_path, True)
    monkeypatch.setenv("PYTHONPATH", str(site))
    sec = tp.collect(_ctx(site, deep=True))
    assert sec.deep and sec.deep_error is None
    assert (sec.cuda_available, sec.device_count, sec.arch_list, sec.cudnn_version) == (
        True,
        2,
        ["sm_80", "sm_90"],
        "91002",
    )


def test_default_snapshot_never_imports_torch(tmp_path):
    """A whole default-tier gather with a torch on sys.path whose import leaves a marker."""
    import subprocess

    site = _site(tmp_path, VERSION_PY_213)
    marker = tmp_path / "imported"
    (tmp_path / "torch" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (tmp_path / "torch-2.13.0.dist-info").mkdir()
    (tmp_path / "torch-2.13.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.4\nName: torch\nVersion: 2.13.0\n\n"
    )
    code = "from stackcheck.probe import gather; s = gather(); print(s.torch.version)"
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2.13.0" and not marker.exists()


def test_deep_reports_import_failure(tmp_path, monkeypatch):
    site = _site(tmp_path, VERSION_PY_213)
    (tmp_path / "torch" / "__init__.py").write_text(
        "raise OSError('libcudart.so.13: cannot open shared object file')\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(site))
    sec = tp.collect(_ctx(site, deep=True))
    assert sec.deep and "libcudart.so.13" in sec.deep_error and sec.cuda_available is None


def test_deep_bounded_and_missing_interpreter(tmp_path, monkeypatch):
    site = _site(tmp_path, VERSION_PY_213)
    sec = tp.collect(_ctx(site, deep=True, executable=str(tmp_path / "no-python")))
    assert sec.deep and "not found" in sec.deep_error
    (tmp_path / "torch" / "__init__.py").write_text("import time\ntime.sleep(30)\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.setattr(tp, "DEEP_TIMEOUT_S", 1.0)
    sec = tp.collect(_ctx(site, deep=True))
    assert "timeout" in sec.deep_error


# ------------------------------------------------------------------ toolchain
def _toolkit(tmp_path, version_json=None, version_txt=None):
    root = tmp_path / "cuda-12.8"
    (root / "bin").mkdir(parents=True)
    nvcc = root / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.8, V12.8.61'\n")
    nvcc.chmod(0o755)
    if version_json is not None:
        (root / "version.json").write_text(json.dumps(version_json))
    if version_txt is not None:
        (root / "version.txt").write_text(version_txt)
    return root


def test_nvcc_version_from_version_json_without_running_it(tmp_path, monkeypatch):
    root = _toolkit(
        tmp_path, {"cuda": {"name": "CUDA SDK", "version": "12.8.1"}, "cuda_nvcc": {"version": "12.8.93"}}
    )
    monkeypatch.setattr(
        "stackcheck.probe.proc.run", lambda *a, **k: pytest.fail("nvcc must not run when version.json exists")
    )
    tool = tc.find_nvcc({"PATH": str(root / "bin")})
    assert (tool.path, tool.version) == (str(root / "bin" / "nvcc"), "12.8.93")
    assert "torch uses its own bundled runtime" in tool.note


def test_nvcc_from_cuda_home_and_version_txt(tmp_path):
    root = _toolkit(tmp_path, version_txt="CUDA Version 11.0.228\n")
    tool = tc.find_nvcc({"PATH": "", "CUDA_HOME": str(root)})
    assert tool.version == "11.0.228"


def test_nvcc_version_falls_back_to_running_it(tmp_path):
    root = _toolkit(tmp_path)
    assert tc.find_nvcc({"PATH": str(root / "bin")}).version == "12.8.61"


def test_wrapper_script_followed_to_a_wheel_assembled_toolkit(tmp_path, monkeypatch):
    """/usr/local/bin/nvcc = `exec /usr/local/cuda-13.0/bin/nvcc "$@"`, toolkit built from pip wheels."""
    root = tmp_path / "cuda-13.0"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "nvcc").write_text("")
    (root / "dist-info" / "nvidia_cuda_nvcc-13.0.88.dist-info").mkdir(parents=True)
    (root / "dist-info" / "nvidia_cuda_runtime-13.0.96.dist-info").mkdir()
    wrapper_dir = tmp_path / "localbin"
    wrapper_dir.mkdir()
    wrapper = wrapper_dir / "nvcc"
    wrapper.write_text(f'#!/bin/sh\nexec {root}/bin/nvcc "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setattr("stackcheck.probe.proc.run", lambda *a, **k: pytest.fail("must not run nvcc"))
    tool = tc.find_nvcc({"PATH": str(wrapper_dir)})
    assert (tool.path, tool.version) == (str(wrapper), "13.0.88")


def test_pip_installed_nvcc_version_from_site_packages(tmp_path):
    site = tmp_path / "site-packages"
    nvcc_bin = site / "nvidia" / "cuda_nvcc" / "bin"
    nvcc_bin.mkdir(parents=True)
    (nvcc_bin / "nvcc").write_bytes(b"\x7fELF")
    (nvcc_bin / "nvcc").chmod(0o755)
    (site / "nvidia_cuda_nvcc-12.8.93.dist-info").mkdir()
    assert tc.find_nvcc({"PATH": str(nvcc_bin)}).version == "12.8.93"


def test_no_nvcc(tmp_path):
    assert tc.find_nvcc({"PATH": str(tmp_path)}) is None


def test_toolchain_collect_on_this_machine():
    sec = tc.collect()
    assert sec.status == ("ok" if sec.nvcc or sec.gcc else "absent")
    if sec.gcc is not None:
        assert sec.gcc.version[:1].isdigit()
