"""`storlab import FILE… [-o RECORD.json] [--json]`: other tools' result
files (CrystalDiskMark, fio, HammerDB, sysbench, pgbench, CloudWatch) as
one storlab run record, printed as a table. The readers are Rust's
(storlab-record's `import` module), reading and merging are
`storlab.imports`'; this layer prints."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table
from rich.text import Text

from storlab import tool_info
from storlab.cli import app
from storlab.cli.out import console, latency, mb_s
from storlab.cli.report import check_output
from storlab.export import to_json
from storlab.files import write_atomically
from storlab.imports import merge, read_import


def _num(v: float | None, fmt: str = ",.0f") -> str:
    return "—" if v is None else format(v, fmt)


def import_table(rec: dict[str, Any]) -> Table:
    """One row per imported result: I/O jobs with IOPS, MB/s and latency;
    database results with NOPM/TPM and their transaction latency. The rate
    column is named for what the rows hold: "IOPS" over disk tests only,
    "NOPM, TPM" over database runs only, both over a mix."""
    t = Table(title=f"{rec['tool']['name']}: {rec['workload']}  (MB/s: 10^6 bytes a second)")
    io = sum(1 for r in rec["results"] if "iops" in r)
    rate = {0: "NOPM, TPM", len(rec["results"]): "IOPS"}.get(io, "IOPS; NOPM, TPM")
    for c in ("config", "job", rate, "MB/s", "latency mean", "p99", "in flight", "binding"):
        t.add_column(c, justify="left" if c in ("config", "job", "binding") else "right", no_wrap=c == "job", overflow="fold")
    for r in rec["results"]:
        if "iops" in r:
            p99 = latency(r["lat_p99_us"]) if r.get("lat_p99_us") else "—"
            mean = latency(r["lat_mean_us"]) if r.get("lat_mean_us") else "—"
            t.add_row(r["config"], r["job"], _num(r["iops"], ",.1f"), mb_s(r["bw_bytes_s"]), mean, p99,
                      str(r.get("outstanding") or "—"), r["binding"])
        else:
            figs = []
            if r.get("nopm") is not None:
                figs.append(f"NOPM {r['nopm']:,.0f}")
            if r.get("tpm") is not None:
                figs.append(f"TPM {r['tpm']:,.0f}")
            txn = r.get("txn") or {}
            lat = [f"{k} {latency(v.get('lat_mean_us'))}" for k, v in txn.items() if v.get("lat_mean_us")]
            p99s = [f"{k} {latency(v.get('lat_p99_us'))}" for k, v in txn.items() if v.get("lat_p99_us")]
            t.add_row(r["config"], f"{r['job']} ({r.get('vus', '?')} VUs)", "  ".join(figs), "—", "\n".join(lat) or "—",
                      "\n".join(p99s) or "—", str(r.get("vus", "—")), r["binding"])
    return t


def series_table(rec: dict[str, Any]) -> Table:
    """One row per imported series: its points, first and last time, mean and maximum."""
    t = Table(title=f"{rec['tool']['name']}: {len(rec['series'])} series")
    for c in ("config", "resource", "metric", "unit", "period", "points", "from", "to", "mean", "max"):
        t.add_column(c, justify="right" if c in ("period", "points", "mean", "max") else "left", overflow="fold")
    for s in rec["series"]:
        vals = s["values"]
        ts = s["timestamps"]
        t.add_row(s["config"], s["resource"], s["metric"], s["unit"], f"{s['period_s']:g} s", str(len(vals)),
                  str(ts[0]) if ts else "—", str(ts[-1]) if ts else "—",
                  _num(sum(vals) / len(vals), ",.2f") if vals else "—", _num(max(vals), ",.2f") if vals else "—")
    return t


@app.command("import")
def import_cmd(
    files: list[Path] = typer.Argument(..., help="Result files: CrystalDiskMark 6/7/8 text exports, fio --output-format=json/json+, HammerDB hammerdb-job-report-v1 JSON, sysbench or pgbench final reports, or CloudWatch get-metric-data JSON."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the run record (JSON) to this file, for report, compare and calibrate."),
    json_out: bool = typer.Option(False, "--json", help="Print the run record as JSON instead of the table."),
) -> None:
    """Other tools' results as a storlab run record (engine "measure", tool.name the origin)."""
    check_output(output, "-o")
    rec = merge([(str(f), read_import(f)) for f in files])
    info = tool_info()
    rec["inputs"] = {**(rec.get("inputs") or {}), "files": [str(f) for f in files],
                     "imported_by": f"storlab {info['version']} ({info['git_sha'][:12]})"}
    text = to_json(rec)
    if output is not None:
        write_atomically(output, text)
    if json_out:
        typer.echo(text, nl=False)
        return
    con = console()
    if rec["results"]:
        con.print(import_table(rec))
    if rec["series"]:
        con.print(series_table(rec))
    notes = Text()
    for src in (rec.get("host_info") or {}).get("sources") or [rec.get("host_info") or {}]:
        keep = [f"{k} {src[k]}" for k in ("profile", "test", "date", "os", "time", "benchmark", "database") if src.get(k)]
        if keep:
            notes.append(f"{src.get('file', '')}: " + "; ".join(str(x) for x in keep) + "\n", style="dim")
    for w in rec.get("warnings") or []:
        notes.append(w + "\n", style="yellow")
    if rec.get("interrupted"):
        notes.append("interrupted: the tool's run was stopped; the rows above are what it measured\n", style="yellow")
    if output is not None:
        notes.append(f"record written to {output}\n", style="dim")
    notes.rstrip()
    if notes.plain:
        con.print(notes)
