"""`storlab simulate SCENARIO`: the scenario's workload simulated on every
config, configs side by side, with CloudWatch-style series."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from storlab import api
from storlab.cli import app
from storlab.errors import StorlabError
from storlab.export import to_json
from storlab.export.simulate import DEFAULT_START, results_table, to_cloudwatch, to_csv


def write_atomically(path: Path, text: str) -> None:
    """Writes `text` to `path` through a temporary file, so a failed or
    interrupted run never leaves a half-written file."""
    path = Path(path)
    if path.is_dir():
        raise StorlabError(f"{path}: is a folder — give a file name for the output")
    if not path.parent.exists():
        raise StorlabError(f"{path.parent}: no such folder for the output file")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
) -> None:
    """Simulate the workload on every config: IOPS, throughput, latency percentiles, what bound it, and per-period series."""
    if json_out and csv_out:
        raise StorlabError("--json and --csv both print to stdout — choose one")
    from storlab.cli.report import check_output

    check_output(report)
    try:
        from datetime import datetime

        datetime.fromisoformat(start)
    except ValueError:
        raise StorlabError(f"--start '{start}' is not an ISO 8601 time — e.g. {DEFAULT_START}") from None

    err = Console(stderr=True)
    if sys.stderr.isatty():
        from rich.progress import BarColumn, Progress, TimeRemainingColumn

        with Progress("simulating", BarColumn(), "{task.percentage:>3.0f}%", TimeRemainingColumn(), console=err, transient=True) as bar:
            task = bar.add_task("sim", total=1.0)
            record = api.simulate(scenario, catalog, period, progress=lambda f: bar.update(task, completed=f))
    else:
        record = api.simulate(scenario, catalog, period)

    if cloudwatch is not None:
        write_atomically(cloudwatch, to_cloudwatch(record, start))
    if report is not None:
        from storlab.cli.report import write_report_of

        write_report_of(record, scenario, report)
    if json_out:
        typer.echo(to_json(record), nl=False)
    elif csv_out:
        typer.echo(to_csv(record), nl=False)
    else:
        Console().print(results_table(record))
    if record.get("interrupted"):
        err.print("interrupted: results so far are above", style="yellow")
        raise typer.Exit(130)
