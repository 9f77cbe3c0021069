"""`storlab calibrate` and `bench disk --calibrate-out`: fit latency to the
queue-depth-1 jobs, keep the vendor caps, and predict the QD32 jobs with
`storlab simulate` of the calibrated device (hold-out: the QD32 jobs are
not used by the fit)."""

from __future__ import annotations

import csv
import io
import json
import math
import tomllib

import pytest

from conftest import ROOT

GP3 = """
[workload]
{jobs}
[configs.gp3]
host = "aws/ec2/r5b.24xlarge"
[[configs.gp3.pools]]
device = "aws/ebs/gp3"
size_gib = 500
"""

# Each job alone on the volume, as the measured run had it (inline jobs
# without stonewall would share the volume, as fio's do).
JOB = """[[workload.jobs]]
rw = "{rw}"
bs = "4k"
iodepth = {qd}
runtime_s = 5
stonewall = true
"""

Z99 = 2.3263478740408408


def lognormal_mean(median: float, p99: float) -> float:
    sigma = math.log(p99 / median) / Z99
    return median * math.exp(sigma * sigma / 2)


def hand_record() -> dict:
    """A gp3 volume measured by hand-chosen numbers. QD1: service time
    log-normal with median 500 µs / p99 1,500 µs (read) and 700 / 2,100 µs
    (write); its mean is median × exp(σ²/2), σ = ln 3 / 2.326 = 0.472, so
    559.0 µs and 782.6 µs, and one I/O in flight gives 1 / mean IOPS. QD32:
    gp3's baseline cap, 3,000 IOPS (EBS user guide: gp3 3,000 IOPS
    included), binds; by Little's law 32 in flight take 32 / 3,000 s =
    10,667 µs each."""
    rows = []
    for rw, med, p99 in (("read", 500.0, 1500.0), ("write", 700.0, 2100.0)):
        mean = lognormal_mean(med, p99)
        rows.append({"config": "gp3", "job": f"RND4K-Q1T1-{rw}", "iops": 1e6 / mean, "bw_bytes_s": 4096e6 / mean,
                     "read_iops": 1e6 / mean if rw == "read" else 0, "write_iops": 1e6 / mean if rw == "write" else 0,
                     "lat_mean_us": mean, "lat_p50_us": med, "lat_p99_us": p99, "outstanding": 1, "binding": "latency"})
        rows.append({"config": "gp3", "job": f"RND4K-Q32T1-{rw}", "iops": 3000.0, "bw_bytes_s": 3000 * 4096.0,
                     "read_iops": 3000.0 if rw == "read" else 0, "write_iops": 3000.0 if rw == "write" else 0,
                     "lat_mean_us": 32 / 3000 * 1e6, "lat_p50_us": 32 / 3000 * 1e6, "lat_p99_us": 0,
                     "outstanding": 32, "binding": "device"})
    return {"schema_version": 1, "engine": "measure", "results": rows, "series": []}


def predict(storlab, scenario, overlay, jobs: str, name: str) -> dict:
    r = storlab("simulate", str(scenario(GP3.format(jobs=jobs), name)), "--json", "--catalog", str(overlay))
    assert r.returncode == 0, r.stderr
    return {x["job"]: x for x in json.loads(r.stdout)["results"]}


