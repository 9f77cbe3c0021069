#!/usr/bin/env python3
"""storlab bench db beside sysbench, alternately, on the same managed server.

storlab starts one MariaDB server (storlab.db.mariadb.ManagedMariadb) in a
temp folder, reached over TCP on 127.0.0.1 by both clients as root, or with
`--server postgres` one PostgreSQL server (storlab.db.managed.ManagedPostgres)
reached over its Unix socket (sysbench --db-driver=pgsql, libpq), and runs
the comparisons at each user count (default 1, 4 and 8; sysbench --threads,
storlab --vus), the order of the two tools swapped every round. On
PostgreSQL only the comparisons on sbtest1 run (write_only, read_write,
read_only); the insert comparisons' table is MySQL's (AUTO_INCREMENT):

insert -- `storlab bench db --workload insert --commit-every 1` beside
  `sysbench oltp_insert`. Both start every run from an empty table.
  - sysbench: one INSERT of one row (an AUTO_INCREMENT id, k INTEGER, c
    CHAR(120), pad CHAR(60): about 190 bytes) in autocommit, sent as text;
    the table has its primary key and one secondary index (k). One
    statement, one round trip, one commit per transaction.
  - storlab: one prepared INSERT of one row (a random 32-hex-digit key, a
    100-255 character string, a 500-1,000 character payload, a double, a
    timestamp: about 1 KB) in autocommit, as a one-statement transaction
    runs on MySQL; the table has its primary key and four secondary
    indexes, all on random values. One round trip, one commit per
    transaction.
  They cannot be made identical: sysbench's script fixes its row.
  storlab's transaction is the heavier on both sides (more bytes to make
  and send, four more index entries for the server), so its ratios here
  are a floor for like-for-like work.

insert_file -- `storlab bench db --workload bench/db_vs_sysbench_insert.toml`
  beside `sysbench oltp_insert`: sysbench's row into sysbench's table, both
  from an empty table every run. The same row, table and indexes on both
  sides, both in autocommit (one round trip); what remains different is
  storlab's prepared statement where sysbench sends text, and its
  alphanumeric strings where sysbench's are digits and dashes, of the
  same lengths.

read_write, read_only -- `examples/db/sysbench-read-write.toml` and
  `examples/db/sysbench-read-only.toml` beside `sysbench oltp_read_write` and
  `oltp_read_only --rand-type=uniform` on the same sbtest1 as write_only:
  ten point selects and four 100-id ranges (plus write_only's four writes),
  between BEGIN and COMMIT, with the same differences as write_only.

write_only -- `storlab bench db --workload examples/db/sysbench-write-only.toml`
  beside `sysbench oltp_write_only --rand-type=uniform`, both on the same
  table sbtest1 of 10,000 rows (loaded once by storlab from the file, with
  sysbench's schema). Both: BEGIN; UPDATE sbtest1 SET k=k+1 WHERE id=?;
  UPDATE sbtest1 SET c=? WHERE id=?; DELETE FROM sbtest1 WHERE id=?; INSERT
  INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?); COMMIT: four prepared
  statements, six round trips, one commit, ids and k uniform over the
  table. Differences: sysbench prepares BEGIN and COMMIT too (storlab sends
  them as text), and its strings are digits and dashes where storlab's are
  alphanumeric, of the same lengths. A deadlock between two users'
  DELETE and INSERT is retried by sysbench and counted as an error by
  storlab; neither counts it as a transaction.

Each run is one process of each tool; its CPU (user + sys, every thread)
comes from the kernel's accounting of the finished child
(getrusage(RUSAGE_CHILDREN)) and is divided by the transactions it
reports, so storlab's Python start-up is in its figure; storlab's own
record also gives its CPU over the measured window alone (the `window`
figure). Throughput is transactions (commits) per second of each tool's
timed window (sysbench --time, storlab --duration with --rampup 0).

MariaDB runs with `innodb_buffer_pool_size=1G` (every table stays in
memory) and its defaults otherwise, so each commit waits for the redo
log's fsync; `--setting innodb_flush_log_at_trx_commit=2` takes the disk
out and leaves the CPU (the clients' included) as the limit. PostgreSQL
runs with storlab's managed defaults (docs/db.md), each commit waiting for
the WAL's fsync; `--setting synchronous_commit=off` takes the disk out.

The raw results replace the entry db_vs_sysbench of bench/results.json; each comparison
adds a row to bench/RESULTS.md: the median of the per-run tps ratios
(storlab / sysbench) over every round and user count with their lowest and
highest, the per-user-count medians of the tps and CPU-per-transaction
ratios in its text. The targets: storlab's CPU per transaction at most
sysbench's (ratio <= 1) and its throughput at least 0.97 of sysbench's.

    .venv/bin/python bench/db_vs_sysbench.py                # 5 rounds of 10 s runs at 1, 4 and 8 users
    .venv/bin/python bench/db_vs_sysbench.py --quick        # 1 round of 3 s runs at 1 and 4 users, to try
    .venv/bin/python bench/db_vs_sysbench.py --server postgres --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))

from _common import record  # noqa: E402
from storlab.db.managed import ManagedPostgres  # noqa: E402
from storlab.db.mariadb import ManagedMariadb  # noqa: E402
from storlab.errors import DatabaseError  # noqa: E402

STORLAB = str(ROOT / ".venv" / "bin" / "storlab")
WORKLOAD = str(ROOT / "examples" / "db" / "sysbench-write-only.toml")
TABLE_SIZE = 10_000  # the workload file's rows at scale 1; sysbench --table-size
INSERT_DB = "sbinsert"  # sysbench's oltp_insert table, apart from the write-only one
# sysbench's own table (oltp_common.lua, create_table), recreated empty
# before every insert run.
SBTEST = ("DROP TABLE IF EXISTS sbtest1; CREATE TABLE sbtest1 (id INTEGER NOT NULL AUTO_INCREMENT, "
          "k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, "
          "PRIMARY KEY (id)) ENGINE = InnoDB; CREATE INDEX k_1 ON sbtest1 (k);")
COMPARISONS = {"insert": "oltp_insert", "insert_file": "oltp_insert", "write_only": "oltp_write_only",
               "read_write": "oltp_read_write", "read_only": "oltp_read_only"}
WORKLOADS = {"insert_file": str(ROOT / "bench" / "db_vs_sysbench_insert.toml"), "write_only": WORKLOAD,
             "read_write": str(ROOT / "examples" / "db" / "sysbench-read-write.toml"),
             "read_only": str(ROOT / "examples" / "db" / "sysbench-read-only.toml")}
# The comparisons on sysbench's sbtest1 of 10,000 rows, loaded once by storlab.
ON_SBTEST1 = ("write_only", "read_write", "read_only")


def timed(cmd: list[str], env: dict[str, str]) -> tuple[str, float]:
    """Runs one client to its end: its stdout and its CPU seconds (user +
    sys of the child and every thread it had)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{Path(cmd[0]).name} failed ({' '.join(cmd[1:4])} …):\n{(r.stderr or r.stdout).strip()[-2000:]}")
    return r.stdout, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run_sysbench(sysbench: str, script: str, conn: list[str], users: int, secs: int, env: dict[str, str]) -> dict:
    """One sysbench run; `conn` its driver's options (--db-driver=…, host, port, user, database)."""
    out, cpu = timed([sysbench, script, *conn, "--tables=1", f"--table-size={TABLE_SIZE}",
                      "--rand-type=uniform", f"--threads={users}", f"--time={secs}", "--events=0", "run"], env)
    m = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec", out)
    if m is None:
        sys.exit(f"sysbench {script}: no transaction count in its output:\n{out[-2000:]}")
    n, tps = int(m.group(1)), float(m.group(2))
    errs = re.search(r"ignored errors:\s+(\d+)", out)
    return {"tps": tps, "txns": n, "cpu_s": cpu, "cpu_us_per_txn": cpu / n * 1e6,
            "ignored_errors": int(errs.group(1)) if errs else 0}


