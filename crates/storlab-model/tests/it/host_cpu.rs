//! Hosts name their processor as the vendor does (EC2 user guide,
//! memory-optimized-instances.md: "2nd generation Intel Xeon Scalable
//! processors (Cascade Lake 8259CL): R5b, R5n"; "(Ice Lake 8375C): R6i,
//! R6id, X2idn, X2iedn").

use crate::common;
use common::catalog;

#[test]
fn ec2_hosts_name_their_processor() {
    let cat = catalog();
    let cpu = |id: &str| cat.hosts[id].cpu.clone().unwrap_or_else(|| panic!("{id} names no processor"));
    assert_eq!(cpu("aws/ec2/r5b.24xlarge").model, "Intel Xeon Cascade Lake 8259CL");
    assert_eq!(cpu("aws/ec2/x2iedn.32xlarge").model, "Intel Xeon Ice Lake 8375C");
    assert!(cat.sources.contains_key(&cpu("aws/ec2/r5.large").src));
}

#[test]
fn a_processor_citing_an_unknown_source_is_refused() {
    let text = "[[host]]\nid = \"x/vm/a\"\ntitle = \"t\"\nkind = \"local\"\ncpu = { model = \"m\", src = \"nope\" }\n";
    let e = storlab_model::Catalog::from_sources([("c.toml", text)]).unwrap_err().to_string();
    assert!(e.contains("nope") && e.contains("x/vm/a"), "{e}");
}
