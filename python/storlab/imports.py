"""Other tools' result files as storlab run records: one file read by its
tool's reader (storlab-record's `import` module, in Rust), several merged
into one record, and a database record written as HammerDB's
`hammerdb-job-report-v1`."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from storlab import _native
from storlab.errors import StorlabError
from storlab.files import read_input, write_atomically


def read_import(path: str | Path) -> dict[str, Any]:
    """One file read by its tool's reader into a run record."""
    p = Path(path)
    data = read_input(p, "file", "give a result file")
    rec: dict[str, Any] = json.loads(_native.import_record_json(str(p), data))
    return rec


def write_hammerdb_json(rec: dict[str, Any], path: Path, timestamp: str | None = None) -> None:
    """`--hammerdb-json FILE` of bench db and simulate: the run as HammerDB's
    `hammerdb-job-report-v1` (the Rust writer's), stamped with the first
    run's start (else `timestamp`, else now), UTC."""
    if timestamp is None:
        runs = rec.get("runs") or []
        started = runs[0].get("started_unix_s") if runs else None
        when = datetime.fromtimestamp(started, timezone.utc) if started else datetime.now(timezone.utc)
        timestamp = when.strftime("%Y-%m-%d %H:%M:%S")
    try:
        text = _native.hammerdb_report_json(json.dumps(rec), timestamp)
    except StorlabError as e:
        raise StorlabError(f"--hammerdb-json {path}: {e}") from None
    write_atomically(path, text)


def merge(records: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Several imported files as one record. Where two files would put
    results under the same config, each file's results take its name
    (without folder or extension) as their config."""
    if len(records) == 1:
        return records[0][1]
    configs = [{r["config"] for r in rec["results"]} | {s["config"] for s in rec["series"]} for _, rec in records]
    clash = any(configs[i] & configs[j] for i in range(len(configs)) for j in range(i + 1, len(configs)))
    out: dict[str, Any] = dict(records[0][1])
    out["results"], out["series"], out["warnings"] = [], [], []
    names = list(dict.fromkeys(rec["tool"]["name"] for _, rec in records))
    out["tool"] = {"name": " + ".join(names), "version": "", "git_sha": ""}
    out["workload"] = " + ".join(dict.fromkeys(rec["workload"] for _, rec in records))
    out["host_info"] = {"sources": [rec.get("host_info") or {} for _, rec in records]}
    out["interrupted"] = any(rec.get("interrupted") for _, rec in records)
    for path, rec in records:
        stem = Path(path).stem
        for r in rec["results"]:
            out["results"].append({**r, "config": stem} if clash else r)
        for s in rec["series"]:
            out["series"].append({**s, "config": stem} if clash else s)
        out["warnings"].extend(rec.get("warnings") or [])
    return out