def run_storlab(comparison: str, db: list[str], users: int, secs: int, threads: int, env: dict[str, str]) -> dict:
    """One storlab run; `db` its --db (and --dsn) options."""
    wl = ["--workload", "insert", "--commit-every", "1", "--rows-per-user", "1000000000"] if comparison == "insert" \
        else ["--workload", WORKLOADS[comparison]]
    out, cpu = timed([STORLAB, "bench", "db", *wl, *db, "--vus", str(users),
                      "--threads", str(threads), "--duration", str(secs), "--rampup", "0", "--json"], env)
    run = json.loads(out)["runs"][0]
    n = run["transactions"]
    return {"tps": run["tpm_client"] / 60, "txns": n, "cpu_s": cpu, "cpu_us_per_txn": cpu / n * 1e6,
            "window_cpu_us_per_txn": run["client_cpu_us_per_txn"], "errors": run["errors"]}


def managed_server(kind: str, folder: Path, max_connections: int, settings: dict[str, str]):
    """The managed server both tools run on: MariaDB or PostgreSQL."""
    if kind == "mariadb":
        return ManagedMariadb(folder, max_connections=max_connections, settings=settings)
    return ManagedPostgres(folder, max_connections=max_connections, settings=settings)


def connections(kind: str, srv, settings: dict[str, str]):
    """How each tool reaches the server: the environment (no client
    variables of the user's), sysbench's driver options and storlab's --db
    options for a database name, and the server's description."""
    if kind == "mariadb":
        env = {k: v for k, v in os.environ.items() if not k.startswith("MYSQL")}
        srv.sql(f"CREATE DATABASE IF NOT EXISTS {INSERT_DB}")
        base = srv.dsn.rsplit("/", 1)[0]
        return (env,
                lambda db: ["--db-driver=mysql", "--mysql-host=127.0.0.1", f"--mysql-port={srv.port}", "--mysql-user=root",
                            f"--mysql-db={db}"],
                lambda db: ["--db", "mysql", "--dsn", f"{base}/{db}"],
                {"version": srv.sql("SELECT VERSION()").strip(), "settings": settings, "reached": f"127.0.0.1:{srv.port}"})
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    m = dict(re.findall(r"(\w+)=(\S+)", srv.conninfo))
    # storlab's workload tables go into the cluster's own database, whatever
    # name the comparison gives them.
    return (env,
            lambda db: ["--db-driver=pgsql", f"--pgsql-host={m['host']}", f"--pgsql-port={m['port']}",
                        f"--pgsql-user={m['user']}", f"--pgsql-db={m['dbname']}"],
            lambda db: ["--db", srv.conninfo],
            {"version": srv.sql("SELECT version()").strip(), "settings": settings, "reached": "Unix socket"})


