"""The review page as one self-contained HTML file: inline CSS (screen and print), one small
inline script (the client-side filter, allowed by its hash in the page's Content-Security-Policy),
inline SVG charts; no external script, style sheet, font or image, so it works from ``file://``
offline. Every value is escaped where it enters the markup."""

from __future__ import annotations

import base64
import hashlib
from html import escape

from stackcheck.report.gather import Cell, Chart, Site, Topic
from stackcheck.report.svg import bar_chart, line_chart

__all__ = ["render_page"]

CSS = """
:root { color-scheme: light; --fg: #1a1a1a; --muted: #4d4d4d; --line: #c8c8c8; --bg: #ffffff; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  background: var(--bg); margin: 0 auto; max-width: 1200px; padding: 0 1rem 3rem; }
header { position: sticky; top: 0; background: var(--bg); border-bottom: 1px solid var(--line);
  padding: .5rem 0; z-index: 1; }
h1 { font-size: 1.4rem; margin: .3rem 0; } h2 { margin-top: 2rem; } h3 { margin-bottom: .3rem; }
nav a { margin-right: 1rem; color: #0b4f9c; }
a { color: #0b4f9c; } a:focus, input:focus { outline: 3px solid #1a73e8; outline-offset: 1px; }
label { font-weight: 600; margin-right: .5rem; }
input[type=search] { font: inherit; padding: .25rem .5rem; width: min(28rem, 90%);
  border: 1px solid #767676; }
table { border-collapse: collapse; margin: .5rem 0 1rem; width: 100%; }
caption { text-align: left; font-weight: 600; padding: .3rem 0; }
th, td { border: 1px solid var(--line); padding: .3rem .45rem; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.v { display: inline-block; min-width: 5.5em; padding: .05rem .4rem; border-radius: 3px; font-weight: 600;
  border: 1px solid transparent; }
.v-ok { background: #d8f0dc; color: #0d4a1c; border-color: #0d4a1c; }
.v-warning { background: #fff0c2; color: #5c4000; border-color: #5c4000; }
.v-blocked, .v-error { background: #fbd9d7; color: #7a0c05; border-color: #7a0c05; }
.v-skipped, .v-unknown, .v-none { background: #ececec; color: #333333; border-color: #333333; }
.mark { color: #7a0c05; font-weight: 700; }
.muted { color: var(--muted); }
pre { background: #f6f6f6; border: 1px solid var(--line); padding: .5rem; overflow-x: auto;
  white-space: pre-wrap; font-size: .85rem; }
.chart { max-width: 100%; height: auto; border: 1px solid var(--line); margin: .3rem 0 1rem; }
.chart .grid { stroke: #e0e0e0; } .chart text { font: 11px system-ui, sans-serif; fill: #1a1a1a; }
.chart .axis { font-weight: 600; }
.detail { border-left: 4px solid var(--line); padding-left: .7rem; margin: 1rem 0; }
.detail:target { border-left-color: #1a73e8; background: #f3f8ff; }
.problem { border-left-color: #7a0c05; }
[hidden] { display: none !important; }
section, .detail, article { scroll-margin-top: 11rem; }  /* a followed link is not under the header */
@media print {
  header { position: static; } #filter-box, nav { display: none; }
  [data-row][hidden] { display: revert !important; }
  body { max-width: none; font-size: 11pt; } a { color: inherit; text-decoration: none; }
  h2 { break-before: page; } table, .chart, .detail { break-inside: avoid; }
  .v { border-width: 2px; }
}
"""

# The client-side filter: hides every [data-row] element whose text lacks the query.
SCRIPT = """
(function () {
  var input = document.getElementById("filter");
  var status = document.getElementById("filter-status");
  var rows = Array.prototype.slice.call(document.querySelectorAll("[data-row]"));
  function apply() {
    var q = input.value.trim().toLowerCase();
    var shown = 0;
    rows.forEach(function (row) {
      var hit = !q || row.textContent.toLowerCase().indexOf(q) !== -1;
      row.hidden = !hit;
      if (hit) { shown += 1; }
    });
    status.textContent = q ? shown + " of " + rows.length + " rows match" : rows.length + " rows";
  }
  input.addEventListener("input", apply);
  apply();
})();
"""


def _csp() -> str:
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    return f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'; img-src data:"


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _verdict(v: str) -> str:
    v = v or "unknown"
    return f'<span class="v v-{_e(v)}">{_e(v)}</span>'  # the word itself: colour is a second cue


