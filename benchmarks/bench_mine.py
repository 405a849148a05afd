"""`stackcheck mine` budgets, measured side by side (DESIGN.md: ratios in one run, interleaved medians).

1. Throughput on a real GitHub Actions run (PyTables wheels, GHALogs, MSR 2025; 45k lines of
   job logs, 90k with the step files), one core: Drain3 alone (its TemplateMiner, every line),
   our template miner (masks + exact-line cache + Drain, every line), and the mining scan
   itself (regions, pytest, facts, signatures: what `mine ingest` runs before its one
   transaction). Peak memory of the scan over the run and over the run repeated 8x.
2. Template accuracy on Loghub 2k (16 systems, ground-truth EventIds; Zhu et al. ICSE-SEIP 2019):
   GA per system of Drain3 with the benchmark settings of logparser (regexes, similarity,
   depth per system), of our miner with the same settings plus its masks, and of our miner
   with its masks alone and Drain's default settings.
3. LogChunks (Brandt et al., MSR 2020): share of the 797 labelled failure chunks whose first
   line is inside an extracted region: triage's regions, and mining's (plus failed steps' tails).
4. `mine rules` over a store of 10,000 jobs built from real failure lines (LogChunks chunks and
   the matrix's pytest failures) across 18 cells: ingest and rules time, peak memory; SQLite,
   and PostgreSQL when STACKCHECK_TEST_POSTGRES_DSN is set.

Usage: python benchmarks/bench_mine.py [--only throughput,loghub,logchunks,rules] [--rounds 3]
       [--drain3-lines N] [--jobs 10000] [--json]
"""

from __future__ import annotations

import argparse
import csv
import gc
import importlib.util
import json
import os
import random
import re
import statistics
import sys
import tarfile
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
DATA = Path(os.environ.get("STACKCHECK_SHARED_DIR", ROOT.parents[1] / "shared")) / "data" / "logs"
if not DATA.is_dir():
    DATA = Path("/work/shared/data/logs")

# logparser's Drain benchmark settings per Loghub system: (regexes, similarity threshold, depth)
LOGHUB = {
    "HDFS": ([r"blk_-?\d+", r"(\d+\.){3}\d+(:\d+)?"], 0.5, 4),
    "Hadoop": ([r"(\d+\.){3}\d+"], 0.5, 4),
    "Spark": ([r"(\d+\.){3}\d+", r"\b[KGTM]?B\b", r"([\w-]+\.){2,}[\w-]+"], 0.5, 4),
    "Zookeeper": ([r"(/|)(\d+\.){3}\d+(:\d+)?"], 0.5, 4),
    "BGL": ([r"core\.\d+"], 0.5, 4),
    "HPC": ([r"=\d+"], 0.5, 4),
    "Thunderbird": ([r"(\d+\.){3}\d+"], 0.5, 4),
    "Windows": ([r"0x.*?\s"], 0.7, 5),
    "Linux": ([r"(\d+\.){3}\d+", r"\d{2}:\d{2}:\d{2}"], 0.39, 6),
    "Android": (
        [r"(/[\w-]+)+", r"([\w-]+\.){2,}[\w-]+", r"\b(\-?\+?\d+)\b|\b0[Xx][a-fA-F\d]+\b|\b[a-fA-F\d]{4,}\b"],
        0.2,
        6,
    ),
    "HealthApp": ([], 0.2, 4),
    "Apache": ([r"(\d+\.){3}\d+"], 0.5, 4),
    "Proxifier": ([r"<\d+\ssec", r"([\w-]+\.)+[\w-]+(:\d+)?", r"\d{2}:\d{2}(:\d{2})*", r"[KGTM]B"], 0.6, 3),
    "OpenSSH": ([r"(\d+\.){3}\d+", r"([\w-]+\.){2,}[\w-]+"], 0.6, 5),
    "OpenStack": ([r"((\d+\.){3}\d+,?)+", r"/.+?\s", r"\d+"], 0.5, 5),
    "Mac": ([r"([\w-]+\.){2,}[\w-]+"], 0.7, 6),
}


