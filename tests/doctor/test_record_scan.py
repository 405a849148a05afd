"""The probe's fast RECORD scan (top-level import names) against a plain line-by-line reading."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from stackcheck.probe.interpreter import _top_level_from_record


def reference(record_text: str) -> list[str]:
    """Line by line, the obvious way: the first path component, or a top-level module file."""
    names = set()
    for line in record_text.splitlines():
        rel = line.split(",", 1)[0].strip()
        if not rel or rel.startswith(("..", "/")):
            continue
        first = rel.replace("\\", "/").split("/", 1)[0]
        if "/" not in rel.replace("\\", "/"):
            if first.endswith(".py"):
                names.add(first[:-3])
            elif first.endswith((".so", ".pyd")):
                names.add(first.split(".", 1)[0])
            continue
        names.add(first)
    return sorted(n for n in names if n.isidentifier() and n != "__pycache__")


def test_typical_record():
    record = "\n".join(
        [
            "torch/__init__.py,sha256=abc,123",
            "torch/lib/libtorch.so,sha256=abc,123",
            "functorch/__init__.py,,",
            "six.py,sha256=x,1",
            "_cffi_backend.cpython-311-x86_64-linux-gnu.so,sha256=x,1",
            "torch-2.13.0.dist-info/METADATA,,",
            "torch-2.13.0.data/scripts/x,,",
            "../../../bin/torchrun,sha256=x,1",
            "__pycache__/six.cpython-311.pyc,,",
            "distutils-precedence.pth,,",
            "win\\style\\path.py,,",
            "",
        ]
    )
    assert _top_level_from_record(record) == ["_cffi_backend", "functorch", "six", "torch", "win"]


segment = st.sampled_from(
    [
        "torch",
        "six",
        "a-b",
        "x.dist-info",
        "..",
        "",
        "__pycache__",
        "mod.py",
        "ext.cpython-311.so",
        "p.pyd",
        "f.pth",
        "lib",
    ]
)
line = st.builds(
    lambda parts, sep, tail: sep.join(parts) + tail,
    st.lists(segment, min_size=1, max_size=3),
    st.sampled_from(["/", "\\"]),
    st.sampled_from([",,", ",sha256=x,1", ",sha256=a/b+c,12", ""]),
)


@given(st.lists(line, max_size=30))
def test_same_names_as_the_line_by_line_reading(lines):
    text = "\n".join(lines)
    assert _top_level_from_record(text) == reference(text)
