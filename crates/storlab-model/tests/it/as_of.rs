//! Vendor rules as of a date (`as_of`): the period lookup, the dated
//! catalog, and the shipped EBS history. Expected values cite the user-guide
//! versions the catalog cites.

use crate::common;
use common::catalog;
use storlab_model::catalog::{period_on, DevicePeriod};
use storlab_model::Catalog;

fn period(from: &str, until: &str) -> DevicePeriod {
    toml::from_str(&format!("from = \"{from}\"\nuntil = \"{until}\"\nsrc = \"s\"\n")).unwrap()
}

#[test]
fn period_lookup_takes_from_inclusive_and_until_exclusive() {
    let h = [period("2018-01-01", "2018-06-01"), period("2018-06-01", "2019-01-01")];
    assert_eq!(period_on(None, &h, "2017-12-31").unwrap_err(), "2018-01-01");
    assert_eq!(period_on(None, &h, "2018-01-01").unwrap().unwrap().until, "2018-06-01");
    assert_eq!(period_on(None, &h, "2018-05-31").unwrap().unwrap().until, "2018-06-01");
    assert_eq!(period_on(None, &h, "2018-06-01").unwrap().unwrap().until, "2019-01-01");
    assert!(period_on(None, &h, "2019-01-01").unwrap().is_none(), "today's rules from the last until");
    // Without history, known_from alone bounds the dates.
    assert_eq!(period_on(Some("2020-12-01"), &[] as &[DevicePeriod], "2020-11-30").unwrap_err(), "2020-12-01");
    assert!(period_on(Some("2020-12-01"), &[] as &[DevicePeriod], "2020-12-01").unwrap().is_none());
}

fn gp2_3400(date: Option<&str>) -> String {
    let as_of = date.map(|d| format!("as_of = \"{d}\"\n")).unwrap_or_default();
    format!("{as_of}[configs.a]\nhost = \"aws/ec2/m5.xlarge\"\n[[configs.a.pools]]\ndevice = \"aws/ebs/gp2\"\nsize_gib = 3400\n")
}

const MIB: f64 = 1024.0 * 1024.0;

// EC2 user guide of 2018-02-02 and 2018-11-29: gp2 "a maximum of 10,000
// IOPS (at 3,334 GiB and above)", "throughput can never exceed 160 MiB/s";
// 3 × 3,400 = 10,200 is capped at 10,000. Today (and from the upgrade of
// 2018-11-26): 10,200 IOPS and 250 MiB/s.
#[test]
fn gp2_in_august_2018_is_capped_at_10000_iops_and_160_mib_s() {
    let cat = catalog();
    let old = storlab_model::limits(&cat, "s.toml", &gp2_3400(Some("2018-08-29"))).unwrap();
    let p = &old.configs[0].pools[0];
    assert_eq!(p.baseline_iops, 10_000.0);
    assert_eq!(p.baseline_bytes_s, 160.0 * MIB);
    assert_eq!(old.configs[0].as_of.as_deref(), Some("2018-08-29"));
    let gp2 = old.configs[0].rules_applied.iter().find(|r| r.id == "aws/ebs/gp2").expect("gp2's rules named");
    assert_eq!((gp2.from.as_deref(), gp2.until.as_deref()), (Some("2018-02-02"), Some("2018-11-26")));
    assert!(gp2.source.as_deref().unwrap().contains("0a53b357412fb03d4f2525983972cacad6200f2d"));
    assert!(old.configs[0].assumptions.iter().any(|a| a.contains("prices are today's")));

    let now = storlab_model::limits(&cat, "s.toml", &gp2_3400(None)).unwrap();
    let p = &now.configs[0].pools[0];
    assert_eq!(p.baseline_iops, 10_200.0);
    assert_eq!(p.baseline_bytes_s, 250.0 * MIB);
    assert!(now.configs[0].as_of.is_none() && now.configs[0].rules_applied.is_empty());

    // The day of the upgrade applies the new rules.
    let after = storlab_model::limits(&cat, "s.toml", &gp2_3400(Some("2018-11-26"))).unwrap();
    assert_eq!(after.configs[0].pools[0].baseline_iops, 10_200.0);
}

