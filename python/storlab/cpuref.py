"""storlab's CPU reference: how fast this machine runs a database engine's
kind of code right now. A profile records it just before its sweep
(`[provenance] cpu_reference`), beside the CPU per transaction it records,
so the machine's speed at the hour of a recording can be compared with the
same figure at another hour or on another machine.

The recorder (`bench db --profile-out`) is its only user: the figure goes
into the profile's provenance as a record of the recording machine. The
model does not scale anything by it: within one state of a shared machine
the reference's own spread was larger than the drift it would correct.

The workload is fixed and has no I/O or waits: an in-memory SQLite table of
20,000 rows with an index, then 20,000 statements — point selects by key
(6 in 10), 4-key index range aggregates (2 in 10) and updates of a key and
a 50-100 byte text (2 in 10) — from a fixed pseudo-random sequence, driven
from Python in one thread. The figure is `ops_per_ms`: statements per
millisecond of the thread's CPU time, the median of short trials.
High-throughput code of this kind loses speed when the core's other
hyperthread is busy; a latency-bound loop does not."""

from __future__ import annotations

import sqlite3
import statistics
import time
from typing import Any

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
            "method": METHOD.format(trials=len(vals))}
