"""The report's charts as Plotly figures (plain dicts, drawn by plotly.js in
the page). Each builder takes the records and returns the charts it can
make from them, or none: a section a record has no data for is skipped,
never drawn empty. Each chart states how many of the records' data points
it holds (`points`), so a test can count them in the rendered page."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from storlab.report.records import Record, finite, is_db, job_runs, latency_us

PCTS = [("lat_p50_us", "p50"), ("lat_p90_us", "p90"), ("lat_p99_us", "p99"), ("lat_p999_us", "p99.9"),
        ("lat_p9999_us", "p99.99"), ("lat_max_us", "max")]
MB = 1e6


@dataclass
class Chart:
    id: str
    section: str
    title: str
    figure: dict[str, Any]
    points: int
    note: str = ""
    kind: str = ""  # for docs and tests: bars, distribution, series, balance, sweep, txn, io-profile, ceilings
    half: bool = False  # half width on wide screens


# One colour per config label across every chart (D3's category10, plotly.js's default).
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
_colours: dict[str, str] = {}


def colour(label: str) -> str:
    if label not in _colours:
        _colours[label] = PALETTE[len(_colours) % len(PALETTE)]
    return _colours[label]


def _layout(title: str, x: str, y: str, **kw: Any) -> dict[str, Any]:
    lay = {
        "title": {"text": title, "x": 0.01, "y": 0.985, "yref": "container", "yanchor": "top", "font": {"size": 15}},
        "xaxis": {"title": {"text": x}, "automargin": True, "gridcolor": "#e5e5e5"},
        "yaxis": {"title": {"text": y}, "automargin": True, "gridcolor": "#e5e5e5", "rangemode": "tozero"},
        "legend": {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0, "font": {"size": 11}},
        "margin": {"l": 60, "r": 20, "t": 80, "b": 50},
        "height": 420,
        "plot_bgcolor": "white",
        "paper_bgcolor": "white",
        "font": {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 12},
        "hovermode": "closest",
    }
    lay.update(kw)
    return lay


def time_unit(max_us: float) -> tuple[str, float]:
    """The unit a latency axis reads best in, from its largest value (µs):
    µs below 1 ms, ms below 10 s, else s; and the divisor from µs."""
    if max_us < 1_000:
        return "µs", 1.0
    if max_us < 10_000_000:
        return "ms", 1_000.0
    return "s", 1_000_000.0


def _n(values: list[Any]) -> int:
    return sum(1 for v in values if v is not None)


# ---------------------------------------------------------------- limits


def ceilings(records: list[Record]) -> list[Chart]:
    """`limits` records: each config's ceilings with every bucket full
    beside what it sustains once they are empty."""
    rows = [(rec, c) for rec in records if rec.kind == "limits" for c in rec.data["configs"]]
    if not rows:
        return []
    out = []
    for cid, title, keys, scale, unit in (
        ("ceilings-iops", "4 KiB random IOPS: ceiling (buckets full) and sustained (buckets empty)",
         [("rand4k_read_iops", "read"), ("rand4k_write_iops", "write")], 1, "IOPS"),
        ("ceilings-mbs", "1 MiB sequential MB/s: ceiling and sustained",
         [("seq1m_read_bytes_s", "read"), ("seq1m_write_bytes_s", "write")], MB, "MB/s"),
    ):
        x = [rec.label(c["name"]) for rec, c in rows]
        data = []
        pts = 0
        for key, rw in keys:
            for part, dash in (("ceilings", None), ("sustained", "sustained")):
                y = [(finite((c.get(part) or {}).get(key)) or 0) / scale if finite((c.get(part) or {}).get(key)) is not None else None
                     for _, c in rows]
                binding = [(c.get("binding" if part == "ceilings" else "sustained_binding") or {}).get(key, "") for _, c in rows]
                pts += _n(y)
                data.append({"type": "bar", "name": f"{rw} {'ceiling' if part == 'ceilings' else 'sustained'}", "x": x, "y": y,
                             "customdata": binding, "hovertemplate": "%{x}<br>%{y:,.0f} " + unit + "<br>%{customdata}<extra></extra>",
                             **({"marker": {"pattern": {"shape": "/"}}} if dash else {})})
        out.append(Chart(cid, "Ceilings", title, {"data": data, "layout": _layout(title, "", unit, barmode="group")}, pts,
                         kind="ceilings", half=True))
    return out


# ---------------------------------------------------------------- I/O jobs


def _io_rows(records: list[Record]) -> list[tuple[Record, dict[str, Any]]]:
    return [(rec, r) for rec in records for r in rec.results if not is_db(r) and "job" in r and finite(r.get("iops")) is not None]


def _spread_bars(rec: Record, r: dict[str, Any], key: str, scale: float) -> tuple[float, float] | None:
    """The lowest and highest of a job's repeated runs (bench disk), as
    error-bar extents from the bar (the best run)."""
    runs = job_runs(rec).get(r["job"])
    if not runs or len(runs) < 2:
        return None
    vals = [finite(x.get(key)) for x in runs]
    vals = [v for v in vals if v is not None]
    if len(vals) < 2:
        return None
    y = finite(r.get(key)) or 0.0
    return (max(0.0, y - min(vals)) / scale, max(0.0, max(vals) - y) / scale)


def io_jobs(records: list[Record]) -> list[Chart]:
    rows = _io_rows(records)
    if not rows:
        return []
    jobs = list(dict.fromkeys(r["job"] for _, r in rows))
    groups = list(dict.fromkeys((id(rec), r["config"]) for rec, r in rows))
    recs = {id(rec): rec for rec, _ in rows}
    by = {(id(rec), r["config"], r["job"]): (rec, r) for rec, r in rows}
    out = []
    # CrystalDiskMark draws one bar per test, tests top to bottom.
    height = max(320, 90 + len(jobs) * (14 * len(groups) + 18))
    lat_unit, lat_scale = time_unit(max((latency_us(r.get("lat_p99_us")) or 0 for _, r in rows), default=0))
    for cid, title, key, scale, unit, fmt in (
        ("io-iops", "IOPS per job", "iops", 1, "IOPS", ",.0f"),
        ("io-mbs", "Throughput per job (MB/s, 10^6 bytes)", "bw_bytes_s", MB, "MB/s", ",.1f"),
        ("io-p99", f"p99 latency per job ({lat_unit})", "lat_p99_us", lat_scale, lat_unit, ",.3f"),
    ):
        data, pts = [], 0
        for gid, config in groups:
            rec = recs[gid]
            y, x, err_lo, err_hi, hover = [], [], [], [], []
            any_err = False
            for j in jobs:
                hit = by.get((gid, config, j))
                if hit is None:
                    continue
                _, r = hit
                v = (latency_us if key == "lat_p99_us" else finite)(r.get(key))
                if v is None:
                    continue
                y.append(j)
                x.append(v / scale)
                e = _spread_bars(rec, r, key, scale) if key != "lat_p99_us" else None
                err_lo.append(e[0] if e else 0)
                err_hi.append(e[1] if e else 0)
                any_err |= e is not None
                hover.append(r.get("binding", ""))
            pts += len(x)
            trace = {"type": "bar", "orientation": "h", "name": rec.label(config), "x": x, "y": y, "customdata": hover,
                     "text": [format(v, fmt) for v in x], "textposition": "outside", "cliponaxis": False,
                     "textfont": {"size": 10}, "marker": {"color": colour(rec.label(config))},
                     "hovertemplate": "%{y}<br>%{x:" + fmt + "} " + unit + "<br>%{customdata}<extra>" + rec.label(config) + "</extra>"}
            if any_err:
                trace["error_x"] = {"type": "data", "symmetric": False, "array": err_hi, "arrayminus": err_lo, "thickness": 1.2}
            data.append(trace)
        lay = _layout(title, unit, "", barmode="group", height=height)
        lay["yaxis"].update({"autorange": "reversed", "type": "category"})
        # Bars are read by their length: a linear axis from zero, always
        # (each bar carries its figure as text, so a short one still reads).
        lay["xaxis"].update({"rangemode": "tozero", "type": "linear"})
        note = "bars: the record's figure (bench disk: the best run, as CrystalDiskMark); whiskers: the lowest and highest run" \
            if any("error_x" in t for t in data) else ""
        out.append(Chart(cid, "I/O jobs", title, {"data": data, "layout": lay}, pts, note=note, kind="bars", half=True))
    out.append(_latency_distribution(rows, jobs, groups, recs, by))
    return out


def _latency_distribution(rows, jobs, groups, recs, by) -> Chart:
    """Latency percentiles per job, one small panel per job: each line is a
    config's distribution from p50 to the maximum, on a log scale."""
    cols = 2 if len(jobs) > 1 else 1
    nrows = (len(jobs) + cols - 1) // cols
    data, annotations, pts = [], [], 0
    lay = _layout("Latency distribution per job (ms, log scale)", "", "", height=max(360, 60 + 200 * nrows))
    lay["grid"] = {"rows": nrows, "columns": cols, "pattern": "independent", "ygap": 0.35, "xgap": 0.08}
    lay["legend"] = {"orientation": "h", "x": 0, "y": -0.04, "yanchor": "top", "font": {"size": 11}}
    for ji, j in enumerate(jobs):
        ax = "" if ji == 0 else str(ji + 1)
        for gi, (gid, config) in enumerate(groups):
            hit = by.get((gid, config, j))
            if hit is None:
                continue
            rec, r = hit
            xs, ys = [], []
            for key, name in PCTS:
                v = finite(r.get(key))
                if v is not None and v > 0:
                    xs.append(name)
                    ys.append(v / 1000)
            pts += len(ys)
            data.append({"type": "scatter", "mode": "lines+markers", "x": xs, "y": ys, "name": recs[gid].label(config),
                         "legendgroup": recs[gid].label(config), "showlegend": ji == 0, "xaxis": f"x{ax}", "yaxis": f"y{ax}",
                         "line": {"color": colour(recs[gid].label(config))}, "marker": {"size": 6},
                         "hovertemplate": j + " %{x}: %{y:,.3f} ms<extra>" + recs[gid].label(config) + "</extra>"})
        lay[f"xaxis{ax}"] = {"type": "category", "categoryorder": "array", "categoryarray": [p for _, p in PCTS],
                             "gridcolor": "#e5e5e5", "tickfont": {"size": 10}}
        lay[f"yaxis{ax}"] = {"type": "log", "gridcolor": "#e5e5e5", "title": {"text": "ms"} if ji % cols == 0 else {}}
        annotations.append({"text": f"<b>{j}</b>", "showarrow": False, "xref": f"x{ax} domain", "yref": f"y{ax} domain",
                            "x": 0, "y": 1.14, "xanchor": "left", "font": {"size": 12}})
    lay["annotations"] = annotations
    lay["margin"]["t"] = 70
    return Chart("io-latency", "I/O jobs", "Latency distribution per job", {"data": data, "layout": lay}, pts,
                 note="each line runs from the median to the slowest I/O the record keeps (p50, p90, p99, p99.9, p99.99, max)",
                 kind="distribution")


