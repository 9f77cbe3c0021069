"""Where the recording machine's contention belongs: on the CPU (the
penalty, as the recorder finds it) or on the WAL flush. For each way
`bench/refit_penalty.py --flush-wait` knows (none, sync-growth, joint,
measured-cpu), the profiles of finished accuracy rounds — the shipped one and
each round's profile-before/-after — get their penalty (and flush wait)
found again, and the rounds' measured points are predicted anew from them
(`bench/db_accuracy.py --predict-only --record`, each round's own protocol).
Nothing is measured again: the measured runs are the rounds'. Prints, per
way, how many points each profile predicts within the round's bound (±15 %
on this disk, ±20 % emulated) and every point's error; writes it as JSON.

    python bench/flush_wait.py --local bench/runs/2026-11-26/db_accuracy-20 \\
        --emulated bench/runs/2026-11-26/db_accuracy-23 --emulated bench/runs/2026-11-27/db_accuracy-24 \\
        --out bench/runs/2026-11-27/flush_wait.json

Local rounds are predicted with `--rampup 3 --duration 12 --warehouses 4,8`
and the VU counts they measured, emulated ones with `--rampup 30 --duration
60 --emu-setting shared_buffers=320MB` (rounds 20, 23 and on). Run on the
machine the profiles were recorded on; it works in a scratch folder."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "python/storlab/profiles/tpcc-postgresql.toml"
WAYS = ("none", "sync-growth", "joint", "measured-cpu")


def run(*args: str) -> None:
    r = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args[:2])} failed:\n{r.stderr[-2000:]}")


def refit(profiles: list[Path], way: str, out_dir: Path | None) -> None:
    where = ["--out-dir", str(out_dir)] if out_dir else ["--in-place"]
    run("bench/refit_penalty.py", *map(str, profiles), "--why", f"by bench/flush_wait.py ({way})",
        "--flush-wait", way, *where)


def points(summary: dict, key: str) -> list[dict]:
    return [{"point": p["point"], "error": round(p["error"], 4)} for p in summary.get(key, {}).get("points", [])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--local", type=Path, action="append", default=[], help="a local accuracy round's folder")
    ap.add_argument("--emulated", type=Path, action="append", default=[], help="an emulated accuracy round's folder")
    ap.add_argument("--ways", default=",".join(WAYS))
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    result: dict = {"ways": {}}
    with tempfile.TemporaryDirectory(prefix="storlab-flush-wait-") as tmp:
        for way in args.ways.split(","):
            base = Path(tmp) / way
            base.mkdir()
            refit([SHIPPED], way, base)
            shipped = base / SHIPPED.name
            rows: dict = {"shipped_profile": _concurrency(shipped), "rounds": {}}
            for kind, rounds in (("local", args.local), ("emulated", args.emulated)):
                for src in rounds:
                    dst = base / src.name
                    shutil.copytree(src, dst)
                    refit([dst / "profile-before.toml", dst / "profile-after.toml"], way, None)
                    if kind == "local":
                        measured = json.loads((dst / "measured-runs.json").read_text())
                        vus = sorted({int(v) for r in measured for v in r["nopm"]})
                        whs = sorted({int(r["warehouses"]) for r in measured})
                        run("bench/db_accuracy.py", "--predict-only", "--record", "--rampup", "3", "--duration", "12",
                            "--warehouses", ",".join(map(str, whs)), "--vus", ",".join(map(str, vus)), "--out", str(dst))
                        keys = {"before": "local-before", "after": "local-after"}
                        bound = 0.15
                    else:
                        run("bench/db_accuracy.py", "--emulated", "--no-local", "--predict-only", "--record",
                            "--rampup", "30", "--duration", "60", "--emu-setting", "shared_buffers=320MB",
                            "--emu-profile", str(shipped), "--out", str(dst))
                        keys = {"shipped": "emulated", "before": "emulated-before", "after": "emulated-after"}
                        bound = 0.20
                    summary = json.loads((dst / "summary.json").read_text())
                    entry: dict[str, Any] = {"bound": bound, "profiles": {}}
                    for name, key in keys.items():
                        pts = points(summary, key)
                        entry["profiles"][name] = {"within": sum(abs(p["error"]) <= bound for p in pts), "of": len(pts),
                                                   "points": pts}
                        if name != "shipped":
                            entry["profiles"][name]["concurrency"] = _concurrency(dst / f"profile-{name}.toml")
                    rows["rounds"][src.name] = entry
            result["ways"][way] = rows
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    for way, rows in result["ways"].items():
        print(f"\n## {way}: penalty {rows['shipped_profile']['penalty']}, flush wait {rows['shipped_profile']['flush_wait_us']}")
        for name, entry in rows["rounds"].items():
            counts = ", ".join(f"{k} {v['within']} of {v['of']}" for k, v in entry["profiles"].items())
            print(f"{name} (±{entry['bound']:.0%}): {counts}")
            for k, v in entry["profiles"].items():
                print(f"  {k}: " + "  ".join(f"{p['point']} {p['error']:+.1%}" for p in v["points"]))
    print(f"\nwritten {args.out}")


def _concurrency(path: Path) -> dict:
    import tomllib

    c = tomllib.loads(path.read_text())["concurrency"]
    return {"penalty": c.get("penalty"), "flush_wait_us": c.get("flush_wait_us")}


if __name__ == "__main__":
    main()