def extract(archive: str, dest: Path) -> Path:
    with tarfile.open(DATA / archive) as tar:
        tar.extractall(dest, filter="data")
    return dest


def one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        cpu = sorted(os.sched_getaffinity(0))[0]
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned"


# ----- 1. throughput -----------------------------------------------------------------------------


def run_lines(folder: Path) -> list[str]:
    from stackcheck.triage.reader import iter_lines

    lines = []
    for path in sorted(folder.rglob("*.txt")):
        with open(path, "rb") as fh:
            lines.extend(iter_lines(fh, str(path)))
    return lines


def drain3_alone(lines: list[str]) -> float:
    from drain3 import TemplateMiner
    from drain3.template_miner_config import TemplateMinerConfig

    miner = TemplateMiner(config=TemplateMinerConfig())
    start = time.perf_counter()
    for line in lines:
        miner.add_log_message(line)
    return len(lines) / (time.perf_counter() - start)


def ours_every_line(lines: list[str]) -> float:
    from stackcheck.mining.templates import TemplateMiner

    miner = TemplateMiner()
    start = time.perf_counter()
    for line in lines:
        miner.add(line)
    return len(lines) / (time.perf_counter() - start)


def mining_scan(folder: Path) -> tuple[float, int]:
    """Lines per second of discover + scan (a folder or a zip): all `mine ingest` does before writing."""
    from stackcheck.mining.ingest import scan_jobs
    from stackcheck.mining.inputs import discover

    start = time.perf_counter()
    records = scan_jobs(discover(folder))
    elapsed = time.perf_counter() - start
    lines = sum(r.lines for r in records)
    return lines / elapsed, lines


def mining_ingest(folder: Path, db: Path) -> float:
    """Lines per second of the whole ingest: discover, scan, and the one transaction into SQLite."""
    from stackcheck.mining.ingest import scan_jobs
    from stackcheck.mining.inputs import discover
    from stackcheck.mining.store import MineStore

    start = time.perf_counter()
    records = scan_jobs(discover(folder))
    with MineStore(str(db)) as st:
        st.ingest(records, source=str(folder), now="2026-01-01T00:00:00Z")
    return sum(r.lines for r in records) / (time.perf_counter() - start)


def peak_scan(path: Path) -> tuple[int, int]:
    """(lines, peak traced bytes) of scanning one log file."""
    from stackcheck.mining.extract import scan_lines
    from stackcheck.triage.reader import iter_lines

    gc.collect()
    tracemalloc.start()
    with open(path, "rb") as fh:
        scan = scan_lines(iter_lines(fh, str(path)))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return scan.lines, peak


