"""`storlab limits`: the JSON contract of DESIGN.md, the table, and the
figures the vendors' rules give (hand calculations in the comments)."""

from __future__ import annotations

import json

MIB = 1024 * 1024

DS4 = """
title = "t"
[configs.{name}]
host = "azure/vm/{vm}"
[[configs.{name}.pools]]
device = "azure/premium-ssd/{tier}"
count = {count}
layout = "{layout}"
host_cache = "{cache}"
{extra}
"""


def ds4(name="c", tier="P30", count=4, layout="stripe", cache="none", vm="Standard_DS4_v2", extra=""):
    """An Azure VM with one pool of Premium SSD tiers (DS4_v2, 4 × P30 striped by default)."""
    return DS4.format(name=name, tier=tier, count=count, layout=layout, cache=cache, vm=vm, extra=extra)


def test_json_follows_the_design_contract(limits_json, scenario):
    rec = limits_json(scenario(ds4()))
    assert rec["schema_version"] == 1
    assert rec["tool"]["name"] == "storlab" and rec["tool"]["version"]
    c = rec["configs"][0]
    keys = {"rand4k_read_iops", "rand4k_write_iops", "seq1m_read_bytes_s", "seq1m_write_bytes_s"}
    for field in ("ceilings", "binding", "sustained", "sustained_binding"):
        assert set(c[field]) == keys, field
    p = c["pools"][0]
    for field in ("device", "count", "baseline_iops", "burst_iops", "burst_s"):
        assert field in p
    assert isinstance(c["monthly_cost_usd"], float)
    assert all({"item", "usd"} <= set(i) for i in c["cost_breakdown"])


def test_azure_cache_none_is_bound_by_the_disks_then_the_uncached_limit(limits_json, scenario):
    c = limits_json(scenario(ds4(cache="none")))["configs"][0]
    # 4 × P30 at 5,000 IOPS = 20,000 < DS4_v2 uncached 25,600.
    assert c["ceilings"]["rand4k_read_iops"] == 20000
    assert "azure/premium-ssd/P30" in c["binding"]["rand4k_read_iops"]
    # 4 × 200 MiB/s = 838.9 MB/s > DS4_v2 uncached 384 MBps, where Microsoft's
    # size tables define MBps = 10^6 bytes/s.
    assert c["ceilings"]["seq1m_read_bytes_s"] == 384_000_000
    assert c["binding"]["seq1m_read_bytes_s"] == "host Standard_DS4_v2: uncached limit 384 MB/s"


def test_azure_readonly_cache_reads_hit_the_cached_limit(limits_json, scenario):
    c = limits_json(scenario(ds4(cache="readonly")))["configs"][0]
    # Hits count only against the VM's cached limit: 32,000 IOPS / 256 MB/s.
    assert c["ceilings"]["rand4k_read_iops"] == 32000
    assert c["binding"]["rand4k_read_iops"] == "host Standard_DS4_v2: cached limit 32000 IOPS"
    assert c["ceilings"]["seq1m_read_bytes_s"] == 256_000_000
    # Writes go to the disks too: 4 × 5,000 = 20,000 binds before 25,600
    # uncached and 32,000 cached.
    assert c["ceilings"]["rand4k_write_iops"] == 20000


def test_azure_credit_bursting_on_small_premium_disks(limits_json, scenario):
    c = limits_json(scenario(ds4(tier="P10", count=1, layout="single")))["configs"][0]
    p = c["pools"][0]
    # P10: 500 IOPS, bursts to 3,500 for 30 minutes from a full bucket.
    assert p["baseline_iops"] == 500 and p["burst_iops"] == 3500
    assert p["burst_s"] == 1800
    assert c["ceilings"]["rand4k_read_iops"] == 3500
    assert c["sustained"]["rand4k_read_iops"] == 500


