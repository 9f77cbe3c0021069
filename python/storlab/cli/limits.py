"""`storlab limits SCENARIO`: each config's ceilings, what binds them, burst
budgets and monthly cost."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from storlab import api
from storlab.cli import app
from storlab.export import to_json
from storlab.export.limits import limits_table


@app.command("limits")
def limits_cmd(
    scenario: Path = typer.Argument(..., help="Scenario file (TOML)."),
    json_out: bool = typer.Option(False, "--json", help="Print the limits record as JSON."),
    catalog: Optional[list[Path]] = typer.Option(None, "--catalog", help="Extra catalog file or folder (repeatable)."),
) -> None:
    """Ceilings per I/O pattern, with buckets full and empty, the component that binds, and the monthly cost."""
    record = api.limits(scenario, catalog)
    if json_out:
        typer.echo(to_json(record), nl=False)
    else:
        Console().print(limits_table(record))