def bench_throughput(args, tmp: Path) -> dict:
    folder = extract("gha_run_example.tar.xz", tmp / "gha") / "gha_example"
    lines = run_lines(folder)
    # an even sample: the run's first lines are its easiest (short setup steps)
    step = max(1, len(lines) // args.drain3_lines) if args.drain3_lines else 1
    sample = lines[::step]
    archive = tmp / "logs_6262785113.zip"  # the run as GitHub serves it: a deflated zip
    import zipfile

    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*.txt")):
            zf.write(path, path.relative_to(folder).as_posix())
    rows = {
        "drain3": [],
        "ours_every_line": [],
        "mining_scan": [],
        "mining_scan_zip": [],
        "mining_ingest": [],
    }
    scanned = 0
    for i in range(args.rounds):  # interleaved
        rows["drain3"].append(drain3_alone(sample))
        rows["ours_every_line"].append(ours_every_line(lines))
        rate, scanned = mining_scan(folder)
        rows["mining_scan"].append(rate)
        rows["mining_scan_zip"].append(mining_scan(archive)[0])
        rows["mining_ingest"].append(mining_ingest(folder, tmp / f"ingest-{i}.sqlite"))
    jobs = sorted(p for p in folder.glob("*.txt"))
    big = tmp / "run-x8.log"
    with open(big, "wb") as out:
        for _ in range(8):
            for p in jobs:
                out.write(p.read_bytes())
    once = tmp / "run-x1.log"
    with open(once, "wb") as out:
        for p in jobs:
            out.write(p.read_bytes())
    (n1, peak1), (n8, peak8) = peak_scan(once), peak_scan(big)
    med = {k: statistics.median(v) for k, v in rows.items()}
    return {
        "lines_all_files": len(lines),
        "lines_scanned": scanned,
        "drain3_sample": len(sample),
        "lines_per_s": {k: round(v) for k, v in med.items()},
        "rounds": {k: [round(x) for x in v] for k, v in rows.items()},
        "vs_drain3": {k: round(v / med["drain3"], 1) for k, v in med.items()},
        "peak_bytes": {f"{n1} lines": peak1, f"{n8} lines": peak8},
    }


# ----- 2. Loghub grouping accuracy ----------------------------------------------------------------


def loghub(root: Path, system: str) -> tuple[list[str], list[str]]:
    with open(
        root / "loghub" / system / f"{system}_2k.log_structured.csv", newline="", encoding="utf-8"
    ) as fh:
        rows = list(csv.DictReader(fh))
    return [r["Content"] for r in rows], [r["EventId"] for r in rows]


def bench_loghub(args, tmp: Path) -> dict:
    from drain3 import TemplateMiner as Drain3
    from drain3.masking import MaskingInstruction
    from drain3.template_miner_config import TemplateMinerConfig

    from stackcheck.mining.metrics import grouping_accuracy
    from stackcheck.mining.templates import TemplateMiner

    root = extract("loghub_2k.tar.xz", tmp / "loghub")
    out = {}
    for system, (regexes, sim, depth) in LOGHUB.items():
        lines, truth = loghub(root, system)
        cfg = TemplateMinerConfig()
        cfg.drain_sim_th, cfg.drain_depth = sim, depth
        cfg.masking_instructions = [MaskingInstruction(r, "*") for r in regexes]
        d3 = Drain3(config=cfg)
        ga_d3 = grouping_accuracy([d3.add_log_message(x.strip())["cluster_id"] for x in lines], truth)
        ours = TemplateMiner(sim_th=sim, depth=depth, extra_masks=regexes)
        ga_ours = grouping_accuracy([ours.add(x) for x in lines], truth)
        plain = TemplateMiner()
        ga_plain = grouping_accuracy([plain.add(x) for x in lines], truth)
        out[system] = {
            "drain3_benchmark": round(ga_d3, 3),
            "ours_benchmark": round(ga_ours, 3),
            "ours_defaults": round(ga_plain, 3),
        }
    mean = {k: round(statistics.mean(v[k] for v in out.values()), 4) for k in next(iter(out.values()))}
    return {"systems": out, "mean": mean}


# ----- 3. LogChunks -------------------------------------------------------------------------------


def bench_logchunks(args, tmp: Path) -> dict:
    spec = importlib.util.spec_from_file_location("triage_regions", ROOT / "benchmarks" / "triage_regions.py")
    tr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tr)
    from stackcheck.mining.extract import mining_regions
    from stackcheck.triage.reader import iter_lines
    from stackcheck.triage.regions import extract_regions

    root = extract("logchunks.tar.xz", tmp / "logchunks")
    n = found_triage = found_mining = 0
    kept_t = kept_m = total = 0
    for log, chunk in tr.examples(root):
        with open(log, "rb") as fh:
            lines = [line.strip() for line in iter_lines(fh, str(log))]
        t = [line.strip() for r in extract_regions(lines) for line in r.lines]
        m = [line.strip() for r in mining_regions(lines) for line in r.lines]
        n += 1
        found_triage += any(chunk[0] in line for line in t)
        found_mining += any(chunk[0] in line for line in m)
        kept_t, kept_m, total = kept_t + len(t), kept_m + len(m), total + len(lines)
    return {
        "examples": n,
        "found_triage": round(found_triage / n, 3),
        "found_mining": round(found_mining / n, 3),
        "kept_triage": round(kept_t / total, 3),
        "kept_mining": round(kept_m / total, 3),
    }


