mod common;

#[test]
fn shipped_catalog_loads_and_every_number_has_a_source() {
    let cat = common::catalog();
    assert!(cat.devices.contains_key("aws/ebs/gp2"));
}
