//! storlab-stats: statistics both engines compute the same way — the
//! simulator on virtual time, the benchmarks on real I/O and real databases —
//! so their percentiles line up column by column, and the one seedable random
//! stream they draw from.

pub mod hist;
pub mod rng;

pub use hist::{Histogram, LatencySummary};
pub use rng::Rng;