def test_hand_made_gp3_record_predicts_its_qd32_jobs(storlab, scenario, tmp_path):
    rec = tmp_path / "gp3-run.json"
    rec.write_text(json.dumps(hand_record()))
    sc = scenario(GP3.format(jobs=""))
    out = tmp_path / "overlay.toml"
    r = storlab("calibrate", str(rec), "--scenario", str(sc), "--config", "gp3", "--catalog-out", str(out))
    assert r.returncode == 0, r.stderr
    cat = tomllib.loads(out.read_text())
    lat = cat["latency"][0]
    assert lat["devices"] == ["aws/ebs/gp3"]
    # At QD1 the measured percentiles are the service time's.
    assert (lat["read_median_us"], lat["read_p99_us"], lat["write_median_us"], lat["write_p99_us"]) == (500, 1500, 700, 2100)
    assert lat["note"] == "calibrated from gp3-run.json (record), jobs RND4K-Q1T1-read, RND4K-Q1T1-write"
    assert "device" not in cat  # vendor caps are left alone
    jobs = "".join(JOB.format(rw=rw, qd=qd) for qd in (1, 32) for rw in ("randread", "randwrite"))
    got = predict(storlab, scenario, out, jobs, "predict.toml")
    for row in hand_record()["results"]:
        p = got[row["job"]]
        assert abs(p["iops"] / row["iops"] - 1) < 0.15, (row["job"], p["iops"], row["iops"])
        assert abs(p["lat_mean_us"] / row["lat_mean_us"] - 1) < 0.15, (row["job"], p["lat_mean_us"], row["lat_mean_us"])


def test_qd1_jobs_that_ran_beside_others_are_refused_and_csv_prints_the_fit(storlab, scenario, tmp_path):
    """A `bench disk` record whose jobs ran at once (a job file without
    stonewall): the QD1 read's window, 0-1 s, overlaps the QD32 read's, so
    its latency is not queue-depth-1 latency and calibrate says so. The same
    jobs one after another (0-1 s, 1-2 s, ...) are accepted, and --csv
    prints the fitted figures: the hand record's QD1 p50/p99, 500/1,500 µs
    read and 700/2,100 µs write."""
    rec = hand_record()
    rec["runs"] = [{"job": r["job"], "runs": [{"start_s": 0.0, "elapsed_s": 1.0}]} for r in rec["results"]]
    f = tmp_path / "together.json"
    f.write_text(json.dumps(rec))
    sc = scenario(GP3.format(jobs=""))
    out = tmp_path / "o.toml"
    r = storlab("calibrate", str(f), "--scenario", str(sc), "--config", "gp3", "--catalog-out", str(out))
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "RND4K-Q1T1-read ran at the same time as RND4K-Q1T1-write, RND4K-Q32T1-read, RND4K-Q32T1-write" in r.stderr
    assert "stonewall" in r.stderr and not out.exists()
    rec["runs"] = [{"job": r["job"], "runs": [{"start_s": float(i), "elapsed_s": 1.0}]} for i, r in enumerate(rec["results"])]
    f.write_text(json.dumps(rec))
    r = storlab("calibrate", str(f), "--scenario", str(sc), "--config", "gp3", "--catalog-out", str(out), "--csv")
    assert r.returncode == 0, r.stderr
    (row,) = list(csv.DictReader(io.StringIO(r.stdout)))
    assert row["device"] == "aws/ebs/gp3"
    assert [float(row[k]) for k in ("read_median_us", "read_p99_us", "write_median_us", "write_p99_us")] == [500, 1500, 700, 2100]