def summarize(runs: list[dict]) -> dict:
    tps = [r["tps_ratio"] for r in runs]
    cpu = [r["cpu_ratio"] for r in runs]
    win = [r["window_cpu_ratio"] for r in runs]
    return {"runs": len(runs), "median_tps_ratio": statistics.median(tps), "tps_ratio_range": [min(tps), max(tps)],
            "median_cpu_ratio": statistics.median(cpu), "cpu_ratio_range": [min(cpu), max(cpu)],
            "median_window_cpu_ratio": statistics.median(win), "window_cpu_ratio_range": [min(win), max(win)],
            "sysbench_median_tps": statistics.median(r["sysbench"]["tps"] for r in runs),
            "storlab_median_tps": statistics.median(r["storlab"]["tps"] for r in runs),
            "sysbench_median_cpu_us_per_txn": statistics.median(r["sysbench"]["cpu_us_per_txn"] for r in runs),
            "storlab_median_cpu_us_per_txn": statistics.median(r["storlab"]["cpu_us_per_txn"] for r in runs),
            "storlab_median_window_cpu_us_per_txn": statistics.median(r["storlab"]["window_cpu_us_per_txn"] for r in runs)}


def main() -> None:
    def _terminate(signum, frame):
        raise KeyboardInterrupt  # unwind: the managed server is stopped and removed

    signal.signal(signal.SIGTERM, _terminate)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5, help="rounds; each runs every comparison at every user count, both tools")
    ap.add_argument("--users", default="1,4,8", help="user counts: sysbench --threads, storlab --vus")
    ap.add_argument("--time", type=int, default=10, help="seconds per run")
    ap.add_argument("--only", choices=sorted(COMPARISONS), action="append", help="run this comparison only (repeatable)")
    ap.add_argument("--storlab-threads", type=int, default=0, help="storlab --threads (0: one event loop per core, at most one per user)")
    ap.add_argument("--server", choices=("mariadb", "postgres"), default="mariadb",
                    help="the managed server both tools run on (postgres: the sbtest1 comparisons only)")
    ap.add_argument("--setting", action="append", default=[], metavar="NAME=VALUE",
                    help="a server setting (mariadbd: on top of innodb_buffer_pool_size=1G; repeatable)")
    ap.add_argument("--quick", action="store_true", help="one round of 3 s runs at 1 and 4 users, to try the script; records nothing")
    a = ap.parse_args()
    if a.quick:
        a.rounds, a.time, a.users = 1, 3, "1,4"
    users = [int(u) for u in a.users.split(",")]
    comparisons = a.only or (list(COMPARISONS) if a.server == "mariadb" else list(ON_SBTEST1))
    if a.server == "postgres" and set(comparisons) - set(ON_SBTEST1):
        ap.error(f"--server postgres runs {', '.join(ON_SBTEST1)} only: the insert comparisons' table is MySQL's")
    settings = {"innodb_buffer_pool_size": "1G"} if a.server == "mariadb" else {}
    for s in a.setting:
        k, sep, v = s.partition("=")
        if not sep:
            ap.error(f"--setting {s}: give NAME=VALUE, e.g. innodb_flush_log_at_trx_commit=2")
        settings[k] = v

    sysbench = shutil.which("sysbench")
    if sysbench is None:
        sys.exit("error: sysbench is not installed — apt-get install sysbench (Debian's package), then run again")
    if "/usr/sbin" not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin"  # Debian's mariadbd
    version = subprocess.run([sysbench, "--version"], capture_output=True, text=True).stdout.strip()

    base = Path(tempfile.mkdtemp(prefix="storlab-vs-sysbench-", dir="/tmp"))
    os.chmod(base, 0o755)
    runs: list[dict] = []
    server: dict = {}
    try:
        with managed_server(a.server, base / "db", 2 * max(users) + 20, settings) as srv:
            env, sb_conn, sl_db, server = connections(a.server, srv, settings)
            if any(c in comparisons for c in ON_SBTEST1):  # storlab loads sbtest1 from the workload file once
                timed([STORLAB, "bench", "db", "--workload", WORKLOAD, *sl_db("storlab"), "--vus", "1",
                       "--duration", "1", "--rampup", "0", "--json"], env)
            print(f"{version}, {server['version']} ({server['reached']}); {a.rounds} rounds of {a.time} s runs at {users} users",
                  file=sys.stderr)
            k = 0
            for rnd in range(a.rounds):
                for u in users:
                    for c in comparisons:
                        # Alternate which tool goes first, across rounds and user counts.
                        order = ("sysbench", "storlab") if k % 2 == 0 else ("storlab", "sysbench")
                        k += 1
                        got: dict = {"round": rnd + 1, "users": u, "comparison": c, "first": order[0]}
                        for tool in order:
                            db = "storlab" if c in ON_SBTEST1 else INSERT_DB
                            if c not in ON_SBTEST1:  # both start from empty tables
                                srv.sql(f"DROP TABLE IF EXISTS storlab_insert; {SBTEST}", dbname=INSERT_DB)
                            if tool == "sysbench":
                                got["sysbench"] = run_sysbench(sysbench, COMPARISONS[c], sb_conn(db), u, a.time, env)
                            else:
                                got["storlab"] = run_storlab(c, sl_db(db), u, a.time, a.storlab_threads, env)
                        s, t = got["sysbench"], got["storlab"]
                        got["tps_ratio"] = t["tps"] / s["tps"]
                        got["cpu_ratio"] = t["cpu_us_per_txn"] / s["cpu_us_per_txn"]
                        got["window_cpu_ratio"] = t["window_cpu_us_per_txn"] / s["cpu_us_per_txn"]
                        runs.append(got)
                        print(f"round {rnd + 1}, {c:10s} {u:2d} users: sysbench {s['tps']:7,.0f} tps {s['cpu_us_per_txn']:6.1f} µs CPU/txn | "
                              f"storlab {t['tps']:7,.0f} tps {t['cpu_us_per_txn']:6.1f} µs CPU/txn ({t['window_cpu_us_per_txn']:.1f} in the window) | "
                              f"tps ratio {got['tps_ratio']:.3f}, CPU ratio {got['cpu_ratio']:.3f}", flush=True)
    except DatabaseError as e:
        sys.exit(f"error: {e}")
    finally:
        shutil.rmtree(base, ignore_errors=True)

    summary: dict = {}
    for c in comparisons:
        mine = [r for r in runs if r["comparison"] == c]
        if not mine:
            continue
        summary[c] = {"all": summarize(mine), "by_users": {str(u): summarize([r for r in mine if r["users"] == u]) for u in users
                                                          if any(r["users"] == u for r in mine)}}
        for u, s in summary[c]["by_users"].items():
            print(f"{c}, {u} users: median tps ratio {s['median_tps_ratio']:.3f} ({s['tps_ratio_range'][0]:.3f}–{s['tps_ratio_range'][1]:.3f}), "
                  f"CPU/txn ratio {s['median_cpu_ratio']:.3f} ({s['cpu_ratio_range'][0]:.3f}–{s['cpu_ratio_range'][1]:.3f}), "
                  f"window {s['median_window_cpu_ratio']:.3f}; sysbench {s['sysbench_median_tps']:,.0f} tps "
                  f"{s['sysbench_median_cpu_us_per_txn']:.1f} µs, storlab {s['storlab_median_tps']:,.0f} tps "
                  f"{s['storlab_median_cpu_us_per_txn']:.1f} µs ({s['storlab_median_window_cpu_us_per_txn']:.1f} in the window)")
    if a.quick or not runs:
        return
    raw = {"args": vars(a), "sysbench": version, "server": server, "runs": runs, "summary": summary}
    cmd = "python bench/db_vs_sysbench.py" + "".join(f" {x}" for x in sys.argv[1:])
    for c in summary:
        s = summary[c]["all"]
        per = "; ".join(f"{u} user{'s' if u != '1' else ''} tps {v['median_tps_ratio']:.2f}, CPU/txn {v['median_cpu_ratio']:.2f} "
                        f"(window {v['median_window_cpu_ratio']:.2f})" for u, v in summary[c]["by_users"].items())
        what = {"insert": "insert storm (a commit a row) / sysbench oltp_insert",
                "insert_file": "workload file (oltp_insert's row, in autocommit) / sysbench oltp_insert",
                "write_only": "workload file (oltp_write_only's statements) / sysbench oltp_write_only",
                "read_write": "workload file (oltp_read_write's statements) / sysbench oltp_read_write",
                "read_only": "workload file (oltp_read_only's statements) / sysbench oltp_read_only"}[c]
        on = {"mariadb": "MariaDB", "postgres": "PostgreSQL"}[a.server]
        record("db_vs_sysbench" if a.server == "mariadb" else "db_vs_sysbench_postgres",
               f"bench db {what} on managed {on}, tps, {a.rounds} rounds of {a.time} s; "
               f"medians {per} (`{cmd}`)", s["median_tps_ratio"], *s["tps_ratio_range"], raw)


if __name__ == "__main__":
    main()