def test_azure_premium_ssd_price(limits_json, scenario):
    c = limits_json(scenario('region = "azure/eastus"\n' + ds4()))["configs"][0]
    disks = [i for i in c["cost_breakdown"] if i["item"].startswith("pool")]
    # P30 LRS East US: $135.17 per disk-month × 4.
    assert sum(i["usd"] for i in disks) == 540.68


def test_table_puts_configs_side_by_side(storlab, scenario):
    text = ds4(name="none", cache="none") + ds4(name="readonly", cache="readonly").replace('title = "t"', "")
    r = storlab("limits", str(scenario(text)))
    assert r.returncode == 0, r.stderr
    header = next(line for line in r.stdout.splitlines() if "none" in line and "readonly" in line)
    assert header.index("none") < header.index("readonly")
    assert "cached limit 32000 IOPS" in r.stdout


def test_every_figure_of_a_config_is_the_hand_computed_one(storlab, scenario):
    # 4 × P30 striped on Standard_DS4_v2, host cache none, East US:
    # - 4 KiB random: 4 × 5,000 IOPS = 20,000 < 25,600 uncached IOPS;
    # - 1 MiB sequential: 4 × 200 MiB/s = 838,860,800 B/s > 384 MBps uncached
    #   (10^6 bytes/s) → 384,000,000 B/s;
    # - P30 has no credit bursting (on-demand only, off by default): ceilings
    #   and sustained are the same;
    # - cost: 4 × $135.17 = $540.68 for the disks, plus DS4_v2 Linux
    #   $0.585/h × 730 h = $427.05 → $967.73, every part priced.
    p = scenario(ds4())
    a = storlab("limits", str(p), "--json")
    assert a.returncode == 0, a.stderr
    c = json.loads(a.stdout)["configs"][0]
    expected = {"rand4k_read_iops": 20000, "rand4k_write_iops": 20000,
                "seq1m_read_bytes_s": 384_000_000, "seq1m_write_bytes_s": 384_000_000}
    assert c["ceilings"] == expected
    assert c["sustained"] == expected
    assert c["monthly_cost_usd"] == 967.73 and c["cost_complete"] is True
    assert [i["usd"] for i in c["cost_breakdown"] if "Standard_DS4_v2" in i["item"]] == [427.05]
    # and a second run prints the same bytes
    assert storlab("limits", str(p), "--json").stdout == a.stdout


def test_unknown_license_is_one_line_with_the_nearest_value(storlab, scenario):
    text = '[configs.a]\nhost = "aws/ec2/m5.xlarge"\nlicense = "windows-sql-standart"\n[[configs.a.pools]]\ndevice = "aws/ebs/gp3"\nsize_gib = 10\n'
    r = storlab("limits", str(scenario(text)))
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "configs.a.license" in lines[0] and "'windows-sql-standard'" in lines[0], r.stderr


def test_license_selects_the_host_price(limits_json, scenario):
    # m5.xlarge us-east-1: Linux $0.192/h, Windows $0.376/h, Windows with
    # SQL Server Standard $0.856/h; × 730 h = $140.16, $274.48 and $624.88.
    # t3.medium with SQL Server Standard: no price found, listed as missing.
    def host_item(lic, host="m5.xlarge"):
        text = f'region = "aws/us-east-1"\n[configs.a]\nhost = "aws/ec2/{host}"\nlicense = "{lic}"\n[[configs.a.pools]]\ndevice = "aws/ebs/gp3"\nsize_gib = 10\n'
        return limits_json(scenario(text))["configs"][0]["cost_breakdown"][0]
    assert host_item("linux")["usd"] == 140.16
    assert host_item("windows")["usd"] == 274.48
    assert host_item("windows-sql-standard")["usd"] == 624.88
    sql = host_item("windows-sql-standard", "t3.medium")
    assert sql["usd"] is None and "windows-sql-standard" in sql["item"]


