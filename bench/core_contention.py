"""The server's CPU per transaction on 1 CPU and on 2, the same server, the
same data, the same users: the contention term a profile carries to hosts
with more cores (docs/dbmodel.md, "CPU per transaction and the host's cores").

One TPC-C server (PostgreSQL or MariaDB, started here as `bench db --db
managed-*` starts it, with the profile recorder's settings, data in the
cache) is pinned alternately onto CPU 0 and onto CPUs 0–1 between windows
(every thread of it; backends started later inherit the mask), rounds
alternating which goes first. Each window's server CPU per transaction is
the recorder's (`storlab.db.profile.cpu_per_txn`: the machine's busy time
around the window less the client's own, over the window's transactions).

At N users the server runs min(N, cpus) backends at once. The Universal
Scalability Law's contention term (Gunther, Guerrilla Capacity Planning,
2007, ch. 4) makes each transaction's time 1 + σ(p − 1) at p at once, so
σ = CPU(2 CPUs) / CPU(1 CPU) − 1 at N ≥ 2. The script prints each window,
σ per user count (median of the rounds, with the spread) and the median
over the counts, and writes it into a profile with --write:

    python bench/core_contention.py --engine postgresql --rounds 5
    python bench/core_contention.py --engine mariadb --rounds 5 \\
        --write python/storlab/profiles/tpcc-mariadb.toml
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import statistics
import sys
import tempfile
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from storlab import _native  # noqa: E402
from storlab.db import myprofile, profile as dbprofile  # noqa: E402
from storlab.db.managed import ManagedPostgres  # noqa: E402
from storlab.db.mariadb import ManagedMariadb  # noqa: E402


# σ₂, past 2 backends at once: a 2-CPU machine cannot show it, so it is
# cited from a many-core measurement of the engine (docs/dbmodel.md).
BEYOND = {
    "mariadb": (0.0048, "σ₂ from Percona Lab's MySQL Ecosystem Performance Benchmark Report 2026 (26 Mar 2026; raw logs "
                "in Percona-Lab-results/2026-interactive-metrics, benchmark_remote_logs, Tier32G): MariaDB 10.11.16, "
                "sysbench oltp_read_write, 32 GB buffer pool, the client on another host, 2 × Xeon Gold 6230 (40 "
                "cores); the server's CPU per transaction (vmstat us + sy over 80 threads / tps) 2.00, 1.85 and 2.24 ms "
                "at 4, 16 and 32 threads, least squares σ₂ = 0.0048 (16 → 32 alone 0.016; MySQL and Percona Server "
                "5.7–9.6 in the same runs −0.007 to 0.011)"),
    "postgresql": (0.0, "σ₂ 0: no many-core measurement of PostgreSQL's CPU per transaction was found"),
}


def with_keys(text: str, table: str, keys: dict[str, object]) -> str:
    """`text` (a profile) with `keys` set in its `[table]`: earlier values of
    them dropped, the new ones after the table's last key; every other line
    as it was (a profile's comments and layout are the recorder's)."""
    lines = text.split("\n")
    start = lines.index(f"[{table}]")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    body = [ln for ln in lines[start + 1:end] if ln.split("=", 1)[0].strip() not in keys]
    while body and not body[-1].strip():
        body.pop()
    new = [f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in keys.items()]
    tail = lines[end:]
    return "\n".join(lines[:start + 1] + body + new + ([""] if tail else []) + tail)


def tasks(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def server_pids(m) -> list[int]:
    if hasattr(m, "server_pids"):
        return m.server_pids()
    return [m.server_pid] if m.server_pid else []


def pin(m, cpus: set[int]) -> int:
    """Every thread of the running server onto `cpus`; later ones inherit."""
    n = 0
    for pid in server_pids(m):
        for tid in tasks(pid):
            try:
                os.sched_setaffinity(tid, cpus)
                n += 1
            except OSError:
                pass  # a thread that ended meanwhile
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", choices=("postgresql", "mariadb"), default="postgresql")
    ap.add_argument("--warehouses", type=int, default=4)
    ap.add_argument("--vus", default="2,4,8")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rampup", type=float, default=5.0)
    ap.add_argument("--duration", type=float, default=20.0)
    ap.add_argument("--dir", default=None, help="where the server's data goes (default: a temporary folder)")
    ap.add_argument("--one-cpu", type=int, default=0, choices=(0, 1), help="the CPU of the 1-CPU windows (the other is added for the 2-CPU ones)")
    ap.add_argument("--write", default=None, help="a profile to write the term into ([concurrency] core_contention, core_contention_beyond)")
    ap.add_argument("--from-log", default=None, help="read the windows from this script's earlier output instead of measuring")
    a = ap.parse_args()
    if len(os.sched_getaffinity(0)) < 2:
        print("core_contention: needs 2 CPUs", file=sys.stderr)
        return 2
    one, two = {a.one_cpu}, {0, 1}
    vus = [int(x) for x in a.vus.split(",")]
    if min(vus) < 2:
        print("core_contention: --vus counts must be 2 or more (one user runs one backend on any machine)", file=sys.stderr)
        return 2
    cpu: dict[tuple[int, int], list[float]] = {}
    version = ""
    if a.from_log:
        for line in Path(a.from_log).read_text(encoding="utf-8").splitlines():
            m_ = re.match(r"round \d+ cpus (\d) vus (\d+): ([\d,]+) µs", line)
            if m_:
                cpu.setdefault((int(m_.group(1)), int(m_.group(2))), []).append(float(m_.group(3).replace(",", "")))
            elif line.startswith("server: "):
                version = line[len("server: "):]
        vus = sorted({v for _, v in cpu})
    else:
        with tempfile.TemporaryDirectory(prefix="storlab-cores-", dir=a.dir or "/var/tmp") as d:
            os.chmod(d, 0o755)  # PostgreSQL runs as postgres when storlab is root
            if a.engine == "postgresql":
                m = ManagedPostgres(d, max_connections=max(vus) + 10, settings=dict(dbprofile.SETTINGS))
            else:
                m = ManagedMariadb(d, max_connections=max(vus) + 10, settings=dict(myprofile.SETTINGS))
            with m:
                target = (_native.DbTarget.mysql(m.dsn) if a.engine == "mariadb" else _native.DbTarget.postgres(m.conninfo))
                wl = _native.DbWorkload.tpcc(warehouses=a.warehouses, all_warehouses=False, key_and_think=False, commit_log=None)
                _native.db_prepare_json(target, wl, seed=1, progress=lambda *x: None)
                if a.engine == "mariadb":
                    myprofile.before_sweep(m, grows=False)
                else:
                    dbprofile.before_sweep(m)
                version = m.sql("SELECT version();").strip().splitlines()[-1]
                if a.engine == "mariadb":
                    version = "MariaDB " + version.split("-")[0]
                print(f"server: {version.split(' on ')[0]}", flush=True)
                for r in range(a.rounds):
                    order = (one, two) if r % 2 == 0 else (two, one)
                    for cpus in order:
                        pin(m, cpus)
                        for v in vus:
                            h0 = dbprofile.host_cpu_now()
                            run = json.loads(_native.db_run_json(target, wl, vus=v, rampup_s=a.rampup, duration_s=a.duration,
                                                                 seed=1 + 7919 * r + v, threads=0, check=False,
                                                                 progress=lambda *x: None))
                            run["host_cpu"] = dbprofile.host_cpu_since(h0)
                            c = dbprofile.cpu_per_txn(run)
                            cpu.setdefault((len(cpus), v), []).append(c)
                            print(f"round {r + 1} cpus {len(cpus)} vus {v}: {c:,.0f} µs CPU a transaction, "
                                  f"{run.get('nopm', 0):,.0f} NOPM", flush=True)
    sig: dict[int, list[float]] = {}
    print("\n| users | CPU µs/txn, 1 CPU | 2 CPUs | σ = 2/1 − 1, median [min–max] of rounds |\n|---|---|---|---|")
    for v in vus:
        s = [b / x - 1 for x, b in zip(cpu[(1, v)], cpu[(2, v)])]
        sig[v] = s
        print(f"| {v} | {statistics.median(cpu[(1, v)]):,.0f} | {statistics.median(cpu[(2, v)]):,.0f} | "
              f"{statistics.median(s):+.3f} [{min(s):+.3f}–{max(s):+.3f}] |")
    allv = [x for s in sig.values() for x in s]
    med = statistics.median(allv)
    print(f"\nσ over all windows: {med:+.3f} [{min(allv):+.3f}–{max(allv):+.3f}] ({len(allv)} pairs)")
    if a.write:
        p = Path(a.write)
        text = p.read_text(encoding="utf-8")
        keys = {
            "core_contention": round(max(med, 0.0), 4),
            "core_contention_beyond": BEYOND[a.engine][0],
            "core_contention_source": (
                f"σ₁ from bench/core_contention.py --engine {a.engine} --warehouses {a.warehouses} --vus {','.join(map(str, vus))} "
                f"on {datetime.date.today().isoformat()} ({version or a.engine}, this machine's 2 CPUs): the server's CPU per "
                f"transaction on 2 CPUs over 1 CPU, less 1, median of {len(allv)} pairs {med:+.3f} [{min(allv):+.3f} to {max(allv):+.3f}]"
                + (", held at 0" if med < 0 else "") + "; " + BEYOND[a.engine][1]),
        }
        p.write_text(with_keys(text, "concurrency", keys), encoding="utf-8")
        tomllib.loads(p.read_text(encoding="utf-8"))  # still a profile
        print(f"wrote core_contention = {keys['core_contention']}, core_contention_beyond = {keys['core_contention_beyond']} into {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
