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
