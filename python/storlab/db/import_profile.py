"""Records what a bulk import costs per input byte on a real PostgreSQL:
COPY of a generated CSV file into a table with a primary key and a
secondary index, on a cluster storlab runs itself. Measured:

- WAL bytes per input byte: pg_current_wal_insert_lsn() before and after;
- table and index bytes per input byte: pg_relation_size and
  pg_indexes_size after the load;
- server CPU per MiB of input: utime + stime (/proc/PID/stat) of the
  postmaster and its children, the exited ones included (the postmaster's
  cutime + cstime), before and after.

The result is an import profile (`kind = "storlab-import-profile"`) that
`storlab simulate` reads for `[workload.import]` (docs/dbmodel.md). Run:

    storlab bench import --dir /tmp/rec-import --size-mib 256 \\
        --profile-out python/storlab/profiles/import-postgresql.toml
"""

from __future__ import annotations

import os
import random
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from storlab.db.managed import ManagedPostgres
from storlab.db.profile import to_toml
from storlab.host import machine, tool_info

TABLE = ("CREATE TABLE import_rows (id bigint PRIMARY KEY, customer integer NOT NULL, "
         "amount numeric(12,2) NOT NULL, created timestamptz NOT NULL, note text NOT NULL); "
         "CREATE INDEX import_rows_customer ON import_rows (customer)")
SETTINGS = ["shared_buffers", "max_wal_size", "checkpoint_timeout", "full_page_writes", "wal_compression",
            "wal_level", "synchronous_commit", "maintenance_work_mem", "fsync"]


def write_input(path: Path, size_bytes: int, seed: int = 1) -> int:
    """A CSV file of about `size_bytes`: sequential ids (the primary key
    appends), random customers (the secondary index takes random inserts),
    amounts, times and a note of 20–80 characters. Returns the rows."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz "
    rows = 0
    written = 0
    with open(path, "w", encoding="ascii") as f:
        buf: list[str] = []
        while written < size_bytes:
            rows += 1
            note = "".join(rng.choices(letters, k=rng.randint(20, 80)))
            line = (f"{rows},{rng.randint(1, 10_000_000)},{rng.randint(0, 10_000_000) / 100:.2f},"
                    f"2026-01-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00+00,{note}\n")
            buf.append(line)
            written += len(line)
            if len(buf) >= 10_000:
                f.write("".join(buf))
                buf.clear()
        f.write("".join(buf))
    return rows


def server_cpu_s(pids: list[int]) -> float:
    """CPU seconds of the live server processes plus every child the
    postmaster (pids[0]) has reaped."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for i, pid in enumerate(pids):
        try:
            f = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        # Fields after the name: state is f[0]; utime, stime, cutime, cstime are fields 14–17 of stat.
        total += int(f[11]) + int(f[12])
        if i == 0:
            total += int(f[13]) + int(f[14])
    return total / tick


def settled_cpu_s(pg: ManagedPostgres, before: float, timeout_s: float = 5.0) -> float:
    """`server_cpu_s` once the COPY's backend is in it: psql's backend
    exits when psql does, and its CPU reaches the postmaster's reaped
    children only when the postmaster has waited for it; until then it is
    in neither. Read until the figure has grown and holds for 50 ms."""
    deadline = time.monotonic() + timeout_s
    last = server_cpu_s(pg.server_pids())
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = server_cpu_s(pg.server_pids())
        if now > before and now == last:
            return now
        last = now
    return last


def record(dir: Path, size_bytes: int, out: Path, command: list[str]) -> dict[str, Any]:
    dir.mkdir(parents=True, exist_ok=True)
    with ManagedPostgres(dir) as pg:
        # The server user must read the file for a server-side COPY; a
        # client-side \copy is what an import tool does, so the client sends it.
        src = dir / "import-input.csv"
        rows = write_input(src, size_bytes)
        input_bytes = src.stat().st_size
        pg.sql(f"DROP TABLE IF EXISTS import_rows; {TABLE};")
        pg.sql("CHECKPOINT;")
        version = pg.sql("SHOW server_version;").strip()
        settings = {k: pg.sql(f"SHOW {k};").strip() for k in SETTINGS}
        lsn0 = pg.sql("SELECT pg_current_wal_insert_lsn();").strip()
        cpu0 = server_cpu_s(pg.server_pids())
        t0 = time.monotonic()
        pg.sql(f"\\copy import_rows FROM '{src}' WITH (FORMAT csv)\n")
        load_s = time.monotonic() - t0
        cpu1 = settled_cpu_s(pg, cpu0)
        wal = float(pg.sql(f"SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '{lsn0}');").strip())
        table = float(pg.sql("SELECT pg_relation_size('import_rows');").strip())
        index = float(pg.sql("SELECT pg_indexes_size('import_rows');").strip())
        src.unlink()
    tool = tool_info()
    mib = input_bytes / (1 << 20)
    profile = {
        "schema_version": 1,
        "kind": "storlab-import-profile",
        "name": out.stem,
        "workload": "import",
        "provenance": {
            "database": f"PostgreSQL {version}",
            "settings": settings,
            "machine": machine(),
            "storlab_version": tool["version"],
            "git_sha": tool["git_sha"],
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": " ".join(command),
            "table": TABLE,
            "input_bytes": input_bytes,
            "rows": rows,
            "load_s": round(load_s, 3),
            "server_cpu_s": round(cpu1 - cpu0, 3),
            "method": "psql \\copy of a generated CSV into import_rows (one client, one COPY); WAL from "
                      "pg_current_wal_insert_lsn, sizes from pg_relation_size and pg_indexes_size after the load, "
                      "server CPU from /proc/PID/stat of the postmaster and its children (reaped ones included)",
        },
        "per_input_byte": {
            "wal_bytes": round(wal / input_bytes, 6),
            "table_bytes": round(table / input_bytes, 6),
            "index_bytes": round(index / input_bytes, 6),
        },
        "cpu_us_per_mib": round((cpu1 - cpu0) * 1e6 / mib, 1),
    }
    text = to_toml(profile).split("\n", 1)[1]
    out.write_text("# A storlab bulk-import profile (docs/dbmodel.md, \"Bulk import\").\n" + text)
    return profile


def main(argv: list[str] | None = None) -> int:
    """The old entry point: it names the verb that replaced it."""
    print("python -m storlab.db.import_profile is now `storlab bench import --dir DIR --size-mib N --profile-out FILE`",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
