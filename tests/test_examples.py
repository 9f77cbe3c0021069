"""Every example in examples/ runs, as a table and as JSON, and its figures
come out as the vendors' rules give them."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES

# Scenarios; advise-*.toml are questions for `storlab advise` (tests/cli/test_advise.py).
ALL = sorted(p for p in EXAMPLES.glob("*.toml") if not p.name.startswith("advise-"))
MIB = 1024 * 1024


@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_example_runs(storlab, limits_json, path):
    r = storlab("limits", str(path))
    assert r.returncode == 0, r.stderr
    rec = limits_json(path)
    assert len(rec["configs"]) >= 2
    for c in rec["configs"]:
        for k, v in c["ceilings"].items():
            # buckets full never deliver less than buckets empty
            assert v is None or v >= c["sustained"][k], (c["name"], k)


def test_t3_one_vs_five_gp2(limits_json):
    one, five = limits_json(EXAMPLES / "aws-t3-gp2-one-vs-five.toml")["configs"]
    # 100 GiB: 300 baseline, 3,000 burst; 5 × 20 GiB: 5 × 100 baseline and
    # 5 × 3,000 = 15,000 burst, held to t3.medium's 11,800 EBS burst.
    assert (one["ceilings"]["rand4k_read_iops"], one["sustained"]["rand4k_read_iops"]) == (3000, 300)
    assert (five["ceilings"]["rand4k_read_iops"], five["sustained"]["rand4k_read_iops"]) == (11800, 500)
    # Same 100 GiB of gp2 at $0.10: $10.00 of storage either way.
    for c in (one, five):
        assert sum(i["usd"] for i in c["cost_breakdown"] if i["item"].startswith("pool")) == 10.00


def test_rds_gp2_vs_io1(limits_json):
    gp2, io1_5000, io1_2500 = limits_json(EXAMPLES / "aws-rds-m4-gp2-vs-io1.toml")["configs"]
    # SQL Server on RDS does not stripe: one 400 GiB gp2, 1,200 baseline.
    assert gp2["sustained"]["rand4k_write_iops"] == 1200
    assert gp2["pools"][0]["burst_s"] == 3000  # 5.4 M / (3,000 − 1,200)
    assert io1_5000["ceilings"]["rand4k_write_iops"] == 5000
    assert io1_2500["ceilings"]["rand4k_write_iops"] == 2500
    # db.m4.2xlarge: 1,000 Mbps of EBS bandwidth = 125 MB/s binds 1 MiB I/O.
    assert io1_5000["ceilings"]["seq1m_read_bytes_s"] == 125_000_000
    # RDS storage rates (us-east-1, Single-AZ): gp2 $0.115/GB; io1 $0.125/GB
    # + $0.10/IOPS.
    store = lambda c: round(sum(i["usd"] for i in c["cost_breakdown"] if i["item"].startswith("pool")), 2)  # noqa: E731
    assert store(gp2) == 46.00
    assert store(io1_5000) == 550.00
    assert store(io1_2500) == 300.00


def test_io2be_vs_fsx(limits_json):
    be, fsx = limits_json(EXAMPLES / "aws-io2be-vs-fsx-smb.toml")["configs"]
    # 2 × 64,000 IOPS striped.
    assert be["ceilings"]["rand4k_read_iops"] == 128000
    # r5b.24xlarge: 7,500 MB/s of EBS throughput binds 2 × 4,000 MiB/s.
    assert be["ceilings"]["seq1m_read_bytes_s"] == 7_500_000_000
    # FSx Windows at 2,048 MBps with 4,096 GiB SSD: 3,000 IOPS per TiB →
    # 12,000 IOPS per file system, × 4 shares.
    assert fsx["ceilings"]["rand4k_read_iops"] == 48000
    # Each share one SMB session of 4 connections (Multichannel, 100 Gbps
    # interface) at 5 Gbps each = 2.5 GB/s a share, 10 GB/s for 4: the file
    # servers' disk throughput binds first, 4 × 2,048 MB/s = 8.192 GB/s.
    assert fsx["ceilings"]["seq1m_read_bytes_s"] == 8_192_000_000
    assert fsx["binding"]["seq1m_read_bytes_s"] == "file system aws/fsx/windows (2048 MB/s, 4096 GiB) × 4: disk 2048 MB/s each"


def test_onprem_raid6(limits_json):
    nvme, raid6 = limits_json(EXAMPLES / "onprem-nvme-vs-raid6.toml")["configs"]
    assert nvme["ceilings"]["rand4k_write_iops"] == 200000  # PM9A3 datasheet
    # RAID-6, 8 drives: random reads on all 8 (8 × 204); a small random write
    # costs 6 drive operations (8 × 196 / 6); sequential on 6 data drives.
    assert raid6["ceilings"]["rand4k_read_iops"] == 8 * 204
    assert raid6["ceilings"]["rand4k_write_iops"] == round(8 * 196 / 6, 2)
    assert raid6["ceilings"]["seq1m_read_bytes_s"] == round(6 * 194.5 * MIB)
