"""`storlab bench disk`: real I/O on a temp folder of this machine's disk —
records, fio-compatible output, safety and clean-up, bad input."""

from __future__ import annotations

import json
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
        # bandwidth is IOPS × block size
        bs = 1 << 20 if x["job"].startswith("SEQ1M") else 4096
        assert abs(x["bw_bytes_s"] - x["iops"] * bs) <= 1e-6 * x["bw_bytes_s"] + 1
    assert rec["host_info"]["filesystem"]
    assert list(tmp_path.iterdir()) == [], "the test file is removed"


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


@pytest.mark.parametrize("args,needle", [
    (("--path", "{tmp}/missing"), "No such file"),
    (("--path", "{tmp}/file"), "is a file, not a folder"),
    (("--path", "/dev/null"), "is a device"),
    (("--path", "{tmp}", "--size", "900TiB"), "--size"),
    (("--path", "{tmp}", "--size", "lots"), "is not a size"),
    (("--path", "{tmp}", "--profile", "cdm-nvmee"), "did you mean 'cdm-nvme'"),
    (("--path", "{tmp}", "--job", "{tmp}/bad.fio"), "bad.fio:2: option 'iodepht'"),
    (("--path", "{tmp}", "--job", "{tmp}/elsewhere.fio"), "filename and directory are not honoured"),
    (("--path", "{tmp}", "--engine", "libaio"), "use io_uring, psync or null"),
])
def test_bad_input(storlab, tmp_path, args, needle):
    (tmp_path / "file").write_text("mine")
    (tmp_path / "bad.fio").write_text("[a]\niodepht=4\n")
    (tmp_path / "elsewhere.fio").write_text("[a]\nrw=write\nfilename=/etc/passwd\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    r = storlab("bench", "disk", *[a.format(tmp=tmp_path) for a in args], *QUICK[2:])
    assert r.returncode == 1, (r.stdout, r.stderr)
    err = r.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1 and needle in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "nothing written, nothing touched"
    assert (tmp_path / "file").read_text() == "mine"


def test_ctrl_c_keeps_results_and_removes_the_test_file(tmp_path):
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
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
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
