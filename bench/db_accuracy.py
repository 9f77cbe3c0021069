"""Accuracy of the database model: does
the shipped profile `tpcc-postgresql` (recorded here at 2 warehouses, VUs
1, 2, 4, 8) predict the NOPM of real `storlab bench db` runs at warehouse and
VU counts it was not recorded at, and the tipping point?

On this machine (default):
1. this disk is calibrated once (`storlab bench disk --calibrate-out`, on the
   file system the database uses): a catalog overlay with the device
   `local/measured/<hostname>` (caps and QD1 latency measured here) and a
   host `local/host/<hostname>` with this machine's vCPUs and memory from
   /proc (the catalog's `local/host/server` has neither);
2. `storlab bench db --workload tpcc --db managed-postgres` runs at each
   warehouse count (default 4 and 8) over the VU counts (default the √2
   steps 1, 2, 3, 4, 6, 8, 11), in rounds that alternate the warehouse
   counts and the order of the VU counts; the server as `bench db` sets it
   up: synchronous_commit on (every commit waits for its WAL flush, as the
   model's commits do), shared_buffers at PostgreSQL's 128 MB and the rest
   of the data in the operating system's page cache;
3. `storlab simulate --json --catalog OVERLAY` predicts the same points on a
   scenario with the same scale, VUs, ramp-up and duration: one `all` pool
   on the calibrated device, the local host. The model's cache is its
   default, 0.75 × the host's memory, which holds every page of these
   databases — as the OS page cache does in the measured runs (the database
   reads nothing from the disk there: see `read_bytes` in the records);
4. a table: point, measured median [min–max], predicted, error, within
   ±15 %, and the tipping points (within one √2 step?).

With `--emulated`: the same profile on emulated volumes (`bench db --emulate`)
— gp2 after its burst (`bursting = "none"`: the 3 IOPS/GiB baseline), io1
and an Azure P30 with host cache None — at two VU counts, each `--repeat`ed
(every --emulate run loads the database anew through the paced volume, so
configs do not alternate), beside `storlab simulate` on the same scenario
and config; ±20 %. The emulator models the instance's page cache (`--ram` =
the host's memory, through STORLAB_EMULATE_OPTIONS), as the model's cache
does. Beside the table, what each emulated volume wrote for the data pages
(its write operations less PostgreSQL's WAL syncs, per transaction, and
their size) against the model's data writes per transaction. Windows of a
minute or more (--rampup 30 --duration 60) put every run in the write-back's
steady state; 12 s windows after a 3 s ramp-up do not (the pages of the runs
before land in some windows and not in others).

`--emu-profile FILE` predicts the emulated points from another profile.
With `--record --no-local --emulated` a profile is recorded on this
machine's disk just before the emulated runs and once more after them, and
the points are predicted from each besides the shipped profile (or
--emu-profile), so the machine's drift between a recording and the runs
stays out of the comparison as it does for the local points.
`--emu-setting NAME=VALUE` (repeatable) runs the emulated server with that
setting (`bench db --setting`), e.g. `shared_buffers=320MB` for the data in
shared_buffers as the profiles are recorded (the default is PostgreSQL's
128 MB); `--emu-configs gp2-after-burst,io1` runs only those configs.
`--emu-options "--floor-us auto"` adds `storlab emulate` options to each
emulated run (after `--ram`), e.g. the calibrated floor: the round trip
through FUSE, taken off each modelled completion and, with the writes'
own, given back at the fsync after buffered writes (docs/emulate.md).

Beside the predictions, the model on the profile's own recorded points.

With `--record`, the profile is recorded anew at the start of the session
(the shipped profile's command: 2 warehouses, VUs 1, 2, 4, 8) and once more
after the measured runs, and the points are predicted from each: this
machine's speed drifts by up to 1.5× over hours (other tenants), so a
profile recorded on another day mixes that drift into the error; the two
recordings show how far the drift and the recorder's own spread move a
prediction within one session. Each measured point also reports the WAL
sync time PostgreSQL saw (io_profile.wal_sync_us) and the syncs per
transaction. `--predict-only` predicts the runs already in --out again.

`--engine mariadb` does the same on a managed MariaDB with the shipped
`tpcc-mariadb` (its results under the name db_accuracy_mariadb).

Nothing is fitted to the runs being predicted: the profile, the calibrated
disk and the catalog are the model's only inputs.

The runs, profiles and predictions go into --out (a scratch folder by
default); the tables replace this engine's in bench/ACCURACY.md, the summary
its entry of bench/results.json, and one row (the median of predicted over
measured NOPM, with its lowest and highest) goes onto bench/RESULTS.md.

    python bench/db_accuracy.py [--record] [--rounds 3] [--warehouses 4,8] [--vus 1,2,3,4,6,8,11]
                                [--rampup 3] [--duration 12] [--emulated] [--no-local]
                                [--predict-only] [--out DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from storlab.calibrate import this_host
from storlab.db.profile import cpu_per_txn

sys.path.insert(0, str(Path(__file__).parent))
from _common import BENCH, raw_results, record  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# Per engine (--engine): the managed server bench db runs, the shipped
# profile, the arguments it was recorded with (its provenance's command)
# and the name its results go under.
ENGINES = {
    "postgresql": {"db": "managed-postgres", "profile": "tpcc-postgresql", "results": "db_accuracy", "insert": "insert-postgresql",
                   "record": ["--warehouses", "2", "--vus", "1,2,4,8,16", "--rampup", "3", "--duration", "20"]},
    "mariadb": {"db": "managed-mariadb", "profile": "tpcc-mariadb", "results": "db_accuracy_mariadb", "insert": "insert-mariadb",
                "record": ["--warehouses", "2", "--vus", "1,2,4,8", "--rampup", "3", "--duration", "20"]},
}
PROFILE = ENGINES["postgresql"]["profile"]
OUT = Path("/var/tmp/storlab-db-accuracy-out")


def storlab_bin() -> str:
    return shutil.which("storlab", path=str(Path(sys.executable).parent)) or "storlab"


def loadavg() -> float:
    return os.getloadavg()[0]


def run_json(cmd: list[str], env: dict | None = None, log: Path | None = None) -> dict:
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if log is not None:
        log.write_text(p.stderr)
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}, {time.time() - t0:.0f} s): {' '.join(cmd)}\n{p.stderr.strip()[-3000:]}")
    return json.loads(p.stdout)


# -- this machine ---------------------------------------------------------

def machine() -> dict:
    from storlab.host import machine as proc

    m = proc()
    return {"hostname": this_host(), "vcpus": m["cpus"], "memory_gib": round(m["memory_bytes"] / 2**30, 2)}


def calibrate(out: Path, db_dir: Path) -> Path:
    """The catalog overlay with this disk (bench disk --calibrate-out, on the
    database's file system) and this machine as a host; reused if present."""
    overlay = out / "calibrated-overlay.toml"
    if overlay.exists():
        print(f"calibration: reusing {overlay.relative_to(ROOT) if overlay.is_relative_to(ROOT) else overlay}")
        return overlay
    db_dir.mkdir(parents=True, exist_ok=True)
    print(f"calibration: storlab bench disk --path {db_dir} --calibrate-out ... (a few minutes)", flush=True)
    rec = run_json([storlab_bin(), "bench", "disk", "--path", str(db_dir), "--size", "8GiB", "--runs", "3",
                    "--runtime", "5", "--interval", "2", "--calibrate-out", str(overlay), "--json"])
    (out / "calibration-bench-disk.json").write_text(json.dumps(rec, indent=1) + "\n")
    return overlay



# -- measuring ------------------------------------------------------------

def bench_db(args: argparse.Namespace, *, warehouses: int, vus: list[int], db_dir: Path, seed: int, keep: bool,
             emulate: str | None = None, env: dict | None = None, repeat: int = 1,
             settings: list[str] | None = None) -> dict:
    cmd = [storlab_bin(), "bench", "db", "--workload", "tpcc", "--db", ENGINES[args.engine]["db"], "--dir", str(db_dir),
           "--warehouses", str(warehouses), "--vus", ",".join(map(str, vus)), "--rampup", str(args.rampup),
           "--duration", str(args.duration), "--seed", str(seed), "--repeat", str(repeat), "--json"]
    if keep:
        cmd.append("--keep")
    if emulate:
        cmd += ["--emulate", emulate]
    for kv in settings or []:
        cmd += ["--setting", kv]
    return run_json(cmd, env=env)


RECORD_REPEAT = 3  # the shipped profile's --repeat


def record_profile(args: argparse.Namespace, out: Path, name: str) -> Path:
    """A profile recorded now, as the shipped one was (its provenance's
    command), into OUT/NAME.toml; its run record beside it."""
    path = out / f"{name}.toml"
    d = args.dir / name
    print(f"recording {path.name}: storlab bench db ... --profile-out (about 9 minutes)", flush=True)
    t0 = time.time()
    e = ENGINES[args.engine]
    rec = run_json([storlab_bin(), "bench", "db", "--workload", "tpcc", "--db", e["db"], "--dir", str(d),
                    *e["record"], "--repeat", str(args.record_repeat), "--profile-out", str(path), "--json"])
    (out / f"{name}-run.json").write_text(json.dumps(rec, indent=1) + "\n")
    print(f"  {time.time() - t0:.0f} s", flush=True)
    return path


def wal_by_vus(rec: dict) -> dict[int, dict]:
    """Per VU count: the WAL sync time PostgreSQL saw and syncs per transaction."""
    out = {}
    cpu: dict[int, list[float]] = {}
    for run in rec.get("runs") or []:
        cpu.setdefault(int(run["vus"]), []).append(cpu_per_txn(run))
    for r in rec["results"]:
        io = r.get("io_profile") or {}
        n = io.get("transactions") or 0
        out[int(r["vus"])] = {"wal_sync_us": io.get("wal_sync_us"),
                              "syncs_per_txn": (io.get("totals") or {}).get("wal_sync", 0) / n if n else None,
                              "cpu_us": statistics.median(cpu[int(r["vus"])]) if cpu.get(int(r["vus"])) else None}
    return out


def nopm_by_vus(rec: dict) -> dict[int, float]:
    return {int(r["vus"]): float(r["nopm"]) for r in rec["results"] if r.get("nopm") is not None}


def measure_local(args: argparse.Namespace, out: Path) -> list[dict]:
    """Rounds alternating the warehouse counts and the VU order; each
    warehouse count's cluster is loaded once (and warmed by a discarded
    run: the checkpoint after a load depresses a first run) and kept."""
    runs: list[dict] = []
    for w in args.warehouses:
        d = args.dir / f"w{w}"
        print(f"load + warm-up: {w} warehouses in {d}", flush=True)
        t0 = time.time()
        bench_db(args, warehouses=w, vus=[max(args.vus)], db_dir=d, seed=99, keep=True)
        print(f"  {time.time() - t0:.0f} s", flush=True)
    for k in range(args.rounds):
        order = args.warehouses if k % 2 == 0 else list(reversed(args.warehouses))
        vus = args.vus if k % 2 == 0 else list(reversed(args.vus))
        for w in order:
            before = loadavg()
            t0 = time.time()
            rec = bench_db(args, warehouses=w, vus=vus, db_dir=args.dir / f"w{w}", seed=k + 1, keep=True)
            after = loadavg()
            name = f"measured-w{w}-round{k + 1}.json"
            (out / name).write_text(json.dumps(rec, indent=1) + "\n")
            got = nopm_by_vus(rec)
            runs.append({"warehouses": w, "round": k + 1, "load_before": before, "load_after": after,
                         "file": name, "nopm": got, "wal": wal_by_vus(rec),
                         "read_bytes": {int(r["vus"]): (r.get("io_profile") or {}).get("read_bytes") for r in rec["results"]}})
            print(f"round {k + 1}, {w} warehouses ({time.time() - t0:.0f} s, load {before:.1f}→{after:.1f}): "
                  + ", ".join(f"{v} VUs {got.get(v, float('nan')):,.0f}" for v in sorted(got)), flush=True)
    return runs


# -- predicting -----------------------------------------------------------

LOCAL_SCENARIO = """title = "TPC-C on this machine ({hostname}): the calibrated disk (db_accuracy)"

[workload.database]
profile = "{profile}"
scale = {scale}
vus = {vus}
rampup_s = {rampup}
duration_s = {duration}

[configs.this-machine]
host = "local/host/{hostname}"
{settings}
[[configs.this-machine.pools]]
role = "all"
device = "local/measured/{hostname}"
"""


def buffer_pool_setting(out: Path, warehouses: int) -> str:
    """InnoDB caches in its buffer pool alone (O_DIRECT): the pool the
    measured server ran with (its record's server.settings) is the model's
    cache, as a config setting. Nothing for PostgreSQL, whose data sits in
    the page cache the model's default share stands for."""
    for f in sorted(out.glob(f"measured-w{warehouses}-round*.json")):
        pool = (json.loads(f.read_text())["runs"][0].get("server") or {}).get("settings", {}).get("innodb_buffer_pool_size")
        if pool:
            return f'settings = {{ innodb_buffer_pool_size = "{pool}" }}'
    return ""


def recorded_pool(prov: dict) -> str:
    """The buffer pool a profile was recorded with, as a config setting
    (nothing for PostgreSQL's)."""
    pool = (prov.get("settings") or {}).get("innodb_buffer_pool_size")
    return f'settings = {{ innodb_buffer_pool_size = "{pool}" }}' if pool else ""


def predict(scenario: Path, catalog: Path | None, seeds: int) -> dict[str, dict]:
    """`storlab simulate --json` → per config: NOPM by VUs (the median over
    `seeds` seeds where the scenario takes one), the record's tipping point."""
    recs = []
    text = scenario.read_text()
    for s in range(seeds):
        scen = scenario if seeds == 1 else scenario.with_name(f"{scenario.stem}-seed{s + 1}.toml")
        if seeds > 1:
            scen.write_text(text.replace("[workload.database]\n", f"[workload]\nseed = {s + 1}\n\n[workload.database]\n", 1))
        cmd = [storlab_bin(), "simulate", str(scen), "--json"] + (["--catalog", str(catalog)] if catalog else [])
        recs.append(run_json(cmd))
    out: dict[str, dict] = {}
    for rec in recs:
        for r in rec["results"]:
            c = out.setdefault(r["config"], {"nopm": {}, "binding": {}, "tipping_point": None})
            c["nopm"].setdefault(int(r["vus"]), []).append(float(r["nopm"]))
            if r.get("binding"):
                c["binding"][int(r["vus"])] = r["binding"]
    for cfg, c in out.items():
        c["nopm"] = {v: statistics.median(xs) for v, xs in c["nopm"].items()}
        tp = [t for t in (recs[0].get("tipping_point") or []) if isinstance(t, dict) and t.get("config") == cfg]
        c["tipping_point"] = tp[0]["vus"] if tp and tp[0].get("reached", True) else tipping({v: [x] for v, x in c["nopm"].items()})
        c["record"] = recs[0]
    return out


# -- the tipping point (crates/storlab-record/src/db.rs, tipping_point) ----

def tipping(samples: dict[int, list[float]]) -> int | None:
    """The first VU count that no later count beats by more than the
    run-to-run noise (twice the larger standard deviation of the two counts'
    repeats; 5 % of the value for a single run) — bench db's rule, on the
    medians."""
    vus = sorted(samples)

    def vn(v: int) -> tuple[float, float]:
        xs = samples[v]
        m = statistics.median(xs)
        sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
        return m, (2 * sd if sd > 0 else 0.05 * m)

    for i, v in enumerate(vus):
        m, n = vn(v)
        if all(vn(u)[0] - m <= max(n, vn(u)[1]) for u in vus[i + 1:]):
            return v
    return None


def sqrt2_steps(a: int, b: int) -> float:
    return abs(math.log(b / a) / math.log(math.sqrt(2)))


# -- tables ---------------------------------------------------------------

def table(rows: list[dict], tol: float) -> list[str]:
    lines = [f"| point | measured NOPM median [min–max] (n) | load avg | predicted NOPM | error | within ±{tol:.0%} |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        xs = r["measured"]
        med = statistics.median(xs)
        err = (r["predicted"] - med) / med if med else float("nan")
        lines.append(f"| {r['point']} | {med:,.0f} [{min(xs):,.0f}–{max(xs):,.0f}] ({len(xs)}) | "
                     f"{min(r['load']):.1f}–{max(r['load']):.1f} | {r['predicted']:,.0f} | {err:+.1%} | "
                     f"{'yes' if abs(err) <= tol else '**no**'} |")
        r["error"] = err
    return lines


def local_report(args: argparse.Namespace, out: Path, runs: list[dict], overlay: Path, profile: str = PROFILE,
                 tag: str = "") -> dict:
    """Predictions from `profile` (a shipped name or a file) beside the
    measured runs; files named with `tag`."""
    m = machine()
    rows, tips = [], []
    summary: dict = {"machine": m, "profile": profile, "rampup_s": args.rampup, "duration_s": args.duration,
                     "points": [], "tipping": []}
    for w in args.warehouses:
        scen = out / f"predict{tag}-w{w}.toml"
        scen.write_text(LOCAL_SCENARIO.format(hostname=m["hostname"], profile=profile, scale=w, vus=json.dumps(args.vus),
                                              rampup=args.rampup, duration=args.duration,
                                              settings=buffer_pool_setting(out, w)))
        pred = predict(scen, overlay, args.sim_seeds)
        (out / f"predicted{tag}-w{w}.json").write_text(json.dumps(pred["this-machine"]["record"], indent=1) + "\n")
        p = pred["this-machine"]
        samples = {v: [r["nopm"][v] for r in runs if r["warehouses"] == w and v in r["nopm"]] for v in args.vus}
        for v in args.vus:
            load = [r["load_before"] for r in runs if r["warehouses"] == w] or [float("nan")]
            rows.append({"point": f"{w} wh, {v} VUs", "measured": samples[v], "predicted": p["nopm"][v], "load": load,
                         "binding": p["binding"].get(v, "")})
        tm, tp = tipping(samples), p["tipping_point"]
        tips.append((w, tm, tp))
    lines = table(rows, 0.15)
    within = sum(1 for r in rows if abs(r["error"]) <= 0.15)
    lines.append("")
    lines.append(f"{within} of {len(rows)} points within ±15 %.")
    lines.append("")
    lines.append("| warehouses | measured tipping point (VUs) | predicted | √2 steps apart | within one step |")
    lines.append("|---|---|---|---|---|")
    for w, tm, tp in tips:
        st = sqrt2_steps(tm, tp) if tm and tp else float("nan")
        # On the √2 grid (1, 2, 3, 4, 6, 8, 11: rounded) neighbours are one step apart.
        ok = tm in args.vus and tp in args.vus and abs(args.vus.index(tm) - args.vus.index(tp)) <= 1
        lines.append(f"| {w} | {tm} | {tp} | {st:.1f} | {'yes' if ok else '**no**'} |")
        summary["tipping"].append({"warehouses": w, "measured": tm, "predicted": tp, "sqrt2_steps": st})
    lines.append("")
    lines.append("Binding resource per point (the model's words):")
    lines.append("")
    for r in rows:
        lines.append(f"- {r['point']}: {r['binding']}")
    summary["points"] = [{k: r[k] for k in ("point", "measured", "predicted", "error", "load", "binding")} for r in rows]
    print("\n".join(lines))
    summary["table"] = lines
    return summary


def median_text(xs: list[float], fmt: str) -> str:
    return format(statistics.median(xs), fmt) if xs else "–"


def wal_table(args: argparse.Namespace, runs: list[dict]) -> list[str]:
    """The log flush as PostgreSQL saw it at each measured point (medians over the rounds)."""
    lines = ["| point | WAL sync as PostgreSQL timed it, µs | WAL syncs per transaction "
             "| CPU per transaction, µs [min–max] (the machine's drift: the profile has c(1), c(N)) |",
             "|---|---|---|---|"]
    for w in args.warehouses:
        for v in args.vus:
            ws = [r["wal"][v] for r in runs if r["warehouses"] == w and v in r.get("wal", {})]
            us = [x["wal_sync_us"] for x in ws if x.get("wal_sync_us")]
            sp = [x["syncs_per_txn"] for x in ws if x.get("syncs_per_txn") is not None]
            cpu = [x["cpu_us"] for x in ws if x.get("cpu_us")]
            cpu_text = f"{median_text(cpu, ',.0f')} [{min(cpu):,.0f}–{max(cpu):,.0f}]" if cpu else "–"
            if us or sp:
                lines.append(f"| {w} wh, {v} VUs | {median_text(us, ',.0f')} | {median_text(sp, '.2f')} | {cpu_text} |")
    print("\n".join(lines))
    return lines


def self_check(args: argparse.Namespace, out: Path, overlay: Path, profile: str = PROFILE, tag: str = "") -> dict:
    """The model on the profile's own recording: its scale and sweep (the
    profile's [concurrency] throughput, measured with synchronous_commit off
    and every page in shared_buffers) — not a prediction, a check of what
    the model does with its inputs."""
    import tomllib

    path = Path(profile) if profile.endswith(".toml") else ROOT / "python/storlab/profiles" / f"{profile}.toml"
    prof = tomllib.loads(path.read_text())
    conc, prov = prof["concurrency"], prof["provenance"]
    m = machine()
    scen = out / f"self-check{tag}.toml"
    scen.write_text(LOCAL_SCENARIO.format(hostname=m["hostname"], profile=profile, scale=int(prov["scale"]),
                                          vus=json.dumps(conc["vus"]), rampup=3, duration=10,
                                          settings=recorded_pool(prov)))
    pred = predict(scen, overlay, 1)["this-machine"]
    lines = ["| VUs | recorded transactions/s | model transactions/s | model / recorded |", "|---|---|---|---|"]
    rows = []
    for v, x in zip(conc["vus"], conc["throughput"]):
        y = pred["nopm"][v] / prof["nopm_per_txn"] / 60.0
        rows.append({"vus": v, "recorded_tps": x, "model_tps": y})
        lines.append(f"| {v} | {x:,.0f} | {y:,.0f} | {y / x:.2f} |")
    print("\n".join(lines))
    return {"rows": rows, "table": lines}


# -- emulated volumes -----------------------------------------------------

# gp2 after its burst: no credits, the 3 IOPS/GiB baseline (300 IOPS); the
# TPC-C and the insert storm scenarios both run it.
GP2_AFTER_BURST = """[configs.gp2-after-burst]
host = "aws/ec2/r5.large"
region = "aws/us-east-1"
[[configs.gp2-after-burst.pools]]
role = "all"
device = "aws/ebs/gp2"
size_gib = 100
bursting = "none"
"""

EMU_SCENARIO = """title = "TPC-C on emulated volumes (db_accuracy --emulated)"

[workload.database]
profile = "{profile}"
scale = {scale}
vus = {vus}
rampup_s = {rampup}
duration_s = {duration}

""" + GP2_AFTER_BURST + """
[configs.io1]
host = "aws/ec2/r5.large"
region = "aws/us-east-1"
[[configs.io1.pools]]
role = "all"
device = "aws/ebs/io1"
size_gib = 100
iops = 1000

[configs.p30-none]
host = "azure/vm/Standard_E4s_v5"
region = "azure/eastus"
[[configs.p30-none.pools]]
role = "all"
device = "azure/premium-ssd/P30"
host_cache = "none"
"""

EMU_RAM_GIB = {"gp2-after-burst": 16, "io1": 16, "p30-none": 32}  # the hosts' memory (catalog)


def emulated(args: argparse.Namespace, out: Path, profile: str, tag: str = "", measure: bool = False) -> dict:
    """The emulated points (measured when `measure`, else read from OUT)
    predicted from `profile`; the scenario and the prediction are kept as
    emulated{tag}.toml and predicted-emulated{tag}.json."""
    scen = out / f"emulated{tag}.toml"
    scen.write_text(EMU_SCENARIO.format(profile=profile, scale=args.emu_warehouses, vus=json.dumps(args.emu_vus),
                                        rampup=args.rampup, duration=args.duration))
    configs = [c for c in EMU_RAM_GIB if not args.emu_configs or c in args.emu_configs]
    runs: list[dict] = []
    if measure:
        # Each --emulate run loads the database anew through the paced volume
        # (minutes at gp2's 300 IOPS), so each config loads once and repeats
        # its VU counts (--repeat) rather than alternating with the others.
        for cfg in configs:
            before = loadavg()
            t0 = time.time()
            rec = bench_db(args, warehouses=args.emu_warehouses, vus=args.emu_vus, db_dir=args.dir / "emu", seed=1,
                           keep=False, emulate=f"{scen}:{cfg}", repeat=args.rounds,
                           env={"STORLAB_EMULATE_OPTIONS": f"--ram {EMU_RAM_GIB[cfg]} {args.emu_options}".strip()},
                           settings=args.emu_setting)
            name = f"emulated-{cfg}.json"
            (out / name).write_text(json.dumps(rec, indent=1) + "\n")
            for r in rec["runs"]:
                runs.append({"config": cfg, "round": r["repeat"], "load_before": before, "load_after": loadavg(),
                             "file": name, "nopm": {int(r["vus"]): float(r["nopm"])}})
            print(f"{cfg} ({time.time() - t0:.0f} s, load {before:.1f}→{loadavg():.1f}): "
                  + ", ".join(f"{r['vus']} VUs {r['nopm']:,.0f}" for r in rec["runs"]), flush=True)
        (out / "emulated-runs.json").write_text(json.dumps(runs, indent=1) + "\n")
    else:
        runs = json.loads((out / "emulated-runs.json").read_text())
        for r in runs:
            r["nopm"] = {int(k): v for k, v in r["nopm"].items()}
    pred = predict(scen, None, args.sim_seeds)
    (out / f"predicted-emulated{tag}.json").write_text(json.dumps(next(iter(pred.values()))["record"], indent=1) + "\n")
    rows = []
    for cfg in configs:
        for v in args.emu_vus:
            xs = [r["nopm"][v] for r in runs if r["config"] == cfg and v in r["nopm"]]
            rows.append({"point": f"{cfg}, {v} VUs", "measured": xs, "predicted": pred[cfg]["nopm"][v],
                         "load": [r["load_before"] for r in runs if r["config"] == cfg], "binding": pred[cfg]["binding"].get(v, "")})
    lines = table(rows, 0.20)
    lines.append("")
    lines.append(f"{sum(1 for r in rows if abs(r['error']) <= 0.20)} of {len(rows)} points within ±20 %.")
    lines.append("")
    for r in rows:
        lines.append(f"- {r['point']}: {r['binding']}")
    lines.append("")
    wb = writeback_table(out, configs, next(iter(pred.values()))["record"])
    lines += wb["table"]
    print("\n".join(lines))
    return {"warehouses": args.emu_warehouses, "points": [{k: r[k] for k in ("point", "measured", "predicted", "error", "load", "binding")} for r in rows],
            "writeback": wb["rows"], "table": lines}


INSERT_SCENARIO = """title = "The insert storm on an emulated gp2 (db_accuracy --insert)"

[workload.database]
profile = "{profile}"
scale = {scale}
vus = [{vus}]
rampup_s = 0
duration_s = {duration}

# A 100 GiB gp2 with its credits (3,000 IOPS for the first half hour) and
# after its burst (its 300 IOPS floor).
[configs.gp2]
host = "aws/ec2/r5.large"
region = "aws/us-east-1"
[[configs.gp2.pools]]
role = "all"
device = "aws/ebs/gp2"
size_gib = 100

""" + GP2_AFTER_BURST
INSERT_CONFIGS = ("gp2", "gp2-after-burst")


def insert_storm(args: argparse.Namespace, out: Path, measure: bool) -> dict:
    """The insert storm (a commit every 500 rows, --insert-vus users) on an
    emulated 100 GiB gp2 before its burst ends (its credits full: 3,000
    IOPS) and after (`bursting = "none"`: its 300 IOPS floor), each a fresh
    server for --insert-duration seconds: rows a minute over the window,
    measured and predicted by `storlab simulate` on the same scenario from
    the engine's insert profile."""
    profile = ENGINES[args.engine]["insert"]
    scen = out / "insert.toml"
    rows_per_user = 10_000_000  # more than any window inserts: the duration ends it
    scen.write_text(INSERT_SCENARIO.format(profile=profile, scale=1_000_000, vus=args.insert_vus,
                                           duration=args.insert_duration))
    measured = {}
    for cfg in INSERT_CONFIGS:
        rec_file = out / f"insert-{cfg}.json"
        if measure:
            cmd = [storlab_bin(), "bench", "db", "--workload", "insert", "--db", ENGINES[args.engine]["db"],
                   "--dir", str(args.dir / "ins"), "--emulate", f"{scen}:{cfg}", "--vus", str(args.insert_vus),
                   "--rows-per-user", str(rows_per_user), "--commit-every", "500", "--rampup", "0",
                   "--duration", str(args.insert_duration), "--seed", "1", "--json"]
            before = loadavg()
            t0 = time.time()
            rec = run_json(cmd, env={"STORLAB_EMULATE_OPTIONS": f"--ram {EMU_RAM_GIB['gp2-after-burst']}"})
            rec["db_accuracy_load"] = [before, loadavg()]
            rec_file.write_text(json.dumps(rec, indent=1) + "\n")
            print(f"{cfg} ({time.time() - t0:.0f} s): {rec['runs'][0]['rows'] * 60 / rec['runs'][0]['duration_s']:,.0f} rows/min",
                  flush=True)
        rec = json.loads(rec_file.read_text())
        run = rec["runs"][0]
        measured[cfg] = (run["rows"] * 60 / run["duration_s"], rec.get("db_accuracy_load", [0.0, 0.0]))
    pred = run_json([storlab_bin(), "simulate", str(scen), "--json"])
    (out / "predicted-insert.json").write_text(json.dumps(pred, indent=1) + "\n")
    predicted = {r["config"]: r for r in pred["results"]}
    rows = []
    for cfg in INSERT_CONFIGS:
        m, load = measured[cfg]
        rows.append({"point": f"{cfg}, {args.insert_vus} users", "measured": [m], "load": load,
                     "predicted": predicted[cfg]["rows_per_min"], "binding": predicted[cfg].get("binding", "")})
    lines = table(rows, 0.20)
    lines[0] = lines[0].replace("measured NOPM", "measured rows/min").replace("predicted NOPM", "predicted rows/min")
    lines += ["", f"{sum(1 for r in rows if abs(r['error']) <= 0.20)} of {len(rows)} points within ±20 %.", ""]
    lines += [f"- {r['point']}: {r['binding']}" for r in rows]
    print("\n".join(lines))
    return {"profile": profile, "points": [{k: r[k] for k in ("point", "measured", "predicted", "error", "load", "binding")} for r in rows],
            "table": lines}


def writeback_table(out: Path, configs: list[str], predicted: dict | None = None) -> dict:
    """What the emulated volume wrote while the runs ran, beside the WAL
    syncs PostgreSQL counted: the volume's write operations a second
    (its VolumeWriteOps series, the whole periods from the first run's start
    to the last run's end, counted back from the series' end, ramp-ups
    included) less the WAL syncs a second (pg_stat_wal over the measured
    windows) leave the data pages' write-back, per transaction and in bytes
    per operation — against the profile's dirtied pages per transaction,
    and the volume's writes per transaction beside the model's (its `all`
    pool's write IOPS over its transactions, WAL and data, the mean over the
    VU counts)."""
    model: dict[str, list[float]] = {}
    for r in (predicted or {}).get("results", []):
        pool = (r.get("pools") or {}).get("all") or {}
        if r.get("tpm"):
            model.setdefault(r["config"], []).append(pool.get("write_iops", 0.0) / (r["tpm"] / 60.0))
    lines = ["| config | volume writes/s | WAL syncs/s | transactions/s | data write-back ops per transaction | bytes per data write-back op | volume writes per transaction | model's |",
             "|---|---|---|---|---|---|---|---|"]
    rows = []
    for cfg in configs:
        f = out / f"emulated-{cfg}.json"
        if not f.exists():
            continue
        rec = json.loads(f.read_text())
        runs = rec["runs"]
        first = min(r["started_unix_s"] for r in runs)
        last = max(r["started_unix_s"] + r["rampup_s"] + r["duration_s"] for r in runs)
        series = {s["metric"]: s for s in rec["series"] if s["resource"].startswith("pool")}
        ops, byts = series.get("VolumeWriteOps"), series.get("VolumeWriteBytes")
        if not ops or not byts:
            continue
        period = float(ops["period_s"])
        k = max(1, int((last - first) // period) - 1)
        ops_s = sum(ops["values"][-k - 1:-1]) / (k * period)
        bytes_s = sum(byts["values"][-k - 1:-1]) / (k * period)
        window = sum(r["duration_s"] for r in runs)
        tot = [r["io_profile"]["totals"] for r in runs]
        wal_s = sum(t.get("wal_sync", 0.0) for t in tot) / window
        wal_bytes_s = sum(t.get("wal_bytes", 0.0) for t in tot) / window
        tps = sum(r["io_profile"]["transactions"] for r in runs) / window
        data_ops = max(ops_s - wal_s, 0.0)
        row = {"config": cfg, "volume_write_ops_s": ops_s, "wal_syncs_s": wal_s, "tps": tps,
               "data_ops_per_txn": data_ops / tps if tps else None,
               "bytes_per_data_op": (bytes_s - wal_bytes_s) / data_ops if data_ops > 1 else None,
               "volume_writes_per_txn": ops_s / tps if tps else None,
               "model_writes_per_txn": statistics.mean(model[cfg]) if model.get(cfg) else None}
        rows.append(row)
        size = f"{row['bytes_per_data_op'] / 1024:,.0f} KiB" if row["bytes_per_data_op"] else "–"
        mw = f"{row['model_writes_per_txn']:.2f}" if row["model_writes_per_txn"] is not None else "–"
        lines.append(f"| {cfg} | {ops_s:,.0f} | {wal_s:,.0f} | {tps:,.0f} | {row['data_ops_per_txn']:.2f} | {size} | "
                     f"{row['volume_writes_per_txn']:.2f} | {mw} |")
    return {"rows": rows, "table": lines}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ints = lambda s: [int(x) for x in s.split(",")]  # noqa: E731
    ap.add_argument("--engine", choices=sorted(ENGINES), default="postgresql",
                    help="the managed server and shipped profile (default postgresql: managed-postgres, "
                         "tpcc-postgresql; mariadb: managed-mariadb, tpcc-mariadb)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warehouses", type=ints, default=[4, 8])
    ap.add_argument("--vus", type=ints, default=[1, 2, 3, 4, 6, 8, 11])
    ap.add_argument("--rampup", type=int, default=3, help="seconds (the profile was recorded with 3)")
    ap.add_argument("--duration", type=int, default=12, help="seconds per measured window")
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp/storlab-db-accuracy"),
                    help="where the clusters live (on the disk being calibrated); removed at the end")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--sim-seeds", type=int, default=1)
    ap.add_argument("--emulated", action="store_true", help="also (or with --no-local, only) the emulated volumes")
    ap.add_argument("--no-local", action="store_true", help="skip the runs on this machine's disk")
    ap.add_argument("--emu-warehouses", type=int, default=2)
    ap.add_argument("--emu-vus", type=ints, default=[1, 4])
    ap.add_argument("--emu-configs", type=lambda s: s.split(","), default=None,
                    help="the emulated configs to run (default all: " + ",".join(EMU_RAM_GIB) + ")")
    ap.add_argument("--emu-options", default="", metavar="OPTIONS",
                    help="further storlab emulate options for each emulated run, e.g. \"--floor-us auto\"")
    ap.add_argument("--emu-setting", action="append", default=[], metavar="NAME=VALUE",
                    help="a server setting for the emulated runs (bench db --setting; repeatable), e.g. "
                         "shared_buffers=320MB: the data in shared_buffers, as the profile was recorded")
    ap.add_argument("--emu-profile", default=None,
                    help="the profile the emulated points are predicted from: the shipped one (default) or a file "
                         "recorded on this machine's disk, e.g. a --record round's profile-before.toml (absolute path)")
    ap.add_argument("--insert", action="store_true",
                    help="also the insert storm on an emulated gp2 with and after its burst (the engine's insert profile)")
    ap.add_argument("--insert-vus", type=int, default=4)
    ap.add_argument("--insert-duration", type=int, default=300, help="seconds of each insert storm window")
    ap.add_argument("--predict-only", action="store_true", help="reuse the measured runs in --out; only predict")
    ap.add_argument("--record", action="store_true",
                    help="record the profile anew before and after the measured runs and predict from each")
    ap.add_argument("--record-repeat", type=int, default=RECORD_REPEAT,
                    help="with --record: the recordings' --repeat (the shipped profile's: 3); more repeats, a "
                         "recorded curve less moved by the machine's noise")
    args = ap.parse_args()
    engine = ENGINES[args.engine]
    shipped = engine["profile"]
    args.emu_profile = args.emu_profile or shipped
    args.out.mkdir(parents=True, exist_ok=True)
    result: dict = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "profile": shipped,
                    "args": {k: str(v) for k, v in vars(args).items()}}
    summary_file = args.out / "summary.json"
    if summary_file.exists():
        result = {**json.loads(summary_file.read_text()), **result}
    try:
        if not args.no_local:
            overlay = calibrate(args.out, args.dir)
            profiles = [(shipped, "")]
            if args.record and not args.predict_only:
                profiles = [(str(record_profile(args, args.out, "profile-before")), "-before")]
            elif args.record:
                profiles = [(str(args.out / f"profile{t}.toml"), t) for t in ("-before", "-after")]
            if args.predict_only:
                runs = json.loads((args.out / "measured-runs.json").read_text())
                for r in runs:
                    r["nopm"] = {int(k): v for k, v in r["nopm"].items()}
            else:
                runs = measure_local(args, args.out)
                (args.out / "measured-runs.json").write_text(json.dumps(runs, indent=1) + "\n")
                if args.record:
                    profiles.append((str(record_profile(args, args.out, "profile-after")), "-after"))
            for r in runs:
                r["nopm"] = {int(k): v for k, v in r["nopm"].items()}
                r["wal"] = {int(k): v for k, v in r.get("wal", {}).items()}
            args.vus = sorted({v for r in runs for v in r["nopm"]})
            for profile, tag in profiles:
                print(f"\n## predicted from {profile}\n", flush=True)
                result[f"local{tag}"] = local_report(args, args.out, runs, overlay, profile, tag)
                result[f"self_check{tag}"] = self_check(args, args.out, overlay, profile, tag)
            print("\n## the log flush as PostgreSQL saw it\n")
            result["wal"] = wal_table(args, runs)
        if args.emulated:
            # With --record and --no-local: a profile recorded on this
            # machine's disk just before the emulated runs and one just
            # after, and the points predicted from each beside the shipped.
            recorded = args.record and args.no_local
            if recorded and not args.predict_only:
                record_profile(args, args.out, "profile-before")
            print(f"\n## emulated, predicted from {args.emu_profile}\n", flush=True)
            result["emulated"] = emulated(args, args.out, args.emu_profile, measure=not args.predict_only)
            if recorded and not args.predict_only:
                record_profile(args, args.out, "profile-after")
            for tag in (("-before", "-after") if recorded else ()):
                profile = str(args.out / f"profile{tag}.toml")
                print(f"\n## emulated, predicted from {profile}\n", flush=True)
                result[f"emulated{tag}"] = emulated(args, args.out, profile, tag)
        if args.insert:
            print(f"\n## the insert storm on an emulated gp2, predicted from {ENGINES[args.engine]['insert']}\n", flush=True)
            result["insert"] = insert_storm(args, args.out, measure=not args.predict_only)
    finally:
        # Only what this script made: the clusters' folders (kept between
        # rounds), the calibration's folder if it made it.
        if not args.predict_only:
            for w in args.warehouses + ["emu", "ins"]:
                shutil.rmtree(args.dir / (f"w{w}" if w not in ("emu", "ins") else w), ignore_errors=True)
            for name in ("profile-before", "profile-after"):
                shutil.rmtree(args.dir / name, ignore_errors=True)
            with contextlib.suppress(OSError):
                args.dir.rmdir()
    summary_file.write_text(json.dumps(result, indent=1) + "\n")
    print(f"\nwritten {summary_file}")
    # The latest tables in the tree: this run's parts replace the same parts
    # of the file (a local run leaves the emulated tables there, and the
    # other way round). One row: predicted over measured NOPM at every point
    # this run predicted from its first profile.
    command = "python bench/db_accuracy.py " + " ".join(sys.argv[1:])
    sections = (raw_results(engine["results"]) or {}).get("sections", {})
    ratios = []
    ran = {k.split("-")[0] for k, v in result.items() if isinstance(v, dict) and "table" in v and "points" in v}
    sections = {k: v for k, v in sections.items() if k.split("-")[0] not in ran}
    for key, part in result.items():
        if isinstance(part, dict) and "table" in part and "points" in part:
            src = part.get("profile") or (args.emu_profile if key == "emulated" else f"profile{key[len('emulated'):]}.toml")
            sections[key] = {"predicted_from": src, "command": command, "date": result["date"],
                             "points": part["points"], "table": part["table"]}
            if key in ("local", "local-before", "emulated"):
                ratios += [x["predicted"] / statistics.median(x["measured"]) for x in part["points"] if x["measured"]]
    def with_insert(e: str, secs: dict) -> dict:
        # The insert storm's table is kept under its own entry.
        ins = (raw_results(ENGINES[e]["results"] + "_insert") or {}).get("insert")
        if not ins or "insert" in secs:
            return secs
        return {**secs, "insert": {"predicted_from": ins["profile"], "table": ins["table"], "points": ins["points"],
                                   "command": ins.get("command", f"python bench/db_accuracy.py --engine {e} --no-local --insert")}}

    write_tables({**{e: with_insert(e, (raw_results(ENGINES[e]["results"]) or {}).get("sections", {})) for e in ENGINES},
                  args.engine: with_insert(args.engine, sections)})
    if "insert" in result and result["insert"]["points"]:
        xs = [x["predicted"] / x["measured"][0] for x in result["insert"]["points"]]
        record(engine["results"] + "_insert", f"simulate / bench db rows per minute, the insert storm on an emulated gp2 "
               f"before and after its burst, {args.engine}", statistics.median(xs), min(xs), max(xs),
               {"insert": {**result["insert"], "command": command}})
    if ratios:
        record(engine["results"], f"simulate / bench db NOPM, TPC-C on {args.engine}, {len(ratios)} points",
               statistics.median(ratios), min(ratios), max(ratios), {"sections": sections})


def write_tables(by_engine: dict[str, dict]) -> None:
    """bench/ACCURACY.md from each engine's sections (bench/results.json)."""
    lines = ["# Database model accuracy (bench/db_accuracy.py)", "",
             "The latest tables per engine, each with the command that made it.", ""]
    for engine, sections in by_engine.items():
        for key, part in sections.items():
            lines += [f"## {engine}, {key}: predicted from {part['predicted_from']}", "", f"    {part['command']}", "",
                      *part["table"], ""]
    (BENCH / "ACCURACY.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