// A dated catalog (--as-of) wins over the scenario's own as_of.
#[test]
fn dated_catalog_wins_over_the_scenario() {
    let cat = catalog();
    let dated = cat.on("2018-08-29", Default::default()).unwrap();
    let r = storlab_model::limits(&dated, "s.toml", &gp2_3400(Some("2024-01-01"))).unwrap();
    assert_eq!(r.configs[0].pools[0].baseline_iops, 10_000.0);
    assert_eq!(r.configs[0].as_of.as_deref(), Some("2018-08-29"));
}

// gp3 arrived 2020-12-01 (user guide document history): a scenario dated
// before is refused with that date.
#[test]
fn a_device_before_the_catalog_knows_it_is_refused_with_the_first_date() {
    let sc = "as_of = \"2018-08-29\"\n[configs.a]\nhost = \"aws/ec2/m5.xlarge\"\n[[configs.a.pools]]\ndevice = \"aws/ebs/gp3\"\nsize_gib = 100\n";
    let e = storlab_model::limits(&catalog(), "s.toml", sc).unwrap_err().to_string();
    assert!(e.contains("2020-12-01") && e.contains("aws/ebs/gp3") && e.contains("s.toml"), "{e}");
    let bad = "as_of = \"2018-8-29\"\n[configs.a]\nhost = \"aws/ec2/m5.xlarge\"\n[[configs.a.pools]]\ndevice = \"aws/ebs/gp2\"\n";
    let e = storlab_model::limits(&catalog(), "s.toml", bad).unwrap_err().to_string();
    assert!(e.contains("YYYY-MM-DD") && e.contains("as_of"), "{e}");
}

// gp3 before the raise of September 2025: at most 16,000 IOPS (user guide
// of 2020-12-03); today 80,000.
#[test]
fn gp3_in_2022_takes_at_most_16000_iops() {
    let sc = |d: &str| format!("as_of = \"{d}\"\n[configs.a]\nhost = \"aws/ec2/r5dn.24xlarge\"\n[[configs.a.pools]]\ndevice = \"aws/ebs/gp3\"\nsize_gib = 1000\niops = 20000\nthroughput_mib_s = 1000\n");
    assert!(storlab_model::limits(&catalog(), "s.toml", &sc("2022-06-01")).is_err());
    let r = storlab_model::limits(&catalog(), "s.toml", &sc("2025-10-01")).unwrap();
    assert_eq!(r.configs[0].pools[0].baseline_iops, 20_000.0);
}

// io1 between 2017-12-06 and the Nitro doubling: 32,000 IOPS and 500 MiB/s
// (user guide of 2018-02-02).
#[test]
fn io1_in_2018_takes_at_most_32000_iops() {
    let sc = |iops: u32| format!("as_of = \"2018-09-01\"\n[configs.a]\nhost = \"aws/ec2/m5.xlarge\"\n[[configs.a.pools]]\ndevice = \"aws/ebs/io1\"\nsize_gib = 2000\niops = {iops}\n");
    assert!(storlab_model::limits(&catalog(), "s.toml", &sc(40000)).is_err());
    let r = storlab_model::limits(&catalog(), "s.toml", &sc(32000)).unwrap();
    assert_eq!(r.configs[0].pools[0].baseline_bytes_s, 500.0 * MIB);
}

fn with_history(history: &str) -> Result<Catalog, storlab_model::ModelError> {
    let text = format!(
        "[source.s]\nurl = \"u\"\ndate = \"2020-01-01\"\n[[device]]\nid = \"x/y/z\"\ntitle = \"t\"\nsrc = \"s\"\nkind = \"local\"\nmedia = \"ssd\"\naccounting = {{ unit_kib = 4 }}\nsize_gib = {{ fixed = 10 }}\niops = {{ rule = \"fixed\", value = 100 }}\n{history}"
    );
    Catalog::from_sources([("c.toml", text.as_str())])
}

