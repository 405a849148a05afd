"""`stackcheck env create|lock|restore|diff` end to end on a local wheelhouse (nothing is
downloaded: ``--no-index --find-links``), with both installers."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import msgspec
import pytest

from stackcheck.environment import load_snapshot, obtain
from stackcheck.provision.lock import installed_versions
from stackcheck.sources import FactSource
from tests.factories import SNAPSHOTS
from tests.provision.conftest import UV, offline


def installed(env) -> dict[str, str]:
    return installed_versions(obtain(FactSource("python", str(env / "bin" / "python")), sections=()))


def test_round_trip_with_torch_create_lock_restore_diff(cli_main, registry, torch_wheelhouse, tmp_path):
    a, b, lock = tmp_path / "a", tmp_path / "b", tmp_path / "torch.lock.json"
    base = ["--registry", registry, "-p", "TINY-TORCH"]
    code, out, err = cli_main("env", "create", *base, "--path", str(a), *offline(torch_wheelhouse))
    assert code == 0, err
    assert f"created {a} (11 packages)" in out
    assert "preflight TINY-TORCH: OK" in out
    code, out, err = cli_main("env", "lock", *base, *offline(torch_wheelhouse), "-o", str(lock))
    assert (code, out) == (0, f"{lock}\n"), err
    header = json.loads(lock.read_text())["header"]
    assert {k: header[k] for k in ("profile", "system", "machine", "python", "torch_build", "installer")} == {
        "profile": "TINY-TORCH", "system": "Linux", "machine": "x86_64", "python": "3.11",
        "torch_build": "cpu", "installer": "uv",
    }  # fmt: skip
    code, out, err = cli_main("env", "restore", str(lock), "--path", str(b))
    assert (code, out) == (0, f"restored {b}: 11 packages, verified against {lock}\n"), err
    locked = {p["name"]: p["version"] for p in json.loads(lock.read_text())["packages"]}
    assert installed(a) == installed(b) == locked
    assert locked["torch"] == "2.13.0+cpu"
    code, out, _ = cli_main("env", "diff", str(lock), "--python", str(b / "bin" / "python"))
    assert (code, out) == (0, f"no drift from {lock} (11 packages)\n")
    # drift: one package changed, one removed, one added
    py = str(b / "bin" / "python")
    subprocess.run([UV, "pip", "install", "-q", "--python", py, *offline(torch_wheelhouse), "tinyutil==2.0",
                    "ipykernel"], check=True)  # fmt: skip
    subprocess.run([UV, "pip", "uninstall", "-q", "--python", py, "fsspec"], check=True)
    code, out, _ = cli_main("env", "diff", str(lock), "--python", py, "--json")
    assert code == 1
    assert json.loads(out)["drift"] == {
        "added": [{"name": "ipykernel", "installed": "7.0.0"}],
        "removed": [{"name": "fsspec", "locked": "2025.10.0"}],
        "changed": [{"name": "tinyutil", "locked": "1.0", "installed": "2.0"}],
    }


def test_tampered_lock_is_refused_and_nothing_is_created(cli_main, tiny_lock, tmp_path):
    data = json.loads(tiny_lock.read_text())
    data["packages"][0]["version"] = "3.1.7"
    tiny_lock.write_text(json.dumps(data))
    code, out, err = cli_main("env", "restore", str(tiny_lock), "--path", str(tmp_path / "r"))
    assert (code, out) == (2, "")
    assert err == (
        f"stackcheck: error: {tiny_lock}: digest: the lock was changed after it was written (its digest "
        "does not match its content); write a new one with `stackcheck env lock`\n"
    )
    assert not (tmp_path / "r").exists()


def test_lock_whose_hash_does_not_match_the_wheel_is_refused_by_the_installer(cli_main, tiny_lock, tmp_path):
    from stackcheck.provision.lock import load_lock

    lock = load_lock(str(tiny_lock))
    lock.packages[0].hashes = ["0" * 64]
    tiny_lock.write_bytes(lock.sealed().encode())
    code, _, err = cli_main("env", "restore", str(tiny_lock), "--path", str(tmp_path / "r"))
    assert code == 1
    assert err.startswith("stackcheck: refused: installing 3 packages failed (")
    assert "hash" in err.lower() and err.count("\n") == 1
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_forbidden_package_pulled_in_by_a_requirement_is_refused_with_the_chain(
    cli_main, registry, wheelhouse, tmp_path, installer
):
    target = tmp_path / "bad"
    code, out, err = cli_main(
        "env", "create", "--registry", registry, "-p", "TINY-BAD", "--path", str(target),
        "--installer", installer, *offline(wheelhouse),
    )  # fmt: skip
    assert code == 1
    assert err.endswith(
        "(it belongs in INF-VLLM-011-CU128): pulled in by app 1.0 -> helper 1.2 -> vllm 0.11.0; nothing was "
        "installed\n"
    )
    assert "stackcheck: refused: profile TINY-BAD forbids vllm (" in err
    assert not target.exists()


def test_pip_installer_creates_registers_the_kernel_and_runs_the_preflight(
    cli_main, registry, wheelhouse, tmp_path
):
    target = tmp_path / "p"
    code, out, err = cli_main(
        "env", "create", "--registry", registry, "-p", "TINY-CPU", "--path", str(target),
        "--installer", "pip", "--kernel", "tiny-cpu", *offline(wheelhouse),
    )  # fmt: skip
    assert code == 0, err
    assert "installer: pip\n" in out
    spec = json.loads((tmp_path / "jupyter" / "kernels" / "tiny-cpu" / "kernel.json").read_text())
    assert spec["argv"][0] == str(target / "bin" / "python")
    assert "preflight TINY-CPU: OK" in out
    have = installed(target)
    assert {k: have[k] for k in ("jinja2", "markupsafe", "tinyutil")} == {
        "jinja2": "3.1.6", "markupsafe": "3.0.3", "tinyutil": "1.0",
    }  # fmt: skip
    assert set(have) - {"jinja2", "markupsafe", "tinyutil"} <= {"pip", "setuptools", "wheel"}  # venv's seed
    lock = target / "stackcheck" / "lock.json"
    assert cli_main("env", "diff", str(lock), "--python", str(target / "bin" / "python"))[0] == 0


def test_users_pip_configuration_is_carried_over_to_uv(cli_main, registry, wheelhouse, tmp_path, monkeypatch):
    conf = tmp_path / "pip.conf"
    conf.write_text(f"[global]\nno-index = true\n[install]\nfind-links = {wheelhouse}\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    target = tmp_path / "c"
    code, out, err = cli_main(
        "env", "create", "--registry", registry, "-p", "TINY-CPU", "--path", str(target)
    )
    assert code == 0, err
    assert f"sources: --no-index --find-links {wheelhouse}\n" in out
    assert installed(target) == {"jinja2": "3.1.6", "markupsafe": "3.0.3", "tinyutil": "1.0"}


def test_force_replaces_an_environment(cli_main, registry, wheelhouse, tmp_path):
    target = tmp_path / "f"
    args = [
        "env",
        "create",
        "--registry",
        registry,
        "-p",
        "TINY-CPU",
        "--path",
        str(target),
        *offline(wheelhouse),
    ]
    assert cli_main(*args)[0] == 0
    code, out, err = cli_main(*args)
    assert (code, out) == (2, "")
    assert err == (
        f"stackcheck: error: --path {target}: exists and is not empty "
        "(--force replaces an environment there)\n"
    )
    assert cli_main(*args, "--force")[0] == 0
    assert installed(target)["tinyutil"] == "1.0"


def test_bad_input_is_one_line_exit_2_and_nothing_is_left(cli_main, registry, wheelhouse, tmp_path):
    create = ["env", "create", "--registry", registry, *offline(wheelhouse)]
    target = tmp_path / "x"
    code, out, err = cli_main(*create, "-p", "NO-SUCH", "--path", str(target))
    assert (code, out) == (2, "")
    assert err.startswith("stackcheck: error: unknown profile ID 'NO-SUCH' in ") and err.count("\n") == 1
    assert not target.exists()
    code, _, err = cli_main(*create, "-p", "TINY-CPU", "--path", "/sys/stackcheck-env-test")
    assert (code, err) == (
        2,
        "stackcheck: error: --path /sys/stackcheck-env-test: cannot create it (Operation not permitted)\n",
    )
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine")
    code, _, err = cli_main(*create, "-p", "TINY-CPU", "--path", str(full), "--force")
    assert (code, err) == (
        2,
        f"stackcheck: error: --path {full}: exists and is not an environment (no pyvenv.cfg); "
        "not replacing it\n",
    )  # fmt: skip
    assert [p.name for p in full.iterdir()] == ["notes.txt"]
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text('{"schema_version": "1.0", "header": ')
    for argv in (("restore", str(corrupt), "--path", str(target)), ("diff", str(corrupt))):
        code, out, err = cli_main("env", *argv)
        assert (code, out, err) == (
            2,
            "",
            f"stackcheck: error: {corrupt}: truncated JSON, expected a complete lock\n",
        )
    assert not target.exists()


def test_unreachable_only_index_is_named(cli_main, registry, tmp_path):
    code, out, err = cli_main(
        "env", "create", "--registry", registry, "-p", "TINY-CPU", "--path", str(tmp_path / "u"),
        "--index-url", "http://127.0.0.1:9/simple",
    )  # fmt: skip
    assert (code, out) == (2, "")
    assert err == (
        "stackcheck: error: --index-url http://127.0.0.1:9/simple: unreachable (cannot connect to "
        "127.0.0.1:9 (Connection refused)) and no other source is configured\n"
    )
    assert not (tmp_path / "u").exists()


def _snapshot_on(tmp_path, name: str, system: str, machine: str) -> str:
    s = load_snapshot(str(SNAPSHOTS / f"{name}.json"))
    s = msgspec.structs.replace(
        s, platform=msgspec.structs.replace(s.platform, system=system, machine=machine)
    )
    path = tmp_path / f"{system}.json"
    path.write_bytes(msgspec.json.encode(s))
    return str(path)


def test_dry_run_prints_platform_paths_and_the_exact_commands(cli_main, registry, tmp_path):
    win = _snapshot_on(tmp_path, "colab-t4", "Windows", "AMD64")
    code, out, err = cli_main(
        "env", "create", "-p", "PT-SFT-CUDA", "--path", "C:/w/.venv", "--snapshot", win, "--dry-run", "--json"
    )
    assert code == 0, err
    plan = json.loads(out)
    assert plan["interpreter"] == "C:\\w\\.venv\\Scripts\\python.exe"
    assert plan["activate"] == ["'C:\\w\\.venv\\Scripts\\activate'", "'C:\\w\\.venv\\Scripts\\Activate.ps1'"]
    assert plan["torch"]["build"] == "cu126"
    assert plan["sources"] == ["--extra-index-url", "https://download.pytorch.org/whl/cu126"]
    assert plan["commands"][-1] == (
        "stackcheck preflight --profile PT-SFT-CUDA --python 'C:\\w\\.venv\\Scripts\\python.exe'"
    )
    assert not os.path.exists("C:/w/.venv")
    mac = _snapshot_on(tmp_path, "cpu-laptop", "Darwin", "arm64")
    code, out, _ = cli_main(
        "env", "create", "-p", "TRAIN-CPU", "--path", str(tmp_path / "m"), "--snapshot", mac, "--dry-run"
    )
    assert code == 0
    assert f"interpreter: {tmp_path / 'm'}/bin/python\n" in out
    assert f"activate: source {tmp_path / 'm'}/bin/activate\n" in out
    assert not (tmp_path / "m").exists()
    code, _, err = cli_main("env", "create", "-p", "PT-SFT-CUDA", "--path", str(tmp_path / "g"), "--dry-run",
                            "--snapshot", str(SNAPSHOTS / "cpu-laptop.json"))  # fmt: skip
    assert code == 1
    assert "needs a GPU and this machine shows no NVIDIA driver" in err


def test_lock_for_another_python_or_platform_is_refused(cli_main, tiny_lock, tmp_path):
    import msgspec

    from stackcheck.provision.lock import load_lock

    lock = load_lock(str(tiny_lock))
    header = msgspec.structs.replace(lock.header, python="3.99", system="Windows", machine="AMD64")
    tiny_lock.write_bytes(msgspec.structs.replace(lock, header=header).sealed().encode())
    code, out, err = cli_main("env", "restore", str(tiny_lock), "--path", str(tmp_path / "r"), "--python",
                              os.path.realpath(sys.executable))  # fmt: skip
    assert (code, out) == (1, "")
    assert err == (
        f"stackcheck: refused: {tiny_lock}: the lock is for Python 3.99 (this interpreter is 3.11; give "
        "--python 3.99); Windows (this machine runs Linux)\n"
    )
    assert not (tmp_path / "r").exists()


def test_bad_python_option_is_one_line(cli_main, registry, tmp_path):
    base = ["env", "create", "--registry", registry, "-p", "TINY-CPU", "--path", str(tmp_path / "p")]
    code, _, err = cli_main(*base, "--python", "three")
    assert (code, err) == (
        2,
        "stackcheck: error: --python: 'three' is not X.Y (e.g. 3.12) or an interpreter path\n",
    )
    code, _, err = cli_main(*base, "--python", "7.77")
    assert (code, err) == (
        2,
        "stackcheck: error: --python 7.77: no python7.77 on PATH (give the interpreter's path)\n",
    )
    assert not (tmp_path / "p").exists()


def test_index_credentials_are_never_printed(cli_main, registry, tmp_path):
    url = "http://alice:s3cr3t-token@127.0.0.1:9/simple"  # --dry-run contacts nothing
    for extra in ((), ("--json",)):
        code, out, err = cli_main(
            "env", "create", "--registry", registry, "-p", "TINY-CPU", "--path", str(tmp_path / "s"),
            "--index-url", url, "--extra-index-url", url.replace("simple", "extra"), "--dry-run", *extra,
        )  # fmt: skip
        assert code == 0, err
        assert "s3cr3t-token" not in out + err
        assert "alice" not in out + err
        assert "http://<redacted>@127.0.0.1:9/simple" in out
        assert "http://<redacted>@127.0.0.1:9/extra" in out
    assert not (tmp_path / "s").exists()


def test_installer_failure_is_one_line_without_credentials():
    from stackcheck.errors import Refused
    from stackcheck.provision.create import _run
    from stackcheck.provision.plan import Sources

    url = "https://alice:s3cr3t-token@mirror.example/simple"
    fail = f"import sys; sys.stderr.write('note: retrying\\nerror: cannot reach {url}\\n'); sys.exit(1)"
    with pytest.raises(Refused) as exc:
        _run([sys.executable, "-c", fail, "--index-url", url], "resolving P", Sources(), progress=False)
    message = str(exc.value)
    assert message.startswith(
        "resolving P failed (error: cannot reach https://<redacted>@mirror.example/simple): "
    )
    assert message.endswith(" --index-url 'https://<redacted>@mirror.example/simple'")
    assert "s3cr3t" not in message and "alice" not in message and "\n" not in message


def test_uv_resolves_for_the_base_interpreter_while_the_environment_is_made(
    cli_main, registry, wheelhouse, tmp_path
):
    """The steps a uv create runs are the ones --dry-run prints: the resolution names the base
    interpreter (so it need not wait for the environment), the install the new one."""
    target = tmp_path / "e"
    base = ["env", "create", "--registry", registry, "-p", "TINY-CPU", "--path", str(target)]
    base += ["--installer", "uv", *offline(wheelhouse), "--json"]
    code, out, err = cli_main(*base, "--dry-run")
    assert code == 0, err
    planned = json.loads(out)
    assert not target.exists()
    code, out, err = cli_main(*base)
    assert code == 0, err
    done = json.loads(out)
    exe, new = planned["base_interpreter"], f"{target}/bin/python"
    folder = f"{target}/stackcheck"
    wheels = f"--no-index --find-links {wheelhouse}"
    assert (
        done["commands"]
        == planned["commands"][:3]
        == [
            f"{UV} venv --quiet --allow-existing --no-python-downloads --python {exe} {target}",
            f"{UV} pip compile {folder}/requirements.in --constraint {folder}/constraints.txt --python {exe} "
            f"--generate-hashes --emit-index-annotation --no-header --quiet --no-python-downloads {wheels}",
            f"{UV} pip sync {folder}/requirements.lock.txt --python {new} --require-hashes --quiet {wheels}",
        ]
    )
    assert (done["packages"], done["verdict"]) == (3, "ok")
    assert installed(target) == {"jinja2": "3.1.6", "markupsafe": "3.0.3", "tinyutil": "1.0"}
    assert sorted(p.name for p in (target / "stackcheck").iterdir()) == [
        "constraints.txt", "lock.json", "requirements.in", "requirements.lock.txt",
    ]  # fmt: skip


def test_lock_with_uv_makes_no_environment(registry, wheelhouse, monkeypatch):
    """uv resolves a lock for the base interpreter itself: the only step is the resolution."""
    from stackcheck.catalog import load_catalog
    from stackcheck.knowledge import load_knowledge
    from stackcheck.provision import create as steps
    from stackcheck.provision.installer import Installer
    from stackcheck.provision.plan import Sources, make_plan

    ran: list[list[str]] = []
    real = steps._run
    monkeypatch.setattr(steps, "_run", lambda argv, *a, **k: ran.append(argv) or real(argv, *a, **k))
    profile = load_catalog(registry).get("TINY-CPU")
    plan = make_plan(
        profile, steps.machine_facts(), load_knowledge(), python=sys.executable,
        python_version="%d.%d" % sys.version_info[:2], cuda="auto",
        sources=Sources(no_index=True, find_links=(str(wheelhouse),)),
    )  # fmt: skip
    lock = steps.lock_plan(plan, Installer("uv", UV))
    assert [(p.name, p.version) for p in lock.packages] == [
        ("jinja2", "3.1.6"), ("markupsafe", "3.0.3"), ("tinyutil", "1.0"),
    ]  # fmt: skip
    assert [argv[:3] for argv in ran] == [[UV, "pip", "compile"]]
    assert ran[0][ran[0].index("--python") + 1] == sys.executable


def test_failing_venv_beside_a_finished_resolution_is_refused_and_nothing_is_left(
    cli_main, registry, wheelhouse, tmp_path, monkeypatch
):
    """The environment is made in a thread while uv resolves: its failure is still the
    command's (one line, exit 1) and the target is removed after both have finished."""
    fake = tmp_path / "uv"
    fake.write_text(
        f'#!/bin/sh\nif [ "$1" = venv ]; then echo "error: no space left on device" >&2; exit 2; fi\n'
        f'exec {UV} "$@"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setattr("stackcheck.provision.installer.find_uv", lambda: str(fake))
    target = tmp_path / "v"
    code, out, err = cli_main(
        "env", "create", "--registry", registry, "-p", "TINY-CPU", "--path", str(target),
        "--installer", "uv", *offline(wheelhouse),
    )  # fmt: skip
    assert code == 1
    assert err.endswith(
        f"stackcheck: refused: creating {target} failed (error: no space left on device): {fake} venv "
        f"--quiet --allow-existing --no-python-downloads --python {sys.executable} {target}\n"
    ), err
    assert not target.exists()
