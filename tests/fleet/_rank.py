"""One rank of a test job: ``python -m torch.distributed.run ... tests/fleet/_rank.py ARGS``.

Applies this rank's part of ``FLEET_TEST_PLAN`` (JSON: rank → edits), runs ``stackcheck ARGS``
in-process with stdout going to ``$FLEET_TEST_OUT/stdout-RANK.txt``, records the exit code in
``exit-RANK.txt`` and waits (bounded) until every rank has recorded its own: torchrun stops the
other workers as soon as one exits non-zero, and the test must see every rank's code.

Edits a rank may get: ``env`` (variables set before the probe), ``versions`` (distribution name
→ the version its snapshot reports), ``never_join`` (a collective this rank never arrives at:
it sleeps past the timeout, as a rank stuck in user code does).
"""

import contextlib
import json
import os
import sys
import time
from pathlib import Path

rank = os.environ["RANK"]
world = int(os.environ["WORLD_SIZE"])
out = Path(os.environ["FLEET_TEST_OUT"])
plan = json.loads(os.environ.get("FLEET_TEST_PLAN", "{}")).get(rank, {})

os.environ.update(plan.get("env", {}))

if plan.get("versions"):
    import stackcheck.environment as environment

    real_obtain = environment.obtain

    def obtain(*args, **kwargs):
        snap = real_obtain(*args, **kwargs)
        for d in snap.packages.distributions:
            if d.name.lower() in plan["versions"]:
                d.version = plan["versions"][d.name.lower()]
        snap.__dict__.pop("_importable", None)  # the lookup cache, if a check built it already
        return snap

    environment.obtain = obtain

if plan.get("never_join"):
    import stackcheck.fleet.collectives as collectives

    real_step = collectives.run_step

    def run_step(fleet, name, op):
        if name != plan["never_join"]:
            return real_step(fleet, name, op)
        time.sleep(fleet.timeout_s + 1)
        return collectives.Step(name=name, rank=fleet.rank, timed_out=True, detail="never joined")

    collectives.run_step = run_step

from stackcheck.cli import main  # noqa: E402

code = 0
with open(out / f"stdout-{rank}.txt", "w", encoding="utf-8") as fh, contextlib.redirect_stdout(fh):
    try:
        main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # a traceback is a failure the test shows (stderr), never a hang
        import traceback

        traceback.print_exc()
        code = 99
(out / f"exit-{rank}.txt").write_text(str(code), encoding="utf-8")
deadline = time.monotonic() + 60
while time.monotonic() < deadline and not all((out / f"exit-{r}.txt").exists() for r in range(world)):
    time.sleep(0.05)
sys.exit(code)
