"""The review page without a browser: what it shows and from which files, marked where a file
cannot be trusted, self-contained (nothing fetched from anywhere), secrets never on it; an
unwritable directory is one line, exit 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

from stackcheck.report.gather import lower_is_better
from stackcheck.report.svg import _ticks, line_chart
from tests.factories import SNAPSHOTS
from tests.report.conftest import SECRET_PASSWORD, SECRET_TOKEN


def build(cli_main, out: Path, built, *extra: str, ledger: Path | None = None):
    ledger_dir, registry, mined, report, _ = built
    return cli_main(
        "report",
        "--html",
        str(out),
        "--ledger-dir",
        str(ledger or ledger_dir),
        "--rules",
        str(mined),
        "--preflight",
        str(report),
        "--snapshot",
        str(SNAPSHOTS / "cpu-laptop.json"),
        "--registry",
        str(registry),
        *extra,
    )


def rows(page: str, kind: str) -> list[str]:
    return re.findall(rf'<tr data-row="{kind}".*?</tr>', page, re.S)


def test_page_shows_matrix_ledger_charts_and_rules(built, tmp_path, cli_main):
    code, out, err = build(cli_main, tmp_path / "site", built, "--json")
    assert (code, err) == (0, "")
    summary = json.loads(out)
    assert summary == {
        "index": str(tmp_path / "site" / "index.html"),
        "cells": 5,
        "topics": 3,
        "charts": 2,
        "rules": 2,
        "problems": 0,
    }
    page = (tmp_path / "site" / "index.html").read_text()
    h100 = "1x NVIDIA H100 80GB HBM3 · Python 3.12.11 · torch 2.8.0+cu128"
    header = re.search(r"<thead><tr><th scope=\"col\">profile</th>(.*?)</tr>", page).group(1)
    assert re.findall(r'<th scope="col">(.*?)</th>', header) == [h100, "cpu-laptop", "node-7"]
    matrix = rows(page, "matrix")
    assert [re.findall(r'data-verdict="(\w+)"', r) for r in matrix] == [
        ["blocked", "blocked"],  # LAB-BROKEN: ledger record, cpu-laptop judged now; node-7 not judged
        ["ok", "ok", "blocked"],  # LAB-GPU: ledger, cpu-laptop, the node-7 report
    ]
    assert "not judged" in matrix[0]
    # click-through: every verdict links to its detail, which lists the checks and fixes
    anchors = re.findall(r'<a href="#(cell-\d+)"', "".join(matrix))
    assert sorted(anchors) == [f"cell-{i}" for i in range(5)]
    node7 = re.search(r'<div class="detail" id="cell-4".*?</div>', page, re.S).group(0)
    assert "LAB-GPU on node-7" in node7 and "<strong>PKG001</strong> required distributions" in node7
    assert "transformers&gt;=4.50" in node7 and "Checks that are not ok (1; 1 ok)" in node7
    broken = re.search(r'<div class="detail" id="cell-0".*?</div>', page, re.S).group(0)
    assert "<strong>PKG001</strong> Requirement installed and satisfied" in broken  # its explanation
    # the ledger: every record, its level, what the next promotion still needs
    records = rows(page, "record")
    assert len(records) == 9
    _, _, _, _, ids = built
    hf1 = next(r for r in records if ids["hf-run1"] in r)
    assert "<td data-level>measured</td>" in hf1 and "<strong>reproduced</strong>:" in hf1
    assert "an independent run with the same identity key from another environment snapshot" in hf1
    smoke = next(r for r in records if ids["broken"] in r)
    assert "<strong>mechanism</strong>:" in smoke and "<td data-level>smoke</td>" in smoke
    decisions = rows(page, "decision")
    assert len(decisions) == 1
    assert "ship sdpa; flash-attn gains &lt;10% <strong>(current)</strong>" in decisions[0]
    diffs = re.findall(r'<div class="diff" data-row="diff">.*?</div>', page, re.S)
    assert len(diffs) == 3  # one per topic: each has two candidates
    latency = next(d for d in diffs if "attn_implementation" in d and "flash_attention_2" in d)
    assert "backend.args.attn_implementation: sdpa → flash_attention_2" in latency
    assert "latency_p50_ms: 41.2 → 38 ms  (-7.8%)" in latency
    # charts: one per (topic, metric), a series per backend, the 33 % drop marked
    figures = re.findall(r'<figure data-row="chart" data-metric="(\w+)" data-regressions="(\d+)">', page)
    assert figures == [("throughput", "1"), ("latency_p50_ms", "0")]
    assert page.count('<path class="regression"') == 1
    assert "transformers 4.57.1 hf-run3: 700 tok/s — regression" in page
    # the compatibility matrix: each backend's latest run per environment
    compat = rows(page, "compat")
    assert [re.search(r'<th scope="row">(.*?)</th>', r).group(1) for r in compat] == [
        "transformers 4.57.1",
        "vllm 0.11.0",
    ]
    assert re.findall(r'data-status="(\w+)"', "".join(compat)) == ["ok", "failed"]
    assert "CUDA out of memory at max_num_seqs 256" in compat[1]
    # mined rules: coverage, reproduce rate, false positives, scope
    rules = rows(page, "rule")
    assert [re.search(r'data-rule="([\w-]+)"', r).group(1) for r in rules] == ["MINED-A1", "MINED-B2"]
    assert '<td class="num">60% (12)</td>' in rules[0] and "96% of 24 (≥0.79) flaky" in rules[0]
    assert "<td>none: no separating fact</td>" in rules[1]
    assert "Every ledger file is intact." in page


def test_page_is_self_contained_and_carries_no_secret(built, tmp_path, cli_main):
    code, _, _ = build(cli_main, tmp_path / "site", built)
    assert code == 0
    page = (tmp_path / "site" / "index.html").read_text()
    assert SECRET_TOKEN not in page and SECRET_PASSWORD not in page
    assert "HF_TOKEN=&lt;redacted&gt; in the environment" in page
    assert "https://&lt;redacted&gt;@pypi.example.org/simple" in page
    # nothing is fetched: no external script, style sheet, font, image or frame
    assert re.findall(r'(?:src|href)="(?!#)[^"]*"', page) == []
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert page.count("<script>") == 1
    # the one inline script is allowed by its hash, nothing else
    assert re.search(r"script-src &#x27;sha256-[A-Za-z0-9+/=]{44}&#x27;; img-src data:\">", page)


def test_corrupt_and_tampered_records_are_marked_never_fatal(built, ledger_copy, tmp_path, cli_main):
    _, _, _, _, ids = built
    files = {p.stem[:16]: p for p in (ledger_copy / "records").glob("*.json")}
    corrupt, tampered = files[ids["vllm-run1"]], files[ids["hf-run2"]]
    corrupt.write_bytes(b'{"topic": "bench/qwen2.5-0.5b-throughput", "run_la')
    data = json.loads(tampered.read_bytes())
    data["metrics"]["throughput"]["value"] = 9999.0  # a better number, by hand
    tampered.write_text(json.dumps(data))
    code, out, err = build(cli_main, tmp_path / "site", built, ledger=ledger_copy)
    assert code == 0
    assert out.startswith("wrote ") and out.rstrip().endswith("2 problem(s)")
    warned = err.strip().splitlines()
    assert len(warned) == 2 and all(line.endswith("(marked on the page)") for line in warned)
    page = (tmp_path / "site" / "index.html").read_text()
    problems = re.findall(r'<div class="detail problem" data-row="problem"><p><code>(.*?)</code>', page)
    assert sorted(problems) == sorted([str(corrupt), str(tampered)])
    marked = [r for r in rows(page, "record") if 'data-state="tampered"' in r]
    assert len(marked) == 1 and ids["hf-run2"] in marked[0]
    assert "NOT TRUSTED: tampered: content hashes to" in marked[0]
    assert "not judged: the file is not trusted" in marked[0]
    assert "9999" not in re.search(r'<section id="bench".*?</section>', page, re.S).group(0)
    assert len(rows(page, "record")) == 8  # the unreadable one is among the problems only


def test_unwritable_output_dir_is_one_line_exit_2(built, tmp_path, cli_main):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    code, out, err = build(cli_main, blocker / "site", built)
    assert (code, out) == (2, "")
    assert err == (
        f"stackcheck: error: {blocker / 'site'}: {blocker} is a file, not a directory "
        "(expected the report directory, --html)\n"
    )
    code, out, err = build(cli_main, Path("/proc"), built)
    assert (code, out) == (2, "")
    assert err.startswith("stackcheck: error: /proc/index.html: cannot write the review page: ")
    assert len(err.splitlines()) == 1


def test_chart_text_is_escaped_and_the_axis_covers_every_point():
    svg = line_chart("c", "t <b>", "tok/s", {"<script>alert(1)</script>": [("v1 &run", 5300.0, True)]})
    assert "<script>" not in svg and "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    assert "v1 &amp;run" in svg
    assert _ticks(0, 5300) == [0, 2000, 4000, 6000]
    assert _ticks(38, 41.2) == [38.0, 39.0, 40.0, 41.0, 42.0]


def test_direction_of_better():
    assert lower_is_better("latency_p50_ms", "ms") and lower_is_better("step", "s")
    assert not lower_is_better("throughput", "tok/s") and not lower_is_better("accuracy", "")


def _luminance(hex_colour: str) -> float:
    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_verdict_colours_and_chart_lines_meet_wcag_contrast():
    from stackcheck.report.page import CSS
    from stackcheck.report.svg import PALETTE, REGRESSION

    badges = re.findall(r"\.v-(\w+)[^{]*\{ background: (#[0-9a-f]{6}); color: (#[0-9a-f]{6});", CSS)
    assert [b[0] for b in badges] == ["ok", "warning", "blocked", "skipped"]
    assert [round(contrast(bg, fg), 1) >= 4.5 for _, bg, fg in badges] == [True] * 4  # AA, normal text
    assert contrast("#1a1a1a", "#ffffff") >= 7  # body text: AAA
    assert contrast("#4d4d4d", "#ffffff") >= 4.5 and contrast("#0b4f9c", "#ffffff") >= 4.5  # muted, links
    assert [contrast(c, "#ffffff") >= 3 for c in (*PALETTE, REGRESSION)] == [True] * 9  # graphics: 3:1


def test_each_ledger_file_is_read_at_most_twice(built, tmp_path, cli_main, monkeypatch):
    """Once to list it, once to validate it — never once per record of its candidate (the
    ladder's evidence comes from the records already read), so a page stays linear in the ledger."""
    from collections import Counter

    from stackcheck.results import ledger as ledger_module
    from stackcheck.results import validation

    reads: Counter = Counter()
    for module in (ledger_module, validation):
        real = module.read_bytes

        def counted(path, what="file", _real=real):
            reads[str(path)] += 1
            return _real(path, what)

        monkeypatch.setattr(module, "read_bytes", counted)
    code, _, _ = build(cli_main, tmp_path / "site", built)
    assert code == 0
    records = {str(p) for p in (built[0] / "records").glob("*.json")}
    assert {p: n for p, n in reads.items() if p in records} == {p: 2 for p in records}


def test_bad_inputs_are_one_line_exit_2(built, tmp_path, cli_main):
    bad = tmp_path / "report.json"
    bad.write_text('{"kind": "preflight", "verdict": "maybe"}')
    code, out, err = cli_main("report", "--html", str(tmp_path / "site"), "--preflight", str(bad))
    assert (code, out, len(err.splitlines())) == (2, "", 1)
    assert err.startswith(f"stackcheck: error: {bad}: ") and "verdict" in err
    code, out, err = cli_main(
        "report", "--html", str(tmp_path / "site"), "--snapshot", str(SNAPSHOTS / "cpu-laptop.json"),
        "--registry", str(built[1]), "-p", "NO-SUCH-PROFILE",
    )  # fmt: skip
    assert (code, out, len(err.splitlines())) == (2, "", 1)
    assert "NO-SUCH-PROFILE" in err
    assert not (tmp_path / "site").exists()  # nothing written before the inputs are known good


def test_hostile_text_is_escaped_everywhere():
    """Free text from records and reports (decisions, failure reasons, check output) cannot
    add markup to the page: every tag on it is one the renderer wrote."""
    from html.parser import HTMLParser

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from stackcheck.models.finding import CheckResult
    from stackcheck.report.gather import Candidate, Cell, RecordRow, Site, Topic
    from stackcheck.report.page import render_page

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            self.seen.add(tag)

    def tags(page: str) -> set[str]:
        p = Tags()
        p.seen = set()
        p.feed(page)
        return p.seen

    def site(text: str) -> Site:
        row = RecordRow(
            text[:16], text, "2026", "measured", "ok", text, [(text, 1.0, text)], "reproduced", [text]
        )
        row.flags = [text]
        check = CheckResult(id=text, title=text, verdict="blocked", observed=text, expected=text, fix=text)
        topic = Topic(
            text, [Candidate(text, text, text, [row])], [(text, text, text, True)], [(text, text, text)]
        )
        return Site(
            cells=[Cell(text, text, "blocked", text, text, [check], anchor="cell-0")],
            topics=[topic],
            problems=[(text, [text])],
        )

    allowed = tags(render_page(site("plain"), generated_at="now", version="0"))

    @settings(max_examples=60)
    @given(st.text(alphabet=st.sampled_from("<>\"&'/=ab sciptg!-"), min_size=1, max_size=40))
    def check(text):
        page = render_page(site(text), generated_at="now", version="0")
        assert tags(page) <= allowed
        assert page.count("<script>") == 1

    check()


def test_without_a_ledger_the_page_says_so_and_creates_none(tmp_path, cli_main, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STACKCHECK_LEDGER_DIR", raising=False)
    monkeypatch.delenv("STACKCHECK_LEDGER", raising=False)
    code, out, err = cli_main("report", "--html", "site")
    assert (code, err) == (0, "")
    assert out == (
        "wrote site/index.html: 0 profile(s) × 0 environment(s), 0 topic(s), 0 chart(s), "
        "0 mined rule(s), 0 problem(s)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no .stackcheck made
    page = (tmp_path / "site" / "index.html").read_text()
    assert "No preflight verdicts: give --ledger, --preflight or --snapshot." in page
    assert '<p class="muted">No records.</p>' in page


def test_a_json_object_that_is_no_report_and_an_unused_unknown_profile_are_refused(built, tmp_path, cli_main):
    site = tmp_path / "site"
    for doc, missing in (
        ({}, "kind, verdict, checks"),
        ({"schema_version": "1.0", "python": {}}, "kind, verdict, checks"),
        ({"kind": "preflight", "verdict": "ok"}, "checks"),
    ):
        bad = tmp_path / "report.json"
        bad.write_text(json.dumps(doc))
        code, out, err = cli_main("report", "--html", str(site), "--preflight", str(bad))
        assert (code, out) == (2, "")
        assert err == (
            f"stackcheck: error: {bad}: no {missing}: expected a `stackcheck preflight --json` report\n"
        )
    code, out, err = cli_main(
        "report",
        "--html",
        str(site),
        "--ledger-dir",
        str(built[0]),
        "--registry",
        str(built[1]),
        "-p",
        "NO-SUCH",
    )
    assert (code, out) == (2, "")
    assert err.startswith("stackcheck: error: unknown profile ID 'NO-SUCH' in ") and err.count("\n") == 1
    assert not site.exists()
