"""Where the knowledge base is read from: standard library only, so that a warm verdict cache
(:mod:`stackcheck.cli.verdicts`) can name the files a knowledge base would be read from without
loading it (:mod:`stackcheck.knowledge.loader` reads them)."""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"
RULES_ENV = "STACKCHECK_RULES"  # extra rule files or folders, os.pathsep-separated
RULES_DIR = Path("requirements") / "stackcheck-rules"  # a team's (mined) rules, beside its profiles


def data_dir() -> Path:
    """The data directory: ``STACKCHECK_KNOWLEDGE_DIR`` when set (tests, local overrides)."""
    return Path(os.environ.get("STACKCHECK_KNOWLEDGE_DIR") or DATA_DIR)


def extra_rule_paths(cwd: str | os.PathLike | None = None) -> tuple[Path, ...]:
    """Rule files beyond the packaged ones: those given with ``--rules`` (see
    :func:`stackcheck.knowledge.use_rule_files`), ``$STACKCHECK_RULES`` (paths separated by
    ``os.pathsep``) and the nearest ``requirements/stackcheck-rules/`` at or above ``cwd``, the
    folder beside the profile registry where a team keeps its mined rules."""
    from stackcheck import knowledge

    paths = [Path(p) for p in knowledge.given_rule_files()]
    paths += [Path(p) for p in os.environ.get(RULES_ENV, "").split(os.pathsep) if p.strip()]
    here = Path(cwd or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / RULES_DIR).is_dir():
            paths.append(folder / RULES_DIR)
            break
    return tuple(dict.fromkeys(paths))