#[test]
fn catalog_refuses_malformed_histories() {
    with_history("[[device.history]]\nfrom = \"2018-01-01\"\nuntil = \"2019-01-01\"\nsrc = \"s\"\niops = { rule = \"fixed\", value = 50 }\n").expect("a sound history loads");
    let gap = "[[device.history]]\nfrom = \"2018-01-01\"\nuntil = \"2019-01-01\"\nsrc = \"s\"\n[[device.history]]\nfrom = \"2019-02-01\"\nuntil = \"2020-01-01\"\nsrc = \"s\"\n";
    let e = with_history(gap).unwrap_err().to_string();
    assert!(e.contains("history[1].from") && e.contains("2019-01-01"), "{e}");
    let e = with_history("[[device.history]]\nfrom = \"2018-13-01\"\nuntil = \"2019-01-01\"\nsrc = \"s\"\n").unwrap_err().to_string();
    assert!(e.contains("history[0].from") && e.contains("YYYY-MM-DD"), "{e}");
    let e = with_history("[[device.history]]\nfrom = \"2019-01-01\"\nuntil = \"2018-01-01\"\nsrc = \"s\"\n").unwrap_err().to_string();
    assert!(e.contains("history[0].until"), "{e}");
    let e = with_history("[[device.history]]\nfrom = \"2018-01-01\"\nuntil = \"2019-01-01\"\nsrc = \"nope\"\n").unwrap_err().to_string();
    assert!(e.contains("nope"), "{e}");
}

// EC2 user guide, EBSOptimized.md of 2018-08-04: r5.large 480 Mbps baseline
// (60 MB/s) and 3,500 Mbps burst (437.5 MB/s); from the version of
// 2019-12-04, 650 and 4,750 Mbps (81.25 and 593.75 MB/s). r5dn.24xlarge is
// first listed 2019-11-04: a date before it is refused with that date.
#[test]
fn instance_ebs_limits_follow_their_dates() {
    let sc = |d: &str, host: &str| format!("as_of = \"{d}\"\n[configs.a]\nhost = \"aws/ec2/{host}\"\n[[configs.a.pools]]\ndevice = \"aws/ebs/gp2\"\nsize_gib = 1000\n");
    let cat = catalog();
    let old = storlab_model::limits(&cat, "s.toml", &sc("2018-08-29", "r5.large")).unwrap();
    let b = old.configs[0].host_burst.as_ref().expect("r5.large bursts");
    assert_eq!((b.baseline_bytes_s, b.burst_bytes_s), (60e6, 437.5e6));
    let r = old.configs[0].rules_applied.iter().find(|r| r.id == "aws/ec2/r5.large").unwrap();
    assert_eq!(r.until.as_deref(), Some("2019-12-04"));
    let now = storlab_model::limits(&cat, "s.toml", &sc("2020-01-01", "r5.large")).unwrap();
    let b = now.configs[0].host_burst.as_ref().unwrap();
    assert_eq!((b.baseline_bytes_s, b.burst_bytes_s), (81.25e6, 593.75e6));
    let e = storlab_model::limits(&cat, "s.toml", &sc("2018-08-29", "r5dn.24xlarge")).unwrap_err().to_string();
    assert!(e.contains("2019-11-04") && e.contains("host"), "{e}");
}

fn azure_disk(date: &str, device: &str, extra: &str) -> String {
    format!("as_of = \"{date}\"\n[configs.a]\nhost = \"azure/vm/Standard_DS14_v2\"\n[[configs.a.pools]]\ndevice = \"azure/premium-ssd/{device}\"\n{extra}")
}