# ---------------------------------------------------------------- time series


def _axis_times(s: dict[str, Any]) -> tuple[list[Any], str]:
    ts = s.get("timestamps") or []
    if ts and all(isinstance(t, (int, float)) for t in ts):
        return [float(t) for t in ts], "seconds"
    if ts and all(isinstance(t, str) for t in ts):
        return list(ts), "date"
    return list(range(len(s.get("values") or []))), "index"


def _group_series(records: list[Record]) -> dict[tuple[int, str, str], dict[str, dict[str, Any]]]:
    """(record, config, resource) → metric → series."""
    g: dict[tuple[int, str, str], dict[str, dict[str, Any]]] = {}
    for rec in records:
        for s in rec.series:
            if not isinstance(s, dict) or not isinstance(s.get("values"), list):
                continue
            g.setdefault((id(rec), s.get("config", ""), s.get("resource", "")), {})[s.get("metric", "")] = s
    return g


def _add(a: list[float | None], b: list[float | None]) -> list[float | None]:
    return [None if x is None or y is None else x + y for x, y in zip(a, b)]


def _vals(s: dict[str, Any] | None) -> list[float | None] | None:
    return None if s is None else [finite(v) for v in s["values"]]


def derived(metrics: dict[str, dict[str, Any]]) -> dict[str, tuple[dict[str, Any], list[float | None]]]:
    """From one resource's CloudWatch metrics, what a DBA reads: IOPS,
    MB/s, queue depth and average latency (ms) per period, as CloudWatch's
    own guides derive them (ops / period; total time / ops)."""
    out: dict[str, tuple[dict[str, Any], list[float | None]]] = {}
    m = metrics
    if "VolumeReadOps" in m and "VolumeWriteOps" in m:
        base = m["VolumeReadOps"]
        p = finite(base.get("period_s")) or 60.0
        ops = _add(_vals(m["VolumeReadOps"]), _vals(m["VolumeWriteOps"]))
        out["iops"] = (base, [None if v is None else v / p for v in ops])
        if "VolumeReadBytes" in m and "VolumeWriteBytes" in m:
            b = _add(_vals(m["VolumeReadBytes"]), _vals(m["VolumeWriteBytes"]))
            out["mbs"] = (base, [None if v is None else v / p / MB for v in b])
        if "VolumeQueueLength" in m:
            out["qd"] = (m["VolumeQueueLength"], _vals(m["VolumeQueueLength"]))
        if "VolumeTotalReadTime" in m and "VolumeTotalWriteTime" in m:
            t = _add(_vals(m["VolumeTotalReadTime"]), _vals(m["VolumeTotalWriteTime"]))
            out["lat"] = (base, [None if (a is None or o is None or o <= 0) else a / o * 1000 for a, o in zip(t, ops)])
    elif "ReadIOPS" in m and "WriteIOPS" in m:  # RDS instance metrics
        base = m["ReadIOPS"]
        r, w = _vals(m["ReadIOPS"]), _vals(m["WriteIOPS"])
        out["iops"] = (base, _add(r, w))
        if "ReadThroughput" in m and "WriteThroughput" in m:
            out["mbs"] = (base, [None if v is None else v / MB for v in _add(_vals(m["ReadThroughput"]), _vals(m["WriteThroughput"]))])
        if "DiskQueueDepth" in m:
            out["qd"] = (m["DiskQueueDepth"], _vals(m["DiskQueueDepth"]))
        if "ReadLatency" in m and "WriteLatency" in m:
            rl, wl = _vals(m["ReadLatency"]), _vals(m["WriteLatency"])
            lat = []
            for a, b, x, y in zip(rl, wl, r, w):
                if None in (a, b, x, y) or (x + y) <= 0:
                    lat.append(None)
                else:
                    lat.append((a * x + b * y) / (x + y) * 1000)
            out["lat"] = (base, lat)
    return out


