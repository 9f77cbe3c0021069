//! The vendors' own arithmetic, reproduced exactly. Each expected value
//! cites where it comes from.

use crate::common;
use common::{catalog, limits};
use storlab_model::ModelError;

fn one_volume(host: &str, pool: &str) -> String {
    format!("[configs.a]\nhost = \"{host}\"\n[[configs.a.pools]]\n{pool}\n")
}

fn err(scenario: &str) -> ModelError {
    storlab_model::limits(&catalog(), "s.toml", scenario).expect_err("should be rejected")
}

// EBS user guide, gp2 table (general-purpose.md): size → baseline IOPS,
// burst duration at 3,000 IOPS from a full 5.4 M-credit bucket.
#[test]
fn gp2_baseline_and_burst_duration_table() {
    for (size, baseline, burst_s) in [
        (1.0, 100.0, Some(1862.0)),
        (100.0, 300.0, Some(2000.0)),
        (334.0, 1002.0, Some(2703.0)),
        (750.0, 2250.0, Some(7200.0)),
        (1000.0, 3000.0, None),
        (5334.0, 16000.0, None),
    ] {
        let r = limits(&one_volume("aws/ec2/r5b.24xlarge", &format!("device = \"aws/ebs/gp2\"\nsize_gib = {size}")));
        let p = &r.configs[0].pools[0];
        assert_eq!(p.baseline_iops, baseline, "{size} GiB baseline");
        assert_eq!(p.burst_s.map(|s| s.round()), burst_s, "{size} GiB burst duration");
        if burst_s.is_some() {
            assert_eq!(p.burst_iops, 3000.0);
        }
    }
}

// 5.4 M credits refill at the baseline rate: 100 GiB empties at 2,000 s and
// then runs at 300 IOPS; 4 KiB random I/O on a large host is bound by it.
#[test]
fn gp2_ceiling_and_sustained_on_an_unconstrained_host() {
    let r = limits(&one_volume("aws/ec2/r5b.24xlarge", "device = \"aws/ebs/gp2\"\nsize_gib = 100"));
    let c = &r.configs[0];
    assert_eq!(c.ceilings["rand4k_read_iops"], 3000.0);
    assert_eq!(c.sustained["rand4k_read_iops"], 300.0);
    assert!(c.binding["rand4k_read_iops"].contains("burst 3000 IOPS"), "{}", c.binding["rand4k_read_iops"]);
    // 1 MiB counts as 4 I/Os of 256 KiB: 300 / 4 × 1 MiB = 75 MiB/s
    // sustained; bursting, 3,000 / 4 = 750 MiB/s is capped by 128 MiB/s.
    assert_eq!(c.sustained["seq1m_read_bytes_s"], 75.0 * 1048576.0);
    assert_eq!(c.ceilings["seq1m_read_bytes_s"], 128.0 * 1048576.0);
}

// gp2 171–333 GiB reaches 250 MiB/s only while credits last.
#[test]
fn gp2_mid_size_throughput_bursts_with_the_credit_bucket() {
    let r = limits(&one_volume("aws/ec2/r5b.24xlarge", "device = \"aws/ebs/gp2\"\nsize_gib = 200"));
    let c = &r.configs[0];
    assert_eq!(c.ceilings["seq1m_write_bytes_s"], 250.0 * 1048576.0);
    // Empty: 600 IOPS × 256 KiB = 150 MiB/s, capped at 128.
    assert_eq!(c.sustained["seq1m_write_bytes_s"], 128.0 * 1048576.0);
}

// io1: at most 50 IOPS per GiB (provisioned-iops.md).
#[test]
fn io1_above_50_iops_per_gib_is_rejected_with_the_nearest_value() {
    let e = err(&one_volume("aws/ec2/r5b.24xlarge", "device = \"aws/ebs/io1\"\nsize_gib = 100\niops = 5001"));
    let msg = e.to_string();
    assert!(msg.contains("s.toml: configs.a.pools[0].iops"), "{msg}");
    assert!(msg.contains("nearest valid value 5000"), "{msg}");
    // exactly 50:1 is fine
    limits(&one_volume("aws/ec2/r5b.24xlarge", "device = \"aws/ebs/io1\"\nsize_gib = 100\niops = 5000"));
}

