"""Mutation testing: how many deliberate one-line bugs the tests of a module catch.

For each module, every mutation site the AST offers becomes one mutant (a comparison
operator swapped, a `not` dropped, `and`/`or` swapped, `+`/`-` or `*`/`/` swapped, an integer
changed (0 <-> 1, n -> n + 1, n -> 0), a boolean flipped, a returned value replaced by None, a
statement replaced by `pass`). Each mutant is written into a temporary copy of the tree, and
only the tests mapped to that module run against it (`pytest -x`, no bytecode cache, the
copy's src/ first on PYTHONPATH). Printed per module: mutants, killed, survived, timeouts
(plus mutants that did not compile), and where the survivors are.

Why not mutmut: mutmut 3 (3.8.1 here) runs over this src layout, but it mutates only
undecorated functions and leaves module-level constants alone, so every `@check` function
(PKG003, GPU004, ...) and tables such as triage's ENVIRONMENT_POINTS would never be mutated.

Usage (niced by default; the machines are shared):
    python benchmarks/mutation.py src/stackcheck/checks/packages.py --max-mutants 40
    python benchmarks/mutation.py checks/hardware.py results/ledger.py --json out.json
    python benchmarks/mutation.py --list checks/packages.py      # the mutants, nothing run
With no module given: every module of checks/ and knowledge/, redaction.py, results/ledger.py
(missing files are skipped with a note).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TARGETS = ("checks", "knowledge", "redaction.py", "results/ledger.py")
# Tests that pin a module's behaviour; a module not listed gets its concern's test folder plus
# every test file that names the module.
TESTS = {
    "checks/packages.py": [
        "tests/core/test_profile_checks.py",
        "tests/core/test_pinned_checks.py",
        "tests/catalog/test_builtin.py",
    ],
    "checks/hardware.py": ["tests/core/test_profile_checks.py", "tests/core/test_pinned_checks.py"],
    "checks/compat.py": ["tests/knowledge/test_kb_compat_checks.py", "tests/core/test_pinned_checks.py"],
    "checks/isolation.py": ["tests/doctor/test_checks_pure.py"],
    "checks/knowledge_rules.py": ["tests/knowledge/test_kb_rule_checks.py"],
    "checks/": ["tests/core", "tests/doctor/test_checks_pure.py", "tests/knowledge/test_kb_rule_checks.py"],
    "knowledge/": ["tests/knowledge"],
    "results/": ["tests/results"],
    "redaction.py": ["tests/probe/test_probe_kernels_environ_git.py", "tests/probe/test_snapshot_cli.py"],
}
COPY_IGNORE = shutil.ignore_patterns(
    ".git",
    ".venv*",
    ".benchvenv",
    "__pycache__",
    ".hypothesis",
    ".pytest_cache",
    "mutants",
    "*.egg-info",
    "build",
    "dist",
    ".whl",
    ".gl",
)

_SWAP_COMPARE = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_SWAP_BINOP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}
_SWAP_BOOLOP = {ast.And: ast.Or, ast.Or: ast.And}
_DELETABLE = (
    ast.Expr,
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.If,
    ast.For,
    ast.Continue,
    ast.Break,
    ast.Raise,
)
# statements are deleted inside functions and their blocks only (a module-level deletion
# mostly breaks an import, which says nothing about the tests)
_BODIES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.For,
    ast.While,
    ast.If,
    ast.With,
    ast.Try,
    ast.ExceptHandler,
)


@dataclass
class Mutant:
    line: int
    col: int
    what: str  # e.g. "== -> !=", "drop not", "25 -> 0", "delete If"
    start: tuple[int, int]  # source span replaced (line, col), 1-based lines
    end: tuple[int, int]
    replacement: str
    status: str = ""  # killed | survived | timeout | incompetent
    seconds: float = 0.0


@dataclass
class ModuleResult:
    module: str
    tests: list[str]
    mutants: int = 0
    killed: int = 0
    survived: int = 0
    timeouts: int = 0
    incompetent: int = 0
    baseline_s: float = 0.0
    note: str = ""
    survivors: list[dict] = field(default_factory=list)


# ------------------------------------------------------------------ finding mutation sites
def _untouchable(tree: ast.AST) -> set[int]:
    """ids of nodes never mutated: decorators (check IDs, titles), annotations, f-string parts."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            roots += node.decorator_list
            roots += [node.returns] if getattr(node, "returns", None) else []
        elif isinstance(node, (ast.AnnAssign, ast.arg)) and node.annotation is not None:
            roots.append(node.annotation)
        elif isinstance(node, ast.JoinedStr):
            roots.append(node)
    return {id(n) for root in roots for n in ast.walk(root)}


