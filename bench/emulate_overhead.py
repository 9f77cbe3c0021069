"""The emulator's own cost beside Debian's bindfs, a plain FUSE pass-through:
`storlab emulate --no-caps` (no caps, no latency) and `bindfs --multithreaded`
of the same kind of backing folder, alternately, with fio 4 KiB random reads
(O_DIRECT) at QD1 (psync) and QD32 (libaio), and the native folder for
reference. Medians over the rounds and the storlab/bindfs ratio of medians
(target: at least 1.0).

    python bench/emulate_overhead.py [--rounds 5] [--runtime 10] [--dir DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _emu import Bindfs, Emulated, fio, host, median, out_path, prepare, spread  # noqa: E402

SCENARIO = """
title = "pass-through only (the caps are switched off with --no-caps)"
[configs.any]
host = "aws/ec2/r5b.24xlarge"
[[configs.any.pools]]
device = "aws/ebs/gp3"
size_gib = 100
"""

JOBS = [("RND4K-Q1T1-read", "randread", "4k", 1), ("RND4K-Q32T1-read", "randread", "4k", 32)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=float, default=10)
    ap.add_argument("--dir", type=Path, default=None, help="Folder on the disk to use (default: a temp folder)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="emu-overhead-", dir=a.dir))
    scenario = base / "s.toml"
    scenario.write_text(SCENARIO)
    raw = {side: {j[0]: [] for j in JOBS} for side in ("native", "bindfs", "storlab")}
    try:
        native = base / "native"
        native.mkdir()
        prepare(native / "f")
        for r in range(a.rounds):
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
        for name, *_ in JOBS:
            med = {s: median([x["iops"] for x in raw[s][name]]) for s in raw}
            summary[name] = {
                "median_iops": med,
                "spread_iops": {s: spread([x["iops"] for x in raw[s][name]]) for s in raw},
                "median_lat_mean_us": {s: median([x["lat_mean_us"] for x in raw[s][name]]) for s in raw},
                "storlab_over_bindfs": med["storlab"] / med["bindfs"],
            }
            print(f"{name}: storlab {med['storlab']:.0f} IOPS, bindfs {med['bindfs']:.0f}, native {med['native']:.0f}; "
                  f"storlab/bindfs {med['storlab'] / med['bindfs']:.3f}")
        doc = {"bench": "emulate_overhead", "rounds": a.rounds, "runtime_s": a.runtime, "host": host(), "summary": summary, "raw": raw}
        p = out_path(a.out, "emulate_overhead.json")
        p.write_text(json.dumps(doc, indent=1))
        print(f"written {p}", file=sys.stderr)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