// gp3: 500 IOPS per GiB, 0.25 MiB/s per provisioned IOPS.
#[test]
fn gp3_ratios() {
    let e = err(&one_volume("aws/ec2/r5b.24xlarge", "device = \"aws/ebs/gp3\"\nsize_gib = 10\niops = 6000"));
    assert!(e.to_string().contains("nearest valid value 5000"), "{e}");
    let e = err(&one_volume("aws/ec2/r5b.24xlarge", "device = \"aws/ebs/gp3\"\nsize_gib = 100\niops = 3000\nthroughput_mib_s = 1000"));
    assert!(e.to_string().contains("nearest valid value 750"), "{e}");
    // 80,000 IOPS needs 160 GiB; 2,000 MiB/s needs 8,000 IOPS.
    let r = limits(&one_volume("aws/ec2/r5b.24xlarge", "device = \"aws/ebs/gp3\"\nsize_gib = 160\niops = 80000\nthroughput_mib_s = 2000"));
    assert_eq!(r.configs[0].ceilings["rand4k_write_iops"], 80000.0);
    assert_eq!(r.configs[0].ceilings["seq1m_read_bytes_s"], 2000.0 * 1048576.0);
    // a 1 GiB gp3 still gets its 3,000 included IOPS
    let r = limits(&one_volume("aws/ec2/r5b.24xlarge", "device = \"aws/ebs/gp3\"\nsize_gib = 1"));
    assert_eq!(r.configs[0].pools[0].baseline_iops, 3000.0);
}

// io2 since 2025-04-30 (EBS user guide, provisioned-iops, current page):
// every io2 volume is Block Express — 1,000 IOPS per GiB, up to 256,000,
// 0.256 MiB/s per IOPS up to 4,000 MiB/s — on any Nitro instance.
#[test]
fn io2_is_block_express_on_any_nitro_instance() {
    // 1,000 per GiB: 100 GiB allows 100,000; one more is refused.
    let e = err(&one_volume("aws/ec2/r5b.24xlarge", "device = \"aws/ebs/io2\"\nsize_gib = 100\niops = 100001"));
    assert!(e.to_string().contains("nearest valid value 100000"), "{e}");
    let r = limits(&one_volume("aws/ec2/r5b.24xlarge", "device = \"aws/ebs/io2\"\nsize_gib = 256\niops = 256000"));
    assert_eq!(r.configs[0].ceilings["rand4k_read_iops"], 256000.0);
    // 0.256 × 256,000 = 65,536 MiB/s, capped at 4,000 MiB/s.
    assert_eq!(r.configs[0].ceilings["seq1m_read_bytes_s"], 4000.0 * 1048576.0);
    assert!(r.configs[0].warnings.is_empty(), "{:?}", r.configs[0].warnings);
    // m5.xlarge is Nitro but was never on the 2023 Block Express list: the
    // volume attaches; 10,000 IOPS is above the instance's 6,000 baseline /
    // 18,750 burst EBS limit, which binds.
    let r = limits(&one_volume("aws/ec2/m5.xlarge", "device = \"aws/ebs/io2\"\nsize_gib = 256\niops = 10000"));
    assert_eq!(r.configs[0].pools[0].baseline_iops, 10000.0);
    assert_eq!(r.configs[0].sustained["rand4k_read_iops"], 6000.0);
    // The old id is the same volume type.
    let r = limits(&one_volume("aws/ec2/m5.xlarge", "device = \"aws/ebs/io2-block-express\"\nsize_gib = 256\niops = 10000"));
    assert_eq!(r.configs[0].pools[0].baseline_iops, 10000.0);
}

