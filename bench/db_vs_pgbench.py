#!/usr/bin/env python3
"""storlab bench db beside pgbench, alternately, on the same managed server.

storlab starts one PostgreSQL cluster (storlab.db.managed) in a temp folder,
loads examples/db/tpcb-like.toml (pgbench's tables and data), then runs, in
turn, `pgbench -n -M prepared -c C -j J -T T` (PostgreSQL's client, -n since the tables
need no vacuum between runs) and `storlab bench db --workload
examples/db/tpcb-like.toml --vus C --threads J --duration T --rampup 0` against it, and
prints each pair's transactions per second, their ratio, and each client's
CPU per transaction (the whole process, every thread, from the kernel's
child accounting). The TPC-C client-CPU figure comes from storlab's own
record (every thread of the process over the measured window).

Throughput on a shared machine swings by 2x within a minute (CPU steal and
the disk's fsync latency), so the defaults are many short rounds, the order
swapped each round, and the summary is the median of the per-round ratios
with its distribution-free 95% confidence interval. `--sync-commit off`
takes the disk's fsync out of the loop, leaving the CPU (the clients' own
cost included) as the limit. The side-by-side rounds cancel the noise
instead: both clients run at once with half the clients each, and each is
counted over the same seconds. At scale 1 every transaction queues for the
one branch row, and the lock queue deals turns fairly, so that check is
sharper at `--scale` of the client count or more.

The raw results replace the entry db_vs_pgbench of bench/results.json; the row on
bench/RESULTS.md is the median of the per-round tps ratios with their lowest
and highest.

    .venv/bin/python bench/db_vs_pgbench.py --rounds 20 --time 5 --protocol prepared
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))

from _common import record  # noqa: E402
from storlab.db.managed import ManagedPostgres, find_pg_bin  # noqa: E402

STORLAB = str(ROOT / ".venv" / "bin" / "storlab")
WORKLOAD = str(ROOT / "examples" / "db" / "tpcb-like.toml")


def timed(cmd: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{cmd[0]} failed:\n{r.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return r, cpu


def median_ci(xs: list[float], level: float = 0.95) -> tuple[float, float]:
    """Distribution-free confidence interval of the median: the order
    statistics x(k) and x(n-k+1) for the largest k with
    P(k <= B <= n-k) >= level, B ~ Binomial(n, 1/2)."""
    x, n = sorted(xs), len(xs)
    k = 0
    for j in range(1, n // 2 + 1):
        if sum(math.comb(n, i) for i in range(j, n - j + 1)) / 2 ** n >= level:
            k = j
    return (x[k - 1], x[n - k]) if k else (x[0], x[-1])


def side_by_side(a, pgbench: str, dsn: str, env: dict[str, str], logdir: Path) -> dict:
    """Both clients at once on the server, half the clients each, so both
    see the same CPU steal and the same fsync latency. pgbench starts first
    and runs past storlab's window; each tool's transactions are counted
    over the same whole seconds inside the window (pgbench's per-transaction
    log, -l, against storlab's per-second series from its start time)."""
    half, threads = max(1, a.clients // 2), max(1, a.threads // 2)
    secs = max(a.time, 10)
    logdir.mkdir()
    p = subprocess.Popen([pgbench, "-n", "-M", a.protocol, "-c", str(half), "-j", str(threads), "-T", str(secs + 6),
                          "-l", f"--log-prefix={logdir}/tx"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    r = subprocess.run([STORLAB, "bench", "db", "--workload", WORKLOAD, "--db", dsn, "--vus", str(half), "--threads", str(threads),
                        "--duration", str(secs), "--rampup", "0", "--scale", str(a.scale), "--json"], env=env, capture_output=True, text=True)
    _, err = p.communicate()
    if r.returncode != 0 or p.returncode != 0:
        raise SystemExit(f"side-by-side run failed: {r.stderr.strip() or err.strip()}")
    run = json.loads(r.stdout)["runs"][0]
    t0, per_s = run["started_unix_s"], run["per_second"]["txns"]
    lo, hi = 1, int(run["duration_s"]) - 1  # whole seconds, the edges left out
    mine = sum(per_s[lo:hi])
    theirs = 0
    for f in logdir.iterdir():
        for line in f.read_text().splitlines():
            x = line.split()  # client, txn no, latency us, script, epoch s, us
            if t0 + lo <= int(x[4]) + int(x[5]) / 1e6 < t0 + hi:
                theirs += 1
    n = hi - lo
    return {"seconds": n, "pgbench_tps": theirs / n, "storlab_tps": mine / n, "ratio": mine / theirs}


def main() -> None:
    import signal

    def _terminate(signum, frame):
        raise KeyboardInterrupt  # unwind: the managed cluster is stopped and removed

    signal.signal(signal.SIGTERM, _terminate)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2, help="threads of both clients: pgbench -j and storlab --threads")
    ap.add_argument("--time", type=int, default=5, help="seconds per run")
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--protocol", default="prepared", choices=["simple", "extended", "prepared"],
                    help="pgbench -M; prepared (the default) is like for like, as storlab prepares its statements")
    ap.add_argument("--tpcc-time", type=int, default=30, help="seconds of the TPC-C client-CPU run (0 skips it)")
    ap.add_argument("--sync-commit", default="on", choices=["on", "off"],
                    help="the server's synchronous_commit: off takes the disk's fsync out of each commit")
    ap.add_argument("--side-by-side", type=int, default=6, metavar="ROUNDS",
                    help="rounds with both clients at once, half the clients each, counted over the same seconds (0 skips)")
    a = ap.parse_args()

    pgbench = shutil.which("pgbench") or str(find_pg_bin() / "pgbench")
    base = Path(tempfile.mkdtemp(prefix="storlab-vs-pgbench-", dir="/tmp"))
    os.chmod(base, 0o755)
    pairs = []
    side: list[dict] = []
    tpcc = None
    try:
        with ManagedPostgres(base / "db", max_connections=a.clients + 20,
                             settings={"synchronous_commit": a.sync_commit}) as pg:
            env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
            m = dict(re.findall(r"(\w+)=(\S+)", pg.conninfo))
            env.update(PGHOST=m["host"], PGPORT=m["port"], PGUSER=m["user"], PGDATABASE=m["dbname"])
            dsn = pg.conninfo
            sl_cmd = [STORLAB, "bench", "db", "--workload", WORKLOAD, "--db", dsn, "--vus", str(a.clients),
                      "--duration", str(a.time), "--rampup", "0", "--scale", str(a.scale), "--threads", str(a.threads), "--json"]
            # Load once (a 1-second run), then alternate. Before every run both
            # tools get the same tables: the history emptied and the small
            # hot tables vacuumed (what pgbench itself does without -n).
            timed(sl_cmd[:-7] + ["--duration", "1", "--rampup", "0", "--scale", str(a.scale), "--json"], env)
            psql = str(find_pg_bin() / "psql")
            reset = [psql, "-X", "-q", "-c", "TRUNCATE pgbench_history", "-c", "VACUUM pgbench_branches, pgbench_tellers, pgbench_accounts"]
            for k in range(a.rounds):
                order = ("pgbench", "storlab") if k % 2 == 0 else ("storlab", "pgbench")
                got = {}
                for tool in order:
                    subprocess.run(reset, env=env, check=True, capture_output=True)
                    if tool == "pgbench":
                        r, cpu = timed([pgbench, "-n", "-M", a.protocol, "-c", str(a.clients), "-j", str(a.threads), "-T", str(a.time)], env)
                        tps = float(re.search(r"tps = ([\d.]+)", r.stdout).group(1))
                        n = int(re.search(r"number of transactions actually processed: (\d+)", r.stdout).group(1))
                        got["pgbench"] = {"tps": tps, "txns": n, "cpu_s": cpu, "cpu_us_per_txn": cpu / n * 1e6}
                    else:
                        r, cpu = timed(sl_cmd, env)
                        rec = json.loads(r.stdout)
                        run = rec["runs"][0]
                        tps = run["tpm_client"] / 60
                        got["storlab"] = {"tps": tps, "txns": run["transactions"], "cpu_s": cpu,
                                          "cpu_us_per_txn": cpu / run["transactions"] * 1e6,
                                          "window_cpu_us_per_txn": run["client_cpu_us_per_txn"]}
                got["ratio"] = got["storlab"]["tps"] / got["pgbench"]["tps"]
                pairs.append(got)
                print(f"round {k + 1}: pgbench {got['pgbench']['tps']:8,.0f} tps {got['pgbench']['cpu_us_per_txn']:6.1f} µs CPU/txn | "
                      f"storlab {got['storlab']['tps']:8,.0f} tps {got['storlab']['cpu_us_per_txn']:6.1f} µs CPU/txn "
                      f"({got['storlab']['window_cpu_us_per_txn']:.1f} in the window) | ratio {got['ratio']:.3f}", flush=True)
            for k in range(a.side_by_side):
                subprocess.run(reset, env=env, check=True, capture_output=True)
                got = side_by_side(a, pgbench, dsn, env, base / f"pgbench-log-{k}")
                side.append(got)
                print(f"side by side {k + 1}: over the same {got['seconds']} s, {a.clients // 2 or 1} clients each: "
                      f"pgbench {got['pgbench_tps']:8,.0f} tps | storlab {got['storlab_tps']:8,.0f} tps | ratio {got['ratio']:.3f}", flush=True)
            if a.tpcc_time > 0:
                r, _ = timed([STORLAB, "bench", "db", "--workload", "tpcc", "--db", dsn, "--warehouses", "4", "--vus", str(a.clients),
                              "--rampup", "5", "--duration", str(a.tpcc_time), "--json"], env)
                run = json.loads(r.stdout)["runs"][0]
                tpcc = {k: run[k] for k in ("vus", "nopm", "tpm", "tpm_client", "client_cpu_s", "client_cpu_us_per_txn", "transactions")}
                print(f"TPC-C (4 warehouses, {a.clients} VUs, {a.tpcc_time} s): {run['hammerdb']}; "
                      f"client CPU {run['client_cpu_us_per_txn']:.1f} µs per transaction (every thread, measured window)")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    summary: dict = {}
    if pairs:
        ratios = [p["ratio"] for p in pairs]
        lo, hi = median_ci(ratios)
        summary |= {
            "median_ratio": statistics.median(ratios),
            "median_ratio_ci95": [lo, hi],
            "pgbench_median_tps": statistics.median(p["pgbench"]["tps"] for p in pairs),
            "storlab_median_tps": statistics.median(p["storlab"]["tps"] for p in pairs),
            "pgbench_median_cpu_us_per_txn": statistics.median(p["pgbench"]["cpu_us_per_txn"] for p in pairs),
            "storlab_median_cpu_us_per_txn": statistics.median(p["storlab"]["cpu_us_per_txn"] for p in pairs),
        }
        print(f"median tps ratio storlab/pgbench: {summary['median_ratio']:.3f} over {len(pairs)} rounds, "
              f"95% CI {lo:.3f}-{hi:.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")
    if side:
        sr = [x["ratio"] for x in side]
        summary["side_by_side_median_ratio"] = statistics.median(sr)
        summary["side_by_side_ratio_range"] = [min(sr), max(sr)]
        print(f"side by side, the same seconds: median ratio {statistics.median(sr):.3f} over {len(sr)} rounds "
              f"(min {min(sr):.3f}, max {max(sr):.3f})")
    if pairs:
        record("db_vs_pgbench", f"bench db / pgbench tps, TPC-B-like, {a.clients} clients, {len(pairs)} rounds",
               summary["median_ratio"], min(ratios), max(ratios),
               {"args": vars(a), "pairs": pairs, "side_by_side": side, "summary": summary, "tpcc": tpcc})


if __name__ == "__main__":
    main()
