"""This machine's per-core CPU speed on the catalog's common basis: stress-ng's
CPU stressor, one instance, method div16, bogo operations per second (real
time). A profile records it in `[provenance] machine` (`cpu_speed`,
`cpu_speed_basis`, `cpu_speed_probe`) so `simulate` can scale each
transaction's CPU by a catalog host's figure on the same basis over this one
(docs/dbmodel.md, *CPU speed*).

Why this basis: Spare Cores publishes the same test (`stress-ng --cpu 1
--cpu-method div16`, stress-ng 0.17.08) for every EC2 and Azure size, and
stress-ng is a Debian package. The div16 method and its bogo-op scale
(1484.50 / 8843.39 a call) are the same in Debian bookworm's 0.15.06 and in
0.17.08, so the figures compare. What it measures is narrow (16-bit integer
division); docs/dbmodel.md says what that means for the ratio.

Without stress-ng on PATH the probe returns a note and no figure: the
profile then has no `cpu_speed`, and `simulate` flags the CPU as unscaled."""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

BASIS = "stress-ng-cpu-div16-1t"
# Three runs of 3 s: the recorder's whole probe stays under 10 s.
RUN_S = 3
RUNS = 3


def command(seconds: int, yaml_path: str) -> list[str]:
    return ["stress-ng", "--metrics", "--cpu", "1", "--cpu-method", "div16", "-t", str(seconds), "-Y", yaml_path]


def bogo_ops_per_second(text: str) -> float | None:
    """`bogo-ops-per-second-real-time` of a stress-ng `-Y` YAML file."""
    m = re.search(r"bogo-ops-per-second-real-time:\s*([0-9.]+)", text)
    return float(m.group(1)) if m else None


def version(text: str) -> str:
    m = re.search(r"stress-ng-version:\s*(\S+)", text)
    return m.group(1) if m else ""


def measure(seconds: int = RUN_S, runs: int = RUNS) -> dict[str, Any]:
    """`cpu_speed` (the median of `runs` runs of `seconds` each, bogo ops
    per second), `cpu_speed_basis` and `cpu_speed_probe` (tool, command,
    every run); or only `cpu_speed_note` when stress-ng is missing or fails."""
    if shutil.which("stress-ng") is None:
        return {"cpu_speed_note": "not measured: stress-ng is not installed (Debian package stress-ng)"}
    trials: list[float] = []
    tool = ""
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "metrics.yaml")
        cmd = command(seconds, out)
        for _ in range(max(1, runs)):
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 30)
                text = Path(out).read_text()
            except (OSError, subprocess.TimeoutExpired) as e:
                return {"cpu_speed_note": f"not measured: {' '.join(cmd[:-2])} failed ({e})"}
            ops = bogo_ops_per_second(text)
            if r.returncode != 0 or ops is None or ops <= 0:
                return {"cpu_speed_note": f"not measured: {' '.join(cmd[:-2])} gave no bogo ops (exit {r.returncode})"}
            trials.append(ops)
            tool = tool or version(text)
    return {
        "cpu_speed": round(statistics.median(trials), 2),
        "cpu_speed_basis": BASIS,
        "cpu_speed_probe": {
            "tool": f"stress-ng {tool}".strip(),
            "command": " ".join(command(seconds, "FILE")),
            "trials": [round(t, 2) for t in trials],
            "method": f"stress-ng CPU stressor, one instance, method div16, bogo ops per second (real time), "
                      f"median of {len(trials)} runs of {seconds} s",
        },
    }
