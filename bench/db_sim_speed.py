"""Speed of the database model: a 7-point VU sweep of 10 simulated minutes
each on a 3-pool deployment (issue 13: under 5 s on one core), beside a
SimPy model of the same closed loop.

Runs, alternately and in fresh processes pinned to one core (taskset -c 0):
- storlab: `storlab simulate --json` on a scenario with `[workload.database]`
  (the shipped tpcc-postgresql profile, 500 warehouses, VUs 1..64 in 7
  points, 600 s each after a 10 s ramp-up) on an r5.large with three pools:
  data on gp3 (3,000 IOPS), log on io2 (8,000 IOPS), tempdb on gp3;
- SimPy: the same closed loop written the obvious SimPy way — N users; each
  transaction of a type drawn by the profile's shares takes CPU on a
  2-server station (cpu_us × the USL factor at N), reads page_accesses ×
  miss ratio pages one at a time on the data pool (the miss ratio from the
  profile's curve at 0.75 × the host's memory over the data size), commits
  through a log writer that flushes every waiting commit in one write on the
  log pool (group commit), and counts toward the data write-back: a flusher
  that wakes every 5 s and queues at once on the data pool its slice's
  share of the checkpoints' writes (the profile's write-back curve at the
  checkpoint interval's transactions, as storlab's model takes it). Each pool is one pacer at its provisioned IOPS
  plus the catalog's log-normal service time (median and p99); the host's
  EBS caps, the throughput caps and the 256 KiB I/O accounting that storlab
  also models are left out of the peer (they do not bind here).
Prints per round the CPU seconds (user + system of the whole process,
Python start-up included) and the wall time of each, the ratio of the
medians with its spread over the rounds, and both models' NOPM per VU count
(a check that the two run the same model, not a target).

    python bench/db_sim_speed.py [--rounds 3]   # raw results: the entry db_sim_speed of bench/results.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import tomllib
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import record  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
VUS = [1, 2, 4, 8, 16, 32, 64]
SCALE = 500
RAMPUP_S = 10
DURATION_S = 600
HOST = "aws/ec2/r5.large"  # 2 vCPUs, 16 GiB (python/storlab/catalog/aws-ec2.toml)
POOLS = [  # role, device, size GiB, provisioned IOPS
    ("data", "aws/ebs/gp3", 1000, 3000),
    ("log", "aws/ebs/io2", 200, 8000),
    ("tempdb", "aws/ebs/gp3", 200, 3000),
]

SCENARIO = """title = "TPC-C on r5.large: data gp3, log io2, tempdb gp3 (db_sim_speed)"
region = "aws/us-east-1"

[workload.database]
profile = "tpcc-postgresql"
scale = {scale}
vus = {vus}
rampup_s = {rampup}
duration_s = {duration}

[configs.three-pools]
host = "{host}"
{pools}
"""


def scenario_text() -> str:
    pools = "\n".join(f'[[configs.three-pools.pools]]\nrole = "{r}"\ndevice = "{d}"\nsize_gib = {s}\niops = {i}\n'
                      for r, d, s, i in POOLS)
    return SCENARIO.format(scale=SCALE, vus=json.dumps(VUS), rampup=RAMPUP_S, duration=DURATION_S, host=HOST, pools=pools)


def _latency(device: str) -> dict[str, float]:
    """The catalog's median and p99 (µs) for a device, as the simulator reads them."""
    doc = tomllib.loads((ROOT / "python/storlab/catalog/latency.toml").read_text())
    for e in doc["latency"]:
        if device in e["devices"]:
            val = {k: (v["value"] if isinstance(v, dict) else v) for k, v in e.items() if k.endswith("_us")}
            return val
    raise SystemExit(f"latency.toml: no entry for {device}")


def _host_memory_gib(host: str) -> float:
    doc = tomllib.loads((ROOT / "python/storlab/catalog/aws-ec2.toml").read_text())
    for h in doc["host"]:
        if h["id"] == host:
            m = h["memory_gib"]
            return float(m["value"] if isinstance(m, dict) else m)
    raise SystemExit(f"aws-ec2.toml: no host {host}")


