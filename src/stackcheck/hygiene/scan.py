"""One pass over a repository's files: each file is classified by its path, then read at
most once and only as far as needed (the first block decides text or binary; text is read
up to a bound; checkpoints are read as pickle opcodes)."""

from __future__ import annotations

import os
import re
import shlex
from collections import Counter

from stackcheck.errors import InputError
from stackcheck.hygiene import notebooks, pickles, secrets
from stackcheck.hygiene.files import TEXT_SNIFF, FileSet, is_binary, list_files
from stackcheck.hygiene.ignore import IgnoreLine, is_ignored, load
from stackcheck.hygiene.remote_code import call_name, unpinned_calls
from stackcheck.hygiene.rules import RULES, finding
from stackcheck.models.finding import CheckResult, Report, worst

IGNORE_FILE = ".stackcheck-ignore"
DEFAULT_MAX_WEIGHT_SIZE = 10 * 1024 * 1024
MAX_TEXT_BYTES = 4 * 1024 * 1024  # text read per file; secrets past this are not seen

WEIGHT_EXTENSIONS = {"safetensors", "bin", "pt", "pth", "ckpt", "gguf", "onnx", "h5", "msgpack"}
PICKLE_EXTENSIONS = {"pt", "pth", "bin", "ckpt", "pkl", "pickle"}
_HF_CACHE_DIR = re.compile(r"^(?:models|datasets|spaces)--[^/]+$")
_CACHE_DIRS = {"__pycache__", "torch_extensions", ".triton", "triton_cache"}
_BUILT_FILE = re.compile(r"\.(?:pyc|pyo|o|obj|pyd|dylib|so(?:\.\d+)*)$")

_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3,
          "kib": 1024, "mib": 1024**2, "gib": 1024**3}


