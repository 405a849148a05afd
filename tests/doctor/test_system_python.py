"""The system interpreter of a Debian/Ubuntu machine: one .dist-info and one .egg-info of a
project in one directory are one install (not two copies), and an interpreter marked
externally managed (PEP 668) gets no pip command that changes it: every pip fix becomes
advice to use a virtual environment, with the reason."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import pytest
from fakeenv import write_dist

from stackcheck.checks.context import Context
from stackcheck.environment import obtain_snapshot
from stackcheck.judge import judge
from stackcheck.probe import JUDGED
from stackcheck.probe.interpreter import externally_managed_marker
from tests.factories import dist, make_snapshot

MARKER = "/usr/lib/python3.11/EXTERNALLY-MANAGED"


def _egg_info(site, name: str, version: str) -> None:
    """The unversioned .egg-info a Debian package installs beside the project."""
    egg = site / f"{name}.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n")
    (egg / "top_level.txt").write_text(f"{name}\n")


@pytest.mark.slow
def test_dist_info_and_egg_info_in_one_directory_are_one_install(env):
    write_dist(env.site, "cryptography", "38.0.4")
    _egg_info(env.site, "cryptography", "38.0.4")
    snapshot = obtain_snapshot(python_path=env.python, sections=JUDGED)
    assert sorted(
        d.metadata_dir.rsplit("/", 1)[1] for d in snapshot.packages.distributions if d.name == "cryptography"
    ) == ["cryptography-38.0.4.dist-info", "cryptography.egg-info"]
    iso = [c for c in judge(snapshot, command="doctor").checks if c.id == "ISO001"]
    assert [(c.verdict, c.subject) for c in iso] == [("ok", None)]


def test_same_directory_pair_of_other_versions_is_still_two():
    site = "/usr/lib/python3/dist-packages"
    snap = make_snapshot(
        dist("cryptography", "38.0.4", location=site, metadata_dir=f"{site}/cryptography-38.0.4.dist-info"),
        dist(
            "cryptography",
            "3.4.8",
            location=site,
            metadata_dir=f"{site}/cryptography.egg-info",
            shadowed=True,
        ),
    )
    iso = [c for c in judge(snap, command="doctor").checks if c.id == "ISO001"]
    assert [(c.verdict, c.subject) for c in iso] == [("blocked", "cryptography")]


def test_externally_managed_marker_is_a_fact(tmp_path):
    stdlib = tmp_path / "lib" / "python3.11"
    stdlib.mkdir(parents=True)
    assert externally_managed_marker(str(stdlib), "/usr", "/usr") == ""
    (stdlib / "EXTERNALLY-MANAGED").write_text("[externally-managed]\nError=use apt\n")
    assert externally_managed_marker(str(stdlib), "/usr", "/usr") == str(stdlib / "EXTERNALLY-MANAGED")
    # a venv of that interpreter is not externally managed (PEP 668)
    assert externally_managed_marker(str(stdlib), "/home/u/.venv", "/usr") == ""


def _system_snapshot():
    site = "/usr/lib/python3/dist-packages"
    snap = make_snapshot(
        dist("PyGObject", "3.42.2", "pycairo>=1.16.0", location=site),
        dist("cryptography", "38.0.4", location=site),
        dist("cryptography", "38.0.4", location="/usr/local/lib/python3.11/dist-packages", shadowed=True),
        dist("pynvml", "11.0", location=site, top_level=["pynvml"]),
        dist("nvidia-ml-py", "12.0", location=site, top_level=["pynvml"]),
    )
    py = snap.python
    py.executable, py.prefix, py.base_prefix, py.env_kind = "/usr/bin/python3", "/usr", "/usr", "system"
    py.site_dirs = ["/usr/local/lib/python3.11/dist-packages", site]
    py.sys_path = ["/usr/lib/python311.zip", "/usr/lib/python3.11", *py.site_dirs]
    py.externally_managed = MARKER
    return snap


HEAD = (
    "the checked interpreter is externally managed (PEP 668: an EXTERNALLY-MANAGED file beside its standard "
    "library), and pip must not change it (that would break packages of the operating system)"
)
ADVICE = (
    HEAD + "; use the operating system's package manager (e.g. apt), or work in a virtual environment instead"
)


def test_context_turns_pip_commands_into_venv_advice():
    ctx = Context(snapshot=_system_snapshot())
    venv = "/usr/bin/python3 -m venv .venv && source .venv/bin/activate"
    assert (
        ctx.pip_install("pycairo>=1.16.0") == f"{ADVICE}: {venv} && python -m pip install 'pycairo>=1.16.0'"
    )
    assert ctx.pip_uninstall("cryptography") == (
        HEAD + "; remove it with the operating system's package manager (e.g. apt), or work in a virtual "
        f"environment without it: {venv}"
    )
    assert ctx.pip_replace(["pynvml", "nvidia-ml-py"], "nvidia-ml-py") == (
        f"{ADVICE}: {venv} && python -m pip install nvidia-ml-py"
    )
    plain = Context(snapshot=make_snapshot())
    assert plain.pip_install("x") == "/env/bin/python -m pip install x"


def test_no_check_prints_a_pip_command_for_an_externally_managed_interpreter():
    from stackcheck.catalog import load_catalog

    snap = _system_snapshot()
    reports = [judge(snap, command="doctor")]
    catalog = load_catalog(None)
    reports += [
        judge(snap, command="preflight", profile=catalog.get(pid)) for pid in catalog.ids(include_bases=True)
    ]
    fixes = [(c.id, c.fix) for r in reports for c in r.checks if c.fix]
    pip_fixes = [f for f in fixes if "pip " in f[1]]
    assert pip_fixes, "the snapshot has faults whose fixes involve pip"
    for check_id, fix in pip_fixes:
        assert "/usr/bin/python3 -m pip" not in fix and " pip3 " not in fix, (check_id, fix)
        assert "externally managed (PEP 668" in fix, (check_id, fix)
    ids = {i for i, _ in pip_fixes}
    assert {"DEP001", "ISO001", "ISO002"} <= ids


@pytest.mark.skipif(
    not os.path.isfile("/usr/bin/python3"), reason="no system interpreter at /usr/bin/python3"
)
def test_the_real_system_interpreter_is_probed_for_the_marker():
    stdlib = subprocess.run(
        ["/usr/bin/python3", "-c", "import sysconfig; print(sysconfig.get_path('stdlib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    marker = os.path.join(stdlib, "EXTERNALLY-MANAGED")
    snap = obtain_snapshot(python_path="/usr/bin/python3", sections=())
    in_venv = snap.python.prefix != snap.python.base_prefix
    assert snap.python.externally_managed == (marker if os.path.isfile(marker) and not in_venv else "")
    # and the interpreter running the tests (a venv) is not
    assert sys.prefix != sys.base_prefix
    assert obtain_snapshot(python_path=sys.executable, sections=()).python.externally_managed == ""


@pytest.mark.skipif(not os.path.isfile(MARKER), reason=f"no {MARKER} on this machine")
def test_a_kernel_on_the_system_interpreter_gets_advice_not_pip():
    from stackcheck.notebook.interpreter import ask

    facts = ask("/usr/bin/python3")
    assert facts.ran and facts.externally_managed == MARKER
    assert (
        facts.pip_install_ipykernel
        == f"{ADVICE}: /usr/bin/python3 -m venv .venv && source .venv/bin/activate && "
        "python -m pip install ipykernel"
    )


def test_a_kernel_in_a_venv_gets_the_pip_command(tmp_path):
    from stackcheck.notebook.interpreter import ask

    facts = ask(sys.executable)
    assert facts.ran and facts.externally_managed == ""
    assert facts.pip_install_ipykernel == f"{shlex.quote(sys.executable)} -m pip install ipykernel"
