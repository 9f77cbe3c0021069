"""`storlab calibrate RESULT --scenario FILE --config NAME --catalog-out FILE`:
fit a config's device latency to a measurement's queue-depth-1 jobs and
write a catalog overlay."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from storlab.calibrate import calibrate
from storlab.cli import app
from storlab.files import check_writable, write_atomically
from storlab.cli.out import csv_text


#: `calibrate --csv` columns, one row per calibrated device.
CSV_FIELDS = ["device", "read_median_us", "read_p99_us", "write_median_us", "write_p99_us", "provenance",
              "read_us_per_mib", "write_us_per_mib"]


@app.command("calibrate")
def calibrate_cmd(
    result: Path = typer.Argument(..., help="A storlab run record (JSON), fio JSON output, or a CrystalDiskMark text export."),
    scenario: Path = typer.Option(..., "--scenario", help="The scenario whose config was measured."),
    config: str = typer.Option(..., "--config", help="The config the result measured."),
    catalog_out: Path = typer.Option(..., "--catalog-out", help="Write the catalog overlay (TOML) here; load it with --catalog."),
    catalog: Optional[list[Path]] = typer.Option(None, "--catalog", help="Extra catalog file or folder (repeatable)."),
    csv_out: bool = typer.Option(False, "--csv", help="Also print the fitted figures as CSV on stdout (columns: docs/record.md)."),
) -> None:
    """Fit the config's device latency (median and p99, read and write) to the result's QD1 jobs; caps stay the vendor's."""

    check_writable(catalog_out, "--catalog-out")
    text, summary = calibrate(result, scenario, config, catalog)
    write_atomically(catalog_out, text)
    lat = summary["latency"]
    if csv_out:
        rows = [{"device": d, **lat, "provenance": summary["provenance"]} for d in summary["devices"]]
        typer.echo(csv_text(CSV_FIELDS, rows), nl=False)
    Console(stderr=True).print(
        f"{', '.join(summary['devices'])}: read {lat['read_median_us']:,.1f} µs median / {lat['read_p99_us']:,.1f} µs p99, "
        f"write {lat['write_median_us']:,.1f} / {lat['write_p99_us']:,.1f} µs"
        + "".join(f", {d} +{lat[f'{d}_us_per_mib']:,.0f} µs a MiB" for d in ("read", "write") if f"{d}_us_per_mib" in lat)
        + f" ({summary['provenance']}) → {catalog_out}"
    )
