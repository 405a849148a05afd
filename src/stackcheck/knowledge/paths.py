"""Where the knowledge base is read from: standard library only, and without ``pathlib`` on the
way that a warm verdict cache (:mod:`stackcheck.cli.verdicts`) takes to name the files a knowledge
base would be read from without loading it (:mod:`stackcheck.knowledge.loader` reads them):
the ``*_name(s)`` functions answer in ``str``, the others in ``Path``."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    DATA_DIR: Path
    RULES_DIR: Path

RULES_ENV = "STACKCHECK_RULES"  # extra rule files or folders, os.pathsep-separated
# DATA_DIR as a str (as Path writes it: made by os.path from an absolute path)
DATA_DIR_NAME = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
_RULES = os.path.join("requirements", "stackcheck-rules")  # a team's (mined) rules, beside its profiles


def __getattr__(name: str):
    # DATA_DIR and RULES_DIR as Paths, made on first use: pathlib is not loaded on a warm preflight
    if name in ("DATA_DIR", "RULES_DIR"):
        from pathlib import Path

        return Path(DATA_DIR_NAME if name == "DATA_DIR" else _RULES)
    raise AttributeError(name)


def data_dir() -> Path:
    """The data directory: ``STACKCHECK_KNOWLEDGE_DIR`` when set (tests, local overrides)."""
    from pathlib import Path

    return Path(data_dir_name())


def data_dir_name() -> str:
    """:func:`data_dir` as a ``str``."""
    return os.environ.get("STACKCHECK_KNOWLEDGE_DIR") or DATA_DIR_NAME


def extra_rule_paths(cwd: str | os.PathLike | None = None) -> tuple[Path, ...]:
    """Rule files beyond the packaged ones: those given with ``--rules`` (see
    :func:`stackcheck.knowledge.use_rule_files`), ``$STACKCHECK_RULES`` (paths separated by
    ``os.pathsep``) and the nearest ``requirements/stackcheck-rules/`` at or above ``cwd``, the
    folder beside the profile registry where a team keeps its mined rules."""
    from pathlib import Path

    return tuple(dict.fromkeys(Path(p) for p in extra_rule_names(cwd)))


def extra_rule_names(cwd: str | os.PathLike | None = None) -> tuple[str, ...]:
    """:func:`extra_rule_paths` as ``str``s, as given (two spellings of one path are both kept)."""
    from stackcheck import knowledge
    from stackcheck.fileio import nearest_above

    paths = list(knowledge.given_rule_files())
    paths += [p for p in os.environ.get(RULES_ENV, "").split(os.pathsep) if p.strip()]
    found = nearest_above(_RULES, cwd, os.path.isdir)
    if found is not None:
        paths.append(found)
    return tuple(dict.fromkeys(paths))
