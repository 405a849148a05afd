"""Facts about one Python interpreter: the python and packages sections of a snapshot.

This module is deliberately **standard-library only and Python 3.8 compatible**: for
``--python PATH`` it is run *as a script* by the other interpreter (nothing is installed
there) and prints JSON; for the live interpreter it is called in-process. It reads
distribution metadata headers directly (up to the first blank line) instead of going through
``importlib.metadata``, whose email parser costs ~10x more (see DESIGN.md).
"""

from __future__ import annotations

import json
import os
import site
import stat
import sys
import sysconfig

_HEADERS = ("name", "version", "requires-dist", "requires-python", "provides-extra")
HEADER_LIMIT = 1 << 20  # bytes of METADATA headers read at most (real ones: a few KiB)
SMALL_FILE_LIMIT = 64 << 20  # RECORD, WHEEL, top_level.txt … (torch's RECORD: ~2 MiB)
# Run as a script (``--python``), each step is announced on stderr with this prefix, so that
# on a timeout the parent can say what the probe was reading (a FIFO, a hung network mount).
PROGRESS = "stackcheck-probe: reading "
_report_progress = False


def _step(what):
    if _report_progress:
        sys.stderr.write(PROGRESS + what + "\n")
        sys.stderr.flush()


def _open_file(path):
    """(descriptor, size) of a regular file, opened so that it never blocks: a FIFO or device
    named METADATA or RECORD is an OSError, like a missing file. Read with ``os.read``: a file
    object around it costs more than the read of a small file (two more ``fstat`` calls)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError("not a regular file: %s" % path)
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def _read_upto(fd, limit, data=b""):
    """``data`` plus what follows in ``fd``, up to ``limit`` bytes in all (short reads retried)."""
    chunks = [data]
    size = len(data)
    while size < limit:
        more = os.read(fd, limit - size)
        if not more:
            break
        chunks.append(more)
        size += len(more)
    return b"".join(chunks)


def _read_file(path, limit=None):
    """The bytes of a regular file, at most ``limit`` (default :data:`SMALL_FILE_LIMIT`).
    ``read(limit)`` would allocate the whole limit for every small file: a file smaller than
    the limit is read whole (to its end, as it is when read)."""
    limit = SMALL_FILE_LIMIT if limit is None else limit
    fd, size = _open_file(path)
    try:
        if size >= limit:
            return _read_upto(fd, limit)
        chunks = []
        while True:
            more = os.read(fd, size + 1 if not chunks else 1 << 16)
            if not more:
                return b"".join(chunks)
            chunks.append(more)
    finally:
        os.close(fd)


def _header_end(data):
    """Offset of the blank line that ends the headers, -1 when there is none."""
    end = data.find(b"\n\n")
    alt = data.find(b"\n\r\n")
    return alt if end < 0 or (0 <= alt < end) else end


def _read_headers(path):
    """Name, Version, Requires-Dist… from a METADATA/PKG-INFO file, stopping at the body.

    Reads the first 8 KiB (most headers fit), else on up to :data:`HEADER_LIMIT` bytes, so
    time and memory stay linear and bounded; the long description after the headers is
    never decoded. Headers cut at the limit lose their last, partial line and the result
    says ``truncated``."""
    fd, _ = _open_file(path)
    try:
        data = _read_upto(fd, 8192)
        end = _header_end(data)
        if end < 0 and len(data) == 8192:
            data = _read_upto(fd, HEADER_LIMIT, data)
            end = _header_end(data)
        truncated = end < 0 and len(data) >= HEADER_LIMIT and bool(os.read(fd, 1))
    finally:
        os.close(fd)
    if truncated:
        data = data[: data.rfind(b"\n") + 1]  # a header cut in the middle would lie
    found = _parse_headers((data if end < 0 else data[:end]).decode("utf-8", "replace"))
    if truncated:
        found["truncated"] = True
    return found


# First characters of a line that can start none of _HEADERS: printable ASCII that
# ``str.strip`` keeps and that lower-cases to no initial of theirs. Such a line (Classifier,
# Author, License … most of a header block) only ends the header before it.
_NO_HEADER_START = frozenset(chr(c) for c in range(0x21, 0x7F)) - frozenset("nNvVrRpP")


def _parse_headers(head, skip=_NO_HEADER_START):
    """The :data:`_HEADERS` of a header block. ``skip``: first characters of lines that cannot
    hold one of them (an empty set: every line is split and looked at, the same answer)."""
    found = {"requires-dist": [], "provides-extra": []}
    key = None
    for line in head.splitlines():
        if line[:1] in skip:
            if ":" in line:
                key = None
            continue
        if line[:1] in (" ", "\t"):  # continuation of a folded header
            if key in ("name", "version", "requires-python") and key in found:
                found[key] += " " + line.strip()
            continue
        name, sep, value = line.partition(":")
        if not sep:
            continue
        key = name.strip().lower()
        if key not in _HEADERS:
            key = None
            continue
        value = value.strip()
        if key in ("requires-dist", "provides-extra"):
            found[key].append(value)
        elif key not in found:
            found[key] = value
    return found


def _egg_requires(path):
    """requires.txt of an .egg-info → Requires-Dist strings with extras/markers."""
    out = []
    section = ""
    try:
        text = _read_file(path).decode("utf-8", "replace")
    except OSError:
        return out
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        extra, _, marker = section.partition(":")
        conds = []
        if extra:
            conds.append('extra == "%s"' % extra)
        if marker:
            conds.append("(%s)" % marker)
        out.append(line + ("; " + " and ".join(conds) if conds else ""))
    return out


def _read_small(path):
    try:
        return _read_file(path).decode("utf-8", "replace")
    except OSError:
        return None


def _top_level_from_record(record_text):
    """Import names a RECORD installs at top level: its directories and module files.

    RECORD lines look like ``pkg/sub/file.py,sha256=…,123``; torch's has 15k of them. A set
    comprehension of line heads runs in C-speed loops; only the few distinct heads are looked
    at in Python."""
    names = set()
    for head, slash in {line.partition("/")[:2] for line in record_text.split("\n")}:
        path = head.partition(",")[0].strip()  # a "/" after a comma is inside the hash
        if (slash and "," not in head) or "\\" in path:  # a directory at top level
            names.add(path.partition("\\")[0])
        elif path.endswith(".py"):
            names.add(path[:-3])
        elif path.endswith((".so", ".pyd")):
            names.add(path.split(".", 1)[0])
    return sorted(n for n in names if n.isidentifier() and n != "__pycache__")


class _Listing(frozenset):
    """A directory's entries, and the module names of its extension modules
    (``_C.cpython-311-x86_64-linux-gnu.so`` → ``_C``), so that a missing module costs a set
    lookup, not a scan of the directory (5,000 of them made a scan quadratic)."""

    extension_stems: frozenset

    def __new__(cls, names):
        self = super().__new__(cls, names)
        self.extension_stems = frozenset(n.split(".", 1)[0] for n in self if n.endswith((".so", ".pyd")))
        return self


def _module_present(listing, name):
    """Whether a top-level module is in a directory, given that directory's :class:`_Listing`."""
    if name in listing or name + ".py" in listing:
        return True
    return name in listing.extension_stems


