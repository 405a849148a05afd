"""`profiles show --json` is the resolved profile, which a registry refuses (`layers` is the
resolver's); `profiles export` writes what a registry accepts (issue 11, item 10). The round
trip for every built-in profile: export → registry file → validate → the same resolution."""

from __future__ import annotations

import json

import msgspec
import pytest

from stackcheck.catalog import load_catalog
from stackcheck.catalog.export import export_registry
from stackcheck.catalog.validation import validate
from tests.factories import SNAPSHOTS

BUILTIN = load_catalog(None)


def test_show_json_does_not_paste_into_a_registry_and_says_how_to_export(cli_main, tmp_path):
    code, out, err = cli_main("profiles", "show", "TRAIN-CPU", "--json")
    assert code == 0
    assert err == (
        "stackcheck: note: this is the resolved profile (`layers` is filled by the resolver); "
        "`stackcheck profiles export TRAIN-CPU` writes an entry a registry accepts\n"
    )
    pasted = tmp_path / "pasted.json"
    pasted.write_text(json.dumps({"profiles": [json.loads(out)]}))
    assert [str(p) for p in validate(str(pasted))] == [
        f"{pasted}: TRAIN-CPU.layers: filled by the resolver, not written by hand "
        "(`stackcheck profiles export TRAIN-CPU` writes an entry a registry accepts)"
    ]
    assert cli_main("profiles", "show", "TRAIN-CPU", "--raw", "--json")[2] == ""  # as written: no note


def test_export_writes_a_registry_that_resolves_the_same(cli_main, tmp_path):
    target = tmp_path / "requirements" / "environment-profiles.json"
    code, out, err = cli_main("profiles", "export", "TRAIN-CPU", "-o", str(target))
    assert (code, err) == (0, ""), err
    assert out == f"{target}\n"
    doc = json.loads(target.read_text())
    assert doc["include_builtin"] is True and [p["id"] for p in doc["profiles"]] == ["TRAIN-CPU"]
    assert "layers" not in doc["profiles"][0] and "extends" not in doc["profiles"][0]
    assert cli_main("profiles", "validate", str(target)) == (0, f"{target}: valid\n", "")
    code, out, err = cli_main(
        "preflight",
        "-p",
        "TRAIN-CPU",
        "--registry",
        str(target),
        "--snapshot",
        str(SNAPSHOTS / "cpu-laptop.json"),
        "--json",
    )
    assert code == 0, err
    report = json.loads(out)
    assert report["environment"]["registry"] == str(target)
    expected = {c["expected"] for c in report["checks"] if c["id"] in ("PKG001", "PKG002")}
    assert expected == {*BUILTIN.get("TRAIN-CPU").requirements, *BUILTIN.get("TRAIN-CPU").constraints}


def test_export_to_stdout_and_only_the_known_formats(cli_main):
    code, out, err = cli_main("profiles", "export", "BASE-CPU", "--format", "registry")
    assert code == 0, err
    assert json.loads(out)["profiles"][0]["requirements"] == ["torch<3,>=2.6"]
    # issue 15 adds requirements / pyproject / conda / pixi (tests/provision/test_export.py)
    code, out, err = cli_main("profiles", "export", "BASE-CPU", "--format", "yaml")
    assert code == 2 and out == "" and "'yaml' is not one of 'registry', 'requirements'" in err


@pytest.mark.parametrize("profile_id", BUILTIN.ids(include_bases=True))
def test_every_builtin_profile_round_trips(tmp_path, profile_id):
    path = tmp_path / "registry.json"
    path.write_bytes(msgspec.json.encode(export_registry(BUILTIN, [profile_id])))
    assert validate(str(path)) == []
    again = load_catalog(str(path)).get(profile_id)
    original = BUILTIN.get(profile_id)
    assert msgspec.structs.replace(again, layers=[]) == msgspec.structs.replace(original, layers=[])
    assert again.layers == [profile_id]


def test_export_never_prints_the_credentials_a_requirement_carries(cli_main, tmp_path):
    secret = "Zq7x" + "pw" * 6
    reg = tmp_path / "r.json"
    reg.write_text(
        json.dumps(
            {
                "include_builtin": False,
                "profiles": [
                    {
                        "id": "LAB-PRIV",
                        "requirements": [f"privlib @ git+https://ci:{secret}@git.example.com/p.git"],
                    }
                ],
            }
        )
    )
    code, out, err = cli_main("profiles", "export", "LAB-PRIV", "--registry", str(reg))
    assert (code, err) == (0, "")
    assert secret not in out
    assert json.loads(out)["profiles"][0]["requirements"] == [
        "privlib @ git+https://<redacted>@git.example.com/p.git"
    ]
    code, written, _ = cli_main(
        "profiles", "export", "LAB-PRIV", "--registry", str(reg), "-o", str(tmp_path / "x.json")
    )
    assert code == 0 and secret not in (tmp_path / "x.json").read_text()
