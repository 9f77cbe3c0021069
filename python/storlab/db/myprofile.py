"""Database workload profiles recorded on a managed MariaDB (`storlab bench
db --db managed-mariadb --workload tpcc|insert --profile-out FILE`), in the same
format as PostgreSQL's (docs/profile.md) so that `storlab simulate` reads
them unchanged.

InnoDB counts its work for the whole server, not per statement: SHOW GLOBAL
STATUS (logical page reads, buffer-pool misses, redo bytes, pages flushed,
data fsyncs) over each measured window, and performance_schema's time in
each transaction type's stored procedure (`events_statements_summary_by_program`:
TPC-C on MariaDB is one CALL a transaction). This module drives the server
for them: its settings, reading the tables into the buffer pool, the
procedure times, the miss-ratio runs at several innodb_buffer_pool_size
values and the run without a redo flush. The profile's build
(`storlab_workload::recording::innodb`) deals the counters to the types."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from storlab.calibrate import flush_probe
from storlab.db import profile as base
from storlab.errors import DatabaseError, StorlabError
from storlab.host import machine

# InnoDB's page (innodb_page_size's default; the recorder checks it).
PAGE_BYTES = 16384
# InnoDB refuses a smaller buffer pool with 16 KiB pages (MariaDB 10.11's
# error log: "innodb_page_size=16384 requires innodb_buffer_pool_size >= 6 MiB").
MIN_BUFFER_POOL = 6 << 20
# performance_schema on (a start-up setting): the server's time in each
# stored procedure, which splits the global counters among the types.
SETTINGS = {"performance_schema": "ON"}
# storlab's TPC-C procedures on MySQL/MariaDB (HammerDB's names,
# crates/storlab-db/sql/mysql_tpcc_procedures.sql) and their types.
PROCEDURES = {"neword": "new_order", "payment": "payment", "delivery": "delivery", "ostat": "order_status",
              "slev": "stock_level"}
_PROGRAMS_SQL = ("SELECT lower(object_name), count_star, sum_timer_wait "
                 "FROM performance_schema.events_statements_summary_by_program "
                 "WHERE object_type = 'PROCEDURE' AND object_schema = database();")
# Pages newly dirtied over a run: the dirty pages' growth plus the pages
# written back in it (each write cleaned one); with the transactions.
_STATUS = ("Innodb_buffer_pool_pages_dirty", "Innodb_buffer_pool_pages_flushed", "Com_commit", "Com_rollback")
_STATUS_SQL = ("SELECT variable_name, variable_value FROM information_schema.global_status WHERE variable_name IN ("
               + ", ".join(f"'{v.upper()}'" for v in _STATUS) + ");")
_TABLES_SQL = ("SELECT coalesce(sum(data_length + index_length), 0) FROM information_schema.tables "
               "WHERE table_schema = database() AND table_type = 'BASE TABLE';")
_INDEXES_SQL = ("SELECT DISTINCT table_name, index_name FROM information_schema.statistics "
                "WHERE table_schema = database();")
_DBNAME = "storlab"


def _table_bytes(managed: Any) -> float:
    try:
        return float(managed.sql(_TABLES_SQL, _DBNAME).split()[0])
    except (ValueError, IndexError):
        return 0.0


def _prewarm(managed: Any) -> None:
    """Every index of the workload's tables read through once (InnoDB has no
    pg_prewarm): a count over each, the primary key being the table."""
    rows = [ln.split("\t") for ln in managed.sql(_INDEXES_SQL, _DBNAME).splitlines() if "\t" in ln]
    if rows:
        managed.sql("".join(f"SELECT count(*) FROM `{t}` FORCE INDEX (`{i}`);\n" for t, i in rows), _DBNAME)


def buffer_pool_bytes(managed: Any) -> int:
    """The buffer pool in force: InnoDB rounds the size asked for."""
    try:
        return int(managed.sql("SELECT @@innodb_buffer_pool_size;").split()[0])
    except (ValueError, IndexError):
        return 0


def before_sweep(managed: Any, grows: bool = False) -> None:
    """The sweep runs with the data in the buffer pool (1.25 × the tables,
    at least 128 MiB, at most a quarter of the memory), read in first; a
    workload that grows its table from empty (`grows`: the insert storm)
    gets the quarter of the memory, or its pages would be written back by
    eviction again and again and counted as its own. The restart settles
    the load's aftermath: a clean shutdown writes every dirty page, so the
    first runs do not pay for the load's."""
    page = managed.sql("SELECT @@innodb_page_size;").split()
    if page and page[0] != str(PAGE_BYTES):
        raise StorlabError(f"--profile-out: the server's innodb_page_size is {page[0]} — the recorder reads 16 KiB "
                           "pages; leave innodb_page_size at its default")
    mem = machine()["memory_bytes"] or (4 << 30)
    pool = int(mem / 4 if grows else min(max(1.25 * _table_bytes(managed), 128 << 20), mem / 4))
    managed.restart({"innodb_buffer_pool_size": str(pool // 1048576 * 1048576)})
    _prewarm(managed)


class ProgramTimes:
    """The server's time and calls in each of the workload's stored
    procedures over one run (performance_schema, before and after), and the
    pages the run dirtied with its transactions (SHOW GLOBAL STATUS)."""

    key = "program_times"

    def __init__(self, managed: Any) -> None:
        self.managed = managed
        self._start: dict[str, tuple[float, float]] | None = None
        self._end: dict[str, tuple[float, float]] | None = None

    def _read(self) -> dict[str, tuple[float, float]] | None:
        try:
            out = self.managed.sql(_PROGRAMS_SQL, _DBNAME)
        except DatabaseError:
            return None
        got = {}
        for ln in out.splitlines():
            f = ln.split("\t")
            if len(f) == 3 and f[0] in PROCEDURES:
                got[PROCEDURES[f[0]]] = (float(f[1]), float(f[2]))
        try:
            for ln in self.managed.sql(_STATUS_SQL).splitlines():
                name, _, v = ln.partition("\t")
                got[name.lower()] = (float(v), 0.0)
        except (DatabaseError, ValueError):
            pass
        return got

    def __enter__(self) -> "ProgramTimes":
        self._start = self._read()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._end = self._read()

    def result(self, users: int) -> dict[str, Any] | None:
        """Per type: calls and the server's time in its procedure, ms."""
        if self._start is None or not self._end:
            return None
        s = self._start
        out: dict[str, Any] = {}
        for k, (calls, ps) in self._end.items():
            c0, t0 = s.get(k, (0.0, 0.0))
            if k in PROCEDURES.values() and calls - c0 > 0:
                out[k] = {"calls": calls - c0, "ms": (ps - t0) / 1e9}
        d = {k.lower(): self._end[k.lower()][0] - s[k.lower()][0] for k in _STATUS
             if k.lower() in self._end and k.lower() in s}
        txns = d.get("com_commit", 0.0) + d.get("com_rollback", 0.0)
        if len(d) == len(_STATUS) and txns > 0:
            out["dirtied_per_txn"] = max(0.0, d["innodb_buffer_pool_pages_dirty"]
                                         + d["innodb_buffer_pool_pages_flushed"]) / txns
        return out or None


def mrc_runs(managed: Any, data_bytes: float, run_once: Callable[[], dict[str, Any]],
             fractions: tuple[float, ...] = base.CACHE_FRACTIONS) -> list[tuple[float, float]]:
    """One run per buffer-pool size: the server restarted with
    innodb_buffer_pool_size at each fraction of the data (at least InnoDB's
    6 MiB), the tables read in, then the window's
    Innodb_buffer_pool_reads / Innodb_buffer_pool_read_requests. The
    fraction is of the pool InnoDB gave (it rounds the size asked for)."""
    pts = []
    done: set[int] = set()
    for f in fractions:
        ask = max(MIN_BUFFER_POOL, int(f * data_bytes)) // 1048576 * 1048576
        if ask in done:
            continue
        done.add(ask)
        managed.restart({"innodb_buffer_pool_size": str(ask)})
        pool = buffer_pool_bytes(managed) or ask
        _prewarm(managed)
        tot = run_once()["io_profile"]["totals"]
        req, miss = tot.get("read_requests", 0.0), tot.get("blks_read", 0.0)
        if req > 0:
            pts.append((pool / data_bytes, min(1.0, miss / req)))
    return pts


def sync_off_run(managed: Any, pool: int, run_once: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """One run at one user with innodb_flush_log_at_trx_commit = 0 (no redo
    flush at commit; the sweep's buffer pool, data read in), as
    profile.sync_off_run with synchronous_commit off: the profile's build
    takes the time outside the server and the flush's CPU from it."""
    managed.restart({"innodb_buffer_pool_size": str(pool), "innodb_flush_log_at_trx_commit": "0"})
    _prewarm(managed)
    return run_once()


def record(path: Path, managed: Any, runs: list[dict[str, Any]], wspec: dict[str, Any], *,
           run_one: Callable[[int, float, float], dict[str, Any]], rampup_s: float, duration_s: float,
           warehouses: int, disk: dict[str, Any], commit_every: int = 0, cpu_reference: dict[str, Any] | None = None,
           cpu_speed: dict[str, Any] | None = None) -> dict[str, Any]:
    """After the sweep on a managed MariaDB (TPC-C or the insert storm): the
    miss-ratio runs and, for TPC-C, the run at one user without a redo
    flush, then the profile written to `path`, as profile.record does on
    PostgreSQL."""
    kind = wspec["kind"]
    if kind not in ("tpcc", "insert"):
        raise StorlabError("--profile-out on managed-mariadb records TPC-C and the insert storm — use --workload "
                           "tpcc or --workload insert")
    insert = kind == "insert"
    # The data size after the sweep's first run, or for the insert storm at
    # its end, every row in (profile.record says why).
    size_run = runs[-1] if insert else runs[0]
    data_bytes = float(sum(((size_run.get("server") or {}).get("relation_bytes") or {}).values()))
    if data_bytes <= 0:
        raise StorlabError("the recording found no tables to size — is the workload's schema in database storlab?")
    sweep_pool = buffer_pool_bytes(managed)
    swept = sorted({r["vus"] for r in runs})
    vus_m = swept[len(swept) // 2]
    ramp, dur = (0.0, duration_s) if insert else (min(rampup_s, 5.0), min(duration_s, 15.0))
    pts = mrc_runs(managed, data_bytes, lambda: run_one(vus_m, ramp, dur))
    sync_off = None if insert else sync_off_run(managed, sweep_pool, lambda: run_one(1, ramp, dur))
    prof = build(path, runs, wspec, pts=pts, sync_off=sync_off, vus_m=vus_m, ramp=ramp, dur=dur,
                 warehouses=warehouses, commit_every=commit_every, disk=disk, cpu_reference=cpu_reference,
                 cpu_speed=cpu_speed)
    # The redo log is in the data directory.
    flush = flush_probe(managed.data_dir)
    prof["concurrency"]["penalty_durable_write_us"] = [flush["flush_median_us"], flush["flush_p99_us"]]
    base.set_penalty(prof, flush)
    suspects = base.write(path, prof)
    return {"path": str(path), "name": path.stem, "transactions": [t["name"] for t in prof["transaction"]],
            "mrc_points": len(pts), "data_bytes": data_bytes, "suspect": suspects}


def build(path: Path, runs: list[dict[str, Any]], wspec: dict[str, Any], *, pts: list[tuple[float, float]],
          sync_off: dict[str, Any] | None, vus_m: int, ramp: float, dur: float, warehouses: int, commit_every: int,
          disk: dict[str, Any], cpu_reference: dict[str, Any] | None, cpu_speed: dict[str, Any] | None) -> dict[str, Any]:
    """The profile of a MariaDB recording before its penalty: the raw runs
    handed to the profile's build, which deals InnoDB's global counters to
    the types (`storlab_workload::recording::innodb`)."""
    kind = wspec["kind"]
    insert = kind == "insert"
    size_run = runs[-1] if insert else runs[0]
    window = "each until its rows were in" if insert else f"{dur:g} s windows after {ramp:g} s"
    sized = "at the end" if insert else "after the sweep's first run"
    method = (f"runs at {len(pts)} innodb_buffer_pool_size values on the managed server, each after reading every "
              f"index through once, {vus_m} VUs, {window}; cache fraction = the pool InnoDB "
              f"gave / the data (data_length + index_length) {sized}; miss ratio = "
              "Innodb_buffer_pool_reads / Innodb_buffer_pool_read_requests (SHOW GLOBAL STATUS) over the window, "
              "made non-increasing by a running minimum")
    if insert:
        scale, unit, name = float(sum(r.get("rows") or 0 for r in runs)), "row", "insert"
    else:
        scale, unit, name = float(warehouses), "warehouse", "tpcc"
    server: dict[str, Any] = next((r["server"] for r in runs if r.get("server")), {})
    disk_text = " ".join(x for x in (disk.get("device", ""), disk.get("filesystem", "")) if x)
    prov = base.provenance(server, scale=scale, vus=sorted({r["vus"] for r in runs}), disk=disk_text,
                           cpu_speed=cpu_speed)
    if cpu_reference:
        prov["cpu_reference"] = cpu_reference
    return base.build(name=path.stem, workload=name, kind=kind, scale=scale, scale_unit=unit, sweep=runs,
                      mrc_points=pts, mrc_method=method, provenance=prov, size_run=size_run,
                      read_only=base.read_only_types(wspec), engine="mariadb", sync_off=sync_off,
                      commit_every=commit_every)
