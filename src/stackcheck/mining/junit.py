"""JUnit XML (pytest ``--junitxml``, Maven Surefire, Gradle …): the failed test cases.

Real files carry ANSI colour codes and other control bytes that XML 1.0 forbids; they are
dropped before parsing. A document type declaration is refused (no entity expansion), and
the size is bounded, so a hostile file costs bounded time and memory.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from stackcheck.errors import InputError
from stackcheck.mining.inputs import LogFile
from stackcheck.mining.pytest_output import _EXC_MESSAGE, parse_longrepr
from stackcheck.mining.signature import Failure

__all__ = ["read_junit"]

MAX_BYTES = 64 << 20
_FORBIDDEN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def read_junit(log: LogFile) -> tuple[list[Failure], int]:
    """(failures, test cases) of a JUnit file; an unreadable one is an InputError."""
    with log.open() as fh:
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise InputError(f"{log.label}: larger than {MAX_BYTES >> 20} MiB, expected a JUnit XML report")
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(f"{log.label}: binary data, expected a JUnit XML report")
    text = data.decode("utf-8", errors="replace")
    if "<!DOCTYPE" in text[:4096] or "<!ENTITY" in text:
        raise InputError(f"{log.label}: has a document type declaration; JUnit reports need none (refused)")
    text = _FORBIDDEN.sub("", _ANSI.sub("", text))
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise InputError(
            f"{log.label}: line {exc.position[0]}: not well-formed XML ({exc}), expected a JUnit report"
        ) from None
    if root.tag not in ("testsuites", "testsuite"):
        raise InputError(
            f"{log.label}: root element <{root.tag}>, expected <testsuites> or <testsuite> (JUnit)"
        )
    failures: list[Failure] = []
    cases = 0
    for case in root.iter("testcase"):
        cases += 1
        for child in case:
            if child.tag not in ("failure", "error"):
                continue
            classname, name = case.get("classname", ""), case.get("name", "")
            test = f"{classname}::{name}" if classname else name
            failure = parse_longrepr(child.text or "", test)
            if not failure.message:
                message = (child.get("message") or "").strip()
                exception = child.get("type") or ""
                if exception and message.startswith(f"{exception}: "):
                    message = message[len(exception) + 2 :]
                elif not exception:
                    m = _EXC_MESSAGE.match(message)
                    if m:
                        exception, message = m.group(1), m.group(2)
                failure = Failure(exception, message.splitlines()[0] if message else "", test=test)
            failure.kind = "junit"
            failures.append(failure)
            break
    return failures, cases