// Not on Nitro (m4.2xlarge is Xen): io2 may be provisioned up to 64,000
// IOPS and delivers up to 32,000 — capped with a note, not refused; above
// 64,000 it cannot attach (same page). io1 likewise: "64,000 IOPS only on
// Nitro; other instance families guarantee performance up to 32,000".
#[test]
fn provisioned_iops_on_xen_are_capped_at_32000_with_a_note() {
    let r = limits(&one_volume("aws/ec2/m4.2xlarge", "device = \"aws/ebs/io2\"\nsize_gib = 100\niops = 40000"));
    let c = &r.configs[0];
    assert_eq!(c.pools[0].provisioned_iops, Some(40000.0));
    assert_eq!(c.pools[0].baseline_iops, 32000.0);
    assert!(c.warnings.iter().any(|w| w.contains("at most 32000 IOPS") && w.contains("Nitro")), "{:?}", c.warnings);
    // Billed as provisioned: 100 × $0.125 + 32,000 × $0.065 + 8,000 ×
    // $0.0455 = 12.50 + 2,080 + 364 = $2,456.50.
    let storage: f64 = c.cost_breakdown.iter().filter(|i| i.item.starts_with("pool")).map(|i| i.usd.unwrap()).sum();
    assert_eq!((storage * 100.0).round() / 100.0, 2456.50);
    let e = err(&one_volume("aws/ec2/m4.2xlarge", "device = \"aws/ebs/io2\"\nsize_gib = 100\niops = 64001"));
    assert!(e.to_string().contains("nearest valid value 64000"), "{e}");
    let r = limits(&one_volume("aws/ec2/m4.2xlarge", "device = \"aws/ebs/io1\"\nsize_gib = 1000\niops = 40000"));
    assert_eq!(r.configs[0].pools[0].baseline_iops, 32000.0);
    assert_eq!(r.configs[0].warnings.len(), 1);
}

// AWS knowledge center (EBS I/O size): sequential I/O is merged into 256 KiB
// units only from 32 KiB up; smaller sequential I/O counts one each. gp3
// with 3,000 IOPS and 1,000 MiB/s... at 125 MiB/s: 16 KiB sequential reads
// count 1 each → 3,000 I/Os/s × 16 KiB = 46.875 MiB/s; 32 KiB sequential
// reads merge 8 to one → 125 MiB/s throughput binds, 4,000 I/Os/s.
#[test]
fn ebs_merges_sequential_io_only_from_32_kib() {
    use storlab_model::limits::{pool_ceiling, Assumptions, IoPattern};
    let cat = catalog();
    let sc = storlab_model::scenario::ScenarioFile::from_toml("s.toml", &one_volume("aws/ec2/r5b.24xlarge", "device = \"aws/ebs/gp3\"\nsize_gib = 100")).unwrap();
    let dep = &storlab_model::resolve_all(&cat, "s.toml", &sc).unwrap()[0];
    let pool = &dep.pools[0];
    let seq = |kib: f64| pool_ceiling(dep, pool, IoPattern { size_bytes: kib * 1024.0, read: true, sequential: true }, true, Assumptions::default()).value;
    assert_eq!(seq(16.0), 3000.0);
    assert_eq!(seq(32.0), 125.0 * 1048576.0 / 32768.0);
    // 4 KiB sequential: 3,000 I/Os, not 64 merged into one.
    assert_eq!(seq(4.0), 3000.0);
}

