"""The ground floor: what storlab knows of itself and of the machine it runs
on — its version and commit, the CPUs it may use, the machine's processor
and memory, the file system under a path — and the envelope every record
gets. Imports nothing of storlab but the native module."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from storlab import _native

# The shipped database workload profiles (`[workload.database] profile = NAME`).
PROFILES = Path(__file__).resolve().parent / "profiles"


@functools.cache
def _git_sha() -> str:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=5, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"


def tool_info() -> dict[str, str]:
    return {"name": "storlab", "version": _native.__version__, "git_sha": _git_sha()}


def finish_record(record: dict[str, Any], host: dict[str, Any] | None, inputs: dict[str, Any]) -> dict[str, Any]:
    """What the front end adds to every record, in one place: the tool, the
    machine and the resolved inputs."""
    out = {"schema_version": record.pop("schema_version"), "tool": tool_info(), **record}
    if host is not None:
        out["host_info"] = host
    out["inputs"] = inputs
    return out


def usable_cpus() -> int:
    """The CPUs this process, and the server it starts, may run on: its
    affinity (`taskset`, a cgroup's cpuset), not every CPU of the machine."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 0


def machine() -> dict[str, Any]:
    """This machine as a profile's provenance gives it: usable CPUs, the
    processor's model name, memory and kernel."""
    m: dict[str, Any] = {"cpus": usable_cpus(), "cpu_model": "", "memory_bytes": 0, "kernel": platform.release()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                m["cpu_model"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        m["memory_bytes"] = int(Path("/proc/meminfo").read_text().split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return m


def host_info(path: str | os.PathLike | None = None) -> dict[str, Any]:
    """The machine a measurement ran on: kernel, CPUs, memory, and the file
    system and device under `path`."""
    info: dict[str, Any] = {"kernel": platform.release(), "machine": platform.machine(), "cpus": usable_cpus()}
    try:
        with open("/proc/meminfo") as f:
            info["memory_bytes"] = int(f.readline().split()[1]) * 1024
    except OSError:
        pass
    if path is not None:
        target = str(Path(path).resolve())
        best = ("", "", "")
        try:
            with open("/proc/mounts") as f:
                for line in f:
                    dev, mnt, fs = line.split()[:3]
                    if (target == mnt or target.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best[1]):
                        best = (dev, mnt, fs)
        except OSError:
            pass
        info.update({"path": target, "device": best[0], "mount": best[1], "filesystem": best[2]})
    return info