BALANCES = ("BurstBalance", "EBSIOBalance%", "EBSByteBalance%")


def _xaxis(kinds: set[str], tmax: float) -> tuple[str, float, dict[str, Any]]:
    if kinds == {"date"}:
        return "time (UTC)", 1.0, {"type": "date"}
    if tmax >= 3 * 3600:
        return "hours from the start", 3600.0, {}
    return "minutes from the start", 60.0, {}


def _panels(lay: dict[str, Any], n: int, titles: list[str]) -> list[str]:
    """Small multiples: `n` panels stacked, each with axes of its own (a
    70 s sweep beside a 2 h run keeps its own time scale); returns each
    panel's axis suffix ("", "2", ...). One panel keeps the plain layout."""
    if n <= 1:
        return [""]
    lay["grid"] = {"rows": n, "columns": 1, "pattern": "independent", "ygap": 0.45}
    lay["height"] = max(lay.get("height", 420), 120 + 260 * n)
    lay.setdefault("annotations", [])
    out = []
    for k in range(n):
        ax = "" if k == 0 else str(k + 1)
        out.append(ax)
        lay["annotations"].append({"text": f"<b>{titles[k]}</b>", "showarrow": False, "xref": f"x{ax} domain",
                                   "yref": f"y{ax} domain", "x": 0, "y": 1.02, "xanchor": "left", "yanchor": "bottom",
                                   "font": {"size": 12}})
    return out