// Attachment limits. EC2 (volume_limits.html): most Nitro instances share 28
// attachments between EBS volumes, network interfaces and instance-store
// volumes — 28 − 1 network interface − 1 EBS root volume = 26 data volumes
// on m5.xlarge. Azure: Standard_E4s_v5 takes 8 data disks (esv5-series.md).
#[test]
fn attachment_limits_are_errors_with_the_limit() {
    limits(&one_volume("aws/ec2/m5.xlarge", "device = \"aws/ebs/gp3\"\nsize_gib = 10\ncount = 26\nlayout = \"stripe\""));
    let e = err(&one_volume("aws/ec2/m5.xlarge", "device = \"aws/ebs/gp3\"\nsize_gib = 10\ncount = 27\nlayout = \"stripe\""));
    let m = e.to_string();
    assert!(m.contains("28 attachments") && m.contains("nearest valid value 26"), "{m}");
    // r5dn.24xlarge: 4 instance-store volumes take 4 more: 28 − 1 − 1 − 4 = 22.
    let e = err(&one_volume("aws/ec2/r5dn.24xlarge", "device = \"aws/ebs/gp3\"\nsize_gib = 10\ncount = 23\nlayout = \"stripe\""));
    assert!(e.to_string().contains("nearest valid value 22"), "{e}");
    limits(&one_volume("azure/vm/Standard_E4s_v5", "device = \"azure/premium-ssd/P10\"\ncount = 8\nlayout = \"stripe\""));
    let e = err(&one_volume("azure/vm/Standard_E4s_v5", "device = \"azure/premium-ssd/P10\"\ncount = 9\nlayout = \"stripe\""));
    assert!(e.to_string().contains("at most 8 data disks"), "{e}");
}

// Azure VM limits are MBps = 10^6 bytes/s (size table definitions):
// Standard_DS4_v2's uncached 384 MBps is 384,000,000 bytes/s.
#[test]
fn azure_vm_limits_are_decimal_megabytes() {
    let r = limits(&one_volume("azure/vm/Standard_DS4_v2", "device = \"azure/premium-ssd/P30\"\ncount = 4\nlayout = \"stripe\""));
    let c = &r.configs[0];
    assert_eq!(c.ceilings["seq1m_read_bytes_s"], 384e6);
    assert_eq!(c.binding["seq1m_read_bytes_s"], "host Standard_DS4_v2: uncached limit 384 MB/s");
}

// Ultra Disk throughput: "0.25 MB/s per provisioned IOPS" with MB/s =
// 10^6 bytes/s. 4,000 IOPS allows 1,000 MB/s = 10^9 bytes/s; asking 1,001
// MB/s is refused. On Standard_E64s_v5 (uncached 1,735 MBps) a 1,000 MB/s
// disk binds at 10^9 bytes/s. Billing: $0.34967 per MB/s-month × 1,000.
#[test]
fn ultra_disk_throughput_is_decimal() {
    let pool = "device = \"azure/ultra\"\nsize_gib = 1024\niops = 4000\nthroughput_mb_s = 1000";
    let r = limits(&format!("region = \"azure/eastus\"\n{}", one_volume("azure/vm/Standard_E64s_v5", pool)));
    let c = &r.configs[0];
    assert_eq!(c.ceilings["seq1m_read_bytes_s"], 1e9);
    let tp = c.cost_breakdown.iter().find(|i| i.item.contains("MB/s-month")).expect("throughput priced");
    assert_eq!(tp.usd, Some(349.67));
    let e = err(&one_volume("azure/vm/Standard_E64s_v5", "device = \"azure/ultra\"\nsize_gib = 1024\niops = 4000\nthroughput_mb_s = 1001"));
    assert!(e.to_string().contains("nearest valid value 1000"), "{e}");
}

// Ultra Disk on a VM series missing from Microsoft's list: a warning that
// names the rule and its source, not an error.
#[test]
fn ultra_disk_on_an_unlisted_series_warns() {
    let r = limits(&one_volume("azure/vm/Standard_DS14_v2", "device = \"azure/ultra\"\nsize_gib = 1024\niops = 4000\nthroughput_mb_s = 100"));
    let w = &r.configs[0].warnings;
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("Ultra Disk") && w[0].contains("performance-guidelines-best-practices-storage"), "{w:?}");
}