# ----- 4. mine rules over 10,000 jobs -------------------------------------------------------------


def real_failure_lines(tmp: Path) -> list[tuple[str, str]]:
    """(exception, message) pairs from real logs: the labelled LogChunks chunks' first lines and
    the matrix's pytest failures."""
    spec = importlib.util.spec_from_file_location("triage_regions", ROOT / "benchmarks" / "triage_regions.py")
    tr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tr)
    root = tmp / "logchunks"
    if not root.is_dir():
        extract("logchunks.tar.xz", root)
    seen, out = set(), []
    for _log, chunk in tr.examples(root):
        line = chunk[0][:300]
        if len(line) > 12 and line not in seen:
            seen.add(line)
            m = re.match(r"^((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception)): (.+)$", line)
            out.append((m.group(1), m.group(2)) if m else ("", line))
    out += [
        ("AttributeError", "`np.float_` was removed in the NumPy 2.0 release. Use `np.float64` instead."),
        ("AttributeError", "module 'numpy' has no attribute 'product'"),
        ("AssertionError", "tpu is never the default device"),
    ]
    return out


def synthetic_records(n_jobs: int, pool: list[tuple[str, str]], seed: int = 7):
    from stackcheck.mining.ingest import JobRecord
    from stackcheck.mining.signature import Failure

    rng = random.Random(seed)
    cells = [
        {
            "python": py,
            "pkg:numpy": np_,
            "os": os_,
            "platform": "windows" if os_.startswith("win") else "linux",
        }
        for py in ("3.10.14", "3.11.9", "3.12.4")
        for np_ in ("1.26.4", "2.0.2", "2.2.6")
        for os_ in ("ubuntu-22.04", "windows-2022")
    ]
    conditions = [
        lambda c: c["pkg:numpy"] >= "2",
        lambda c: c["platform"] == "windows",
        lambda c: c["python"] >= "3.12",
        lambda c: True,
    ]
    causes = []
    for i in range(55):  # 40 environment-bound (2 a family), 10 flaky, 5 code bugs
        kind = "env" if i < 40 else "flaky" if i < 50 else "bug"
        exc, msg = pool[rng.randrange(len(pool))]
        causes.append(
            {
                "family": f"job-{i % 20 if kind == 'env' else i % 10:02d}",
                "kind": kind,
                "when": conditions[i % 3] if kind == "env" else conditions[3],
                "p": 0.2 if kind == "flaky" else 1.0,
                "exc": exc,
                "msg": msg,
                "test": f"tests/test_{i}.py::test_{i}",
            }
        )
    records = []
    for j in range(n_jobs):
        family = f"job-{rng.randrange(20):02d}"
        facts = dict(rng.choice(cells))
        failures = []
        for c in causes:
            if c["family"] == family and c["when"](facts) and rng.random() < c["p"]:
                msg = re.sub(r"\d+", lambda m: str(rng.randrange(10 ** len(m.group(0)))), c["msg"])
                failures.append(
                    Failure(c["exc"], msg, (f"src/{family}.py:run",), test=c["test"], kind="pytest")
                )
        run = f"{10000 + j // 100}"
        records.append(
            JobRecord(
                run=run,
                job=f"{family} ({facts['os']}, {facts['python'][:4]}, numpy-{facts['pkg:numpy']}) #{j}",
                attempt=1 + (j % 100) // 50,
                family=family,
                outcome="failed" if failures else "passed",
                facts=facts,
                failures=failures,
                counts={f.key: 1 for f in failures},
                lines=200,
            )
        )
    return records


