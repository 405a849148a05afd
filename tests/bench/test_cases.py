"""Shapes, shape files and backend selection; a bad shape file is one line and exit 2."""

from __future__ import annotations

import json

import pytest

from stackcheck.bench.cases import BUILTIN_SHAPES, Shape, backends_named, flops, load_shapes, shape_problem
from stackcheck.errors import InputError


def test_builtin_sets_cover_head_dims_causal_gqa_and_long_sequences():
    attn = [s for s in BUILTIN_SHAPES["default"] if s.op == "attention"]
    assert {s.head_dim for s in attn} == {64, 128, 256}
    assert {s.causal for s in attn} == {True, False}
    assert any(s.kv < s.heads for s in attn)  # GQA
    assert min(s.keys for s in attn) <= 1024 and max(s.keys for s in attn) >= 8192
    for name, shapes in BUILTIN_SHAPES.items():
        assert [shape_problem(s) for s in shapes] == [None] * len(shapes), name


def test_flops_of_one_forward_pass():
    assert flops(Shape(name="g", op="gemm", m=2, n=3, k=4)) == 48.0
    attn = Shape(name="a", op="attention", batch=1, heads=2, seq_q=8, head_dim=4)
    assert flops(attn) == 4.0 * 2 * 8 * 8 * 4
    assert (
        flops(Shape(name="c", op="attention", heads=2, seq_q=8, head_dim=4, causal=True)) == flops(attn) / 2
    )


def test_shape_file_adds_shapes_and_can_keep_the_builtin_ones(tmp_path):
    path = tmp_path / "shapes.json"
    mine = {"name": "mine", "op": "attention", "heads": 4, "kv_heads": 1, "seq_q": 32, "head_dim": 96}
    path.write_text(json.dumps({"schema_version": "1.0", "shapes": [mine]}))
    assert load_shapes(path) == [
        Shape(name="mine", op="attention", heads=4, kv_heads=1, seq_q=32, head_dim=96)
    ]
    path.write_text(json.dumps({"shapes": [mine], "include_builtin": True}))
    names = [s.name for s in load_shapes(path)]
    assert names == [s.name for s in BUILTIN_SHAPES["default"]] + ["mine"]


def test_backends_by_name_group_or_operation():
    assert [b.name for b in backends_named(["attention/sdpa"])] == [
        "sdpa-math",
        "sdpa-efficient",
        "sdpa-flash",
        "sdpa-cudnn",
    ]
    assert [b.name for b in backends_named(["gemm", "matmul-bf16"])] == [
        "matmul-fp32",
        "matmul-tf32",
        "matmul-bf16",
        "matmul-fp16",
        "scaled-mm-fp8",
    ]
    with pytest.raises(InputError, match=r"^--backend: no backend or group 'sdpa-fast' \(known: sdpa-math, "):
        backends_named(["sdpa-fast"])


