"""Exporters for run records: the side-by-side table, CSV, and
CloudWatch-shaped JSON (`aws cloudwatch get-metric-data` output)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from storlab.export import csv_text
from storlab.units import latency, with_mb_s

CSV_FIELDS = [
    "config", "job", "pool", "iops", "bw_bytes_s", "read_iops", "write_iops",
    "lat_mean_us", "lat_p50_us", "lat_p90_us", "lat_p99_us", "lat_p999_us", "lat_p9999_us", "lat_max_us",
    "outstanding", "ios", "start_s", "runtime_s", "arrival_iops", "dropped", "binding",
    "read_lat_mean_us", "read_lat_p99_us", "write_lat_mean_us", "write_lat_p99_us",
]

# Default start of the simulated clock in CloudWatch output: fixed, so the
# same scenario gives the same file.
DEFAULT_START = "2026-01-01T00:00:00+00:00"


def is_import(record: dict[str, Any]) -> bool:
    """True for a bulk import's record (`[workload.import]`)."""
    return (record.get("inputs") or {}).get("kind") == "import"


def is_database(record: dict[str, Any]) -> bool:
    """True for a database sweep's record (results per virtual-user count)."""
    return not is_import(record) and bool(record["results"]) and all("vus" in r for r in record["results"])


def _duration(s: float) -> str:
    h, rem = divmod(round(s), 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}"


def import_table(record: dict[str, Any]) -> Group:
    """A bulk import: per config the load time, the input rate, CPU, each
    pool's IOPS, MB/s and use, and what bound it."""
    inputs = record.get("inputs") or {}
    roles = list(dict.fromkeys(k for r in record["results"] for k in (r.get("pools") or {})))
    t = Table(title=record.get("title") or record["scenario"], show_lines=True)
    for col in ["config", "load time", "input MB/s", "CPU"] + [f"pool {ro}" for ro in roles] + ["monthly", "binding"]:
        t.add_column(col, justify="left" if col in ("config", "binding") or col.startswith("pool") else "right",
                     overflow="fold", min_width=16 if col.startswith("pool") else None)
    for r in record["results"]:
        row = [r["config"], _duration(r["runtime_s"]), f"{r['bw_bytes_s'] / 1e6:,.1f}", f"{100 * (r.get('cpu_utilization') or 0):.0f} %"]
        for ro in roles:
            p = (r.get("pools") or {}).get(ro)
            row.append("—" if p is None else f"{p['read_iops']:,.0f} r + {p['write_iops']:,.0f} w IOPS\n"
                       f"{(p['read_bytes_s'] + p['write_bytes_s']) / 1e6:,.1f} MB/s, {100 * p['utilization']:.0f} % busy")
        row += [_usd(r.get("monthly_cost_usd")), with_mb_s(r["binding"])]
        t.add_row(*row)
    notes = Text()
    per = inputs.get("per_input_byte") or {}
    notes.append(
        f"import profile {inputs.get('profile', record['workload'])}: {inputs.get('size_bytes', 0) / 2**30:,.1f} GiB of input, "
        f"{inputs.get('streams', 1)} COPY stream(s), input read from the {inputs.get('input_pool', 'data')} pool; per input byte "
        f"{per.get('wal_bytes', 0):.2f} B of WAL, {per.get('table_bytes', 0):.2f} B of table, {per.get('index_bytes', 0):.2f} B of index, "
        f"{inputs.get('cpu_us_per_mib', 0) / 1000:,.1f} ms of CPU per MiB; MB = 10^6 bytes\n", style="dim")
    _footer(notes, record, warnings=True)
    return Group(t, notes)


def import_csv(record: dict[str, Any]) -> str:
    roles = list(dict.fromkeys(k for r in record["results"] for k in (r.get("pools") or {})))
    fields = (["config", "job", "runtime_s", "bw_bytes_s", "iops", "read_iops", "write_iops", "cpu_utilization"]
              + [f"{ro}_{f}" for ro in roles for f in POOL_FIELDS] + ["monthly_cost_usd", "binding"])
    rows = []
    for r in record["results"]:
        row = dict(r)
        for ro, p in (r.get("pools") or {}).items():
            row.update({f"{ro}_{f}": p[f] for f in POOL_FIELDS})
        rows.append(row)
    return csv_text(fields, rows)


