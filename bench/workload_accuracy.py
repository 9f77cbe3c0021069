"""Accuracy of the database model for a workload file's profile: does the
shipped profile (`tpce-postgresql`, `tpcb-postgresql`, `sysbench-*-postgresql`) predict real
`storlab bench db` runs of its workload file at scales and VU counts it was
not recorded at?

1. this disk is calibrated once (as bench/db_accuracy.py does: `bench disk
   --calibrate-out` on the database's file system, an overlay with this disk
   and this machine as a host), reused from its --out folder if present;
2. `storlab bench db --workload FILE --db managed-postgres --scale S` runs
   the VU counts at each scale, in rounds that alternate the scales and the
   order of the VU counts;
3. `storlab simulate --json --catalog OVERLAY` predicts the same points from
   the shipped profile on one `all` pool of the calibrated device and the
   local host;
4. a table: point, measured median [min–max], predicted, error, within
   ±20 % (the issue's band for the model against storlab's own runs); the
   figure is the workload's headline where it has one (tpsE), else TPM.

    python bench/workload_accuracy.py --workload examples/db/tpce-like.toml --profile tpce-postgresql --scales 1,4
    python bench/workload_accuracy.py --workload examples/db/tpcb-like.toml --profile tpcb-postgresql --scales 4,32
    python bench/workload_accuracy.py --workload examples/db/sysbench-read-write.toml --profile sysbench-read-write-postgresql --scales 10,60 --rounds 2

On a disk whose host acknowledges writes from a cache, `bench disk
--calibrate-out` refuses CrystalDiskMark's preset (its sequential writes run
at the cache's speed): add `--calibrate-job bench/calibrate_random.fio`.

Each run adds a row to bench/RESULTS.md (the median of predicted / measured
over the points, and their spread).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import record  # noqa: E402
from db_accuracy import LOCAL_SCENARIO, ROOT, calibrate, loadavg, machine, run_json, storlab_bin  # noqa: E402


def figure(r: dict) -> float:
    """The point's figure: the headline (tpsE) where the workload has one, else TPM."""
    return float(r["headline"] if r.get("headline") is not None else r["tpm"])


def measure(args: argparse.Namespace, out: Path) -> dict[tuple[int, int], list[float]]:
    got: dict[tuple[int, int], list[float]] = {}
    for k in range(args.rounds):
        for s in (args.scales if k % 2 == 0 else args.scales[::-1]):
            vus = args.vus if k % 2 == 0 else args.vus[::-1]
            d = args.dir / f"s{s}"
            print(f"round {k + 1}, scale {s}: bench db at {vus} VUs (load avg {loadavg():.1f})", flush=True)
            cmd = [storlab_bin(), "bench", "db", "--workload", str(args.workload), "--db", "managed-postgres", "--dir", str(d),
                   "--scale", str(s), "--vus", ",".join(map(str, vus)), "--rampup", str(args.rampup),
                   "--duration", str(args.duration), "--seed", str(k + 1), "--json"]
            rec = run_json(cmd)
            (out / f"measured-s{s}-round{k + 1}.json").write_text(json.dumps(rec, indent=1) + "\n")
            for r in rec["results"]:
                got.setdefault((s, int(r["vus"])), []).append(figure(r))
    return got


def predict(args: argparse.Namespace, out: Path, overlay: Path, scale: int) -> dict[int, tuple[float, str]]:
    m = machine()
    scen = out / f"predict-s{scale}.toml"
    scen.write_text(LOCAL_SCENARIO.format(hostname=m["hostname"], profile=args.profile, scale=scale, vus=json.dumps(args.vus),
                                          rampup=args.rampup, duration=args.duration, settings="")
                    .replace("TPC-C on this machine", f"{args.workload.name} on this machine"))
    rec = run_json([storlab_bin(), "simulate", str(scen), "--json", "--catalog", str(overlay)])
    (out / f"predicted-s{scale}.json").write_text(json.dumps(rec, indent=1) + "\n")
    return {int(r["vus"]): (figure(r), r.get("binding", "")) for r in rec["results"]}