def test_prices_not_found_are_missing_and_us_west_2_is_marked(limits_json, scenario):
    # aws-ec2.toml lists what no source gave: r5.large with SQL Server
    # Enterprise, and every SQL Server licence in us-west-2. They stay
    # missing (usd null, the total incomplete), never guessed. us-west-2's
    # EBS prices are assumed equal to us-east-1's (gp3 $0.08/GB-month:
    # 100 GiB = $8.00) and marked unverified; its EC2 Linux price comes
    # from a price-list extract (m5.xlarge $0.192/h × 730 h = $140.16).
    def config(region, host, lic):
        text = (f'region = "aws/{region}"\n[configs.a]\nhost = "aws/ec2/{host}"\nlicense = "{lic}"\n'
                '[[configs.a.pools]]\ndevice = "aws/ebs/gp3"\nsize_gib = 100\n')
        return limits_json(scenario(text))["configs"][0]
    for region, host, lic in (("us-east-1", "r5.large", "windows-sql-enterprise"), ("us-west-2", "m5.xlarge", "windows-sql-standard"),
                              ("us-west-2", "r5b.24xlarge", "windows-sql-enterprise")):
        c = config(region, host, lic)
        item = c["cost_breakdown"][0]
        assert item["usd"] is None and lic in item["item"] and f"aws/{region}" in item["item"], item
        assert c["cost_complete"] is False and c["monthly_cost_usd"] == 8.00
    c = config("us-west-2", "m5.xlarge", "linux")
    host, gp3 = c["cost_breakdown"][0], c["cost_breakdown"][1]
    assert host["usd"] == 140.16 and "us-west-2" in host["source"]
    assert gp3["usd"] == 8.00 and gp3["verified"] is False
    assert "pool all: aws/ebs/gp3: GiB-month: price" in c["unverified"]


def test_azure_vm_license_selects_the_host_price(limits_json, scenario):
    # East US pay-as-you-go, × 730 h a month (azure.toml's sources):
    # E8s_v5 Linux $0.504/h → $367.92; Windows $0.872/h → $636.56 (a
    # secondary table whose region is inferred: unverified); E64ds_v5 Linux
    # $4.608/h → $3,363.84. No published price for SQL Server
    # licence-included on Azure was found: listed as missing, the rest summed.
    def config(vm, lic):
        text = f'region = "azure/eastus"\n[configs.a]\nhost = "azure/vm/{vm}"\nlicense = "{lic}"\n[[configs.a.pools]]\ndevice = "azure/premium-ssd/P30"\n'
        return limits_json(scenario(text))["configs"][0]
    def host_item(vm, lic):
        return next(i for i in config(vm, lic)["cost_breakdown"] if vm in i["item"])
    linux = host_item("Standard_E8s_v5", "linux")
    assert linux["usd"] == 367.92 and linux["unit_usd"] == 0.504 and "karpenter" in linux["source"]
    windows = host_item("Standard_E8s_v5", "windows")
    assert windows["usd"] == 636.56 and windows["verified"] is False
    assert host_item("Standard_E64ds_v5", "linux")["usd"] == 3363.84
    c = config("Standard_E8s_v5", "windows-sql-standard")
    sql = next(i for i in c["cost_breakdown"] if "Standard_E8s_v5" in i["item"])
    assert sql["usd"] is None and "windows-sql-standard" in sql["item"]
    # P30 LRS East US $135.17 still counted; the total says it is incomplete.
    assert c["monthly_cost_usd"] == 135.17 and c["cost_complete"] is False


def test_warnings_reach_the_table(storlab, scenario):
    # io2 at 40,000 IOPS on m4.2xlarge (Xen): capped at 32,000 with a note.
    text = '[configs.a]\nhost = "aws/ec2/m4.2xlarge"\n[[configs.a.pools]]\ndevice = "aws/ebs/io2"\nsize_gib = 100\niops = 40000\n'
    r = storlab("limits", str(scenario(text)))
    assert r.returncode == 0, r.stderr
    assert "warning:" in r.stdout and "32000 IOPS" in r.stdout