def _main_types(results: list[dict[str, Any]], n: int = 2) -> list[str]:
    """The transaction types with the most transactions (New-Order and
    Payment for TPC-C)."""
    per_min: dict[str, float] = {}
    for r in results:
        for name, t in r["txn"].items():
            per_min[name] = per_min.get(name, 0.0) + t["per_min"]
    return sorted(per_min, key=lambda k: -per_min[k])[:n]


def _usd(v: float | None) -> str:
    return "—" if v is None else (f"${v:,.2f}" if v < 100 else f"${v:,.0f}")


def _spread(v: float, sd: float | None, digits: int = 0) -> str:
    """A predicted figure with the spread its profile's recording had there
    (± one standard deviation over the seeds, relative), with simulate --repeats."""
    if not sd or not v:
        return f"{v:,.{digits}f}"
    pct = 100 * sd / v
    return f"{v:,.{digits}f} ±{pct:.1f} %" if pct < 10 else f"{v:,.{digits}f} ±{pct:.0f} %"


def cost_points(rows: list[dict[str, Any]], tip: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    """Where a sweep's $ per 1,000 TPM is read: at the tipping point and at
    the highest step (once where they are the same step); the last step
    without a tipping point."""
    if not rows:
        return []
    by_vus = {r["vus"]: r for r in rows}
    if tip is None or tip["vus"] not in by_vus:
        return [("at the last step", rows[-1])]
    # A sweep still rising has no tipping point: its cost is read at the
    # step named, not called the tipping point's.
    out = [("at the tipping point" if tip.get("reached", True) else "at the best step so far", by_vus[tip["vus"]])]
    top = tip.get("highest_vus")
    if top is not None and top != tip["vus"] and top in by_vus:
        out.append(("at the highest", by_vus[top]))
    return out


def db_tables(record: dict[str, Any]) -> Group:
    """A database sweep: per config, one row per virtual-user count — NOPM,
    TPM, the main types' latency, CPU, each pool's IOPS, MB/s and use, and
    the binding resource — then the tipping point and $ per 1,000 TPM."""
    out: list[Any] = []
    metric = (record.get("inputs") or {}).get("metric", "tpm")
    configs = list(dict.fromkeys(r["config"] for r in record["results"]))
    tips = {t["config"]: t for t in record.get("tipping_point") or []}
    title = record.get("title") or record["scenario"]
    for c in configs:
        rows = [r for r in record["results"] if r["config"] == c]
        types = _main_types(rows)
        roles = list(dict.fromkeys(k for r in rows for k in (r.get("pools") or {})))
        t = Table(title=f"{title}: {c}" if len(configs) > 1 else title, show_lines=True)
        headline = next((r["headline_name"] for r in rows if r.get("headline_name")), None) if metric == "headline" else None
        cols = ["VUs"] + ([headline] if headline else []) + (["NOPM"] if metric == "nopm" else []) + (["rows/min"] if metric == "rows_per_min" else [])
        cols += ["TPM"] + [f"{ty} p50 / p99" for ty in types] + ["CPU"] + [f"pool {ro}" for ro in roles] + ["binding"]
        for col in cols:
            t.add_column(col, justify="left" if col == "binding" or col.startswith("pool") else "right",
                         overflow="fold", min_width=16 if col.startswith("pool") else None)
        for r in rows:
            row = [str(r["vus"])]
            if headline:
                row.append(_spread(r["headline"], r.get("headline_stdev"), digits=1))
            if metric == "nopm":
                row.append(_spread(r["nopm"], r.get("nopm_stdev")))
            if metric == "rows_per_min":
                row.append(_spread(r["rows_per_min"], r.get("rows_per_min_stdev")))
            row.append(_spread(r["tpm"], r.get("tpm_stdev")) if metric == "tpm" else f"{r['tpm']:,.0f}")
            for ty in types:
                x = r["txn"].get(ty)
                row.append("—" if x is None or not x["commits"] + x["rollbacks"] else f"{latency(x['lat_p50_us'])} / {latency(x['lat_p99_us'])}")
            row.append(f"{100 * (r.get('cpu_utilization') or 0):.0f} %")
            for ro in roles:
                p = (r.get("pools") or {}).get(ro)
                if p is None:
                    row.append("—")
                    continue
                row.append(f"{p['read_iops']:,.0f} r + {p['write_iops']:,.0f} w IOPS\n"
                           f"{(p['read_bytes_s'] + p['write_bytes_s']) / 1e6:,.1f} MB/s, {100 * p['utilization']:.0f} % busy")
            row.append(with_mb_s(r["binding"]))
            t.add_row(*row)
            for k in range(len(r.get("phases") or [])):
                t.add_row(*db_phase_row(r, k, metric, types, roles))
        out.append(t)
        notes = Text()
        tip = tips.get(c)
        if tip is not None:
            word = "tipping point" if tip["reached"] else "no tipping point yet"
            label = headline if tip["metric"] == "headline" and headline else tip["metric"].upper().replace("_", " ")
            value = f"{tip['value']:,.1f}" if abs(tip["value"]) < 100 else f"{tip['value']:,.0f}"
            notes.append(f"{word}: {tip['vus']} VUs, {value} {label} — {tip['note']}\n", style="bold")
        for label, at in cost_points(rows, tip):
            if at.get("usd_per_1000_tpm") is not None:
                notes.append(f"{label}: {_usd(at['usd_per_1000_tpm'])} per 1,000 TPM a month at {at['vus']} VUs "
                             f"({at['tpm']:,.0f} TPM; {_usd(at['monthly_cost_usd'])} a month)\n", style="bold")
            else:
                notes.append("monthly cost not known (a price is missing from the catalog, see below): no $ per 1,000 TPM\n", style="yellow")
                break
        for r in rows:
            if r.get("rows_target") is not None:
                done = (f"all in after {clock(r['finish_s'])}" if r.get("finish_s") is not None
                        else "never all in: the rate it settled at is 0")
                notes.append(f"{r['vus']} VUs × their rows: {r['rows_target']:,} rows {done}\n", style="bold")
        out.append(notes)
    notes = Text()
    inputs = record.get("inputs") or {}
    notes.append(
        f"profile {inputs.get('profile', record['workload'])} at scale {inputs.get('scale', 0):,g}"
        f"{'' if inputs.get('scale_unit') in ('scale', None) else ' ' + inputs['scale_unit'] + 's'}, "
        f"{inputs.get('rampup_s', 0):,.0f} s rampup + {inputs.get('duration_s', 0):,.0f} s per VU count, seed {record['seed']}; "
        f"{record.get('simulated_s', 0):,.0f} s simulated; latency = transaction response time; MB = 10^6 bytes\n", style="dim")
    for line in inputs.get("assumptions") or []:
        notes.append(line + "\n", style="dim")
    _footer(notes, record, warnings=True)
    out.append(notes)
    return Group(*out)


def db_phase_row(r: dict[str, Any], k: int, metric: str, types: list[str], roles: list[str]) -> list[str]:
    """One stretch of a VU count's window, in the table's columns: its
    time (since the run began), rates, latencies and pools' I/O; CPU and
    busy shares are the whole window's only."""
    phases = r["phases"]
    ph = phases[k]
    n = len(phases)
    mark = "└" if k == n - 1 else "├"
    row = [f"{mark} {clock(ph['from_s'])} to {clock(ph['to_s'])}"]
    if metric == "headline":
        # The phase's headline, at the window's own ratio to its TPM.
        per_tpm = (r.get("headline") or 0) / r["tpm"] if r.get("tpm") else 0
        row.append(f"{(ph.get('tpm') or 0) * per_tpm:,.1f}")
    if metric == "nopm":
        row.append(f"{ph.get('nopm') or 0:,.0f}")
    if metric == "rows_per_min":
        row.append(f"{ph.get('rows_per_min') or 0:,.0f}")
    row.append(f"{ph.get('tpm') or 0:,.0f}")
    for ty in types:
        x = (ph.get("txn") or {}).get(ty)
        row.append("—" if x is None or not x["commits"] + x["rollbacks"] else f"{latency(x['lat_p50_us'])} / {latency(x['lat_p99_us'])}")
    row.append("")
    for ro in roles:
        p = (ph.get("pools") or {}).get(ro)
        row.append("—" if p is None else f"{p['read_iops']:,.0f} r + {p['write_iops']:,.0f} w IOPS\n"
                   f"{(p['read_bytes_s'] + p['write_bytes_s']) / 1e6:,.1f} MB/s")
    row.append(emptied_text(ph))
    return row


def results_table(record: dict[str, Any]) -> Group:
    if is_import(record):
        return import_table(record)
    if is_database(record):
        return db_tables(record)
    configs = list(dict.fromkeys(r["config"] for r in record["results"]))
    jobs = list(dict.fromkeys(r["job"] for r in record["results"]))
    by = {(r["config"], r["job"]): r for r in record["results"]}
    t = Table(title=f"{record.get('title') or record['scenario']}  (MB/s: 10^6 bytes a second)", show_lines=True)
    t.add_column("job", style="cyan", no_wrap=True)
    for c in configs:
        t.add_column(c, overflow="fold", min_width=22)
    for j in jobs:
        cells = []
        phased = [by[(c, j)] for c in configs if (c, j) in by and by[(c, j)].get("phases")]
        for c in configs:
            r = by.get((c, j))
            if r is None:
                cells.append(Text("—"))
                continue
            cell = Text(f"{r['iops']:,.0f} IOPS  {r['bw_bytes_s'] / 1e6:,.1f} MB/s", style="bold")
            cell.append(f"\nlatency {latency(r['lat_mean_us'])} mean, {latency(r['lat_p99_us'])} p99")
            if r.get("read_iops") and r.get("write_iops") and r.get("read_lat_p99_us") is not None:
                # A mix: each direction on its own line (reads and writes
                # queue apart and a device serves them at different speeds).
                for d in ("read", "write"):
                    cell.append(f"\n  {d}s {latency(r[f'{d}_lat_mean_us'])} mean, {latency(r[f'{d}_lat_p99_us'])} p99")
            if r.get("dropped"):
                cell.append(f"\n{r['dropped']:,} arrivals dropped (open-loop queue full)", style="yellow")
            cell.append("\n" + with_mb_s(r["binding"]), style="dim")
            if r.get("phases"):
                cell.append("\nthe whole window; a bucket emptied: the rows below split it", style="dim")
            cells.append(cell)
        t.add_row(j, *cells)
        # A bucket emptied during the job: a row for each stretch, in the
        # order they ran (before, after), each with its own rates.
        for k in range(max((len(r["phases"]) for r in phased), default=0)):
            row = []
            for c in configs:
                r = by.get((c, j))
                ph = (r or {}).get("phases") or []
                row.append(io_phase_cell(ph, k) if k < len(ph) else Text(""))
            t.add_row(Text(phase_label(k, max(len(r["phases"]) for r in phased)), style="cyan"), *row)
    notes = Text()
    for group in together(record["results"]):
        notes.append(f"ran at the same time (no stonewall between them, as in fio): {', '.join(group)}\n", style="bold")
    notes.append(
        f"workload {record['workload']}, seed {record['seed']}: {record['simulated_s']:,.0f} s simulated, "
        f"{record['simulated_ios']:,} I/Os; MB = 10^6 bytes\n",
        style="dim",
    )
    _footer(notes, record, warnings=False)
    return Group(t, notes)


def together(results: list[dict[str, Any]]) -> list[list[str]]:
    """The jobs whose windows overlapped (`start_s` to `start_s +
    runtime_s`, measured: `elapsed_s`), in groups, from the first config's
    results: jobs of one file without `stonewall` between them run at the
    same time, as in fio."""
    first = [r for r in results if r["config"] == results[0]["config"]] if results else []
    # A simulated result's runtime_s, a measured one's elapsed_s.
    spans = sorted((r.get("start_s") or 0.0, (r.get("start_s") or 0.0) + (r.get("runtime_s") or r.get("elapsed_s") or 0.0),
                    r["job"]) for r in first if r.get("runtime_s") or r.get("elapsed_s"))
    groups: list[list[str]] = []
    end = -1.0
    for start, stop, job in spans:
        if groups and start < end - 1e-9:
            groups[-1].append(job)
        else:
            groups.append([job])
        end = max(end, stop) if len(groups[-1]) > 1 else stop
    return [g for g in groups if len(g) > 1]


def phase_label(k: int, n: int) -> str:
    """The job column of a stretch's row: before and after the bucket
    emptied (numbered where more than one did)."""
    if n == 2:
        return "  ├ before" if k == 0 else "  └ after"
    return f"  {'└' if k == n - 1 else '├'} stretch {k + 1} of {n}"


def phase_span(phases: list[dict[str, Any]], k: int) -> str:
    """A stretch's time in its result's window: "00:00 to 33:20"."""
    t0 = phases[0]["from_s"]
    return f"{clock(phases[k]['from_s'] - t0)} to {clock(phases[k]['to_s'] - t0)}"


def emptied_text(ph: dict[str, Any]) -> str:
    """What a stretch after the first ran on: the limits at their baseline."""
    return "bucket empty: " + "; ".join(with_mb_s(e) for e in ph["emptied"]) if ph.get("emptied") else "burst: before a bucket emptied"


def io_phase_cell(phases: list[dict[str, Any]], k: int) -> Text:
    ph = phases[k]
    cell = Text(f"{phase_span(phases, k)}: {ph['iops']:,.0f} IOPS  {ph['bw_bytes_s'] / 1e6:,.1f} MB/s", style="bold")
    cell.append(f"\nlatency {latency(ph['lat_mean_us'])} mean, {latency(ph['lat_p99_us'])} p99")
    cell.append("\n" + emptied_text(ph), style="dim")
    return cell


def clock(seconds: float) -> str:
    """Time since the start as hh:mm, with :ss when not on a whole minute."""
    s = round(seconds)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h:02d}:{m:02d}" + (f":{sec:02d}" if sec else "")


