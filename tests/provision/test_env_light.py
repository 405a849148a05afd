"""``stackcheck env create`` without click (stackcheck.cli.env_create.light, taken by the
start-up path): the parameters it reads are click's own, every argument list click's parser
has a say in goes through click, and what the program writes (stdout, stderr, exit code, what
is left on disk) is byte for byte what the click command writes, without importing click.

The runs are real processes (the console script): the start-up path is taken only there. The
reference is click's command, run by ``main(ARGS)`` (which never takes the start-up path)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.cli.env_create import DEFAULTS, parse
from tests.provision.conftest import offline

STACKCHECK = str(Path(sys.executable).with_name("stackcheck"))


def test_parse_reads_what_click_would_pass():
    got = parse(["-p", "X", "--path=d", "--find-links", "a", "--find-links=b", "--no-index", "--json"])
    assert got == {**DEFAULTS, "profile_id": "X", "path": "d", "find_links": ("a", "b"), "no_index": True,
                   "as_json": True}  # fmt: skip
    got = parse(["--profile=X", "--installer", "pip", "--cuda", "cu126", "--dry-run", "--force"])
    assert got == {**DEFAULTS, "profile_id": "X", "installer": "pip", "cuda": "cu126", "dry_run": True,
                   "force": True}  # fmt: skip
    got = parse(["-p", "X", "--extra-index-url", "u1", "--extra-index-url", "u2", "--index-url", "i"])
    assert got == {**DEFAULTS, "profile_id": "X", "extra_index_urls": ("u1", "u2"), "index_url": "i"}
    assert parse(["-p", "X", "--registry", "r", "--python", "3.12", "--kernel", "k", "--snapshot", "s"]) == {
        **DEFAULTS, "profile_id": "X", "registry": "r", "python": "3.12", "kernel": "k", "snapshot_file": "s",
    }  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [
        [],  # no --profile: click's usage error
        ["--path", "d"],
        ["-p"],  # a value missing
        ["-p", "X", "--path"],
        ["-p", "--json"],  # click reads "--json" as the ID
        ["-p", "X", "--path", "-d"],
        ["-p", ""],
        ["--profile="],
        ["-pX"],
        ["-p=X"],
        ["-p", "X", "-p", "Y"],  # repeated: click keeps the last
        ["-p", "X", "--force", "--force"],
        ["-p", "X", "--json=1"],
        ["-p", "X", "--installer", "conda"],  # click.Choice words the error
        ["-p", "X", "--instal", "uv"],  # click suggests the option
        ["-p", "X", "--help"],
        ["-p", "X", "-h"],
        ["-p", "X", "extra"],  # an argument
        ["-p", "X", "--"],
        ["-p", "X", "--no-color"],  # the top group's option, not the command's
    ],
)
def test_what_clicks_parser_has_a_say_in_goes_through_click(args):
    assert parse(args) is None


def _run(argv, env, target: Path) -> tuple[int, bytes, bytes, list[str]]:
    done = subprocess.run(argv, env=env, capture_output=True, timeout=300)
    left = sorted(p.name for p in target.iterdir()) if target.exists() else []
    if target.exists():
        shutil.rmtree(target)
    return done.returncode, done.stdout, done.stderr, left


LOADED = (
    "import atexit, sys\n"
    "seen = lambda: ('click' in sys.modules, 'stackcheck.cli.env' in sys.modules)\n"
    "atexit.register(lambda: sys.stderr.write('click, command loaded: %s %s' % seen()))\n"
    "sys.argv = ['stackcheck', *sys.argv[1:]]\n"
    "from stackcheck.cli import main\n"
    "main()\n"
)


@pytest.mark.parametrize(
    "args, code",
    [
        (["-p", "TINY-CPU"], 0),
        (["-p", "TINY-CPU", "FORCE_COLOR=1"], 0),  # the report painted through a pipe, as click paints it
        (["--profile=TINY-CPU", "--json"], 0),
        (["-p", "TINY-CPU", "--dry-run"], 0),
        (["-p", "TINY-CPU", "--dry-run", "--json", "--installer", "pip"], 0),
        (["-p", "TINY-BAD"], 1),  # the forbidden package refused, its chain named
        (["-p", "NO-SUCH-PROFILE"], 2),
        (["-p", "bad/id"], 2),  # the identifier rule, as the option's callback
        (["-p", "TINY-CPU", "--kernel", "bad name"], 2),
        (["-p", "TINY-CPU", "--python", "3.x"], 2),
        (["-p", "TINY-TORCH", "--cuda", "cu9x"], 2),  # the plan's own InputError
    ],
)
def test_create_without_click_is_the_click_commands_output(registry, wheelhouse, tmp_path, args, code):
    target = tmp_path / "env"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NO_COLOR", "FORCE_COLOR")}
    env.update(a.split("=", 1) for a in args if a.startswith("FORCE_COLOR="))
    args = [a for a in args if not a.startswith("FORCE_COLOR=")]
    argv = ["env", "create", "--registry", registry, "--path", str(target), *args, *offline(wheelhouse)]
    with open(STACKCHECK, encoding="utf-8") as fh:
        python = fh.readline()[2:].strip()  # the console script's interpreter
    light = _run([python, "-c", LOADED, *argv], env, target)
    reference = _run([python, "-c", f"from stackcheck.cli import main; main({argv!r})"], env, target)
    assert light[1:] != (b"", b"", [])
    assert light[0] == reference[0] == code, light[2]
    # the start-up path was taken: the click command never imported, nor click (but to word an error)
    marker = b"click, command loaded: %s False" % (b"True" if code else b"False")
    assert light[2].endswith(marker)
    stderr = light[2].removesuffix(marker)
    assert (light[1], stderr, light[3]) == reference[1:]
    assert bool(light[3]) == (code == 0 and "--dry-run" not in args)  # a failed run leaves nothing
    assert (b"\x1b[" in light[1]) == ("FORCE_COLOR" in env)


def test_an_ascii_stderr_goes_through_click(registry, tmp_path):
    target = tmp_path / "env"
    argv = ["env", "create", "--registry", registry, "-p", "TINY-CPU", "--path", str(target), "--dry-run"]
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    done = subprocess.run([sys.executable, "-c", LOADED, *argv], env=env, capture_output=True, timeout=120)
    assert done.returncode == 0
    assert done.stderr.endswith(b"click, command loaded: True True")  # click.echo re-wraps such a stream
