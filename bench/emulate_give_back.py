"""What one emulator option does to a real database on the emulator: TPC-C
on managed PostgreSQL (`storlab bench db`) on the accuracy rounds' emulated
io1 (bench/db_accuracy.py), with `--ram 16 --floor-us auto`, the data in
shared_buffers, alternately, round after round, each side starting every
other round:

- `--what give-back` (the default): as `storlab emulate` runs by default
  (an fsync after buffered writes is answered the round trips earlier, the
  volume idle) and with `--no-give-back` (at the modelled time);
- `--what realtime`: with `--realtime 1` (the emulator's threads in the
  real-time class, taking a vCPU from the database at once) and as started
  (the normal class, an even share).

Prints, per VU count, the NOPM medians over all runs [min–max], PostgreSQL's
mean WAL write() and fdatasync times (pg_stat_wal), and the first side over
the second.

    python bench/emulate_give_back.py [--what give-back|realtime] [--rounds 3] [--warehouses 2]
        [--vus 1,4] [--rampup 20] [--duration 40] [--dir DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _emu import STORLAB, alternate, by_vus, db_scratch, host, per_side, write_result  # noqa: E402
from db_accuracy import EMU_RAM_GIB, EMU_SCENARIO, PROFILE  # noqa: E402

CONFIG = "io1"
WHAT = {"give-back": {"give back": "", "no give back": "--no-give-back"},
        "realtime": {"realtime": "--realtime 1", "normal": ""}}


def run(side: str, base: Path, scenario: Path, a: argparse.Namespace) -> list[dict]:
    option = WHAT[a.what][side]
    d = base / side.replace(" ", "-")
    shutil.rmtree(d, ignore_errors=True)
    cmd = [*STORLAB, "bench", "db", "--workload", "tpcc", "--db", "managed-postgres", "--dir", str(d),
           "--warehouses", str(a.warehouses), "--vus", a.vus, "--rampup", str(a.rampup), "--duration", str(a.duration),
           "--setting", "shared_buffers=320MB", "--emulate", f"{scenario}:{CONFIG}", "--json"]
    env = dict(os.environ, STORLAB_EMULATE_OPTIONS=f"--ram {EMU_RAM_GIB[CONFIG]} --floor-us auto {option}".strip())
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    shutil.rmtree(d, ignore_errors=True)
    if r.returncode != 0:
        raise RuntimeError(f"{side}: bench db failed: {r.stderr[-1500:]}")
    out = []
    for x in json.loads(r.stdout)["runs"]:
        t = x["io_profile"]["totals"]
        out.append({"vus": x["vus"], "nopm": x["nopm"], "started_unix_s": x["started_unix_s"],
                    "wal_write_us": 1e3 * t["wal_write_time"] / max(1.0, t["wal_write"]),
                    "wal_sync_us": 1e3 * t["wal_sync_time"] / max(1.0, t["wal_sync"])})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--what", choices=list(WHAT), default="give-back")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warehouses", type=int, default=2)
    ap.add_argument("--vus", default="1,4")
    ap.add_argument("--rampup", type=float, default=20)
    ap.add_argument("--duration", type=float, default=40)
    ap.add_argument("--dir", type=Path, default=None, help="folder on the disk to use (default: a temp folder)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    base = db_scratch("emu-give-back-", a.dir)
    scenario = base / "emulated.toml"
    scenario.write_text(EMU_SCENARIO.format(profile=PROFILE, scale=a.warehouses, vus="[1, 4]", rampup=a.rampup,
                                            duration=a.duration))
    sides = list(WHAT[a.what])
    first, second = sides
    try:
        doc: dict = {"bench": "emulate_give_back", "what": a.what, "config": CONFIG, "rounds": a.rounds, "warehouses": a.warehouses,
                     "rampup_s": a.rampup, "duration_s": a.duration, "host": host()}
        raw = alternate(sides, a.rounds, lambda side: run(side, base, scenario, a),
                        lambda x: f"{x['vus']} VUs {x['nopm']:,.0f} (write {x['wal_write_us']:.0f} µs, "
                                  f"sync {x['wal_sync_us']:.0f} µs)")
        summary = {}
        for v, at in by_vus(raw).items():
            med, rng = per_side(at, "nopm")
            write, sync = per_side(at, "wal_write_us")[0], per_side(at, "wal_sync_us")[0]
            summary[v] = {"median_nopm": med, "spread_nopm": rng, "median_wal_write_us": write,
                          "median_wal_sync_us": sync, "first_over_second": med[first] / med[second]}
            print(f"{v} VUs: " + "; ".join(f"{s} {med[s]:,.0f} {rng[s]}, write {write[s]:.0f} µs, sync {sync[s]:.0f} µs"
                                           for s in sides) + f" | {first} / {second} {summary[v]['first_over_second']:.3f}")
        doc.update({"summary": summary, "raw": raw})
        write_result(doc, a.out, f"emulate_{a.what.replace('-', '_')}.json")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
