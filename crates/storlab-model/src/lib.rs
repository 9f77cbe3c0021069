//! storlab-model: devices, pools, hosts, buckets, host caches, latency and
//! costs — pure and deterministic. It reads no clock and does no I/O: the
//! simulator drives it on a virtual clock, the benchmark and the emulator
//! against real I/O, each passing its own time to `pacing`. One model,
//! several engines.

pub mod bucket;
pub mod catalog;
pub mod cost;
pub mod deployment;
pub mod device;
pub mod dist;
pub mod error;
pub mod latency;
pub mod limits;
pub mod num;
pub mod pacing;
pub mod report;
pub mod resources;
pub mod scenario;
pub mod time;

pub use catalog::Catalog;
pub use deployment::{resolve_all, Deployment};
pub use error::{ModelError, Result};
pub use report::{limits, LimitsReport};
