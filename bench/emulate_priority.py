"""What the emulator's scheduling priority does to a real database on it:
TPC-C on managed PostgreSQL (`storlab bench db`) on this machine's disk, on
`storlab emulate` at an even share of the vCPUs (`--nice 0`, the default)
and at the highest priority (`--nice -20`), alternately, round after
round. By default the emulator passes every I/O straight through
(`--no-caps`: no caps, no latency), so what differs from the disk is the
emulator's own cost; `--caps` keeps the emulated config's caps and latency.

Prints, per VU count, the NOPM medians over all runs [min–max], and each
emulated side over the disk (pass-through) or over the other side (caps).

    python bench/emulate_priority.py [--rounds 2] [--warehouses 2] [--vus 1,4]
        [--repeat 2] [--rampup 10] [--duration 30] [--caps] [--dir DIR] [--out FILE]
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

# The accuracy rounds' emulated volumes (bench/db_accuracy.py), of which io1.
CONFIG = "io1"
SCENARIO = EMU_SCENARIO.format(profile=PROFILE, scale=2, vus="[1, 4]", rampup=10, duration=30)

SIDES = {"disk": None, "nice 0": "0", "nice -20": "-20"}


def run(side: str, base: Path, scenario: Path, a: argparse.Namespace) -> list[dict]:
    d = base / side.replace(" ", "")
    shutil.rmtree(d, ignore_errors=True)
    cmd = [*STORLAB, "bench", "db", "--workload", "tpcc", "--db", "managed-postgres", "--dir", str(d),
           "--warehouses", str(a.warehouses), "--vus", a.vus, "--repeat", str(a.repeat),
           "--rampup", str(a.rampup), "--duration", str(a.duration), "--json"]
    env = dict(os.environ)
    if SIDES[side] is not None:
        cmd += ["--emulate", f"{scenario}:{CONFIG}"]
        env["STORLAB_EMULATE_OPTIONS"] = ("" if a.caps else "--no-caps ") + f"--ram {EMU_RAM_GIB[CONFIG]} --nice {SIDES[side]}"
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    shutil.rmtree(d, ignore_errors=True)
    if r.returncode != 0:
        raise RuntimeError(f"{side}: bench db failed: {r.stderr[-1500:]}")
    return [{"vus": x["vus"], "nopm": x["nopm"], "started_unix_s": x["started_unix_s"]} for x in json.loads(r.stdout)["runs"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--warehouses", type=int, default=2)
    ap.add_argument("--vus", default="1,4")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--rampup", type=float, default=10)
    ap.add_argument("--duration", type=float, default=30)
    ap.add_argument("--caps", action="store_true", help="keep io1's caps and latency (default: pass-through)")
    ap.add_argument("--dir", type=Path, default=None, help="folder on the disk to use (default: a temp folder)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    base = db_scratch("emu-priority-", a.dir)
    scenario = base / "emulated.toml"
    scenario.write_text(SCENARIO)
    sides = [s for s in SIDES if a.caps is False or SIDES[s] is not None]
    try:
        doc: dict = {"bench": "emulate_priority", "caps": a.caps, "rounds": a.rounds, "warehouses": a.warehouses,
                     "repeat": a.repeat, "rampup_s": a.rampup, "duration_s": a.duration, "host": host()}
        raw = alternate(sides, a.rounds, lambda side: run(side, base, scenario, a),
                        lambda x: f"{x['vus']} VUs {x['nopm']:,.0f}")
        summary = {}
        ref = "disk" if not a.caps else "nice 0"
        for v, at in by_vus(raw).items():
            med, rng = per_side(at, "nopm")
            summary[v] = {"median_nopm": med, "spread_nopm": rng,
                          "over_" + ref.replace(" ", ""): {s: med[s] / med[ref] for s in sides if s != ref}}
            print(f"{v} VUs: " + "; ".join(f"{s} {med[s]:,.0f} {rng[s]}" for s in sides)
                  + " | " + ", ".join(f"{s}/{ref} {med[s] / med[ref]:.3f}" for s in sides if s != ref))
        doc.update({"summary": summary, "raw": raw})
        write_result(doc, a.out, "emulate_priority.json")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
