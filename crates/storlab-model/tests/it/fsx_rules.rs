//! FSx for Windows File Server and FSx for ONTAP: provisioned SSD IOPS,
//! the current throughput-capacity levels, and the single-flow limit of a
//! `spread` layout. Expected values come from the FSx pages cited in
//! aws-fsx.toml, worked by hand in the comments.

use crate::common;
use common::{catalog, limits};
use storlab_model::resources::{PoolPlan, Unit};

fn fsx(pool: &str) -> String {
    format!("region = \"aws/us-east-1\"\n[configs.a]\nhost = \"aws/ec2/r5dn.24xlarge\"\n[[configs.a.pools]]\n{pool}\n")
}

fn err(s: &str) -> String {
    storlab_model::limits(&catalog(), "s.toml", s).expect_err("should be rejected").to_string()
}

// FSx for Windows, 4,096 GiB SSD at 2,048 MBps: the default is 3,000 IOPS
// per TiB = 12,000 IOPS; provisioned 40,000 (below the level's 80,000 disk
// IOPS) is the ceiling; 100,000 is held to the level's 80,000.
#[test]
fn windows_provisioned_ssd_iops_above_the_default() {
    let base = "device = \"aws/fsx/windows\"\npath = \"smb\"\nthroughput_mib_s = 2048\nstorage_gib = 4096";
    let c = &limits(&fsx(base)).configs[0];
    assert_eq!(c.ceilings["rand4k_read_iops"], 12000.0);
    let c = &limits(&fsx(&format!("{base}\niops = 40000"))).configs[0];
    assert_eq!(c.ceilings["rand4k_read_iops"], 40000.0);
    // Provisioned IOPS above the default have no price in the catalog:
    // listed as missing (28,000 IOPS-month), never guessed.
    let missing = c.cost_breakdown.iter().find(|i| i.item.contains("provisioned SSD IOPS")).expect("listed");
    assert_eq!((missing.usd, missing.quantity), (None, 28000.0));
    assert!(!c.cost_complete);
    let c = &limits(&fsx(&format!("{base}\niops = 100000"))).configs[0];
    assert_eq!(c.ceilings["rand4k_read_iops"], 80000.0);
    // Below the default: nearest valid value 12,000. Above 400,000 per
    // file system (500 per GiB would allow 2,048,000): nearest 400,000.
    assert!(err(&fsx(&format!("{base}\niops = 11999"))).contains("nearest valid value 12000"));
    assert!(err(&fsx(&format!("{base}\niops = 400001"))).contains("nearest valid value 400000"));
    // 500 per GiB binds on small file systems: 100 GiB → 50,000.
    let small = "device = \"aws/fsx/windows\"\npath = \"smb\"\nthroughput_mib_s = 2048\nstorage_gib = 100\niops = 50001";
    assert!(err(&fsx(small)).contains("nearest valid value 50000"));
}

// The current levels above 2,048 MBps: 4,608 MBps gives 150,000 disk IOPS
// and 4,608 MBps of disk throughput. 65,536 GiB of SSD gives 192,000 IOPS
// by default (3,000 per TiB × 64), so the level's 150,000 binds; 150,000 ×
// 4 KiB = 614.4 MB/s stays under the one SMB flow's 5 Gbps = 625 MB/s.
#[test]
fn windows_levels_above_2048() {
    let c = &limits(&fsx("device = \"aws/fsx/windows\"\npath = \"smb\"\nthroughput_mib_s = 4608\nstorage_gib = 65536")).configs[0];
    assert_eq!(c.ceilings["rand4k_read_iops"], 150000.0);
    let e = err(&fsx("device = \"aws/fsx/windows\"\npath = \"smb\"\nthroughput_mib_s = 4000\nstorage_gib = 65536"));
    assert!(e.contains("nearest 4608"), "{e}");
    // 12,288 MBps is a level too.
    limits(&fsx("device = \"aws/fsx/windows\"\npath = \"smb\"\nthroughput_mib_s = 12288\nstorage_gib = 65536"));
}

