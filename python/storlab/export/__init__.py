"""Exporters: pure functions from records to text or renderables. Nothing
here computes a figure; it only formats what the records hold."""

from __future__ import annotations

import json
from typing import Any


def to_json(record: dict[str, Any]) -> str:
    """Stable JSON: keys in record order, no NaN, a trailing newline."""
    return json.dumps(record, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