def parse_size(text: str) -> int:
    """"10MiB", "500 MB", "2GiB", "1048576" → bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).lower() not in _UNITS:
        raise InputError(f"--max-weight-size: {text!r} is not a size (expected e.g. 10MiB, 500MB, 2GiB or bytes)")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def human_size(n: int) -> str:
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
    def __init__(self, fileset: FileSet, ignore: list[IgnoreLine], max_weight_size: int):
        self.fs, self.ignore, self.max_weight = fileset, ignore, max_weight_size
        self.found: list[CheckResult] = []
        self.ignored = 0
        self.dirs_reported: set[str] = set()
        self.big_weights: list[tuple[str, int]] = []
        self.truncated = 0

    def add(self, result: CheckResult, path: str, *, is_dir: bool = False) -> None:
        if is_ignored(self.ignore, result.id, path, is_dir=is_dir):
            self.ignored += 1
        else:
            self.found.append(result)

    def remove(self, path: str) -> str:
        """How to take ``path`` out: untrack it in git mode, delete it in a plain folder."""
        return f"git rm -r --cached {shlex.quote(path)}" if self.fs.mode == "git" else f"rm -r {shlex.quote(path)}"

    def git_rm(self, path: str, pattern: str) -> str:
        return f"{self.remove(path)} && echo {shlex.quote(pattern)} >> .gitignore"

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
                self.add(finding(rule, directory + "/", f"{what} {directory}/ is committed", self.git_rm(directory, pattern)), directory, is_dir=True)
        elif built := _BUILT_FILE.search(name):
            self.add(finding("HYG004", rel, f"built file {rel} ({human_size(st.st_size)})", self.git_rm(rel, "*" + built.group(0))), rel)
        if ext in WEIGHT_EXTENSIONS and st.st_size > self.max_weight and not (cached and cached[0] == "HYG003"):
            self.big_weights.append((rel, st.st_size))
        if ext in PICKLE_EXTENSIONS:
            self.pickle(rel, full, ext)
            return
        if ext in WEIGHT_EXTENSIONS:
            return
        self.text(rel, full, ext, st.st_size)

    def pickle(self, rel: str, full: str, ext: str) -> None:
        scan = pickles.scan_file(full, pickle_expected=ext in ("pkl", "pickle"))
        unsafe = scan.unsafe()
        if not unsafe and not scan.unresolved:
            return
        shown = [f"{m}.{n}" + (" (runs code)" if pickles.is_dangerous(m, n) else "") for m, n in unsafe]
        if scan.unresolved:
            shown.append(f"{scan.unresolved} import(s) computed at load time")
        observed = "unpickling imports " + ", ".join(shown[:8]) + (f" and {len(shown) - 8} more" if len(shown) > 8 else "")
        fix = (
            f"do not load it; {self.remove(rel)} and find out where it came from"
            if any(pickles.is_dangerous(m, n) for m, n in unsafe)
            else "re-save the tensors with safetensors.torch.save_file(model.state_dict(), ...) from a trusted copy; "
            f"or accept it with the line HYG006:{rel} in {IGNORE_FILE}"
        )
        evidence = {"imports": " ".join(f"{m}.{n}" for m, n in unsafe), "streams": str(scan.streams)}
        self.add(finding("HYG006", rel, observed, fix, evidence=evidence), rel)

    def text(self, rel: str, full: str, ext: str, size: int) -> None:
        try:
            with open(full, "rb") as fh:
                head = fh.read(TEXT_SNIFF)
                if is_binary(head):
                    return
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

    def secret(self, rel: str, s: secrets.Secret, where: str, evidence: dict[str, str], rule: str = "HYG001") -> None:
        fix = f"revoke the {s.kind} now, then remove it from {rel} and from the git history (git filter-repo --replace-text); read it from an environment variable instead"
        if rule == "HYG005":
            fix = f"revoke the {s.kind}, then clear the outputs: jupyter nbconvert --clear-output --inplace {shlex.quote(rel)}"
        self.add(finding(rule, rel, f"{s.kind} {s.masked}", fix, where=where, evidence={**evidence, "kind": s.kind, "masked": s.masked}), rel)

    def remote_code(self, rel: str, line: int, why: str, code: str, where: str, evidence: dict[str, str]) -> None:
        fix = 'add revision="<the commit sha you reviewed>" to the same call'
        self.add(finding("HYG007", rel, f"{code} ({why})", fix, where=where, evidence=evidence), rel)

    def notebook(self, rel: str, cells) -> None:
        for cell in cells:
            for s in secrets.find_secrets(cell.source):
                self.secret(rel, s, f"cell {cell.index} line {s.line}", {"cell": str(cell.index), "line": str(s.line)})
            for s in secrets.find_secrets(cell.outputs):
                self.secret(rel, s, f"cell {cell.index} output", {"cell": str(cell.index), "output": "true"}, rule="HYG005")
            if cell.kind == "code":
                source = notebooks.python_source(cell)
                for line, why in unpinned_calls(source):
                    where = f"cell {cell.index} line {line}"
                    self.remote_code(rel, line, why, call_name(source, line), where, {"cell": str(cell.index), "line": str(line)})

    def weights(self) -> None:
        lfs = _lfs_tracked(self.fs, [p for p, _ in self.big_weights]) if self.big_weights else set()
        for rel, size in self.big_weights:
            if rel in lfs:
                continue
            ext = rel.rsplit(".", 1)[-1]
            fix = (
                f"{self.remove(rel)}, then publish it on a model hub or track it with Git LFS "
                f"(git lfs track '*.{ext}'); or accept it with the line HYG002:{rel} in {IGNORE_FILE}"
            )
            observed = f"{human_size(size)} weight file (threshold {human_size(self.max_weight)})"
            self.add(finding("HYG002", rel, observed, fix, evidence={"bytes": str(size)}), rel)


def _lfs_tracked(fs: FileSet, paths: list[str]) -> set[str]:
    """Files that git stores as LFS pointers (filter=lfs), which are not bloat."""
    if fs.mode != "git":
        return set()
    from stackcheck.probe.proc import LARGE_OUTPUT_BYTES, run

    done = run(["git", "-C", fs.root, "check-attr", "filter", "--"] + paths, timeout=30.0,
               max_output=LARGE_OUTPUT_BYTES)
    return {line.split(": ")[0] for line in done.stdout.splitlines() if line.endswith(": filter: lfs")}


def scan(path: str = ".", *, max_weight_size: int = DEFAULT_MAX_WEIGHT_SIZE, ignore_file: str | None = None) -> Report:
    """Scan the repository (or folder) at ``path``: a Report of kind ``hygiene`` whose checks
    are the findings, plus one ``ok`` line for each rule that found nothing."""
    fileset = list_files(path)
    ignore_path = ignore_file or os.path.join(fileset.root, IGNORE_FILE)
    if ignore_file is None and not os.path.exists(ignore_path):
        ignore_path = None
    ignore = load(ignore_path) if ignore_path else []
    run = _Scan(fileset, ignore, max_weight_size)
    for rel in fileset.files:
        run.file(rel)
    run.weights()
    order = {"blocked": 0, "warning": 1}
    checks = sorted(run.found, key=lambda c: (order.get(c.verdict, 2), c.id, c.subject or ""))
    hit = Counter(c.id for c in checks)
    for rule in RULES.values():
        if not hit[rule.id]:
            checks.append(CheckResult(id=rule.id, title=rule.title, verdict="ok", observed=f"nothing found in {len(fileset.files)} files"))
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
    return Report(kind="hygiene", verdict=worst(c.verdict for c in checks), checks=checks, environment=environment)
