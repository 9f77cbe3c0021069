"""Nothing lost under faults: crash trials of storlab.db.crashcheck, many
per engine. Each trial copies a loaded one-warehouse server (PostgreSQL or
MariaDB, shut down cleanly) into a fresh backing folder, mounts it with
`storlab emulate`, starts the server there and runs TPC-C with
`bench db --commit-log` for a few seconds; then the emulator gets SIGKILL,
what is left of the server is killed, `storlab emulate --unmount` clears the
dead mount, a new emulator mounts the same backing folder and the server
recovers. Counted per engine: trials, acknowledged New-Orders looked up
after recovery, those lost (must be 0), mounts left behind (must be 0),
trials whose `bench db` said the database's volume went away, and the
seconds a trial takes.

The raw results replace the entry crash_trials of bench/results.json; each engine adds a
row to bench/RESULTS.md whose ratio is the share of acknowledged New-Orders
found after recovery (median over the trials, with the lowest and highest),
so 1.000 is the only passing value.

    python bench/crash_trials.py [--engine postgresql|mariadb|both] [--trials 100]
        [--seconds 3] [--minutes M]
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import host, median, record  # noqa: E402

from storlab.db import crashcheck  # noqa: E402


def trials(engine: str, n: int, seconds: float, minutes: float | None) -> dict:
    """Up to `n` emulator kills under `engine` (fewer when `minutes` run out
    first); every trial's figures, and the errors of trials that broke."""
    base = crashcheck.workdir()
    done: list[dict] = []
    broken: list[str] = []
    try:
        template = crashcheck.load_template(base, engine)
        t0 = time.monotonic()
        for k in range(n):
            if minutes is not None and time.monotonic() - t0 > minutes * 60:
                print(f"{engine}: stopping after {k} trials, past --minutes {minutes:g}", file=sys.stderr)
                break
            try:
                t = crashcheck.emulator_kill_trial(template, engine, seconds=seconds)
            except Exception as e:  # a trial that broke is reported, not hidden
                broken.append(f"trial {k + 1}: {e.__class__.__name__}: {e}"[:500])
                print(f"{engine} trial {k + 1}: BROKE: {broken[-1]}", file=sys.stderr)
                continue
            r = t.recovery
            said = t.bench.returncode == 1 and "the database's volume went away" in t.bench.stderr
            done.append({"seconds": round(t.seconds, 2), "acknowledged": r.acknowledged, "lost": len(r.missing),
                         "lost_keys": [list(x) for x in r.missing[:10]], "unfinished": r.unfinished,
                         "recovered": r.recovered, "mounts_left": t.mounts_left, "volume_went_away": said,
                         "bench_stderr": t.bench.stderr.strip()[-300:]})
            print(f"{engine} trial {k + 1}: {r.acknowledged} acknowledged, {len(r.missing)} lost, {t.mounts_left} mounts left, "
                  f"{'volume named' if said else 'VOLUME NOT NAMED'}, {t.seconds:.1f} s", file=sys.stderr)
    finally:
        crashcheck.clear(base)
    return {"trials": done, "broken": broken}


def summary(engine: str, res: dict) -> dict:
    ts = res["trials"]
    return {
        "engine": engine,
        "trials": len(ts),
        "broken": len(res["broken"]),
        "acknowledged": sum(t["acknowledged"] for t in ts),
        "lost": sum(t["lost"] for t in ts),
        "unfinished": sum(t["unfinished"] for t in ts),
        "not_recovered": sum(not t["recovered"] for t in ts),
        "mounts_left": sum(t["mounts_left"] for t in ts),
        "volume_went_away": sum(t["volume_went_away"] for t in ts),
        "median_s": median([t["seconds"] for t in ts]) if ts else 0.0,
        # Per trial: the share of its acknowledged New-Orders found after recovery.
        "found": [1 - t["lost"] / t["acknowledged"] if t["acknowledged"] else 0.0 for t in ts],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", default="both", choices=["postgresql", "mariadb", "both"])
    ap.add_argument("--trials", type=int, default=100, help="Trials per engine")
    ap.add_argument("--seconds", type=float, default=3.0, help="TPC-C before each kill (s), once 30 New-Orders are acknowledged")
    ap.add_argument("--minutes", type=float, default=None, help="Start no trial of an engine after this many minutes of its trials")
    a = ap.parse_args()
    if a.trials < 1:
        ap.error(f"--trials {a.trials}: at least 1")
    command = "python bench/crash_trials.py " + shlex.join(sys.argv[1:])
    engines = list(crashcheck.ENGINES) if a.engine == "both" else [a.engine]
    doc: dict = {"bench": "crash_trials", "command": command, "host": host(), "seconds_before_kill": a.seconds, "engines": {}}
    for engine in engines:
        res = trials(engine, a.trials, a.seconds, a.minutes)
        s = summary(engine, res)
        doc["engines"][engine] = {**{k: v for k, v in s.items() if k != "found"}, **res}
        print(f"{engine}: {s['trials']} trials ({s['broken']} broke), {s['acknowledged']:,} acknowledged New-Orders checked, "
              f"{s['lost']} lost, {s['mounts_left']} mounts left, volume named by bench db in {s['volume_went_away']}, "
              f"{s['median_s']:.1f} s per trial (median)")
        for b in res["broken"]:
            print(f"  {b}")
        if s["trials"]:
            found = s["found"]
            broke = f" ({s['broken']} broke)" if s["broken"] else ""
            record("crash_trials",
                   f"crash trials, {engine}: emulator SIGKILL mid-TPC-C, remount, recovery — {s['trials']} trials{broke}, "
                   f"{s['acknowledged']:,} acknowledged New-Orders checked, {s['lost']} lost, {s['mounts_left']} mounts left, "
                   f"bench db named the lost volume in {s['volume_went_away']}, median {s['median_s']:.1f} s a trial; "
                   f"ratio: New-Orders found / acknowledged per trial (`{command}`)",
                   median(found), min(found), max(found), doc)


if __name__ == "__main__":
    main()