def _panel_axes(lay: dict[str, Any], ax: str, xtitle: str, xextra: dict[str, Any], ytitle: str) -> None:
    base_x = {k: v for k, v in lay["xaxis"].items()}
    base_y = {k: v for k, v in lay["yaxis"].items()}
    base_x["title"] = {"text": xtitle}
    base_x.update(xextra)
    base_y["title"] = {"text": ytitle}
    lay[f"xaxis{ax}"] = base_x
    lay[f"yaxis{ax}"] = base_y


def series(records: list[Record]) -> list[Chart]:
    """The CloudWatch-style series: IOPS, MB/s, queue depth, latency and
    burst balance over time. Records of different lengths never share a
    time axis: with more than one record, each is a panel of its own, on
    its own scale (minutes or hours from its own start)."""
    groups = _group_series(records)
    recs = {id(r): r for r in records}
    out = []
    # Which resources to draw: an RDS config has both per-pool volume
    # metrics and the instance's; the instance's are drawn only where no
    # volume metrics exist for the config.
    has_volume = {(gid, c) for (gid, c, _), m in groups.items() if "VolumeReadOps" in m}
    derived_all = {}
    for key, m in groups.items():
        gid, c, res = key
        if "VolumeReadOps" not in m and (gid, c) in has_volume:
            continue
        d = derived(m)
        if d:
            derived_all[key] = d
    # Each record's own time axis: its kind of stamps and its length.
    kinds: dict[int, set[str]] = {}
    tmax: dict[int, float] = {}

    def seen(gid: int, s: dict[str, Any]) -> None:
        ts, k = _axis_times(s)
        kinds.setdefault(gid, set()).add(k)
        if k != "date" and ts:
            tmax[gid] = max(tmax.get(gid, 0.0), ts[-1])

    for key in derived_all:
        for _, (s, _) in derived_all[key].items():
            seen(key[0], s)
    for (gid, _, _), m in groups.items():
        for b in BALANCES:
            if b in m:
                seen(gid, m[b])
    axes = {gid: _xaxis(k, tmax.get(gid, 0.0)) for gid, k in kinds.items()}

    def xs(s: dict[str, Any], gid: int) -> list[Any]:
        ts, k = _axis_times(s)
        return ts if k == "date" else [round(t / axes[gid][1], 6) for t in ts]

    for cid, title, unit in (("series-iops", "IOPS over time", "IOPS"), ("series-mbs", "Throughput over time", "MB/s"),
                             ("series-qd", "Queue depth over time (average I/Os outstanding)", "I/Os"),
                             ("series-lat", "Average latency over time", "ms")):
        metric = cid.split("-")[1]
        per: dict[int, list[dict[str, Any]]] = {}
        pts = 0
        for (gid, c, res), d in derived_all.items():
            if metric not in d:
                continue
            s, y = d[metric]
            pts += _n(y)
            name = f"{recs[gid].label(c)} — {res}" if len({r for (g2, c2, r) in derived_all if (g2, c2) == (gid, c)}) > 1 else recs[gid].label(c)
            per.setdefault(gid, []).append({"type": "scatter", "mode": "lines", "x": xs(s, gid), "y": y, "name": name,
                                            "line": {"width": 1.5, **({"color": _colours[name]} if name in _colours else {})},
                                            "hovertemplate": "%{x}: %{y:,.2f} " + unit + "<extra>" + name + "</extra>"})
        if not per:
            continue
        gids = list(per)
        lay = _layout(title, axes[gids[0]][0], unit)
        lay["xaxis"].update(axes[gids[0]][2])
        lay["hovermode"] = "x unified" if len(gids) == 1 else "closest"
        data = []
        for gid, ax in zip(gids, _panels(lay, len(gids), [recs[g].name or recs[g].path for g in gids])):
            if ax:
                _panel_axes(lay, ax, axes[gid][0], axes[gid][2], unit)
            for tr in per[gid]:
                data.append({**tr, "xaxis": f"x{ax}", "yaxis": f"y{ax}"})
        _threshold_lines(records, lay, data, gids, recs, xs, {"qd": ("VolumeQueueLength", "DiskQueueDepth")}.get(metric, ()))
        out.append(Chart(cid, "Time series", title, {"data": data, "layout": lay}, pts, kind="series",
                         half=len(gids) == 1))
    bal = _balance(records, groups, recs, xs, axes)
    if bal:
        out.append(bal)
    other = _other_series(records, groups, recs)
    out.extend(other)
    return out