BAD_FILES = [
    ("{", "shapes.json: truncated JSON, expected a complete shape file"),
    ("", "shapes.json: empty file, expected a shape file (JSON)"),
    ('{"shapes": []}', "shapes.json: shapes: expected at least one shape"),
    (
        '{"shapes": [{"name": "x", "op": "conv"}]}',
        "shapes.json: shapes[0].op: invalid enum value 'conv' (in a shape file)",
    ),
    (
        '{"shapes": [{"name": "x", "op": "gemm", "m": "8"}]}',
        "shapes.json: shapes[0].m: expected `int`, got `str` (in a shape file)",
    ),
    (
        '{"shapes": [{"name": "x", "op": "gemm", "mm": 8}]}',
        "shapes.json: shapes[0]: object contains unknown field `mm` (in a shape file)",
    ),
    (
        '{"shapes": [{"name": "x", "op": "gemm", "m": 0, "n": 1, "k": 1}]}',
        "shapes.json: shapes[0].m: expected a positive integer up to 1048576, got 0",
    ),
    (
        '{"shapes": [{"name": "x", "op": "attention", "heads": 6, "kv_heads": 4}]}',
        "shapes.json: shapes[0].kv_heads: 4 does not divide heads (6)",
    ),
    (
        '{"shapes": [{"name": "x", "op": "attention", "seq_q": 1, "seq_k": 64, "causal": true}]}',
        "shapes.json: shapes[0].causal: needs seq_k = seq_q, got 1 queries and 64 keys",
    ),
    (
        '{"shapes": [{"name": "x", "op": "gemm", "m": 1048576, "n": 1048576, "k": 1}]}',
        "shapes.json: shapes[0].m: a tensor of 1099511627776 elements is over the limit of 268435456",
    ),
    (
        '{"shapes": [{"name": "x", "op": "gemm", "m": 1, "n": 1, "k": 1, "dtype": "int8"}]}',
        "shapes.json: shapes[0].dtype: expected one of float64, float32, tfloat32, bfloat16, float16, "
        "float8_e4m3fn, got 'int8'",
    ),
    (
        '{"shapes": [{"name": "a b", "op": "gemm", "m": 1, "n": 1, "k": 1}]}',
        "shapes.json: shapes[0].name: expected letters, digits, '.', '_' or '-' (no spaces)",
    ),
    (
        '{"shapes": [{"name": "x", "op": "gemm", "m": 1, "n": 1, "k": 1},'
        ' {"name": "x", "op": "gemm", "m": 2, "n": 2, "k": 2}]}',
        "shapes.json: shapes[1].name: 'x' is given twice",
    ),
    (
        '{"schema_version": "2.0", "shapes": []}',
        "shapes.json: schema_version: invalid enum value '2.0' (in a shape file)",
    ),
]


@pytest.mark.parametrize(("content", "message"), BAD_FILES)
def test_bad_shape_file_is_one_line_and_exit_2(cli_main, tmp_path, monkeypatch, content, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shapes.json").write_text(content)
    code, out, err = cli_main("bench", "run", "--shapes", "shapes.json", "-o", "out", "--no-record")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err == f"stackcheck: error: {message}\n"
    assert not (tmp_path / "out").exists()  # nothing ran, nothing written


def test_missing_shape_file_and_unknown_set(cli_main, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli_main("bench", "run", "--shapes", "nope.json", "-o", "out", "--no-record")
    assert code == 2 and err.strip().endswith("nope.json: no such shape file")
    code, _, err = cli_main("bench", "run", "--shapes", "tiny", "--reps", "3", "-o", "out", "--no-record")
    assert code == 2 and err.strip().endswith(
        "--reps: at least 5 repetitions for a median and a noise estimate, got 3"
    )


def test_any_shape_file_gives_shapes_or_one_input_error(tmp_path):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.text(max_size=8)
    )
    fields = st.sampled_from(
        [
            "name",
            "op",
            "dtype",
            "heads",
            "kv_heads",
            "seq_q",
            "seq_k",
            "head_dim",
            "m",
            "n",
            "k",
            "dim",
            "causal",
            "batch",
            "x",
        ]
    )
    shape = st.dictionaries(
        fields, st.one_of(scalars, st.sampled_from(["attention", "gemm", "block", "a1"])), max_size=8
    )
    doc = st.one_of(
        st.dictionaries(
            st.sampled_from(["shapes", "include_builtin", "schema_version"]),
            st.one_of(scalars, st.lists(shape, max_size=3)),
        ),
        st.lists(shape, max_size=2),
        scalars,
    )
    path = tmp_path / "shapes.json"

    @settings(max_examples=150)
    @given(doc)
    def check(value):
        import json

        path.write_text(json.dumps(value))
        try:
            shapes = load_shapes(path)
        except InputError as exc:
            assert str(exc).startswith(f"{path}: ") and "\n" not in str(exc)
        else:
            assert shapes and all(shape_problem(s) is None for s in shapes)

    check()
