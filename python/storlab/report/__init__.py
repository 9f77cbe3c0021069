"""`storlab report`: run records of any engine (limits, simulate, measure,
emulate) drawn as one self-contained HTML page — a summary per config, the
I/O jobs side by side, the time series with their alarms, the database
sweeps with their tipping points, and each record's provenance. An advice
record (`storlab advise --json`) gets its own page, built in advice.py.

A pure function from records to bytes, like the exporters: plotly.js (from
the plotly package) is embedded in the page, so the file opens without a
network. Charts are Plotly figures built in charts.py; the page's frame
(look, scripts) is page.py's."""

from __future__ import annotations

from typing import Any

from storlab.errors import StorlabError
from storlab.report import advice as _advice
from storlab.report import charts as _charts
from storlab.report.page import chart_div, esc as _esc, head, plotly_js, scripts
from storlab.report.records import Record, assign_labels, configs, finite, is_db, latency_us, load

__all__ = ["build_html", "load", "Record", "summary_rows", "plotly_js"]


def _num(v: Any, fmt: str = ",.0f", unit: str = "") -> str:
    f = finite(v)
    return "—" if f is None else f"{format(f, fmt)}{unit}"


def _lat(us: Any) -> str:
    f = latency_us(us)
    if f is None:
        return "—"
    return f"{f / 1000:,.2f} ms" if f >= 1000 else f"{f:,.0f} µs"


def _costs(records: list[Record]) -> dict[tuple[Any, str], float]:
    """Monthly cost per (scenario, config) from limits records, so a
    simulated record of the same scenario can show it too."""
    out = {}
    for rec in records:
        if rec.kind == "limits":
            scen = (rec.data.get("inputs") or {}).get("scenario") or rec.data.get("scenario")
            for c in rec.data["configs"]:
                if finite(c.get("monthly_cost_usd")) is not None:
                    out[(scen, c["name"])] = c["monthly_cost_usd"]
    return out


def summary_rows(records: list[Record]) -> list[dict[str, Any]]:
    """One row per (record, config): the headline figures. Rows of one
    config name sit together, so a simulated and a measured run of it read
    side by side."""
    costs = _costs(records)
    rows = []
    for rec in records:
        scen = (rec.data.get("inputs") or {}).get("scenario") or rec.data.get("scenario")
        for c in configs(rec):
            row: dict[str, Any] = {"config": c, "label": rec.label(c), "record": rec.name, "engine": rec.kind}
            if rec.kind == "limits":
                cfg = next(x for x in rec.data["configs"] if x["name"] == c)
                ce, su, bi = cfg.get("ceilings") or {}, cfg.get("sustained") or {}, cfg.get("binding") or {}
                row["iops"] = finite(ce.get("rand4k_read_iops"))
                row["iops_note"] = f"4K read ceiling; sustained {_num(su.get('rand4k_read_iops'))}"
                row["bw_bytes_s"] = finite(ce.get("seq1m_read_bytes_s"))
                row["bw_note"] = "1M read ceiling"
                row["binding"] = bi.get("rand4k_read_iops", "")
                row["monthly_cost_usd"] = finite(cfg.get("monthly_cost_usd"))
            else:
                res = [r for r in rec.results if r["config"] == c]
                io = [r for r in res if not is_db(r) and finite(r.get("iops")) is not None]
                db = [r for r in res if is_db(r)]
                if io:
                    top = max(io, key=lambda r: r["iops"])
                    row["iops"], row["iops_note"] = top["iops"], top.get("job", "")
                    row["lat_p99_us"] = latency_us(top.get("lat_p99_us"))
                    row["binding"] = top.get("binding", "")
                    bw = max(io, key=lambda r: finite(r.get("bw_bytes_s")) or 0)
                    row["bw_bytes_s"], row["bw_note"] = finite(bw.get("bw_bytes_s")), bw.get("job", "")
                if db:
                    tp = _charts.tipping_points(rec).get(c)
                    peak = _charts._peak_row(rec, c, db)
                    row["tpm"], row["nopm"], row["vus"] = finite(peak.get("tpm")), finite(peak.get("nopm")), peak["vus"]
                    row["tipping_point"] = tp["vus"] if tp else None
                    row["binding"] = peak.get("binding", row.get("binding", ""))
                    row["monthly_cost_usd"] = finite(peak.get("monthly_cost_usd"))
                    row["usd_per_1000_tpm"] = finite(peak.get("usd_per_1000_tpm"))
                if row.get("monthly_cost_usd") is None:
                    row["monthly_cost_usd"] = finite(costs.get((scen, c)))
                if row.get("usd_per_1000_tpm") is None and row.get("monthly_cost_usd") and row.get("tpm"):
                    # $ per 1,000 TPM: the monthly cost over thousands of TPM.
                    row["usd_per_1000_tpm"] = row["monthly_cost_usd"] / (row["tpm"] / 1000)
            rows.append(row)
    order = list(dict.fromkeys(r["config"] for r in rows))
    rows.sort(key=lambda r: order.index(r["config"]))
    return rows