_THRESHOLD = re.compile(r"threshold \(?(-?\d+(?:\.\d+)?)\)?", re.I)
# storlab's own reason text: "BurstBalance < 50 for 2 of 2 periods".
_RULE = re.compile(r"(\S+) (?:<=|<|>=|>) (-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?) for \d+ of \d+ period")


def alarms_of(rec: Record) -> list[dict[str, Any]]:
    """The record's alarms, one entry per (alarm, config): its state changes
    as (time_s, state) in time order, and what the record tells of its rule.
    The contract (storlab-record `AlarmChange`) is a flat list of changes —
    {alarm, config, time_s, from, to, reason}; the threshold is read from
    CloudWatch's reason text ("… the threshold (50.0)") and the metric from
    the reason or the series names, where they say so."""
    raw = rec.data.get("alarms")
    if not isinstance(raw, list):
        return []
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for ch in raw:
        if not isinstance(ch, dict) or finite(ch.get("time_s")) is None or "to" not in ch:
            continue
        key = (str(ch.get("alarm", "")), str(ch.get("config", "")))
        g = groups.setdefault(key, {"name": key[0], "config": key[1], "changes": [], "reasons": [],
                                    "threshold": None, "metric": None})
        g["changes"].append((float(ch["time_s"]), str(ch["to"])))
        reason = str(ch.get("reason") or "")
        if reason:
            g["reasons"].append(reason)
        m = _THRESHOLD.search(reason)
        if m and g["threshold"] is None:
            g["threshold"] = float(m.group(1))
        rule = _RULE.search(reason)
        if rule:
            if g["threshold"] is None:
                g["threshold"] = float(rule.group(2))
            g["metric"] = g["metric"] or rule.group(1)
        for metric in (*BALANCES, *(s.get("metric", "") for s in rec.series)):
            if metric and g["metric"] is None and metric in reason:
                g["metric"] = metric
    for g in groups.values():
        g["changes"].sort()
    return list(groups.values())


def _threshold_lines(records, lay, data, gids, recs, xs, metrics) -> list[str]:
    """Each alarm on one of `metrics` drawn on its record's panel: a dashed
    line at its threshold, a dotted line and a marker at each state change.
    Returns a note per alarm drawn."""
    notes = []
    panel = {gid: ("" if k == 0 else str(k + 1)) for k, gid in enumerate(gids)}
    for rec in records:
        if id(rec) not in panel:
            continue
        ax = panel[id(rec)]
        for a in alarms_of(rec):
            if a["metric"] not in metrics or a["threshold"] is None:
                continue
            who = rec.label(a["config"])
            thr = a["threshold"]
            times = xs({"timestamps": [t for t, _ in a["changes"]]}, id(rec))
            states = [st for _, st in a["changes"]]
            lay.setdefault("shapes", []).append({"type": "line", "xref": f"x{ax} domain", "x0": 0, "x1": 1, "yref": f"y{ax}",
                                                 "y0": thr, "y1": thr, "name": f"threshold {a['name']}",
                                                 "line": {"dash": "dash", "color": "#c0392b", "width": 1}})
            for t in times:
                lay["shapes"].append({"type": "line", "xref": f"x{ax}", "x0": t, "x1": t, "yref": f"y{ax} domain", "y0": 0, "y1": 1,
                                      "line": {"dash": "dot", "color": "#999", "width": 1}})
            data.append({"type": "scatter", "mode": "markers+text", "x": times, "y": [thr] * len(times),
                         "xaxis": f"x{ax}", "yaxis": f"y{ax}",
                         "name": f"alarm {a['name']} · {who}", "text": states, "textposition": "top center",
                         "marker": {"symbol": ["triangle-down" if st.upper() == "ALARM" else "circle" for st in states],
                                    "size": 11, "color": ["#c0392b" if st.upper() == "ALARM" else "#27ae60" for st in states]},
                         "hovertemplate": "%{x}: %{text}<extra>alarm " + a["name"] + "</extra>"})
            notes.append(f"alarm {a['name']} ({who}): {a['metric']} threshold {thr:g}")
    return notes


def _balance(records, groups, recs, xs, axes) -> Chart | None:
    per: dict[int, list[dict[str, Any]]] = {}
    pts = 0
    for (gid, c, res), m in groups.items():
        for b in BALANCES:
            if b not in m:
                continue
            y = _vals(m[b])
            pts += _n(y)
            name = f"{recs[gid].label(c)} — {res} {b}"
            per.setdefault(gid, []).append({"type": "scatter", "mode": "lines", "x": xs(m[b], gid), "y": y, "name": name,
                                            "line": {"width": 1.8}, "hovertemplate": "%{x}: %{y:.1f} %<extra>" + name + "</extra>"})
    if not per:
        return None
    gids = list(per)
    lay = _layout("Burst balance over time (%)", axes[gids[0]][0], "%", shapes=[])
    lay["xaxis"].update(axes[gids[0]][2])
    lay["yaxis"]["range"] = [0, 105]
    data = []
    for gid, ax in zip(gids, _panels(lay, len(gids), [recs[g].name or recs[g].path for g in gids])):
        if ax:
            _panel_axes(lay, ax, axes[gid][0], axes[gid][2], "%")
            lay[f"yaxis{ax}"]["range"] = [0, 105]
        for tr in per[gid]:
            data.append({**tr, "xaxis": f"x{ax}", "yaxis": f"y{ax}"})
    notes = _threshold_lines(records, lay, data, gids, recs, xs, BALANCES)
    pts += sum(len(t["x"]) for t in data if t.get("name", "").startswith("alarm "))
    return Chart("series-balance", "Time series", "Burst balance", {"data": data, "layout": lay}, pts,
                 note="; ".join(notes) + ("; dashed line: the alarm's threshold, markers: its state changes" if notes else ""),
                 kind="balance")