def _footer(notes: Text, record: dict[str, Any], *, warnings: bool) -> None:
    """The notes under every simulate table: warnings (where the table does
    not print them elsewhere), alarm state changes, unverified figures, an
    interrupted run."""
    if warnings:
        for line in record.get("warnings") or []:
            notes.append(line + "\n", style="yellow")
    for line in rules_lines(record.get("inputs") or {}):
        notes.append(line + "\n", style="dim")
    for line in alarm_lines(record):
        notes.append(line + "\n", style="bold red" if ": ALARM at" in line else "dim")
    if record.get("unverified"):
        notes.append("* not confirmed by a vendor source: " + "; ".join(record["unverified"]) + "\n", style="dim yellow")
    if record.get("interrupted"):
        notes.append("interrupted: the results above are what was simulated before the stop\n", style="yellow")


def rule_text(r: dict[str, Any]) -> str:
    """One device's or host's rules of the day: "aws/ebs/gp2: rules of
    2018-02-02 to 2018-11-26 (source)"."""
    if r.get("until"):
        span = f"rules of {r.get('from')} to {r['until']}"
    elif r.get("from"):
        span = f"today's rules, since {r['from']}"
    else:
        span = "today's rules (no dated history in the catalog)"
    src = f" ({r['source']})" if r.get("source") else ""
    return f"{r['id']}: {span}{src}"


