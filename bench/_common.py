"""Helpers shared by the benchmarks: the one results writer (each run
replaces its own entry of bench/results.json and appends a row to
bench/RESULTS.md),
and for the emulator benchmarks: run fio, mount and unmount an emulated
volume or a bindfs peer."""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results.json"
TABLE = BENCH / "RESULTS.md"

STORLAB = [sys.executable, "-m", "storlab.cli"]


def fio(filename: Path, rw: str, bs: str, iodepth: int, runtime: float, size: str = "256m", extra: list[str] | None = None) -> dict:
    """One fio job (O_DIRECT; libaio above QD1, psync at QD1): its read or
    write figures (IOPS, mean, p50, p99 in µs)."""
    engine = "psync" if iodepth == 1 else "libaio"
    cmd = ["fio", "--name=job", f"--filename={filename}", f"--size={size}", f"--rw={rw}", f"--bs={bs}",
           f"--iodepth={iodepth}", f"--ioengine={engine}", "--direct=1", f"--runtime={runtime}", "--time_based",
           "--output-format=json", *(extra or [])]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"fio failed: {r.stderr.strip() or r.stdout[-500:]}")
    j = json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]
    side = j["read"] if "read" in rw or rw in ("randread",) else j["write"]
    c = side["clat_ns"]
    pct = c.get("percentile", {})
    return {"iops": side["iops"], "bw_bytes_s": side["bw_bytes"], "lat_mean_us": c["mean"] / 1e3,
            "lat_p50_us": pct.get("50.000000", 0) / 1e3, "lat_p99_us": pct.get("99.000000", 0) / 1e3}


def prepare(filename: Path, size: str = "256m") -> None:
    """Lays out the test file once (fio would otherwise do it in the first run)."""
    subprocess.run(["fio", "--name=lay", f"--filename={filename}", f"--size={size}", "--rw=write", "--bs=1m",
                    "--direct=1", "--ioengine=psync", "--output-format=json"], capture_output=True, check=True)


class Emulated:
    """`storlab emulate` in its own process."""

    def __init__(self, base: Path, scenario: Path, config: str, *extra: str, tag: str = "emu"):
        self.backing, self.mount, self.ready = base / f"{tag}-backing", base / f"{tag}-mnt", base / f"{tag}-ready"
        self.mount.mkdir(parents=True, exist_ok=True)
        self.ready.unlink(missing_ok=True)
        self.log = open(base / f"{tag}.log", "a")
        self.p = subprocess.Popen([*STORLAB, "emulate", str(scenario), "--config", config, "--backing", str(self.backing),
                                   "--mount", str(self.mount), "--ready-file", str(self.ready), *extra],
                                  stdout=self.log, stderr=self.log)
        t = time.time()
        while not self.ready.exists():
            if self.p.poll() is not None or time.time() - t > 60:
                raise RuntimeError(f"emulator did not mount (see {base / (tag + '.log')})")
            time.sleep(0.05)

    def stop(self) -> None:
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(timeout=120)
        self.log.close()


class Bindfs:
    """Debian's bindfs (multithreaded, as the emulator is) of `backing` on `mount`."""

    def __init__(self, backing: Path, mount: Path):
        self.mount = mount
        backing.mkdir(parents=True, exist_ok=True)
        mount.mkdir(parents=True, exist_ok=True)
        subprocess.run(["bindfs", "--multithreaded", str(backing), str(mount)], check=True)

    def stop(self) -> None:
        for _ in range(50):
            if subprocess.run(["fusermount3", "-u", str(self.mount)], capture_output=True).returncode == 0:
                return
            time.sleep(0.1)
        subprocess.run(["fusermount3", "-u", "-z", str(self.mount)])


def median(xs):
    return statistics.median(xs)


def spread(xs):
    return [min(xs), max(xs)]


def host() -> dict:
    return {"load_avg": os.getloadavg(), "cpus": os.cpu_count()}


def commit() -> str:
    r = subprocess.run(["git", "-C", str(BENCH), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def raw_results(name: str) -> dict | None:
    """A benchmark's latest raw results: its entry of bench/results.json."""
    if not RESULTS.exists():
        return None
    return json.loads(RESULTS.read_text()).get(name)


def record(name: str, what: str, ratio: float, lo: float, hi: float, raw: dict) -> Path:
    """The end of every benchmark: its raw results replace its entry NAME of
    bench/results.json (the machine's load after the runs stamped on them;
    the other benchmarks' entries are kept) and one row goes onto
    bench/RESULTS.md — date, commit, what, the median ratio and the spread
    of the per-round ratios."""
    raw = {**raw, "host_after": host()}
    every = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    every[name] = raw
    tmp = RESULTS.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(dict(sorted(every.items())), indent=1) + "\n")
    tmp.replace(RESULTS)
    row = (f"| {datetime.now(timezone.utc):%Y-%m-%d} | {commit()} | {what} | {ratio:.3f} | "
           f"{lo:.3f}–{hi:.3f} |\n")
    with TABLE.open("a") as f:
        f.write(row)
    print(f"raw results: bench/results.json, entry {name}; row added to bench/RESULTS.md:\n{row}", end="", file=sys.stderr)
    return RESULTS