def test_rds_postgres_stripes_gp2_from_400_gib(limits_json, scenario):
    # RDS user guide: PostgreSQL gp2 at 400 GiB and above is striped over 4
    # volumes: 4 × 100 GiB → 4 × 300 = 1,200 baseline, 4 × 3,000 = 12,000
    # burst, each volume's bucket lasting 5.4 M / 2,700 = 2,000 s.
    text = """
[configs.pg]
host = "aws/rds/db.m4.2xlarge"
engine = "postgres"
[[configs.pg.pools]]
device = "aws/ebs/gp2"
size_gib = 400
"""
    p = limits_json(scenario(text))["configs"][0]["pools"][0]
    assert p["count"] == 4 and p["rds_striped_from_gib"] == 400
    assert p["baseline_iops"] == 1200 and p["burst_iops"] == 12000
    assert p["burst_s"] == 2000


def test_user_catalog_adds_devices(limits_json, scenario, tmp_path, storlab):
    (tmp_path / "cat").mkdir()
    mine = tmp_path / "cat" / "mine.toml"
    mine.write_text("""
[source.my-datasheet]
url = "https://example.invalid/ssd.pdf"
date = "2026-01-01"
[[device]]
id = "local/my-ssd"
title = "Our SSD"
src = "my-datasheet"
kind = "local"
media = "ssd"
accounting = { unit_kib = 1024 }
size_gib = { fixed = 1000 }
iops = { rule = "fixed", value = 123456 }
throughput_mib_s = { rule = "fixed", value = 2000 }
""")
    p = scenario('[configs.a]\nhost = "local/host/server"\n[[configs.a.pools]]\ndevice = "local/my-ssd"\n')
    c = limits_json(p, "--catalog", str(mine))["configs"][0]
    assert c["ceilings"]["rand4k_read_iops"] == 123456
    r = storlab("limits", str(p), "--json", env={"STORLAB_CATALOG": str(tmp_path / "cat")})
    assert r.returncode == 0 and json.loads(r.stdout)["configs"][0]["ceilings"]["rand4k_read_iops"] == 123456
    # without the catalog, the id is unknown
    r = storlab("limits", str(p))
    assert r.returncode == 1 and "unknown device 'local/my-ssd'" in r.stderr


def test_catalog_list_and_show(storlab):
    r = storlab("catalog", "list", "--json")
    assert r.returncode == 0
    ids = {e["id"] for e in json.loads(r.stdout)["entries"]}
    for must in ("aws/ebs/gp2", "aws/ec2/t3.medium", "aws/rds/db.m4.2xlarge", "aws/fsx/windows", "aws/fsx/ontap",
                 "azure/premium-ssd/P30", "azure/ultra", "azure/vm/Standard_DS4_v2", "local/nvme"):
        assert must in ids, must
    r = storlab("catalog", "show", "aws/ebs/gp2", "--json")
    e = json.loads(r.stdout)
    assert e["type"] == "device"
    assert any("general-purpose.md" in s["url"] for s in e["sources"].values())
    r = storlab("catalog", "show", "aws/ebs/gp2")
    assert r.returncode == 0 and "sources" in r.stdout
    # aws-fsx.toml: ONTAP's paths = ["iscsi", "smb", "nfs"], printed as text
    # (the list was read as markup and printed empty).
    r = storlab("catalog", "show", "aws/fsx/ontap")
    assert "paths = [iscsi, smb, nfs]" in r.stdout, r.stdout


def test_azure_vm_level_burst(limits_json, scenario):
    # Standard_E4s_v5: uncached 6,400 IOPS / 145 MB/s, bursting to 20,000 /
    # 1,200 for 30 minutes. 4 × P30 give 20,000 IOPS.
    c = limits_json(scenario(ds4(vm="Standard_E4s_v5")))["configs"][0]
    assert c["ceilings"]["rand4k_read_iops"] == 20000
    assert c["sustained"]["rand4k_read_iops"] == 6400
    assert c["sustained_binding"]["rand4k_read_iops"] == "host Standard_E4s_v5: uncached baseline limit 6400 IOPS"
    assert c["host_burst"]["burst_s"] == 1800


