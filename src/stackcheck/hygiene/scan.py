"""One pass over a repository's files: each file is classified by its path, then read at
most once and only as far as needed (the first block decides text or binary, and whether it
is a pickle or a container of one, whatever its name; text is read up to a bound; pickles are
read as opcodes)."""

from __future__ import annotations

import os
import re
from collections import Counter

from stackcheck.checks.report import build_report
from stackcheck.errors import InputError
from stackcheck.hygiene import notebooks, pickles, secrets
from stackcheck.hygiene.files import TEXT_SNIFF, FileSet, is_binary, list_files
from stackcheck.hygiene.ignore import IgnoreRules, is_ignored, load
from stackcheck.hygiene.remote_code import call_name, unpinned_calls
from stackcheck.hygiene.rules import RULES, finding
from stackcheck.models.finding import CheckResult, Report
from stackcheck.shellcmd import chain, code, command

IGNORE_FILE = ".stackcheck-ignore"
DEFAULT_MAX_WEIGHT_SIZE = 10 * 1024 * 1024
MAX_TEXT_BYTES = 4 * 1024 * 1024  # text read per file; secrets past this are not seen

WEIGHT_EXTENSIONS = {"safetensors", "bin", "pt", "pth", "ckpt", "gguf", "onnx", "h5", "msgpack"}
# Always read as (possible) pickles and never as text; any other file is a pickle when its
# first bytes say so (pickles.sniff).
PICKLE_EXTENSIONS = {"pt", "pth", "bin", "ckpt", "pkl", "pickle", "joblib", "sav", "npy", "npz"}
_HF_CACHE_DIR = re.compile(r"^(?:models|datasets|spaces)--[^/]+$")
_CACHE_DIRS = {"__pycache__", "torch_extensions", ".triton", "triton_cache"}
_BUILT_FILE = re.compile(r"\.(?:pyc|pyo|o|obj|pyd|dylib|so(?:\.\d+)*)$")

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
}


