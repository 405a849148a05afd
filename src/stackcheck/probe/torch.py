"""torch's build facts without importing torch.

The default tier reads ``torch/version.py`` as text (``__version__``, ``cuda``, ``hip``,
``git_version`` are literal assignments there) — microseconds instead of the ~1.5 s an
``import torch`` costs. With ``--deep`` the *target* interpreter imports torch in a child
process with a timeout, for what only a live torch knows (``cuda.is_available()``, the
device count, the compiled arch list, cuDNN).
"""

from __future__ import annotations

import ast
import json
import os

from stackcheck.models.snapshot import TorchSection, normalize_name

DEEP_TIMEOUT_S = 60.0
_FIELDS = ("__version__", "cuda", "hip", "git_version")

# Run by the target interpreter: prints one JSON line, never raises.
_DEEP_SCRIPT = r"""
import json, sys
out = {}
try:
    import torch
    out["cuda_available"] = bool(torch.cuda.is_available())
    out["device_count"] = int(torch.cuda.device_count()) if out["cuda_available"] else 0
    out["arch_list"] = list(torch.cuda.get_arch_list()) if out["cuda_available"] else []
    v = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    out["cudnn_version"] = None if v is None else str(v)
except BaseException as exc:
    out["deep_error"] = "%s: %s" % (type(exc).__name__, exc)
sys.stdout.write("\n" + json.dumps(out) + "\n")
"""


def collect(ctx) -> TorchSection:
    location = torch_location(ctx.packages)
    if location is None:
        return TorchSection(status="absent", source="metadata", error="no torch distribution on sys.path")
    sec = read_version_file(os.path.join(location, "torch", "version.py"))
    sec.location = os.path.join(location, "torch")
    if ctx.deep and sec.status == "ok":
        deep_probe(sec, ctx.python.get("executable") or "")
    return sec


def torch_location(packages: dict) -> str | None:
    """The sys.path entry holding the importable (first, not shadowed) torch."""
    for dist in packages.get("distributions", []):
        if normalize_name(dist.get("name", "")) == "torch" and not dist.get("shadowed"):
            return dist.get("location") or None
    return None


def read_version_file(path: str) -> TorchSection:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(65536)
    except FileNotFoundError:
        return TorchSection(
            status="failed", source="torch/version.py", error=f"{path}: missing (broken torch install?)"
        )
    except OSError as exc:
        return TorchSection(
            status="failed", source="torch/version.py", error=f"{path}: cannot read: {exc.strerror or exc}"
        )
    values = parse_version_assignments(text)
    if "__version__" not in values or not isinstance(values["__version__"], str):
        return TorchSection(
            status="failed", source="torch/version.py", error=f"{path}: no literal __version__ assignment"
        )
    return TorchSection(
        status="ok",
        source="torch/version.py",
        version=values["__version__"],
        cuda=_str_or_none(values.get("cuda")),
        hip=_str_or_none(values.get("hip")),
        git_version=_str_or_none(values.get("git_version")) or "",
    )


def parse_version_assignments(text: str) -> dict:
    """Literal top-level assignments (plain or annotated) of the fields we want; anything
    else — calls, names, syntax errors — is ignored, never executed."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id in _FIELDS:
            try:
                out[target.id] = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
    return out


def deep_probe(sec: TorchSection, executable: str) -> None:
    """Fill the --deep fields by importing torch in the target interpreter (bounded)."""
    from stackcheck.probe.proc import run

    sec.deep = True
    if not executable:
        sec.deep_error = "no interpreter to run (python section lacks an executable)"
        return
    done = run([executable, "-c", _DEEP_SCRIPT], timeout=DEEP_TIMEOUT_S)
    last = done.stdout.strip().splitlines()[-1:] if done.stdout.strip() else []
    try:
        facts = json.loads(last[0]) if last else None
    except ValueError:
        facts = None
    if not isinstance(facts, dict):
        tail = (done.stderr.strip().splitlines() or [""])[-1]
        sec.deep_error = (
            done.error
            or f"`import torch` in {executable} printed no result (exit {done.returncode}): {tail}".rstrip(
                ": "
            )
        )
        return
    sec.cuda_available = facts.get("cuda_available")
    sec.device_count = facts.get("device_count")
    sec.arch_list = [str(a) for a in facts.get("arch_list") or []]
    sec.cudnn_version = facts.get("cudnn_version")
    sec.deep_error = facts.get("deep_error")


def _str_or_none(value) -> str | None:
    return value if isinstance(value, str) else None