def rules_lines(inputs: dict[str, Any]) -> list[str]:
    """`as_of`: which vendor rules each config followed, and that prices are
    today's; nothing without a date."""
    date = inputs.get("as_of")
    if not date:
        return []
    out = [f"as of {date}: device and host limits as they stood that day; prices are today's"]
    seen: list[str] = []
    for rules in (inputs.get("rules_applied") or {}).values():
        for r in rules:
            line = "  " + rule_text(r)
            if line not in seen:
                seen.append(line)
    return out + seen


def alarm_lines(record: dict[str, Any]) -> list[str]:
    """One line per alarm state change: "gp2 burst-below-half: BurstBalance
    < 50 for 2 of 2 periods: ALARM at 00:18"."""
    return [
        f"{a['config']} {a['alarm']}: {a['reason']}: {a['to']} at {clock(a['time_s'])}"
        for a in record.get("alarms") or []
    ]


DB_CSV_FIELDS = ["config", "job", "vus", "nopm", "tpm", "rows_per_min", "cpu_utilization"]
DB_CSV_TAIL = ["monthly_cost_usd", "usd_per_1000_tpm", "binding"]
POOL_FIELDS = ["read_iops", "write_iops", "read_bytes_s", "write_bytes_s", "utilization"]


def db_csv(record: dict[str, Any]) -> str:
    """A database sweep as CSV: one row per (config, VU count); per pool
    `<role>_read_iops` ...; per transaction type `<type>_per_min`,
    `<type>_p50_us`, `<type>_p99_us`."""
    roles = list(dict.fromkeys(k for r in record["results"] for k in (r.get("pools") or {})))
    types = list(dict.fromkeys(k for r in record["results"] for k in r["txn"]))
    fields = (DB_CSV_FIELDS + [f"{ro}_{f}" for ro in roles for f in POOL_FIELDS]
              + [f"{ty}_{f}" for ty in types for f in ("per_min", "p50_us", "p99_us")] + DB_CSV_TAIL)
    rows = []
    for r in record["results"]:
        row = dict(r)
        for ro, p in (r.get("pools") or {}).items():
            row.update({f"{ro}_{f}": p[f] for f in POOL_FIELDS})
        for ty, x in r["txn"].items():
            row.update({f"{ty}_per_min": x["per_min"], f"{ty}_p50_us": x["lat_p50_us"], f"{ty}_p99_us": x["lat_p99_us"]})
        rows.append(row)
    return csv_text(fields, rows)


