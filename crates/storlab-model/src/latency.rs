//! Per-device latency: a log-normal distribution fixed by the catalog's
//! median and p99 (the figures vendors and benchmarks publish). The simulator
//! draws service times from it and adds the queueing that caps create.

use crate::catalog::LatencySpec;
use serde::Serialize;
use std::time::Duration;

/// z for the 99th percentile of the standard normal distribution.
const Z_P99: f64 = 2.326_347_874_040_841;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LogNormal {
    /// ln of the median, in µs.
    pub mu: f64,
    pub sigma: f64,
}

impl LogNormal {
    pub fn from_median_p99(median_us: f64, p99_us: f64) -> Self {
        let median = median_us.max(1e-3);
        let p99 = p99_us.max(median);
        LogNormal { mu: median.ln(), sigma: (p99 / median).ln() / Z_P99 }
    }

    /// The latency at standard-normal score `z` (the simulator supplies z).
    pub fn at_z(&self, z: f64) -> Duration {
        Duration::from_secs_f64((self.mu + self.sigma * z).exp() * 1e-6)
    }

    pub fn mean_us(&self) -> f64 {
        (self.mu + self.sigma * self.sigma / 2.0).exp()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencyModel {
    pub read: LogNormal,
    pub write: LogNormal,
    /// A durable write (write + cache flush) where the device has a volatile
    /// write cache; `None` where an acknowledged write is already durable.
    pub flush: Option<LogNormal>,
    /// µs each MiB of an I/O beyond its first 4 KiB adds, per direction
    /// (0: the same service time at every size).
    pub read_us_per_mib: f64,
    pub write_us_per_mib: f64,
}

impl LatencyModel {
    pub fn from_spec(s: &LatencySpec) -> Self {
        LatencyModel {
            read: LogNormal::from_median_p99(s.read_median_us.value, s.read_p99_us.value),
            write: LogNormal::from_median_p99(s.write_median_us.value, s.write_p99_us.value),
            flush: match (&s.flush_median_us, &s.flush_p99_us) {
                (Some(m), Some(p)) => Some(LogNormal::from_median_p99(m.value, p.value)),
                (Some(m), None) => Some(LogNormal::from_median_p99(m.value, m.value)),
                _ => None,
            },
            read_us_per_mib: s.read_us_per_mib.as_ref().map_or(0.0, |n| n.value),
            write_us_per_mib: s.write_us_per_mib.as_ref().map_or(0.0, |n| n.value),
        }
    }

    /// The mean service time of a read or a write of `bytes`, µs.
    pub fn mean_us(&self, read: bool, bytes: f64) -> f64 {
        let (d, per_mib) = if read { (&self.read, self.read_us_per_mib) } else { (&self.write, self.write_us_per_mib) };
        d.mean_us() + per_mib * (bytes - 4096.0).max(0.0) / (1u64 << 20) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_p99_are_reproduced() {
        let d = LogNormal::from_median_p99(500.0, 2000.0);
        assert!((d.at_z(0.0).as_secs_f64() * 1e6 - 500.0).abs() < 1e-6);
        assert!((d.at_z(Z_P99).as_secs_f64() * 1e6 - 2000.0).abs() < 1e-6);
        assert!(d.mean_us() > 500.0);
    }
}
