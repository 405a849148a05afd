"""``checks.registry.module_names``: the check modules found with one directory listing each,
the names and the order ``pkgutil.iter_modules`` gives (issue 13: pkgutil's import was ≈ 0.5 ms
of a cold preflight), for any directory; a path that is not a directory is left to pkgutil."""

from __future__ import annotations

import os
import pkgutil
import tempfile
import zipfile

from hypothesis import given, settings
from hypothesis import strategies as st

import stackcheck.checks as checks
from stackcheck.checks.registry import module_names

ENTRIES = [
    "a.py", "b.py", "_private.py", "__init__.py", "c.pyc", "d.cpython-311-x86_64-linux-gnu.so",
    "e.abi3.so", "f.so", "g.txt", "x.y.py", "h.py", "README", ".hidden.py", "b.pyc",
]  # fmt: skip
PACKAGES = ["pkg", "b", "empty", "dotted.pkg", "__pycache__", "ns"]
INSIDE = [[], ["__init__.py"], ["__init__.pyc"], ["__init__.cpython-311-x86_64-linux-gnu.so"], ["mod.py"]]


def pkgutil_names(path: list[str]) -> list[str]:
    return [m.name for m in pkgutil.iter_modules(path)]


def test_the_check_modules_are_pkgutils():
    assert module_names(checks.__path__) == pkgutil_names(list(checks.__path__))
    assert "registry" in module_names(checks.__path__) and "deps" in module_names(checks.__path__)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sets(st.sampled_from(ENTRIES)), min_size=1, max_size=2),
    st.lists(st.tuples(st.sampled_from(PACKAGES), st.sampled_from(INSIDE)), max_size=4),
)
def test_any_directories_give_pkgutils_names_in_its_order(files, packages):
    with tempfile.TemporaryDirectory() as root:
        path = []
        for n, names in enumerate(files):
            where = os.path.join(root, str(n))
            os.mkdir(where)
            for name in names:
                open(os.path.join(where, name), "w").close()
            for package, inside in packages if n == 0 else []:
                if not os.path.exists(os.path.join(where, package)):
                    os.mkdir(os.path.join(where, package))
                    for name in inside:
                        open(os.path.join(where, package, name), "w").close()
            path.append(where)
        path.append(os.path.join(root, "missing"))
        assert module_names(path) == pkgutil_names(path)


def test_a_zip_on_the_path_is_left_to_pkgutil(tmp_path):
    archive = tmp_path / "checks.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("one.py", "")
        zf.writestr("two/__init__.py", "")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "three.py").write_text("")
    path = [str(archive), str(tmp_path / "dir")]
    assert module_names(path) == pkgutil_names(path) == ["one", "two", "three"]
