"""This machine's per-core CPU speed on the catalog's common basis: the
single-thread sysbench CPU test, events per second. A profile records it in
`[provenance] machine` (`cpu_speed`, `cpu_speed_basis`, `cpu_speed_probe`)
so `simulate` can scale each transaction's CPU by a catalog host's figure on
the same basis over this one (docs/dbmodel.md, *CPU speed*).

Why sysbench: it is a Debian package (`sysbench`, 1.0.x), it runs in a few
seconds, and its CPU test with these options is what VPS and cloud reviews
publish for one thread, so a host's figure and the recorder's come from the
same program. What it measures is narrow (64-bit integer division in a
prime-checking loop); docs/dbmodel.md says what that means for the ratio.

Without sysbench on PATH the probe returns a note and no figure: the profile
then has no `cpu_speed`, and `simulate` flags the CPU as unscaled."""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
from typing import Any

BASIS = "sysbench-cpu-1t"
MAX_PRIME = 10_000
# Three runs of 3 s: the recorder's whole probe stays under 10 s.
RUN_S = 3
RUNS = 3


def command(seconds: int) -> list[str]:
    return ["sysbench", "cpu", "--threads=1", f"--cpu-max-prime={MAX_PRIME}", f"--time={seconds}", "run"]


def events_per_second(text: str) -> float | None:
    """The "events per second" of one `sysbench cpu run` output."""
    m = re.search(r"events per second:\s*([0-9.]+)", text)
    return float(m.group(1)) if m else None


def version(text: str) -> str:
    m = re.search(r"sysbench\s+([0-9][0-9A-Za-z.+~-]*)", text)
    return m.group(1) if m else ""


def measure(seconds: int = RUN_S, runs: int = RUNS) -> dict[str, Any]:
    """`cpu_speed` (the median of `runs` runs of `seconds` each, events per
    second), `cpu_speed_basis` and `cpu_speed_probe` (tool, command, every
    run); or only `cpu_speed_note` when sysbench is missing or fails."""
    if shutil.which("sysbench") is None:
        return {"cpu_speed_note": "not measured: sysbench is not installed (Debian package sysbench)"}
    cmd = command(seconds)
    trials: list[float] = []
    tool = ""
    for _ in range(max(1, runs)):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 30)
        except (OSError, subprocess.TimeoutExpired) as e:
            return {"cpu_speed_note": f"not measured: {' '.join(cmd)} failed ({e})"}
        eps = events_per_second(r.stdout)
        if r.returncode != 0 or eps is None or eps <= 0:
            return {"cpu_speed_note": f"not measured: {' '.join(cmd)} gave no events per second (exit {r.returncode})"}
        trials.append(eps)
        tool = tool or version(r.stdout)
    return {
        "cpu_speed": round(statistics.median(trials), 2),
        "cpu_speed_basis": BASIS,
        "cpu_speed_probe": {
            "tool": f"sysbench {tool}".strip(),
            "command": " ".join(cmd),
            "trials": [round(t, 2) for t in trials],
            "method": f"single-thread sysbench CPU test, events per second, median of {len(trials)} runs of {seconds} s",
        },
    }