def parse_size(text: str) -> int:
    """ "10MiB", "500 MB", "2GiB", "1048576" → bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).lower() not in _UNITS:
        raise InputError(
            f"--max-weight-size: {text!r} is not a size (expected e.g. 10MiB, 500MB, 2GiB or bytes)"
        )
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def human_size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _cache_dir(parts: list[str]) -> tuple[str, str] | None:
    """(rule, directory) when a path lies in a Hugging Face or compile cache directory."""
    for i, part in enumerate(parts[:-1]):
        if _HF_CACHE_DIR.match(part) or (part == "huggingface" and i and parts[i - 1] == ".cache"):
            return "HYG003", "/".join(parts[: i + 1])
        if part in _CACHE_DIRS or part.endswith(".egg-info"):
            return "HYG004", "/".join(parts[: i + 1])
    return None


class _Scan:
    def __init__(self, fileset: FileSet, ignore: IgnoreRules | list, max_weight_size: int):
        self.fs, self.ignore, self.max_weight = fileset, ignore, max_weight_size
        self.found: list[CheckResult] = []
        self.ignored = 0
        self.dirs_reported: set[str] = set()
        self.big_weights: list[tuple[str, int]] = []
        self.truncated = 0
        self.pickle_files = 0
        self.pickle_budget = pickles.RunBudget()

    def add(self, result: CheckResult, path: str, *, is_dir: bool = False) -> None:
        if is_ignored(self.ignore, result.id, path, is_dir=is_dir):
            self.ignored += 1
        else:
            self.found.append(result)

    def remove(self, path: str) -> str:
        """How to take ``path`` out: untrack it in git mode, delete it in a plain folder."""
        if self.fs.mode == "git":
            return command("git", "rm", "-r", "--cached", "--", path)
        return command("rm", "-r", "--", path)

    def git_rm(self, path: str, pattern: str) -> str:
        return chain(self.remove(path), command("echo", pattern) + " >> .gitignore")

    def file(self, rel: str) -> None:
        full = os.path.join(self.fs.root, rel)
        try:
            st = os.lstat(full)
        except OSError:
            return  # tracked but deleted in the work tree
        if not os.path.isfile(full) or os.path.islink(full):
            return  # submodules, symlinks
        parts = rel.split("/")
        name = parts[-1]
        ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
        cached = _cache_dir(parts)
        if cached:
            rule, directory = cached
            if directory not in self.dirs_reported:
                self.dirs_reported.add(directory)
                what = "Hugging Face hub cache" if rule == "HYG003" else "cache / build directory"
                pattern = directory.rsplit("/", 1)[-1] + "/"
                self.add(
                    finding(
                        rule,
                        directory + "/",
                        f"{what} {directory}/ is committed",
                        self.git_rm(directory, pattern),
                    ),
                    directory,
                    is_dir=True,
                )
        elif built := _BUILT_FILE.search(name):
            self.add(
                finding(
                    "HYG004",
                    rel,
                    f"built file {rel} ({human_size(st.st_size)})",
                    self.git_rm(rel, "*" + built.group(0)),
                ),
                rel,
            )
        if (
            ext in WEIGHT_EXTENSIONS
            and st.st_size > self.max_weight
            and not (cached and cached[0] == "HYG003")
        ):
            self.big_weights.append((rel, st.st_size))
        try:
            with open(full, "rb") as fh:
                head = fh.read(TEXT_SNIFF)
        except OSError:
            return
        if ext in PICKLE_EXTENSIONS or pickles.sniff(head, more=st.st_size > len(head)):
            self.pickle(rel, full)
        if ext in PICKLE_EXTENSIONS or ext in WEIGHT_EXTENSIONS:
            return
        self.text(rel, full, ext, st.st_size, head)

    def pickle(self, rel: str, full: str) -> None:
        scan = pickles.scan_file(full, pickle_expected=pickles.expected_by_name(rel), run=self.pickle_budget)
        self.pickle_files += bool(scan.found_in)
        unsafe = scan.unsafe()
        if not unsafe and not scan.unresolved:
            if scan.limit or scan.error:
                self.unread_pickle(rel, scan)
            return
        shown = [f"{m}.{n}" + (" (runs code)" if pickles.is_dangerous(m, n) else "") for m, n in unsafe]
        if scan.unresolved:
            shown.append(f"{scan.unresolved} import(s) computed at load time")
        observed = (
            "unpickling imports "
            + ", ".join(shown[:8])
            + (f" and {len(shown) - 8} more" if len(shown) > 8 else "")
        )
        inside = [f for f in scan.found_in if " > " in f]
        observed += f" (in {', '.join(inside)})" if inside else ""
        observed += "".join(f"; {note}" for note in _pickle_notes(scan))
        fix = (
            f"do not load it: take it out with {code(self.remove(rel))} and find out where it came from"
            if any(pickles.is_dangerous(m, n) for m, n in unsafe)
            else "re-save the tensors with safetensors.torch.save_file(model.state_dict(), ...) from "
            "a trusted copy; "
            f"or accept it with the line HYG006:{rel} in {IGNORE_FILE}"
        )
        evidence = {"imports": " ".join(f"{m}.{n}" for m, n in unsafe), "streams": str(scan.streams)}
        evidence.update(_pickle_evidence(scan))
        self.add(finding("HYG006", rel, observed, fix, evidence=evidence), rel)

    def unread_pickle(self, rel: str, scan: pickles.PickleScan) -> None:
        """A pickle with nothing unsafe in what was read, but not read to its end: past a scan
        limit (blocked: what loading it runs there is unknown), or broken off / corrupt
        (warning: the unpickler stops at the same byte, after what was checked)."""
        observed = "; ".join(_pickle_notes(scan))
        if scan.limit:
            fix = (
                "do not load it until it is checked; re-save the data in a format that runs no code on load "
                "(safetensors, np.save without objects), "
                f"or accept it with the line HYG006:{rel} in {IGNORE_FILE}"
            )
            self.add(finding("HYG006", rel, observed, fix, evidence=_pickle_evidence(scan)), rel)
            return
        fix = "loading it fails where it breaks; replace it with a complete copy from its source, "
        fix += f"or {self.remove(rel)}"
        evidence = _pickle_evidence(scan)
        self.add(finding("HYG006", rel, observed, fix, verdict="warning", evidence=evidence), rel)

    def text(self, rel: str, full: str, ext: str, size: int, head: bytes) -> None:
        if is_binary(head):
            return
        data = head
        if len(head) == TEXT_SNIFF:
            try:
                with open(full, "rb") as fh:
                    fh.seek(len(head))
                    data = head + fh.read(MAX_TEXT_BYTES - len(head))
            except OSError:
                return
        if size > MAX_TEXT_BYTES:
            self.truncated += 1
        text = data.decode("utf-8", errors="replace")
        if ext == "ipynb":
            nb = notebooks.cells(text)
            if nb is not None:
                self.notebook(rel, nb)
                return
        for s in secrets.find_secrets(text, filename=rel):
            self.secret(rel, s, f"line {s.line}", {"line": str(s.line)})
        if ext == "py":
            for line, why in unpinned_calls(text):
                self.remote_code(rel, line, why, call_name(text, line), f"line {line}", {"line": str(line)})

    def secret(
        self, rel: str, s: secrets.Secret, where: str, evidence: dict[str, str], rule: str = "HYG001"
    ) -> None:
        fix = (
            f"revoke the {s.kind} now, then remove it from {rel} and from the git history "
            f"({code(command('git', 'filter-repo', '--replace-text', 'EXPRESSIONS.txt'))}); "
            "read it from an environment variable instead"
        )
        if rule == "HYG005":
            notebook = f"./{rel}" if rel.startswith("-") else rel  # a path, never an option
            clear = command("jupyter", "nbconvert", "--clear-output", "--inplace", notebook)
            fix = f"revoke the {s.kind}, then clear the outputs: {clear}"
        self.add(
            finding(
                rule,
                rel,
                f"{s.kind} {s.masked}",
                fix,
                where=where,
                evidence={**evidence, "kind": s.kind, "masked": s.masked},
            ),
            rel,
        )

    def remote_code(
        self, rel: str, line: int, why: str, code: str, where: str, evidence: dict[str, str]
    ) -> None:
        fix = 'add revision="<the commit sha you reviewed>" to the same call'
        self.add(finding("HYG007", rel, f"{code} ({why})", fix, where=where, evidence=evidence), rel)

    def notebook(self, rel: str, cells) -> None:
        for cell in cells:
            for s in secrets.find_secrets(cell.source):
                self.secret(
                    rel, s, f"cell {cell.index} line {s.line}", {"cell": str(cell.index), "line": str(s.line)}
                )
            for s in secrets.find_secrets(cell.outputs):
                self.secret(
                    rel,
                    s,
                    f"cell {cell.index} output",
                    {"cell": str(cell.index), "output": "true"},
                    rule="HYG005",
                )
            if cell.kind == "code":
                source = notebooks.python_source(cell)
                for line, why in unpinned_calls(source):
                    where = f"cell {cell.index} line {line}"
                    self.remote_code(
                        rel,
                        line,
                        why,
                        call_name(source, line),
                        where,
                        {"cell": str(cell.index), "line": str(line)},
                    )

    def weights(self) -> None:
        lfs = _lfs_tracked(self.fs, [p for p, _ in self.big_weights]) if self.big_weights else set()
        for rel, size in self.big_weights:
            if rel in lfs:
                continue
            ext = rel.rsplit(".", 1)[-1]
            fix = (
                f"take it out with {code(self.remove(rel))}, then publish it on a model hub or track it with "
                f"Git LFS ({code(command('git', 'lfs', 'track', f'*.{ext}'))}); "
                f"or accept it with the line HYG002:{rel} in {IGNORE_FILE}"
            )
            observed = f"{human_size(size)} weight file (threshold {human_size(self.max_weight)})"
            self.add(finding("HYG002", rel, observed, fix, evidence={"bytes": str(size)}), rel)


def _pickle_notes(scan: pickles.PickleScan) -> list[str]:
    notes = [f"not checked past a scan limit ({scan.limit})"] if scan.limit else []
    return notes + ([f"unreadable pickle ({scan.error})"] if scan.error else [])


def _pickle_evidence(scan: pickles.PickleScan) -> dict[str, str]:
    ev = {"found_in": ", ".join(scan.found_in), "limit": scan.limit or "", "error": scan.error or ""}
    return {k: v for k, v in ev.items() if v}


def _lfs_tracked(fs: FileSet, paths: list[str]) -> set[str]:
    """Files that git stores as LFS pointers (filter=lfs), which are not bloat."""
    if fs.mode != "git":
        return set()
    from stackcheck.probe.proc import LARGE_OUTPUT_BYTES, run

    done = run(
        ["git", "-C", fs.root, "check-attr", "filter", "--"] + paths,
        timeout=30.0,
        max_output=LARGE_OUTPUT_BYTES,
    )
    return {line.split(": ")[0] for line in done.stdout.splitlines() if line.endswith(": filter: lfs")}


def scan(
    path: str = ".", *, max_weight_size: int = DEFAULT_MAX_WEIGHT_SIZE, ignore_file: str | None = None
) -> Report:
    """Scan the repository (or folder) at ``path``: a Report of kind ``hygiene`` whose checks
    are the findings, plus one ``ok`` line for each rule that found nothing."""
    fileset = list_files(path)
    ignore_path = ignore_file or os.path.join(fileset.root, IGNORE_FILE)
    if ignore_file is None and not os.path.exists(ignore_path):
        ignore_path = None
    ignore: IgnoreRules | list = load(ignore_path) if ignore_path else []
    run = _Scan(fileset, ignore, max_weight_size)
    for rel in fileset.files:
        run.file(rel)
    run.weights()
    order = {"blocked": 0, "warning": 1}
    checks = sorted(run.found, key=lambda c: (order.get(c.verdict, 2), c.id, c.subject or ""))
    hit = Counter(c.id for c in checks)
    for rule in RULES.values():
        if not hit[rule.id]:
            checks.append(
                CheckResult(
                    id=rule.id,
                    title=rule.title,
                    verdict="ok",
                    observed=f"nothing found in {len(fileset.files)} files",
                )
            )
    environment = {
        "root": fileset.root,
        "mode": fileset.mode,
        "files": str(len(fileset.files)),
        "ignored": str(run.ignored),
        "max_weight_size": str(max_weight_size),
    }
    if ignore_path:
        environment["ignore_file"] = ignore_path
    if run.truncated:
        environment["text_truncated_files"] = str(run.truncated)
    environment["pickle_files"] = str(run.pickle_files)
    return build_report("hygiene", checks, environment=environment)
