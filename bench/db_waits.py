"""Where a real PostgreSQL's users spend their time, per VU count: the
measurement behind the database model's limits (docs/dbmodel.md).

`storlab bench db --workload tpcc --db managed-postgres` runs a sweep while
this script samples, from a second connection:

- `pg_stat_activity` of the users' backends (those whose query is one of
  the TPC-C routines) 20 times a second: each backend is on a CPU or
  runnable (no wait event), waiting for the client (idle: the response is
  on its way and the next call not yet in), or in a wait event
  (LWLock:WALWrite — waiting for another backend's WAL flush; IO:WALSync —
  its own fdatasync; Lock:transactionid — a row another transaction holds
  until it commits; ...);
- once a second, `pg_stat_wal` (syncs and their time, with the managed
  cluster's track_wal_io_timing), `/proc/stat` (the machine's busy CPU)
  and `/proc/diskstats` (the disk's write latency and cache flushes).

Per VU count it prints the share of the users' time in each state (as
users: the shares × VUs), the WAL sync time PostgreSQL saw, syncs per
transaction, the machine's busy vCPUs, and the disk's write and flush
latency. The machine must be otherwise quiet. Nothing here feeds the model.

With `--model PROFILE --catalog OVERLAY` (the overlay with this machine's
calibrated disk, e.g. a `db_accuracy.py` round's `calibrated-overlay.toml`)
it also simulates the same warehouses and VU counts with that profile on
this machine as the overlay has it, and prints the model's users in each
state (`time_us` × transactions a second) beside the measured ones: a
transaction on a vCPU or waiting for one against `CPU` (no wait event:
running or runnable), its commit against the WAL waits (LWLock:WALWrite +
IO:WALSync + IO:WALWrite), row locks against Lock:transactionid +
Lock:tuple, data reads against IO:DataFileRead, the round trip outside
the server against Client:idle. `--from FILE.json` (an earlier `--out`)
compares without measuring again.

    python bench/db_waits.py [--warehouses 4] [--vus 1,2,4,8,16] [--rampup 3] [--duration 20]
                             [--dir /var/tmp/storlab-db-waits] [--out FILE.json] [--setting NAME=VALUE]
                             [--emulate SCENARIO:CONFIG [--emulate-options "--ram 16"]]
                             [--model PROFILE --catalog OVERLAY] [--from FILE.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The TPC-C routines the users call (crates/storlab-db/src/tpcc/session.rs).
ROUTINES = ("neword", "payment", "ostat", "delivery", "slev")
# One connection (the cluster has few spare): the users' states and the WAL
# counters, 20 times a second.
ACTIVITY = ("SELECT extract(epoch from clock_timestamp())::text, "
            "(SELECT string_agg(CASE WHEN state = 'idle' THEN 'Client:idle' "
            "ELSE coalesce(wait_event_type || ':' || wait_event, 'CPU') END, ',') "
            "FROM pg_stat_activity WHERE backend_type = 'client backend' AND ("
            + f"query ~ '({'|'.join(ROUTINES)})\\('" + ")), "
            "w.wal_sync, w.wal_sync_time, (SELECT sum(xact_commit + xact_rollback) FROM pg_stat_database) "
            "FROM pg_stat_wal w \\watch 0.05\n")


def storlab_bin() -> str:
    return str(Path(sys.executable).with_name("storlab"))


def psql(sock: Path) -> list[str]:
    return ["psql", "-h", str(sock), "-p", "5432", "-U", "postgres", "-d", "storlab", "-AtX", "-F", "|", "-q"]


def disk_of(path: Path) -> str:
    """The block device (whole disk) under `path`, as /proc/diskstats names it."""
    dev = os.stat(path).st_dev
    name = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}").resolve().name
    parent = Path(f"/sys/class/block/{name}/..").resolve().name
    return parent if (Path("/sys/class/block") / parent).exists() else name


def proc_counters(disk: str) -> tuple[float, list[int], list[int]]:
    cpu = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    ds = next(ln.split()[3:] for ln in Path("/proc/diskstats").read_text().splitlines() if ln.split()[2] == disk)
    return time.time(), cpu, [int(x) for x in ds]


def find_sock(base: Path) -> Path | None:
    """The managed cluster's socket folder under `base`: DIR/storlab-pg/sock,
    or on an emulated volume (--emulate) inside the mount that `bench db`
    makes under DIR."""
    for sock in [base / "storlab-pg" / "sock", *sorted(base.glob("storlab-emulate-*/mnt-*/storlab-pg/sock"))]:
        if (sock / ".s.PGSQL.5432").exists():
            return sock
    return None


def sample(base: Path, disk: str, stop: threading.Event, waits: list, seconds: list) -> None:
    while (sock := find_sock(base)) is None:
        if stop.wait(0.2):
            return
    time.sleep(1.0)
    # Line-buffered (stdbuf), so each sample arrives when it is taken.
    watch = subprocess.Popen(["stdbuf", "-oL", *psql(sock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True)
    assert watch.stdin is not None and watch.stdout is not None
    watch.stdin.write(ACTIVITY)
    watch.stdin.flush()

    def read_watch() -> None:
        last = 0.0
        for line in watch.stdout:  # type: ignore[union-attr]
            f = line.strip().split("|")
            if len(f) != 5:
                continue
            if f[1]:
                waits.append((float(f[0]), f[1].split(",")))
            if time.time() - last >= 1.0:
                last = time.time()
                seconds.append({"proc": proc_counters(disk), "syncs": float(f[2]), "sync_ms": float(f[3]),
                                 "xacts": float(f[4] or 0)})

    reader = threading.Thread(target=read_watch, daemon=True)
    reader.start()
    while not stop.wait(0.5) and (sock / ".s.PGSQL.5432").exists():
        pass
    watch.terminate()
    watch.wait()


def summarize(waits: list, seconds: list, vus: list[int]) -> dict[int, dict]:
    # Each sample's VU count is the number of users' backends in it; a
    # second's counters belong to the count its samples show.
    by_vus: dict[int, collections.Counter] = {v: collections.Counter() for v in vus}
    samples: collections.Counter[int] = collections.Counter()
    when: list[tuple[float, int]] = []
    for ts, states in waits:
        n = len(states)
        if n in by_vus:
            by_vus[n].update(states)
            samples[n] += 1
            when.append((ts, n))
    out: dict[int, dict] = {}
    for v in vus:
        tot = sum(by_vus[v].values())
        if not tot:
            continue
        out[v] = {"samples": samples[v], "users": {k: c / tot * v for k, c in by_vus[v].most_common()}}
    for a, b in zip(seconds, seconds[1:]):
        # The second belongs to the VU count of (nearly) all its samples.
        near = collections.Counter(n for ts, n in when if a["proc"][0] <= ts < b["proc"][0])
        if not near:
            continue
        n, c = near.most_common(1)[0]
        if c < 0.9 * sum(near.values()) or n not in out:
            continue
        s = out[n].setdefault("seconds", collections.defaultdict(float))
        dt = b["proc"][0] - a["proc"][0]
        cpu = [y - x for x, y in zip(a["proc"][1], b["proc"][1])]
        disk = [y - x for x, y in zip(a["proc"][2], b["proc"][2])]
        busy = sum(cpu[:3]) + sum(cpu[5:7])  # user, nice, system, irq, softirq
        s["elapsed_s"] += dt
        s["busy_share"] += busy / max(sum(cpu[:8]), 1) * dt
        s["syncs"] += b["syncs"] - a["syncs"]
        s["sync_ms"] += b["sync_ms"] - a["sync_ms"]
        s["xacts"] += b["xacts"] - a["xacts"]
        # /proc/diskstats after the name: writes completed [4], ms writing
        # [7], flush requests [15], ms flushing [16] (kernels from 5.5).
        s["disk_writes"] += disk[4]
        s["disk_write_ms"] += disk[7]
        if len(disk) > 16:
            s["disk_flushes"] += disk[15]
            s["disk_flush_ms"] += disk[16]
    return out


def table(out: dict[int, dict], cpus: int) -> list[str]:
    keys = ["CPU", "Client:idle", "LWLock:WALWrite", "IO:WALSync", "IO:WALWrite", "Lock:transactionid", "Lock:tuple",
            "IO:DataFileRead"]
    lines = ["| VUs | samples | " + " | ".join(keys) + " | other | WAL sync µs | syncs / txn | busy vCPUs | disk write ms | "
             "disk flush ms |", "|---" * (len(keys) + 8) + "|"]
    for v, r in sorted(out.items()):
        u = r["users"]
        other = sum(x for k, x in u.items() if k not in keys)
        s = r.get("seconds") or {}
        sync = s["sync_ms"] * 1000 / s["syncs"] if s.get("syncs") else float("nan")
        per = s["syncs"] / s["xacts"] if s.get("xacts") else float("nan")
        busy = s["busy_share"] / s["elapsed_s"] * cpus if s.get("elapsed_s") else float("nan")
        wlat = s["disk_write_ms"] / s["disk_writes"] if s.get("disk_writes") else float("nan")
        flat = s["disk_flush_ms"] / s["disk_flushes"] if s.get("disk_flushes") else float("nan")
        lines.append(f"| {v} | {r['samples']} | " + " | ".join(f"{u.get(k, 0.0):.2f}" for k in keys)
                     + f" | {other:.2f} | {sync:,.0f} | {per:.2f} | {busy:.2f} | {wlat:.3f} | {flat:.3f} |")
    return lines


# The model's states (the record's `time_us`) and the wait events they
# stand for in pg_stat_activity.
MODEL_STATES = [("on a vCPU or waiting for one", ("cpu", "cpu_queue"), ("CPU",)),
                ("commit: WAL flush", ("commit",), ("LWLock:WALWrite", "IO:WALSync", "IO:WALWrite")),
                ("row locks", ("row_locks",), ("Lock:transactionid", "Lock:tuple")),
                ("data reads", ("data_reads",), ("IO:DataFileRead",)),
                ("outside the server", ("outside", "think"), ("Client:idle",))]


def model_users(profile: Path, catalog: Path, warehouses: int, vus: list[int]) -> dict[int, dict]:
    """The model's users in each state: `storlab simulate` of the same
    sweep on this machine as the overlay has it (its host and calibrated
    disk, named after this machine's hostname)."""
    import tempfile

    from db_accuracy import LOCAL_SCENARIO  # the same scenario as the accuracy rounds'
    from storlab.calibrate import this_host

    with tempfile.TemporaryDirectory() as tmp:
        scen = Path(tmp) / "model.toml"
        scen.write_text(LOCAL_SCENARIO.format(profile=profile.resolve(), scale=warehouses, vus=vus, rampup=3,
                                              duration=20, hostname=this_host()))
        p = subprocess.run([storlab_bin(), "simulate", str(scen), "--catalog", str(catalog), "--json"],
                           capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"storlab simulate failed: {p.stderr.strip()[-800:]}")
    out = {}
    for r in json.loads(p.stdout)["results"]:
        tps = (r["tpm"] or 0.0) / 60.0
        out[int(r["vus"])] = {"nopm": r.get("nopm"), "binding": r["binding"],
                              "users": {k: v * tps / 1e6 for k, v in (r.get("time_us") or {}).items()}}
    return out


def model_table(measured: dict[int, dict], model: dict[int, dict], rec: dict) -> list[str]:
    nopm = {int(x["vus"]): x.get("nopm") for x in rec["results"]}
    head = " | ".join(f"{name}: measured, model" for name, _, _ in MODEL_STATES)
    lines = [f"| VUs | {head} | NOPM: measured, model |", "|---" * (len(MODEL_STATES) + 2) + "|"]
    for v in sorted(set(measured) & set(model)):
        mu, su = measured[v]["users"], model[v]["users"]
        cells = [f"{sum(mu.get(k, 0.0) for k in pg):.2f}, {sum(su.get(k, 0.0) for k in ours):.2f}"
                 for _, ours, pg in MODEL_STATES]
        lines.append(f"| {v} | " + " | ".join(cells) + f" | {nopm.get(v) or 0:,.0f}, {model[v]['nopm'] or 0:,.0f} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warehouses", type=int, default=4)
    ap.add_argument("--vus", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2, 4, 8, 16])
    ap.add_argument("--rampup", type=int, default=3)
    ap.add_argument("--duration", type=int, default=20)
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp/storlab-db-waits"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--setting", action="append", default=[], metavar="NAME=VALUE",
                    help="a PostgreSQL setting for the managed cluster (bench db --setting), repeatable, "
                         "e.g. shared_buffers=320MB")
    ap.add_argument("--emulate", metavar="SCENARIO:CONFIG",
                    help="run on an emulated volume (bench db --emulate); the disk columns are then this machine's "
                         "disk under the emulator's backing folder")
    ap.add_argument("--emulate-options", default="",
                    help="further storlab emulate options for the run, e.g. \"--ram 16\" (STORLAB_EMULATE_OPTIONS)")
    ap.add_argument("--model", type=Path, metavar="PROFILE",
                    help="also simulate the sweep with this profile and print the model's users in each state")
    ap.add_argument("--catalog", type=Path, metavar="OVERLAY",
                    help="with --model: the catalog overlay with this machine's calibrated disk")
    ap.add_argument("--from", dest="from_", type=Path, metavar="FILE.json",
                    help="an earlier --out: compare it with --model without measuring again")
    args = ap.parse_args()
    if args.model and not args.catalog:
        sys.exit("--model needs --catalog OVERLAY (this machine's calibrated disk, e.g. a db_accuracy round's "
                 "calibrated-overlay.toml)")
    if args.from_:
        if not args.model:
            sys.exit("--from compares an earlier run with --model PROFILE --catalog OVERLAY")
        saved = json.loads(args.from_.read_text())
        by_vus = {int(k): v for k, v in saved["by_vus"].items()}
        wh = int(saved["record"]["results"][0].get("warehouses") or saved["command"][saved["command"].index("--warehouses") + 1])
        print("\n".join(model_table(by_vus, model_users(args.model, args.catalog, wh, sorted(by_vus)), saved["record"])))
        return
    if shutil.which("psql") is None:
        sys.exit("psql not found: install PostgreSQL's client (Debian's postgresql-client)")
    args.dir.mkdir(parents=True, exist_ok=True)
    disk = disk_of(args.dir)
    waits: list = []
    seconds: list = []
    stop = threading.Event()
    t = threading.Thread(target=sample, args=(args.dir, disk, stop, waits, seconds), daemon=True)
    t.start()
    cmd = [storlab_bin(), "bench", "db", "--workload", "tpcc", "--db", "managed-postgres", "--dir", str(args.dir),
           "--warehouses", str(args.warehouses), "--vus", ",".join(map(str, args.vus)), "--rampup", str(args.rampup),
           "--duration", str(args.duration), "--json"]
    for kv in args.setting:
        cmd += ["--setting", kv]
    env = dict(os.environ)
    if args.emulate:
        cmd += ["--emulate", args.emulate]
        env["STORLAB_EMULATE_OPTIONS"] = args.emulate_options
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    finally:
        stop.set()
        t.join(timeout=10)
        if args.dir.exists() and not any(args.dir.iterdir()):
            args.dir.rmdir()
    if r.returncode != 0:
        sys.exit(f"storlab bench db failed: {r.stderr.strip()[-500:]}")
    rec = json.loads(r.stdout)
    out = summarize(waits, seconds, args.vus)
    sizes = collections.Counter(len(states) for _, states in waits)
    print(f"samples by users seen: {dict(sorted(sizes.items()))}", file=sys.stderr)
    where = f"emulated {args.emulate} {args.emulate_options}".rstrip() + f", backing disk {disk}" if args.emulate else f"disk {disk}"
    lines = [f"TPC-C, {args.warehouses} warehouses, {where}: users in each state (shares of the users' time × VUs)", ""]
    lines += table(out, os.cpu_count() or 1)
    lines += ["", "| VUs | NOPM | TPM |", "|---|---|---|"]
    lines += [f"| {x['vus']} | {x['nopm']:,.0f} | {x['tpm']:,.0f} |" for x in rec["results"]]
    model = None
    if args.model:
        model = model_users(args.model, args.catalog, args.warehouses, args.vus)
        lines += ["", f"The model ({args.model.name}) beside it: users in each state", ""]
        lines += model_table(out, model, rec)
    print("\n".join(lines))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"command": cmd, "disk": disk, "by_vus": out, "table": lines,
                                        "record": rec, "model": model}, indent=1) + "\n")


if __name__ == "__main__":
    main()