def test_fio_json_and_crystaldiskmark_text_are_read(tmp_path, scenario, storlab):
    sc = scenario(GP3.format(jobs=""))
    # fio --output-format=json: completion latency percentiles in ns.
    fio = {"fio version": "fio-3.36", "global options": {"iodepth": "1"}, "jobs": [
        {"jobname": "q1", "job options": {"rw": "randrw"},
         "read": {"iops": 2000.0, "bw_bytes": 8192000, "total_ios": 2000,
                  "clat_ns": {"mean": 480000.0, "percentile": {"50.000000": 450000, "99.000000": 1200000}}},
         "write": {"iops": 1000.0, "bw_bytes": 4096000, "total_ios": 1000,
                   "clat_ns": {"mean": 990000.0, "percentile": {"50.000000": 900000, "99.000000": 2700000}}}}]}
    f = tmp_path / "fio.json"
    f.write_text(json.dumps(fio))
    out = tmp_path / "o1.toml"
    r = storlab("calibrate", str(f), "--scenario", str(sc), "--config", "gp3", "--catalog-out", str(out))
    assert r.returncode == 0, r.stderr
    lat = tomllib.loads(out.read_text())["latency"][0]
    assert (lat["read_median_us"], lat["read_p99_us"], lat["write_median_us"], lat["write_p99_us"]) == (450, 1200, 900, 2700)
    # CrystalDiskMark gives a mean only: median = mean / exp(σ²/2) with σ from
    # the catalog's gp3 p99/median (1,090 / 709 read: σ = ln 1.53738 / 2.326 =
    # 0.18488, exp(σ²/2) = 1.017237), so 1,017.2 µs mean → 1,000 µs median
    # and p99 = 1.53738 × 1,000 = 1,537.4 µs. Writes keep 4,000 / 800.
    ratio = math.exp((math.log(1090 / 709) / Z99) ** 2 / 2)
    wratio = math.exp((math.log(5) / Z99) ** 2 / 2)
    cdm = ("------------------------------------------------------------------------------\n"
           "CrystalDiskMark 8.0.4 x64 (C) 2007-2021 hiyohiyo\n"
           "[Read]\n"
           f"  RND4K Q32T1 :    12.288 MB/s [   3000.0 IOPS] < 10666.67 us>\n"
           f"  RND4K  Q1T1 :     3.224 MB/s [    787.1 IOPS] < {1000 * ratio:.2f} us>\n"
           "[Write]\n"
           f"  RND4K  Q1T1 :     2.000 MB/s [    488.3 IOPS] < {2000 * wratio:.2f} us>\n")
    c = tmp_path / "cdm.txt"
    c.write_text(cdm)
    out = tmp_path / "o2.toml"
    r = storlab("calibrate", str(c), "--scenario", str(sc), "--config", "gp3", "--catalog-out", str(out))
    assert r.returncode == 0, r.stderr
    lat = tomllib.loads(out.read_text())["latency"][0]
    assert abs(lat["read_median_us"] - 1000) < 0.1 and abs(lat["read_p99_us"] - 1537.38) < 0.5
    assert abs(lat["write_median_us"] - 2000) < 0.1 and abs(lat["write_p99_us"] - 10000) < 0.5
    assert "RND4K-Q1T1-read" in lat["note"] and "RND4K-Q32T1" not in lat["note"]
    bad = storlab("calibrate", str(c), "--scenario", str(sc), "--config", "gp33", "--catalog-out", str(out))
    assert bad.returncode == 1 and "no config 'gp33' — did you mean 'gp3'?" in bad.stderr


# stonewall: each job alone on the disk, as CrystalDiskMark runs its tests;
# without it the four would run at once (fio's rule) and the QD1 jobs would
# not be at queue depth 1.
QD_JOBS = """
[global]
bs=4k
size=16m
runtime=1
time_based=1
stonewall
[RND4K-Q1T1-read]
rw=randread
iodepth=1
[RND4K-Q1T1-write]
rw=randwrite
iodepth=1
[RND4K-Q32T1-read]
rw=randread
iodepth=32
[RND4K-Q32T1-write]
rw=randwrite
iodepth=32
"""


