"""storlab's CPU reference: how fast this machine runs a database engine's
code right now, so that a profile's CPU per transaction, measured on its
recording machine at the hour it was recorded, can be carried to the same or
another machine at another hour (docs/dbmodel.md, "The host's CPU").

The reference is a fixed in-memory SQLite workload driven from Python, in
this process: a 20,000-row table with an index, then 20,000 statements —
point selects by key (6 in 10), 4-key index range aggregates (2 in 10) and
updates of a key and a 50-100 byte text (2 in 10) — from a fixed
pseudo-random sequence. No I/O, no waits, one thread: its CPU time a
statement measures the instruction throughput a vCPU gives an engine's code
(an interpreter's dispatch, B-tree descents, record decoding), which on a
shared host drops when the other hyperthread of the core is busy — a loss
that a latency-bound loop does not see (bench/runs/2026-11-26/cpu_reference.md).

The figure is `ops_per_ms`: statements per millisecond of this thread's CPU
time, the median of short trials. A host's `cpu_speed` on the basis
`storlab-cpu-reference` is that figure; a profile records it for its
machine, and the model scales the profile's CPU by profile / host."""

from __future__ import annotations

import sqlite3
import statistics
import time
from typing import Any

BASIS = "storlab-cpu-reference"
ROWS = 20_000
OPS = 20_000
TRIALS = 7
METHOD = (f"in-memory SQLite from Python, one thread: {ROWS:,} rows with an index, then {OPS:,} statements "
          "(6 in 10 point selects, 2 in 10 four-key index range aggregates, 2 in 10 updates) from a fixed "
          "pseudo-random sequence; statements per ms of the thread's CPU time, median of {trials} trials")


def _lcg(x: int) -> int:
    return (x * 1103515245 + 12345) & 0x7FFFFFFF


def trial() -> float:
    """One trial: statements per millisecond of this thread's CPU time
    (the load of the table included, as part of the engine's work)."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    try:
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, pad TEXT NOT NULL)")
        db.execute("CREATE INDEX t_k ON t (k)")
        x = 12345
        rows = []
        for i in range(ROWS):
            x = _lcg(x)
            rows.append((i, x % 5000, "p" * (50 + x % 50)))
        c0 = time.thread_time()
        db.execute("BEGIN")
        db.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
        db.execute("COMMIT")
        cur = db.cursor()
        for i in range(OPS):
            x = _lcg(x)
            m = i % 10
            if m < 6:
                cur.execute("SELECT k, pad FROM t WHERE id = ?", (x % ROWS,)).fetchone()
            elif m < 8:
                lo = x % 5000
                cur.execute("SELECT count(*), sum(length(pad)) FROM t WHERE k BETWEEN ? AND ?", (lo, lo + 3)).fetchone()
            else:
                cur.execute("UPDATE t SET k = ?, pad = substr(pad, 2) || 'q' WHERE id = ?", (x % 5000, x % ROWS))
        cpu_s = time.thread_time() - c0
    finally:
        db.close()
    return OPS / (cpu_s * 1e3) if cpu_s > 0 else 0.0


def measure(trials: int = TRIALS) -> dict[str, Any]:
    """The reference now: `ops_per_ms` (the median), every trial, and the method."""
    vals = [trial() for _ in range(max(1, trials))]
    return {"ops_per_ms": round(statistics.median(vals), 2), "trials": [round(v, 2) for v in vals],
            "basis": BASIS, "method": METHOD.format(trials=len(vals))}


def combine(*refs: dict[str, Any]) -> dict[str, Any]:
    """Several measurements as one: the median of all their trials."""
    vals = [v for r in refs for v in r.get("trials", [])]
    if not vals:
        return {}
    return {"ops_per_ms": round(statistics.median(vals), 2), "trials": vals, "basis": BASIS,
            "method": METHOD.format(trials=len(vals))}