def _read_distribution(location, entry):
    """One dist-info / egg-info entry, read from its files → a Distribution dict."""
    mdir = os.path.join(location, entry)
    problems = []
    egg = entry.endswith(".egg-info")
    if egg:
        meta = mdir if os.path.isfile(mdir) else os.path.join(mdir, "PKG-INFO")
    else:
        meta = os.path.join(mdir, "METADATA")
    headers = None
    if os.path.isfile(meta):
        try:
            headers = _read_headers(meta)
        except OSError as exc:
            problems.append("cannot read %s: %s" % (os.path.basename(meta), exc))
        if headers and headers.get("truncated"):
            problems.append(
                "%s: headers longer than %d bytes, read up to there only"
                % (os.path.basename(meta), HEADER_LIMIT)
            )
    else:
        problems.append("missing %s" % os.path.basename(meta))
    stem = entry.rsplit(".", 1)[0]
    dir_name, _, dir_version = stem.partition("-")
    if headers is None:
        headers = {"requires-dist": [], "provides-extra": []}
    name = headers.get("name") or dir_name
    version = headers.get("version") or dir_version.split("-")[0]
    requires = headers["requires-dist"]
    if egg and os.path.isdir(mdir) and not requires:
        requires = _egg_requires(os.path.join(mdir, "requires.txt"))
    dist = {
        "name": name,
        "version": version,
        "location": location,
        "metadata_dir": mdir,
        "installer": "",
        "requires": requires,
        "requires_python": headers.get("requires-python"),
        "provides_extras": headers["provides-extra"],
        "editable": False,
        "direct_url": None,
        "top_level": [],
        "wheel_tags": [],
        "shadowed": False,
        "problems": problems,
        "requested": False,
    }
    dist["_top_level_txt"] = False
    try:
        present = set(os.listdir(mdir))  # one listing instead of a failed open per absent file
    except OSError:
        return dist  # an .egg-info file, or unreadable

    def read(name):
        return _read_small(os.path.join(mdir, name)) if name in present else None

    dist["requested"] = "REQUESTED" in present
    installer = read("INSTALLER")
    if installer:
        dist["installer"] = installer.strip()
    direct = read("direct_url.json")
    if direct:
        try:
            info = json.loads(direct)
        except ValueError:
            problems.append("direct_url.json is not valid JSON")
        else:
            if not isinstance(info, dict):
                problems.append("direct_url.json is not a JSON object")
            else:
                url, dir_info = info.get("url"), info.get("dir_info")
                dist["direct_url"] = url if isinstance(url, str) else None
                dist["editable"] = isinstance(dir_info, dict) and bool(dir_info.get("editable"))
    wheel = read("WHEEL")
    if wheel:
        dist["wheel_tags"] = [
            ln.split(":", 1)[1].strip() for ln in wheel.splitlines() if ln.lower().startswith("tag:")
        ]
    top = read("top_level.txt")
    if top is not None:
        dist["top_level"] = sorted({t.strip().split("/")[0] for t in top.splitlines() if t.strip()})
    elif not egg:
        record = read("RECORD")
        if record is not None:
            dist["top_level"] = _top_level_from_record(record)
        elif not dist["editable"]:
            problems.append("missing RECORD")
    dist["_top_level_txt"] = top is not None
    # direct_url.json and Requires-Dist may carry a token (git+https://user:ghp_…@host/…):
    # cut out here, before the dict reaches the cache file or the printed facts.
    return _redaction().redact_value(dist)


