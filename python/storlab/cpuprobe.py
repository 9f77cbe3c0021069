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

The figure a profile's machine carries is the published one of its
processor (`PROCESSORS`, found by the CPUID vendor, family and model of
/proc/cpuinfo), not the probe's own reading: the published figures come
from Spare Cores' build of stress-ng (a static musl-gcc 13.2 binary), the
probe from the distribution's, and on one processor the two builds part by
half — this machine, a Zen 4 Genoa, reads about 2,700 bogo ops a second
where the Genoa m7a.4xlarge published 1,776 at a higher clock. The reading
is kept beside the figure (`cpu_speed_probe`) to show how far they part; a
processor without a published figure gets a note and no figure, and
`simulate` flags the CPU as unscaled. So does a machine without stress-ng."""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

BASIS = "stress-ng-cpu-div16-1t"

# Processors with a published figure on BASIS, by (CPUID vendor, family,
# model): the figure, where it was published, when, and on what. Genoa is
# the processor of the machine the shipped profiles were recorded on; Ice
# Lake-SP is the one of the catalog's m6i, r6i, c6i, i4i and x2iedn, whose
# figures agree within 0.1 %.
PROCESSORS: dict[tuple[str, int, int], dict[str, Any]] = {
    ("AuthenticAMD", 25, 17): {
        "processor": "AMD EPYC 4th generation (Zen 4, Genoa)", "cpu_speed": 1776.456342,
        "measured_on": "m7a.4xlarge (AMD EPYC 9R14)", "date": "2024-06-08",
        "url": "SpareCores/sc-inspector-data data/aws/m7a.4xlarge/stressngsinglecore/stderr@05f1bab05f2e42a8bbf8a1639739e9104005795a",
    },
    ("GenuineIntel", 6, 106): {
        "processor": "Intel Xeon 3rd generation (Ice Lake-SP)", "cpu_speed": 1890.889045,
        "measured_on": "m6i.4xlarge (Intel Xeon Platinum 8375C)", "date": "2024-06-13",
        "url": "SpareCores/sc-inspector-data data/aws/m6i.4xlarge/stressngsinglecore/stderr@f85ae5768774ff95064085c7776397f43b2697ab",
    },
}


def processor(cpuinfo: str | None = None) -> tuple[str, int, int] | None:
    """(vendor, family, model) of the first CPU in /proc/cpuinfo."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return None
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            if fields:
                break
            continue
        fields.setdefault(key.strip(), value.strip())
    try:
        return fields["vendor_id"], int(fields["cpu family"]), int(fields["model"])
    except (KeyError, ValueError):
        return None
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


def measure(seconds: int = RUN_S, runs: int = RUNS, cpu: tuple[str, int, int] | None = None) -> dict[str, Any]:
    """`cpu_speed` and `cpu_speed_basis`: the published figure of this
    machine's processor (`cpu`, by default /proc/cpuinfo's) with
    `cpu_speed_source`; and `cpu_speed_probe`: the probe's own reading (the
    median of `runs` runs of `seconds` each) with its tool, command and every
    run. A processor without a published figure, or a machine without
    stress-ng, gets `cpu_speed_note` and no figure."""
    cpu = cpu or processor()
    known = PROCESSORS.get(cpu) if cpu else None
    out: dict[str, Any] = {}
    if known:
        out = {"cpu_speed": known["cpu_speed"], "cpu_speed_basis": BASIS,
               "cpu_speed_source": {k: known[k] for k in ("processor", "measured_on", "date", "url")}}
    else:
        name = f"{cpu[0]} family {cpu[1]} model {cpu[2]}" if cpu else "this processor"
        out = {"cpu_speed_note": f"not scaled: {name} has no published figure on {BASIS} in storlab.cpuprobe.PROCESSORS"}
    if shutil.which("stress-ng") is None:
        out.setdefault("cpu_speed_note", "probe not run: stress-ng is not installed (Debian package stress-ng)")
        return out
    trials: list[float] = []
    tool = ""
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "metrics.yaml")
        cmd = command(seconds, path)
        for _ in range(max(1, runs)):
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 30)
                text = Path(path).read_text()
            except (OSError, subprocess.TimeoutExpired):
                return out
            ops = bogo_ops_per_second(text)
            if r.returncode != 0 or ops is None or ops <= 0:
                return out
            trials.append(ops)
            tool = tool or version(text)
    out["cpu_speed_probe"] = {
        "reading": round(statistics.median(trials), 2),
        "tool": f"stress-ng {tool}".strip(),
        "command": " ".join(command(seconds, "FILE")),
        "trials": [round(t, 2) for t in trials],
        "method": f"stress-ng CPU stressor, one instance, method div16, bogo ops per second (real time), "
                  f"median of {len(trials)} runs of {seconds} s; this build's reading, not compared with the "
                  "published figures (another build)",
    }
    return out
