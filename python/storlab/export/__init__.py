"""Exporters: pure functions from records to text or renderables. Nothing
here computes a figure; it only formats what the records hold."""

from __future__ import annotations

import csv
import io
import json
from typing import Any


def to_json(record: dict[str, Any]) -> str:
    """Stable JSON: keys in record order, no NaN, a trailing newline."""
    return json.dumps(record, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def csv_text(fields: list[str], rows: list[dict[str, Any]]) -> str:
    """CSV with a header row; missing values are empty, floats as Python
    prints them (full precision)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in fields})
    return buf.getvalue()