def _summary_html(rows: list[dict[str, Any]]) -> str:
    cols = [("config", "config"), ("source", "record")]
    has = lambda k: any(r.get(k) is not None for r in rows)  # noqa: E731
    if has("iops"):
        cols.append(("IOPS (peak)", "iops"))
    if has("bw_bytes_s"):
        cols.append(("MB/s (peak)", "bw_bytes_s"))
    if has("lat_p99_us"):
        cols.append(("p99 at peak IOPS", "lat_p99_us"))
    if has("tpm"):
        cols += [("TPM", "tpm"), ("NOPM", "nopm"), ("at VUs", "vus"), ("tipping point", "tipping_point")]
    cols.append(("what binds", "binding"))
    if has("monthly_cost_usd"):
        cols.append(("monthly cost", "monthly_cost_usd"))
    if has("usd_per_1000_tpm"):
        cols.append(("$ per 1,000 TPM", "usd_per_1000_tpm"))
    left = {"config", "record", "binding"}
    out = ['<table class="summary"><thead><tr>'
           + "".join(f"<th{' class=l' if k in left else ''}>{_esc(h)}</th>" for h, k in cols) + "</tr></thead><tbody>"]
    for r in rows:
        cells = []
        for _, k in cols:
            v = r.get(k)
            if k == "config":
                cells.append(f'<td class="l"><b>{_esc(v)}</b></td>')
            elif k == "record":
                cells.append(f'<td class="l">{_esc(r["engine"])} <span class="dim">{_esc(r["record"])}</span></td>')
            elif k == "binding":
                cells.append(f'<td class="l small">{_esc(v or "")}</td>')
            elif k == "iops":
                cells.append(f'<td>{_num(v)}<div class="dim small">{_esc(r.get("iops_note", ""))}</div></td>')
            elif k == "bw_bytes_s":
                cells.append(f'<td>{_num(None if v is None else v / 1e6, ",.1f")}<div class="dim small">{_esc(r.get("bw_note", ""))}</div></td>')
            elif k == "lat_p99_us":
                cells.append(f"<td>{_lat(v)}</td>")
            elif k in ("monthly_cost_usd", "usd_per_1000_tpm"):
                cells.append("<td>—</td>" if v is None else f"<td>${v:,.2f}</td>")
            else:
                cells.append(f"<td>{_num(v)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _jobs_html(records: list[Record]) -> str:
    """The I/O jobs as numbers, configs side by side (the charts' data)."""
    rows = [(rec, r) for rec in records for r in rec.results if not is_db(r) and "job" in r and finite(r.get("iops")) is not None]
    if not rows:
        return ""
    groups = list(dict.fromkeys((rec.name, rec.label(r["config"])) for rec, r in rows))
    jobs = list(dict.fromkeys(r["job"] for _, r in rows))
    by = {(rec.name, rec.label(r["config"]), r["job"]): r for rec, r in rows}
    out = ['<table class="jobs"><thead><tr><th>job</th>' + "".join(f"<th>{_esc(g[1])}</th>" for g in groups) + "</tr></thead><tbody>"]
    for j in jobs:
        cells = []
        for g in groups:
            r = by.get((*g, j))
            if r is None:
                cells.append("<td>—</td>")
                continue
            cells.append(f"<td><b>{_num(r['iops'])}</b> IOPS<br>{_num((finite(r.get('bw_bytes_s')) or 0) / 1e6, ',.1f')} MB/s"
                         f"<br><span class='dim'>{_lat(r.get('lat_mean_us'))} mean, {_lat(r.get('lat_p99_us'))} p99</span></td>")
        out.append(f'<tr><td class="l"><b>{_esc(j)}</b></td>' + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _alarms_html(records: list[Record]) -> str:
    items = []
    for rec in records:
        for a in _charts.alarms_of(rec):
            changes = ", ".join(f"{_t(t)} → {s}" for t, s in a["changes"]) or "no state change"
            reason = a["reasons"][-1] if a["reasons"] else ""
            items.append(f"<tr><td class='l'><b>{_esc(a['name'])}</b></td><td class='l'>{_esc(rec.label(a['config']))}</td>"
                         f"<td class='l'>{_esc(changes)}</td><td class='l small'>{_esc(reason)}</td></tr>")
    if not items:
        return ""
    return ("<h3>Alarms</h3><table class='alarms'><thead><tr><th class=l>alarm</th><th class=l>config</th>"
            "<th class=l>state changes (time from the start)</th><th class=l>last reason</th></tr></thead><tbody>"
            + "".join(items) + "</tbody></table>")


def _t(t: Any) -> str:
    f = finite(t)
    if f is None:
        return str(t)
    h, rem = divmod(int(f), 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}"


def _provenance_html(records: list[Record]) -> str:
    out = ["<table class='prov'><thead><tr><th>record</th><th>engine</th><th>tool</th><th>git sha</th><th>seed</th>"
           "<th>scenario / workload</th><th>host</th></tr></thead><tbody>"]
    notes = []
    for rec in records:
        d = rec.data
        tool = d.get("tool") or {}
        host = d.get("host_info") or {}
        host_s = ", ".join(f"{k} {v}" for k, v in host.items() if k in ("kernel", "cpus", "filesystem", "device", "path") and v)
        scen = d.get("scenario") or (d.get("inputs") or {}).get("scenario") or ""
        wl = d.get("workload") or ""
        title = d.get("title") or ""
        out.append(f"<tr><td class='l'>{_esc(rec.path)}</td><td class='l'>{_esc(rec.kind)}</td>"
                   f"<td class='l'>{_esc(tool.get('name', ''))} {_esc(tool.get('version', ''))}</td>"
                   f"<td class='l mono'>{_esc(str(tool.get('git_sha', ''))[:12])}</td><td>{_esc(d.get('seed', '—'))}</td>"
                   f"<td class='l'>{_esc(scen)}{' — ' + _esc(title) if title else ''}{' · ' + _esc(wl) if wl else ''}</td>"
                   f"<td class='l small'>{_esc(host_s) or '—'}</td></tr>")
        for u in d.get("unverified") or []:
            notes.append(f"<li>{_esc(rec.name)}: {_esc(u)}</li>")
        for w in d.get("warnings") or []:
            notes.append(f"<li>{_esc(rec.name)}: warning: {_esc(w)}</li>")
        if d.get("interrupted"):
            notes.append(f"<li>{_esc(rec.name)}: interrupted — the figures are what ran before the stop</li>")
    out.append("</tbody></table>")
    if notes:
        out.append("<p class='small'>Figures not confirmed by a vendor source, and warnings:</p><ul class='small'>" + "".join(notes) + "</ul>")
    return "".join(out)


def build_html(records: list[Record], title: str | None = None) -> bytes:
    """The report page for `records`, as UTF-8 bytes. An advice record
    (`storlab advise --json`) has a page of its own (report/advice.py) and
    is reported alone."""
    advice = [r for r in records if r.kind == "advice"]
    if advice:
        if len(records) > 1:
            raise StorlabError(f"{advice[0].path}: an advice record is reported alone — give it without other records")
        return _advice.build_html(advice[0], title)
    assign_labels(records)
    chart_list = _charts.all_charts(records)
    titles = [r.data.get("title") or r.data.get("scenario") or r.data.get("workload") or r.name for r in records]
    title = title or " · ".join(dict.fromkeys(str(t) for t in titles))
    parts = [head(title), f"<header><h1>{_esc(title)}</h1><p>{len(records)} record(s): "
             + ", ".join(f"{_esc(r.name)} ({_esc(r.kind)})" for r in records) + "</p></header><main>"]
    parts.append("<h2>Summary</h2>" + _summary_html(summary_rows(records)))
    parts.append(_jobs_html(records))
    section = None
    for ch in chart_list:
        if ch.section != section:
            if section is not None:
                parts.append("</div>")
            if ch.section == "Time series":
                parts.append(f"<h2>{_esc(ch.section)}</h2>" + _alarms_html(records))
            else:
                parts.append(f"<h2>{_esc(ch.section)}</h2>")
            parts.append("<div class='charts'>")
            section = ch.section
        parts.append(chart_div(ch))
    if section is not None:
        parts.append("</div>")
    if section is None or "Time series" not in {c.section for c in chart_list}:
        parts.append(_alarms_html(records))
    parts.append("</main><footer><h2>Provenance</h2>" + _provenance_html(records)
                 + "<p class='dim'>MB = 10<sup>6</sup> bytes. Made by storlab report; charts drawn by plotly.js, embedded.</p></footer>")
    parts.append(scripts([{"id": c.id, "figure": c.figure} for c in chart_list]))
    return "".join(parts).encode("utf-8")