// Azure Premium SSD P10: 500 IOPS, 100 MiB/s in the size table of
// 2019-03-13 and today. Credit-based bursting (in every public region by the
// bursting include of 2020-03-29): up to 3,500 IOPS and 170 MiB/s, "30
// minutes at the maximum burst rate" from a full bucket, so the bucket holds
// (3,500 − 500) × 1,800 = 5,400,000 I/Os and lasts 5.4 M / (3,500 − 500) =
// 1,800 s. In June 2019 the disk did not burst: burst = baseline, no bucket.
#[test]
fn premium_ssd_p10_bursts_only_from_2020_03_29() {
    let cat = catalog();
    let old = storlab_model::limits(&cat, "s.toml", &azure_disk("2019-06-01", "P10", "")).unwrap();
    let p = &old.configs[0].pools[0];
    assert_eq!((p.baseline_iops, p.burst_iops, p.burst_s), (500.0, 500.0, None));
    assert_eq!((p.baseline_bytes_s, p.burst_bytes_s, p.throughput_burst_s), (100.0 * MIB, 100.0 * MIB, None));
    let r = old.configs[0].rules_applied.iter().find(|r| r.id == "azure/premium-ssd/P10").expect("P10's rules named");
    assert_eq!((r.from.as_deref(), r.until.as_deref()), (Some("2019-03-13"), Some("2020-03-29")));

    let new = storlab_model::limits(&cat, "s.toml", &azure_disk("2021-01-01", "P10", "")).unwrap();
    let p = &new.configs[0].pools[0];
    assert_eq!((p.baseline_iops, p.burst_iops), (500.0, 3500.0));
    assert_eq!(p.burst_s.map(|s| s.round()), Some(1800.0));
    assert_eq!((p.baseline_bytes_s, p.burst_bytes_s), (100.0 * MIB, 170.0 * MIB));
    // The day the include gives applies the new rule.
    let day = storlab_model::limits(&cat, "s.toml", &azure_disk("2020-03-29", "P10", "")).unwrap();
    assert_eq!(day.configs[0].pools[0].burst_iops, 3500.0);
}

// P1–P3 arrived with bursting (preview December 2019; the catalog knows them
// from the include of 2020-03-29); the size table of 2019-03-13 starts at P4.
// A date before the catalog knows a tier is refused with its first date.
#[test]
fn premium_ssd_before_the_catalog_knows_it_is_refused_with_the_first_date() {
    let cat = catalog();
    let e = storlab_model::limits(&cat, "s.toml", &azure_disk("2019-06-01", "P1", "")).unwrap_err().to_string();
    assert!(e.contains("2020-03-29") && e.contains("azure/premium-ssd/P1"), "{e}");
    let e = storlab_model::limits(&cat, "s.toml", &azure_disk("2018-06-01", "P10", "")).unwrap_err().to_string();
    assert!(e.contains("2019-03-13") && e.contains("azure/premium-ssd/P10"), "{e}");
}

// P60 in preview (size table of 2019-03-13): 12,500 IOPS and 480 MiB/s;
// today's 16,000 and 500 from the include of 2019-10-24.
#[test]
fn premium_ssd_p60_preview_figures() {
    let cat = catalog();
    let old = storlab_model::limits(&cat, "s.toml", &azure_disk("2019-06-01", "P60", "")).unwrap();
    let p = &old.configs[0].pools[0];
    assert_eq!((p.baseline_iops, p.baseline_bytes_s), (12_500.0, 480.0 * MIB));
    let later = storlab_model::limits(&cat, "s.toml", &azure_disk("2020-06-01", "P60", "")).unwrap();
    let p = &later.configs[0].pools[0];
    assert_eq!((p.baseline_iops, p.baseline_bytes_s), (16_000.0, 500.0 * MIB));
}

// On-demand bursting on P30 and larger: up to 30,000 IOPS and 1,000 MB/s
// (bursting include), in every public region from 2021-09-29 (the docs as
// quoted in azure-docs PR 81699). Asked for in 2020, it is refused.
#[test]
fn premium_ssd_on_demand_bursting_from_2021_09_29() {
    let cat = catalog();
    let e = storlab_model::limits(&cat, "s.toml", &azure_disk("2020-06-01", "P30", "bursting = \"on-demand\"\n")).unwrap_err().to_string();
    assert!(e.contains("on-demand"), "{e}");
    let r = storlab_model::limits(&cat, "s.toml", &azure_disk("2022-01-01", "P30", "bursting = \"on-demand\"\n")).unwrap();
    assert_eq!(r.configs[0].pools[0].burst_iops, 30_000.0);
}