def _is_docstring(stmt: ast.stmt, parent: ast.AST | None) -> bool:
    body = getattr(parent, "body", None)
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
        and isinstance(body, list)
        and body
        and body[0] is stmt
    )


def _expression_mutants(node: ast.AST) -> list[tuple[str, ast.AST]]:
    """(description, mutated copy of ``node``) for an expression node."""
    out: list[tuple[str, ast.AST]] = []
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            swap = _SWAP_COMPARE.get(type(op))
            if swap:
                new = ast.Compare(
                    left=node.left,
                    ops=[*node.ops[:i], swap(), *node.ops[i + 1 :]],
                    comparators=node.comparators,
                )
                out.append((f"{_op_text(op)} -> {_op_text(swap())}", new))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        out.append(("drop not", node.operand))
    elif isinstance(node, ast.BoolOp):
        swap = _SWAP_BOOLOP[type(node.op)]
        out.append((f"{_op_text(node.op)} -> {_op_text(swap())}", ast.BoolOp(op=swap(), values=node.values)))
    elif isinstance(node, ast.BinOp) and type(node.op) in _SWAP_BINOP:
        swap = _SWAP_BINOP[type(node.op)]
        out.append(
            (
                f"{_op_text(node.op)} -> {_op_text(swap())}",
                ast.BinOp(left=node.left, op=swap(), right=node.right),
            )
        )
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        out.append((f"{node.value} -> {not node.value}", ast.Constant(not node.value)))
    elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        v = node.value
        targets = [1] if v == 0 else [0] if v == 1 else [v + 1, 0]
        out += [(f"{v!r} -> {t!r}", ast.Constant(type(v)(t))) for t in targets]
    return out


def _op_text(op: ast.AST) -> str:
    return {
        ast.Eq: "==",
        ast.NotEq: "!=",
        ast.Lt: "<",
        ast.LtE: "<=",
        ast.Gt: ">",
        ast.GtE: ">=",
        ast.In: "in",
        ast.NotIn: "not in",
        ast.Is: "is",
        ast.IsNot: "is not",
        ast.Add: "+",
        ast.Sub: "-",
        ast.Mult: "*",
        ast.Div: "/",
        ast.And: "and",
        ast.Or: "or",
    }[type(op)]


def _padded(text: str, lines: int, expression: bool) -> str:
    """``text`` spread over ``lines`` lines, so the lines after it keep their numbers; an
    expression in parentheses, so it binds in its place as the node it replaces did."""
    newlines = "\n" * (lines - 1)
    return f"({text}{newlines})" if expression else text + newlines


def find_mutants(source: str) -> list[Mutant]:
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    untouchable = _untouchable(tree)
    found: list[Mutant] = []
    for node in ast.walk(tree):
        if not hasattr(node, "end_lineno") or id(node) in untouchable:
            continue
        parent = parents.get(node)
        span = ((node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset))
        lines = node.end_lineno - node.lineno + 1
        if isinstance(node, ast.expr):
            for what, new in _expression_mutants(node):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(parent, ast.UnaryOp)
                    and isinstance(parent.op, ast.USub)
                ):
                    what = f"-{what.replace(' -> ', ' -> -')}"  # -25 -> -26 reads better than 25 -> 26
                found.append(
                    Mutant(node.lineno, node.col_offset, what, *span, _padded(ast.unparse(new), lines, True))
                )
        elif (
            isinstance(node, ast.Return)
            and node.value is not None
            and not (isinstance(node.value, ast.Constant) and node.value.value is None)
        ):
            found.append(
                Mutant(
                    node.lineno, node.col_offset, "return None", *span, _padded("return None", lines, False)
                )
            )
        if isinstance(node, _DELETABLE) and isinstance(parent, _BODIES) and not _is_docstring(node, parent):
            found.append(
                Mutant(
                    node.lineno,
                    node.col_offset,
                    f"delete {type(node).__name__}",
                    *span,
                    _padded("pass", lines, False),
                )
            )
    found.sort(key=lambda m: (m.line, m.col, m.what))
    return found