// The licence selects the host price; an unknown one is an error with the
// nearest valid value.
#[test]
fn license_selects_the_price_and_is_checked() {
    let e = err("[configs.a]\nhost = \"aws/ec2/t3.medium\"\nlicense = \"windos\"\n[[configs.a.pools]]\ndevice = \"aws/ebs/gp3\"\nsize_gib = 10\n");
    let m = e.to_string();
    assert!(m.contains("configs.a.license") && m.contains("nearest valid value 'windows'"), "{m}");
    // t3.medium us-east-1: Linux $0.0416/h, Windows $0.060/h; × 730 h.
    let host_usd = |lic: &str| {
        let r = limits(&format!("region = \"aws/us-east-1\"\n[configs.a]\nhost = \"aws/ec2/t3.medium\"\nlicense = \"{lic}\"\n[[configs.a.pools]]\ndevice = \"aws/ebs/gp3\"\nsize_gib = 10\n"));
        r.configs[0].cost_breakdown[0].usd
    };
    assert_eq!(host_usd("linux"), Some(30.37)); // 0.0416 × 730 = 30.368
    assert_eq!(host_usd("windows"), Some(43.80)); // 0.060 × 730
}

// RDS without an engine: the layout assumed is stated.
#[test]
fn rds_without_engine_states_the_assumption() {
    let r = limits("[configs.a]\nhost = \"aws/rds/db.m4.2xlarge\"\n[[configs.a.pools]]\ndevice = \"aws/ebs/gp2\"\nsize_gib = 400\n");
    let c = &r.configs[0];
    assert_eq!(c.pools[0].count, 1);
    assert!(c.assumptions.iter().any(|a| a.contains("no engine") && a.contains("4 volumes")), "{:?}", c.assumptions);
}

// EBS pricing, us-east-1: gp2 $0.10/GB-month; io1 $0.125/GB-month +
// $0.065/IOPS-month. 400 GiB gp2 = $40.00; io1 400 GiB at 5,000 IOPS =
// 50 + 325 = $375.00; at 2,500 IOPS = 50 + 162.50 = $212.50.
#[test]
fn ebs_costs_in_us_east_1() {
    let storage_cost = |pool: &str| {
        let r = limits(&format!("region = \"aws/us-east-1\"\n{}", one_volume("aws/ec2/m5.xlarge", pool)));
        let c = &r.configs[0];
        c.cost_breakdown.iter().filter(|i| i.item.starts_with("pool")).map(|i| i.usd.unwrap()).sum::<f64>()
    };
    assert_eq!(storage_cost("device = \"aws/ebs/gp2\"\nsize_gib = 400"), 40.00);
    assert_eq!(storage_cost("device = \"aws/ebs/io1\"\nsize_gib = 400\niops = 5000"), 375.00);
    assert_eq!(storage_cost("device = \"aws/ebs/io1\"\nsize_gib = 400\niops = 2500"), 212.50);
    // gp3: 3,000 IOPS and 125 MiB/s included; 100 GiB × 0.08 + 1,000 × 0.005
    // + 25 × 0.04 = 8 + 5 + 1 = $14.00
    assert_eq!(storage_cost("device = \"aws/ebs/gp3\"\nsize_gib = 100\niops = 4000\nthroughput_mib_s = 150"), 14.00);
}

// A burstable instance: t3.medium EBS 2,000 baseline / 11,800 max IOPS for
// 30 minutes (ebs-optimized.md).
#[test]
fn t3_medium_instance_burst_binds_five_striped_gp2() {
    let r = limits(&one_volume("aws/ec2/t3.medium", "device = \"aws/ebs/gp2\"\nsize_gib = 20\ncount = 5\nlayout = \"stripe\""));
    let c = &r.configs[0];
    // 5 × gp2 20 GiB: 5 × 3,000 = 15,000 burst > 11,800 instance max.
    assert_eq!(c.ceilings["rand4k_read_iops"], 11800.0);
    assert!(c.binding["rand4k_read_iops"].starts_with("host t3.medium: EBS burst 11800 IOPS"), "{}", c.binding["rand4k_read_iops"]);
    // Empty: 5 × 100 = 500 baseline IOPS < 2,000 instance baseline.
    assert_eq!(c.sustained["rand4k_read_iops"], 500.0);
    let hb = c.host_burst.as_ref().unwrap();
    assert_eq!(hb.burst_s, Some(1800.0));
}

