"""Bad input: one clear line on stderr naming file, entry and field, a
non-zero exit, never a traceback."""

from __future__ import annotations

import pytest

T3 = '[configs.a]\nhost = "aws/ec2/t3.medium"\n[[configs.a.pools]]\n'


def fails(storlab, path, *needles):
    r = storlab("limits", str(path))
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stdout == ""
    err = r.stderr.strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: ")
    for n in needles:
        assert n in err, (n, err)
    return err


def test_unknown_id_names_the_nearest(storlab, scenario):
    fails(storlab, scenario(T3 + 'device = "aws/ebs/gp4"\nsize_gib = 10\n'),
          "s.toml", "configs.a.pools[0].device", "unknown device 'aws/ebs/gp4'", "did you mean 'aws/ebs/gp3'")


def test_unknown_host(storlab, scenario):
    fails(storlab, scenario('[configs.a]\nhost = "aws/ec2/t3.medium2"\n[[configs.a.pools]]\ndevice = "aws/ebs/gp2"\nsize_gib = 1\n'),
          "configs.a.host", "did you mean 'aws/ec2/t3.medium'")


def test_missing_field(storlab, scenario):
    fails(storlab, scenario(T3 + 'device = "aws/ebs/gp2"\n'), "configs.a.pools[0].size_gib", "needs size_gib")
    fails(storlab, scenario('[configs.a]\n[[configs.a.pools]]\ndevice = "aws/ebs/gp2"\n'), "configs.a", "missing field `host`")


def test_mistyped_field(storlab, scenario):
    fails(storlab, scenario(T3 + 'device = "aws/ebs/gp2"\nsize_gib = "lots"\n'), "s.toml:5", "size_gib", "expected a number")
    fails(storlab, scenario(T3 + 'device = "aws/ebs/gp2"\nsise_gib = 10\n'), "sise_gib", "did you mean `size_gib`")


def test_io1_above_50_iops_per_gib(storlab, scenario):
    # 100 GiB × 50 = 5,000 IOPS at most.
    fails(storlab, scenario(T3 + 'device = "aws/ebs/io1"\nsize_gib = 100\niops = 6000\n'),
          "configs.a.pools[0].iops", "50 IOPS per GiB", "nearest valid value 5000")


def test_gp3_beyond_its_ratios(storlab, scenario):
    # 0.25 MiB/s per IOPS: 3,000 IOPS allow 750 MiB/s.
    fails(storlab, scenario(T3 + 'device = "aws/ebs/gp3"\nsize_gib = 500\nthroughput_mib_s = 1000\n'),
          "throughput_mib_s", "nearest valid value 750")
    # 500 IOPS per GiB: 20 GiB allow 10,000.
    fails(storlab, scenario(T3 + 'device = "aws/ebs/gp3"\nsize_gib = 20\niops = 12000\n'), "iops", "nearest valid value 10000")


def test_host_cache_on_a_4_tib_disk(storlab, scenario):
    # P50 is 4,096 GiB: "Disk caching isn't supported for disks 4 TiB and larger".
    text = '[configs.a]\nhost = "azure/vm/Standard_DS4_v2"\n[[configs.a.pools]]\ndevice = "azure/premium-ssd/P50"\nhost_cache = "readonly"\n'
    fails(storlab, scenario(text), "configs.a.pools[0].host_cache", "4 TiB")


def test_more_disks_than_the_vm_takes(storlab, scenario):
    # Standard_DS4_v2 takes 32 data disks.
    text = '[configs.a]\nhost = "azure/vm/Standard_DS4_v2"\n[[configs.a.pools]]\ndevice = "azure/premium-ssd/P10"\ncount = 33\nlayout = "stripe"\n'
    fails(storlab, scenario(text), "configs.a", "at most 32 data disks")


def test_device_of_another_cloud(storlab, scenario):
    fails(storlab, scenario(T3 + 'device = "azure/premium-ssd/P30"\n'), "azure device", "aws host")


