"""`storlab report RECORD… -o FILE.html`: run records of any engine drawn
as one self-contained HTML page; `--png DIR` also writes each chart as a
PNG (drawn by a headless Chromium)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

import typer

from storlab.cli import app
from storlab.errors import StorlabError
from storlab.export import to_json
from storlab.files import write_atomically
from storlab.report import build_html
from storlab.report.browser import write_pngs
from storlab.report.records import from_data, load


def check_output(out: Optional[Path], flag: str = "--report") -> None:
    """Refuses an output path that cannot be written before a long run
    starts, not after it."""
    if out is None:
        return
    out = Path(out)
    if out.is_dir():
        raise StorlabError(f"{flag} {out}: is a folder — give a file name such as report.html")
    if not out.parent.exists():
        raise StorlabError(f"{flag} {out}: no such folder {out.parent} — create it first")


def write_report(records: list, out: Path, png: Optional[Path] = None, title: Optional[str] = None) -> None:
    """Builds the page from loaded records and writes it (and the PNGs)."""
    out = Path(out)
    check_output(out, "-o")
    data = build_html(records, title)
    write_atomically(out, data, "the report")
    if png is not None:
        write_pngs(out, png)


def write_outputs_keeping(record: dict, kind: str, writers: list[Callable[[], None]], json_on_stdout: bool) -> None:
    """Writes a measured run's extra outputs (`--report`, `--hammerdb-json`)
    once its results are printed. When one cannot be written (a full disk,
    a folder gone), the measurement is not lost: it is on stdout already as
    JSON, or it is written to `storlab-<kind>-<time>.json` in the current
    folder (else the temporary folder), and the error says where."""
    failed: list[str] = []
    for w in writers:
        try:
            w()
        except (StorlabError, OSError) as e:
            failed.append(str(e))
    if not failed:
        return
    where = "the JSON printed on stdout"
    if not json_on_stdout:
        name = f"storlab-{kind}-{time.strftime('%Y%m%dT%H%M%S')}.json"
        where = ""
        for folder in (Path.cwd(), Path(tempfile.gettempdir())):
            try:
                write_atomically(folder / name, to_json(record), "the measured results")
            except (StorlabError, OSError):
                continue
            where = str(folder / name)
            break
        if not where:
            where = "nowhere: the current and the temporary folder cannot be written either; the table above is all"
    raise StorlabError(f"{'; '.join(failed)} — the measured results are kept in {where}")


def write_report_of(record: dict, source: Path, out: Path) -> None:
    """`--report FILE` of simulate and bench: the run's own report, named
    after its scenario (or the command)."""
    write_report([from_data(record, str(source))], out)


@app.command("report")
def report_cmd(
    records: list[Path] = typer.Argument(..., help="Run records (JSON from simulate, bench disk, bench db or limits with --json)."),
    output: Path = typer.Option(..., "-o", "--output", help="The HTML file to write (self-contained: opens without a network)."),
    png: Optional[Path] = typer.Option(None, "--png", help="Also write each chart as DIR/<chart>.png (needs Chromium)."),
    title: Optional[str] = typer.Option(None, "--title", help="The page's title (default: the records' titles)."),
) -> None:
    """Charts and tables from run records: summary per config, I/O jobs, time series with alarms, database sweeps, provenance."""
    check_output(output, "-o")
    recs = [load(p) for p in records]
    write_report(recs, output, png, title)
    typer.echo(f"wrote {output}" + (f" and the charts as PNG in {png}" if png else ""), err=True)
