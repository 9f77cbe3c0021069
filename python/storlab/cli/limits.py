"""`storlab limits SCENARIO`: each config's ceilings, what binds them, burst
budgets and monthly cost."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from storlab import api
from storlab.cli import app
from storlab.cli.out import csv_text, emit, one_of
from storlab.export.limits import CSV_FIELDS, limits_rows, limits_table


@app.command("limits")
def limits_cmd(
    scenario: Path = typer.Argument(..., help="Scenario file (TOML)."),
    json_out: bool = typer.Option(False, "--json", help="Print the limits record as JSON."),
    csv_out: bool = typer.Option(False, "--csv", help="Print one row per config as CSV (columns: docs/record.md)."),
    catalog: Optional[list[Path]] = typer.Option(None, "--catalog", help="Extra catalog file or folder (repeatable)."),
    at_iops: Optional[float] = typer.Option(None, "--at-iops", help="How long each bucket lasts at N IOPS (4 KiB random reads) per pool, and the rate after."),
    at_mb_s: Optional[float] = typer.Option(None, "--at-mb-s", help="The same at N MB/s (10^6 bytes, 1 MiB sequential reads) per pool."),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="Vendor rules as they stood on this day (YYYY-MM-DD), in place of the scenario's as_of; prices stay today's."),
) -> None:
    """Ceilings per I/O pattern, with buckets full and empty, the component that binds, and the monthly cost."""
    one_of(json_out, csv_out)
    record = api.limits(scenario, catalog, at_iops=at_iops, at_mb_s=at_mb_s, as_of=as_of)
    emit(record, json_out, csv_out, lambda: csv_text(CSV_FIELDS, limits_rows(record)), lambda: limits_table(record))