@pytest.mark.parametrize("text,where", [
    ("[configs.a\nhost = 1\n", "s.toml:1:"),
    ('title = "x"\n[configs.a]\nhost = aws\n', "s.toml:3:"),
])
def test_malformed_toml_names_the_line(storlab, scenario, text, where):
    fails(storlab, scenario(text), where)


def test_unreadable_scenario(storlab, tmp_path):
    fails(storlab, tmp_path / "nope.toml", "no such scenario file")
    bad = tmp_path / "bin.toml"
    bad.write_bytes(b"\xff\xfe\x00bad")
    fails(storlab, bad, "cannot read scenario file")


def test_malformed_user_catalog(storlab, scenario, tmp_path):
    cat = tmp_path / "cat.toml"
    cat.write_text('[[device]]\nid = "local/x"\ntitle = 3\n')
    p = scenario(T3 + 'device = "aws/ebs/gp2"\nsize_gib = 10\n')
    r = storlab("limits", str(p), "--catalog", str(cat))
    assert r.returncode == 1 and "cat.toml:3" in r.stderr and "title" in r.stderr
    # a user file may not silently replace a vendor figure
    cat.write_text('[[device]]\nid = "aws/ebs/gp2"\ntitle = "x"\nkind = "volume"\nmedia = "ssd"\naccounting = { unit_kib = 256 }\nsize_gib = { min = 1 }\n')
    r = storlab("limits", str(p), "--catalog", str(cat))
    assert r.returncode == 1 and "already defined in aws-ebs.toml" in r.stderr


def test_usage_error_exits_2(storlab):
    r = storlab("limits")
    assert r.returncode == 2


# ---- Adversarial input: each reproducer ends at once, on one line --------
# These run `storlab` in this process (main(), as the console script does),
# which is fast; the signal tests (test_signals.py) need a subprocess.

import re
import signal
import sys

from conftest import EXAMPLES, R5_LARGE, ROOT

PROFILE = (ROOT / "python" / "storlab" / "profiles" / "tpcc-postgresql.toml").read_text()
GP2 = '[configs.a]\nhost = "aws/ec2/t3.medium"\n[[configs.a.pools]]\ndevice = "aws/ebs/gp2"\nsize_gib = 100\n'


