//! storlab-stats: statistics both engines compute the same way — the
//! simulator on virtual time, the benchmark on real I/O — so their
//! percentiles line up column by column.

pub mod hist;

pub use hist::{Histogram, LatencySummary};