@pytest.mark.slow
def test_this_machine_calibrated_predicts_its_qd32_jobs(storlab, scenario, tmp_path):
    """A real `bench disk` run here: latency from the QD1 jobs; the device's
    caps are the best measured IOPS (so the QD32 IOPS are not independent
    of the caps); the QD32 mean latency is predicted by the simulator's
    queueing on the fitted service time. The simulator keeps 32 I/Os in
    flight, so its mean is Little's law's 32 / IOPS. The measured mean is
    not: on this VM it ran at 0.70-0.92 of 32 / measured IOPS over 4 runs
    (the engine's clock leaves out the time an I/O waits before the kernel
    takes it), so latency is checked against 32 / measured IOPS — the time
    an I/O spends in the system by Little's law — within 15 %."""
    job = tmp_path / "qd.fio"
    job.write_text(QD_JOBS)
    out = tmp_path / "machine.toml"
    r = storlab("bench", "disk", "--path", str(tmp_path), "--job", str(job), "--size", "16MiB", "--runs", "1",
                "--interval", "0", "--calibrate-out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    measured = {x["job"]: x for x in json.loads(r.stdout)["results"]}
    cat = tomllib.loads(out.read_text())
    dev = cat["device"][0]
    assert dev["id"].startswith("local/measured/") and cat["source"][dev["src"]]["status"] == "measured"
    sc = scenario(f"""
[workload]
{"".join(JOB.format(rw=rw, qd=qd) for qd in (1, 32) for rw in ("randread", "randwrite"))}
[configs.here]
host = "local/host/server"
[[configs.here.pools]]
device = "{dev['id']}"
""", "here.toml")
    r = storlab("simulate", str(sc), "--json", "--catalog", str(out))
    assert r.returncode == 0, r.stderr
    got = {x["job"]: x for x in json.loads(r.stdout)["results"]}
    for name in ("RND4K-Q32T1-read", "RND4K-Q32T1-write"):
        m, p = measured[name], got[name]
        assert abs(p["iops"] / m["iops"] - 1) < 0.15, (name, p["iops"], m["iops"])
        little_us = 32 / m["iops"] * 1e6
        assert abs(p["lat_mean_us"] / little_us - 1) < 0.15, (name, p["lat_mean_us"], little_us, m["lat_mean_us"])


@pytest.mark.slow
def test_calibrate_out_writes_this_machine_as_a_host(storlab, scenario, tmp_path):
    """`bench disk --calibrate-out` also writes this machine as a host:
    its vCPUs (the CPUs storlab may run on: run here with its affinity set
    to one CPU, it writes 1, where os.cpu_count would say all of them) and
    memory (MemTotal of /proc/meminfo), so a database scenario can run on
    this machine's disk and CPUs. With every page cached and the shipped
    TPC-C profile at 16 users (1 s + 10 s windows), the model's CPU is what
    binds on that one vCPU when the pool is a fast NVMe (the recorded
    penalty makes 16 users cost ×1.50 a transaction): near 100 % busy. On
    the disk just measured, a busy machine's slow fsync may bind first."""
    import os

    from conftest import db_scenario
    from storlab.calibrate import this_host

    job = tmp_path / "qd.fio"
    job.write_text(QD_JOBS)
    out = tmp_path / "machine.toml"
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(mine)})  # the child inherits it
    try:
        r = storlab("bench", "disk", "--path", str(tmp_path), "--job", str(job), "--size", "16MiB", "--runs", "1",
                    "--runtime", "2", "--interval", "0", "--calibrate-out", str(out), "--json")
    finally:
        os.sched_setaffinity(0, mine)
    assert r.returncode == 0, r.stderr
    cat = tomllib.loads(out.read_text())
    host = cat["host"][0]
    assert host["id"] == f"local/host/{this_host()}" and cat["source"][host["src"]]["status"] == "measured"
    assert host["vcpus"] == 1
    mem_kib = int(open("/proc/meminfo").read().split()[1])
    assert abs(host["memory_gib"] - mem_kib / 2**20) < 0.01
    def run_on(device):
        here = f'[configs.here]\nhost = "{host["id"]}"\n[[configs.here.pools]]\nrole = "all"\ndevice = "{device}"\n'
        sc = scenario(db_scenario(scale="2", vus="[16]", configs=here), f"db-{device.replace('/', '-')}.toml")
        r = storlab("simulate", str(sc), "--json", "--catalog", str(out))
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["results"][0]

    # On the shipped local NVMe (a commit costs a few microseconds), the
    # one measured vCPU is what binds, whatever this disk measured.
    res = run_on("local/nvme")
    assert res["cpu_utilization"] > 0.9 and res["binding"].startswith("host CPU 1 vCPUs"), res["binding"]
    # On the disk just measured, a busy machine's slow fsync can make the
    # commit-durable row locks bind instead; either way the run is on 1 vCPU.
    res = run_on(cat["device"][0]["id"])
    assert res["binding"].startswith(("host CPU 1 vCPUs", "row locks")), res["binding"]


