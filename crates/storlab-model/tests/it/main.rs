//! The integration tests, one binary: each test binary links the whole
//! crate again, so one binary builds in a fraction of the time of many.

#[path = "../common/mod.rs"]
mod common;

mod as_of;
mod catalog;
mod fsx_rules;
mod host_cpu;
mod pacing_properties;
mod vendor_rules;
