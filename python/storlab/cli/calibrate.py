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
from storlab.cli.simulate import write_atomically


@app.command("calibrate")
def calibrate_cmd(
    result: Path = typer.Argument(..., help="A storlab run record (JSON), fio JSON output, or a CrystalDiskMark text export."),
    scenario: Path = typer.Option(..., "--scenario", help="The scenario whose config was measured."),
    config: str = typer.Option(..., "--config", help="The config the result measured."),
    catalog_out: Path = typer.Option(..., "--catalog-out", help="Write the catalog overlay (TOML) here; load it with --catalog."),
    catalog: Optional[list[Path]] = typer.Option(None, "--catalog", help="Extra catalog file or folder (repeatable)."),
) -> None:
    """Fit the config's device latency (median and p99, read and write) to the result's QD1 jobs; caps stay the vendor's."""
    text, summary = calibrate(result, scenario, config, catalog)
    write_atomically(catalog_out, text)
    lat = summary["latency"]
    Console(stderr=True).print(
        f"{', '.join(summary['devices'])}: read {lat['read_median_us']:,.1f} µs median / {lat['read_p99_us']:,.1f} µs p99, "
        f"write {lat['write_median_us']:,.1f} / {lat['write_p99_us']:,.1f} µs ({summary['provenance']}) → {catalog_out}"
    )
