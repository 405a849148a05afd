"""platform and hosted probes on fake files and environments."""

from __future__ import annotations

import os

from stackcheck.probe import hosted
from stackcheck.probe import platform as plat


def test_os_release_parsing(tmp_path):
    f = tmp_path / "os-release"
    f.write_text(
        'NAME="Ubuntu"\nVERSION_ID="24.04"\nID=ubuntu\nPRETTY_NAME="Ubuntu 24.04.3 LTS"\n'
        "# comment\ngarbage line\n"
    )
    assert plat.read_os_release([str(tmp_path / "missing"), str(f)]) == {
        "NAME": "Ubuntu",
        "VERSION_ID": "24.04",
        "ID": "ubuntu",
        "PRETTY_NAME": "Ubuntu 24.04.3 LTS",
    }
    assert plat.read_os_release([str(tmp_path / "missing")]) == {}


def test_linux_platform_from_fake_proc(tmp_path, monkeypatch):
    (tmp_path / "os-release").write_text('ID=alpine\nVERSION_ID=3.20.3\nPRETTY_NAME="Alpine Linux v3.20"\n')
    (tmp_path / "cpuinfo").write_text("processor\t: 0\nmodel name\t: AMD EPYC 9454 48-Core Processor\n")
    (tmp_path / "meminfo").write_text("MemTotal:       16318412 kB\nMemFree:  1 kB\n")
    monkeypatch.setattr(plat, "OS_RELEASE", (str(tmp_path / "os-release"),))
    monkeypatch.setattr(plat, "CPUINFO", str(tmp_path / "cpuinfo"))
    monkeypatch.setattr(plat, "MEMINFO", str(tmp_path / "meminfo"))
    monkeypatch.setattr(plat, "SHM_DIR", str(tmp_path))
    monkeypatch.setattr(plat._platform, "system", lambda: "Linux")
    sec = plat.collect()
    assert sec.status == "ok" and sec.system == "Linux"
    assert (sec.distro_id, sec.distro_version, sec.distro_name) == ("alpine", "3.20.3", "Alpine Linux v3.20")
    assert sec.cpu_model == "AMD EPYC 9454 48-Core Processor"
    assert sec.memory_total_bytes == 16318412 * 1024
    assert sec.shm_total_bytes and sec.shm_total_bytes > 0
    assert sec.cpu_count == os.cpu_count()


def test_musl_detected_without_glibc(tmp_path, monkeypatch):
    (tmp_path / "ld-musl-x86_64.so.1").write_text("")
    monkeypatch.setattr(plat.os, "confstr", lambda name: (_ for _ in ()).throw(ValueError("unsupported")))
    monkeypatch.setattr(plat._platform, "libc_ver", lambda: ("", ""))
    monkeypatch.setattr(plat, "MUSL_LOADER_DIRS", (str(tmp_path),))
    assert plat.libc() == ("musl", "")
    monkeypatch.setattr(plat, "MUSL_LOADER_DIRS", (str(tmp_path / "nope"),))
    assert plat.libc() == ("", "")


def test_glibc_from_confstr(monkeypatch):
    monkeypatch.setattr(plat.os, "confstr", lambda name: "glibc 2.39", raising=False)
    assert plat.libc() == ("glibc", "2.39")


def test_unreadable_proc_files_leave_facts_empty(tmp_path, monkeypatch):
    monkeypatch.setattr(plat, "MEMINFO", str(tmp_path / "none"))
    monkeypatch.setattr(plat, "SHM_DIR", str(tmp_path / "none"))
    assert plat._meminfo_total() is None and plat._statvfs_total(str(tmp_path / "none")) is None


def _detect(env, files=(), contents=None):
    contents = contents or {}
    return {
        p.name: p for p in hosted.detect(env, lambda path: path in files, lambda path: contents.get(path, ""))
    }


def test_colab_with_and_without_gpu():
    on = _detect({"COLAB_RELEASE_TAG": "release-colab_2025", "COLAB_GPU": "1"})
    assert on["colab"].gpu_expected is True and "COLAB_RELEASE_TAG" in on["colab"].signal
    off = _detect({"COLAB_RELEASE_TAG": "release-colab_2025"})
    assert off["colab"].gpu_expected is False


def test_github_hosted_runner_expects_no_gpu_but_self_hosted_may():
    gh = _detect({"GITHUB_ACTIONS": "true", "CI": "true", "RUNNER_ENVIRONMENT": "github-hosted"})
    assert gh["github-actions"].gpu_expected is False and "ci" not in gh
    selfhosted = _detect({"GITHUB_ACTIONS": "true", "RUNNER_ENVIRONMENT": "self-hosted"})
    assert selfhosted["github-actions"].gpu_expected is None


def test_generic_ci_kaggle_sagemaker_modelscope_cnb_slurm_k8s():
    found = _detect(
        {
            "GITLAB_CI": "true",
            "KAGGLE_KERNEL_RUN_TYPE": "Interactive",
            "SM_CURRENT_HOST": "algo-1",
            "MODELSCOPE_ENVIRONMENT": "dsw",
            "CNB": "true",
            "SLURM_JOB_ID": "42",
            "SLURM_JOB_GPUS": "0,1",
            "KUBERNETES_SERVICE_HOST": "10.0.0.1",
        }
    )
    assert set(found) == {"ci", "kaggle", "sagemaker", "modelscope", "cnb", "slurm", "kubernetes"}
    assert "GITLAB_CI" in found["ci"].signal
    assert found["slurm"].gpu_expected is True
    assert _detect({"CI": "1"})["ci"].signal == "CI=1"


def test_containers_and_wsl_from_files():
    found = _detect(
        {},
        files={hosted.DOCKERENV, hosted.CONTAINERENV},
        contents={hosted.PROC_VERSION: "Linux version 5.15.153.1-microsoft-standard-WSL2"},
    )
    assert {"docker", "podman", "wsl"} <= set(found)
    cg = _detect({}, contents={hosted.CGROUP: "0::/kubepods/besteffort/pod1234/abc"})
    assert cg["docker"].signal.endswith("mentions kubepods")


def test_plain_machine_has_no_hosted_platform():
    assert _detect({"HOME": "/home/me", "PATH": "/usr/bin"}) == {}


def test_collect_runs_on_this_machine():
    sec = hosted.collect()
    assert sec.status == ("ok" if sec.platforms else "absent") and all(p.signal for p in sec.platforms)


def test_macos_path_uses_sysctl(monkeypatch):
    monkeypatch.setattr(plat._platform, "system", lambda: "Darwin")
    monkeypatch.setattr(plat._platform, "mac_ver", lambda: ("15.1", ("", "", ""), "arm64"))
    answers = {"machdep.cpu.brand_string": "Apple M3 Pro", "hw.memsize": "38654705664"}
    monkeypatch.setattr(plat, "_sysctl", lambda name: answers[name])
    sec = plat.collect()
    assert (sec.system, sec.distro_id, sec.distro_version) == ("Darwin", "macos", "15.1")
    assert sec.cpu_model == "Apple M3 Pro" and sec.memory_total_bytes == 38654705664
    assert sec.libc_family == "" and sec.shm_total_bytes is None


def test_windows_path_never_raises(monkeypatch):
    monkeypatch.setattr(plat._platform, "system", lambda: "Windows")
    monkeypatch.setattr(plat._platform, "release", lambda: "11")
    sec = plat.collect()
    assert (sec.status, sec.system, sec.distro_id, sec.distro_name) == (
        "ok",
        "Windows",
        "windows",
        "Windows 11",
    )
    assert sec.libc_family == ""