def time_rules(url: str, records) -> dict:
    from stackcheck.mining.rules import build_rules
    from stackcheck.mining.store import MineStore

    with MineStore(url) as st:
        start = time.perf_counter()
        st.ingest(records, source="synthetic", now="2026-01-01T00:00:00Z")
        ingest_s = time.perf_counter() - start
    gc.collect()
    tracemalloc.start()
    with MineStore(url) as st:
        start = time.perf_counter()
        mined = build_rules(st)
        rules_s = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    kinds = {}
    for r in mined.rules.rules:
        kinds[r.mined.reproducibility] = kinds.get(r.mined.reproducibility, 0) + 1
    return {
        "jobs": mined.jobs,
        "failed": mined.failed_jobs,
        "rules": len(mined.rules.rules),
        "separated": sum(r.mined.separated for r in mined.rules.rules),
        "reproducibility": kinds,
        "coverage": mined.coverage,
        "ingest_s": round(ingest_s, 2),
        "rules_s": round(rules_s, 2),
        "rules_peak_mib": round(peak / 2**20, 1),
    }


def bench_rules(args, tmp: Path) -> dict:
    records = synthetic_records(args.jobs, real_failure_lines(tmp))
    out = {"sqlite": time_rules(str(tmp / "store.sqlite"), records)}
    dsn = os.environ.get("STACKCHECK_TEST_POSTGRES_DSN")
    if dsn:
        import psycopg

        schema = f"bench_mine_{os.getpid()}"
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        try:
            sep = "&" if "?" in dsn else "?"
            out["postgresql"] = time_rules(f"{dsn}{sep}options=-csearch_path%3D{schema}", records)
        finally:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", default="throughput,loghub,logchunks,rules")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--drain3-lines", type=int, default=0, help="Drain3 on an even sample of N lines (0: all)"
    )
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = {"core": one_core()}
    benches = {
        "throughput": bench_throughput,
        "loghub": bench_loghub,
        "logchunks": bench_logchunks,
        "rules": bench_rules,
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only.split(","):
            results[name] = benches[name](args, Path(tmp))
            if not args.json:
                report(name, results[name])
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()


def report(name: str, r: dict) -> None:
    if name == "throughput":
        lps = r["lines_per_s"]
        print(
            f"throughput ({r['lines_scanned']} job-log lines scanned; every-line miners on "
            f"{r['lines_all_files']} "
            f"lines, Drain3 on {r['drain3_sample']} of them), medians of interleaved rounds, one core:"
        )
        for k, v in lps.items():
            print(f"  {k:<16} {v:>9,} lines/s  ({r['vs_drain3'][k]}x Drain3)  rounds {r['rounds'][k]}")
        print(
            "  peak memory of the scan: "
            + ", ".join(f"{k}: {v / 2**20:.1f} MiB" for k, v in r["peak_bytes"].items())
        )
    elif name == "loghub":
        print("Loghub 2k grouping accuracy      Drain3(bench)  ours(bench)  ours(defaults)")
        for system, v in r["systems"].items():
            print(
                f"  {system:<30} {v['drain3_benchmark']:>12.3f} {v['ours_benchmark']:>12.3f}"
                f" {v['ours_defaults']:>15.3f}"
            )
        m = r["mean"]
        print(
            f"  {'mean':<30} {m['drain3_benchmark']:>12.4f} {m['ours_benchmark']:>12.4f}"
            f" {m['ours_defaults']:>15.4f}"
        )
    elif name == "logchunks":
        print(
            f"LogChunks: {r['examples']} labelled chunks; first line inside a region: "
            f"triage {r['found_triage']:.1%}, mining {r['found_mining']:.1%} "
            f"(regions keep {r['kept_triage']:.1%} / {r['kept_mining']:.1%} of the lines)"
        )
    elif name == "rules":
        for backend, v in r.items():
            print(
                f"mine rules, {backend}: {v['jobs']} jobs ({v['failed']} failed) "
                f"ingested in {v['ingest_s']} s; "
                f"rules in {v['rules_s']} s, peak {v['rules_peak_mib']} MiB; {v['rules']} rules "
                f"({v['separated']} env-scoped, {v['reproducibility']}), coverage {v['coverage']:.1%}"
            )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
