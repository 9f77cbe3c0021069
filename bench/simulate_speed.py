"""Simulator speed and memory, beside a straightforward SimPy model of the
same single-volume queue.

Runs, alternately and in fresh processes:
- storlab: a RND4K Q32T16 job (512 I/Os in flight) on one gp3 volume
  provisioned at 16,000 IOPS, on r5b.24xlarge;
- SimPy: the same closed loop — 512 workers, one pacer at 16,000 IOPS, the
  same log-normal service time — written the obvious SimPy way.
Prints simulated I/Os per CPU second for each (both are single-threaded),
their ratio, and the peak memory of storlab for 1 h and 24 h of simulated
time. Medians over the rounds; the machine is shared and noisy.

    python bench/simulate_speed.py [--rounds 3]   # raw results: the entry simulate_speed of bench/results.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import record  # noqa: E402

SCENARIO = """
[workload]
duration_s = {duration}
[[workload.jobs]]
rw = "randread"
bs = "4k"
iodepth = 32
numjobs = 16

[configs.gp3]
host = "aws/ec2/r5b.24xlarge"
[[configs.gp3.pools]]
device = "aws/ebs/gp3"
size_gib = 1000
iops = {iops}
"""

STORLAB_CHILD = textwrap.dedent("""
    import json, resource, sys, time
    import storlab
    c0 = time.process_time(); w0 = time.perf_counter()
    rec = storlab.simulate(sys.argv[1])
    cpu = time.process_time() - c0; wall = time.perf_counter() - w0
    r = rec["results"][0]
    print(json.dumps({"ios": rec["simulated_ios"], "cpu_s": cpu, "wall_s": wall, "iops": r["iops"],
                      "lat_mean_us": r["lat_mean_us"],
                      "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
""")

# The same queue in SimPy: a pacer admits one I/O per 1/16,000 s; each I/O
# then takes a log-normal service time (median 709 µs, p99 1,090 µs: the
# catalog's gp3 read figures).
SIMPY_CHILD = textwrap.dedent("""
    import json, math, random, sys, time
    import simpy
    SIM_S, IOPS, WORKERS = float(sys.argv[1]), float(sys.argv[2]), 512
    MU, SIGMA = math.log(709e-6), math.log(1090 / 709) / 2.326347874
    env = simpy.Environment()
    rnd = random.Random(1)
    state = {"next_free": 0.0, "ios": 0, "lat": 0.0}
    def worker(env):
        while True:
            start = env.now
            admit = max(env.now, state["next_free"])
            state["next_free"] = admit + 1.0 / IOPS
            yield env.timeout(admit - env.now + rnd.lognormvariate(MU, SIGMA))
            state["ios"] += 1
            state["lat"] += env.now - start
    for _ in range(WORKERS):
        env.process(worker(env))
    c0 = time.process_time(); w0 = time.perf_counter()
    env.run(until=SIM_S)
    cpu = time.process_time() - c0; wall = time.perf_counter() - w0
    print(json.dumps({"ios": state["ios"], "cpu_s": cpu, "wall_s": wall, "iops": state["ios"] / SIM_S,
                      "lat_mean_us": 1e6 * state["lat"] / max(state["ios"], 1)}))
""")


def run(args: list[str]) -> dict:
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--storlab-sim-s", type=int, default=3600, help="simulated seconds per storlab speed run")
    ap.add_argument("--simpy-sim-s", type=float, default=30.0, help="simulated seconds per SimPy run")
    a = ap.parse_args()
    try:
        import simpy  # noqa: F401
    except ImportError:
        sys.exit("SimPy is not installed: run `make bench` (it installs the bench extras) or pip install simpy")

    tmp = Path(tempfile.mkdtemp(prefix="storlab-bench-"))
    try:
        speed = tmp / "speed.toml"
        speed.write_text(SCENARIO.format(duration=a.storlab_sim_s, iops=16000))
        rows = {"storlab": [], "simpy": []}
        for i in range(a.rounds):
            s = run(["-c", STORLAB_CHILD, str(speed)])
            p = run(["-c", SIMPY_CHILD, str(a.simpy_sim_s), "16000"])
            rows["storlab"].append(s)
            rows["simpy"].append(p)
            print(f"round {i + 1}: storlab {s['ios'] / s['cpu_s'] / 1e6:6.2f} M I/O per CPU s "
                  f"({s['iops']:,.0f} IOPS, {s['lat_mean_us']:,.0f} µs mean) | "
                  f"SimPy {p['ios'] / p['cpu_s'] / 1e3:7.1f} k I/O per CPU s "
                  f"({p['iops']:,.0f} IOPS, {p['lat_mean_us']:,.0f} µs mean)", flush=True)

        mem = {}
        for hours in (1, 24):
            f = tmp / f"mem{hours}.toml"
            f.write_text(SCENARIO.format(duration=hours * 3600, iops=3000))
            mem[hours] = run(["-c", STORLAB_CHILD, str(f)])
            print(f"memory: {hours:2d} h simulated ({mem[hours]['ios']:,} I/Os): peak RSS {mem[hours]['max_rss_kib'] / 1024:.1f} MiB", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    st = statistics.median(r["ios"] / r["cpu_s"] for r in rows["storlab"])
    sp = statistics.median(r["ios"] / r["cpu_s"] for r in rows["simpy"])
    summary = {
        "storlab_ios_per_cpu_s": st,
        "simpy_ios_per_cpu_s": sp,
        "ratio": st / sp,
        "rss_1h_mib": mem[1]["max_rss_kib"] / 1024,
        "rss_24h_mib": mem[24]["max_rss_kib"] / 1024,
    }
    print(f"\nmedian: storlab {st / 1e6:.2f} M simulated I/Os per CPU second, SimPy {sp / 1e3:.1f} k — ratio {st / sp:,.0f}x")
    print(f"memory: 24 h {summary['rss_24h_mib']:.1f} MiB vs 1 h {summary['rss_1h_mib']:.1f} MiB "
          f"(+{summary['rss_24h_mib'] - summary['rss_1h_mib']:.1f} MiB)")
    per_round = [s["ios"] / s["cpu_s"] / (p["ios"] / p["cpu_s"]) for s, p in zip(rows["storlab"], rows["simpy"])]
    record("simulate_speed", "simulate / SimPy, simulated I/Os per CPU second (RND4K Q32T16 on gp3)",
           st / sp, min(per_round), max(per_round), {"summary": summary, "rounds": rows, "memory": mem})


if __name__ == "__main__":
    main()