def peer_params() -> dict:
    pools = {}
    for role, device, _size, iops in POOLS:
        lat = _latency(device)
        pools[role] = {"iops": iops, **lat}
    return {"profile": str(ROOT / "python/storlab/profiles/tpcc-postgresql.toml"), "scale": SCALE, "vus": VUS,
            "rampup_s": RAMPUP_S, "duration_s": DURATION_S, "vcpus": 2,
            "memory_bytes": _host_memory_gib(HOST) * (1 << 30), "pools": pools}


# The SimPy peer. It reads its parameters (a JSON file) and prints one JSON
# line: NOPM and TPM per VU count.
SIMPY_CHILD = textwrap.dedent('''
    import json, math, random, sys, tomllib
    import simpy

    P = json.load(open(sys.argv[1]))
    prof = tomllib.load(open(P["profile"], "rb"))
    txns = prof["transaction"]
    cum, s = [], 0.0
    for t in txns:
        s += t["share"]
        cum.append(s)
    Z99 = 2.326347874
    PAGE = 8192.0
    FLUSHER_PERIOD_S = 5.0
    DB_MEMORY_SHARE = 0.75

    def miss_ratio(frac):
        xs, ys = prof["mrc"]["cache_fraction"], prof["mrc"]["miss_ratio"]
        if frac >= 1.0:
            return 0.0
        if frac <= xs[0]:
            return ys[0]
        for i in range(1, len(xs)):
            if frac <= xs[i]:
                w = (frac - xs[i - 1]) / (xs[i] - xs[i - 1])
                return ys[i - 1] + w * (ys[i] - ys[i - 1])
        return ys[-1]

    class Pool:
        def __init__(self, p, rnd):
            self.gap = 1.0 / p["iops"]
            self.next_free = 0.0
            self.rnd = rnd
            self.r = (math.log(p["read_median_us"] * 1e-6), math.log(p["read_p99_us"] / p["read_median_us"]) / Z99)
            self.w = (math.log(p["write_median_us"] * 1e-6), math.log(p["write_p99_us"] / p["write_median_us"]) / Z99)

        def io(self, now, write):
            """Delay from now until this I/O completes: the IOPS pacer, then a service time."""
            admit = max(now, self.next_free)
            self.next_free = admit + self.gap
            mu, sigma = self.w if write else self.r
            return admit - now + self.rnd.lognormvariate(mu, sigma)

    WB = prof.get("writeback")

    def curve_at(ys, x):
        xs, x0, y0 = WB["txns_per_unit"], 0.0, 0.0
        for i, (x1, y1) in enumerate(zip(xs, ys)):
            if x <= x1 or i + 1 == len(xs):
                slope = (y1 - y0) / (x1 - x0) if x1 > x0 else 0.0
                return max(y0 + slope * (x - x0), 0.0)
            x0, y0 = x1, y1
        return 0.0

    def dirty_after(n, units):
        if WB:
            pages = units * curve_at(WB["pages_per_unit"], n / units)
            return pages, min(units * curve_at(WB["runs_per_unit"], n / units), pages)
        pages = n * sum(t["share"] * t["pages_dirtied"] for t in txns)
        return pages, pages

    def checkpoint_share(rate, dt, units, reads, cache_pages, short):
        # The checkpoint interval: the timeout, or the WAL trigger if sooner.
        wal = rate * sum(t["share"] * t["wal_bytes"] for t in txns)
        timeout = WB.get("checkpoint_timeout_s", 300.0) if WB else 300.0
        trigger = (WB.get("max_wal_bytes", 1073741824.0) / (1 + WB.get("completion_target", 0.9))) if WB else 1073741824.0 / 1.9
        interval = max(min(timeout, trigger / wal) if wal > 0 else timeout, dt)
        n = rate * interval
        pages, runs = dirty_after(n, units)
        per_io = max(WB.get("flush_after_bytes", 262144.0), PAGE) / PAGE if WB else 32.0
        ckpt = min(max(runs, pages / per_io), pages) * dt / interval
        # A short cache: each read evicts a page, dirty with the chance a
        # cached page is over the checkpoint's cycle.
        evict = 0.0
        if short and reads > 0:
            mean_dirty = sum(dirty_after(n * (i + 0.5) / 8, units)[0] for i in range(8)) / 8
            evict = reads * min(mean_dirty / cache_pages, 1.0)
        return ckpt + evict

    def draw_count(mean, rnd):
        f = math.floor(mean)
        return int(f) + (1 if rnd.random() < mean - f else 0)

    def run(n):
        env = simpy.Environment()
        rnd = random.Random(1000 + n)
        data, log = Pool(P["pools"]["data"], rnd), Pool(P["pools"]["log"], rnd)
        cpu = simpy.Resource(env, capacity=P["vcpus"])
        a, b = prof["concurrency"]["alpha"], prof["concurrency"]["beta"]
        usl = 1.0 + a * (n - 1) + b * n * (n - 1)
        d = prof["data"]
        data_bytes = d["bytes_per_scale_unit"] * P["scale"] + d.get("fixed_bytes", 0.0)
        miss = miss_ratio(P["memory_bytes"] * DB_MEMORY_SHARE / data_bytes)
        w0, w1 = P["rampup_s"], P["rampup_s"] + P["duration_s"]
        st = {"done": 0, "backlog": 0.0, "waiting": [], "flushes": 0, "slice": 0, "reads": 0}
        cache = P["memory_bytes"] * DB_MEMORY_SHARE
        units = float(min(n, int(P["scale"])))
        log_kick = [env.event()]

        def log_writer():
            while True:
                if not st["waiting"]:
                    yield log_kick[0]
                    log_kick[0] = env.event()
                    continue
                batch, st["waiting"] = st["waiting"], []
                left = max(sum(wb for _, wb in batch), 512.0)
                delay = 0.0
                while left > 0:
                    delay = max(delay, log.io(env.now, True))
                    left -= 1048576.0
                yield env.timeout(delay)
                st["flushes"] += 1
                for ev, _ in batch:
                    ev.succeed()

        def flusher():
            while True:
                yield env.timeout(FLUSHER_PERIOD_S)
                st["backlog"] += checkpoint_share(st["slice"] / FLUSHER_PERIOD_S, FLUSHER_PERIOD_S, units,
                                                  st["reads"], cache / PAGE, cache < data_bytes)
                st["slice"], st["reads"] = 0, 0
                while st["backlog"] >= 1.0:
                    st["backlog"] -= 1.0
                    data.io(env.now, True)  # queued at once; nobody waits

        def user():
            while True:
                x = rnd.random()
                k = next((i for i, c in enumerate(cum) if x < c), len(cum) - 1)
                t = txns[k]
                started = env.now
                with cpu.request() as req:
                    yield req
                    yield env.timeout(t["cpu_us"] * 1e-6 * usl)
                for _ in range(draw_count(t["page_accesses"] * miss, rnd)):
                    st["reads"] += 1
                    yield env.timeout(data.io(env.now, False))
                if draw_count(t["commits"], rnd):
                    ev = env.event()
                    st["waiting"].append((ev, t["wal_bytes"]))
                    if not log_kick[0].triggered:
                        log_kick[0].succeed()
                    yield ev
                if w0 <= env.now <= w1:
                    st["done"] += 1
                st["slice"] += 1

        env.process(log_writer())
        env.process(flusher())
        for _ in range(n):
            env.process(user())
        env.run(until=w1)
        tpm = st["done"] * 60.0 / P["duration_s"]
        return {"vus": n, "tpm": tpm, "nopm": tpm * prof["nopm_per_txn"], "miss_ratio": miss}

    print(json.dumps({"results": [run(n) for n in P["vus"]]}))
''')


