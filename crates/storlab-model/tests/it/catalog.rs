use crate::common;

use storlab_model::Catalog;

/// The shipped catalog with `local.toml` replaced by `text`.
fn with_local(text: &str) -> Result<Catalog, storlab_model::ModelError> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(common::catalog_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && !p.ends_with("local.toml"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    files.push(("local.toml".into(), text.into()));
    Catalog::from_sources(files.iter().map(|(n, t)| (n.as_str(), t.as_str())))
}

fn local_text() -> String {
    std::fs::read_to_string(common::catalog_dir().join("local.toml")).unwrap()
}

#[test]
fn shipped_catalog_loads_with_its_devices_and_hosts() {
    let cat = common::catalog();
    for id in ["aws/ebs/gp2", "aws/ebs/gp3", "aws/ebs/io2", "azure/premium-ssd/P30", "aws/fsx/windows", "local/nvme"] {
        assert!(cat.devices.contains_key(id), "{id}");
    }
    assert!(cat.hosts.keys().any(|h| h.starts_with("aws/ec2/")) && cat.hosts.keys().any(|h| h.starts_with("azure/vm/")));
}

#[test]
fn a_device_without_a_source_is_refused() {
    let text = local_text().replace("src = \"pm9a3-datasheet\"\n", "");
    assert_ne!(text, local_text(), "the fixture changed nothing");
    let e = with_local(&text).err().expect("a device without src must be refused").to_string();
    assert!(e.contains("local.toml") && e.contains("src"), "{e}");
}

#[test]
fn a_number_citing_an_unknown_source_is_refused() {
    let text = local_text().replace("src = \"derived-15k-iops\"", "src = \"no-such-source\"");
    let e = with_local(&text).err().expect("an unknown source key must be refused").to_string();
    assert!(e.contains("no-such-source"), "{e}");
}

#[test]
fn the_unverified_list_names_exactly_the_unverified_numbers() {
    // local/hdd/sas-15k: iops, read_iops and write_iops carry verified = false
    // in local.toml; its throughput and size do not.
    let cat = common::catalog();
    let scenario = r#"
[configs.raid]
host = "local/server/generic"
[[configs.raid.pools]]
device = "local/hdd/sas-15k"
count = 8
layout = "raid6"
"#;
    let hosts: Vec<&String> = cat.hosts.keys().filter(|h| h.starts_with("local/")).collect();
    let scenario = scenario.replace("local/server/generic", hosts.first().expect("a local host"));
    let rep = storlab_model::limits(&cat, "t.toml", &scenario).unwrap_or_else(|e| panic!("{e}"));
    let v = serde_json::to_value(&rep).unwrap();
    let text = v.to_string();
    assert!(text.contains("sas-15k"), "{text}");
    let unverified: Vec<String> = v["configs"][0]["unverified"].as_array().map_or_else(Vec::new, |a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect());
    assert!(unverified.iter().any(|u| u.contains("local/hdd/sas-15k") && u.contains("iops")), "{unverified:?}");
    assert!(!unverified.iter().any(|u| u.contains("local/hdd/sas-15k") && u.contains("throughput")), "{unverified:?}");
    // With every number verified, the device drops out of the list.
    let verified = local_text().replace(", verified = false", "");
    let cat = with_local(&verified).unwrap_or_else(|e| panic!("{e}"));
    let rep = storlab_model::limits(&cat, "t.toml", &scenario).unwrap();
    let v = serde_json::to_value(&rep).unwrap();
    let after = v["configs"][0]["unverified"].to_string();
    assert!(!after.contains("local/hdd/sas-15k"), "{after}");
}

#[test]
fn a_catalog_file_written_as_toml_reads_back_as_the_same_catalog() {
    use storlab_model::catalog::CatalogFile;
    let file: CatalogFile = toml::from_str(&local_text()).unwrap();
    let written = file.to_toml().unwrap();
    let (a, b) = (with_local(&local_text()).unwrap(), with_local(&written).unwrap());
    assert!(!file.device.is_empty());
    for d in &file.device {
        assert_eq!(serde_json::to_value(&a.devices[&d.id]).unwrap(), serde_json::to_value(&b.devices[&d.id]).unwrap(), "{}", d.id);
        let lat = |c: &Catalog| c.latency_for(&d.id).map(|(l, v)| (serde_json::to_value(l).unwrap(), v));
        assert_eq!(lat(&a), lat(&b), "{}", d.id);
    }
}

#[test]
fn a_written_overlay_keeps_numbers_bare_unless_they_carry_a_note() {
    use storlab_model::catalog::CatalogFile;
    let json = r#"{
        "source": {"m": {"url": "this machine", "date": "2026-01-02", "status": "measured"}},
        "device": [{"id": "local/measured/x", "title": "x", "src": "m", "kind": "local", "media": "ssd",
                    "accounting": {"unit_kib": 1024, "merge_sequential": true},
                    "size_gib": {"fixed": {"value": 931, "note": "measured folder's file system"}},
                    "iops": {"rule": "fixed", "value": 1500.0},
                    "throughput_mib_s": {"rule": "fixed", "value": 250.5},
                    "paths": ["block"]}],
        "latency": [{"devices": ["local/measured/x"], "src": "m", "read_median_us": 80.5, "read_p99_us": 300,
                     "write_median_us": 20, "write_p99_us": 90}]
    }"#;
    let file: CatalogFile = serde_json::from_str(json).unwrap();
    let text = file.to_toml().unwrap();
    // 1500.0 is written as a person writes it; a number with a note keeps its table.
    assert!(text.contains("value = 1500\n") && text.contains("value = 250.5\n"), "{text}");
    assert!(text.contains("note = \"measured folder's file system\""), "{text}");
    assert!(!text.contains("verified"), "{text}");
    let cat = with_local(&format!("{}\n{text}", local_text())).unwrap();
    let (lat, _) = cat.latency_for("local/measured/x").unwrap();
    assert_eq!((lat.read_median_us.get(), lat.write_p99_us.get()), (80.5, 90.0));
}
