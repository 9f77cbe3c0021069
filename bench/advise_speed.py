"""Speed of the search behind `storlab advise`, beside the single-threaded
full-duration run it replaces.

1. A field report's TPC-C sweep: 75,000 warehouses on three hosts (r5b and
   x2iedn with io2 Block Express, r5dn with four FSx shares), 1,024 and
   2,048 users, 120 s ramp-up + 600 s a point (the shipped tpcc-postgresql
   profile). Run alternately, each round:
   - peer: `storlab simulate` pinned to one core (taskset -c 0), the whole
     600 s of every point, as simulate ran before its runs were spread over
     cores and before `steady_state`;
   - storlab: the same scenario with `steady_state = true`, on every core.
   Target: storlab ≤ 20 s, its NOPM within ±2 % of the peer's at every point.
2. An advice over the whole EC2 catalog of us-east-1: TPC-C at 5,000
   warehouses, 100,000 NOPM with New-Order p99 under 100 ms, no [space]
   (every host, device, count, size, provisioned figure and log placement).
   Target: ≥ 10,000 candidates, finalists verified, ≤ 60 s.
3. The newcomer's question: the same workload with only `tpm = 1000000`
   (Linux, whole EC2 catalog), timed the same way.

Prints each round's wall times, the medians, the ratio of the medians with
its spread over the rounds, and the NOPM of both sweeps.

    python bench/advise_speed.py [--rounds 3]   # raw results: the entry advise_speed of bench/results.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import STORLAB, record  # noqa: E402

POOLS_BE = """
[[configs.{name}.pools]]
role = "data"
device = "aws/ebs/io2-block-express"
count = 2
layout = "stripe"
stripe_kib = 64
size_gib = 6000
iops = 64000
[[configs.{name}.pools]]
role = "log"
device = "aws/ebs/io2-block-express"
size_gib = 500
iops = 20000
"""

FIELD = """
title = "Field report: TPC-C 75,000 warehouses on three hosts, 1,024 and 2,048 users"
region = "aws/us-east-1"

[workload.database]
profile = "tpcc-postgresql"
scale = 75000
vus = [1024, 2048]
rampup_s = 120
duration_s = 600
{steady}
[configs.r5b]
host = "aws/ec2/r5b.24xlarge"
{r5b}
[configs.x2iedn]
host = "aws/ec2/x2iedn.24xlarge"
{x2iedn}
[configs.r5dn]
host = "aws/ec2/r5dn.24xlarge"
[[configs.r5dn.pools]]
role = "data"
device = "aws/fsx/windows"
count = 4
layout = "spread"
path = "smb"
throughput_mib_s = 2048
storage_gib = 4096
[[configs.r5dn.pools]]
role = "log"
device = "aws/ebs/io2"
size_gib = 500
iops = 20000
"""

WIDE = """
title = "TPC-C, 5,000 warehouses: 100,000 NOPM anywhere on EC2"
region = "aws/us-east-1"

[workload.database]
profile = "tpcc-postgresql"
scale = 5000
vus = [32, 64, 128]
rampup_s = 30
duration_s = 300