def test_azure_on_demand_bursting(limits_json, scenario):
    # P30 on-demand bursting: 30,000 IOPS per disk with no bucket, so 4 of
    # them reach DS14_v2's uncached 51,200 whether or not credits remain.
    c = limits_json(scenario(ds4(vm="Standard_DS14_v2", extra='bursting = "on-demand"')))["configs"][0]
    assert c["ceilings"]["rand4k_read_iops"] == 51200
    assert "uncached" in c["binding"]["rand4k_read_iops"]


def test_on_demand_bursting_needs_p30_or_larger(storlab, scenario):
    text = '[configs.a]\nhost = "azure/vm/Standard_DS14_v2"\n[[configs.a.pools]]\ndevice = "azure/premium-ssd/P20"\nbursting = "on-demand"\n'
    r = storlab("limits", str(scenario(text)))
    assert r.returncode == 1 and "on-demand" in r.stderr and "P30" in r.stderr


def test_ontap_iscsi_mpio_paths(limits_json, scenario):
    # One FSx for ONTAP at 2,048 MBps with 4,096 GiB SSD over iSCSI: SSD
    # gives 3 IOPS per GiB = 12,288 IOPS (below the level's 80,000). Large
    # reads ride on the MPIO sessions, each held to EC2's 5 Gbps single-flow
    # limit: 2 paths = 1.25 GB/s, 4 paths = 2.5 GB/s, then the file server's
    # 2,048 MB/s disk throughput (0.75 MB/s per GiB × 4,096 = 3,072) binds.
    def run(paths):
        text = f"""
[configs.ontap]
host = "aws/ec2/r5dn.24xlarge"
[[configs.ontap.pools]]
device = "aws/fsx/ontap"
path = "iscsi"
mpio_paths = {paths}
throughput_mib_s = 2048
storage_gib = 4096
"""
        return limits_json(scenario(text))["configs"][0]

    two, four = run(2), run(4)
    assert two["ceilings"]["rand4k_read_iops"] == 12288
    assert two["ceilings"]["seq1m_read_bytes_s"] == 1_250_000_000
    assert two["binding"]["seq1m_read_bytes_s"] == "path iscsi: 2 MPIO sessions × 5 Gbps"
    assert four["ceilings"]["seq1m_read_bytes_s"] == 2_048_000_000
    assert "disk 2048 MB/s" in four["binding"]["seq1m_read_bytes_s"]


GP2_100 = """
[configs.gp2]
host = "aws/ec2/r5b.24xlarge"
[[configs.gp2.pools]]
device = "aws/ebs/gp2"
size_gib = 100
"""


def test_at_iops_says_how_long_the_gp2_bucket_lasts(storlab, limits_json, scenario):
    # EBS user guide, gp2 100 GiB: baseline 3 IOPS/GiB = 300, burst 3,000
    # from 5.4 M credits. At 3,000 IOPS: 5.4e6 / (3,000 − 300) = 2,000 s,
    # then 300 IOPS. At 2,000 IOPS: 5.4e6 / (2,000 − 300) = 3,176.47 s.
    # At 250 IOPS (below the baseline) it never empties.
    path = scenario(GP2_100)
    b = limits_json(path, "--at-iops", "3000")["configs"][0]["at_load"][0]
    assert (b["resource"], b["unit"], b["rate_while_full"], b["lasts_s"], b["rate_after"]) == ("pool all", "iops", 3000, 2000, 300)
    b = limits_json(path, "--at-iops", "2000")["configs"][0]["at_load"][0]
    assert abs(b["lasts_s"] - 5.4e6 / 1700) < 0.01
    assert limits_json(path, "--at-iops", "250")["configs"][0]["at_load"][0]["lasts_s"] is None
    plain = limits_json(path)["configs"][0]
    assert "at_load" not in plain and "ceilings" in plain  # the contract is unchanged without a load
    table = storlab("limits", str(path), "--at-iops", "3000").stdout
    assert "3,000 IOPS for 33.3 min (2,000 s), then 300 IOPS" in table
    r = storlab("limits", str(path), "--at-iops", "3000", "--at-mb-s", "100")
    assert r.returncode == 1 and "give one load" in r.stderr


