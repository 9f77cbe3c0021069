"""Helpers shared by the emulator benchmarks: run fio, mount and unmount an
emulated volume or a bindfs peer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

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
    import statistics

    return statistics.median(xs)


def spread(xs):
    return [min(xs), max(xs)]


def out_path(arg: str | None, name: str) -> Path:
    from datetime import date

    p = Path(arg) if arg else Path(__file__).parent / "runs" / date.today().isoformat() / name
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


def write_result(doc: dict, arg: str | None, name: str) -> Path:
    """Stamps the machine's load after the runs on `doc` and writes it to
    --out (`arg`) or bench/runs/<today>/NAME."""
    doc["host_after"] = host()
    p = out_path(arg, name)
    p.write_text(json.dumps(doc, indent=1))
    print(f"written {p}", file=sys.stderr)
    return p


def host() -> dict:
    return {"load_avg": os.getloadavg(), "cpus": os.cpu_count()}


def db_scratch(prefix: str, parent: Path | None) -> Path:
    """A scratch folder for `bench db` runs (removed by the caller), open to
    PostgreSQL, which runs as its own user when storlab runs as root."""
    import tempfile

    base = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    base.chmod(0o755)
    return base


def alternate(sides: list[str], rounds: int, run_side, show) -> dict[str, list[dict]]:
    """Runs every side once a round, the order reversed every other round so
    neither side always runs first; each side's runs (dicts with `vus`) in
    one list. `run_side(side)` returns a round's runs, `show(run)` a run in
    words for the progress line."""
    raw: dict[str, list[dict]] = {s: [] for s in sides}
    width = max(len(s) for s in sides)
    for k in range(rounds):
        for side in (sides if k % 2 == 0 else sides[::-1]):
            got = run_side(side)
            raw[side] += got
            print(f"round {k + 1} {side:{width}s} " + ", ".join(show(x) for x in got), file=sys.stderr, flush=True)
    return raw


def by_vus(raw: dict[str, list[dict]]) -> dict[int, dict[str, list[dict]]]:
    """Each VU count's runs, side by side."""
    counts = sorted({x["vus"] for xs in raw.values() for x in xs})
    return {v: {s: [x for x in xs if x["vus"] == v] for s, xs in raw.items()} for v in counts}


def per_side(at: dict[str, list[dict]], key: str) -> tuple[dict[str, float], dict[str, list]]:
    """One VU count's runs (`by_vus`): each side's median of `key` and its
    [min, max]."""
    return ({s: median([x[key] for x in xs]) for s, xs in at.items()},
            {s: spread([x[key] for x in xs]) for s, xs in at.items()})