def _other_series(records, groups, recs) -> list[Chart]:
    """Series no other chart draws (bench db's Transactions and
    RowsInserted per period): per minute, one line per run."""
    known = {"VolumeReadOps", "VolumeWriteOps", "VolumeReadBytes", "VolumeWriteBytes", "VolumeTotalReadTime",
             "VolumeTotalWriteTime", "VolumeQueueLength", "ReadIOPS", "WriteIOPS", "ReadLatency", "WriteLatency",
             "ReadThroughput", "WriteThroughput", "DiskQueueDepth", *BALANCES}
    per_metric: dict[str, list[tuple[int, str, str, dict[str, Any]]]] = {}
    for (gid, c, res), m in groups.items():
        for metric, s in m.items():
            if metric not in known:
                per_metric.setdefault(metric, []).append((gid, c, res, s))
    out = []
    for metric, lst in per_metric.items():
        data, pts = [], 0
        count = all(s.get("unit") == "Count" for *_, s in lst)
        for gid, c, res, s in lst:
            ts, kind = _axis_times(s)
            if kind == "date":
                t0 = datetime.fromisoformat(ts[0].replace("Z", "+00:00")) if ts else None
                x = [(datetime.fromisoformat(t.replace("Z", "+00:00")) - t0).total_seconds() for t in ts]
            else:
                x = [t - ts[0] for t in ts] if ts else []
            p = finite(s.get("period_s")) or 1.0
            y = [None if v is None else (v * 60 / p if count else v) for v in _vals(s)]
            pts += _n(y)
            data.append({"type": "scatter", "mode": "lines+markers", "x": x, "y": y, "name": f"{recs[gid].label(c)} — {res}",
                         "marker": {"size": 4}, "hovertemplate": "%{x:.0f} s: %{y:,.0f}<extra></extra>"})
        unit = f"{metric} per minute" if count else f"{metric} ({lst[0][3].get('unit', '')})"
        title = f"{metric} over time" + (" (per minute, by period)" if count else "")
        lay = _layout(title, "seconds from the run's first login", unit)
        out.append(Chart(f"series-{metric.lower()}", "Time series", title, {"data": data, "layout": lay}, pts, kind="series"))
    return out


# ---------------------------------------------------------------- databases


def tipping_points(rec: Record) -> dict[str, dict[str, Any]]:
    """config → tipping point. bench db writes one (`tipping_point`: {vus,
    …}) for its one config; a simulated sweep one per config, as a mapping
    config → {vus, …} or a list of {config, vus, …}."""
    tp = rec.data.get("tipping_point")
    configs = list(dict.fromkeys(r["config"] for r in rec.results if is_db(r)))
    out: dict[str, dict[str, Any]] = {}
    if isinstance(tp, dict) and "vus" in tp:
        for c in configs:
            out[c] = tp
    elif isinstance(tp, dict):
        out = {k: v for k, v in tp.items() if isinstance(v, dict) and "vus" in v}
    elif isinstance(tp, list):
        out = {x["config"]: x for x in tp if isinstance(x, dict) and "config" in x and "vus" in x}
    tps = rec.data.get("tipping_points")
    if isinstance(tps, (dict, list)) and not out:
        return tipping_points(Record(rec.path, {"tipping_point": tps, "results": rec.results}))
    return out


def _db_groups(records: list[Record]) -> list[tuple[Record, str, list[dict[str, Any]]]]:
    out = []
    for rec in records:
        cfgs = list(dict.fromkeys(r["config"] for r in rec.results if is_db(r)))
        for c in cfgs:
            rows = sorted((r for r in rec.results if is_db(r) and r["config"] == c), key=lambda r: r["vus"])
            out.append((rec, c, rows))
    return out


def _spread_of(r: dict[str, Any], key: str) -> tuple[float, float] | None:
    lo, hi, y = finite(r.get(f"{key}_min")), finite(r.get(f"{key}_max")), finite(r.get(key))
    if lo is not None and hi is not None and y is not None:
        return max(0.0, y - lo), max(0.0, hi - y)
    sd = finite(r.get(f"{key}_stdev"))
    if sd is not None and (r.get("repeats") or 0) > 1:
        return sd, sd
    return None


