#!/usr/bin/env python3
"""Where a commit's WAL sync and a backend's time go on this machine: the
kernel's scheduler events traced under a real TPC-C run.

`storlab bench db` runs TPC-C on a managed PostgreSQL; once its users are
in their measured window, `perf record` takes the scheduler's switch and
wake-up events, `fdatasync` entries and exits, and the block layer's
requests for `--seconds`. From those:

- each `fdatasync`'s time split into on a vCPU, asleep for the device, and
  runnable but waiting for a vCPU (woken, not yet running);
- the share of time one vCPU sat idle while a task was runnable and
  waiting on the other — what a first-come-first-served multi-server queue
  (the database model's vCPUs) never does;
- each PostgreSQL backend's time by state: running, runnable, asleep by
  what woke it (another backend: a lock hand-over such as the WAL write
  lock; the client; an interrupt);
- the wake-up latency by where the woken task was put (an idle vCPU or a
  busy one).

Needs perf (Debian's linux-perf) and root. perf itself costs some CPU;
the run's NOPM is printed beside the trace's numbers.

    python bench/sched_trace.py [--warehouses 4] [--vus 4] [--seconds 4] [--json OUT]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ["sched:sched_switch", "sched:sched_wakeup", "syscalls:sys_enter_fdatasync",
          "syscalls:sys_exit_fdatasync", "block:block_rq_issue", "block:block_rq_complete"]
LINE = re.compile(r"^\s*(\S.*?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)$")
SWITCH = re.compile(r"prev_comm=(.*) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(.*) next_pid=(\d+)")
WAKE = re.compile(r"comm=(.*) pid=(\d+) .*target_cpu=(\d+)")


def storlab_bin() -> str:
    venv = ROOT / ".venv" / "bin" / "storlab"
    return str(venv) if venv.exists() else (shutil.which("storlab") or "storlab")


def client_running() -> bool:
    """The TPC-C driver's event-loop threads (storlab-db-N) exist."""
    for task in Path("/proc").glob("[0-9]*/task/[0-9]*/comm"):
        try:
            if task.read_text().startswith("storlab-db-"):
                return True
        except OSError:
            continue
    return False