def to_csv(record: dict[str, Any]) -> str:
    """One row per config and job, the columns of CSV_FIELDS (docs/record.md);
    a database sweep one row per config and VU count (db_csv), an import one row per config (import_csv)."""
    if is_import(record):
        return import_csv(record)
    if is_database(record):
        return db_csv(record)
    return csv_text(CSV_FIELDS, record["results"])


def to_cloudwatch(record: dict[str, Any], start: str = DEFAULT_START) -> str:
    """`aws cloudwatch get-metric-data`-shaped JSON: one MetricDataResult per
    series, timestamps as ISO 8601 from `start`, in ascending order. An
    interrupted run's series stop early: their StatusCode is `PartialData`,
    CloudWatch's code for a result with more data to come (GetMetricData,
    MetricDataResult.StatusCode: Complete | InternalError | PartialData |
    Forbidden)."""
    t0 = datetime.fromisoformat(start)
    if t0.tzinfo is None:
        t0 = t0.replace(tzinfo=timezone.utc)
    results = []
    for i, s in enumerate(record["series"], 1):
        results.append({
            "Id": f"m{i}",
            "Label": f"{s['config']} {s['resource']} {s['metric']}",
            "Timestamps": [(t0 + timedelta(seconds=ts)).isoformat() for ts in s["timestamps"]],
            "Values": s["values"],
            "StatusCode": "PartialData" if record.get("interrupted") else "Complete",
            "Messages": [],
        })
    return json.dumps({"MetricDataResults": results, "Messages": []}, indent=2) + "\n"
