//! Latency draws: a log-normal service time tabulated at 2^12 quantiles
//! (32 KiB, so it stays in cache), so a draw is one random number, a table
//! read and an interpolation; the outer 1/256 of each tail, where a linear
//! interpolation would bend p99.9 and beyond, is computed exactly.

use crate::latency::LogNormal;
use storlab_stats::rng::Rng;

const BITS: u32 = 12;
const N: usize = 1 << BITS;
/// Bins at each end drawn exactly: 16 of 4,096, the outer 0.39 %.
const EDGE: usize = N / 256;

/// Inverse of the standard normal CDF (Acklam's rational approximation,
/// relative error below 1.2e-9).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00];
    const B: [f64; 5] = [-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01];
    const C: [f64; 6] = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00];
    const D: [f64; 4] = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00];
    let plow = 0.02425;
    if p < plow {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - plow {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -normal_quantile(1.0 - p)
    }
}

/// A tabulated service-time distribution, in seconds.
#[derive(Debug, Clone)]
pub struct ServiceTime {
    table: Box<[f64]>,
    mu: f64,
    sigma: f64,
    /// Seconds a byte beyond the first 4 KiB adds (the catalog's
    /// `*_us_per_mib`): the transfer that grows with the I/O's size.
    per_byte_s: f64,
}

impl ServiceTime {
    pub fn new(d: &LogNormal) -> ServiceTime {
        let table: Vec<f64> = (0..=N).map(|i| Self::exact(d.mu, d.sigma, i as f64 / N as f64)).collect();
        ServiceTime { table: table.into_boxed_slice(), mu: d.mu, sigma: d.sigma, per_byte_s: 0.0 }
    }

    /// The same draws, plus `us_per_mib` µs for each MiB an I/O holds
    /// beyond its first 4 KiB.
    pub fn with_size_term(mut self, us_per_mib: f64) -> ServiceTime {
        self.per_byte_s = us_per_mib.max(0.0) * 1e-6 / (1u64 << 20) as f64;
        self
    }

    /// A draw for an I/O (or the piece of one a device gets) of `bytes`.
    #[inline]
    pub fn draw_sized(&self, rng: &mut Rng, bytes: f64) -> f64 {
        self.draw(rng) + self.per_byte_s * (bytes - 4096.0).max(0.0)
    }

    fn exact(mu: f64, sigma: f64, p: f64) -> f64 {
        let p = p.clamp(1e-12, 1.0 - 1e-12);
        (mu + sigma * normal_quantile(p)).exp() * 1e-6
    }

    #[inline]
    pub fn draw(&self, rng: &mut Rng) -> f64 {
        let x = rng.next_u64();
        let i = (x >> (64 - BITS)) as usize;
        if i < EDGE || i >= N - EDGE {
            return Self::exact(self.mu, self.sigma, (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64));
        }
        let frac = ((x >> (64 - BITS - 20)) & ((1 << 20) - 1)) as f64 * (1.0 / (1u64 << 20) as f64);
        let (a, b) = (self.table[i], self.table[i + 1]);
        a + (b - a) * frac
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_the_standard_normal() {
        // Φ⁻¹(0.5) = 0, Φ⁻¹(0.99) = 2.326348, Φ⁻¹(0.001) = −3.090232.
        assert!(normal_quantile(0.5).abs() < 1e-9);
        assert!((normal_quantile(0.99) - 2.326348).abs() < 1e-5);
        assert!((normal_quantile(0.001) + 3.090232).abs() < 1e-5);
    }

    #[test]
    fn draws_reproduce_median_and_p99() {
        let st = ServiceTime::new(&LogNormal::from_median_p99(600.0, 3000.0));
        let mut rng = Rng::new(7);
        let mut v: Vec<f64> = (0..200_000).map(|_| st.draw(&mut rng)).collect();
        v.sort_by(f64::total_cmp);
        let med = v[v.len() / 2] * 1e6;
        let p99 = v[v.len() * 99 / 100] * 1e6;
        assert!((med / 600.0 - 1.0).abs() < 0.02, "median {med}");
        assert!((p99 / 3000.0 - 1.0).abs() < 0.04, "p99 {p99}");
        // p99.9 of this log-normal: exp(ln 600 + σ·3.0902), σ = ln 5 / 2.3263.
        let sigma = (5.0f64).ln() / 2.326348;
        let want = 600.0 * (sigma * 3.090232).exp();
        let p999 = v[v.len() * 999 / 1000] * 1e6;
        assert!((p999 / want - 1.0).abs() < 0.06, "p99.9 {p999} vs {want}");
    }
}