def test_at_mb_s_on_st1(limits_json, scenario):
    # EBS user guide, st1: 40 MiB/s per TiB baseline, burst 250 MiB/s per
    # TiB, bucket 1 TiB of credits per TiB. 1 TiB at 200 MB/s (190.73 MiB/s):
    # 1,048,576 MiB / (190.73 − 40) MiB/s = 6,956.8 s, then 40 MiB/s =
    # 41.94 MB/s.
    path = scenario(GP2_100.replace("aws/ebs/gp2", "aws/ebs/st1").replace("size_gib = 100", "size_gib = 1024"))
    b = limits_json(path, "--at-mb-s", "200")["configs"][0]["at_load"][0]
    assert b["unit"] == "bytes_s" and b["rate_while_full"] == 200e6
    assert abs(b["lasts_s"] - 1024 * 1024 / (200e6 / 2**20 - 40)) < 1
    assert abs(b["rate_after"] - 40 * 2**20) < 1


def test_the_host_processor_and_its_all_core_clock(limits_json, scenario, storlab):
    # Esv5: "Intel Xeon Platinum 8573C (Emerald Rapids), 8473C (Sapphire
    # Rapids) or 8370C (Ice Lake) ... an all core turbo clock speed of 3.5 GHz"
    # (the series summary, azure-compute-docs, 2024-08-01).
    path = scenario(ds4(tier="P30", count=1, layout="single", vm="Standard_E8s_v5"))
    c = limits_json(path)["configs"][0]
    assert "8370C (Ice Lake)" in c["host_cpu"]["model"] and c["host_cpu"]["all_core_ghz"] == 3.5
    r = storlab("limits", str(path))
    assert r.returncode == 0, r.stderr
    assert "3.5 GHz all-core" in r.stdout, r.stdout
    # DS4_v2 lands on several processor generations: no processor is named.
    assert limits_json(scenario(ds4(), name="ds4.toml"))["configs"][0]["host_cpu"] is None


def test_azure_p10_did_not_burst_before_credit_bursting(limits_json, scenario):
    # Before credit-based bursting reached every public region (the bursting
    # include of 2020-03-29) a P10 had no bucket: 500 IOPS with buckets full
    # and empty. On 2021-01-01: 3,500 IOPS for (3,500 − 500) × 1,800 /
    # (3,500 − 500) = 1,800 s.
    path = scenario(ds4(tier="P10", count=1, layout="single"))
    old = limits_json(path, "--as-of", "2019-06-01")["configs"][0]
    p = old["pools"][0]
    assert (p["baseline_iops"], p["burst_iops"], p["burst_s"]) == (500, 500, None)
    new = limits_json(path, "--as-of", "2021-01-01")["configs"][0]
    p = new["pools"][0]
    assert (p["baseline_iops"], p["burst_iops"], p["burst_s"]) == (500, 3500, 1800)


def test_a_device_without_a_throughput_figure_limits_nothing_there(limits_json, scenario):
    # The catalog gives r5dn's instance store IOPS but no MB/s: where
    # nothing else is modelled its sequential ceiling is "no limit
    # modelled", never an "infinite" throughput printed as 2^63 − 1 MiB/s.
    text = '[configs.a]\nhost = "aws/ec2/r5dn.24xlarge"\n[[configs.a.pools]]\ndevice = "aws/ec2/instance-store/r5dn"\n'
    c = limits_json(scenario(text))["configs"][0]
    for key, binding in c["binding"].items():
        assert "9223372036854775807" not in binding, (key, binding)
        assert c["ceilings"][key] is None or c["ceilings"][key] < 1e15, (key, c["ceilings"][key])
