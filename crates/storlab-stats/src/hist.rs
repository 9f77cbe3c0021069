//! A log-linear latency histogram (HDR-style): 128 linear sub-buckets per
//! power of two of nanoseconds, so any percentile is within 0.8 % of the
//! true value, in 64 KiB whatever the run length.

const SUB_BITS: u32 = 7;
const SUB: usize = 1 << SUB_BITS;
const BUCKETS: usize = 64 * SUB;

#[derive(Debug, Clone)]
pub struct Histogram {
    counts: Box<[u64]>,
    pub count: u64,
    sum_ns: f64,
    pub max_ns: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: vec![0; BUCKETS].into_boxed_slice(), count: 0, sum_ns: 0.0, max_ns: 0 }
    }
}

#[inline]
fn index(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let shift = msb - SUB_BITS;
    let sub = (v >> shift) as usize & (SUB - 1);
    ((shift + 1) as usize) * SUB + sub
}

/// The lowest value of bucket `i`, and its width.
fn bounds(i: usize) -> (u64, u64) {
    if i < SUB {
        return (i as u64, 1);
    }
    let shift = (i / SUB - 1) as u32;
    let sub = (i % SUB) as u64;
    (((SUB as u64) | sub) << shift, 1u64 << shift)
}

pub use storlab_record::LatencySummary;

impl Histogram {
    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            lat_mean_us: self.mean_us(),
            lat_p50_us: self.quantile_us(0.5),
            lat_p90_us: self.quantile_us(0.9),
            lat_p99_us: self.quantile_us(0.99),
            lat_p999_us: self.quantile_us(0.999),
            lat_p9999_us: self.quantile_us(0.9999),
            lat_max_us: self.max_ns as f64 / 1e3,
        }
    }

    #[inline]
    pub fn record(&mut self, seconds: f64) {
        let ns = (seconds * 1e9 + 0.5) as u64;
        self.counts[index(ns)] += 1;
        self.count += 1;
        self.sum_ns += seconds * 1e9;
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn mean_us(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns / self.count as f64 / 1e3
        }
    }

    /// The `q`-quantile (0..=1) in µs, at the middle of its bucket.
    pub fn quantile_us(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, w) = bounds(i);
                return ((lo as f64 + (w as f64 - 1.0) / 2.0).min(self.max_ns as f64)) / 1e3;
            }
        }
        self.max_ns as f64 / 1e3
    }

    pub fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(o.counts.iter()) {
            *a += b;
        }
        self.count += o.count;
        self.sum_ns += o.sum_ns;
        self.max_ns = self.max_ns.max(o.max_ns);
    }

    /// What was recorded after `earlier`, a copy of this histogram taken
    /// before: counts and sums subtract; the maximum is the top of the
    /// highest bucket still holding a value (within 0.8 %), capped at ours.
    pub fn since(&self, earlier: &Histogram) -> Histogram {
        let counts: Box<[u64]> = self.counts.iter().zip(earlier.counts.iter()).map(|(a, b)| a.saturating_sub(*b)).collect();
        let max_ns = counts.iter().rposition(|&c| c > 0).map_or(0, |i| {
            let (lo, w) = bounds(i);
            (lo + w - 1).min(self.max_ns)
        });
        Histogram { counts, count: self.count.saturating_sub(earlier.count), sum_ns: (self.sum_ns - earlier.sum_ns).max(0.0), max_ns }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_within_one_percent() {
        let mut h = Histogram::default();
        for i in 1..=100_000u64 {
            h.record(i as f64 * 1e-6); // 1 µs .. 100 ms
        }
        for (q, want) in [(0.5, 50_000.0), (0.99, 99_000.0), (0.999, 99_900.0)] {
            let got = h.quantile_us(q);
            assert!((got / want - 1.0).abs() < 0.01, "q{q}: {got} vs {want}");
        }
        assert!((h.mean_us() - 50_000.5).abs() < 0.01);
        assert_eq!(h.max_ns, 100_000_000);
    }

    /// 1..=100 ms recorded, a copy taken after the first 50: the rest are
    /// 51..=100 ms, mean (51 + 100) / 2 = 75.5 ms, max 100 ms.
    #[test]
    fn since_keeps_only_the_later_values() {
        let mut h = Histogram::default();
        for i in 1..=50u64 {
            h.record(i as f64 * 1e-3);
        }
        let early = h.clone();
        for i in 51..=100u64 {
            h.record(i as f64 * 1e-3);
        }
        let late = h.since(&early);
        assert_eq!(late.count, 50);
        assert!((late.mean_us() - 75_500.0).abs() < 1.0, "{}", late.mean_us());
        assert!((late.quantile_us(0.01) / 51_000.0 - 1.0).abs() < 0.01);
        assert_eq!(late.max_ns, 100_000_000);
    }

    #[test]
    fn index_and_bounds_agree() {
        for v in [0u64, 1, 127, 128, 129, 1000, 123_456_789, u64::MAX / 3] {
            let (lo, w) = bounds(index(v));
            assert!(lo <= v && v < lo + w, "{v}: {lo}+{w}");
        }
    }
}