[goal]
nopm = 100000
p99_ms = 100
"""


NEWCOMER = WIDE.replace("100,000 NOPM", "1,000,000 TPM").replace("nopm = 100000\np99_ms = 100", "tpm = 1000000")


def field(steady: bool) -> str:
    return FIELD.format(steady="steady_state = true\n" if steady else "", r5b=POOLS_BE.format(name="r5b"),
                        x2iedn=POOLS_BE.format(name="x2iedn"))


def timed(cmd: list[str]) -> tuple[float, dict]:
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()[-500:]}")
    return wall, json.loads(r.stdout)


def nopm(rec: dict) -> dict[str, float]:
    return {f"{x['config']}@{x['vus']}": x["nopm"] for x in rec["results"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        full, steady, wide = Path(d, "field-full.toml"), Path(d, "field-steady.toml"), Path(d, "wide.toml")
        newcomer = Path(d, "newcomer.toml")
        full.write_text(field(False))
        steady.write_text(field(True))
        wide.write_text(WIDE)
        newcomer.write_text(NEWCOMER)
        rounds = []
        for i in range(args.rounds):
            peer_s, peer = timed(["taskset", "-c", "0", *STORLAB, "simulate", str(full), "--json"])
            ours_s, ours = timed([*STORLAB, "simulate", str(steady), "--json"])
            adv_s, adv = timed([*STORLAB, "advise", str(wide), "--json"])
            new_s, new = timed([*STORLAB, "advise", str(newcomer), "--json"])
            a, b = nopm(peer), nopm(ours)
            worst = max(abs(b[k] / a[k] - 1) for k in a)
            rounds.append({"peer_s": peer_s, "storlab_s": ours_s, "advise_s": adv_s, "nopm_peer": a, "nopm_storlab": b,
                           "worst_nopm_diff": worst, "advise_space": adv["space"], "newcomer_s": new_s,
                           "newcomer_space": new["space"], "newcomer_answers": len(new["recommendations"]),
                           "newcomer_warnings": new["warnings"],
                           "advise_top": [(r["name"], r["monthly_cost_usd"], r["nopm"]) for r in adv["recommendations"][:3]]})
            print(f"round {i + 1}: field sweep one core, whole windows {peer_s:.1f} s; every core, steady {ours_s:.1f} s "
                  f"(NOPM within {worst * 100:.2f} %); advise over {adv['space']['candidates']:,} candidates, "
                  f"{adv['space']['verified']} verified: {adv_s:.1f} s; newcomer's question over "
                  f"{new['space']['candidates']:,}, {new['space']['verified']} verified, {len(new['recommendations'])} answers: "
                  f"{new_s:.1f} s", flush=True)
        ratios = [r["storlab_s"] / r["peer_s"] for r in rounds]
        med = {k: statistics.median(r[k] for r in rounds) for k in ("peer_s", "storlab_s", "advise_s", "newcomer_s")}
        spread = {k: (min(r[k] for r in rounds), max(r[k] for r in rounds)) for k in ("advise_s", "newcomer_s")}
        ratio = med["storlab_s"] / med["peer_s"]
        print(f"field sweep: median {med['storlab_s']:.1f} s against {med['peer_s']:.1f} s (target ≤ 20 s): "
              f"ratio {ratio:.3f} ({min(ratios):.3f}–{max(ratios):.3f}); NOPM within "
              f"{max(r['worst_nopm_diff'] for r in rounds) * 100:.2f} % (target ±2 %)")
        print(f"advise: median {med['advise_s']:.1f} s ({spread['advise_s'][0]:.1f}–{spread['advise_s'][1]:.1f}) over "
              f"{rounds[0]['advise_space']['candidates']:,} candidates; newcomer's: median {med['newcomer_s']:.1f} s "
              f"({spread['newcomer_s'][0]:.1f}–{spread['newcomer_s'][1]:.1f}) over "
              f"{rounds[0]['newcomer_space']['candidates']:,} (target ≤ 60 s over ≥ 10,000)")
        record("advise_speed",
               f"simulate (steady_state, every core) / simulate (one core, whole windows), wall time of a 75,000-warehouse "
               f"3-host 2-point TPC-C sweep, {args.rounds} rounds (medians {med['storlab_s']:.1f} s / {med['peer_s']:.1f} s); "
               f"advise over {rounds[0]['advise_space']['candidates']:,} candidates: median {med['advise_s']:.1f} s "
               f"({spread['advise_s'][0]:.1f}–{spread['advise_s'][1]:.1f}); the newcomer's tpm = 1000000 over "
               f"{rounds[0]['newcomer_space']['candidates']:,}: median {med['newcomer_s']:.1f} s "
               f"({spread['newcomer_s'][0]:.1f}–{spread['newcomer_s'][1]:.1f}), {rounds[0]['newcomer_answers']} answers",
               ratio, min(ratios), max(ratios), {"rounds": rounds, "medians": med})


if __name__ == "__main__":
    main()