def db_sweeps(records: list[Record]) -> list[Chart]:
    groups = _db_groups(records)
    if not groups:
        return []
    out = []
    for key, name in (("nopm", "NOPM"), ("tpm", "TPM")):
        data, shapes, annotations, pts = [], [], [], 0
        for rec, c, rows in groups:
            xs = [r["vus"] for r in rows]
            ys = [finite(r.get(key)) for r in rows]
            if _n(ys) == 0:
                continue
            pts += _n(ys)
            tr = {"type": "scatter", "mode": "lines+markers", "x": xs, "y": ys, "name": rec.label(c),
                  "line": {"color": colour(rec.label(c))},
                  "customdata": [r.get("binding", "") for r in rows],
                  "hovertemplate": "%{x} VUs: %{y:,.0f} " + name + "<br>%{customdata}<extra>" + rec.label(c) + "</extra>"}
            spreads = [_spread_of(r, key) for r in rows]
            if any(spreads):
                tr["error_y"] = {"type": "data", "symmetric": False, "array": [s[1] if s else 0 for s in spreads],
                                 "arrayminus": [s[0] if s else 0 for s in spreads], "thickness": 1.2, "width": 5}
            data.append(tr)
            tp = tipping_points(rec).get(c)
            if tp is not None:
                hit = next((r for r in rows if r["vus"] == tp["vus"]), None)
                ty = finite(hit.get(key)) if hit else None
                if ty is not None:
                    data.append({"type": "scatter", "mode": "markers", "x": [tp["vus"]], "y": [ty], "showlegend": False, "meta": "annotation",
                                 "name": f"tipping point · {rec.label(c)}", "marker": {"symbol": "star", "size": 16, "color": "#c0392b",
                                                                                     "line": {"width": 1, "color": "white"}},
                                 "hovertemplate": f"tipping point: {tp['vus']} VUs<br>{tp.get('note', '')}<extra>{rec.label(c)}</extra>"})
                    shapes.append({"type": "line", "x0": tp["vus"], "x1": tp["vus"], "yref": "paper", "y0": 0, "y1": 1,
                                   "line": {"dash": "dot", "color": "#c0392b", "width": 1}})
                    reached = tp.get("reached", True)
                    annotations.append({"x": tp["vus"], "y": ty, "text": f"tipping point {tp['vus']} VU{'' if tp['vus'] == 1 else 's'}" + ("" if reached else " (still rising)"),
                                        "showarrow": True, "arrowhead": 0, "ax": 0, "ay": -34, "font": {"size": 11, "color": "#c0392b"}})
        if not data:
            continue
        title = f"{name} against virtual users"
        lay = _layout(title, "virtual users", name, shapes=shapes, annotations=annotations)
        vus = sorted({r["vus"] for _, _, rows in groups for r in rows})
        if len(vus) > 2 and vus[-1] / max(vus[0], 1) >= 8:
            # √2 or doubling steps sit evenly on a log axis, where plotly
            # places shapes and annotations by log10 of the value.
            lay["xaxis"].update({"type": "log", "tickvals": vus, "ticktext": [str(v) for v in vus]})
            for sh in shapes:
                sh["x0"] = sh["x1"] = math.log10(sh["x0"])
            for an in annotations:
                an["x"] = math.log10(an["x"])
        out.append(Chart(f"db-{key}", "Database", title, {"data": data, "layout": lay}, pts,
                         note="whiskers: the lowest and highest repeat (or ±1 standard deviation); star: the tipping point",
                         kind="sweep", half=True))
    out.extend(_txn_latency(groups))
    out.extend(_io_profile(groups))
    return out


