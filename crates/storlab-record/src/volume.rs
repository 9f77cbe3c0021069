//! The EBS volume metrics of a pool, period by period, as CloudWatch names
//! them (VolumeReadOps, ..., VolumeQueueLength): one table of names, units
//! and values for every engine that keeps them — the simulator on its
//! virtual clock, the emulator on the wall clock. Statistics and units
//! follow the EBS user guide's CloudWatch metrics (reference/cloud-specs.md §6).

use crate::{Series, Stamp};

/// What one pool did in one period.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct VolumeCounters {
    pub read_ops: f64,
    pub write_ops: f64,
    pub read_bytes: f64,
    pub write_bytes: f64,
    /// Seconds of I/O time, summed over the I/Os that completed.
    pub read_time: f64,
    pub write_time: f64,
}

impl VolumeCounters {
    /// One completed I/O.
    pub fn add(&mut self, read: bool, bytes: f64, latency_s: f64) {
        if read {
            self.read_ops += 1.0;
            self.read_bytes += bytes;
            self.read_time += latency_s;
        } else {
            self.write_ops += 1.0;
            self.write_bytes += bytes;
            self.write_time += latency_s;
        }
    }
}

/// The volume metrics and their CloudWatch units, in the order records list them.
pub const VOLUME_METRICS: [(&str, &str); 7] = [
    ("VolumeReadOps", "Count"),
    ("VolumeWriteOps", "Count"),
    ("VolumeReadBytes", "Bytes"),
    ("VolumeWriteBytes", "Bytes"),
    ("VolumeTotalReadTime", "Seconds"),
    ("VolumeTotalWriteTime", "Seconds"),
    ("VolumeQueueLength", "Count"),
];

/// One metric of `VOLUME_METRICS` for a period of `period_s` seconds.
pub fn volume_value(metric: &str, c: &VolumeCounters, period_s: f64) -> f64 {
    match metric {
        "VolumeReadOps" => c.read_ops,
        "VolumeWriteOps" => c.write_ops,
        "VolumeReadBytes" => c.read_bytes,
        "VolumeWriteBytes" => c.write_bytes,
        "VolumeTotalReadTime" => c.read_time,
        "VolumeTotalWriteTime" => c.write_time,
        // Average requests outstanding: total I/O time over the period.
        _ => (c.read_time + c.write_time) / period_s,
    }
}

/// The volume series of one pool (`resource`), one value a period, periods
/// starting at 0, `period_s`, ...; with its BurstBalance where it has a
/// bucket (`burst`, percent a period).
pub fn volume_series(config: &str, resource: &str, period_s: f64, rows: &[VolumeCounters], burst: Option<Vec<f64>>) -> Vec<Series> {
    let timestamps: Vec<Stamp> = (0..rows.len()).map(|i| Stamp::Seconds(i as f64 * period_s)).collect();
    let mk = |metric: &str, unit: &str, values: Vec<f64>| Series {
        config: config.to_string(),
        resource: resource.to_string(),
        metric: metric.to_string(),
        unit: unit.to_string(),
        period_s,
        timestamps: timestamps.clone(),
        values,
    };
    let mut out: Vec<Series> = VOLUME_METRICS.iter().map(|(m, u)| mk(m, u, rows.iter().map(|c| volume_value(m, c, period_s)).collect())).collect();
    if let Some(b) = burst {
        out.push(mk("BurstBalance", "Percent", b));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_length_is_io_time_over_the_period() {
        // 100 reads of 4 ms each in a 2 s period: 0.4 s of I/O time, so
        // 0.2 requests outstanding on average; 100 × 4,096 bytes read.
        let mut c = VolumeCounters::default();
        for _ in 0..100 {
            c.add(true, 4096.0, 0.004);
        }
        let s = volume_series("gp2", "pool data", 2.0, &[c, VolumeCounters::default()], Some(vec![50.0, 40.0]));
        let get = |m: &str| s.iter().find(|x| x.metric == m).unwrap();
        assert!((get("VolumeQueueLength").values[0] - 0.2).abs() < 1e-9);
        assert_eq!(get("VolumeReadOps").values, vec![100.0, 0.0]);
        assert_eq!(get("VolumeReadBytes").values, vec![409_600.0, 0.0]);
        assert_eq!(get("BurstBalance").values, vec![50.0, 40.0]);
        assert_eq!(get("VolumeReadOps").timestamps, vec![Stamp::Seconds(0.0), Stamp::Seconds(2.0)]);
        assert_eq!(s.len(), 8);
    }
}
