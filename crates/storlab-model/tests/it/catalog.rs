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