def _peak_row(rec: Record, c: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    tp = tipping_points(rec).get(c)
    if tp is not None:
        hit = next((r for r in rows if r["vus"] == tp["vus"]), None)
        if hit is not None:
            return hit
    return max(rows, key=lambda r: finite(r.get("nopm")) or finite(r.get("tpm")) or 0)


def _txn_latency(groups) -> list[Chart]:
    """Each transaction type's latency percentiles at the tipping point (or
    the best step), one panel per config."""
    panels = []
    for rec, c, rows in groups:
        r = _peak_row(rec, c, rows)
        txn = r.get("txn")
        if isinstance(txn, dict) and txn:
            panels.append((rec, c, r, txn))
    if not panels:
        return []
    pct = [("lat_p50_us", "p50", "#9ecae1"), ("lat_p90_us", "p90", "#4292c6"), ("lat_p99_us", "p99", "#08519c")]
    cols = min(2, len(panels))
    nrows = (len(panels) + cols - 1) // cols
    data, annotations, pts = [], [], 0
    unit, div = time_unit(max((finite((t or {}).get(k)) or 0 for *_, txn in panels for t in txn.values() for k, _, _ in pct), default=0))
    lay = _layout(f"Latency per transaction type ({unit}) at the tipping point", "", "", barmode="group",
                  height=max(380, 80 + 260 * nrows))
    lay["grid"] = {"rows": nrows, "columns": cols, "pattern": "independent", "ygap": 0.3, "xgap": 0.08}
    lay["legend"] = {"orientation": "v", "x": 1.01, "y": 1, "font": {"size": 11}}
    lay["margin"]["r"] = 70
    for pi, (rec, c, r, txn) in enumerate(panels):
        ax = "" if pi == 0 else str(pi + 1)
        names = list(txn)
        for key, label, colour in pct:
            ys = [finite((txn[n] or {}).get(key)) for n in names]
            ys = [None if v is None else v / div for v in ys]
            pts += _n(ys)
            data.append({"type": "bar", "x": names, "y": ys, "name": label, "legendgroup": label, "showlegend": pi == 0,
                         "marker": {"color": colour}, "xaxis": f"x{ax}", "yaxis": f"y{ax}",
                         "hovertemplate": "%{x} " + label + ": %{y:,.2f} " + unit + "<extra>" + rec.label(c) + "</extra>"})
        lay[f"xaxis{ax}"] = {"type": "category", "tickfont": {"size": 10}}
        lay[f"yaxis{ax}"] = {"type": "linear", "rangemode": "tozero", "gridcolor": "#e5e5e5",
                             "title": {"text": unit} if pi % cols == 0 else {}}
        annotations.append({"text": f"<b>{rec.label(c)}</b> at {r['vus']} VU{'' if r['vus'] == 1 else 's'}", "showarrow": False, "xref": f"x{ax} domain",
                            "yref": f"y{ax} domain", "x": 0, "y": 1.12, "xanchor": "left"})
    lay["annotations"] = annotations
    lay["margin"]["t"] = 70
    return [Chart("db-txn", "Database", "Latency per transaction type", {"data": data, "layout": lay}, pts,
                  note="at the tipping point, or the best step where the record has none", kind="txn")]


def _io_profile(groups) -> list[Chart]:
    """The I/O each sweep step asks of the storage: per pool role, read and
    write IOPS (simulated sweeps, `pools`), or bytes per transaction
    (measured, `io_profile.per_txn`)."""
    out = []
    data, pts = [], 0
    for rec, c, rows in groups:
        roles = list(dict.fromkeys(role for r in rows for role in _pools_of(r)))
        for role in roles:
            for k, rw, dash in (("read_iops", "read", "solid"), ("write_iops", "write", "dash")):
                ys = [finite(_pools_of(r).get(role, {}).get(k)) for r in rows]
                if _n(ys) == 0:
                    continue
                pts += _n(ys)
                data.append({"type": "scatter", "mode": "lines+markers", "x": [r["vus"] for r in rows], "y": ys,
                             "name": f"{rec.label(c)} — {role} {rw}", "line": {"dash": dash},
                             "hovertemplate": "%{x} VUs: %{y:,.0f} IOPS<extra>" + f"{rec.label(c)} {role} {rw}" + "</extra>"})
    if data:
        title = "I/O profile: IOPS per pool against virtual users"
        out.append(Chart("db-io", "Database", title, {"data": data, "layout": _layout(title, "virtual users", "IOPS")}, pts,
                         kind="io-profile", half=True))
    data, pts = [], 0
    for rec, c, rows in groups:
        for k, label in (("read_bytes", "read"), ("write_bytes", "written"), ("wal_bytes", "WAL")):
            ys = [finite(((r.get("io_profile") or {}).get("per_txn") or {}).get(k)) for r in rows]
            if _n(ys) == 0:
                continue
            pts += _n(ys)
            data.append({"type": "bar", "x": [str(r["vus"]) for r in rows], "y": ys, "name": f"{rec.label(c)} — {label}",
                         "hovertemplate": "%{x} VUs: %{y:,.0f} bytes " + label + " per transaction<extra></extra>"})
    if data:
        title = "I/O profile: bytes per transaction"
        lay = _layout(title, "virtual users", "bytes per transaction", barmode="group")
        lay["xaxis"]["type"] = "category"
        out.append(Chart("db-io-per-txn", "Database", title, {"data": data, "layout": lay}, pts, kind="io-profile", half=True))
    return out


def _pools_of(r: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A simulated result's `pools`: a mapping role → figures, or a list
    of {role, …}."""
    p = r.get("pools")
    if isinstance(p, dict):
        return {k: v for k, v in p.items() if isinstance(v, dict)}
    if isinstance(p, list):
        return {str(x.get("role", i)): x for i, x in enumerate(p) if isinstance(x, dict)}
    return {}


def _room_for_legend(ch: Chart, width_px: int = 900) -> None:
    """A legend above the plot grows upwards by a row for every few
    entries: widen the top margin to match so it never covers the title."""
    lay = ch.figure["layout"]
    if "grid" in lay or lay.get("legend", {}).get("yanchor") != "bottom":
        return
    names = [t.get("name", "") for t in ch.figure["data"] if t.get("showlegend", True) and t.get("name")]
    if not names:
        return
    per_row = max(1, width_px // (max(len(n) for n in names) * 7 + 50))
    rows = -(-len(names) // per_row)
    lay["margin"]["t"] = 50 + 22 * rows
    lay["height"] = lay.get("height", 420) + 22 * max(0, rows - 1)


def all_charts(records: list[Record]) -> list[Chart]:
    _colours.clear()
    for rec in records:
        for c in rec.labels.values():
            colour(c)
    out = [*ceilings(records), *io_jobs(records), *series(records), *db_sweeps(records)]
    for ch in out:
        _room_for_legend(ch)
    return out