_LOADED: dict = {}


def _stackcheck_module(name):
    """stackcheck.NAME, a standard-library-only module of stackcheck (redaction, cachedir);
    loaded by file path when this module runs as a script inside another interpreter
    (``--python``), where stackcheck is not importable."""
    if name not in _LOADED:
        if __package__:
            import importlib

            module = importlib.import_module("stackcheck." + name)
        else:
            import importlib.util

            path = os.path.join(_STACKCHECK_DIR, name + ".py")
            spec = importlib.util.spec_from_file_location("_stackcheck_" + name, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load {path}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        _LOADED[name] = module
    return _LOADED[name]


def _redaction():
    return _stackcheck_module("redaction")


_STACKCHECK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_REDACTION_FILE = os.path.join(_STACKCHECK_DIR, "redaction.py")


def _check_modules_present(dist, listing):
    """Problems for top-level modules a distribution installs that are gone from its
    directory (checked on every scan: deleting a package leaves its dist-info untouched)."""
    if dist["editable"] or dist["metadata_dir"].endswith(".egg-info"):
        return
    missing = [m for m in dist["top_level"] if not _module_present(listing, m)]
    if missing and dist["_top_level_txt"]:
        # top_level.txt is sometimes wrong (google-re2 lists "_re2"): only what RECORD
        # installs at top level can be missing. Read RECORD on this rare path only.
        recorded = _top_level_from_record(_read_small(os.path.join(dist["metadata_dir"], "RECORD")) or "")
        missing = [m for m in missing if m in recorded]
    for mod in missing:
        dist["problems"].append(
            "RECORD lists top-level module %r but it is missing from %s" % (mod, dist["location"])
        )


_NO_ENTRIES = _Listing(())


def _distribution(location, entry, listing=_NO_ENTRIES, cache=None):
    """One dist-info / egg-info entry → a Distribution dict, parsed or from the cache."""
    stamp = cache.stamp(location, entry) if cache is not None else None
    dist = cache.get(location, entry, stamp) if stamp is not None else None
    if dist is None:
        if stamp is not None:
            stamp = cache.with_url(location, entry, stamp)  # taken before the files are read
        dist = _read_distribution(location, entry)
        if stamp is not None and not dist["problems"]:
            cache.put(entry, stamp, dist)
    _check_modules_present(dist, listing)
    del dist["_top_level_txt"]
    return dist


def _pth_files(site_dirs):
    out = []
    for d in site_dirs:
        try:
            names = sorted(n for n in os.listdir(d) if n.endswith(".pth"))
        except OSError:
            continue
        for n in names:
            text = _read_small(os.path.join(d, n)) or ""
            lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
            out.append(
                {
                    "path": os.path.join(d, n),
                    "entries": lines,
                    "executes_code": any(ln.startswith(("import ", "import\t")) for ln in lines),
                }
            )
    return out


def _env_kind():
    prefix = sys.prefix
    cfg = os.path.join(prefix, "pyvenv.cfg")
    if os.path.isfile(cfg):
        text = (_read_small(cfg) or "").lower()
        if "\nuv =" in "\n" + text or "uv = " in text:
            return "uv", cfg
        if "virtualenv" in text:
            return "virtualenv", cfg
        return "venv", cfg
    if os.path.isdir(os.path.join(prefix, "conda-meta")):
        env = os.environ.get("CONDA_PREFIX")
        return "conda", ("CONDA_PREFIX=%s" % env) if env else os.path.join(prefix, "conda-meta")
    if os.sep + ".pixi" + os.sep in prefix + os.sep:
        return "pixi", prefix
    if getattr(sys, "real_prefix", None):
        return "virtualenv", "sys.real_prefix"
    return "system", prefix


def externally_managed_marker(stdlib, prefix, base_prefix):
    """The PEP 668 ``EXTERNALLY-MANAGED`` file that marks this interpreter as the operating
    system's (pip must not change it), or "" when there is none or this is a virtual
    environment of such an interpreter (PEP 668 exempts those)."""
    if not stdlib or prefix != base_prefix:
        return ""
    marker = os.path.join(stdlib, "EXTERNALLY-MANAGED")
    return marker if os.path.isfile(marker) else ""


def python_facts():
    kind, marker = _env_kind()
    try:
        site_dirs = list(site.getsitepackages())
    except AttributeError:  # old virtualenv's site.py
        site_dirs = [sysconfig.get_paths()["purelib"]]
    try:
        user_site = site.getusersitepackages()
    except AttributeError:
        user_site = None
    all_site = [d for d in site_dirs + ([user_site] if user_site else []) if d and os.path.isdir(d)]
    pythonpath = os.environ.get("PYTHONPATH", "")
    return {
        "status": "ok",
        "source": "interpreter",
        "version": "%d.%d.%d" % sys.version_info[:3],
        "implementation": sys.implementation.name.replace("cpython", "CPython").replace("pypy", "PyPy"),
        "executable": sys.executable,
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "externally_managed": externally_managed_marker(
            sysconfig.get_path("stdlib"), sys.prefix, getattr(sys, "base_prefix", sys.prefix)
        ),
        "env_kind": kind,
        "env_marker": marker,
        "sys_path": list(sys.path),
        "pythonpath": [p for p in pythonpath.split(os.pathsep) if p],
        "user_site": user_site,
        "user_site_enabled": bool(site.ENABLE_USER_SITE),
        "platform_tag": sysconfig.get_platform(),
        "soabi": sysconfig.get_config_var("SOABI") or "",
        "pth_files": _pth_files(all_site),
        "site_dirs": site_dirs + ([user_site] if user_site else []),
        "isolation": isolation_facts(),
    }


def _shebang_interpreter(script):
    """The interpreter a console script runs: its ``#!`` line (``env NAME`` resolved on PATH,
    pip's ``/bin/sh`` + ``exec`` trampoline for long paths followed). A file read, no subprocess."""
    try:
        head = _read_file(script, 512).decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    if not head or not head[0].startswith("#!"):
        return ""
    words = head[0][2:].split()
    if not words:
        return ""
    if os.path.basename(words[0]) == "sh" and len(head) > 1 and "exec'" in head[1]:
        parts = head[1].split('"')
        return parts[1] if len(parts) > 2 else ""
    if os.path.basename(words[0]) == "env":
        names = [w for w in words[1:] if not w.startswith("-")]
        return (_which(names[0]) or names[0]) if names else ""
    return words[0]


def _which(name):
    for d in os.environ.get("PATH", "").split(os.pathsep):
        cand = os.path.join(d or ".", name)
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return ""


def isolation_facts():
    """Which environment the shell has activated, and what ``python``/``pip`` on PATH run."""
    tools = []
    for name in ("python", "python3", "pip", "pip3"):
        path = _which(name)
        if not path:
            continue
        runs = path if name.startswith("python") else _shebang_interpreter(path)
        if not os.path.basename(runs).startswith(("python", "pypy")):
            runs = ""  # a shim or wrapper (pyenv, asdf): what it runs is not known from the file
        tools.append({"name": name, "path": path, "interpreter": runs})
    return {
        "virtual_env": os.environ.get("VIRTUAL_ENV") or None,
        "conda_prefix": os.environ.get("CONDA_PREFIX") or None,
        "path_tools": tools,
    }


def cache_root():
    """The probe's cache directory (the metadata cache, toolchain facts): stackcheck.cachedir's."""
    return _stackcheck_module("cachedir").cache_root()


# The keys of a cached entry (a Distribution dict as _read_distribution makes it).
_LIST_KEYS = ("requires", "provides_extras", "top_level", "wheel_tags", "problems")
_ENTRY_KEYS = frozenset(
    _LIST_KEYS
    + ("name", "version", "location", "metadata_dir", "installer", "requires_python", "editable")
    + ("direct_url", "shadowed", "requested", "_top_level_txt")
)


class _MetadataCache:
    """Parsed metadata of one sys.path directory, kept between runs (a :mod:`stackcheck.factcache`
    file).

    Reading ~160 METADATA headers and RECORD files is most of a probe's time. An entry is keyed
    by the stat of its dist-info directory (inode and mtime: a reinstall makes a new directory,
    and adding, removing or renaming a file in it changes its mtime), of METADATA (inode, mtime,
    size, ctime: a rewrite in place or by rename, even one that puts the mtime back) and of
    direct_url.json (an editable install's target). The file's key holds this module's own
    stat and that of the redaction rules, so a changed probe never reads an older cache.
    Module presence is never cached. Entries are stored redacted. ``STACKCHECK_NO_CACHE=1``
    turns it off; ``STACKCHECK_CACHE_DIR`` moves it."""

    def __init__(self, location):
        self.entries = {}
        self.seen = {}
        self.name = None
        self.root = cache_root()
        if self.root is None:
            return
        facts = _stackcheck_module("factcache")
        try:
            me = os.stat(__file__)
            rules = os.stat(_REDACTION_FILE)  # changed redaction rules: nothing older is read
        except OSError:
            return
        stamps = (me.st_mtime_ns, me.st_size, rules.st_mtime_ns, rules.st_size)
        self.key = ["%d-%d-%d-%d-%d" % ((sys.version_info[1],) + stamps), location]
        self.name = os.path.join("metadata", facts.digest(os.path.realpath(location))[:20] + ".json")
        entries = facts.load(self.root, self.name, self.key)
        self.entries = entries if isinstance(entries, dict) else {}

    def stamp(self, location, entry):
        """The stat facts an entry is keyed by, the direct_url.json part left open (None):
        :meth:`get` looks at that file only for entries that had one (adding or removing it
        changes the directory's mtime)."""
        if self.name is None:
            return None
        mdir = os.path.join(location, entry)
        meta = (
            mdir
            if entry.endswith(".egg-info") and not os.path.isdir(mdir)
            else os.path.join(mdir, "PKG-INFO" if entry.endswith(".egg-info") else "METADATA")
        )
        try:
            d, m = os.stat(mdir), os.stat(meta)
        except OSError:
            return None
        # the ctime too: a same-size rewrite in place that puts the mtime back still moves it
        return [d.st_ino, d.st_mtime_ns, m.st_ino, m.st_mtime_ns, m.st_size, m.st_ctime_ns, None]

    def with_url(self, location, entry, stamp):
        """``stamp`` with the stat of the entry's direct_url.json, when it has one."""
        try:
            u = os.stat(os.path.join(location, entry, "direct_url.json"))
        except OSError:
            return stamp
        return stamp[:6] + [[u.st_ino, u.st_mtime_ns, u.st_size, u.st_ctime_ns]]

    def get(self, location, entry, stamp):
        hit = self.entries.get(entry)
        if not isinstance(hit, list) or len(hit) != 2 or not isinstance(hit[1], dict):
            return None
        if not isinstance(hit[0], list) or hit[0][:6] != stamp[:6]:
            return None
        if hit[0][6:] != [None] and hit[0] != self.with_url(location, entry, stamp):
            return None
        dist = dict(hit[1])
        if set(dist) != _ENTRY_KEYS or not all(isinstance(dist[k], list) for k in _LIST_KEYS):
            return None  # not an entry this probe wrote: read the files again
        self.seen[entry] = hit
        dist["problems"] = list(dist["problems"])
        return dist

    def put(self, entry, stamp, dist):
        self.seen[entry] = [stamp, dict(dist, problems=list(dist["problems"]))]

    def save(self, location):
        if self.name is not None and self.seen != self.entries:
            _stackcheck_module("factcache").store(self.root, self.name, self.key, self.seen)


def packages_facts(path_entries=None):
    """Every distribution on ``sys.path``, in import order; later copies are ``shadowed``.
    Everything is redacted (stackcheck.redaction) as it is read."""
    entries = sys.path if path_entries is None else path_entries
    seen_dirs = set()
    seen_names = set()
    dists = []
    strays = []
    for location in entries:
        location = location or os.getcwd()
        real = os.path.realpath(location)
        if real in seen_dirs or not os.path.isdir(location):
            continue
        seen_dirs.add(real)
        _step(location)
        try:
            names = sorted(os.listdir(location))
        except OSError:
            continue
        listing = _Listing(names)
        cache = None
        for entry in names:
            if entry.startswith("~"):
                strays.append(os.path.join(location, entry))
                continue
            if not entry.endswith((".dist-info", ".egg-info")):
                continue
            if cache is None:
                cache = _MetadataCache(location)
            _step(os.path.join(location, entry))
            dist = _distribution(location, entry, listing, cache)
            key = _normalize(dist["name"])
            if key in seen_names:
                dist["shadowed"] = True
            seen_names.add(key)
            dists.append(dist)
        if cache is not None:
            cache.save(location)
    return {
        "status": "ok",
        "source": "metadata",
        "distributions": dists,
        "stray_entries": _redaction().redact_value(strays),
        "import_origins": _redaction().redact_value(_contested_origins(dists, entries)),
    }


def _contested_origins(dists, entries):
    """For import names that more than one distribution (or copy) installs: the file (or, for
    a namespace package, the directory) ``import NAME`` would load. Only contested names are
    looked up, so this stays cheap."""
    owners = {}
    for dist in dists:
        for mod in dist["top_level"]:
            owners[mod] = owners.get(mod, 0) + 1
    listings = {}  # each directory listed once for all of them
    contested = sorted(m for m, n in owners.items() if n > 1)
    return dict((mod, locate_module(mod, entries, listings)) for mod in contested)


def _normalize(name):
    out = []
    prev = False
    for ch in name.lower():
        if ch in "-_.":
            if not prev:
                out.append("-")
            prev = True
        else:
            out.append(ch)
            prev = False
    return "".join(out)


def locate_module(name, path_entries=None, listings=None):
    """Where ``import name`` would load from, found on disk without importing anything
    (``importlib.util.find_spec`` would import the parents of a dotted name). "" = not found.
    ``listings``: a dict that keeps each directory's listing for the next call (several modules
    looked up at once list the same sys.path directories: the stdlib's, lib-dynload)."""
    if name in sys.builtin_module_names:
        return "built-in"
    listings = {} if listings is None else listings
    parts = name.split(".")
    for entry in sys.path if path_entries is None else path_entries:
        base = os.path.join(entry or os.getcwd(), *parts[:-1])
        leaf = parts[-1]
        pkg = os.path.join(base, leaf)
        if os.path.isdir(pkg):
            init = os.path.join(pkg, "__init__.py")
            return init if os.path.exists(init) else pkg
        if os.path.isfile(pkg + ".py"):
            return pkg + ".py"
        names = listings.get(base)
        if names is None:
            try:
                names = os.listdir(base)
            except OSError:
                names = []
            listings[base] = names
        for n in names:
            if n.startswith(leaf + ".") and n.endswith((".so", ".pyd")):
                return os.path.join(base, n)
    return ""


def gather(modules=()):
    """Both sections, as plain JSON-able dicts; ``modules`` are located (never imported)."""
    _step("the interpreter's own facts (sys, site, sysconfig)")
    python = python_facts()
    if modules:
        _step("sys.path for modules " + ", ".join(modules))
    listings = {}
    python["modules"] = dict((m, locate_module(m, listings=listings)) for m in modules)
    return {"python": python, "packages": packages_facts()}


if __name__ == "__main__":
    # Run by another interpreter (`--python PATH`): drop this script's own directory from the
    # path so stackcheck's source tree never appears among the facts.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.getcwd()) != here]
    _report_progress = True
    sys.stdout.write(json.dumps(gather(modules=sys.argv[1:])))
