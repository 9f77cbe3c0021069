"""`storlab bench disk`: real I/O on this machine with the same job
definitions as the simulator — CrystalDiskMark presets or fio job files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from storlab import api
from storlab.export import to_json
from storlab.export.fio import to_fio_json

app = typer.Typer(help="Measure real disks and databases on this machine.", no_args_is_help=True)


def _table(rec) -> Table:
    t = Table(title=f"{rec['workload']} on {rec['host_info'].get('path')} "
                    f"({rec['host_info'].get('filesystem')}, {rec['file_bytes'] >> 20} MiB test file)")
    for col in ("job", "MB/s (best)", "MB/s (mean)", "IOPS (best)", "latency mean", "p99", "CPU µs/I/O"):
        t.add_column(col, justify="right" if col != "job" else "left", no_wrap=col == "job")
    for r in rec["results"]:
        lat = lambda us: f"{us / 1000:,.2f} ms" if us >= 1000 else f"{us:,.1f} µs"  # noqa: E731
        t.add_row(r["job"], f"{r['bw_bytes_s'] / 1e6:,.1f}", f"{r['mean_bw_bytes_s'] / 1e6:,.1f}", f"{r['iops']:,.0f}",
                  lat(r["lat_mean_us"]), lat(r["lat_p99_us"]), f"{r['cpu_us_per_io']:,.2f}")
    return t


@app.command("disk")
def disk_cmd(
    path: Path = typer.Option(..., "--path", help="An existing folder on the disk to measure; storlab writes only its own test file there and removes it."),
    profile: Optional[str] = typer.Option(None, "--profile", help="A CrystalDiskMark preset: cdm-default (default), cdm-peak, cdm-real-world, cdm-nvme."),
    job: Optional[Path] = typer.Option(None, "--job", help="A fio job file (the documented subset, docs/workloads.md)."),
    size: str = typer.Option("1GiB", "--size", help="Test file size (binary units: 1GiB, 512MiB)."),
    runs: Optional[int] = typer.Option(None, "--runs", help="Measured runs per test (presets; default 3, CrystalDiskMark 9)."),
    runtime: Optional[float] = typer.Option(None, "--runtime", help="Seconds measured per run (presets default 5)."),
    interval: Optional[float] = typer.Option(None, "--interval", help="Seconds idle between tests (presets default 5)."),
    engine: str = typer.Option("io_uring", "--engine", help="io_uring, psync or null (a job file's ioengine wins)."),
    buffered: bool = typer.Option(False, "--buffered", help="Use the page cache instead of O_DIRECT."),
    json_out: bool = typer.Option(False, "--json", help="Print the run record as JSON."),
    output_format: Optional[str] = typer.Option(None, "--output-format", help="fio-json: fio-compatible JSON."),
) -> None:
    """Measure a disk with CrystalDiskMark presets or fio job files; records line up with `storlab simulate`."""
    from storlab.errors import StorlabError

    if output_format not in (None, "fio-json", "json"):
        raise StorlabError(f"--output-format '{output_format}' — use fio-json or json")
    err = Console(stderr=True)
    if sys.stderr.isatty():
        from rich.progress import BarColumn, Progress

        with Progress("measuring", BarColumn(), "{task.completed}/{task.total} tests", console=err, transient=True) as bar:
            task = bar.add_task("bench", total=None)
            rec = api.bench_disk(path, profile, job, size, engine, runs, runtime, interval, not buffered,
                                 progress=lambda done, total: bar.update(task, completed=done, total=total))
    else:
        rec = api.bench_disk(path, profile, job, size, engine, runs, runtime, interval, not buffered)
    for w in rec["warnings"]:
        err.print(f"warning: {w} (--buffered says so up front)", style="yellow")
    if output_format == "fio-json":
        typer.echo(to_fio_json(rec), nl=False)
    elif json_out or output_format == "json":
        typer.echo(to_json(rec), nl=False)
    else:
        Console().print(_table(rec))
        Console().print(Text("MB = 10^6 bytes; best is CrystalDiskMark's figure (highest of the runs)", style="dim"))
    if rec["interrupted"]:
        err.print("interrupted: the results above are what was measured; the test file was removed", style="yellow")
        raise typer.Exit(130)