def render_page(site: Site, *, generated_at: str, version: str) -> str:
    body = [
        _matrix(site),
        _ledger(site.topics),
        _charts(site.charts, _compat(site)),
        _rules(site),
        _problems(site),
    ]
    sources = ", ".join(site.sources) or "nothing"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{_e(_csp())}">
<title>stackcheck review</title>
<style>{CSS}</style>
</head>
<body>
<header>
<h1>stackcheck review</h1>
<p class="muted">Generated {_e(generated_at)} by stackcheck {_e(version)} from {_e(sources)}.</p>
<nav aria-label="Sections"><a href="#matrix">Matrix</a><a href="#ledger">Ledger</a>\
<a href="#bench">Measured metrics</a><a href="#rules">Mined rules</a><a href="#problems">Problems</a></nav>
<div id="filter-box" role="search"><label for="filter">Filter rows</label>\
<input id="filter" type="search" placeholder="profile, topic, backend, check ID…" autocomplete="off">
<span id="filter-status" aria-live="polite"></span></div>
</header>
<main>
{"".join(body)}
</main>
<script>{SCRIPT}</script>
</body>
</html>
"""


def _matrix(site: Site) -> str:
    envs, profiles = site.environments, site.profiles
    out = ['<section id="matrix" aria-labelledby="matrix-h"><h2 id="matrix-h">Profiles × environments</h2>']
    if not site.cells:
        out.append(
            '<p class="muted">No preflight verdicts: give --ledger, --preflight or --snapshot.</p></section>'
        )
        return "".join(out)
    out.append(
        '<p class="muted">The latest preflight verdict of each profile on each environment; '
        "follow a verdict to its checks and fixes.</p>"
    )
    by_key = {(c.profile, c.environment): c for c in site.cells}

    def cell(p: str, env: str) -> str:
        c = by_key.get((p, env))
        if c is None:
            return '<td class="muted">not judged</td>'
        return (
            f'<td data-verdict="{_e(c.verdict)}"><a href="#{c.anchor}" '
            f'aria-label="{_e(p)} on {_e(env)}: {_e(c.verdict)}, details">{_verdict(c.verdict)}</a></td>'
        )

    out.append(
        _grid("matrix-table", "Latest preflight verdict per profile and environment", "profile", "matrix")(
            profiles, envs, cell
        )
    )
    out.extend(_cell_detail(c) for c in site.cells)
    out.append("</section>")
    return "".join(out)


def _grid(table_id: str, caption: str, corner: str, kind: str):
    """A table of rows × columns whose cells ``cell(row, column)`` renders (a ``<td>``)."""

    def render(rows: list[str], columns: list[str], cell) -> str:
        out = [f'<table id="{table_id}"><caption>{_e(caption)}</caption><thead><tr>']
        out.append(f'<th scope="col">{_e(corner)}</th>')
        out.extend(f'<th scope="col">{_e(c)}</th>' for c in columns)
        out.append("</tr></thead><tbody>")
        for r in rows:
            out.append(f'<tr data-row="{kind}"><th scope="row">{_e(r)}</th>')
            out.extend(cell(r, c) for c in columns)
            out.append("</tr>")
        out.append("</tbody></table>")
        return "".join(out)

    return render


def _cell_detail(cell: Cell) -> str:
    out = [
        f'<div class="detail" id="{cell.anchor}" data-row="check-detail">'
        f"<h3>{_e(cell.profile)} on {_e(cell.environment)}: {_verdict(cell.verdict)}</h3>"
        f'<p class="muted">From {_e(cell.source)}{", " + _e(cell.when) if cell.when else ""}. '
        '<a href="#matrix">Back to the matrix</a></p>'
    ]
    if cell.checks:
        shown = [c for c in cell.checks if c.verdict != "ok"]
        ok = len(cell.checks) - len(shown)
        out.append(
            f"<table><caption>Checks that are not ok ({len(shown)}; {ok} ok)</caption><thead><tr>"
            '<th scope="col">check</th><th scope="col">verdict</th><th scope="col">observed</th>'
            '<th scope="col">expected</th><th scope="col">fix</th></tr></thead><tbody>'
        )
        for c in shown:
            what = c.reason if c.verdict in ("skipped", "error") else c.observed
            subject = f" ({_e(c.subject)})" if c.subject else ""
            out.append(
                f"<tr><td><strong>{_e(c.id)}</strong> {_e(c.title)}{subject}</td>"
                f"<td>{_verdict(c.verdict)}</td>"
                f"<td>{_e(what or '')}</td><td>{_e(c.expected)}</td>"
                f"<td>{'<code>' + _e(c.fix) + '</code>' if c.fix else ''}</td></tr>"
            )
        out.append("</tbody></table>")
    elif cell.failing:
        out.append(
            "<table><caption>Checks that were not ok when the record was made</caption><thead><tr>"
            '<th scope="col">check</th><th scope="col">what it looks at and how to fix it</th>'
            "</tr></thead><tbody>"
        )
        for cid, title, explain in cell.failing:
            out.append(f"<tr><td><strong>{_e(cid)}</strong> {_e(title)}</td><td>{_e(explain)}</td></tr>")
        out.append("</tbody></table>")
    else:
        out.append(
            "<p>Every check was ok.</p>" if cell.verdict == "ok" else "<p>No check details recorded.</p>"
        )
    out.append("</div>")
    return "".join(out)


def _ledger(topics: list[Topic]) -> str:
    out = ['<section id="ledger" aria-labelledby="ledger-h"><h2 id="ledger-h">Ledger by topic</h2>']
    if not topics:
        out.append('<p class="muted">No records.</p>')
    for t, topic in enumerate(topics):
        out.append(
            f'<article class="topic" id="topic-{t}" data-topic="{_e(topic.name)}"><h3>{_e(topic.name)}</h3>'
        )
        out.append(
            f'<table class="records"><caption>Records of {_e(topic.name)} by candidate</caption><thead><tr>'
            '<th scope="col">candidate</th><th scope="col">record</th><th scope="col">run label</th>'
            '<th scope="col">recorded</th><th scope="col">evidence</th><th scope="col">status</th>'
            '<th scope="col">metrics</th><th scope="col">next promotion still needs</th></tr></thead><tbody>'
        )
        for cand in topic.candidates:
            for row in cand.rows:
                marks = "".join(f'<div class="mark">NOT TRUSTED: {_e(p)}</div>' for p in row.problems)
                marks += "".join(f'<div class="mark">FLAGGED: {_e(f)}</div>' for f in row.flags)
                metrics = "<br>".join(f"{_e(n)} = {_e(f'{v:g}')} {_e(u)}" for n, v, u in row.metrics)
                if row.problems:
                    needs = '<span class="muted">not judged: the file is not trusted</span>'
                elif not row.next_level:
                    needs = '<span class="muted">top of the ladder</span>'
                elif row.needs:
                    needs = (
                        f"<strong>{_e(row.next_level)}</strong>:<ul>"
                        + "".join(f"<li>{_e(n)}</li>" for n in row.needs)
                        + "</ul>"
                    )
                else:
                    needs = f"<strong>{_e(row.next_level)}</strong>: nothing (ready to promote)"
                state = "tampered" if row.problems else "flagged" if row.flags else "ok"
                out.append(
                    f'<tr data-row="record" data-record="{_e(row.id)}" data-state="{state}">'
                    f"<td><code>{_e(cand.key)}</code><br>{_e(cand.model)}<br>{_e(cand.backend)}</td>"
                    f"<td><code>{_e(row.id)}</code>{marks}</td><td>{_e(row.run_label)}</td>"
                    f"<td>{_e(row.created_at[:19])}</td><td data-level>{_e(row.level)}</td>"
                    f"<td>{_e(row.status)}</td>"
                    f"<td>{metrics}</td><td>{needs}</td></tr>"
                )
        out.append("</tbody></table>")
        if topic.decisions:
            out.append(
                f'<table class="decisions"><caption>Decisions of {_e(topic.name)}</caption><thead><tr>'
                '<th scope="col">when</th><th scope="col">run label</th><th scope="col">decision</th></tr>'
                "</thead><tbody>"
            )
            for when, label, text, current in topic.decisions:
                cur = " <strong>(current)</strong>" if current else ""
                out.append(
                    f'<tr data-row="decision"><td>{_e(when[:19])}</td><td>{_e(label)}</td>'
                    f"<td>{_e(text)}{cur}</td></tr>"
                )
            out.append("</tbody></table>")
        for a, b, text in topic.diffs:
            out.append(
                f'<div class="diff" data-row="diff"><h4>Candidate <code>{_e(a)}</code> → '
                f"<code>{_e(b)}</code> "
                f"(newest records)</h4><pre>{_e(text)}</pre></div>"
            )
        out.append("</article>")
    out.append("</section>")
    return "".join(out)


def _charts(charts: list[Chart], compat: str) -> str:
    out = [
        '<section id="bench" aria-labelledby="bench-h"><h2 id="bench-h">Measured metrics per backend</h2>',
        '<p class="muted">Records at evidence level measured or above, one series per backend, runs oldest '
        "first; a red triangle marks a run worse than the one before it by more than its tolerance "
        "(or one a later run contradicted).</p>",
    ]
    if not charts:
        out.append('<p class="muted">No measured records.</p>')
    out.append(compat)
    for i, chart in enumerate(charts):
        better = "lower is better" if chart.lower_is_better else "higher is better"
        title = f"{chart.topic}: {chart.metric} ({chart.unit or 'no unit'}, {better})"
        series = {name: [(p.label, p.value, p.regression) for p in pts] for name, pts in chart.series.items()}
        latest = [(name, pts[-1].value) for name, pts in chart.series.items()]
        regressions = sum(p.regression for pts in chart.series.values() for p in pts)
        out.append(
            f'<figure data-row="chart" data-metric="{_e(chart.metric)}" data-regressions="{regressions}">'
            f"<figcaption><strong>{_e(title)}</strong>"
            + (f' — <span class="mark">{regressions} regression(s)</span>' if regressions else "")
            + "</figcaption>"
            + line_chart(f"chart-{i}", title, chart.unit, series)
            + bar_chart(f"chart-{i}-latest", f"{title}: latest run per backend", chart.unit, latest)
            + "</figure>"
        )
    out.append("</section>")
    return "".join(out)


def _compat(site: Site) -> str:
    """Backends × environments: the status of each backend's latest run on each environment."""
    if not site.runs:
        return ""
    envs = sorted({r.environment for r in site.runs})
    backends = sorted({r.backend for r in site.runs})
    by_key = {(r.backend, r.environment): r for r in site.runs}

    def cell(backend: str, env: str) -> str:
        run = by_key.get((backend, env))
        if run is None:
            return '<td class="muted">no run</td>'
        verdict = "ok" if run.status == "ok" else "blocked"
        reason = f" {_e(run.reason)}" if run.reason else ""
        return (
            f'<td data-status="{_e(run.status)}"><span class="v v-{verdict}">{_e(run.status)}</span>{reason}'
            f'<br><span class="muted">{_e(run.record)}, {_e(run.when[:10])}</span></td>'
        )

    caption = "Backends × environments: the latest run of each backend"
    out = [_grid("compat-table", caption, "backend", "compat")(backends, envs, cell)]
    return "".join(out)


