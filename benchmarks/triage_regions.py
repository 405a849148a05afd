"""How well does failure-region extraction find the labelled failure of real CI logs?

Data: LogChunks (Brandt, Panichella, Zaidman, Beller, MSR 2020, CC BY 4.0) — 797 Travis CI
build logs whose failure-explaining chunk was labelled by hand (/work/shared/data/logs/
logchunks.tar.xz). For each labelled example we stream the log through
stackcheck.triage.regions and report:

  found     the chunk's first line lies inside some extracted region (containment: chunks
            may start mid-line)
  covered   at least half of the chunk's non-blank lines lie inside extracted regions
  last      the chunk's first line lies inside the last region (what triage shows when no
            rule matches and the log has no Python traceback)
  kept      share of the log's lines that are inside regions (lower = more focused)

Usage: python benchmarks/triage_regions.py [--archive PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tarfile
import tempfile
from pathlib import Path

ARCHIVE = "/work/shared/data/logs/logchunks.tar.xz"
_XML_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_ESC = "\ue01b"


def extract(archive: str | Path, dest: str | Path) -> None:
    """Unpack a tar archive safely (the 'data' filter where this Python has it)."""
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:  # Python < 3.10.12 / 3.11.4
            tar.extractall(dest)  # noqa: S202 - a known archive from the shared data directory


def examples(root: Path):
    """(log path, chunk lines) for every labelled example whose log is present."""
    import xml.etree.ElementTree as ET

    from stackcheck.triage.reader import clean_line

    for xml_path in sorted((root / "example-sets" / "BuildFailureReason").rglob("*.xml")):
        # XML 1.0 forbids ESC: park it in a private-use character so the labelled chunks keep
        # their colour codes and are cleaned exactly like the log lines
        raw = xml_path.read_text(encoding="utf-8", errors="replace").replace("\x1b", _ESC)
        text = _XML_BAD.sub("", raw)
        try:
            tree = ET.fromstring(text)
        except ET.ParseError:
            continue
        for ex in tree.iter("ExampleDataOfString"):
            log = root / "samples" / (ex.findtext("InputPath") or "")
            output = (ex.findtext("Output") or "").replace(_ESC, "\x1b")
            chunk = [clean_line(line).strip() for line in output.splitlines()]
            chunk = [line for line in chunk if line]
            if log.is_file() and chunk:
                yield log, chunk


def measure(root: Path) -> dict:
    from stackcheck.triage.reader import iter_lines
    from stackcheck.triage.regions import extract_regions

    n = found = covered = last = 0
    kept_lines = total_lines = 0
    for log, chunk in examples(root):
        with open(log, "rb") as fh:
            lines = [line.strip() for line in iter_lines(fh, str(log))]
        regions = list(extract_regions(lines))
        inside = [line.strip() for r in regions for line in r.lines]
        kept_lines += len(inside)
        total_lines += len(lines)
        n += 1
        # a labelled chunk may start or end mid-line: containment, not equality
        within = lambda text, shown: any(text in line for line in shown)  # noqa: E731
        found += within(chunk[0], inside)
        covered += sum(within(line, inside) for line in chunk) * 2 >= len(chunk)
        last += bool(regions) and within(chunk[0], [line.strip() for line in regions[-1].lines])
    return {
        "examples": n,
        "found": round(found / n, 3),
        "covered": round(covered / n, 3),
        "last": round(last / n, 3),
        "kept": round(kept_lines / max(total_lines, 1), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--archive", default=ARCHIVE)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        extract(args.archive, tmp)
        result = measure(Path(tmp))
    if args.json:
        json.dump(result, sys.stdout)
        print()
    else:
        print(
            f"LogChunks: {result['examples']} labelled failures; "
            f"chunk found in a region: {result['found']:.1%}, "
            f"half or more of the chunk covered: {result['covered']:.1%}, "
            f"in the last region: {result['last']:.1%}; "
            f"regions keep {result['kept']:.1%} of the log lines"
        )


if __name__ == "__main__":
    main()