fn gp2_on(date: &str, size: u32) -> String {
    format!("as_of = \"{date}\"\n[configs.a]\nhost = \"aws/ec2/m4.2xlarge\"\n[[configs.a.pools]]\ndevice = \"aws/ebs/gp2\"\nsize_gib = {size}\n")
}

// gp2 at its launch (AWS blog, 2014-06-17): 1 GB to 1 TB, 3 IOPS a GB with
// a burst to 3,000 — a 1,024 GiB volume's baseline is 3 × 1,024 = 3,072,
// held to 3,000; 128 MiB/s. A 2 TiB volume did not exist yet.
#[test]
fn gp2_at_its_2014_launch_is_1_tib_and_3000_iops_at_most() {
    let cat = catalog();
    let r = storlab_model::limits(&cat, "s.toml", &gp2_on("2014-08-01", 1024)).unwrap();
    let p = &r.configs[0].pools[0];
    assert_eq!(p.baseline_iops, 3000.0);
    assert_eq!(p.baseline_bytes_s, 128.0 * MIB);
    let e = storlab_model::limits(&cat, "s.toml", &gp2_on("2014-08-01", 2048)).unwrap_err().to_string();
    assert!(e.contains("size_gib") && e.contains("1024"), "{e}");
    // The day before the launch: refused with the launch day.
    let e = storlab_model::limits(&cat, "s.toml", &gp2_on("2014-06-16", 100)).unwrap_err().to_string();
    assert!(e.contains("2014-06-17"), "{e}");
}

// gp2 in November 2015 (the EC2 guide's text of 2015–2017): 3 IOPS a GiB
// up to 10,000; 500 GiB → 1,500 baseline, bursting to 3,000; 160 MiB/s from
// 214 GiB.
#[test]
fn gp2_dated_2015_takes_that_years_rules() {
    let r = storlab_model::limits(&catalog(), "s.toml", &gp2_on("2015-11-01", 500)).unwrap();
    let p = &r.configs[0].pools[0];
    assert_eq!((p.baseline_iops, p.burst_iops), (1500.0, 3000.0));
    assert_eq!(p.baseline_bytes_s, 160.0 * MIB);
    let big = storlab_model::limits(&catalog(), "s.toml", &gp2_on("2015-11-01", 5000)).unwrap();
    assert_eq!(big.configs[0].pools[0].baseline_iops, 10000.0);
}

fn rds_gp2(date: &str) -> String {
    format!("as_of = \"{date}\"\n[configs.a]\nhost = \"aws/rds/db.m4.2xlarge\"\nengine = \"mysql\"\n[[configs.a.pools]]\ndevice = \"aws/ebs/gp2\"\nsize_gib = 400\n")
}

// RDS's striping of 400 GiB and more over four volumes is documented from
// the RDS gp3 release (2022-11-09). Seed 002's 400 GB gp2 of 2018 is one
// volume: 1,200 baseline, 3,000 burst (the report's own figures); from 2022-11-09 it
// is 4 × 100 GiB: 4 × 300 = 1,200 baseline, 4 × 3,000 = 12,000 burst.
#[test]
fn rds_gp2_before_striping_is_one_volume() {
    let old = storlab_model::limits(&catalog(), "s.toml", &rds_gp2("2018-06-01")).unwrap();
    let c = &old.configs[0];
    assert_eq!(c.pools[0].count, 1);
    assert_eq!((c.pools[0].baseline_iops, c.pools[0].burst_iops), (1200.0, 3000.0));
    assert!(c.warnings.iter().any(|w| w.contains("2022-11-09") && w.contains("one volume")), "{:?}", c.warnings);
    let new = storlab_model::limits(&catalog(), "s.toml", &rds_gp2("2023-01-01")).unwrap();
    let p = &new.configs[0].pools[0];
    assert_eq!(p.count, 4);
    assert_eq!(p.rds_striped_from_gib, Some(400.0));
}
