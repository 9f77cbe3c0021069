"""`storlab emulate`: the pass-through, its refusals, the mount lifecycle
under signals and crashes, and the pacing seen from outside (short runs;
the precision targets live in bench/emulate_precision.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import run
from storlab import api
from storlab.report import build_html
from storlab.report.records import from_data

pytestmark = pytest.mark.needs_fuse

SCENARIO = """
title = "emulated volumes for the tests"
[configs.gp3]
host = "aws/ec2/r5b.24xlarge"
[[configs.gp3.pools]]
device = "aws/ebs/gp3"
size_gib = 100
iops = 3000
throughput_mib_s = 125

[configs.gp3-slow]
host = "aws/ec2/r5b.24xlarge"
[[configs.gp3-slow.pools]]
role = "data"
device = "aws/ebs/gp3"
size_gib = 100
iops = 3000
throughput_mib_s = 125
[[configs.gp3-slow.pools]]
role = "log"
device = "aws/ebs/gp3"
size_gib = 20
iops = 3000
throughput_mib_s = 125
"""


def _mounted(path: Path) -> bool:
    want = str(path.resolve())
    with open("/proc/self/mountinfo") as f:
        return any(line.split(" ")[4] == want for line in f)


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    p = tmp_path / "emu.toml"
    p.write_text(SCENARIO)
    return p


class Emulator:
    """`storlab emulate` in its own process, as a user runs it."""

    def __init__(self, tmp: Path, scenario: Path, *extra: str, config: str = "gp3", name: str = "vol"):
        self.backing = tmp / f"{name}-backing"
        self.mount = tmp / f"{name}-mnt"
        self.ready = tmp / f"{name}-ready.json"
        self.ready.unlink(missing_ok=True)
        self.mount.mkdir(exist_ok=True)
        env = dict(os.environ, NO_COLOR="1")
        self.p = subprocess.Popen(
            [sys.executable, "-m", "storlab.cli", "emulate", str(scenario), "--config", config,
             "--backing", str(self.backing), "--mount", str(self.mount), "--ready-file", str(self.ready), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        deadline = time.time() + 60
        while not self.ready.exists():
            if self.p.poll() is not None:
                raise AssertionError(f"emulator exited {self.p.returncode}: {self.p.stderr.read()}")
            if time.time() > deadline:
                self.p.kill()
                raise AssertionError("emulator did not mount within 60 s")
            time.sleep(0.05)

    def stop(self, sig=signal.SIGINT) -> tuple[int, str, str]:
        self.p.send_signal(sig)
        out, err = self.p.communicate(timeout=60)
        return self.p.returncode, out, err


@pytest.fixture
def cleanup():
    mounts: list[Path] = []
    yield mounts
    for m in mounts:
        if _mounted(m):
            run("emulate", "--unmount", str(m))


def test_files_pass_through_to_the_backing_folder(tmp_path, scenario, cleanup):
    e = Emulator(tmp_path, scenario)
    cleanup.append(e.mount)
    try:
        (e.mount / "d").mkdir()
        (e.mount / "d" / "a.txt").write_bytes(b"x" * 10000)
        (e.mount / "d" / "a.txt").rename(e.mount / "d" / "b.txt")
        (e.mount / "link").symlink_to("d/b.txt")
        (e.mount / "gone").write_text("soon")
        (e.mount / "gone").unlink()
        assert (e.mount / "link").read_bytes() == b"x" * 10000
        # The marker that says storlab made the backing folder is not on the volume.
        assert sorted(os.listdir(e.mount)) == ["d", "link"]
        with open(e.mount / "d" / "b.txt", "r+b") as f:
            f.seek(20000)
            f.write(b"end")
            os.fsync(f.fileno())
        assert (e.mount / "d" / "b.txt").stat().st_size == 20003
    finally:
        rc, _, err = e.stop()
    assert rc == 130, err
    assert not _mounted(e.mount)
    assert (e.backing / "d" / "b.txt").read_bytes()[:10000] == b"x" * 10000
    assert (e.backing / "d" / "b.txt").read_bytes()[20000:] == b"end"
    assert os.readlink(e.backing / "link") == "d/b.txt"
    assert (e.backing / ".storlab-backing").exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_each_signal_unmounts_and_ends_the_process(tmp_path, scenario, cleanup, sig):
    e = Emulator(tmp_path, scenario)
    cleanup.append(e.mount)
    # A file held open must not keep the mount (or the emulator) alive.
    f = open(e.mount / "held", "wb")
    try:
        assert _mounted(e.mount)
        rc, _, err = e.stop(sig)
    finally:
        try:
            f.close()
        except OSError:
            pass
    assert 128 + sig == rc, err
    assert "unmounted" in err
    assert not _mounted(e.mount)
    assert e.p.poll() is not None


def test_refuses_a_non_empty_mount_point_and_a_foreign_backing_folder(tmp_path, scenario):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep").write_text("mine")
    (tmp_path / "empty").mkdir()
    r = run("emulate", str(scenario), "--config", "gp3", "--backing", str(tmp_path / "b"), "--mount", str(tmp_path / "full"))
    assert r.returncode == 1
    assert "not empty" in r.stderr and "--nonempty" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = run("emulate", str(scenario), "--config", "gp3", "--backing", str(tmp_path / "full"), "--mount", str(tmp_path / "empty"))
    assert r.returncode == 1
    assert "did not create" in r.stderr and "--adopt-backing" in r.stderr
    r = run("emulate", str(scenario), "--config", "nope", "--backing", str(tmp_path / "b2"), "--mount", str(tmp_path / "empty"))
    assert r.returncode == 1
    assert "no config 'nope'" in r.stderr and "gp3" in r.stderr
    # A pool the config does not have: refused before anything is mounted,
    # naming the pools it has (gp3-slow's roles are data and log).
    r = run("emulate", str(scenario), "--config", "gp3-slow", "--pool", "temp", "--backing", str(tmp_path / "b3"), "--mount", str(tmp_path / "empty"))
    assert r.returncode == 1
    assert "config 'gp3-slow' has no pool 'temp' — pools: data, log" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not _mounted(tmp_path / "empty")


def test_a_killed_emulator_leaves_a_stale_mount_that_unmount_clears(tmp_path, scenario, cleanup):
    e = Emulator(tmp_path, scenario)
    cleanup.append(e.mount)
    (e.mount / "data").write_bytes(b"committed")
    with open(e.mount / "data", "rb+") as f:
        os.fsync(f.fileno())
    e.p.kill()
    e.p.wait(timeout=30)
    assert _mounted(e.mount)
    # Restarting on the stale mount is refused with the way out.
    r = run("emulate", str(scenario), "--config", "gp3", "--backing", str(e.backing), "--mount", str(e.mount))
    assert r.returncode == 1
    assert "stale" in r.stderr and f"--unmount {e.mount}" in r.stderr
    r = run("emulate", "--unmount", str(e.mount))
    assert r.returncode == 0, r.stderr
    assert not _mounted(e.mount)
    # The same backing folder serves again, with what was written.
    e2 = Emulator(tmp_path, scenario)
    try:
        assert (e2.mount / "data").read_bytes() == b"committed"
    finally:
        rc, _, err = e2.stop()
    assert rc == 130, err


def _reads(path: Path, threads: int, seconds: float, bs: int = 4096) -> int:
    """4 KiB reads from `threads` threads for `seconds`: how many completed."""
    size = path.stat().st_size
    count = [0] * threads
    stop = time.time() + seconds

    def go(i):
        fd = os.open(path, os.O_RDONLY)
        n, off = 0, (i * 7919 * bs) % size
        while time.time() < stop:
            os.pread(fd, bs, off)
            off = (off + 13 * bs) % (size - bs)
            n += 1
        os.close(fd)
        count[i] = n

    ts = [threading.Thread(target=go, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(count)


def test_reads_are_held_to_the_volume_cap_and_counted_in_the_series(tmp_path, scenario, cleanup):
    metrics = tmp_path / "cw.json"
    e = Emulator(tmp_path, scenario, "--metrics", str(metrics), "--period", "1")
    cleanup.append(e.mount)
    try:
        f = e.mount / "file"
        f.write_bytes(os.urandom(8 << 20))
        n = _reads(f, 16, 3.0)
        rc, out, err = e.stop()
    finally:
        if e.p.poll() is None:
            e.stop()
    assert rc == 130, err
    # gp3 provisioned at 3,000 IOPS: 3 s of 16 threads of 4 KiB reads can
    # complete at most 3,000 × 3 plus what was in flight; at least 80 % of
    # that (the machine is shared and Python threads are slow to issue).
    assert n <= 3000 * 3 + 16 + 100, n
    assert n >= 0.8 * 3000 * 3, n
    rec = json.loads(metrics.read_text())
    reads = next(s for s in rec["series"] if s["metric"] == "VolumeReadOps")
    # Each 4 KiB pread is one FUSE read (direct_io): the series counts
    # exactly the reads issued, no more (page cache) and no fewer.
    assert sum(reads["values"]) == n
    # The config's one pool has no role: it holds everything.
    assert reads["resource"] == "pool all"


def test_the_floor_is_calibrated_through_the_mount_when_asked(tmp_path, scenario, cleanup):
    e = Emulator(tmp_path, scenario, "--floor-us", "auto", "--json")
    cleanup.append(e.mount)
    try:
        st = json.loads(e.ready.read_text())
        # 200 probe reads went through the mount before it was announced,
        # each held 500 µs by the timer; the floor is what they took beyond
        # that: more than nothing (a reply is never early), under 0.1 s.
        assert 0 < st["floor_us"] < 100_000, st
        # The probe file is the emulator's own: not on the volume.
        assert os.listdir(e.mount) == []
    finally:
        rc, out, err = e.stop()
    assert rc == 130, err
    summary = json.loads(out)
    assert summary["floor_calibrated"] is True and summary["floor_us"] > 0
    assert not (e.backing / ".storlab-probe").exists()
    # The summary is a run record: it reads back through the record type
    # with its figures, and the report draws its series.
    back = api.check_record(summary)
    assert back["engine"] == "emulate" and back["floor_calibrated"] is True and back["config"] == summary["config"]
    assert {s["metric"] for s in back["series"]} >= {"VolumeReadOps", "VolumeWriteOps"}
    assert b"Time series" in build_html([from_data(summary, "emulate.json")])
    fixed = Emulator(tmp_path, scenario, "--json", name="fixed")
    cleanup.append(fixed.mount)
    assert json.loads(fixed.ready.read_text())["floor_us"] == 0
    rc, out, err = fixed.stop()
    assert rc == 130, err
    assert json.loads(out)["floor_calibrated"] is False


def _thread_sched(pid: int) -> dict[str, tuple[int, int, int]]:
    """Each thread's name and its nice value, scheduling policy and
    real-time priority (/proc/PID/task/TID/stat fields 19, 41 and 40:
    after the name in parentheses, the 17th, 39th and 38th)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        f = stat[stat.rindex(")") + 2:].split()
        out[f"{name}:{tid}"] = (int(f[16]), int(f[38]), int(f[37]))
    return out


