"""The emulator's own cost beside Debian's bindfs, a plain FUSE pass-through:
`storlab emulate --no-caps` (no caps, no latency) and `bindfs --multithreaded`
of the same kind of backing folder, alternately, with fio 4 KiB random reads
(O_DIRECT) at QD1 (psync) and QD32 (libaio), and the native folder for
reference. Medians over the rounds and the storlab/bindfs ratio of medians
(target: at least 1.0).

With `--what tpcc`: TPC-C NOPM of a managed PostgreSQL cluster whose data
directory sits on each pass-through in turn. One warehouse is loaded once on
the plain disk and shut down cleanly; every run starts from a fresh copy of
that cluster in the pass-through's backing folder (so no run inherits
another's orders), then `storlab bench db` runs the same users, warm-up and
window on it.

The raw results replace the entry emulate_overhead of bench/results.json; the row on
bench/RESULTS.md is the median of the storlab/bindfs ratios (each fio job's,
and TPC-C's with --what tpcc) with their lowest and highest.

    python bench/emulate_overhead.py [--what fio,tpcc] [--rounds 5] [--runtime 10]
        [--vus 4] [--rampup 10] [--duration 30] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import STORLAB, Bindfs, Emulated, fio, host, median, prepare, record, spread  # noqa: E402

SCENARIO = """
title = "pass-through only (the caps are switched off with --no-caps)"
[configs.any]
host = "aws/ec2/r5b.24xlarge"
[[configs.any.pools]]
device = "aws/ebs/gp3"
size_gib = 100
"""

JOBS = [("RND4K-Q1T1-read", "randread", "4k", 1), ("RND4K-Q32T1-read", "randread", "4k", 32)]


def _load_template(base: Path) -> Path:
    """One TPC-C warehouse in a kept managed cluster on the plain disk."""
    t = base / "template"
    r = subprocess.run([*STORLAB, "bench", "db", "--workload", "tpcc", "--db", "managed-postgres", "--dir", str(t), "--keep",
                        "--warehouses", "1", "--vus", "1", "--rampup", "0", "--duration", "1", "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"loading the template cluster failed: {r.stderr[-1000:]}")
    return t


def _fresh(template: Path, backing: Path) -> None:
    shutil.rmtree(backing, ignore_errors=True)
    subprocess.run(["cp", "-a", str(template), str(backing)], check=True)


def _tpcc(path: Path, a: argparse.Namespace) -> dict:
    r = subprocess.run([*STORLAB, "bench", "db", "--workload", "tpcc", "--db", "managed-postgres", "--dir", str(path), "--keep",
                        "--warehouses", "1", "--vus", str(a.vus), "--rampup", str(a.rampup), "--duration", str(a.duration), "--json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"bench db on {path} failed: {r.stderr[-1000:]}")
    res = json.loads(r.stdout)["results"][0]
    return {"nopm": res["nopm"], "tpm": res.get("tpm")}


def tpcc_rounds(base: Path, scenario: Path, a: argparse.Namespace) -> dict:
    template = _load_template(base)
    raw: dict[str, list] = {"bindfs": [], "storlab": []}
    for r in range(a.rounds):
        for side in ("bindfs", "storlab"):
            if side == "bindfs":
                _fresh(template, base / "tpcc-bind-backing")
                m = Bindfs(base / "tpcc-bind-backing", base / "tpcc-bind-mnt")
            else:
                _fresh(template, base / "tpcc-storlab-backing")
                m = Emulated(base, scenario, "any", "--no-caps", "--adopt-backing", tag="tpcc-storlab")
            try:
                res = _tpcc(m.mount, a)
            finally:
                m.stop()
            raw[side].append(res)
            print(f"round {r + 1} {side:8s} TPC-C {a.vus} VUs: {res['nopm']:10.0f} NOPM", file=sys.stderr)
    med = {s: median([x["nopm"] for x in raw[s]]) for s in raw}
    out = {"median_nopm": med, "spread_nopm": {s: spread([x["nopm"] for x in raw[s]]) for s in raw},
           "storlab_over_bindfs": med["storlab"] / med["bindfs"], "vus": a.vus, "rampup_s": a.rampup,
           "duration_s": a.duration, "warehouses": 1, "raw": raw}
    print(f"TPC-C NOPM: storlab {med['storlab']:.0f} {spread([x['nopm'] for x in raw['storlab']])}, bindfs {med['bindfs']:.0f} "
          f"{spread([x['nopm'] for x in raw['bindfs']])}; storlab/bindfs {out['storlab_over_bindfs']:.3f}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=float, default=10)
    ap.add_argument("--dir", type=Path, default=None, help="Folder on the disk to use (default: a temp folder)")
    ap.add_argument("--what", default="fio", help="fio, tpcc or fio,tpcc")
    ap.add_argument("--vus", type=int, default=4, help="TPC-C virtual users")
    ap.add_argument("--rampup", type=float, default=10, help="TPC-C warm-up (s)")
    ap.add_argument("--duration", type=float, default=30, help="TPC-C measured window (s)")
    a = ap.parse_args()
    what = set(a.what.split(","))
    if not what <= {"fio", "tpcc"}:
        ap.error(f"--what {a.what}: fio, tpcc or fio,tpcc")
    base = Path(tempfile.mkdtemp(prefix="emu-overhead-", dir=a.dir))
    # PostgreSQL runs as its own user when storlab runs as root: it must enter.
    base.chmod(0o755)
    scenario = base / "s.toml"
    scenario.write_text(SCENARIO)
    raw = {side: {j[0]: [] for j in JOBS} for side in ("native", "bindfs", "storlab")}
    try:
        doc: dict = {"bench": "emulate_overhead", "rounds": a.rounds, "host": host()}
        if "tpcc" in what:
            doc["tpcc"] = tpcc_rounds(base, scenario, a)
        native = base / "native"
        native.mkdir()
        if "fio" in what:
            prepare(native / "f")
        for r in range(a.rounds if "fio" in what else 0):
            for side in ("bindfs", "storlab", "native"):
                if side == "bindfs":
                    m = Bindfs(base / "bind-backing", base / "bind-mnt")
                    path = m.mount
                elif side == "storlab":
                    m = Emulated(base, scenario, "any", "--no-caps", "--adopt-backing", tag="storlab")
                    path = m.mount
                else:
                    m, path = None, native
                try:
                    if not (path / "f").exists():
                        prepare(path / "f")
                    for name, rw, bs, qd in JOBS:
                        res = fio(path / "f", rw, bs, qd, a.runtime)
                        raw[side][name].append(res)
                        print(f"round {r + 1} {side:8s} {name}: {res['iops']:10.0f} IOPS  mean {res['lat_mean_us']:7.1f} µs  p99 {res['lat_p99_us']:8.1f} µs", file=sys.stderr)
                finally:
                    if m:
                        m.stop()
        summary = {}
        for name, *_ in (JOBS if "fio" in what else []):
            med = {s: median([x["iops"] for x in raw[s][name]]) for s in raw}
            summary[name] = {
                "median_iops": med,
                "spread_iops": {s: spread([x["iops"] for x in raw[s][name]]) for s in raw},
                "median_lat_mean_us": {s: median([x["lat_mean_us"] for x in raw[s][name]]) for s in raw},
                "storlab_over_bindfs": med["storlab"] / med["bindfs"],
            }
            print(f"{name}: storlab {med['storlab']:.0f} IOPS, bindfs {med['bindfs']:.0f}, native {med['native']:.0f}; "
                  f"storlab/bindfs {med['storlab'] / med['bindfs']:.3f}")
        if "fio" in what:
            doc.update({"runtime_s": a.runtime, "summary": summary, "raw": raw})
        ratios = {name: x["storlab_over_bindfs"] for name, x in summary.items()}
        if "tpcc" in doc:
            ratios["TPC-C NOPM"] = doc["tpcc"]["storlab_over_bindfs"]
        r = list(ratios.values())
        record("emulate_overhead", f"emulate --no-caps / bindfs ({', '.join(ratios)}), {a.rounds} rounds",
               median(r), min(r), max(r), doc)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
