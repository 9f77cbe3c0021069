#!/usr/bin/env python3
"""A durable write (8 KiB pwrite + fdatasync in a preallocated 16 MiB file,
as `bench disk --calibrate-out` and pg_test_fsync time it) alone and beside
three kinds of load, to tell which of them slows a commit's flush on this
machine:

- CPU hogs: k processes spinning without a pause;
- interactive CPU users: k processes alternating 400 µs of CPU with 400 µs
  of sleep (a database backend's rhythm: a burst, then a wait);
- concurrent writes: k processes writing 8 KiB at random into a 1 GiB file
  with O_DIRECT, one at a time each, as fast as they can; and one
  process writing through the page cache (the kernel writes back).

Each line: the durable write's median, mean, p90 and p99 over `--n` writes,
the machine's busy vCPUs (/proc/stat) and the disk's writes a second and
mean write time (/proc/diskstats). Rounds alternate the cases.

    python bench/sync_under_load.py [--dir /var/tmp/storlab-sync] [--rounds 2] [--n 3000]
"""

from __future__ import annotations

import argparse
import json
import mmap
import multiprocessing as mp
import os
import random
import shutil
import statistics
import time
from pathlib import Path


def spin(stop) -> None:
    while not stop.is_set():
        for _ in range(100_000):
            pass


def interactive(stop, burst_us: int = 400, sleep_us: int = 400) -> None:
    while not stop.is_set():
        end = time.perf_counter() + burst_us / 1e6
        while time.perf_counter() < end:
            pass
        time.sleep(sleep_us / 1e6)


def writer(stop, path: str, direct: bool) -> None:
    fd = os.open(path, os.O_RDWR | (os.O_DIRECT if direct else 0))
    buf = mmap.mmap(-1, 8192)
    buf.write(os.urandom(8192))
    rng = random.Random(os.getpid())
    while not stop.is_set():
        os.pwrite(fd, buf, rng.randrange(0, (1 << 30) // 8192) * 8192)
    os.close(fd)


def disk_of(path: Path) -> str:
    dev = os.stat(path).st_dev
    name = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}").resolve().name
    parent = Path(f"/sys/class/block/{name}/..").resolve().name
    return parent if Path(f"/sys/block/{parent}").exists() else name


def diskstats(disk: str) -> tuple[int, int]:
    for line in Path("/proc/diskstats").read_text().splitlines():
        f = line.split()
        if f[2] == disk:
            return int(f[7]), int(f[10])
    return 0, 0


def busy_s() -> float:
    f = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    return sum(int(f[i]) for i in (1, 2, 3, 6, 7)) / os.sysconf("SC_CLK_TCK")


def case(name: str, target, args: tuple, k: int, d: Path, disk: str, n: int) -> dict:
    stop = mp.Event()
    procs = [mp.Process(target=target, args=(stop, *args)) for _ in range(k)]
    for p in procs:
        p.start()
    try:
        time.sleep(1.0)
        fd = os.open(d / "durable", os.O_RDWR)
        buf = os.urandom(8192)
        lat = []
        d0, b0, t0 = diskstats(disk), busy_s(), time.monotonic()
        for i in range(n):
            t = time.perf_counter_ns()
            os.pwrite(fd, buf, (i % 2048) * 8192)
            os.fdatasync(fd)
            lat.append((time.perf_counter_ns() - t) / 1000)
        d1, b1, el = diskstats(disk), busy_s(), time.monotonic() - t0
        os.close(fd)
    finally:
        stop.set()
        for p in procs:
            p.join()
    lat.sort()
    w = d1[0] - d0[0]
    return {"case": name, "median_us": lat[n // 2], "mean_us": statistics.fmean(lat), "p90_us": lat[int(n * 0.9)],
            "p99_us": lat[int(n * 0.99)], "busy_vcpus": (b1 - b0) / el, "disk_writes_s": w / el,
            "disk_write_ms": (d1[1] - d0[1]) / w if w else 0.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp/storlab-sync"))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--json", type=Path, help="also write the rows here")
    a = ap.parse_args()
    a.dir.mkdir(parents=True, exist_ok=True)
    try:
        for name, size in (("durable", 16 << 20), ("random", 1 << 30)):
            fd = os.open(a.dir / name, os.O_RDWR | os.O_CREAT, 0o600)
            os.posix_fallocate(fd, 0, size)
            os.fsync(fd)
            os.close(fd)
        disk = disk_of(a.dir)
        rnd = str(a.dir / "random")
        cases = [("alone", spin, (), 0)]
        cases += [(f"{k} CPU hogs", spin, (), k) for k in (2, 4)]
        cases += [(f"{k} interactive CPU users", interactive, (), k) for k in (2, 4, 8, 16)]
        cases += [(f"{k} O_DIRECT random writers", writer, (rnd, True), k) for k in (1, 4)]
        cases += [("1 buffered random writer", writer, (rnd, False), 1)]
        rows = []
        for r in range(a.rounds):
            for name, target, args, k in cases:
                row = case(name, target, args, k, a.dir, disk, a.n)
                row["round"] = r + 1
                rows.append(row)
                print(f"round {r + 1} {name:28s} median {row['median_us']:5.0f} µs  mean {row['mean_us']:5.0f}  "
                      f"p90 {row['p90_us']:5.0f}  p99 {row['p99_us']:5.0f}  busy vCPUs {row['busy_vcpus']:.2f}  "
                      f"disk {row['disk_writes_s']:6.0f} writes/s, {row['disk_write_ms']:.3f} ms each", flush=True)
        print("\nmedian over rounds (mean µs of a durable write):")
        for name, *_ in cases:
            means = [x["mean_us"] for x in rows if x["case"] == name]
            print(f"  {name:28s} {statistics.median(means):6.0f}  [{min(means):.0f}–{max(means):.0f}]")
        if a.json:
            a.json.write_text(json.dumps({"disk": disk, "n": a.n, "rows": rows}, indent=1) + "\n")
    finally:
        shutil.rmtree(a.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