// st1: baseline 40 MiB/s per TiB, burst 250 MiB/s per TiB (hdd-vols.md); a
// 4 KiB random I/O costs a whole 1 MiB credit.
#[test]
fn st1_throughput_credits() {
    let r = limits(&one_volume("aws/ec2/r5b.24xlarge", "device = \"aws/ebs/st1\"\nsize_gib = 1024"));
    let c = &r.configs[0];
    assert_eq!(c.ceilings["seq1m_read_bytes_s"], 250.0 * 1048576.0);
    assert_eq!(c.sustained["seq1m_read_bytes_s"], 40.0 * 1048576.0);
    assert_eq!(c.ceilings["rand4k_read_iops"], 250.0);
    // A full 1 TiB bucket drains at 250 − 40 MiB/s: 1,048,576 / 210 s.
    let p = &c.pools[0];
    assert_eq!(p.throughput_burst_s.unwrap().round(), (1048576.0f64 / 210.0).round());
}

// RDS classes m5/m6i/r5/r6i (RDS user guide, hardware table): db.r6i.large
// has 2 vCPUs, 16 GiB and "up to 10,000 Mbps" of EBS bandwidth = 1,250
// MB/s; its IOPS come from EC2 r6i.large (3,600 baseline / 40,000 burst,
// unverified for RDS). 1 MiB reads at the burst: 1,250 MB/s binds before
// 40,000 × 4 (256 KiB units) would; sustained, 81.25 MB/s (EC2 baseline).
#[test]
fn rds_r6i_large_class() {
    let r = limits("[configs.a]\nhost = \"aws/rds/db.r6i.large\"\nengine = \"postgres\"\n[[configs.a.pools]]\ndevice = \"aws/ebs/gp3\"\nsize_gib = 100\niops = 12000\nthroughput_mib_s = 2000\n");
    let c = &r.configs[0];
    assert_eq!((c.host_vcpus, c.host_memory_gib), (Some(2.0), Some(16.0)));
    assert_eq!(c.ceilings["seq1m_read_bytes_s"], 1.25e9);
    assert_eq!(c.sustained["seq1m_read_bytes_s"], 81.25e6);
    assert!(c.unverified.iter().any(|u| u.contains("db.r6i.large EBS max IOPS")), "{:?}", c.unverified);
    for id in ["db.m5.24xlarge", "db.m6i.32xlarge", "db.r5.12xlarge", "db.r6i.8xlarge"] {
        limits(&format!("[configs.a]\nhost = \"aws/rds/{id}\"\nengine = \"mysql\"\n[[configs.a.pools]]\ndevice = \"aws/ebs/gp3\"\nsize_gib = 100\n"));
    }
}

// RDS prices by engine, us-east-1 Single-AZ (infracost RDS golden):
// db.m5.xlarge SQL Server SE $893.52 / 730 h = $1.224/h, EE $1,705.28 /
// 730 h = $2.336/h; db.m5.large MySQL $124.83 / 730 h = $0.171/h. RDS gp3
// storage $0.115 per GB-month: 100 GiB = $11.50.
#[test]
fn rds_instance_prices_by_engine_and_licence() {
    let host_cost = |host: &str, engine: &str, license: &str| {
        let lic = if license.is_empty() { String::new() } else { format!("license = \"{license}\"\n") };
        let r = limits(&format!("region = \"aws/us-east-1\"\n[configs.a]\nhost = \"aws/rds/{host}\"\nengine = \"{engine}\"\n{lic}[[configs.a.pools]]\ndevice = \"aws/ebs/gp3\"\nsize_gib = 100\n"));
        let c = &r.configs[0];
        (c.cost_breakdown[0].usd, c.cost_breakdown[0].item.clone(), c.cost_breakdown.iter().find(|i| i.item.contains("RDS storage")).and_then(|i| i.usd))
    };
    assert_eq!(host_cost("db.m5.xlarge", "sqlserver", "windows-sql-standard").0, Some(893.52));
    assert_eq!(host_cost("db.m5.xlarge", "sqlserver", "windows-sql-enterprise").0, Some(1705.28));
    let (usd, item, storage) = host_cost("db.m5.large", "mysql", "");
    assert_eq!((usd, storage), (Some(124.83), Some(11.50)));
    assert!(item.contains("engine mysql"), "{item}");
    // SQL Server without an edition: missing, with the way to choose one.
    let (usd, item, _) = host_cost("db.m5.xlarge", "sqlserver", "");
    assert_eq!(usd, None);
    assert!(item.contains("windows-sql-standard"), "{item}");
}