def test_the_emulators_threads_take_the_priority_asked(tmp_path, scenario, cleanup):
    # --nice -20: every thread of the emulator (the FUSE request threads, the
    # timer that sends the paced replies) runs at nice -20, ahead of the
    # database's processes; --realtime 1: every thread is SCHED_FIFO (policy
    # 1 in Linux's sched.h) at priority 1. The threads are started by the
    # Rust side after the priority is set, so this holds only if they take
    # it from their creator. By default (the last): nice 0, SCHED_OTHER (0)
    # at priority 0, an even share with everything else on the machine.
    for args, want, said in ((["--nice", "-20"], (-20, 0, 0), "(nice -20)"),
                             (["--realtime", "1"], (0, 1, 1), "(real-time 1)"),
                             ([], (0, 0, 0), "(nice 0)")):
        e = Emulator(tmp_path, scenario, *args, name="v" + "".join(args))
        cleanup.append(e.mount)
        try:
            sched = _thread_sched(e.p.pid)
            # The main thread, 4 FUSE request threads and the timer at least.
            assert len(sched) >= 6, sched
            assert set(sched.values()) == {want}, sched
            assert any(n.startswith("storlab-timer") for n in sched), sched
            # The mount works as before: a file written through it is in the backing folder.
            (e.mount / "f").write_bytes(b"x" * 4096)
            assert (e.backing / "f").read_bytes() == b"x" * 4096
        finally:
            rc, _, err = e.stop()
        assert rc == 130, err
        assert said in err
    for args, msg in ((["--nice", "-25"], "--nice -25: a Linux nice value from -20 (highest priority) to 19 — e.g. -20"),
                      (["--realtime", "0"], "--realtime 0: a SCHED_FIFO priority from 1 to 99 — e.g. 1"),
                      (["--realtime", "120"], "--realtime 120: a SCHED_FIFO priority from 1 to 99 — e.g. 99"),
                      (["--realtime", "1", "--nice", "-5"], "--nice and --realtime: give one")):
        r = run("emulate", str(scenario), "--config", "gp3", "--backing", str(tmp_path / "b"), "--mount",
                str(tmp_path / "m"), *args)
        assert r.returncode != 0
        assert msg in r.stderr
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "b").exists()


