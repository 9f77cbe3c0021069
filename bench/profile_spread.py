"""A recorded profile with its recording's spread added, as the recorder
now writes it (`throughput_stdev`): for each of the profile's counts, the
sample standard deviation of the sweep's runs' client transactions per
second (0 for a single run), from the run record that `bench db
--profile-out ... --json` printed beside it. For profiles recorded before
the field; nothing else of the profile changes.

    python bench/profile_spread.py PROFILE.toml RUN.json OUT.toml
"""

from __future__ import annotations

import json
import statistics
import sys
import tomllib
from pathlib import Path

from storlab.db.profile import to_toml


def main() -> None:
    profile, run, out = (Path(a) for a in sys.argv[1:4])
    p = tomllib.loads(profile.read_text())
    runs = json.loads(run.read_text())["runs"]
    by: dict[int, list[float]] = {}
    for r in runs:
        by.setdefault(r["vus"], []).append(r["tpm_client"] / 60.0)
    c = p["concurrency"]
    c["throughput_stdev"] = [statistics.stdev(by[int(v)]) if len(by[int(v)]) > 1 else 0.0 for v in c["vus"]]
    # The medians it was recorded from, as a check that the runs are its own.
    for v, x in zip(c["vus"], c["throughput"]):
        assert abs(statistics.median(by[int(v)]) - x) < 1e-3 * x, (v, x)
    out.write_text(to_toml(p))
    print(f"{out}: throughput_stdev = {[round(x, 1) for x in c['throughput_stdev']]}")


if __name__ == "__main__":
    main()