// EC2 instance burst: AWS gives 30 minutes at the maximum, not the refill.
// t3.medium: (11,800 − 2,000) IOPS × 1,800 s = 17,640,000 I/Os, refilled
// at the 2,000 IOPS baseline: 8,820 s from empty at idle. Stated, marked.
#[test]
fn instance_burst_refill_is_stated_and_marked() {
    let r = limits(&one_volume("aws/ec2/t3.medium", "device = \"aws/ebs/gp3\"\nsize_gib = 10"));
    let c = &r.configs[0];
    assert!(c.assumptions.iter().any(|a| a.contains("8820 s") && a.contains("not published")), "{:?}", c.assumptions);
    assert!(c.unverified.iter().any(|u| u.contains("burst refill rate")), "{:?}", c.unverified);
}

// Host facts for the database model: memory everywhere; a relative CPU
// speed only where published (Azure DSv2: ACU 210–250 → 2.3; m5: the
// m5.4xlarge's stress-ng div16 result, 1284.992938 bogo ops a second, in
// catalog/tables/cpu-speed.tsv; t3: the t3.2xlarge's, 1350.48878, its
// family's largest size; m4: none).
#[test]
fn host_memory_and_cpu_speed() {
    let cat = catalog();
    // Every vendor host; the on-premises template is the user's own server.
    for (id, h) in cat.hosts.iter().filter(|(_, h)| h.kind != storlab_model::catalog::HostKind::Local) {
        assert!(h.memory_gib.is_some(), "{id} has no memory_gib");
    }
    let r = limits(&one_volume("azure/vm/Standard_DS4_v2", "device = \"azure/premium-ssd/P30\""));
    assert_eq!(r.configs[0].host_cpu_speed, Some(2.3));
    let r = limits(&one_volume("aws/ec2/m5.xlarge", "device = \"aws/ebs/gp3\"\nsize_gib = 10"));
    assert_eq!(r.configs[0].host_cpu_speed, Some(1284.992938));
    let r = limits(&one_volume("aws/ec2/t3.medium", "device = \"aws/ebs/gp3\"\nsize_gib = 10"));
    assert_eq!(r.configs[0].host_cpu_speed, Some(1350.48878));
    let r = limits(&one_volume("aws/ec2/m4.2xlarge", "device = \"aws/ebs/gp3\"\nsize_gib = 10"));
    assert_eq!(r.configs[0].host_cpu_speed, None);
}