// ONTAP first generation at 4,096 MBps: 160,000 SSD IOPS at most per file
// system. 65,536 GiB gives 3 × 65,536 = 196,608 IOPS by default, so the
// 160,000 binds; over 4 iSCSI sessions (4 × 625 MB/s) 160,000 × 4 KiB =
// 655 MB/s fits. The level's network and disk MB/s are unverified.
#[test]
fn ontap_4096_level_and_provisioned_iops() {
    let pool = "device = \"aws/fsx/ontap\"\npath = \"iscsi\"\nmpio_paths = 4\nthroughput_mib_s = 4096\nstorage_gib = 65536";
    let c = &limits(&fsx(pool)).configs[0];
    assert_eq!(c.ceilings["rand4k_read_iops"], 160000.0);
    assert!(c.unverified.iter().any(|u| u.contains("aws/fsx/ontap") && u.contains("network")), "{:?}", c.unverified);
    // 1,024 GiB: default 3,072 IOPS; provisioned 10,000; 160,001 refused.
    let small = "device = \"aws/fsx/ontap\"\npath = \"iscsi\"\nthroughput_mib_s = 1024\nstorage_gib = 1024";
    assert_eq!(limits(&fsx(&format!("{small}\niops = 10000"))).configs[0].ceilings["rand4k_read_iops"], 10000.0);
    assert!(err(&fsx(&format!("{small}\niops = 160001"))).contains("nearest valid value 160000"));
    // Second generation, per HA pair: 6,144 MBps and 200,000 SSD IOPS.
    let g2 = "device = \"aws/fsx/ontap-gen2\"\npath = \"iscsi\"\nmpio_paths = 8\nthroughput_mib_s = 6144\nstorage_gib = 131072";
    assert_eq!(limits(&fsx(g2)).configs[0].ceilings["rand4k_read_iops"], 200000.0);
}

// `spread`: each I/O goes to one share, so it rides that share's SMB
// session: on a 100 Gbps interface Windows opens 4 connections a session
// (SMB Multichannel), each held to EC2's 5 Gbps single-flow limit, so one
// share carries 4 × 625 MB/s = 2.5 GB/s. Over 4 shares the file servers'
// own disk throughput binds: 4 × 2,048 MB/s = 8.192 GB/s (below the 4 ×
// 3,125 MB/s of their network and the host's 12.5 GB/s).
#[test]
fn spread_io_rides_one_smb_session_per_share() {
    let cat = catalog();
    let text = fsx("device = \"aws/fsx/windows\"\ncount = 4\nlayout = \"spread\"\npath = \"smb\"\nthroughput_mib_s = 2048\nstorage_gib = 4096");
    let sc = storlab_model::scenario::ScenarioFile::from_toml("s.toml", &text).unwrap();
    let dep = &storlab_model::resolve_all(&cat, "s.toml", &sc).unwrap()[0];
    let plan = PoolPlan::new(dep, &dep.pools[0], 1048576.0, true);
    let flows: Vec<usize> = plan.resources.iter().enumerate().filter(|(_, r)| r.unit == Unit::Flows).map(|(i, _)| i).collect();
    assert_eq!(flows.len(), 4);
    for k in 0..plan.table.phases {
        let on: Vec<_> = plan.table.costs(k, storlab_model::resources::IoClass::ReadMiss).iter().filter(|(r, _)| flows.contains(&(*r as usize))).collect();
        assert_eq!(on.len(), 1, "phase {k}: one flow per I/O");
        assert_eq!(plan.resources[on[0].0 as usize].cap.baseline, 2.5e9);
    }
    assert_eq!(plan.resources[flows[0]].label(true), "path smb: 4 connections × 5 Gbps a share (SMB Multichannel), each share");
    let c = &limits(&text).configs[0];
    assert_eq!(c.ceilings["seq1m_read_bytes_s"], 8.192e9);
    assert!(c.binding["seq1m_read_bytes_s"].contains("disk 2048 MB/s"), "{}", c.binding["seq1m_read_bytes_s"]);
}