def timed(cmd: list[str]) -> tuple[dict, float]:
    """Runs cmd pinned to core 0: its stdout as JSON and the wall seconds."""
    w0 = time.perf_counter()
    p = subprocess.Popen(["taskset", "-c", "0", *cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate()
    wall = time.perf_counter() - w0
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {err.strip()[-2000:]}")
    return json.loads(out), wall


def children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def storlab_nopm(rec: dict) -> dict[int, float]:
    return {int(r["vus"]): float(r["nopm"]) for r in rec["results"]}


def spread(xs: list[float]) -> str:
    return f"{min(xs):.2f}–{max(xs):.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    storlab = shutil.which("storlab", path=str(Path(sys.executable).parent)) or "storlab"
    try:
        import simpy  # noqa: F401
    except ImportError:
        raise SystemExit("SimPy is missing: pip install simpy (make bench installs it)")
    if not shutil.which("taskset"):
        raise SystemExit("taskset (util-linux) is missing: it pins both sides to one core")
    tmp = Path(tempfile.mkdtemp(prefix="db-sim-speed-"))
    try:
        scen = tmp / "three-pools.toml"
        scen.write_text(scenario_text())
        params = tmp / "peer.json"
        params.write_text(json.dumps(peer_params()))
        child = tmp / "simpy_child.py"
        child.write_text(SIMPY_CHILD)
        rounds = []
        for k in range(args.rounds):
            row: dict = {"round": k + 1, "load": os.getloadavg()[0]}
            order = [("storlab", [storlab, "simulate", str(scen), "--json"]),
                     ("simpy", [sys.executable, str(child), str(params)])]
            if k % 2:
                order.reverse()
            for name, cmd in order:
                c0 = children_cpu()
                out, wall = timed(cmd)  # its CPU: the RUSAGE_CHILDREN delta (taskset execs it)
                row[name] = {"cpu_s": children_cpu() - c0, "wall_s": wall,
                             "nopm": storlab_nopm(out) if name == "storlab" else {r["vus"]: r["nopm"] for r in out["results"]}}
            print(f"round {k + 1}: storlab {row['storlab']['cpu_s']:.2f} s CPU ({row['storlab']['wall_s']:.2f} s wall), "
                  f"SimPy {row['simpy']['cpu_s']:.1f} s CPU ({row['simpy']['wall_s']:.1f} s wall), load {row['load']:.1f}",
                  flush=True)
            rounds.append(row)
        st = [r["storlab"]["cpu_s"] for r in rounds]
        sp = [r["simpy"]["cpu_s"] for r in rounds]
        ratios = [b / a for a, b in zip(st, sp)]
        med_st, med_sp = statistics.median(st), statistics.median(sp)
        print()
        print(f"7-point VU sweep {VUS}, {DURATION_S} s each (+{RAMPUP_S} s ramp-up), {SCALE} warehouses, "
              f"{HOST}, pools {', '.join(f'{r}={d}' for r, d, _, _ in POOLS)}; one core (taskset -c 0)")
        print(f"storlab simulate: median {med_st:.2f} s CPU [{spread(st)}], wall median "
              f"{statistics.median(r['storlab']['wall_s'] for r in rounds):.2f} s — target under 5 s: "
              f"{'met' if med_st < 5 else 'NOT met'}")
        print(f"SimPy peer:       median {med_sp:.1f} s CPU [{spread(sp)}]")
        print(f"SimPy / storlab:  {med_sp / med_st:.1f}x (ratio of medians; per-round ratios {spread(ratios)})")
        print()
        print(f"{'VUs':>5} {'storlab NOPM':>13} {'SimPy NOPM':>11} {'SimPy/storlab':>14}")
        last = rounds[-1]
        for v in VUS:
            a, b = last["storlab"]["nopm"].get(v), last["simpy"]["nopm"].get(v)
            rel = f"{b / a:.3f}" if a and b else "-"
            print(f"{v:>5} {a if a is not None else float('nan'):>13,.0f} {b if b is not None else float('nan'):>11,.0f} {rel:>14}")
        record("db_sim_speed", "SimPy / simulate CPU time, 7-point TPC-C sweep on 3 pools (one core)",
               med_sp / med_st, min(ratios), max(ratios), {
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "scenario": scenario_text(), "peer_params": peer_params(), "rounds": rounds,
            "storlab_cpu_s_median": med_st, "simpy_cpu_s_median": med_sp, "ratio_of_medians": med_sp / med_st,
            "ratio_spread": [min(ratios), max(ratios)], "under_5_s": med_st < 5,
        })
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
