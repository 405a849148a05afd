"""A failure's signature: exception type + masked message + top in-app frames + failing test.

Two failures share a signature exactly when the four agree; the key is a digest of them, so
it is the same in every process and every store. Frames name a file and a function, never a
line number (lines move with every commit); only in-app frames count — not the standard
library, not site-packages, not the test runner.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from stackcheck.mining.masks import mask
from stackcheck.redaction import redact_text

__all__ = ["Failure", "frame_name", "in_app", "normalize_test", "signature_key"]

TOP_FRAMES = 3  # in-app frames kept per signature, innermost first
MAX_MESSAGE = 500  # characters of a message kept (and masked)

_NOT_APP = re.compile(
    r"(?:^|[\\/])(?:site-packages|dist-packages|lib[\\/]python\d[\d.]*|_pytest|pluggy|importlib|unittest)"
    r"(?:[\\/]|$)"
    r"|^<(?:frozen|string|stdin)|^\.\.[\\/]venv|[\\/]\.?venv[^\\/]*[\\/]lib[\\/]"
)
# the workspace prefix CI runners check code out under (GitHub Actions, Travis, GitLab, Buildkite)
_WORKSPACE = re.compile(
    r"^.*?[\\/](?:work[\\/][^\\/]+[\\/][^\\/]+|build[\\/][^\\/]+[\\/][^\\/]+"
    r"|builds[\\/][^\\/]+(?:[\\/][^\\/]+)?|"
    r"project|workspace|src[\\/]github\.com[\\/][^\\/]+[\\/][^\\/]+)[\\/]"
)


def in_app(path: str) -> bool:
    """Is a frame's file the project's own code (not the stdlib, site-packages, the runner)?"""
    return not _NOT_APP.search(path.replace("\\", "/"))


def frame_name(path: str, function: str) -> str:
    """``/home/runner/work/repo/repo/src/pkg/stats.py`` + ``mean`` → ``src/pkg/stats.py:mean``."""
    path = path.replace("\\", "/")
    if path.startswith("/") or re.match(r"^[A-Za-z]:/", path):
        short = _WORKSPACE.sub("", path, count=1)
        path = short if short != path else "/".join(path.split("/")[-3:])
    return f"{path.lstrip('./')}:{function}" if function else path.lstrip("./")


def normalize_test(test: str) -> str:
    """One spelling of a test for pytest node IDs and JUnit names:
    ``tests/test_x.py::TestA::test_b`` and ``tests.test_x.TestA`` + ``test_b`` agree."""
    t = test.strip().replace("\\", "/")
    t = re.sub(r"\.py(?=::|$)", "", t)
    return t.replace("::", ".").replace("/", ".")


def signature_key(exception: str, template: str, frames: tuple[str, ...], test: str) -> str:
    text = "\x1f".join((exception, template, "\x1e".join(frames), normalize_test(test)))
    return hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()[:16]


@dataclass
class Failure:
    """One failure found in a job: where it came from and what it says."""

    exception: str  # "AttributeError", "numpy.exceptions.AxisError"; "" for an error line
    message: str  # the message as it appeared (first line)
    frames: tuple[str, ...] = ()
    test: str = ""  # the failing test as the log names it (a pytest node ID, a JUnit name)
    line: int = 0  # 1-based line of the job's log where the message is
    kind: str = "traceback"  # pytest | junit | traceback | error | step
    template: str = field(default="", init=False)

    def __post_init__(self) -> None:
        # a CI log quotes tokens (URLs with credentials, Authorization headers): a failure is
        # redacted before anything keys, stores or prints it (the store, rule files, summaries)
        self.message = redact_text(self.message.strip())[:MAX_MESSAGE]
        self.test = redact_text(self.test)
        self.template = mask(self.message)

    @property
    def example(self) -> str:
        """The text a rule's signature must match: ``Exception: message`` as a log shows it."""
        return (
            f"{self.exception}: {self.message}"
            if self.exception and self.message
            else self.exception or self.message
        )

    @property
    def key(self) -> str:
        return signature_key(self.exception, self.template, self.frames, self.test)
