"""`storlab simulate SCENARIO`: the scenario's workload simulated on every
config, configs side by side, with CloudWatch-style series."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TimeRemainingColumn

from storlab import api
from storlab.cli import app
from storlab.cli.out import COUNT_MAX
from storlab.cli.out import emit, one_of
from storlab.cli.report import check_output, write_report_of
from storlab.errors import StorlabError
from storlab.export.simulate import DEFAULT_START, results_table, to_cloudwatch, to_csv
from storlab.files import check_writable, write_atomically
from storlab.imports import write_hammerdb_json
from storlab.units import parse_duration


@app.command("simulate")
def simulate_cmd(
    scenario: Path = typer.Argument(..., help="Scenario file (TOML)."),
    json_out: bool = typer.Option(False, "--json", help="Print the run record as JSON."),
    csv_out: bool = typer.Option(False, "--csv", help="Print the results as CSV."),
    cloudwatch: Optional[Path] = typer.Option(None, "--cloudwatch", help="Write the series as `aws cloudwatch get-metric-data` JSON to FILE."),
    start: str = typer.Option(DEFAULT_START, "--start", help="Wall-clock start of the simulated clock in --cloudwatch output."),
    period: Optional[float] = typer.Option(None, "--period", help="Series period in seconds (default: the scenario's period_s, else 60)."),
    catalog: Optional[list[Path]] = typer.Option(None, "--catalog", help="Extra catalog file or folder (repeatable)."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write the run's HTML report (storlab report) to FILE."),
    hammerdb_json: Optional[Path] = typer.Option(None, "--hammerdb-json", help="A TPC-C database workload: also write the simulated run as HammerDB's result file (hammerdb-job-report-v1, marked simulated) to FILE."),
    config: Optional[str] = typer.Option(None, "--config", help="Run only this config of the scenario."),
    threads: Optional[int] = typer.Option(None, "--threads", max=COUNT_MAX, help="Every job's numjobs (threads), replacing the scenario's."),
    iodepth: Optional[int] = typer.Option(None, "--iodepth", max=COUNT_MAX, help="Every job's iodepth, replacing the scenario's."),
    duration: Optional[str] = typer.Option(None, "--duration", help="Simulated time per job (30, 30s, 10m, 2h), replacing the scenario's duration_s."),
    profile: Optional[str] = typer.Option(None, "--profile", help="A CrystalDiskMark preset (cdm-default, cdm-peak, cdm-real-world, cdm-nvme) in place of the scenario's workload."),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="Vendor rules as they stood on this day (YYYY-MM-DD), in place of the scenario's as_of; prices stay today's."),
    repeats: Optional[int] = typer.Option(None, "--repeats", max=COUNT_MAX, help="A database workload: run each VU count with N seeds; the figures are their mean, with the model's seed-to-seed spread (compare and the tipping point use it)."),
    accept_suspect: bool = typer.Option(False, "--accept-suspect", help="A database workload: simulate a profile its health check finds suspect (a dipping sweep, a penalty at its fit's bound, too short a window), with a warning in every output, rather than refuse it."),
) -> None:
    """Simulate the workload on every config: IOPS, throughput, latency percentiles, what bound it, and per-period series."""
    one_of(json_out, csv_out)
    check_output(report)
    check_output(hammerdb_json, "--hammerdb-json")
    if cloudwatch is not None:
        check_writable(cloudwatch, "--cloudwatch")
    for flag, v in (("--threads", threads), ("--iodepth", iodepth)):
        if v is not None and v < 1:
            raise StorlabError(f"{flag} {v}: must be at least 1 — nearest valid value 1")
    duration_s = None if duration is None else parse_duration(duration, "--duration")
    overrides = {"config": config, "threads": threads, "iodepth": iodepth, "duration_s": duration_s, "profile": profile, "as_of": as_of,
                 "repeats": repeats, "accept_suspect": accept_suspect or None}
    try:
        datetime.fromisoformat(start)
    except ValueError:
        raise StorlabError(f"--start '{start}' is not an ISO 8601 time — e.g. {DEFAULT_START}") from None

    err = Console(stderr=True)
    if sys.stderr.isatty():
        with Progress("simulating", BarColumn(), "{task.percentage:>3.0f}%", TimeRemainingColumn(), console=err, transient=True) as bar:
            task = bar.add_task("sim", total=1.0)
            record = api.simulate(scenario, catalog, period, progress=lambda f: bar.update(task, completed=f), **overrides)
    else:
        record = api.simulate(scenario, catalog, period, **overrides)

    if cloudwatch is not None:
        write_atomically(cloudwatch, to_cloudwatch(record, start))
    if report is not None:
        write_report_of(record, scenario, report)
    if hammerdb_json is not None:
        write_hammerdb_json(record, hammerdb_json, datetime.fromisoformat(start).strftime("%Y-%m-%d %H:%M:%S"))
    emit(record, json_out, csv_out, lambda: to_csv(record), lambda: results_table(record))
    if csv_out:
        # CSV has no place for warnings: a suspect profile's go to stderr.
        for w in record.get("warnings") or []:
            if " is suspect, simulated as accepted: " in w:
                err.print(f"warning: {w}", style="yellow", highlight=False, soft_wrap=True)
    if record.get("interrupted"):
        err.print("interrupted: results so far are above", style="yellow")
        raise typer.Exit(130)
