"""Recorded profiles with their concurrency penalty found again by the
model as it is now, from the throughput and durable write they recorded
(`storlab.db.profile.refit_penalty`, as the recorder finds it). Everything
else in each file is kept; the method says it was found again. For
predicting rounds recorded before a change to the model with that model.

    python bench/refit_penalty.py PROFILE.toml [PROFILE.toml ...] --why "after ..." [--in-place | --out-dir DIR]
        [--flush-wait none|sync-growth|joint|measured-cpu]

`--flush-wait` puts part of the contention on each WAL flush instead of
the CPU, one of three ways (`penalty_on_recording_machine`): a measurement
of where it belongs, not what the recorder writes (none).

Run it on the machine the profiles were recorded on (the penalty's model
runs on its vCPUs and memory)."""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

from storlab.db import profile as dbprofile


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("profiles", type=Path, nargs="+")
    ap.add_argument("--why", required=True, help="the change the penalty is found again for, in the method's words")
    ap.add_argument("--flush-wait", choices=dbprofile.FLUSH_WAITS, default="none")
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--in-place", action="store_true")
    where.add_argument("--out-dir", type=Path)
    args = ap.parse_args()
    for path in args.profiles:
        prof = tomllib.loads(path.read_text())
        if "penalty_durable_write_us" not in prof.get("concurrency", {}):
            sys.exit(f"{path}: no concurrency.penalty_durable_write_us — record it again instead")
        was = prof["concurrency"].get("penalty")
        dbprofile.refit_penalty(prof, args.why, args.flush_wait)
        out = path if args.in_place else args.out_dir / path.name
        out.parent.mkdir(parents=True, exist_ok=True)
        dbprofile.write(out, prof)
        waits = prof["concurrency"].get("flush_wait_us")
        print(f"{out}: penalty {prof['concurrency']['penalty']} (was {was})" + (f", flush_wait_us {waits}" if waits else ""))


if __name__ == "__main__":
    main()