def test_a_crystaldiskmark_export_calibrated_reproduces_its_own_qd1_lines(storlab, scenario, tmp_path):
    """tests/data/import/cdm8-gp3-default.txt: CrystalDiskMark 8's Default
    profile on a gp3 volume (3,000 IOPS, 125 MiB/s). A 1 MiB read at queue
    depth 1 takes 33,996 µs where a 4 KiB one takes 1,270 µs: the size term
    is (33,996.04 − 1,270.11) µs over (1,048,571 − 4,096) bytes (the lines'
    MB/s over IOPS) = 32,854.6 µs a MiB; writes (22,930.21 − 2,019.62) over
    the same = 20,992.9 µs a MiB. Simulated on the calibrated gp3, each QD1
    line comes back within 15 %."""
    cdm = ROOT / "tests" / "data" / "import" / "cdm8-gp3-default.txt"
    sc = scenario(GP3.format(jobs=""))
    out = tmp_path / "o.toml"
    r = storlab("calibrate", str(cdm), "--scenario", str(sc), "--config", "gp3", "--catalog-out", str(out))
    assert r.returncode == 0, r.stderr
    lat = tomllib.loads(out.read_text())["latency"][0]
    big = 30.828e6 / 29.4
    assert lat["read_us_per_mib"] == pytest.approx((33996.04 - 1270.11) / ((big - 3.224e6 / 787.1) / 2**20), rel=1e-3)
    assert lat["read_us_per_mib"] == pytest.approx(32854.6, rel=2e-3)
    assert lat["write_us_per_mib"] == pytest.approx(20992.9, rel=3e-3)
    assert "SEQ1M-Q1T1-read" in lat["note"] and "SEQ1M-Q1T1-write" in lat["note"]
    jobs = "".join(f'[[workload.jobs]]\nname = "{n}"\nrw = "{rw}"\nbs = "{bs}"\niodepth = 1\nruntime_s = 20\nstonewall = true\n'
                   for n, rw, bs in (("SEQ1M-Q1T1-read", "read", "1m"), ("SEQ1M-Q1T1-write", "write", "1m"),
                                     ("RND4K-Q1T1-read", "randread", "4k"), ("RND4K-Q1T1-write", "randwrite", "4k")))
    got = predict(storlab, scenario, out, jobs, "qd1.toml")
    for job, measured in (("SEQ1M-Q1T1-read", 29.4), ("SEQ1M-Q1T1-write", 43.6),
                          ("RND4K-Q1T1-read", 787.1), ("RND4K-Q1T1-write", 495.1)):
        assert got[job]["iops"] == pytest.approx(measured, rel=0.15), (job, got[job]["iops"], measured)
    # Without the size term (the catalog's gp3 as shipped), a 1 MiB read at
    # QD1 takes a 4 KiB read's time plus its transfer at 125 MiB/s: far
    # faster than the export measured.
    nothing = tmp_path / "nothing.toml"
    nothing.write_text("# an overlay that changes nothing\n")
    plain = predict(storlab, scenario, nothing, jobs, "plain.toml")
    assert plain["SEQ1M-Q1T1-read"]["iops"] > 1.5 * 29.4