def _rules(site: Site) -> str:
    out = ['<section id="rules" aria-labelledby="rules-h"><h2 id="rules-h">Mined rules</h2>']
    if not site.rules:
        out.append(
            '<p class="muted">No mined rules: give --rules FILE (written by stackcheck mine rules -o).</p>'
        )
        out.append("</section>")
        return "".join(out)
    out.append(
        '<table id="rules-table"><caption>Mined rules: coverage, how reliably they reproduce, '
        "false positives, "
        'scope</caption><thead><tr><th scope="col">rule</th><th scope="col">coverage (failed jobs)</th>'
        '<th scope="col">reproduces</th><th scope="col">false positives</th><th scope="col">scope</th>'
        "</tr></thead><tbody>"
    )
    for r in site.rules:
        scope = r.scope if r.separated else f"none: {r.scope.split(':', 1)[0]}"
        out.append(
            f'<tr data-row="rule" data-rule="{_e(r.id)}"><td><strong>{_e(r.id)}</strong> {_e(r.title)}</td>'
            f'<td class="num">{r.coverage:.0%} ({r.support})</td>'
            f'<td class="num">{r.failure_rate:.0%} of {r.attempts} (≥{r.wilson_lower:.2f}) '
            f"{_e(r.reproducibility)}</td>"
            f'<td class="num">{r.false_positive_rate:.0%}</td><td>{_e(scope)}</td></tr>'
        )
    out.append("</tbody></table>")
    bars = [(r.id, round(r.coverage * 100, 1)) for r in sorted(site.rules, key=lambda r: -r.coverage)]
    out.append(bar_chart("rules-coverage", "Share of failed jobs each mined rule explains", "%", bars))
    out.append("</section>")
    return "".join(out)


def _problems(site: Site) -> str:
    out = ['<section id="problems" aria-labelledby="problems-h"><h2 id="problems-h">Problems</h2>']
    if not site.problems:
        out.append("<p>Every ledger file is intact.</p>")
    for path, problems in site.problems:
        items = "".join(f"<li>{_e(p)}</li>" for p in problems)
        out.append(
            f'<div class="detail problem" data-row="problem"><p><code>{_e(path)}</code></p>'
            f"<ul>{items}</ul></div>"
        )
    out.append("</section>")
    return "".join(out)
