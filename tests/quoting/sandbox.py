"""Paste a printed command into bash, in a sandbox, and see what it ran.

:func:`commands_in` finds the commands in a fix text by the shapes ``stackcheck.shellcmd``
documents (a command; prose ending in ``: CMD``; commands in backticks). :func:`parse` reads
one command the way a POSIX shell would and returns its simple commands as argv lists,
refusing anything the shell would expand (``$``, backticks, globs, ``~``, history ``!``)
outside quotes and every operator but ``&&`` and a final ``>> FILE``. :class:`Sandbox` pastes
the command into an interactive bash (``bash -i`` reading the text from stdin, as a terminal
paste is read) whose PATH holds only logging stubs, whose home and working directory is an
empty directory, and where every other command name, every builtin a fix uses and every
absolute interpreter path logs its argv (NUL-separated) instead of running.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

# Executables on the sandbox's PATH (each logs its argv; touch also creates its files), and
# the programs a printed command may start with (besides an absolute path).
STUBS = (
    "python",
    "python3",
    "pip",
    "pip3",
    "uv",
    "conda",
    "stackcheck",
    "nvidia-smi",
    "jupyter",
    "git",
    "rm",
    "touch",
)
PROGRAMS = frozenset(STUBS[:-1]) | {
    "unset",
    "export",
    "source",
    "echo",
    "apt-get",
    "docker",
    "ulimit",
    "torchrun",
    "chronyc",
    "py-spy",
}
BUILTINS = (
    "source",
    ".",
    "unset",
    "export",
    "echo",
    "cd",
    "eval",
    "exec",
    "printf",
    "set",
    "alias",
    "ulimit",
)
# Words of prose that would be commands: a fix must not leave one outside a recognised command.
STRAY = (
    "pip install",
    "pip uninstall",
    "-m pip",
    "stackcheck ",
    "kernelspec",
    "ipykernel install",
    "git rm",
    "rm -r",
    "nbconvert",
    "git lfs",
    "filter-repo",
    "uv venv",
    "conda create",
)
_FUNCTION_NAME = re.compile(r"/[A-Za-z0-9_./+-]+")
_OPERATORS = ("&&", "||", ">>", ";;", ";", "&", "|", ">", "<", "(", ")")


class Unsafe(AssertionError):
    """The command would make the shell expand, split or run something it does not show."""


def parse(text: str, *, in_backticks: bool = False) -> tuple[list[tuple[str, object]], int]:
    """Tokens of one command (``("word", str)``, ``("op", str)``) and where it ends: the end of
    ``text``, or (``in_backticks``) the unquoted backtick that closes the command."""
    tokens: list[tuple[str, object]] = []
    word: list[str] | None = None
    i, n = 0, len(text)

    def flush():
        nonlocal word
        if word is not None:
            tokens.append(("word", "".join(word)))
            word = None

    while i < n:
        c = text[i]
        if c == "`":
            if in_backticks:
                flush()
                return tokens, i
            raise Unsafe(f"unquoted backtick at {i} in {text!r}")
        if c in " \t":
            flush()
            i += 1
        elif c == "\n":
            flush()
            tokens.append(("op", ";"))
            i += 1
        elif c == "#" and word is None:
            end = text.find("\n", i)
            stop = text.find("`", i) if in_backticks else -1
            if stop != -1 and (end == -1 or stop < end):
                raise Unsafe(f"a comment swallows the closing backtick in {text!r}")
            i = n if end == -1 else end
        elif c == "'":
            end = text.find("'", i + 1)
            if end == -1:
                raise Unsafe(f"unterminated single quote in {text!r}")
            word = (word or []) + [text[i + 1 : end]]
            i = end + 1
        elif c == '"':
            j, out = i + 1, []
            while True:
                if j >= n:
                    raise Unsafe(f"unterminated double quote in {text!r}")
                d = text[j]
                if d == '"':
                    break
                if d in "$`":
                    raise Unsafe(f"{d!r} inside double quotes is expanded, in {text!r}")
                if d == "\\" and j + 1 < n and text[j + 1] in '$`"\\\n':
                    out.append(text[j + 1])
                    j += 2
                    continue
                out.append(d)
                j += 1
            word = (word or []) + ["".join(out)]
            i = j + 1
        elif c == "\\":
            if i + 1 >= n:
                raise Unsafe(f"trailing backslash in {text!r}")
            word = (word or []) + ([] if text[i + 1] == "\n" else [text[i + 1]])
            i += 2
        elif c in "$*?[{~!" or (c == "=" and not tokens_in_command(tokens) and word is not None):
            raise Unsafe(f"unquoted {c!r} is expanded by the shell, in {text!r}")
        elif any(text.startswith(op, i) for op in _OPERATORS):
            flush()
            op = next(op for op in _OPERATORS if text.startswith(op, i))
            tokens.append(("op", op))
            i += len(op)
        else:
            word = (word or []) + [c]
            i += 1
    if in_backticks:
        raise Unsafe(f"no closing backtick in {text!r}")
    flush()
    return tokens, n


def tokens_in_command(tokens) -> bool:
    """Whether the current simple command already has a word (so ``=`` is not an assignment)."""
    return bool(tokens) and tokens[-1][0] != "op"


def simple_commands(tokens) -> tuple[list[list[str]], list[str]]:
    """argv of each simple command of ``CMD && CMD …`` and the files of ``>> FILE`` redirects."""
    argvs: list[list[str]] = [[]]
    targets: list[str] = []
    it = iter(tokens)
    for kind, value in it:
        if kind == "word":
            argvs[-1].append(value)
        elif value == "&&":
            argvs.append([])
        elif value == ">>":
            kind2, target = next(it, ("op", "end"))
            if kind2 != "word":
                raise Unsafe(">> without a file")
            targets.append(target)
        else:
            raise Unsafe(f"operator {value!r} in a printed command")
    if any(not argv for argv in argvs):
        raise Unsafe("an empty command")
    return argvs, targets


def _first_word(text: str) -> str | None:
    """The first word of a command at the start of ``text`` (a bare one, or one that a
    backtick closes); None when no command starts there."""
    for in_backticks in (False, True):
        try:
            tokens, _ = parse(text, in_backticks=in_backticks)
        except Unsafe:
            continue
        return tokens[0][1] if tokens and tokens[0][0] == "word" else None
    return None


def starts_command(text: str) -> bool:
    word = _first_word(text)
    return word is not None and (word in PROGRAMS or word.startswith("/"))


def commands_in(fix: str) -> tuple[list[str], str]:
    """The commands of a fix text and the prose left around them."""
    commands: list[str] = []
    prose: list[str] = []
    i, n = 0, len(fix)
    start = 0
    while i < n:
        at_start = i == 0 or fix.startswith(": ", i - 2)
        if fix[i] == "`":
            body = fix[i + 1 :]
            if starts_command(body):
                _, end = parse(body, in_backticks=True)
                prose.append(fix[start:i])
                commands.append(body[:end])
                i = start = i + 1 + end + 1
                continue
            close = fix.find("`", i + 1)
            if close == -1:
                raise Unsafe(f"unbalanced backtick in {fix!r}")
            i = close + 1
            continue
        if at_start and starts_command(fix[i:]):
            prose.append(fix[start:i])
            commands.append(fix[i:])
            return commands, "".join(prose)
        i += 1
    prose.append(fix[start:])
    return commands, "".join(prose)


class Sandbox:
    """An empty home, a PATH of logging stubs, a bash that logs what a paste runs."""

    def __init__(self, root: Path):
        self.root = root
        self.home = root / "home"
        self.path_dir = root / "path"
        self.log = root / "argv.log"
        self.home.mkdir(parents=True)
        self.path_dir.mkdir()
        for name in STUBS:
            self.stub(self.path_dir / name, creates_files=name == "touch")
        self.runs = 0

    def stub(self, path: Path, *, creates_files: bool = False) -> Path:
        """An executable at ``path`` that logs its argv (``$0`` as invoked); ``touch`` also
        creates its files, so a payload that ran leaves a trace on disk."""
        path.parent.mkdir(parents=True, exist_ok=True)
        log = shlex.quote(str(self.log))
        body = f'{{ printf "%s\\0" "$(($# + 1))" "$0"; [ $# -eq 0 ] || printf "%s\\0" "$@"; }} >> {log}\n'
        if creates_files:
            body += 'for f in "$@"; do : > "$f"; done\n'
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)
        return path

    def _preamble(self, argvs: list[list[str]]) -> str:
        log = shlex.quote(str(self.log))
        lines = [
            "HISTFILE=",  # an interactive shell would save its history into the home directory
            f'__log() {{ {{ builtin printf "%s\\0" "$#"; builtin printf "%s\\0" "$@"; }} >> {log}; }}',
            'command_not_found_handle() { __log "$@"; return 0; }',
        ]
        lines += [f'{b}() {{ __log {b} "$@"; }}' for b in BUILTINS if b != "."]
        # absolute interpreter paths (the recorded machines', /usr/bin/python3) log instead of
        # running: a function takes precedence over a file; the hostile ones are stubs in root
        for name in sorted({argv[0] for argv in argvs if argv[0].startswith("/")}):
            if _FUNCTION_NAME.fullmatch(name):
                lines.append(f'function {name} {{ __log "${{FUNCNAME[0]}}" "$@"; }}')
            elif not name.startswith(str(self.root) + "/"):
                raise AssertionError(f"{name!r} would run a real program")
        return "\n".join(lines) + "\n"

    def paste(self, command: str) -> tuple[list[list[str]], list[list[str]], set[str]]:
        """(expected argvs, logged argvs, files that appeared in the home directory)."""
        tokens, _ = parse(command)
        argvs, targets = simple_commands(tokens)
        if len(argvs) == 1 and not targets:
            assert argvs[0] == shlex.split(command, comments=True), command
        logged, appeared = self.run(command, argvs)
        return argvs, logged, appeared ^ set(targets)

    def run(self, command: str, argvs: list[list[str]] = ()) -> tuple[list[list[str]], set[str]]:
        """Paste ``command`` as it is (``argvs``: the absolute interpreter paths to stand in
        for); the argvs logged and the files that appeared, which are then removed."""
        self.log.write_bytes(b"")
        env = {
            "PATH": str(self.path_dir),
            "HOME": str(self.home),
            "TERM": "dumb",
            "PS1": "",
            "PS2": "",
            "HISTFILE": "",
        }
        done = subprocess.run(
            ["/bin/bash", "--norc", "--noprofile", "--noediting", "-i"],
            input=self._preamble(argvs) + command + "\nexit 0\n",
            cwd=self.home,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        self.runs += 1
        assert done.returncode == 0, (command, done.stderr)
        logged = _read_log(self.log.read_bytes(), str(self.path_dir))
        appeared = {str(p.relative_to(self.home)) for p in self.home.rglob("*")}
        for p in sorted(self.home.rglob("*"), reverse=True):
            p.rmdir() if p.is_dir() else p.unlink()
        return logged, appeared

    def check(self, command: str) -> int:
        """Paste ``command``; assert it ran exactly its argvs and left no file. Returns how many
        commands it ran."""
        argvs, logged, stray_files = self.paste(command)
        assert logged == argvs, f"pasting {command!r} ran {logged}, not {argvs}"
        assert not stray_files, f"pasting {command!r} left {stray_files}"
        return len(logged)


def _read_log(data: bytes, path_dir: str) -> list[list[str]]:
    fields = data.decode("utf-8", "surrogateescape").split("\0")
    out, i = [], 0
    while i < len(fields) - 1:
        count = int(fields[i])
        argv = fields[i + 1 : i + 1 + count]
        if argv and argv[0].startswith(path_dir + "/"):
            argv[0] = argv[0][len(path_dir) + 1 :]
        out.append(argv)
        i += 1 + count
    return out
