"""`storlab bench disk`: real I/O on a temp folder of this machine's disk —
records, fio-compatible output, safety and clean-up, bad input."""

from __future__ import annotations

import json
import re
import os
import signal
import subprocess
import sys
import time

import pytest

QUICK = ("--size", "16MiB", "--runs", "1", "--runtime", "0.2", "--interval", "0")


def test_cdm_default_measures_every_test_and_cleans_up(storlab, tmp_path):
    r = storlab("bench", "disk", "--path", str(tmp_path), *QUICK, "--json")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["schema_version"] == 1 and rec["engine"] == "measure"
    jobs = [x["job"] for x in rec["results"]]
    assert jobs == ["SEQ1M-Q8T1-read", "SEQ1M-Q1T1-read", "RND4K-Q32T1-read", "RND4K-Q1T1-read",
                    "SEQ1M-Q8T1-write", "SEQ1M-Q1T1-write", "RND4K-Q32T1-write", "RND4K-Q1T1-write"]
    for x in rec["results"]:
        # the same columns as a simulated result
        for k in ("config", "job", "iops", "bw_bytes_s", "lat_mean_us", "lat_p50_us", "lat_p99_us", "lat_max_us", "binding"):
            assert k in x, k
        assert x["iops"] > 0 and x["lat_p50_us"] <= x["lat_p99_us"] <= x["lat_max_us"] * 1.01
        # I/Os in flight from the job's name: Q8T1 keeps 8, Q1T1 one (io_uring keeps iodepth).
        q, t = map(int, re.search(r"Q(\d+)T(\d+)", x["job"]).groups())
        assert x["outstanding"] == q * t
    assert rec["host_info"]["filesystem"]
    assert list(tmp_path.iterdir()) == [], "the test file is removed"


def test_fio_json_exporter_on_a_fixed_record():
    """Hand-computed: 1,000 reads of 4 KiB in 2 s = 4,096,000 bytes,
    2,048,000 B/s = 2,000 KiB/s, 500 IOPS, runtime 2,000 ms; 0.5 CPU-s of
    user time in 2 s = 25 %; latencies in ns = µs × 1,000."""
    from storlab.export.fio import to_fio_json

    rd = {"ios": 1000, "bytes": 4_096_000, "iops": 500.0, "bw_bytes_s": 2_048_000.0, "lat_mean_us": 150.5,
          "lat_min_us": 80.0, "lat_max_us": 900.25, "percentiles_us": [[50.0, 140.0], [99.0, 700.0]]}
    wr = {"ios": 0, "bytes": 0, "iops": 0.0, "bw_bytes_s": 0.0, "lat_mean_us": 0.0, "lat_min_us": 0.0,
          "lat_max_us": 0.0, "percentiles_us": []}
    run = {"iops": 500.0, "bw_bytes_s": 2_048_000.0, "read": rd, "write": wr, "elapsed_s": 2.0, "usr_cpu_s": 0.5,
           "sys_cpu_s": 0.1, "cpu_us_per_io": 600.0}
    rec = {"tool": {"version": "9.9"}, "file_bytes": 1 << 30, "runs": [{
        "job": "RND4K-Q1T1-read", "rw": "randread", "bs_bytes": 4096, "iodepth": 1, "numjobs": 1, "engine": "psync",
        "direct": True, "runs": [run], "best": 0, "mean_iops": 500.0, "mean_bw_bytes_s": 2_048_000.0}]}
    doc = json.loads(to_fio_json(rec))
    (job,) = doc["jobs"]
    r = job["read"]
    assert (r["io_bytes"], r["io_kbytes"], r["bw_bytes"], r["bw"], r["runtime"], r["total_ios"]) == (
        4_096_000, 4000, 2_048_000, 2000, 2000, 1000)
    assert r["clat_ns"]["percentile"] == {"50.000000": 140_000, "99.000000": 700_000}
    assert (r["lat_ns"]["min"], r["lat_ns"]["max"], r["lat_ns"]["mean"]) == (80_000, 900_250, 150_500.0)
    assert job["usr_cpu"] == 25.0 and job["sys_cpu"] == 5.0
    assert job["job options"] == {"rw": "randread", "bs": "4096", "iodepth": "1", "numjobs": "1",
                                  "ioengine": "psync", "direct": "1"}
    assert doc["global options"] == {"size": str(1 << 30)} and doc["fio version"] == "storlab-9.9"


