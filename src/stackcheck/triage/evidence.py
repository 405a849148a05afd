"""What a match means in this environment: interpreters for a signature's named groups.

Named groups are the contract between rule data and code. A rule that captures ``module``
gets the interpreter comparison, one that captures ``library`` gets the CUDA-runtime
comparison, ``tried``/``total``/``free`` get the OOM arithmetic, ``shm`` the shared-memory
fact. Groups no interpreter consumes are shown verbatim as evidence.

Every pattern here runs over text from the input, so all are RE2 (linear time): with Python's
``re`` a 2.4 MB log of ``////…`` lines took minutes in the site-packages search alone.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

from stackcheck.models.snapshot import Snapshot
from stackcheck.shellcmd import code, command

AGREES, UNKNOWN, CONTRADICTS = 1, 0, -1


@dataclass
class Reading:
    """Evidence, extra fixes and the environment's verdict that interpreters add to a match."""

    evidence: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    agreement: int = UNKNOWN
    consumed: set[str] = field(default_factory=set)
    culprit: str = ""  # what the text names as at fault (set by an interpreter, else from CULPRIT_GROUPS)

    def agree(self, why: str) -> None:
        self.evidence.append(why)
        self.agreement = max(self.agreement, AGREES) if self.agreement != CONTRADICTS else CONTRADICTS

    def contradict(self, why: str) -> None:
        self.evidence.append(why)
        self.agreement = CONTRADICTS


Interpreter = Callable[[dict[str, str], str, "Snapshot | None", Reading], None]
_INTERPRETERS: list[tuple[frozenset[str], Interpreter]] = []
HIDDEN_GROUPS = {"detail"}  # captured for interpreters only
# groups that name the culprit when no interpreter did, most telling first
CULPRIT_GROUPS = ("culprit", "package", "module", "library")


def interprets(*groups: str) -> Callable[[Interpreter], Interpreter]:
    """Register an interpreter for matches that captured any of ``groups``."""

    def register(fn: Interpreter) -> Interpreter:
        _INTERPRETERS.append((frozenset(groups), fn))
        return fn

    return register


def read(groups: dict[str, str], region: str, snapshot: Snapshot | None) -> Reading:
    reading = Reading()
    for wanted, fn in _INTERPRETERS:
        if wanted & groups.keys():
            fn(groups, region, snapshot, reading)
            reading.consumed |= wanted
    for name, value in groups.items():
        if name not in reading.consumed and name not in HIDDEN_GROUPS:
            reading.evidence.insert(0, f"{name.replace('_', ' ')}: {value}")
    if not reading.culprit:
        reading.culprit = next((groups[g] for g in CULPRIT_GROUPS if groups.get(g)), "")
    return reading


# ----- sizes ---------------------------------------------------------------------------

_UNITS = {
    "B": 1,
    "bytes": 1,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
}


def parse_size(text: str | None) -> int | None:
    """'13.1 GiB' → bytes (None when absent or unreadable)."""
    if not text:
        return None
    number, _, unit = text.strip().partition(" ")
    try:
        return int(float(number) * _UNITS.get(unit, 1))
    except ValueError:
        return None


