"""Where a command's facts come from, as one typed value.

A :class:`FactSource` names the live interpreter, another interpreter (``--python PATH``), the
interpreter a Jupyter kernel runs (``--kernel NAME``), a recorded snapshot (``--snapshot FILE``)
or a file an importer reads (``--from-collect-env FILE`` …). The CLI parses it with one option
group (``cli.common.source_options``) and every command resolves it with one function
(``environment.obtain``).

Importers register in :data:`IMPORTERS`: a new one is a module under ``stackcheck.importers``
with a ``parse_…(text, source) -> Snapshot`` function and one line here; every command that reads files of
facts then offers its ``--from-…`` option. Nothing is imported here (the table names modules),
so the CLI can build its options without loading any importer.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["IMPORTERS", "FactSource", "Importer", "importer"]


@dataclass(frozen=True)
class Importer:
    """A text file of facts another tool wrote, read into a Snapshot."""

    kind: str  # FactSource.kind, also the option: --from-KIND
    parser: str  # "module:function", function(text, source=NAME) -> Snapshot; imported when used
    what: str  # what the file is, for messages: "collect_env output"
    help: str  # the option's help text

    @property
    def option(self) -> str:
        return f"--from-{self.kind}"


# The registered importers, in the order the CLI lists their options.
IMPORTERS: tuple[Importer, ...] = (
    Importer(
        "collect-env",
        "stackcheck.importers.collect_env:parse_collect_env",
        "collect_env output",
        "Judge a pasted `python -m torch.utils.collect_env` output ('-' for stdin).",
    ),
    Importer(
        "pip-freeze",
        "stackcheck.importers.pip_freeze:parse_pip_freeze",
        "pip freeze output",
        "Judge the packages of a `pip freeze` output ('-' for stdin).",
    ),
)

# The sources that are not importers: kind → the option that names it.
_OPTIONS = {"live": "", "python": "--python", "kernel": "--kernel", "snapshot": "--snapshot"}


def _order(kind: str) -> int:
    """The order two combined sources are named in (the kernel or file first, --python last)."""
    kinds = ["kernel", "snapshot", *(i.kind for i in IMPORTERS), "python", "live"]
    return kinds.index(kind)


def importer(kind: str) -> Importer | None:
    """The registered importer of ``kind``, None for live/python/kernel/snapshot."""
    return next((i for i in IMPORTERS if i.kind == kind), None)


@dataclass(frozen=True)
class FactSource:
    """One source of facts: ``kind`` (live | python | kernel | snapshot | an importer's kind)
    and ``value`` (the interpreter path, kernel name or file; '' for live)."""

    kind: str = "live"
    value: str = ""

    def __post_init__(self) -> None:
        if self.kind not in _OPTIONS and importer(self.kind) is None:
            from stackcheck.errors import InputError

            kinds = [*_OPTIONS, *(i.kind for i in IMPORTERS)]
            raise InputError(f"source: {self.kind!r} is not one of {', '.join(kinds)}")
        if (self.kind == "live") != (not self.value):
            from stackcheck.errors import InputError

            need = "takes no path" if self.kind == "live" else "needs a path or name"
            raise InputError(f"source: {self.kind} {need}")

    @property
    def option(self) -> str:
        """The command-line option that gives this source ('' for live)."""
        found = importer(self.kind)
        return found.option if found else _OPTIONS[self.kind]

    @property
    def is_file(self) -> bool:
        """Whether the facts are read from a file (a snapshot or an importer's input)."""
        return self.kind == "snapshot" or importer(self.kind) is not None

    @classmethod
    def live(cls) -> FactSource:
        return cls()

    @classmethod
    def python(cls, path: str) -> FactSource:
        return cls("python", str(path))

    @classmethod
    def kernel(cls, name: str) -> FactSource:
        return cls("kernel", name)

    @classmethod
    def snapshot(cls, path: str) -> FactSource:
        return cls("snapshot", str(path))

    @classmethod
    def of(cls, **given: str | None) -> FactSource:
        """The one source among keyword values (``of(python=None, snapshot="env.json")``;
        importers by kind with '_' for '-'), live when none is given; two given is a
        one-line error naming both options."""
        named = sorted(
            (cls(k.replace("_", "-"), str(v)) for k, v in given.items() if v), key=lambda s: _order(s.kind)
        )
        if len(named) > 1:
            from stackcheck.errors import InputError

            options = " and ".join(s.option for s in named)
            if {s.kind for s in named} == {"kernel", "python"}:
                raise InputError(f"{options} cannot be combined: a kernel names its own interpreter")
            raise InputError(f"{options} cannot be combined: give one source of facts")
        return named[0] if named else cls()