def test_fio_json_output_reads_like_fio(storlab, tmp_path):
    r = storlab("bench", "disk", "--path", str(tmp_path), *QUICK, "--profile", "cdm-peak", "--output-format", "fio-json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [j["jobname"] for j in doc["jobs"]] == ["SEQ1M-Q8T1-read", "RND4K-Q32T1-read", "SEQ1M-Q8T1-write", "RND4K-Q32T1-write"]
    rd = doc["jobs"][1]["read"]
    assert rd["iops"] > 0 and rd["bw_bytes"] > 0 and rd["total_ios"] > 0
    assert rd["bw"] == round(rd["bw_bytes"] / 1024)
    assert "99.000000" in rd["clat_ns"]["percentile"] and rd["lat_ns"]["mean"] > 0
    assert doc["jobs"][1]["write"]["total_ios"] == 0
    assert doc["jobs"][1]["usr_cpu"] + doc["jobs"][1]["sys_cpu"] > 0


def test_fio_job_file(storlab, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    job = tmp_path / "mix.fio"
    job.write_text("[global]\nruntime=0.3s\ntime_based\n[mix]\nrw=randrw\nrwmixread=70\nbs=8k\niodepth=4\nioengine=psync\n")
    r = storlab("bench", "disk", "--path", str(data), "--size", "16MiB", "--job", str(job), "--json")
    assert r.returncode == 0, r.stderr
    x = json.loads(r.stdout)["results"][0]
    assert x["job"] == "mix" and x["engine"] == "psync"
    assert 0.6 < x["read_iops"] / x["iops"] < 0.8
    assert x["outstanding"] == 1, "psync does one I/O at a time"


def test_a_job_files_directory_and_filename_are_used_inside_path(storlab, tmp_path):
    # fio's syntax: the test file is <--path>/db/data/bench.dat while it runs;
    # the folders storlab made and the file are gone afterwards.
    data = tmp_path / "mnt"
    data.mkdir()
    job = tmp_path / "named.fio"
    job.write_text("[global]\nioengine=psync\ndirectory=db/data\nfilename=bench.dat\nsize=8m\n\n"
                   "[rnd-read]\nrw=randread\nbs=4k\nruntime=1\ntime_based\n")
    r = storlab("bench", "disk", "--path", str(data), "--job", str(job), "--json")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["results"][0]["job"] == "rnd-read" and rec["results"][0]["iops"] > 0
    assert list(data.iterdir()) == [], "the test file and the folders made for it are removed"


@pytest.mark.parametrize("args,needle", [
    (("--path", "{tmp}/missing"), "No such file"),
    (("--path", "{tmp}/file"), "is a file, not a folder"),
    (("--path", "/dev/null"), "is a device"),
    (("--path", "{tmp}", "--size", "900TiB"), "--size"),
    (("--path", "{tmp}", "--size", "lots"), "is not a size"),
    (("--path", "{tmp}", "--profile", "cdm-nvmee"), "did you mean 'cdm-nvme'"),
    (("--path", "{tmp}", "--job", "{tmp}/bad.fio"), "bad.fio:2: option 'iodepht'"),
    (("--path", "{tmp}", "--job", "{tmp}/elsewhere.fio"), "elsewhere.fio: job 'a': filename '/etc/passwd' is not a file name"),
    (("--path", "{tmp}", "--job", "{tmp}/escape.fio"), "escape.fio: job 'a': directory '../up' leads out of --path"),
    (("--path", "{tmp}", "--engine", "libaio"), "use io_uring, psync or null"),
])
def test_bad_input(storlab, tmp_path, args, needle):
    (tmp_path / "file").write_text("mine")
    (tmp_path / "bad.fio").write_text("[a]\niodepht=4\n")
    (tmp_path / "elsewhere.fio").write_text("[a]\nrw=write\nfilename=/etc/passwd\n")
    (tmp_path / "escape.fio").write_text("[a]\nrw=write\ndirectory=../up\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    r = storlab("bench", "disk", *[a.format(tmp=tmp_path) for a in args], *QUICK[2:])
    assert r.returncode == 1, (r.stdout, r.stderr)
    err = r.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1 and needle in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "nothing written, nothing touched"
    assert (tmp_path / "file").read_text() == "mine"


@pytest.mark.parametrize("signame,code", [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_ctrl_c_kill_or_hangup_keeps_results_and_removes_the_test_file(tmp_path, signame, code):
    """Ctrl-C exits 130, as shells report it; SIGTERM and SIGHUP (the terminal
    closed) stop the run the same way and exit 128 + the signal's number."""
    env = dict(os.environ, NO_COLOR="1")
    p = subprocess.Popen(
        [sys.executable, "-m", "storlab.cli", "bench", "disk", "--path", str(tmp_path), "--size", "16MiB",
         "--runs", "1", "--runtime", "30", "--interval", "0", "--profile", "cdm-real-world", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    deadline = time.time() + 20
    while not any(tmp_path.iterdir()) and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(1.5)
    p.send_signal(getattr(signal, signame))
    out, err = p.communicate(timeout=30)
    assert p.returncode == code, err
    assert "Traceback" not in err
    rec = json.loads(out)
    assert rec["interrupted"] is True
    assert list(tmp_path.iterdir()) == [], "the test file is removed on Ctrl-C"


def test_tmpfs_direct_or_buffered_with_a_warning(storlab):
    """tmpfs refused O_DIRECT before Linux 6.6 and takes it since: either
    way the record says which I/O ran, and buffered I/O comes with a warning."""
    import tempfile
    from pathlib import Path

    if not Path("/dev/shm").is_dir():
        pytest.skip("no /dev/shm")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        r = storlab("bench", "disk", "--path", d, *QUICK, "--profile", "cdm-real-world", "--json")
        assert r.returncode == 0, r.stderr
        rec = json.loads(r.stdout)
        warned = "refused O_DIRECT" in r.stderr
        assert warned == (rec["direct"] is False)
        assert ("buffered" in rec["results"][0]["binding"]) == warned
        assert list(Path(d).iterdir()) == []


def test_a_job_file_without_stonewall_says_its_jobs_ran_together(storlab, tmp_path):
    # fio runs the jobs of one file at once unless stonewall separates them.
    job = tmp_path / "two.fio"
    job.write_text("[global]\nioengine=psync\ndirect=1\nsize=8m\nruntime=0.2\ntime_based\nbs=4k\n\n[r]\nrw=randread\n\n"
                   "[w]\nrw=randwrite\n")
    out = storlab("bench", "disk", "--path", str(tmp_path), "--job", str(job)).stdout
    assert "ran at the same time (no stonewall between them, as in fio): r, w" in out, out
    job.write_text(job.read_text().replace("[w]\n", "[w]\nstonewall\n"))
    out = storlab("bench", "disk", "--path", str(tmp_path), "--job", str(job)).stdout
    assert "ran at the same time" not in out, out


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a full tmpfs (root)")
def test_a_report_that_cannot_be_written_keeps_the_measured_results(tmp_path):
    """`--report` on a full file system: the run measures, the table is
    printed, and the whole record is written to storlab-bench-disk-<time>.json
    in the current folder; with --json it is on stdout and nothing else is
    written. Exit 1, naming the report, the reason and where the results are."""
    from conftest import run_process

    full = tmp_path / "full"
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(full)], check=True)
    try:
        subprocess.run(["dd", "if=/dev/zero", f"of={full / 'fill'}", "bs=4k", "count=64"], capture_output=True)
        work = tmp_path / "work"
        work.mkdir()
        r = run_process("bench", "disk", "--path", str(tmp_path), *QUICK, "--report", str(full / "r.html"), cwd=work)
        assert r.returncode == 1, r.stderr
        kept = list(work.glob("storlab-bench-disk-*.json"))
        assert len(kept) == 1, r.stderr
        assert f"{full / 'r.html'}: cannot write the report" in r.stderr and str(kept[0]) in r.stderr, r.stderr
        rec = json.loads(kept[0].read_text())
        assert {x["job"] for x in rec["results"]} >= {"RND4K-Q1T1-read", "SEQ1M-Q8T1-write"}
        assert "RND4K-Q1T1-read" in r.stdout
        kept[0].unlink()
        r = run_process("bench", "disk", "--path", str(tmp_path), *QUICK, "--json", "--report", str(full / "r.html"), cwd=work)
        assert r.returncode == 1 and "kept in the JSON printed on stdout" in r.stderr, r.stderr
        assert json.loads(r.stdout)["results"] and not list(work.iterdir())
    finally:
        subprocess.run(["umount", str(full)], check=False)