@pytest.fixture
def cli(capsys, monkeypatch):
    """`storlab ARGS` in this process: (exit code, stdout, stderr)."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("STORLAB_CATALOG", raising=False)

    def run(*args: str):
        from storlab.cli import TERMINATED, main

        monkeypatch.setattr(sys, "argv", ["storlab", *map(str, args)])
        saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
        try:
            with pytest.raises(SystemExit) as e:
                main()
        finally:
            for s, h in saved.items():
                signal.signal(s, h)
            TERMINATED.clear()
        out, err = capsys.readouterr()
        return e.value.code, out, err
    return run


def refused(result, *needles, code=1):
    """Exit `code`, one clean `error:` line on stderr holding every needle."""
    rc, out, err = result
    err = err.strip()
    assert rc == code, (rc, out[-500:], err[-2000:])
    assert "Traceback" not in err and "panicked" not in err and "internal error" not in err, err[-2000:]
    assert len(err.splitlines()) == 1, err[-2000:]
    assert err.startswith("error: "), err
    for n in needles:
        assert n in err, (n, err)
    return err


def test_rate_iops_0_is_refused_at_parse(cli, tmp_path):
    # fio job of the issue: rate_iops=0 once made simulate allocate 24 GB.
    (tmp_path / "rate0.fio").write_text("[mix]\nrw=randrw\nbs=8k\nrate_iops=0\nsize=128m\nruntime=3\n")
    sc = tmp_path / "rate0.toml"
    sc.write_text('[workload]\nfio = "rate0.fio"\n' + GP2)
    refused(cli("simulate", sc, "--duration", "5"), "rate0.fio:4: rate_iops: 0", "nearest valid value 1")


def _db(tmp_path, name: str, profile_text: str):
    (tmp_path / f"{name}.toml").write_text(profile_text)
    sc = tmp_path / f"{name}-sc.toml"
    sc.write_text(f'[workload.database]\nprofile = "{name}.toml"\nscale = 10\nvus = [1, 2]\nrampup_s = 1\nduration_s = 10\n{R5_LARGE}')
    return sc


@pytest.mark.parametrize("value,nearest", [("inf", "10000000000"), ("nan", "0"), ("-1.0", "0")])
def test_a_profiles_wal_bytes_out_of_range(cli, tmp_path, value, nearest):
    text, n = re.subn(r"\nwal_bytes = [0-9.e+]+", f"\nwal_bytes = {value}", PROFILE, count=1)
    assert n == 1
    refused(cli("simulate", _db(tmp_path, "wal", text)), "wal.toml", ".wal_bytes:", f"nearest valid value {nearest}")


def test_a_profiles_negative_cpu(cli, tmp_path):
    text, n = re.subn(r"\ncpu_us = [0-9.e+]+", "\ncpu_us = -5", PROFILE, count=1)
    assert n == 1
    refused(cli("simulate", _db(tmp_path, "cpu", text)), "cpu.toml", ".cpu_us: -5", "nearest valid value 0")


def test_a_profile_syntax_error_is_one_line_with_line_and_column(cli, tmp_path):
    # `foo = = 3` on line 2: the second '=' at column 7 is where toml stops.
    text = PROFILE.replace("schema_version = 1", "schema_version = 1\nfoo = = 3", 1)
    lines = text.splitlines()
    row = lines.index("foo = = 3") + 1
    refused(cli("simulate", _db(tmp_path, "syn", text)), "syn.toml", f"line {row} column 7")


@pytest.mark.parametrize("value,nearest", [("1e26", "10000000"), ("0", "0.01")])
def test_an_overlays_latency_out_of_range(cli, tmp_path, value, nearest):
    cat = tmp_path / "overlay.toml"
    cat.write_text('[source.mine]\nurl = "measured here"\ndate = "2026-11-28"\nstatus = "secondary"\n\n'
                   f'[[latency]]\ndevices = ["aws/ebs/gp2"]\nsrc = "mine"\nread_median_us = {value}\nread_p99_us = 2000\n'
                   'write_median_us = 1000\nwrite_p99_us = 2000\n')
    sc = tmp_path / "s.toml"
    sc.write_text('[workload]\nprofile = "cdm-default"\n' + GP2)
    refused(cli("simulate", sc, "--catalog", cat), "overlay.toml", "read_median_us", f"nearest valid value {nearest}")


def test_an_iodepth_beyond_the_budget_is_refused_with_the_numbers(cli):
    err = refused(cli("simulate", EXAMPLES / "azure-ds4-p30-host-cache.toml", "--iodepth", "1000000000"),
                  "1000000000 I/Os in flight", "budget of 4194304", "--iodepth")
    # With --threads 16 every job runs 16 threads: 2^22 slots / 16 = 262144 each.
    err = refused(cli("simulate", EXAMPLES / "azure-ds4-p30-host-cache.toml", "--iodepth", "1000000000", "--threads", "16"),
                  "16000000000 I/Os in flight")
    assert "--iodepth 262144" in err, err


@pytest.mark.parametrize("args", [("simulate", "--iodepth"), ("simulate", "--threads"), ("advise", "--top")])
def test_a_count_beyond_32_bits_is_a_usage_error_naming_the_option(storlab, args):
    verb, flag = args
    r = storlab(verb, str(EXAMPLES / "azure-ds4-p30-host-cache.toml"), flag, "99999999999999999999")
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert flag in r.stderr and "4294967295" in r.stderr and "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("flag,value,nearest", [("--runtime", "nan", "0.001"), ("--interval", "inf", "31536000"),
                                                ("--runtime", "1e300", "31536000")])
def test_bench_disk_refuses_non_finite_seconds(cli, tmp_path, flag, value, nearest):
    refused(cli("bench", "disk", "--path", tmp_path, "--size", "16MiB", flag, value), flag, f"nearest valid value {nearest}")


def test_simulate_refuses_an_infinite_period(cli):
    refused(cli("simulate", EXAMPLES / "azure-ds4-p30-host-cache.toml", "--period", "inf"), "--period")


def _record(tmp_path, **fields):
    r = {"config": "a", "job": "RND4K-Q1T1-read", "iops": 100.0, "bw_bytes_s": 409600.0, "lat_mean_us": 100.0,
         "lat_p50_us": 90.0, "lat_p90_us": 150.0, "lat_p99_us": 300.0, "lat_p999_us": 500.0, "lat_max_us": 900.0,
         "binding": "latency"}
    r.update(fields)
    rec = {"schema_version": 1, "tool": {"name": "storlab", "version": "0", "git_sha": ""}, "engine": "simulate",
           "scenario": "s.toml", "seed": 1, "workload": "cdm-default", "results": [r], "series": [], "interrupted": False}
    import json

    p = tmp_path / "rec.json"
    p.write_text(json.dumps(rec))
    return p


def test_report_refuses_a_record_with_a_wrong_field_type(cli, tmp_path):
    p = _record(tmp_path, config=1)
    refused(cli("report", p, "-o", tmp_path / "r.html"), "rec.json", "results[0].config")
    assert not (tmp_path / "r.html").exists()


def test_compare_refuses_negative_rates_and_latencies(cli, tmp_path):
    p = _record(tmp_path, iops=-5, bw_bytes_s=-1e9, lat_mean_us=-3)
    refused(cli("compare", p, p), "rec.json", "results[0]", ".iops: -5", "nearest valid value 0")


def test_report_refuses_an_empty_record(cli, tmp_path):
    p = tmp_path / "empty.json"
    p.write_text('{"schema_version": 1, "results": []}')
    refused(cli("report", p, "-o", tmp_path / "r.html"), "empty.json", "no results")
    assert not (tmp_path / "r.html").exists()


def test_a_scenario_ending_in_an_equals_sign(cli, tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text(GP2 + "region =")
    err = refused(cli("limits", sc), "s.toml:6:")
    assert len(err.split("s.toml:6:", 1)[1].strip()) > 10, err


def test_a_100_kb_key_is_not_echoed_whole(cli, tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text(GP2 + "k" * 100_000 + " = 1\n")
    err = refused(cli("limits", sc), "s.toml")
    # the key, with its table path before it, cut to 200 characters and its length
    assert len(err) < 1000 and re.search(r"k…\(100,0\d\d characters\)", err), err[:300]


def test_a_full_disk_names_the_output(cli):
    # /dev/full: every write fails with ENOSPC, as on a full file system;
    # a device is written in place, never replaced by a file.
    import stat
    from pathlib import Path

    if not Path("/dev/full").is_char_device():
        pytest.skip("no /dev/full here")
    sc = EXAMPLES / "aws-t3-gp2-one-vs-five.toml"
    refused(cli("simulate", sc, "--duration", "1s", "--cloudwatch", "/dev/full"), "/dev/full", "No space left on device")
    assert stat.S_ISCHR(Path("/dev/full").stat().st_mode)


def test_a_full_tmpfs_names_the_report(cli, tmp_path):
    # A 1 MiB tmpfs holds no report (a report is megabytes): the user is told
    # which file did not fit. Needs root to mount; skipped where it cannot.
    import os
    import subprocess

    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    try:
        p = _record(tmp_path)
        refused(cli("report", p, "-o", mnt / "r.html"), str(mnt / "r.html"), "No space left on device")
        assert not any(mnt.iterdir())
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_bench_disk_on_a_nearly_full_disk_never_suggests_size_0(cli, tmp_path):
    import os
    import subprocess

    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(mnt)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    try:
        err = refused(cli("bench", "disk", "--path", mnt, "--size", "16MiB"), str(mnt), "MiB free")
        assert "--size 0MiB" not in err and "free some space" in err, err
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_emulate_threads_0_is_refused_before_mounting(cli, tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "m").mkdir()
    refused(cli("emulate", EXAMPLES / "aws-t3-gp2-one-vs-five.toml", "--config", "one-100gib", "--backing", tmp_path / "b",
                "--mount", tmp_path / "m", "--threads", "0"), "--threads 0", "nearest valid value 1")


def test_vus_with_an_empty_count_is_refused(cli, tmp_path):
    refused(cli("bench", "db", "--dir", tmp_path, "--vus", "1,,2", "--duration", "1"), "--vus '1,,2'")


def test_a_time_based_run_beyond_the_event_budget_is_refused_before_it_starts(cli, tmp_path):
    # A local NVMe reads at most 900,000 IOPS (its datasheet, catalog/local.toml):
    # a year of any CrystalDiskMark job is up to 900,000 × 31,536,000 s = 2.8e13
    # I/Os, past the 1e10 budget; a runtime that fits is at least
    # 1e10 / 900,000 = 11,111 s.
    sc = tmp_path / "s.toml"
    sc.write_text('[workload]\nprofile = "cdm-default"\n[configs.nvme]\nhost = "local/host/server"\n'
                  '[[configs.nvme.pools]]\nrole = "all"\ndevice = "local/nvme"\n')
    err = refused(cli("simulate", sc, "--duration", "31536000"), "s.toml", "config 'nvme'", "1e10 I/Os a config", "--duration")
    import re

    fits = int(re.search(r"--duration (\d+)", err).group(1))
    assert 11111 <= fits < 31536000, err


def test_a_rust_panic_is_one_internal_error_line_never_a_traceback(tmp_path):
    # STORLAB_FAULT=panic makes the work thread panic on purpose: what a bug
    # in the engine looks like to a user. It must be the documented exit 70
    # and one line, and leave no half-written output.
    from conftest import run_process

    out = tmp_path / "r.json"
    r = run_process("simulate", str(EXAMPLES / "azure-ds4-p30-host-cache.toml"), "--duration", "1", "--cloudwatch", str(out),
                    env={"STORLAB_FAULT": "panic"})
    err = r.stderr.strip()
    assert r.returncode == 70, (r.returncode, err[-2000:])
    assert "Traceback" not in err and "panicked at" not in err, err[-2000:]
    assert len(err.splitlines()) == 1 and err.startswith("error: internal error ("), err
    assert "STORLAB_FAULT=panic" in err and "--debug" in err, err
    assert not out.exists()


@pytest.mark.parametrize("region,config_region,words", [
    ("aws/us-eats-1", None, ("s.toml: region:", "unknown region 'aws/us-eats-1'", "nearest valid value 'aws/us-east-1'")),
    ("azure/eastus", None, ("s.toml: region:", "region 'azure/eastus' is Azure's", "aws/ec2/t3.medium is an AWS host",
                            "nearest valid value 'aws/")),
    (None, "azure/eastus", ("configs.a.region", "is an AWS host")),
])
def test_a_misspelt_region_or_another_clouds_is_refused_before_running(storlab, scenario, region, config_region, words):
    # Without the check, a misspelt region leaves every price out and an AWS
    # host in an Azure region runs as if priced nowhere: both silently.
    top = f'region = "{region}"\n' if region else ""
    cfg = T3 + ('device = "aws/ebs/gp3"\nsize_gib = 100\n')
    if config_region:
        cfg = cfg.replace('[[configs.a.pools]]', f'region = "{config_region}"\n[[configs.a.pools]]')
    path = scenario(top + '[workload]\nprofile = "cdm-default"\n' + cfg)
    fails(storlab, path, *words)
    r = storlab("simulate", str(path), "--duration", "1")
    assert r.returncode == 1 and words[-1] in r.stderr, r.stderr


@pytest.mark.parametrize("args, words", [
    (("advise", "--help"), ("a workload, a [goal], an optional [space] and current [configs.*].", "Needs storlab[ray].")),
    (("bench", "import", "--help"), ("for `[workload.import] profile = FILE`.",)),
])
def test_help_keeps_its_bracketed_words(storlab, args, words):
    # The help markup reads [goal] as a style unless it is escaped: the
    # words vanished ("a workload, a , an optional  and current .").
    r = storlab(*args, env={"COLUMNS": "400"})
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.replace("│", " ").split())
    for w in words:
        assert w in text, (w, text)
