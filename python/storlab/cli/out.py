"""Where results print: the stdout console every command shares, and the
units tables use.

On a terminal, tables fit its width. Piped or redirected, rich would cut
them at 80 columns (and end cut numbers with "…"); storlab prints them
whole instead — as wide as they need — unless `COLUMNS` says otherwise."""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

from rich.console import Console

from storlab.errors import StorlabError
from storlab.export import csv_text, to_json
from storlab.units import latency, mb_s, with_mb_s

__all__ = ["COUNT_MAX", "console", "csv_text", "emit", "latency", "mb_s", "one_of", "with_mb_s"]

#: The largest count a CLI option takes (the engines count in 32 bits): a
#: larger one is refused by the option parser, naming the option and the range.
COUNT_MAX = 2**32 - 1

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


def one_of(json_out: bool, csv_out: bool) -> None:
    """--json and --csv both print to stdout: refuse both at once."""
    if json_out and csv_out:
        raise StorlabError("--json and --csv both print to stdout — choose one")


def emit(record: dict, json_out: bool, csv_out: bool, csv: Callable[[], str], table: Callable[[], Any]) -> None:
    """A verb's result on stdout: the record as JSON, its CSV, or its table."""
    if json_out:
        sys.stdout.write(to_json(record))
    elif csv_out:
        sys.stdout.write(csv())
    else:
        console().print(table())