def apply(source: str, m: Mutant) -> str:
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def pos(line: int, col: int) -> int:  # ast columns are UTF-8 byte offsets
        text = lines[line - 1]
        return offsets[line - 1] + len(text.encode()[:col].decode(errors="ignore"))

    return source[: pos(*m.start)] + m.replacement + source[pos(*m.end) :]


def sample(mutants: list[Mutant], limit: int | None) -> list[Mutant]:
    """At most ``limit`` mutants, spread evenly over the module (deterministic)."""
    if not limit or len(mutants) <= limit:
        return mutants
    return [mutants[(i * len(mutants)) // limit] for i in range(limit)]


# ------------------------------------------------------------------ modules and their tests
def resolve_targets(names: list[str]) -> tuple[list[Path], list[str]]:
    """Module files (relative to src/stackcheck) for the names given; notes for the missing."""
    base = ROOT / "src" / "stackcheck"
    files: list[Path] = []
    notes: list[str] = []
    for name in names:
        text = (
            name.replace("stackcheck.", "", 1).replace(".", "/")
            if not name.endswith(".py") and "/" not in name
            else name
        )
        text = text.split("src/stackcheck/", 1)[-1]
        path = base / text
        if path.is_dir():
            files += sorted(p for p in path.glob("*.py") if p.name != "__init__.py")
        elif path.with_suffix(".py").is_file() and not path.is_file():
            files.append(path.with_suffix(".py"))
        elif path.is_file():
            files.append(path)
        else:
            notes.append(f"skipped {name}: no such module under src/stackcheck")
    return [f.relative_to(base) for f in dict.fromkeys(files)], notes


def tests_for(rel: Path) -> list[str]:
    key = rel.as_posix()
    if key in TESTS:
        return TESTS[key]
    prefix = f"{rel.parent.as_posix()}/"
    chosen = list(TESTS.get(prefix, []))
    folder = ROOT / "tests" / rel.parent.as_posix()
    if not chosen and rel.parent.as_posix() != "." and folder.is_dir():
        chosen.append(f"tests/{rel.parent.as_posix()}")
    dotted = "stackcheck." + ".".join(rel.with_suffix("").parts)
    parent_pkg, _, leaf = dotted.rpartition(".")
    for test in sorted((ROOT / "tests").rglob("test_*.py")):
        text = test.read_text(encoding="utf-8", errors="replace")
        if dotted in text or f"from {parent_pkg} import {leaf}" in text:
            relative = test.relative_to(ROOT).as_posix()
            if not any(relative.startswith(c.rstrip("/") + "/") or relative == c for c in chosen):
                chosen.append(relative)
    return chosen


# ------------------------------------------------------------------ running
def shared_dir() -> str | None:
    for folder in ROOT.parents:
        if (folder / "shared").is_dir():
            return str(folder / "shared")
    return None


def run_tests(tree: Path, python: str, tests: list[str], timeout: float, env: dict) -> tuple[str, float]:
    cmd = [
        python,
        "-m",
        "pytest",
        "-x",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "-p",
        "no:randomly",
        *tests,
    ]
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return "timeout", time.monotonic() - start
    elapsed = time.monotonic() - start
    # 1: a test failed; 2: collection failed (the mutant broke an import); 3: internal error
    return (
        "survived" if code == 0 else "killed" if code in (1, 2, 3) else f"error (pytest exit {code})"
    ), elapsed


def mutate_module(tree: Path, rel: Path, args, env: dict) -> ModuleResult:
    tests = args.tests or tests_for(rel)
    result = ModuleResult(module=f"src/stackcheck/{rel.as_posix()}", tests=tests)
    target = tree / "src" / "stackcheck" / rel
    original = target.read_text(encoding="utf-8")
    mutants = sample(find_mutants(original), args.max_mutants)
    if args.list:
        for m in mutants:
            print(f"  {result.module}:{m.line}:{m.col + 1}: {m.what}")
        result.mutants = len(mutants)
        return result
    if not tests:
        result.note = "no tests mapped to this module"
        return result
    status, baseline = run_tests(tree, args.python, tests, args.baseline_timeout, env)
    result.baseline_s = round(baseline, 2)
    if status != "survived":
        result.note = f"the tests fail on the unmutated tree ({status}); nothing to measure"
        return result
    timeout = max(args.min_timeout, baseline * args.timeout_factor)
    try:
        for i, m in enumerate(mutants, 1):
            mutated = apply(original, m)
            try:
                compile(mutated, str(target), "exec")
            except SyntaxError:
                m.status = "incompetent"
            else:
                target.write_text(mutated, encoding="utf-8")
                m.status, m.seconds = run_tests(tree, args.python, tests, timeout, env)
            if args.verbose:
                print(
                    f"    [{i}/{len(mutants)}] {m.status:9} {rel.as_posix()}:{m.line}: {m.what}", flush=True
                )
    finally:
        target.write_text(original, encoding="utf-8")
    result.mutants = len(mutants)
    for m in mutants:
        if m.status == "killed":
            result.killed += 1
        elif m.status == "survived":
            result.survived += 1
            result.survivors.append(
                {
                    "line": m.line,
                    "col": m.col + 1,
                    "what": m.what,
                    "code": original.splitlines()[m.line - 1].strip(),
                }
            )
        elif m.status == "timeout":
            result.timeouts += 1
        else:
            result.incompetent += 1
    return result


def print_result(r: ModuleResult) -> None:
    head = f"{r.module}: {r.mutants} mutants, {r.killed} killed, {r.survived} survived, {r.timeouts} timeouts"
    if r.incompetent:
        head += f", {r.incompetent} not run (did not compile / pytest error)"
    print(
        head + (f"  [{r.note}]" if r.note else f"  (tests: {' '.join(r.tests)}; baseline {r.baseline_s} s)")
    )
    for s in r.survivors:
        print(f"  survived {r.module}:{s['line']}:{s['col']}: {s['what']:<16} | {s['code'][:90]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[1:]),
    )
    ap.add_argument(
        "modules",
        nargs="*",
        help="modules: src/stackcheck/checks/packages.py, checks/packages.py, "
        "stackcheck.checks.packages or a package folder (checks)",
    )
    ap.add_argument("--max-mutants", type=int, default=None, help="per module, spread evenly (default: all)")
    ap.add_argument("--tests", nargs="+", default=None, help="test paths to run instead of the mapped ones")
    ap.add_argument(
        "--python", default=sys.executable, help="interpreter that runs pytest (default: this one)"
    )
    ap.add_argument(
        "--timeout-factor", type=float, default=5.0, help="a mutant's tests may take this many baselines"
    )
    ap.add_argument("--min-timeout", type=float, default=20.0)
    ap.add_argument("--baseline-timeout", type=float, default=600.0)
    ap.add_argument("--nice", type=int, default=10, help="niceness increment for this run (0: none)")
    ap.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    ap.add_argument("--keep", action="store_true", help="keep the temporary tree")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per mutant as it runs")
    args = ap.parse_args(argv)
    if args.nice:
        os.nice(args.nice)

    modules, notes = resolve_targets(args.modules or list(DEFAULT_TARGETS))
    for note in notes:
        print(note)
    tmp = Path(tempfile.mkdtemp(prefix="stackcheck-mutation-"))
    tree = tmp / "tree"
    results: list[ModuleResult] = []
    try:
        shutil.copytree(ROOT, tree, ignore=COPY_IGNORE, symlinks=True)
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(tree / "src"), str(tree)]),
            "PYTHONDONTWRITEBYTECODE": "1",
            "HYPOTHESIS_PROFILE": "ci",
        }
        if shared_dir() and "STACKCHECK_SHARED_DIR" not in env:
            env["STACKCHECK_SHARED_DIR"] = shared_dir()
        for rel in modules:
            r = mutate_module(tree, rel, args, env)
            results.append(r)
            if not args.list:
                print_result(r)
    finally:
        if args.keep:
            print(f"tree kept at {tree}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if not args.list:
        total = {
            k: sum(getattr(r, k) for r in results) for k in ("mutants", "killed", "survived", "timeouts")
        }
        print(
            f"total: {total['mutants']} mutants, {total['killed']} killed, {total['survived']} "
            f"survived, {total['timeouts']} timeouts"
        )
    if args.json:
        Path(args.json).write_text(
            json.dumps([asdict(r) for r in results], indent=1) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
