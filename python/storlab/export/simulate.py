"""Exporters for run records: the side-by-side table, CSV, and
CloudWatch-shaped JSON (`aws cloudwatch get-metric-data` output)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

CSV_FIELDS = [
    "config", "job", "pool", "iops", "bw_bytes_s", "read_iops", "write_iops",
    "lat_mean_us", "lat_p50_us", "lat_p90_us", "lat_p99_us", "lat_p999_us", "lat_p9999_us", "lat_max_us",
    "outstanding", "ios", "start_s", "runtime_s", "arrival_iops", "dropped", "binding",
]

# Default start of the simulated clock in CloudWatch output: fixed, so the
# same scenario gives the same file.
DEFAULT_START = "2026-01-01T00:00:00+00:00"


def _lat(us: float) -> str:
    from storlab.cli.out import latency

    return latency(us)


def results_table(record: dict[str, Any]) -> Group:
    configs = list(dict.fromkeys(r["config"] for r in record["results"]))
    jobs = list(dict.fromkeys(r["job"] for r in record["results"]))
    by = {(r["config"], r["job"]): r for r in record["results"]}
    t = Table(title=f"{record.get('title') or record['scenario']}  (MB/s: 10^6 bytes a second)", show_lines=True)
    t.add_column("job", style="cyan", no_wrap=True)
    for c in configs:
        t.add_column(c, overflow="fold", min_width=22)
    for j in jobs:
        cells = []
        for c in configs:
            r = by.get((c, j))
            if r is None:
                cells.append(Text("—"))
                continue
            cell = Text(f"{r['iops']:,.0f} IOPS  {r['bw_bytes_s'] / 1e6:,.1f} MB/s", style="bold")
            cell.append(f"\nlatency {_lat(r['lat_mean_us'])} mean, {_lat(r['lat_p99_us'])} p99")
            if r.get("dropped"):
                cell.append(f"\n{r['dropped']:,} arrivals dropped (open-loop queue full)", style="yellow")
            cell.append("\n" + r["binding"], style="dim")
            cells.append(cell)
        t.add_row(j, *cells)
    notes = Text()
    notes.append(
        f"workload {record['workload']}, seed {record['seed']}: {record['simulated_s']:,.0f} s simulated, "
        f"{record['simulated_ios']:,} I/Os; MB = 10^6 bytes\n",
        style="dim",
    )
    for line in alarm_lines(record):
        notes.append(line + "\n", style="bold red" if ": ALARM at" in line else "dim")
    if record.get("unverified"):
        notes.append("* not confirmed by a vendor source: " + "; ".join(record["unverified"]) + "\n", style="dim yellow")
    if record.get("interrupted"):
        notes.append("interrupted: the results above are what was simulated before the stop\n", style="yellow")
    return Group(t, notes)


def clock(seconds: float) -> str:
    """Time since the start as hh:mm, with :ss when not on a whole minute."""
    s = round(seconds)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h:02d}:{m:02d}" + (f":{sec:02d}" if sec else "")


def alarm_lines(record: dict[str, Any]) -> list[str]:
    """One line per alarm state change: "gp2 burst-below-half: BurstBalance
    < 50 for 2 of 2 periods: ALARM at 00:18"."""
    return [
        f"{a['config']} {a['alarm']}: {a['reason']}: {a['to']} at {clock(a['time_s'])}"
        for a in record.get("alarms") or []
    ]


def to_csv(record: dict[str, Any]) -> str:
    """One row per config and job, the columns of CSV_FIELDS (docs/record.md)."""
    from storlab.cli.out import csv_text

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
