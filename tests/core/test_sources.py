"""One source of facts (issue 10): FactSource names it, one option group parses it on every
command that takes a snapshot, environment.obtain resolves it, and an importer is one module
plus one line in sources.IMPORTERS (pip freeze is the proof)."""

from __future__ import annotations

import json

import pytest

from stackcheck.environment import load_snapshot, obtain
from stackcheck.errors import InputError
from stackcheck.importers.pip_freeze import parse_pip_freeze
from stackcheck.sources import IMPORTERS, FactSource, importer
from tests.factories import SNAPSHOTS

LAPTOP = str(SNAPSHOTS / "cpu-laptop.json")
FREEZE = "numpy==1.26.4\n# a comment\n-e git+https://example.invalid/x#egg=x\nfoo @ file:///tmp/foo\nTorch==2.5.1\n"


def test_of_picks_the_one_given_and_names_the_option():
    assert FactSource.of(python=None, snapshot=None) == FactSource("live", "")
    source = FactSource.of(python=None, snapshot=LAPTOP)
    assert (source.kind, source.value, source.option, source.is_file) == (
        "snapshot",
        LAPTOP,
        "--snapshot",
        True,
    )
    assert FactSource.of(collect_env="x.txt").option == "--from-collect-env"
    assert FactSource.python("/p").option == "--python" and not FactSource.python("/p").is_file


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            {"python": "p", "snapshot": "s"},
            "--snapshot and --python cannot be combined: give one source of facts",
        ),
        (
            {"python": "p", "kernel": "k"},
            "--kernel and --python cannot be combined: a kernel names its own interpreter",
        ),
        (
            {"collect_env": "c", "snapshot": "s"},
            "--snapshot and --from-collect-env cannot be combined: give one source of facts",
        ),
        (
            {"pip_freeze": "f", "python": "p"},
            "--from-pip-freeze and --python cannot be combined: give one source of facts",
        ),
    ],
)
def test_two_sources_are_a_one_line_error_naming_both(given, message):
    with pytest.raises(InputError) as err:
        FactSource.of(**given)
    assert str(err.value) == message


def test_an_unknown_kind_or_a_missing_value_is_an_input_error():
    with pytest.raises(
        InputError,
        match=r"^source: 'conda' is not one of live, python, kernel, snapshot, collect-env, pip-freeze$",
    ):
        FactSource("conda", "x")
    with pytest.raises(InputError, match=r"^source: snapshot needs a path or name$"):
        FactSource("snapshot")


def test_obtain_reads_a_snapshot_like_load_snapshot():
    assert obtain(FactSource.snapshot(LAPTOP)) == load_snapshot(LAPTOP)


def test_every_importer_is_registered_once_with_an_importable_parser():
    import importlib

    assert [i.kind for i in IMPORTERS] == ["collect-env", "pip-freeze"]
    for imp in IMPORTERS:
        module, _, function = imp.parser.partition(":")
        assert callable(getattr(importlib.import_module(module), function))
        assert importer(imp.kind) is imp and imp.option == f"--from-{imp.kind}"


# ---------------------------------------------------------------- the pip freeze importer
def test_pip_freeze_pins_become_the_packages_section():
    snap = parse_pip_freeze(FREEZE, source="freeze.txt")
    assert [(d.name, d.version, d.installer) for d in snap.packages.distributions] == [
        ("numpy", "1.26.4", "pip"),
        ("Torch", "2.5.1", "pip"),
    ]
    assert (snap.packages.status, snap.packages.source, snap.tool.command) == (
        "ok",
        "pip_freeze",
        "pip_freeze",
    )
    assert (snap.torch.status, snap.torch.error) == ("absent", "not part of a pip freeze output")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "numpy==1\nnot a pin\n",
            "freeze.txt: line 2: expected NAME==VERSION (a pip freeze line), got not a pin",
        ),
        ("# only comments\n\n", "freeze.txt: not a pip freeze output: no NAME==VERSION lines"),
    ],
)
def test_pip_freeze_bad_input_is_one_line(text, message):
    with pytest.raises(InputError) as err:
        parse_pip_freeze(text, source="freeze.txt")
    assert str(err.value) == message


def test_from_pip_freeze_is_offered_wherever_collect_env_is(cli_main, tmp_path):
    freeze = tmp_path / "freeze.txt"
    freeze.write_text(FREEZE)
    code, out, err = cli_main("snapshot", "--from-pip-freeze", str(freeze), "--json")
    assert code == 0, err
    assert [d["name"] for d in json.loads(out)["packages"]["distributions"]] == ["numpy", "Torch"]
    code, out, err = cli_main("doctor", "--from-pip-freeze", str(freeze), "--json")
    assert code == 0, err
    assert json.loads(out)["verdict"] == "ok"
    code, out, err = cli_main(
        "preflight", "-p", "BASE-CPU", "--from-pip-freeze", str(freeze), "--snapshot", LAPTOP
    )
    assert (code, out, err) == (
        2,
        "",
        "stackcheck: error: --snapshot and --from-pip-freeze cannot be combined: give one source of facts\n",
    )


def test_the_triage_names_the_importer_it_judged_against(cli_main, tmp_path):
    freeze = tmp_path / "freeze.txt"
    freeze.write_text(FREEZE)
    log = tmp_path / "error.txt"
    log.write_text("ModuleNotFoundError: No module named 'flash_attn'\n")
    code, out, err = cli_main("triage", str(log), "--from-pip-freeze", str(freeze), "--json")
    assert code == 0, err
    assert json.loads(out)["environment_source"] == f"pip-freeze {freeze}"
