"""Where results print: the stdout console every command shares, and the
units tables use.

On a terminal, tables fit its width. Piped or redirected, rich would cut
them at 80 columns (and end cut numbers with "…"); storlab prints them
whole instead — as wide as they need — unless `COLUMNS` says otherwise."""

from __future__ import annotations

import os
import sys

from rich.console import Console

#: Width of a piped table when COLUMNS is not set: wide enough for any row.
PIPED_WIDTH = 1000


def console() -> Console:
    """The stdout console: the terminal's width on a TTY; else `COLUMNS` if
    it is a positive whole number, else wide enough that nothing is cut."""
    cols = os.environ.get("COLUMNS", "").strip()
    if cols.isdigit() and int(cols) > 0:
        return Console(width=int(cols))
    if sys.stdout.isatty():
        return Console()
    return Console(width=PIPED_WIDTH)


def latency(us: float | None) -> str:
    """A latency in the unit its size reads best in: µs below 1 ms, ms below
    10 s, seconds from 10 s up (so 882,615.78 ms prints as 882.6 s)."""
    if us is None:
        return "—"
    if us < 1_000:
        return f"{us:,.1f} µs" if us < 100 else f"{us:,.0f} µs"
    if us < 10_000_000:
        return f"{us / 1_000:,.2f} ms"
    return f"{us / 1e6:,.1f} s"


def mb_s(bytes_s: float) -> str:
    """Throughput in MB/s, MB = 10^6 bytes: the one family every table uses."""
    return f"{bytes_s / 1e6:,.1f} MB/s"


def with_mb_s(text: str) -> str:
    """A binding quotes the vendor's cap in the vendor's unit ("128
    MiB/s"); in a table of MB/s the MB/s figure follows it, so the table
    reads in one family: "128 MiB/s = 134.2 MB/s"."""
    import re

    return re.sub(r"(\d[\d,]*(?:\.\d+)?) MiB/s",
                  lambda m: f"{m.group(0)} = {mb_s(float(m.group(1).replace(',', '')) * 2**20)}", text)


def csv_text(fields: list[str], rows: list[dict]) -> str:
    """CSV with a header row; missing values are empty, floats as Python
    prints them (full precision)."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in fields})
    return buf.getvalue()


def one_of(json_out: bool, csv_out: bool) -> None:
    """--json and --csv both print to stdout: refuse both at once."""
    from storlab.errors import StorlabError

    if json_out and csv_out:
        raise StorlabError("--json and --csv both print to stdout — choose one")
