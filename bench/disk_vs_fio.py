"""storlab bench disk beside fio (Debian's package), alternately, on the
same test file (fio prepares it; storlab measures it in place through the
binding's `existing_file`, which the CLI and the API do not offer).

For each CrystalDiskMark Default test, in rounds: fio, then storlab, each a
5 s time-based run of the same job (same engine class: io_uring, O_DIRECT,
1 GiB file). Prints IOPS, the storlab/fio IOPS ratio, and CPU per I/O with
every thread counted: for fio, the rusage of its whole process (its test file
prepared beforehand, so only the job runs); for storlab, the process's CPU
time over the run, measured inside storlab (io_uring workers included). Then
the null engines, which do no I/O: the framework's cost per I/O. Medians
over the rounds; the machine is shared and noisy. The raw results replace
the entry disk_vs_fio of bench/results.json; the row on bench/RESULTS.md is the median of
the eight tests' storlab/fio IOPS ratios, the spread their lowest and highest.

    python bench/disk_vs_fio.py [--path DIR] [--rounds 3] [--runtime 5]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import record  # noqa: E402

TESTS = [  # CrystalDiskMark Default (name, rw, bs, iodepth, numjobs)
    ("SEQ1M-Q8T1-read", "read", "1m", 8, 1),
    ("SEQ1M-Q1T1-read", "read", "1m", 1, 1),
    ("RND4K-Q32T1-read", "randread", "4k", 32, 1),
    ("RND4K-Q1T1-read", "randread", "4k", 1, 1),
    ("SEQ1M-Q8T1-write", "write", "1m", 8, 1),
    ("SEQ1M-Q1T1-write", "write", "1m", 1, 1),
    ("RND4K-Q32T1-write", "randwrite", "4k", 32, 1),
    ("RND4K-Q1T1-write", "randwrite", "4k", 1, 1),
]


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_fio(args: list[str]) -> tuple[dict, float]:
    c0 = children_cpu()
    out = subprocess.run(["fio", "--output-format=json", *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout), children_cpu() - c0


def fio_test(fio_file: Path, rw: str, bs: str, qd: int, nj: int, runtime: float, engine: str = "io_uring") -> dict:
    doc, cpu = run_fio(["--name=t", f"--filename={fio_file}", "--size=1g", f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}",
                        f"--numjobs={nj}", f"--ioengine={engine}", "--direct=1", f"--runtime={runtime}", "--time_based",
                        "--group_reporting"])
    j = doc["jobs"][0]
    ios = j["read"]["total_ios"] + j["write"]["total_ios"]
    return {"iops": j["read"]["iops"] + j["write"]["iops"], "ios": ios, "cpu_us_per_io": cpu * 1e6 / max(ios, 1),
            "fio_job_cpu_us_per_io": (j["usr_cpu"] + j["sys_cpu"]) / 100 * runtime * 1e6 / max(ios, 1)}


STORLAB_CHILD = """
import json, sys
from pathlib import Path
from storlab import _native
job = Path(sys.argv[2])
rec = json.loads(_native.bench_disk_json(sys.argv[1], size_bytes=1 << 30, job_name=str(job), job_text=job.read_text(),
                                         existing_file=sys.argv[3] or None))
r = rec["results"][0]
print(json.dumps({"iops": r["iops"], "cpu_us_per_io": r["cpu_us_per_io"]}))
"""


def storlab_test(fio_file: Path, dirpath: Path, name: str, rw: str, bs: str, qd: int, nj: int, runtime: float, engine: str = "io_uring") -> dict:
    """storlab on fio's own test file (the binding's `existing_file`; the
    CLI always writes a file of its own)."""
    job = dirpath.parent / "storlab-job.fio"
    job.write_text(f"[{name}]\nrw={rw}\nbs={bs}\niodepth={qd}\nnumjobs={nj}\nioengine={engine}\nruntime={runtime}\ntime_based\n")
    out = subprocess.run([sys.executable, "-c", STORLAB_CHILD, str(dirpath), str(job), str(fio_file)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--path", type=Path, default=None, help="folder on the disk to measure (default: a temp folder)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runtime", type=float, default=5.0)
    ap.add_argument("--tests", default="", help="comma-separated test names (default: all eight)")
    a = ap.parse_args()
    if not shutil.which("fio"):
        sys.exit("fio is not installed: `make bench` installs it (apt-get install fio)")
    base = Path(a.path or tempfile.mkdtemp(prefix="storlab-vs-fio-"))
    work = base / "storlab-vs-fio"
    work.mkdir(exist_ok=True)
    sdir = work / "storlab"
    sdir.mkdir(exist_ok=True)
    fio_file = work / "fio.dat"
    subprocess.run(["fio", "--name=prep", f"--filename={fio_file}", "--size=1g", "--rw=write", "--bs=1m", "--direct=1",
                    "--ioengine=io_uring", "--iodepth=8", "--output-format=json"], capture_output=True, check=True)
    results: dict[str, dict[str, list]] = {}
    ratios: dict[str, float] = {}
    try:
        wanted = [t for t in TESTS if not a.tests or t[0] in a.tests.split(",")]
        for name, rw, bs, qd, nj in wanted:
            results[name] = {"fio": [], "storlab": []}
            for _ in range(a.rounds):
                results[name]["fio"].append(fio_test(fio_file, rw, bs, qd, nj, a.runtime))
                results[name]["storlab"].append(storlab_test(fio_file, sdir, name, rw, bs, qd, nj, a.runtime))
            f = statistics.median(x["iops"] for x in results[name]["fio"])
            s = statistics.median(x["iops"] for x in results[name]["storlab"])
            fc = statistics.median(x["cpu_us_per_io"] for x in results[name]["fio"])
            sc = statistics.median(x["cpu_us_per_io"] for x in results[name]["storlab"])
            ratios[name] = s / f
            print(f"{name:18} fio {f:>10,.0f} IOPS {fc:6.2f} µs CPU/I/O | storlab {s:>10,.0f} IOPS {sc:6.2f} µs CPU/I/O | IOPS ratio {s / f:5.3f}", flush=True)
        # The null engines: no I/O, the framework's cost per I/O.
        results["null"] = {"fio": [], "storlab": []}
        for _ in range(a.rounds):
            doc, cpu = run_fio(["--name=n", "--ioengine=null", "--size=1g", "--rw=randread", "--bs=4k", "--iodepth=32",
                                f"--runtime={a.runtime}", "--time_based"])
            ios = doc["jobs"][0]["read"]["total_ios"]
            results["null"]["fio"].append({"iops": doc["jobs"][0]["read"]["iops"], "cpu_us_per_io": cpu * 1e6 / ios})
            results["null"]["storlab"].append(storlab_test(fio_file, sdir, "null", "randread", "4k", 32, 1, a.runtime, engine="null"))
        fn = statistics.median(x["cpu_us_per_io"] for x in results["null"]["fio"])
        sn = statistics.median(x["cpu_us_per_io"] for x in results["null"]["storlab"])
        print(f"{'null RND4K Q32T1':18} fio {fn * 1000:6.1f} ns CPU/I/O | storlab {sn * 1000:6.1f} ns CPU/I/O | cost ratio {sn / fn:5.3f}")
    finally:
        # Only what the script made: its work folder, and the temp folder if it chose one.
        shutil.rmtree(work if a.path else base, ignore_errors=True)
    r = list(ratios.values())
    record("disk_vs_fio", f"bench disk / fio IOPS, {len(r)} CrystalDiskMark tests, {a.rounds} rounds",
           statistics.median(r), min(r), max(r), {"ratios": ratios, "runs": results})


if __name__ == "__main__":
    main()
