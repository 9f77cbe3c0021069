"""The advice report: one advice record (`storlab advise --json`, kind
"storlab-advice") as one self-contained page, for `advise --report FILE`
and `storlab report ADVICE.json` alike. Cost a month against throughput for
every outcome the record holds — the front, the recommendations ranked, the
cheaper ones that miss, the current configs — with the goal drawn across;
then the recommendations with their paste-ready config tables, the misses,
the findings, and where the search looked.

Throughput is in the goal's own unit where the record gives one: NOPM or
TPM for a database, IOPS (or MB/s) for an I/O goal of that figure alone.
Any other I/O goal (a p99, per-job goals, IOPS and MB/s together) is drawn
as the share of the goal an outcome reaches, the unit the screen's bound
of an I/O goal is in."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from storlab.report.charts import Chart, _layout
from storlab.report.page import chart_div, esc, head, scripts
from storlab.report.records import Record, finite

# Marker styles: one per role an outcome has in the advice.
FRONT = {"symbol": "circle", "size": 8, "color": "#7f8c9a"}
MISS = {"symbol": "x", "size": 10, "color": "#d62728"}
RECOMMENDED = {"symbol": "star", "size": 15, "color": "#2ca02c", "line": {"width": 1, "color": "#1b5e20"}}
FINDING_COLOUR = {"Under-provisioned": "#c0392b", "Over-provisioned": "#e6a700", "Optimized": "#27ae60"}
# A pool as the tables and the hover text show it, after its count and device.
POOL_FIGURES = (("size_gib", "{:g} GiB"), ("storage_gib", "{:g} GiB storage"), ("iops", "{:g} IOPS"),
                ("throughput_mib_s", "{:g} MiB/s"), ("throughput_mb_s", "{:g} MB/s"))


@dataclass
class Axis:
    """The chart's throughput axis: its title, the goal's place on it, and
    an outcome's place (None where the record gives none) with how it was
    found (simulated, or only the screen's bound)."""

    title: str
    unit: str
    goal: float
    fmt: str  # plotly's number format for hover and ticks
    place: Callable[[dict[str, Any]], tuple[float | None, str]]
    share: bool = False

    def show(self, y: float) -> str:
        return f"{format(y, self.fmt)} {self.unit}"


def axis(goal: dict[str, Any]) -> Axis:
    """The unit the record gives every outcome in (module docstring)."""
    g: dict[str, float] = {k: f for k, v in goal.items() if k != "jobs" and (f := finite(v)) is not None and f > 0}
    jobs = goal.get("jobs") or {}
    bound = "the screen's bound (at most)"

    def screened(o: dict[str, Any]) -> bool:
        return o.get("verified_by") == "screen"

    if "nopm" in g or "tpm" in g:
        key = "nopm" if "nopm" in g else "tpm"

        def db(o: dict[str, Any]) -> tuple[float | None, str]:
            # A screened outcome's figure is the screen's bound, in the goal's unit.
            v = finite(o.get(key))
            if v is None and screened(o):
                v = finite(o.get("screen_bound"))
            return v, bound if screened(o) else "simulated"

        return Axis(f"{key.upper()} (at its best VU count)", key.upper(), g[key], ",.0f", db)
    if not jobs and "p99_ms" not in g and ("iops" in g) != ("mb_s" in g):
        key, unit, scale, want = ("iops", "IOPS", 1.0, g["iops"]) if "iops" in g else ("bw_bytes_s", "MB/s", 1e6, g["mb_s"])

        def figure(o: dict[str, Any]) -> tuple[float | None, str]:
            v = finite(o.get(key))
            if v is not None and not screened(o):
                return v / scale, "simulated (the least job)"
            # An I/O bound is a share of the goal: here of this one figure.
            b = finite(o.get("screen_bound"))
            return (None if b is None else b * want), bound

        return Axis(f"{unit} (the least job)", unit, want, ",.0f" if key == "iops" else ",.1f", figure)

    def share(o: dict[str, Any]) -> tuple[float | None, str]:
        # A simulated outcome's share: the least over the goal's figures it
        # gives, as the screen reckons its bound (a p99 counts as goal / p99).
        if not screened(o) and not jobs:
            iops, bw, p99 = finite(o.get("iops")), finite(o.get("bw_bytes_s")), finite(o.get("p99_ms"))
            parts = []
            if "iops" in g and iops is not None:
                parts.append(iops / g["iops"])
            if "mb_s" in g and bw is not None:
                parts.append(bw / 1e6 / g["mb_s"])
            if "p99_ms" in g and p99:
                parts.append(g["p99_ms"] / p99)
            if parts:
                return min(parts), "simulated"
        return finite(o.get("screen_bound")), bound

    return Axis("share of the goal (100 % = met)", "of the goal", 1.0, ".0%", share, share=True)


def _goal_text(goal: dict[str, Any]) -> str:
    names = {"nopm": "NOPM", "tpm": "TPM", "iops": "IOPS", "mb_s": "MB/s", "p99_ms": "ms p99", "max_usd_month": "$ a month at most"}
    parts = [f"{v:,g} {names.get(k, k)}" for k, v in goal.items() if k != "jobs" and finite(v) is not None]
    for job, jg in (goal.get("jobs") or {}).items():
        parts.append(f"job {job}: " + ", ".join(f"{v:,g} {names.get(k, k)}" for k, v in (jg or {}).items() if finite(v) is not None))
    return ", ".join(parts)


def pools_text(config: dict[str, Any]) -> list[str]:
    """Each pool of a config: role, count × device, and its figures."""
    out = []
    for p in config.get("pools") or []:
        bits = [f"{p.get('count') or 1} × {p.get('device', '?')}"]
        bits += [fmt.format(p[k]) for k, fmt in POOL_FIGURES if finite(p.get(k)) is not None]
        if p.get("layout"):
            bits.append(str(p["layout"]))
        if p.get("host_cache") not in (None, "none"):
            bits.append(f"cache {p['host_cache']}")
        out.append(f"{p.get('role') or 'all'}: " + ", ".join(bits))
    return out


def gives(o: dict[str, Any]) -> str:
    """What an outcome gives, in the goal's terms."""
    parts = []
    if finite(o.get("nopm")) is not None:
        parts.append(f"{o['nopm']:,.0f} NOPM")
    elif finite(o.get("tpm")) is not None:
        parts.append(f"{o['tpm']:,.0f} TPM")
    if o.get("vus") is not None:
        parts.append(f"at {o['vus']} VUs")
    if finite(o.get("iops")) is not None:
        parts.append(f"{o['iops']:,.0f} IOPS")
    if finite(o.get("bw_bytes_s")) is not None:
        parts.append(f"{o['bw_bytes_s'] / 1e6:,.1f} MB/s")
    if finite(o.get("p99_ms")) is not None:
        parts.append(f"p99 {o['p99_ms']:,.2f} ms")
    if o.get("verified_by") == "screen":
        parts.append("screen only")
    return ", ".join(parts)


def _money(v: Any) -> str:
    f = finite(v)
    return "—" if f is None else f"${f:,.2f}"


@dataclass
class Point:
    """One outcome on the chart."""

    role: str  # front | miss | recommended | finding
    outcome: dict[str, Any]
    label: str  # the name shown beside it: "#1", a config's name
    hover: str
    y: float | None
    finding: str = ""


def outcomes(rec: dict[str, Any], ax: Axis) -> list[Point]:
    """Every distinct outcome of the record, once. An outcome is a config's
    name and how it was judged (the screen's bound, or the simulator): a
    front point that is also a cheaper miss is one outcome, drawn as a
    miss; a recommendation and its own screen bound on the front are two."""
    seen: set[tuple[str, str]] = set()
    out: list[Point] = []

    def key(o: dict[str, Any]) -> tuple[str, str]:
        return str(o.get("name", "")), str(o.get("verified_by", ""))

    def add(role: str, o: dict[str, Any], ident: tuple[str, str], label: str, extra: str, finding: str = "") -> None:
        if ident in seen:
            return
        seen.add(ident)
        y, how = ax.place(o)
        lines = [f"<b>{esc(o.get('name') or label)}</b>", esc(o["config"]["host"]), *map(esc, pools_text(o["config"])),
                 f"{_money(o.get('monthly_cost_usd'))} a month", esc(gives(o))]
        if y is not None:
            lines.append(f"{ax.show(y)}: {how}")
        lines += [esc(extra)] if extra else []
        out.append(Point(role, o, label, "<br>".join(lines), y, finding))

    for f in rec.get("findings") or []:
        c = f["current"]
        add("finding", c, ("config", f["config"]), f["config"],
            f"{f['finding']}, risk {f.get('risk', '?')}: {f.get('why', '')}", f["finding"])
    for r in rec.get("recommendations") or []:
        add("recommended", r, key(r), f"#{r['rank']}",
            f"recommendation #{r['rank']}; binds: {r.get('binding', '')}")
    for o in rec.get("cheaper_failures") or []:
        add("miss", o, key(o), "", f"misses: {o.get('misses') or o.get('binding', '')}")
    for o in rec.get("front") or []:
        add("front", o, key(o), "", f"on the front; binds: {o.get('binding', '')}")
    return out


def chart(rec: dict[str, Any]) -> Chart:
    """Cost a month against throughput, every outcome once."""
    ax = axis(rec["goal"])
    points = outcomes(rec, ax)
    drawn = [p for p in points if p.y is not None]
    data: list[dict[str, Any]] = []
    # The front: the screen's bound against cost, each point the cheapest
    # that can give more than every cheaper one. Its points carry markers
    # of their own role below; the line only joins them (not counted).
    front = sorted((o["monthly_cost_usd"], y) for o in rec.get("front") or [] if (y := ax.place(o)[0]) is not None)
    if front:
        data.append({"type": "scatter", "mode": "lines", "x": [x for x, _ in front], "y": [y for _, y in front],
                     "name": "front (the screen's bound)", "meta": "annotation", "hoverinfo": "skip",
                     "line": {"color": FRONT["color"], "width": 1.5, "shape": "hv"}})

    def trace(name: str, pts: list[Point], marker: dict[str, Any], text: bool = False) -> None:
        if not pts:
            return
        t = {"type": "scatter", "mode": "markers+text" if text else "markers", "name": name,
             "x": [p.outcome["monthly_cost_usd"] for p in pts], "y": [p.y for p in pts],
             "customdata": [p.hover for p in pts], "hovertemplate": "%{customdata}<extra></extra>", "marker": marker}
        if text:
            t.update({"text": [p.label for p in pts], "textposition": "top center", "textfont": {"size": 10}})
        data.append(t)

    trace("front point", [p for p in drawn if p.role == "front"], FRONT)
    trace("cheaper, misses the goal", [p for p in drawn if p.role == "miss"], MISS)
    current = [p for p in drawn if p.role == "finding"]
    trace("your config", current, {"symbol": "square", "size": 12, "color": [FINDING_COLOUR.get(p.finding, "#7f7f7f") for p in current],
                                   "line": {"width": 1, "color": "#333"}}, text=True)
    trace("recommended (#rank)", [p for p in drawn if p.role == "recommended"], RECOMMENDED, text=True)

    goal_name = "the goal" if ax.share else f"goal: {ax.show(ax.goal)}"
    shapes = [{"type": "line", "name": "goal", "xref": "paper", "x0": 0, "x1": 1, "y0": ax.goal, "y1": ax.goal,
               "line": {"dash": "dash", "color": "#1f2d3d", "width": 1.5}}]
    annotations = [{"xref": "paper", "x": 1, "xanchor": "right", "y": ax.goal, "yanchor": "bottom", "text": goal_name,
                    "showarrow": False, "font": {"size": 11, "color": "#1f2d3d"}}]
    budget = finite(rec["goal"].get("max_usd_month"))
    if budget is not None:
        shapes.append({"type": "line", "name": "budget", "yref": "paper", "y0": 0, "y1": 1, "x0": budget, "x1": budget,
                       "line": {"dash": "dot", "color": "#c0392b", "width": 1}})
        annotations.append({"yref": "paper", "y": 1, "yanchor": "bottom", "x": budget, "text": f"at most {_money(budget)} a month",
                            "showarrow": False, "font": {"size": 11, "color": "#c0392b"}})
    title = f"Cost a month against {ax.unit if not ax.share else 'the share of the goal'}"
    lay = _layout(title, "$ a month", ax.title, shapes=shapes, annotations=annotations, height=520)
    lay["yaxis"]["tickformat"] = ax.fmt
    costs = [p.outcome["monthly_cost_usd"] for p in drawn if p.outcome["monthly_cost_usd"] > 0]
    if costs and max(costs) / min(costs) > 50:
        # A cheap screen miss beside a large current deployment: on a
        # linear axis the cheap end would be one crowded column.
        lay["xaxis"]["type"] = "log"
        lay["title"]["text"] += " — log scale"
        if budget is not None and budget > 0:
            shapes[-1]["x0"] = shapes[-1]["x1"] = annotations[-1]["x"] = math.log10(budget)
    else:
        lay["xaxis"]["rangemode"] = "tozero"
    lay["xaxis"].update({"tickprefix": "$", "tickformat": ",.0f"})
    note = ("each point is one outcome: the simulator's figure, or for a config only screened the screen's bound "
            "(at most); the line is the front, the dashed line the goal")
    missing = len(points) - len(drawn)
    if missing:
        note += f"; {missing} outcome(s) give no figure in this unit and are not drawn"
    return Chart("advice-front", "Cost and throughput", title, {"data": data, "layout": lay}, len(drawn),
                 note=note, kind="advice")


def _table(cols: list[tuple[str, bool]], rows: list[list[str]], cls: str) -> str:
    """An HTML table: columns (heading, left-aligned) and rows of cell HTML;
    no heading row where every heading is empty."""
    head_ = "".join(f"<th{' class=l' if left else ''}>{esc(h)}</th>" for h, left in cols)
    head_ = f"<thead><tr>{head_}</tr></thead>" if any(h for h, _ in cols) else ""
    body = "".join("<tr>" + "".join(f"<td{' class=l' if left else ''}>{cell}</td>" for (_, left), cell in zip(cols, r)) + "</tr>"
                   for r in rows)
    return f"<table class='{cls}'>{head_}<tbody>{body}</tbody></table>"


def _pools_html(o: dict[str, Any]) -> str:
    return "<br>".join(esc(p) for p in pools_text(o["config"]))


def recommendations_html(rec: dict[str, Any]) -> str:
    recs = rec.get("recommendations") or []
    if not recs:
        stop = " before the stop" if rec.get("interrupted") else ""
        return f"<p class='lead'>No deployment of the space was found to meet the goal{stop}.</p>"
    per_tpm = any(finite(r.get("usd_per_1000_tpm")) is not None for r in recs)
    cols = [("#", False), ("host", True), ("pools", True), ("$ a month", False)]
    cols += [("$ / 1,000 TPM", False)] if per_tpm else []
    cols += [("gives", True), ("what binds", True), ("as a scenario config (paste and run with storlab simulate)", True)]
    rows = []
    for r in recs:
        row = [str(r["rank"]), f"<b>{esc(r['config']['host'])}</b>", _pools_html(r), _money(r["monthly_cost_usd"])]
        if per_tpm:
            row.append(_money(r.get("usd_per_1000_tpm")))
        row += [esc(gives(r)), f"<span class='small'>{esc(r.get('binding', ''))}</span>",
                f"<pre class='toml'>{esc(str(r.get('config_toml') or '').rstrip())}</pre>"]
        rows.append(row)
    return _table(cols, rows, "recommendations")


def misses_html(rec: dict[str, Any]) -> str:
    misses = rec.get("cheaper_failures") or []
    if not misses:
        return ""
    rows = [[f"<b>{esc(o['config']['host'])}</b>", _pools_html(o), _money(o["monthly_cost_usd"]), esc(gives(o)),
             esc(o.get("misses") or o.get("binding", ""))] for o in misses]
    return ("<h2>Cheaper, but they miss</h2>"
            + _table([("host", True), ("pools", True), ("$ a month", False), ("gives", True), ("misses", True)], rows, "misses"))


def findings_html(rec: dict[str, Any]) -> str:
    findings = rec.get("findings") or []
    if not findings:
        return ""
    rows = []
    for f in findings:
        c = f["current"]
        colour = FINDING_COLOUR.get(f["finding"], "#333")
        rows.append([f"<b>{esc(f['config'])}</b><br><span class='small'>{esc(c['config']['host'])}</span>",
                     f"<b style='color:{colour}'>{esc(f['finding'])}</b>", esc(f.get("risk", "")),
                     _money(f.get("saving_usd_month")), _money(c["monthly_cost_usd"]), esc(gives(c)), esc(f.get("why", ""))])
    cols = [("config", True), ("finding", True), ("risk", True), ("saving a month", False), ("$ a month", False),
            ("gives", True), ("why", True)]
    return "<h2>Your configs</h2>" + _table(cols, rows, "findings")


def space_html(rec: dict[str, Any]) -> str:
    sp = rec.get("space") or {}
    n = lambda k: f"{sp[k]:,}" if isinstance(sp.get(k), int) else "?"  # noqa: E731
    out = [f"<p class='lead'>{esc(sp.get('region', ''))}: {n('hosts')} hosts × {n('devices')} devices → {n('candidates')} configs the vendors "
           f"allow; {n('screened')} pass the screen; the simulator ran {n('verified')}.</p>"]
    refused = sp.get("refused") or {}
    if refused:
        rows = [[esc(why), f"{count:,}"] for why, count in sorted(refused.items(), key=lambda kv: -kv[1])]
        out.append(f"<details><summary class='small'>{sum(refused.values()):,} configs the vendors' rules refuse, by reason</summary>"
                   + _table([("reason", True), ("configs", False)], rows, "refused") + "</details>")
    d = rec.get("demand")
    if d:
        out.append(f"<p class='lead'>Demand from {esc(d.get('source', ''))}: {finite(d.get('iops')) or 0:,.0f} IOPS, "
                   f"{finite(d.get('mb_s')) or 0:,.1f} MB/s, {(finite(d.get('read_share')) or 0) * 100:.0f} % reads — "
                   f"{esc(d.get('statistic', ''))}.</p>")
    return "".join(out)


def provenance_html(rec: dict[str, Any]) -> str:
    tool = rec.get("tool") or {}
    inputs = rec.get("inputs") or {}
    files = inputs.get("catalog_files") if isinstance(inputs.get("catalog_files"), list) else []
    rows = [["question", esc(rec.get("question", ""))],
            ["tool", f"{esc(tool.get('name', ''))} {esc(tool.get('version', ''))} "
                     f"<span class='mono'>{esc(str(tool.get('git_sha', ''))[:12])}</span>"],
            ["catalog", esc(", ".join(map(str, files)))]]
    if rec.get("as_of"):
        rows.append(["vendor rules as of", esc(rec["as_of"])])
    rows.append(["method", f"<span class='small'>{esc(rec.get('method', ''))}</span>"])
    return _table([("", True), ("", True)], rows, "prov")


def build_html(record: Record, title: str | None = None) -> bytes:
    """The advice page, as UTF-8 bytes."""
    rec = record.data
    title = title or rec.get("title") or rec.get("question") or record.name
    ch = chart(rec)
    notes = ("<p class='interrupted'><b>Interrupted</b>: the search was stopped; this is the best it found "
             "before the stop.</p>") if rec.get("interrupted") else ""
    if rec.get("warnings"):
        notes += "<ul class='lead'>" + "".join(f"<li>{esc(w)}</li>" for w in rec["warnings"]) + "</ul>"
    parts = [head(title),
             f"<header><h1>{esc(title)}</h1><p>advice · {esc(rec.get('workload', ''))} · goal: {esc(_goal_text(rec['goal']))}"
             f"{' · interrupted' if rec.get('interrupted') else ''}</p></header><main>", notes,
             f"<h2>{esc(ch.section)}</h2><div class='charts'>{chart_div(ch)}</div>",
             "<h2>Cheapest that meet the goal (verified by the simulator)</h2>", recommendations_html(rec),
             misses_html(rec), findings_html(rec), "<h2>Where it looked</h2>", space_html(rec),
             "</main><footer><h2>Provenance</h2>", provenance_html(rec),
             "<p class='dim'>MB = 10<sup>6</sup> bytes. Made by storlab; charts drawn by plotly.js, embedded.</p></footer>",
             scripts([{"id": ch.id, "figure": ch.figure}])]
    return "".join(parts).encode("utf-8")