// An RDS class takes the CPU speed of the EC2 family it is named after
// (cpu-speed.tsv: m5 1284.992938, m6i 1890.889045, r5 1284.445177, r6i
// 1891.093102), so db.m6i is 1.47× db.m5 a core, as m6i is m5; db.m4 has
// no figure (no m4 row), and says nothing rather than this machine's.
#[test]
fn rds_classes_take_their_ec2_familys_cpu_speed() {
    let speed = |host: &str| {
        let r = limits(&one_volume(host, "device = \"aws/ebs/gp3\"\nsize_gib = 100"));
        r.configs[0].host_cpu_speed
    };
    assert_eq!(speed("aws/rds/db.m5.xlarge"), Some(1284.992938));
    assert_eq!(speed("aws/rds/db.m6i.xlarge"), Some(1890.889045));
    assert_eq!(speed("aws/rds/db.r5.2xlarge"), Some(1284.445177));
    assert_eq!(speed("aws/rds/db.r6i.2xlarge"), Some(1891.093102));
    assert_eq!(speed("aws/rds/db.m4.2xlarge"), None);
    let ratio = speed("aws/rds/db.m6i.large").unwrap() / speed("aws/rds/db.m5.large").unwrap();
    assert!((ratio - 1.4715).abs() < 0.001, "{ratio}");
}

// Premium SSD v2 "can be used with any premium storage-enabled virtual
// machine size" (disks-deploy-premium-v2): on a VM without Premium Storage,
// a warning naming that rule and its page; Premium SSD (v1) stays an error.
#[test]
fn premium_ssd_v2_on_a_vm_without_premium_storage_warns() {
    let mut files: Vec<(String, String)> = std::fs::read_dir(common::catalog_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    files.push(("mine.toml".into(), "[source.mine]\nurl = \"x\"\ndate = \"2026\"\n[[host]]\nid = \"azure/vm/Standard_D4_v2\"\ntitle = \"no premium storage\"\nsrc = \"mine\"\nkind = \"azure-vm\"\nvcpus = 8\nmemory_gib = 28\nuncached = { iops = 16000, mb_s = 300 }\n".into()));
    let cat = storlab_model::Catalog::from_sources(files.iter().map(|(n, t)| (n.as_str(), t.as_str()))).unwrap();
    let r = storlab_model::limits(&cat, "s.toml", &one_volume("azure/vm/Standard_D4_v2", "device = \"azure/premium-ssd-v2\"\nsize_gib = 100")).unwrap();
    let w = &r.configs[0].warnings;
    assert!(w.iter().any(|w| w.contains("Premium Storage") && w.contains("disks-deploy-premium-v2")), "{w:?}");
    let e = storlab_model::limits(&cat, "s.toml", &one_volume("azure/vm/Standard_D4_v2", "device = \"azure/premium-ssd/P30\"")).unwrap_err();
    assert!(e.to_string().contains("Premium Storage"), "{e}");
}

// The host's processor in the limits record, with the sustained all-core
// clock the vendor publishes: r6i "all-core turbo frequency of 3.5 GHz"
// (EC2 API change note of 2022-01-20, aws-sdk-php 3.209.9); r5 "sustained all
// core Turbo CPU clock speed of up to 3.1 GHz" (the R5 page); Esv5 "an all
// core turbo clock speed of 3.5 GHz" (the series summary). Mv2's page gives
// an all-core base (2.5 GHz) and a max turbo, no sustained all-core clock.
#[test]
fn limits_name_the_host_processor_and_its_all_core_clock() {
    let cpu = |host: &str, pool: &str| limits(&one_volume(host, pool)).configs[0].host_cpu.clone().expect("a processor");
    let c = cpu("aws/ec2/r6i.large", "device = \"aws/ebs/gp3\"\nsize_gib = 100");
    assert!(c.model.contains("Ice Lake 8375C"), "{c:?}");
    assert_eq!(c.all_core_ghz, Some(3.5));
    assert_eq!(cpu("aws/ec2/r5.large", "device = \"aws/ebs/gp3\"\nsize_gib = 100").all_core_ghz, Some(3.1));
    let c = cpu("azure/vm/Standard_E8s_v5", "device = \"azure/premium-ssd/P30\"");
    assert!(c.model.contains("8370C") && c.all_core_ghz == Some(3.5), "{c:?}");
    let c = cpu("azure/vm/Standard_M208ms_v2", "device = \"azure/premium-ssd/P30\"");
    assert!(c.model.contains("8180M") && c.all_core_ghz.is_none(), "{c:?}");
}
