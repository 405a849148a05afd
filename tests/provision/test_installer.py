"""The installer's pure parts: the pip configuration read and merged, unreachable sources,
and both resolvers' output read back as lock rows."""

from __future__ import annotations

import os

import pytest

from stackcheck.errors import InputError
from stackcheck.provision.installer import (
    Installer,
    check_sources,
    check_torch_index,
    merge_sources,
    parse_pip_report,
    parse_uv_compile,
    pip_config,
    redact_url,
)
from stackcheck.provision.plan import Sources


def test_pip_config_files_then_variables(tmp_path):
    home = tmp_path / "home"
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text(
        "[global]\nindex-url = https://mirror.example/simple\ncert = /etc/ca.pem\n"
        "[install]\nfind-links =\n    /wh1\n    /wh2\ntrusted-host = mirror.example\n"
    )
    env = {
        "XDG_CONFIG_DIRS": str(tmp_path / "none"),
        "PIP_EXTRA_INDEX_URL": "https://a/simple https://b/simple",
    }
    got = pip_config(env, home=str(home))
    assert got == Sources(
        index_url="https://mirror.example/simple",
        extra_index_urls=("https://a/simple", "https://b/simple"),
        find_links=("/wh1", "/wh2"),
        cert="/etc/ca.pem",
        trusted_hosts=("mirror.example",),
    )
    env["PIP_CONFIG_FILE"] = os.devnull  # pip's switch: no files at all
    assert pip_config(env, home=str(home)) == Sources(
        extra_index_urls=("https://a/simple", "https://b/simple")
    )
    env["PIP_NO_INDEX"] = "1"
    assert pip_config(env, home=str(home)).no_index is True


def test_unreadable_pip_config_is_one_line(tmp_path):
    bad = tmp_path / "pip.conf"
    bad.write_text("no section header\n")
    with pytest.raises(InputError, match=rf"^{bad}: not a readable pip configuration"):
        pip_config({"PIP_CONFIG_FILE": str(bad), "XDG_CONFIG_DIRS": str(tmp_path)}, home=str(tmp_path))


def test_explicit_options_over_the_configuration(tmp_path):
    config = Sources(index_url="https://mirror/simple", find_links=("/wh1",))
    merged = merge_sources(config, index_url="https://other/simple", find_links=(str(tmp_path),))
    assert merged.index_url == "https://other/simple"
    assert merged.find_links == ("/wh1", str(tmp_path))


def _refuse(host, port, timeout):
    raise ConnectionRefusedError(111, "Connection refused")


def test_unreachable_only_index_is_a_one_line_error():
    with pytest.raises(InputError) as exc:
        check_sources(Sources(index_url="https://user:tok@mirror.example:8443/simple"), connect=_refuse)
    assert str(exc.value) == (
        "--index-url https://mirror.example:8443/simple: unreachable (cannot connect to mirror.example:8443 "
        "(Connection refused)) and no other source is configured"
    )


def test_unreachable_index_beside_a_wheelhouse_is_skipped_with_a_warning(tmp_path):
    kept, warnings = check_sources(
        Sources(index_url="https://mirror.example/simple", find_links=(str(tmp_path),)), connect=_refuse
    )
    assert kept == Sources(no_index=True, find_links=(str(tmp_path),))
    assert warnings == [
        "--index-url https://mirror.example/simple: unreachable (cannot connect to mirror.example:443 "
        "(Connection refused)); skipped"
    ]
    kept, warnings = check_sources(
        Sources(extra_index_urls=("https://dead/simple",), find_links=("/no/such/dir",)),
        connect=lambda h, p, t: _refuse(h, p, t) if h == "dead" else None,
    )
    assert kept == Sources()  # PyPI (the default index) answered
    assert warnings == [
        "--extra-index-url https://dead/simple: unreachable (cannot connect to dead:443 "
        "(Connection refused)); skipped",
        "--find-links /no/such/dir: unreachable (no such file or directory); skipped",
    ]


def test_redact_url_drops_credentials_only():
    assert redact_url("https://u:p@h.example/simple") == "https://h.example/simple"
    assert redact_url("https://h.example/simple") == "https://h.example/simple"


UV_OUT = (
    """\
app==1.0 \\
    --hash=sha256:"""
    + "1" * 64
    + """
    # via -r req.in
    # from file:///wh
helper==1.2 \\
    --hash=sha256:"""
    + "2" * 64
    + """ \\
    --hash=sha256:"""
    + "3" * 64
    + """
    # via
    #   app
    #   other
    # from https://user:tok@mirror.example/simple
"""
)


def test_parse_uv_compile():
    rows = parse_uv_compile(UV_OUT)
    assert [(r.name, r.version, r.hashes, r.via, r.index) for r in rows] == [
        ("app", "1.0", ["1" * 64], ["-r"], "file:///wh"),
        ("helper", "1.2", ["2" * 64, "3" * 64], ["app", "other"], "https://mirror.example/simple"),
    ]


