//! The vendors' own arithmetic, reproduced exactly. Each expected value
//! cites where it comes from.

mod common;
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

// io2: 500 IOPS per GiB; Block Express: 1,000 per GiB, 0.256 MiB/s per IOPS
// up to 4,000 MiB/s, and only on Block Express instances.
#[test]
fn io2_and_block_express_ratios() {
    let e = err(&one_volume("aws/ec2/r5b.24xlarge", "device = \"aws/ebs/io2\"\nsize_gib = 100\niops = 50001"));
    assert!(e.to_string().contains("nearest valid value 50000"), "{e}");
    let r = limits(&one_volume("aws/ec2/r5b.24xlarge", "device = \"aws/ebs/io2-block-express\"\nsize_gib = 256\niops = 256000"));
    assert_eq!(r.configs[0].ceilings["rand4k_read_iops"], 256000.0);
    assert_eq!(r.configs[0].ceilings["seq1m_read_bytes_s"], 4000.0 * 1048576.0);
    let e = err(&one_volume("aws/ec2/m5.xlarge", "device = \"aws/ebs/io2-block-express\"\nsize_gib = 256\niops = 1000"));
    assert!(e.to_string().contains("Block Express"), "{e}");
}

// io1 above 32,000 IOPS needs Nitro; m4 is Xen.
#[test]
fn io1_above_32000_needs_nitro() {
    let e = err(&one_volume("aws/ec2/m4.2xlarge", "device = \"aws/ebs/io1\"\nsize_gib = 1000\niops = 40000"));
    assert!(e.to_string().contains("Nitro"), "{e}");
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
