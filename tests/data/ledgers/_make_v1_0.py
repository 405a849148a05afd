"""How tests/data/ledgers/v1.0 was written: by stackcheck at commit 313eb01 (schema 1.0, before
the chain), run from the repository root of a checkout of that commit:

    python tests/data/ledgers/_make_v1_0.py OUT_DIR

Three records of one candidate (a baseline from the H100 snapshot, a close rerun from the vLLM
H100 snapshot, a slow rerun from the 8xA100 snapshot), the baseline promoted to reproduced, a
decision, and the two flag events the slow rerun wrote. The index is checkpointed so that
ledger.sqlite alone holds it. Current versions cannot write this layout; keep the files as they are.
"""

import json
import shutil
import sys
from pathlib import Path

sys.path[:0] = ["src", "."]

from stackcheck.catalog import load_catalog  # noqa: E402
from stackcheck.results import record  # noqa: E402
from stackcheck.results.ledger import Ledger  # noqa: E402
from tests.results.conftest import REGISTRY, full_draft, snapshot_path  # noqa: E402

out = Path(sys.argv[1])
shutil.rmtree(out, ignore_errors=True)
out.mkdir(parents=True)
work = Path("/tmp/i9/oldwork")
shutil.rmtree(work, ignore_errors=True)
work.mkdir(parents=True)
(work / "reg.json").write_text(json.dumps(REGISTRY))
log = work / "run.log"
log.write_text("step 1 latency 41.0\nstep 2 latency 41.2\nstep 3 latency 41.9\n")
catalog = load_catalog(str(work / "reg.json"))


def metric(value, reps):
    return {"metrics.latency_p50_ms": {"value": value, "unit": "ms", "repetitions": reps}}


with Ledger(out / "ledger") as ledger:

    def rec(draft, snapshot):
        return record(draft, snapshot=snapshot_path(snapshot), ledger=ledger, catalog=catalog, cwd=work)

    a = rec(full_draft(log, evidence="measured"), "h100-single")
    rec(
        full_draft(log, run_label="rerun", evidence="measured", **metric(42.5, [42.1, 42.5, 42.9])),
        "vllm-011-h100",
    )
    ledger.promote(a.record, "reproduced")
    ledger.decide(a.record.topic, a.record.run_label, "keep sdpa")
    slow = rec(
        full_draft(log, run_label="slow", evidence="measured", **metric(60.0, [59.0, 60.0, 61.0])),
        "multi-gpu-8xa100",
    )
    print(len(slow.flags), [e.stored().evidence for e in ledger.entries()])
    ledger.index.query("PRAGMA wal_checkpoint(TRUNCATE)")