def human(n: int | float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return str(n)


# ----- CUDA out of memory ----------------------------------------------------------------

_IN_USE = r"this process has (?P<v>[\d.]+ (?:[KMGT]iB|bytes)) memory in use"
_BY_TORCH = r"Of the allocated memory (?P<v>[\d.]+ (?:[KMGT]iB|bytes)) is allocated by PyTorch"
_UNALLOCATED = r"(?P<v>[\d.]+ (?:[KMGT]iB|bytes)) is reserved by PyTorch but unallocated"


@cache
def _re2(pattern: str):
    """``pattern`` compiled with RE2: linear in the text, whatever the text."""
    import re2

    return re2.compile(pattern)


def _grab(pattern: str, text: str) -> int | None:
    m = _re2(pattern).search(text)
    return parse_size(m.group("v")) if m else None


@interprets("tried", "total", "free", "allocated", "reserved", "cached", "detail", "gpu")
def _oom(groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading) -> None:
    tried, total, free = (parse_size(groups.get(k)) for k in ("tried", "total", "free"))
    detail = groups.get("detail", "")
    by_torch = parse_size(groups.get("allocated")) or _grab(_BY_TORCH, detail)
    reserved = parse_size(groups.get("reserved") or groups.get("cached"))
    in_use = _grab(_IN_USE, detail)
    unallocated = _grab(_UNALLOCATED, detail)
    if unallocated is None and reserved is not None and by_torch is not None:
        unallocated = max(reserved - by_torch, 0)
    gpu = groups.get("gpu", "?")
    if tried is None or total is None:
        return
    parts = [f"tried to allocate {human(tried)} on GPU {gpu} with {human(total)} total"]
    if free is not None:
        parts.append(f"{human(free)} free")
    if by_torch is not None:
        parts.append(f"{human(by_torch)} allocated by PyTorch")
    if unallocated is not None:
        parts.append(f"{human(unallocated)} reserved but unallocated")
    reading.evidence.append("; ".join(parts))
    if tried > total:
        reading.evidence.append(
            "the single request is larger than the whole GPU: no allocator setting can help"
        )
        reading.fixes.append(
            "Shrink what is allocated at once (batch size, sequence length, image size) "
            "or shard the model across GPUs."
        )
    elif unallocated is not None and (unallocated >= tried or unallocated >= total // 5):
        reading.evidence.append(
            f"{human(unallocated)} is reserved but unallocated: fragmentation adds to the demand"
        )
        reading.fixes.append(
            "Set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` "
            "before the process starts (fragmentation)."
        )
    if in_use is not None and free is not None and total - free - in_use > max(total // 20, 256 * 2**20):
        others = total - free - in_use
        reading.evidence.append(f"{human(others)} of the GPU is used by other processes")
        reading.fixes.append(
            "Other processes hold GPU memory; find them with `nvidia-smi` and stop them, or use another GPU."
        )
    if snapshot is not None and snapshot.visible_gpus():
        sizes = [g.memory_total_bytes for g in snapshot.visible_gpus() if g.memory_total_bytes]
        if sizes and all(abs(s - total) > 0.1 * s for s in sizes):
            reading.evidence.append(
                f"the environment's GPUs have {', '.join(human(s) for s in sorted(set(sizes)))}, "
                f"not {human(total)}: "
                "the error came from another machine or a MIG slice"
            )


# ----- ModuleNotFoundError ---------------------------------------------------------------

_SITE_TAIL = r"[/\\](?:lib|Lib)(?:[/\\]python\d+\.\d+)?[/\\](?:site|dist)-packages[/\\]"
# a frame's path: quoted ('File "C:\Program Files\…"') or bare (Jupyter: 'File /opt/conda/…',
# after the start or a character that cannot end a word or open a quote)
_SITES = (
    r'"(?P<prefix>[^"\n]+?)' + _SITE_TAIL,
    r"(?:^|[^\w\"'])(?P<prefix>(?:/|~|[A-Za-z]:\\)[^\s\"']*?)" + _SITE_TAIL,
)


@lru_cache(maxsize=1)
def _import_names() -> dict[str, str]:
    data = json.loads((Path(__file__).with_name("import_names.json")).read_text(encoding="utf-8"))
    return data["names"]


def distribution_for(module: str, snapshot: Snapshot | None) -> tuple[str, str | None]:
    """(distribution name to install, installed version or None) for an import name."""
    top = module.split(".")[0]
    if snapshot is not None:
        for dist in snapshot.packages.distributions:
            if top in dist.top_level and not dist.shadowed:
                return dist.name, dist.version
        dist = snapshot.distribution(top)
        if dist is not None:
            return dist.name, dist.version
    return _import_names().get(top, top.replace("_", "-")), None


def traceback_environment(region: str) -> str | None:
    """The environment prefix a traceback's frames come from (…/lib/pythonX.Y/site-packages)."""
    for pattern in _SITES:
        m = _re2(pattern).search(region)
        if m:
            return m.group("prefix")
    return None


def traceback_environments(text: str) -> set[str]:
    """Every environment prefix the frames of ``text`` come from."""
    if "-packages" not in text:  # what _SITE_TAIL demands (most regions have no frames there)
        return set()
    return {m.group("prefix") for pattern in _SITES for m in _re2(pattern).finditer(text)}


def belongs_to(prefix: str, snapshot: Snapshot) -> bool:
    """Is ``prefix`` (from a traceback) an environment of the snapshot's interpreter?"""
    norm = prefix.replace("\\", "/").rstrip("/").lower() + "/"
    dirs = [snapshot.python.prefix, *snapshot.python.site_dirs]
    return any(d and (d.replace("\\", "/").rstrip("/").lower() + "/").startswith(norm) for d in dirs)


@interprets("module", "interpreter")
def _module(groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading) -> None:
    module = groups.get("module", "")
    if not module:
        return
    top = module.split(".")[0]
    ran_in = groups.get("interpreter") or traceback_environment(region)
    reading.evidence.append(f"module: {module}")
    if ran_in:
        reading.evidence.append(f"the failing code ran in {ran_in}")
    if snapshot is None:
        dist, _ = distribution_for(module, None)
        reading.fixes.append(
            f"{code(command('python', '-m', 'pip', 'install', dist))} "
            "with the interpreter that runs the code."
        )
        return
    exe = snapshot.python.executable or "python"
    dist, installed = distribution_for(module, snapshot)
    # is the snapshot the environment that failed? (None: the text does not say)
    if groups.get("interpreter"):
        same_env = same_prefix(groups["interpreter"], exe)
    else:
        same_env = belongs_to(ran_in, snapshot) if ran_in else None
    if installed is not None and module != top:
        reading.agree(
            f"{dist} {installed} is installed in {exe}, but its submodule {module} is missing: "
            "a build for another platform/Python, or a source checkout in the working directory "
            "shadowing the installed package"
        )
        reading.fixes.append(
            "Run from outside the source tree, or reinstall with "
            f"{code(command(exe, '-m', 'pip', 'install', '--force-reinstall', dist))}."
        )
    elif installed is not None and same_env:
        reading.evidence.append(
            f"{dist} {installed} is installed in {exe}, the same environment the traceback comes from: "
            "it was installed after the failure, or sys.path differed (PYTHONPATH, a shadowing directory)"
        )
        reading.fixes.append(
            f"Rerun with {code(command(exe))}; "
            f"if it still fails, run {code(command('stackcheck', 'doctor', '--python', exe))}."
        )
    elif installed is not None:
        elsewhere = f"than {ran_in}" if ran_in else "than the one that failed"
        reading.agree(
            f"{dist} {installed} is installed in {exe}: a different interpreter {elsewhere} ran the code"
        )
        reading.fixes.append(
            f"Run the code with {code(command(exe))} (check `which python` and the notebook kernel), "
            f"or install {dist} into the failing environment with that environment's "
            f"{code(command('python', '-m', 'pip', 'install', dist))}."
        )
    elif same_env is False:
        reading.evidence.append(
            f"{dist} is not installed in {exe}, and that is not the environment that failed ({ran_in})"
        )
        reading.fixes.append(
            "Install it into the failing environment with its own interpreter: "
            f"`<python of {ran_in}> -m pip install {shlex.quote(dist)}`."
        )
    else:
        reading.agree(f"no distribution providing {top!r} is installed in {exe}")
        reading.fixes.append(f"{code(command(exe, '-m', 'pip', 'install', dist))}.")


def same_prefix(a: str, b: str) -> bool:
    norm = lambda p: p.replace("\\", "/").rstrip("/").lower()  # noqa: E731
    return norm(a) == norm(b)


# ----- shared libraries --------------------------------------------------------------------

_CUDA_LIBS = {
    "libcudart",
    "libcublas",
    "libcublasLt",
    "libcufft",
    "libcurand",
    "libcusolver",
    "libcusparse",
    "libnvrtc",
    "libnvJitLink",
}


@interprets("library", "soversion")
def _library(groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading) -> None:
    library = groups.get("library", "")
    reading.evidence.append(f"library: {library}")
    stem, _, version = library.partition(".so")
    major = version.lstrip(".").split(".")[0]
    if stem not in _CUDA_LIBS or not major.isdigit() or snapshot is None:
        return
    torch_cuda = snapshot.torch.cuda
    if torch_cuda is None and snapshot.torch.version:
        reading.evidence.append(f"torch {snapshot.torch.version} in the environment is not a CUDA build")
        return
    if torch_cuda:
        if torch_cuda.split(".")[0] != major:
            reading.agree(
                f"it wants the CUDA {major} runtime; "
                f"the environment's torch {snapshot.torch.version} uses CUDA {torch_cuda}: "
                "the failing package was built for another CUDA major"
            )
            reading.fixes.append(
                f"Install the CUDA {torch_cuda.split('.')[0]} build of the package that loads {library}."
            )
        else:
            reading.evidence.append(
                f"the environment's torch uses CUDA {torch_cuda} too: "
                "the runtime library is installed elsewhere or not on the loader path"
            )


# ----- shared memory ---------------------------------------------------------------------------


@interprets("shm")
def _shm(groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading) -> None:
    size = snapshot.platform.shm_total_bytes if snapshot is not None else None
    if size is None:
        return
    if size < 2**30:
        reading.agree(f"/dev/shm in the environment is only {human(size)}")
    else:
        reading.evidence.append(
            f"/dev/shm in the environment is {human(size)}: check it is not full (`df -h /dev/shm`)"
        )


# ----- NCCL watchdog -------------------------------------------------------------------------


@interprets("op", "timeout_ms", "ran_ms", "seq")
def _watchdog(groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading) -> None:
    op, seq = groups.get("op", "a collective"), groups.get("seq")
    timeout, ran = (int(groups[k]) / 1000 if groups.get(k) else None for k in ("timeout_ms", "ran_ms"))
    what = f"{op} #{seq}" if seq else op
    if timeout is not None and ran is not None:
        reading.evidence.append(f"{what} waited {ran:.0f} s against a timeout of {timeout:.0f} s")
    if timeout is not None and timeout <= 600:
        reading.fixes.append(
            f"The timeout is {timeout:.0f} s: if one rank legitimately works longer alone "
            "(evaluation, checkpointing, dataset preprocessing), "
            "raise it with `init_process_group(timeout=timedelta(minutes=60))`."
        )
