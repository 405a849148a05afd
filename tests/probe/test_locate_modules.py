"""probe.interpreter.locate_module: several modules looked up at once list each sys.path
directory once (``listings``) and find exactly what one lookup at a time finds."""

from __future__ import annotations

from stackcheck.probe import interpreter


def test_shared_listings_find_what_single_lookups_find(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    (first / "pkg").mkdir(parents=True)
    (first / "pkg" / "__init__.py").write_text("")
    (first / "nsdir").mkdir()
    (first / "fast.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    (second / "pkg" / "sub").mkdir(parents=True)
    (second / "plain.py").write_text("")
    (second / "pkg" / "ext.abi3.so").write_bytes(b"")
    (second / "fast.py").write_text("")  # shadowed by first's extension module
    entries = [str(tmp_path / "missing"), str(first), str(second)]
    names = ["pkg", "nsdir", "fast", "plain", "pkg.ext", "pkg.sub", "absent", "sys"]
    one_by_one = {n: interpreter.locate_module(n, entries) for n in names}
    listings: dict = {}
    together = {n: interpreter.locate_module(n, entries, listings) for n in names}
    assert (
        together
        == one_by_one
        == {
            "pkg": str(first / "pkg" / "__init__.py"),
            "nsdir": str(first / "nsdir"),
            "fast": str(first / "fast.cpython-311-x86_64-linux-gnu.so"),
            "plain": str(second / "plain.py"),
            "pkg.ext": str(second / "pkg" / "ext.abi3.so"),
            "pkg.sub": str(second / "pkg" / "sub"),
            "absent": "",
            "sys": "built-in",
        }
    )
    # each directory listed once, a missing one as empty: the entries, and their pkg/ for pkg.*
    listed = [tmp_path / "missing", first, second]
    assert sorted(listings) == sorted(str(d) for d in listed + [d / "pkg" for d in listed])
    assert listings[str(tmp_path / "missing")] == listings[str(tmp_path / "missing" / "pkg")] == []
