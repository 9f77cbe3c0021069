"""Fuzzing at length: every input format storlab reads, mutated from the
project's own test data, read or refused in one clear line — never a
panic, a traceback or an internal error, and never nonsense accepted (an
imported figure that is negative, not a number or out of its range).

The same targets `make test` runs briefly, run here with many more inputs:
the Rust mutation fuzzers (crates/*/tests/fuzz.rs: scenarios, catalog
overlays, fio job files, database profiles, scenario workloads, run
records, every import format) with `--cases` inputs each, and the
hypothesis tests of the Python entry points (tests/fuzz: limits,
simulate's inline jobs, report's and the advice page's readers, the VU
list and bench disk's option strings, advise's question) with `--examples`
each. It prints each target's count and adds one row to bench/RESULTS.md:
the inputs run, and the share handled cleanly (1.000 is the only passing
value).

    python bench/fuzz.py [--cases 100000] [--examples 2000] [--seed N]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import record  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CRATES = ["storlab-workload", "storlab-model", "storlab-record"]
RUST_LINE = re.compile(r"^fuzz (\S+): (\d+) inputs, (\d+) read, (\d+) refused, (\d+) panics$", re.M)
HYP_TEST = re.compile(r"^tests/fuzz/\S+::(\w+):$")
HYP_COUNT = re.compile(r"- (\d+) passing, (\d+) failing, and (\d+) invalid")


def rust(cases: int, seed: int | None) -> tuple[list[dict], str]:
    env = {**os.environ, "STORLAB_FUZZ_CASES": str(cases)}
    if seed is not None:
        env["STORLAB_FUZZ_SEED"] = str(seed)
    cmd = ["cargo", "test", "--profile", "tests", *sum((["-p", c] for c in CRATES), []), "--test", "fuzz", "--", "--nocapture"]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    found = [{"target": m[1], "inputs": int(m[2]), "read": int(m[3]), "refused": int(m[4]), "broken": int(m[5])}
             for m in RUST_LINE.finditer(r.stderr)]
    return found, "" if r.returncode == 0 else (r.stdout + r.stderr)[-3000:]


def python(examples: int, seed: int | None) -> tuple[list[dict], str]:
    env = {**os.environ, "HYPOTHESIS_PROFILE": "fuzz", "STORLAB_FUZZ_EXAMPLES": str(examples)}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", "tests/fuzz",
           "--hypothesis-show-statistics"]
    if seed is not None:
        cmd.append(f"--hypothesis-seed={seed}")
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    # Hypothesis's statistics: a test's name, then its phases' counts.
    found: list[dict] = []
    for line in r.stdout.splitlines():
        if m := HYP_TEST.match(line):
            found.append({"target": m[1], "inputs": 0, "read_or_refused": 0, "broken": 0})
        elif (c := HYP_COUNT.search(line)) and found:
            found[-1]["inputs"] += int(c[1]) + int(c[2])
            found[-1]["read_or_refused"] += int(c[1])
            found[-1]["broken"] += int(c[2])
    return found, "" if r.returncode == 0 else r.stdout[-3000:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=100_000, help="inputs per Rust target")
    ap.add_argument("--examples", type=int, default=2000, help="examples per hypothesis test")
    ap.add_argument("--seed", type=int, default=None, help="another seed than the fixed one")
    a = ap.parse_args()
    t0 = time.monotonic()
    rs, rfail = rust(a.cases, a.seed)
    t1 = time.monotonic()
    ps, pfail = python(a.examples, a.seed)
    t2 = time.monotonic()
    for x in rs:
        print(f"rust   {x['target']:<10} {x['inputs']:>9,} inputs  {x['read']:>9,} read  {x['refused']:>9,} refused  {x['broken']} broken")
    for x in ps:
        print(f"python {x['target']:<58} {x['inputs']:>7,} inputs  {x['broken']} broken")
    for what, fail in (("rust", rfail), ("python", pfail)):
        if fail:
            print(f"{what} fuzzing FAILED:\n{fail}", file=sys.stderr)
    total = sum(x["inputs"] for x in rs + ps)
    broken = sum(x["broken"] for x in rs + ps) + (1 if rfail or pfail else 0)
    clean = (total - broken) / total if total else 0.0
    print(f"{total:,} inputs in {t2 - t0:.0f} s (Rust {t1 - t0:.0f} s, Python {t2 - t1:.0f} s); {broken} broken")
    what = (f"fuzzing: {total:,} mutated inputs of every format ({len(rs)} Rust targets × {a.cases:,}, {len(ps)} hypothesis "
            f"tests × {a.examples:,}), {broken} panics, internal errors or nonsense accepted, {t2 - t0:.0f} s; ratio: "
            f"share handled cleanly (`python bench/fuzz.py --cases {a.cases} --examples {a.examples}`)")
    record("fuzz", what, clean, clean, clean, {"rust": rs, "python": ps, "seed": a.seed, "seconds": round(t2 - t0, 1),
                                               "failed": bool(rfail or pfail)})
    return 0 if not (rfail or pfail) and total else 1


if __name__ == "__main__":
    sys.exit(main())