def test_two_pools_mount_from_one_process(tmp_path, scenario, cleanup):
    mounts = [tmp_path / "data-mnt", tmp_path / "log-mnt"]
    for m in mounts:
        m.mkdir()
    cleanup.extend(mounts)
    ready = tmp_path / "ready.json"
    p = subprocess.Popen(
        [sys.executable, "-m", "storlab.cli", "emulate", str(scenario), "--config", "gp3-slow",
         "--pool", "data", "--backing", str(tmp_path / "data-b"), "--mount", str(mounts[0]),
         "--pool", "log", "--backing", str(tmp_path / "log-b"), "--mount", str(mounts[1]),
         "--ready-file", str(ready)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.time() + 60
    while not ready.exists() and p.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert ready.exists(), p.stderr.read() if p.poll() is not None else "not ready"
    st = json.loads(ready.read_text())
    assert [x["pool"] for x in st["pools"]] == ["pool data", "pool log"]
    (mounts[1] / "wal").write_bytes(b"w" * 8192)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert (tmp_path / "log-b" / "wal").stat().st_size == 8192
    assert not any(_mounted(m) for m in mounts)


def _write_then_fsync(path: Path) -> None:
    """Page 0 written 500 times, then pages 1-500 once each, buffered, then
    one fsync: 501 dirty pages of 4 KiB, contiguous."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        page = b"\x5a" * 4096
        for _ in range(500):
            os.pwrite(fd, page, 0)
        for k in range(1, 501):
            os.pwrite(fd, page, k * 4096)
        os.fsync(fd)
    finally:
        os.close(fd)


@pytest.mark.parametrize("ram", [False, True])
def test_buffered_writes_reach_the_volume_as_the_page_cache_writes_them_back(tmp_path, scenario, cleanup, ram):
    # Without --ram every write is one FUSE write charged to the volume:
    # 1,000 VolumeWriteOps of 4 KiB. With --ram (the instance's page cache)
    # the writes stay dirty until the fsync writes the 501 pages back once,
    # merged into I/Os of at most 1 MiB (256 pages): 256 + 245 = 2 writes of
    # 501 × 4,096 = 2,052,096 bytes.
    metrics = tmp_path / "cw.json"
    e = Emulator(tmp_path, scenario, "--metrics", str(metrics), "--period", "1", *(["--ram", "1"] if ram else []))
    cleanup.append(e.mount)
    try:
        _write_then_fsync(e.mount / "file")
        rc, out, err = e.stop()
    finally:
        if e.p.poll() is None:
            e.stop()
    assert rc == 130, err
    assert (e.backing / "file").stat().st_size == 501 * 4096
    rec = json.loads(metrics.read_text())
    total = lambda m: sum(next(s for s in rec["series"] if s["metric"] == m)["values"])  # noqa: E731
    if ram:
        assert total("VolumeWriteOps") == 2
        assert total("VolumeWriteBytes") == 501 * 4096
    else:
        assert total("VolumeWriteOps") == 1000
        assert total("VolumeWriteBytes") == 1000 * 4096


SLOW_CATALOG = """
[source.test-slow]
url = "a volume of this test's own"
date = "2026-11-26"
[[device]]
id = "local/test-slow"
title = "a volume whose writes take 50 ms"
src = "test-slow"
kind = "local"
media = "ssd"
accounting = { unit_kib = 1024 }
size_gib = { fixed = 100 }
iops = { rule = "fixed", value = 100000 }
throughput_mib_s = { rule = "fixed", value = 1000 }
[[latency]]
devices = ["local/test-slow"]
src = "test-slow"
read_median_us = 50000
read_p99_us = 52000
write_median_us = 50000
write_p99_us = 52000
"""


def _timed_writes_then_fsync(path: Path, seconds: float) -> tuple[float, int, float]:
    """Rewrites page 0 of a file, buffered, once and on for `seconds`, then fsyncs it:
    the writes' wall time, their count, and the fsync's."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        page = b"\x5a" * 4096
        n = 0
        t0 = time.perf_counter()
        while True:
            os.pwrite(fd, page, 0)
            n += 1
            if time.perf_counter() - t0 >= seconds:
                break
        t1 = time.perf_counter()
        os.fsync(fd)
        return t1 - t0, n, time.perf_counter() - t1
    finally:
        os.close(fd)


def test_an_fsync_gives_back_what_the_writes_before_it_cost_through_fuse(tmp_path, cleanup):
    # A volume whose writes take 50 ms, the instance's page cache on
    # (--ram): buffered writes are dirty pages and the fsync writes them
    # back, answered when the volume would have finished. On the instance a
    # buffered write takes microseconds; here each is a FUSE round trip, so
    # a write-then-fsync would take the model's time plus the round trips.
    # The fsync gives them back while the volume is idle: after half a
    # second of rewriting one page (thousands of round trips, far more than
    # 50 ms of them) the fsync's one 4 KiB write-back is already due and it
    # is answered as soon as the backing file is synced, well inside 50 ms;
    # after a single write (a round trip of tens of µs) it still takes the
    # model's 50 ms (the draw is 48.5–52 ms but for 1 %, less the write).
    (tmp_path / "cat").mkdir()
    (tmp_path / "cat" / "slow.toml").write_text(SLOW_CATALOG)
    sc = tmp_path / "slow.toml"
    sc.write_text('[configs.slow]\nhost = "local/host/server"\n[[configs.slow.pools]]\ndevice = "local/test-slow"\n')
    e = Emulator(tmp_path, sc, "--ram", "1", "--catalog", str(tmp_path / "cat"), "--json", config="slow")
    cleanup.append(e.mount)
    try:
        took, n, fsync_after_many = _timed_writes_then_fsync(e.mount / "many", 0.5)
        _, _, fsync_after_one = _timed_writes_then_fsync(e.mount / "one", 0.0)
    finally:
        rc, out, err = e.stop()
    assert rc == 130, err
    assert n > 1000, n
    assert fsync_after_many < 0.025, (fsync_after_many, n, took)
    assert fsync_after_one >= 0.045, fsync_after_one
    # The summary counts what was given back: the first fsync all of its
    # 48.5-52 ms (all it had); the second at most the single write's round
    # trip, which on a busy machine may come to nothing to give (the write
    # was answered before the model's clock moved), so it counts 1 or 2.
    summary = json.loads(out)
    assert summary["fsyncs_given_back"] in (1, 2), summary
    assert 0.045 <= summary["fsync_given_back_s"] <= 0.06, summary
    # The line on stderr says the same count as the summary.
    assert f"; {summary['fsyncs_given_back']} fsyncs answered" in err, err
    # --no-give-back: the same half second of rewrites, and the fsync
    # takes the model's 50 ms all the same.
    kept = Emulator(tmp_path, sc, "--ram", "1", "--catalog", str(tmp_path / "cat"), "--json", "--no-give-back",
                    config="slow", name="kept")
    cleanup.append(kept.mount)
    try:
        _, n, fsync_kept = _timed_writes_then_fsync(kept.mount / "many", 0.5)
    finally:
        rc, out, err = kept.stop()
    assert rc == 130, err
    assert n > 1000 and fsync_kept >= 0.045, (n, fsync_kept)
    assert json.loads(out)["fsyncs_given_back"] == 0


# Fills the volume with 64 KiB writes until one fails; prints the errno
# (0: never failed) and the bytes written. Run as its own process so that
# a hang is a timeout, not a stuck test.
_FILL = """
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
n = 0
try:
    while n < 64 << 20:
        n += os.write(fd, b"\\xa5" * 65536)
    print(0, n)
except OSError as e:
    print(e.errno, n)
"""


def test_a_full_backing_folder_gives_enospc_says_so_and_keeps_what_was_fsynced(tmp_path, scenario, cleanup):
    """The backing folder on a 16 MiB tmpfs: the writer that fills it gets
    ENOSPC (28), not EIO and not a hang; the emulator keeps serving and says
    which folder is full; space freed makes writes work again; and a file
    fsynced before the disk filled reads back whole after a remount."""
    backing = tmp_path / "vol-backing"
    backing.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(backing)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root): {r.stderr.strip()}")
    try:
        e = Emulator(tmp_path, scenario)
        cleanup.append(e.mount)
        kept = os.urandom(1 << 20)
        try:
            fd = os.open(e.mount / "kept", os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, kept)
            os.fsync(fd)
            os.close(fd)
            fill = subprocess.run([sys.executable, "-c", _FILL, str(e.mount / "fill")], capture_output=True, text=True, timeout=120)
            code, written = (int(x) for x in fill.stdout.split())
            assert code == 28, f"the writer got errno {code} ({os.strerror(code) if code else 'no error'}) after {written:,} bytes"
            # 16 MiB less the kept file and the marker; at least half of it went in.
            assert 7 << 20 < written < 16 << 20, written
            # Past the emulator's next status tick, it still serves the volume.
            time.sleep(2.5)
            assert e.p.poll() is None
            assert (e.mount / "kept").read_bytes() == kept
            (e.mount / "fill").unlink()
            (e.mount / "after").write_bytes(b"room again")
            assert (e.mount / "after").read_bytes() == b"room again"
        finally:
            rc, _, err = e.stop()
        assert rc == 130, err
        assert f"the backing folder {backing} is full" in err, err
        assert "refused with ENOSPC" in err.splitlines()[-1], err
        assert not _mounted(e.mount)
        again = Emulator(tmp_path, scenario)
        try:
            assert (again.mount / "kept").read_bytes() == kept
        finally:
            rc, _, err = again.stop()
        assert rc == 130, err
    finally:
        subprocess.run(["umount", str(backing)], capture_output=True)
    assert not _mounted(backing)