def parse(text: str, ncpu: int) -> dict:
    cur: dict[int, int | None] = {c: None for c in range(ncpu)}
    insync: set[int] = set()
    sync: dict[int, dict] = {}
    syncs: list[dict] = []
    state: dict[int, tuple[str, float]] = {}
    acc: dict[int, collections.Counter] = collections.defaultdict(collections.Counter)
    comm: dict[int, str] = {}
    runnable: set[int] = set()
    idle_waiting = collections.Counter()
    pend: dict[int, tuple[float, str]] = {}
    wake_lat: dict[str, list[float]] = collections.defaultdict(list)
    last = None
    t0 = t1 = None
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        who, tid, cpu, t, ev, arg = m.group(1).strip(), int(m.group(3)), int(m.group(4)), float(m.group(5)), m.group(6), m.group(7)
        t0 = t if t0 is None else t0
        t1 = t
        if last is not None and None not in cur.values():
            idle = sum(1 for v in cur.values() if v == 0)
            idle_waiting[(min(idle, 1), bool(runnable))] += t - last
        last = t
        if ev == "syscalls:sys_enter_fdatasync":
            insync.add(tid)
            sync[tid] = {"t0": t, "io": 0.0, "rq": 0.0}
        elif ev == "syscalls:sys_exit_fdatasync":
            insync.discard(tid)
            s = sync.pop(tid, None)
            if s:
                s["dur"] = t - s["t0"]
                syncs.append(s)
        elif ev == "sched:sched_switch":
            sm = SWITCH.search(arg)
            if not sm:
                continue
            pc, pp, ps, nc, np_ = sm.group(1), int(sm.group(2)), sm.group(3), sm.group(4), int(sm.group(5))
            comm[pp], comm[np_] = pc, nc
            if pp in state:
                acc[pp]["running"] += t - state[pp][1]
            if pp and ps.startswith("R"):
                runnable.add(pp)
                state[pp] = ("runnable (preempted)", t)
            else:
                state[pp] = ("asleep in fdatasync" if pp in insync else "asleep", t)
            if np_ in state:
                s, since = state[np_]
                acc[np_][s] += t - since
                if np_ in sync and s.startswith(("runnable", "woken")):
                    sync[np_]["rq"] += t - since
            state[np_] = ("running", t)
            runnable.discard(np_)
            cur[cpu] = np_
            if np_ in pend:
                tw, k = pend.pop(np_)
                wake_lat[k].append((t - tw) * 1e6)
        elif ev == "sched:sched_wakeup":
            wm = WAKE.search(arg)
            if not wm:
                continue
            wc, p, tc = wm.group(1), int(wm.group(2)), int(wm.group(3))
            if p in cur.values():
                continue
            runnable.add(p)
            pend[p] = (t, "to an idle vCPU" if cur.get(tc) == 0 else "to a busy vCPU")
            if p in state and state[p][0].startswith("asleep"):
                s, since = state[p]
                waker = ("another backend" if who == "postgres" else
                         "the client" if who.startswith("storlab-db") else
                         "an interrupt on an idle vCPU" if who.startswith("swapper") else "a kernel thread")
                kind = s if s == "asleep in fdatasync" else f"asleep, woken by {waker}"
                acc[p][kind] += t - since
                if p in sync:
                    sync[p]["io"] += t - since
                state[p] = ("woken, waiting for a vCPU", t)
    span = (t1 - t0) if t0 is not None and t1 else 0.0
    total_iw = sum(idle_waiting.values()) or 1.0
    backends = {p: c for p, c in acc.items() if comm.get(p) == "postgres" and c["running"] > 0.05 * span}
    states = collections.Counter()
    for c in backends.values():
        states.update(c)
    nb = max(len(backends), 1)
    mean = lambda xs: statistics.mean(xs) if xs else 0.0  # noqa: E731
    return {
        "seconds": round(span, 3),
        "fdatasync": {
            "count": len(syncs),
            "mean_us": round(mean([s["dur"] for s in syncs]) * 1e6, 1),
            "asleep_for_the_device_us": round(mean([s["io"] for s in syncs]) * 1e6, 1),
            "waiting_for_a_vcpu_us": round(mean([s["rq"] for s in syncs]) * 1e6, 1),
            "on_a_vcpu_us": round(mean([s["dur"] - s["io"] - s["rq"] for s in syncs]) * 1e6, 1),
        },
        "one_vcpu_idle_while_a_task_waits": round(idle_waiting[(1, True)] / total_iw, 3),
        "all_vcpus_busy": round((idle_waiting[(0, True)] + idle_waiting[(0, False)]) / total_iw, 3),
        "backends": len(backends),
        "backend_time_share": {k: round(v / (span * nb), 3) for k, v in states.most_common() if v / (span * nb) >= 0.005},
        "wake_up_latency_us": {k: {"n": len(v), "mean": round(mean(v), 1), "p50": round(sorted(v)[len(v) // 2], 1),
                                   "p90": round(sorted(v)[int(len(v) * 0.9)], 1)} for k, v in wake_lat.items() if v},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouses", type=int, default=4)
    ap.add_argument("--vus", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=4.0, help="traced seconds inside the measured window")
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp/storlab-sched-trace"))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if not shutil.which("perf"):
        sys.exit("sched_trace: perf is not installed (Debian: apt-get install linux-perf)")
    rampup, duration = 3, int(args.seconds) + 12
    work = Path(tempfile.mkdtemp(prefix="storlab-sched-"))
    cmd = [storlab_bin(), "bench", "db", "--workload", "tpcc", "--db", "managed-postgres", "--dir", str(args.dir),
           "--warehouses", str(args.warehouses), "--vus", str(args.vus), "--rampup", str(rampup),
           "--duration", str(duration), "--json"]
    bench = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        while bench.poll() is None and not client_running():
            time.sleep(0.2)
        time.sleep(rampup + 3)
        data = work / "perf.data"
        subprocess.run(["perf", "record", "-q", "-o", str(data), "-a", *sum((["-e", e] for e in EVENTS), []),
                        "--", "sleep", str(args.seconds)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        text = subprocess.run(["perf", "script", "-i", str(data), "-F", "comm,pid,tid,cpu,time,event,trace"],
                              check=True, capture_output=True, text=True).stdout
        out, _ = bench.communicate()
    finally:
        if bench.poll() is None:
            bench.terminate()
            bench.wait()
        shutil.rmtree(work, ignore_errors=True)
    res = parse(text, os.cpu_count() or 1)
    try:
        r = json.loads(out)["results"][0]
        res["run"] = {"warehouses": args.warehouses, "vus": args.vus, "nopm": r["nopm"],
                      "wal_sync_us_postgresql": round((r.get("io_profile") or {}).get("wal_sync_us") or 0.0, 1)}
    except (ValueError, KeyError, IndexError):
        res["run"] = {"warehouses": args.warehouses, "vus": args.vus}
    res["command"] = "python bench/sched_trace.py " + " ".join(sys.argv[1:])
    print(json.dumps(res, indent=1))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