def test_a_cache_that_took_the_writes_is_named_and_refused_as_caps():
    """By hand: SEQ1M-Q8T1 writes at 3,000 MB/s against reads at 1,000 is
    3.0×, past the 2× no flash or cloud volume shows; Q1T1 at 1,500 against
    1,000 is 1.5×, not. Buffered I/O on a 64 MiB file with 24 GiB of memory
    is the page cache. --calibrate-out refuses what either finds."""
    from storlab.calibrate import cache_suspects, machine_overlay
    from storlab.errors import ScenarioError

    def res(job, mb_s):
        return {"config": "local", "job": job, "iops": mb_s, "bw_bytes_s": mb_s * 1e6, "lat_mean_us": 1000.0,
                "read_iops": mb_s if job.endswith("read") else 0, "write_iops": mb_s if job.endswith("write") else 0}

    rec = {"direct": True, "file_bytes": 64 << 20, "host_info": {"memory_bytes": 24 << 30},
           "results": [res("SEQ1M-Q8T1-read", 1000), res("SEQ1M-Q8T1-write", 3000),
                       res("SEQ1M-Q1T1-read", 1000), res("SEQ1M-Q1T1-write", 1500)]}
    (only,) = cache_suspects(rec)
    assert only.startswith("SEQ1M-Q8T1-write ran 3.0× its reads (3,000.0 against 1,000.0 MB/s)"), only
    with pytest.raises(ScenarioError, match="--calibrate-out: SEQ1M-Q8T1-write ran 3.0×"):
        machine_overlay(rec, "this run")
    rec["results"] = rec["results"][2:]
    assert cache_suspects(rec) == []
    rec["direct"] = False
    (only,) = cache_suspects(rec)
    assert "buffered I/O on a 64 MiB test file, smaller than this machine's 24.0 GiB" in only


def test_a_result_without_usable_qd1_latency_is_refused_and_nothing_is_written(storlab, scenario, tmp_path):
    """tests/data/import/cdm6.txt is a CrystalDiskMark 6 export: its format
    prints no latency, so its Q1T1 lines (8,246.8 and 32,856.4 IOPS) carry
    none and calibrate refuses it (before, it wrote a 0 µs overlay that
    simulate then refused). A fio JSON whose only job runs at iodepth 32 has
    no QD1 job at all; a storlab record whose QD1 latency is 1.45e19 µs
    would fit a service time beyond the catalog's 10 s. No overlay in any
    case."""
    sc = scenario(GP3.format(jobs=""))
    out = tmp_path / "o.toml"
    cdm6 = ROOT / "tests" / "data" / "import" / "cdm6.txt"
    r = storlab("calibrate", str(cdm6), "--scenario", str(sc), "--config", "gp3", "--catalog-out", str(out))
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stderr.startswith(f"error: {cdm6}: ") and "carry no latency" in r.stderr and "RND4K-Q1T1-read" in r.stderr, r.stderr
    assert not out.exists()
    fio = {"fio version": "fio-3.33", "jobs": [{"jobname": "q32", "job options": {"rw": "randread", "iodepth": "32"},
                                               "read": {"total_ios": 3000, "iops": 3000.0, "bw_bytes": 12288000, "runtime": 1000,
                                                        "clat_ns": {"mean": 10.6e6}, "lat_ns": {"mean": 10.7e6, "max": 2e7}}}]}
    f = tmp_path / "q32.json"
    f.write_text(json.dumps(fio))
    r = storlab("calibrate", str(f), "--scenario", str(sc), "--config", "gp3", "--catalog-out", str(out))
    assert r.returncode == 1 and "no queue-depth-1 job with a latency" in r.stderr and not out.exists(), r.stderr
    rec = hand_record()
    for row in rec["results"]:
        if row["job"] == "RND4K-Q1T1-read":
            row["lat_mean_us"] = row["lat_p50_us"] = row["lat_p99_us"] = 1.45e19
    g = tmp_path / "huge.json"
    g.write_text(json.dumps(rec))
    r = storlab("calibrate", str(g), "--scenario", str(sc), "--config", "gp3", "--catalog-out", str(out))
    assert r.returncode == 1 and "read_median_us" in r.stderr and "nearest valid value 1e+07" in r.stderr, r.stderr
    assert not out.exists()