def main() -> None:
    ints = lambda s: [int(x) for x in s.split(",")]  # noqa: E731
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", type=Path, required=True)
    ap.add_argument("--profile", required=True, help="the shipped profile (or a .toml) that predicts the runs")
    ap.add_argument("--scales", type=ints, default=[1, 4])
    ap.add_argument("--vus", type=ints, default=[1, 2, 4, 8])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rampup", type=int, default=3)
    ap.add_argument("--duration", type=int, default=15)
    ap.add_argument("--calibrate-job", type=Path, default=None,
                    help="calibrate with this fio job file (bench/calibrate_random.fio on a disk whose host caches writes)")
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp/storlab-workload-accuracy"))
    ap.add_argument("--out", type=Path, default=Path("/var/tmp/storlab-workload-accuracy-out"))
    args = ap.parse_args()
    out = args.out / args.workload.stem
    out.mkdir(parents=True, exist_ok=True)
    args.dir.mkdir(parents=True, exist_ok=True)
    args.dir.chmod(0o755)
    overlay = args.out / "calibrated-overlay.toml"
    if args.calibrate_job is not None and not overlay.exists():
        # A disk whose host caches writes: the random jobs (and a sequential
        # read) of the job file in place of CrystalDiskMark's preset.
        (args.dir / "calibration").mkdir(parents=True, exist_ok=True)
        print(f"calibration: storlab bench disk --job {args.calibrate_job} --calibrate-out ... (a minute)", flush=True)
        rec = run_json([storlab_bin(), "bench", "disk", "--path", str(args.dir / "calibration"), "--job", str(args.calibrate_job),
                        "--size", "8GiB", "--calibrate-out", str(overlay), "--json"])
        (args.out / "calibration-bench-disk.json").write_text(json.dumps(rec, indent=1) + "\n")
    overlay = calibrate(args.out, args.dir / "calibration")
    got = measure(args, out)
    name = "tpsE" if any(json.loads(f.read_text())["results"][0].get("headline") is not None
                         for f in out.glob("measured-*.json")) else "TPM"
    lines = [f"| point | measured {name} median [min–max] (n) | predicted | error | within ±20 % | binding (the model's words) |",
             "|---|---|---|---|---|---|"]
    ratios = []
    for s in args.scales:
        pred = predict(args, out, overlay, s)
        for v in args.vus:
            xs = got.get((s, v), [])
            if not xs:
                continue
            med = statistics.median(xs)
            p, binding = pred[v]
            ratios.append(p / med)
            ok = abs(p / med - 1) <= 0.20
            lines.append(f"| scale {s}, {v} VUs | {med:,.1f} [{min(xs):,.1f}–{max(xs):,.1f}] ({len(xs)}) | {p:,.1f} | "
                         f"{p / med - 1:+.1%} | {'yes' if ok else '**no**'} | {binding} |")
    within = sum(1 for x in ratios if abs(x - 1) <= 0.20)
    lines += ["", f"{within} of {len(ratios)} points within ±20 %; predicted / measured median "
              f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})."]
    print("\n".join(lines))
    (out / "table.md").write_text("\n".join(lines) + "\n")
    wl = args.workload.relative_to(ROOT) if args.workload.is_absolute() and args.workload.is_relative_to(ROOT) else args.workload
    record(f"workload_accuracy_{args.workload.stem}",
           f"simulate / bench db {name}, {args.workload.name} on PostgreSQL, local disk, {len(ratios)} points "
           f"(scales {', '.join(map(str, args.scales))}; {within} within ±20 %), from the shipped {args.profile} "
           f"(`python bench/workload_accuracy.py{' --calibrate-job ' + str(args.calibrate_job) if args.calibrate_job else ''} "
           f"--workload {wl} --profile {args.profile} --scales {','.join(map(str, args.scales))}`)",
           statistics.median(ratios), min(ratios), max(ratios),
           {"machine": machine(), "points": {f"{s},{v}": xs for (s, v), xs in got.items()}, "ratios": ratios, "table": lines})

if __name__ == "__main__":
    main()