def test_parse_pip_report_evaluates_markers_for_via():
    report = {
        "environment": {"python_version": "3.11", "sys_platform": "linux"},
        "install": [
            {"requested": True, "download_info": {"url": "file:///wh/app-1.0-py3-none-any.whl",
             "archive_info": {"hashes": {"sha256": "1" * 64}}},
             "metadata": {"name": "App", "version": "1.0",
                          "requires_dist": ["helper>=1", "winonly; sys_platform == 'win32'"]}},
            {"download_info": {"url": "https://files.example/h/helper-1.2.whl",
             "archive_info": {"hashes": {"sha256": "2" * 64}}},
             "metadata": {"name": "helper", "version": "1.2"}},
        ],
    }  # fmt: skip
    rows = parse_pip_report(report, Sources(index_url="https://files.example/simple", find_links=("/wh",)))
    assert [(r.name, r.via, r.index) for r in rows] == [
        ("app", ["-r"], "file:///wh"),
        ("helper", ["app"], "https://files.example/simple"),
    ]


def test_install_steps_never_pass_constraints_or_resolve():
    sources = Sources(no_index=True, find_links=("/wh",), constraint_files=("/c.txt",), trusted_hosts=("h",))
    uv = Installer("uv", "/bin/uv")
    assert uv.install_argv("/e/bin/python", "/e/pins.txt", sources) == [
        "/bin/uv", "pip", "sync", "/e/pins.txt", "--python", "/e/bin/python", "--require-hashes", "--quiet",
        "--no-index", "--find-links", "/wh", "--allow-insecure-host", "h",
    ]  # fmt: skip
    pip = Installer("pip")
    assert pip.install_argv("/e/bin/python", "/e/pins.txt", sources) == [
        "/e/bin/python", "-m", "pip", "install", "--no-deps", "--require-hashes", "--quiet",
        "--disable-pip-version-check", "-r", "/e/pins.txt", "--no-index", "--find-links", "/wh",
        "--trusted-host", "h",
    ]  # fmt: skip


def test_unreachable_torch_index_is_dropped_with_a_warning():
    from stackcheck.provision.plan import Plan, TorchChoice

    torch = TorchChoice("cu126", "2.14", "https://download.pytorch.org/whl/cu126", "torch 2.14 cu126")
    plan = Plan(
        profile=None, digest="", python="", python_version="3.12", system="Linux", machine="x86_64",
        torch=torch, sources=Sources(index_url="https://mirror.example/simple"),
    )  # type: ignore[arg-type]  # fmt: skip
    warnings = check_torch_index(plan, connect=_refuse)
    assert warnings == [
        "torch index https://download.pytorch.org/whl/cu126: unreachable (cannot connect to "
        "download.pytorch.org:443 (Connection refused)); skipped, torch comes from the other sources"
    ]
    assert plan.torch.index_url is None
    assert (
        plan.torch.why == "torch 2.14 cu126 (its index https://download.pytorch.org/whl/cu126 is unreachable)"
    )
    assert plan.sources.with_torch(plan.torch).args() == ["--index-url", "https://mirror.example/simple"]
    reachable = Plan(
        profile=None, digest="", python="", python_version="3.12", system="Linux", machine="x86_64",
        torch=torch, sources=Sources(),
    )  # type: ignore[arg-type]  # fmt: skip
    assert check_torch_index(reachable, connect=lambda h, p, t: None) == []
    assert reachable.torch is torch


def test_certificate_reaches_both_installers(monkeypatch):
    from stackcheck.provision.installer import child_env

    sources = Sources(cert="/etc/ca.pem", index_url="https://mirror.example/simple")
    pip = Installer("pip").install_argv("/e/bin/python", "/e/pins.txt", sources)
    assert pip[-2:] == ["--cert", "/etc/ca.pem"]
    uv = Installer("uv", "/bin/uv").install_argv("/e/bin/python", "/e/pins.txt", sources)
    assert "--cert" not in uv  # uv takes it from the environment
    assert child_env(sources)["SSL_CERT_FILE"] == "/etc/ca.pem"
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    env = child_env(Sources())
    assert "SSL_CERT_FILE" not in env and "PYTHONPATH" not in env


def test_the_installers_output_is_never_painted(monkeypatch):
    """FORCE_COLOR (a CI setting) made ``uv pip compile`` paint the requirements it is read back
    from: env create refused every plan (tests/provision/test_env_light.py creates with it)."""
    from stackcheck.provision.installer import child_env

    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("CLICOLOR_FORCE", "1")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    env = child_env(Sources())
    assert ("FORCE_COLOR" in env, "CLICOLOR_FORCE" in env, env["HTTPS_PROXY"]) == (
        False, False, "http://proxy.example:3128",
    )  # fmt: skip
