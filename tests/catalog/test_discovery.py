"""Discovery: --registry, requirements/environment-profiles.json found upwards, built-in fallback;
a user registry layered on the built-in catalog."""

from __future__ import annotations

import pytest

from stackcheck.catalog import load_catalog
from stackcheck.errors import InputError


def test_builtin_catalog_when_nothing_is_found(tmp_path):
    catalog = load_catalog(cwd=str(tmp_path))
    assert catalog.source == "built-in"
    assert "BASE-CPU" in catalog.ids()
    assert catalog.file("BASE-CPU") == "stackcheck/catalog/builtin/10-cpu-delivery.json"


def test_walks_up_to_the_nearest_registry(write_registry, tmp_path):
    reg = write_registry(
        [{"id": "MY-EXP", "extends": ["BASE-CPU"], "title": "mine"}],
        path="requirements/environment-profiles.json",
    )
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    catalog = load_catalog(cwd=str(deep))
    assert catalog.source == str(reg)
    assert "MY-EXP" in catalog.ids() and "BASE-CPU" in catalog.ids()  # include_builtin defaults to true
    assert catalog.file("MY-EXP") == str(reg)


def test_explicit_registry_wins_over_the_walk_up(write_registry, tmp_path):
    write_registry([{"id": "FOUND"}], path="requirements/environment-profiles.json")
    explicit = write_registry([{"id": "GIVEN"}], path="elsewhere.json")
    catalog = load_catalog(registry=str(explicit), cwd=str(tmp_path))
    assert catalog.source == str(explicit)
    assert "GIVEN" in catalog.ids() and "FOUND" not in catalog.ids()


def test_user_profile_extends_a_builtin_one(write_registry):
    reg = write_registry(
        [
            {
                "id": "MY-SFT",
                "extends": ["PT-SFT-CUDA"],
                "title": "my SFT run",
                "requirements": ["wandb>=0.17", "trl>=1.0"],
                "gpu": {"min_memory_gib": 48},
            },
        ]
    )
    catalog = load_catalog(registry=str(reg))
    p = catalog.get("MY-SFT")
    base = catalog.get("PT-SFT-CUDA")
    assert p.layers == [*base.layers, "MY-SFT"]
    assert "wandb>=0.17" in p.requirements and "trl<2,>=1.0" in p.requirements
    assert p.gpu.min_memory_gib == 48 and p.gpu.min_compute_capability == base.gpu.min_compute_capability
    assert {f.requirement for f in p.forbidden} >= {"vllm", "bitsandbytes"}
    assert p.title == "my SFT run" and p.category == base.category


def test_user_profile_with_a_builtin_id_replaces_it(write_registry):
    reg = write_registry([{"id": "BASE-CPU", "title": "ours", "requirements": ["torch==2.13.0"]}])
    catalog = load_catalog(registry=str(reg))
    assert catalog.get("BASE-CPU").title == "ours"
    assert catalog.get("BASE-CPU").requirements == ["torch==2.13.0"]
    assert catalog.file("BASE-CPU") == str(reg)
    # profiles built on the replaced one now inherit from it
    assert "torch==2.13.0" in catalog.get("TRAIN-CPU").requirements


def test_include_builtin_false_stands_alone(write_registry):
    reg = write_registry([{"id": "ALONE"}, {"id": "ORPHAN", "extends": ["BASE-CPU"]}], include_builtin=False)
    catalog = load_catalog(registry=str(reg))
    assert catalog.ids() == ["ALONE", "ORPHAN"]
    with pytest.raises(InputError, match=r"reg\.json: ORPHAN\.extends: unknown parent profile 'BASE-CPU'"):
        catalog.get("ORPHAN")


def test_unknown_profile_lists_close_matches():
    with pytest.raises(InputError) as info:
        load_catalog().get("TRAIN-CUDA-MECHANSIM")
    assert (
        str(info.value) == "unknown profile ID 'TRAIN-CUDA-MECHANSIM' in the built-in catalog; did you mean "
        "TRAIN-CUDA-MECHANISM, INF-CUDA-MECHANISM, PAR-CUDA-MECHANISM?"
    )


def test_hidden_base_layers_resolve_but_are_not_listed():
    catalog = load_catalog()
    assert all(not i.startswith(("LAYER-", "GUARD-")) for i in catalog.ids())
    assert "LAYER-CUDA" in catalog.ids(include_bases=True)
    assert catalog.get("LAYER-CUDA").category == "base"


def test_digest_is_canonical_content(write_registry):
    a = write_registry([{"id": "X", "title": "t", "requirements": ["torch"]}], path="a.json")
    b = write_registry(
        [{"requirements": ["torch"], "title": "t", "id": "X"}], path="b.json"
    )  # same content, other key order
    c = write_registry([{"id": "X", "title": "changed", "requirements": ["torch"]}], path="c.json")
    da, db, dc = (load_catalog(registry=str(p)).digest for p in (a, b, c))
    assert da.startswith("sha256:") and len(da) == len("sha256:") + 64
    assert da == db != dc
    assert load_catalog().digest == load_catalog().digest


def test_duplicate_ids_in_one_file_are_unreadable_input(write_registry):
    reg = write_registry([{"id": "X"}, {"id": "X"}])
    with pytest.raises(
        InputError, match=r"reg\.json: profiles\[1\]\.id: duplicate profile ID 'X' \(also profiles\[0\]\)"
    ):
        load_catalog(registry=str(reg))


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{"profiles": [{"id": "X",', "truncated JSON"),
        (b'{"profiles": [\n{"id": "X"}\n,,]}', "line 3"),
        (b"\x00\xff\xfe garbage", "malformed JSON"),
        (b"", "empty file"),
        (b'{"profiles": [{"id": "X", "reqs": []}]}', "unknown field `reqs`"),
    ],
)
def test_malformed_registries_raise_one_line_input_errors(tmp_path, content, expected):
    path = tmp_path / "reg.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        load_catalog(registry=str(path))
    message = str(info.value)
    assert message.startswith(str(path)) and expected in message and "\n" not in message


def test_missing_registry_file(tmp_path):
    with pytest.raises(InputError, match="no such profile registry"):
        load_catalog(registry=str(tmp_path / "nope.json"))
