//! The fits a profile's recording makes from its raw measurements: the CPU
//! penalty's α and β (the Universal Scalability Law's form), the miss-ratio
//! curve made non-increasing, and the write-back curve from the server's
//! dirty-page samples. The recorder (Python) drives the server and hands
//! these the figures it measured.

use serde::Serialize;

/// Least squares of y = α·a + β·b over rows (a, b, y), α and β kept
/// non-negative: where the unconstrained fit makes one negative, the
/// better of α alone and β alone.
pub fn fit_ab(rows: &[(f64, f64, f64)]) -> (f64, f64) {
    if rows.is_empty() {
        return (0.0, 0.0);
    }
    let sum = |f: &dyn Fn(&(f64, f64, f64)) -> f64| rows.iter().map(f).sum::<f64>();
    let (saa, sbb, sab) = (sum(&|r| r.0 * r.0), sum(&|r| r.1 * r.1), sum(&|r| r.0 * r.1));
    let (say, sby) = (sum(&|r| r.0 * r.2), sum(&|r| r.1 * r.2));
    let det = saa * sbb - sab * sab;
    if rows.len() >= 2 && det > 1e-12 * (saa * sbb).max(1.0) {
        let alpha = (say * sbb - sby * sab) / det;
        let beta = (sby * saa - say * sab) / det;
        if alpha >= 0.0 && beta >= 0.0 {
            return (alpha, beta);
        }
    }
    let one = |num: f64, den: f64| if den > 0.0 { (num / den).max(0.0) } else { 0.0 };
    let (a, b) = (one(say, saa), one(sby, sbb));
    let err_a = sum(&|r| (r.2 - a * r.0).powi(2));
    let err_b = sum(&|r| (r.2 - b * r.1).powi(2));
    if err_a <= err_b {
        (a, 0.0)
    } else {
        (0.0, b)
    }
}

/// α and β of `y(N) / y(1) = 1 + α(N−1) + βN(N−1)` from the points with a
/// positive figure; (0, 0) without a one-user point and one more.
fn penalty_form(vus: &[u32], ys: &[f64], ratio: impl Fn(f64, f64, f64) -> f64) -> (f64, f64) {
    let pts: Vec<(f64, f64)> = vus.iter().zip(ys).filter(|(_, &y)| y > 0.0).map(|(&n, &y)| (f64::from(n), y)).collect();
    let Some(base) = pts.iter().find(|(n, _)| *n == 1.0).map(|p| p.1) else { return (0.0, 0.0) };
    if pts.len() < 2 {
        return (0.0, 0.0);
    }
    let rows: Vec<_> = pts.iter().filter(|(n, _)| *n > 1.0).map(|&(n, y)| (n - 1.0, n * (n - 1.0), ratio(n, y, base))).collect();
    fit_ab(&rows)
}

/// α and β of the Universal Scalability Law, C(N) = N / (1 + α(N−1) +
/// βN(N−1)), from throughput X(N), on its linear form N/C(N) − 1 = α(N−1) +
/// βN(N−1) with C(N) = X(N)/X(1) (Gunther, "Guerrilla Capacity Planning",
/// ch. 5).
pub fn usl(vus: &[u32], throughput: &[f64]) -> (f64, f64) {
    penalty_form(vus, throughput, |n, x, base| n / (x / base) - 1.0)
}

/// α and β of the CPU each transaction costs at N users, in the USL's form:
/// c(N) / c(1) = 1 + α(N−1) + βN(N−1). This is the slow-down the model's
/// CPU queue does not produce by itself (spinning on locks, context
/// switches, cache-line traffic), so the model queues the inflated CPU
/// without counting the CPUs running out twice.
pub fn cpu_penalty(vus: &[u32], cpu_per_txn: &[f64]) -> (f64, f64) {
    penalty_form(vus, cpu_per_txn, |_, c, base| c / base - 1.0)
}

/// The running minimum, within [0, 1]: a miss ratio cannot rise with a
/// larger cache, so a point above an earlier (smaller-cache) one is noise.
pub fn non_increasing(vals: &[f64]) -> Vec<f64> {
    let mut low = 1.0f64;
    vals.iter()
        .map(|&v| {
            low = low.min(v.max(0.0));
            low
        })
        .collect()
}

/// The write-back curve, per home unit: transactions since a checkpoint,
/// the distinct dirty pages and their runs of contiguous blocks.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WritebackCurve {
    pub txns_per_unit: Vec<f64>,
    pub pages_per_unit: Vec<f64>,
    pub runs_per_unit: Vec<f64>,
}

fn milli(v: f64) -> f64 {
    (v * 1e3).round() / 1e3
}

/// The curve from the server's samples (transactions so far, dirty pages,
/// runs, checkpoint writes), the first taken just after a CHECKPOINT: up to
/// the first sample after a checkpoint began (its writes clean pages), the
/// sampler's own transactions (`own` a sample) taken out, the pages made
/// non-decreasing and the runs never more than the pages.
pub fn writeback_curve(samples: &[(f64, f64, f64, f64)], units: f64, own: f64) -> WritebackCurve {
    let mut out = WritebackCurve::default();
    let Some(&(x0, d0, r0, c0)) = samples.first() else { return out };
    for (i, &(x, d, r, c)) in samples.iter().enumerate().skip(1) {
        if c != c0 {
            break;
        }
        let n = (x - x0 - own * i as f64) / units;
        if n <= out.txns_per_unit.last().copied().unwrap_or(0.0) {
            continue;
        }
        let pages = ((d - d0) / units).max(out.pages_per_unit.last().copied().unwrap_or(0.0)).max(0.0);
        out.txns_per_unit.push(milli(n));
        out.pages_per_unit.push(milli(pages));
        out.runs_per_unit.push(milli(((r - r0).max(0.0) / units).min(pages)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usl_x(n: f64, alpha: f64, beta: f64) -> f64 {
        1000.0 * n / (1.0 + alpha * (n - 1.0) + beta * n * (n - 1.0))
    }

    #[test]
    fn the_fits_recover_exact_coefficients() {
        let vus = [1u32, 2, 4, 8, 16, 32];
        for (alpha, beta) in [(0.05, 0.002), (0.2, 0.0), (0.0, 0.01)] {
            let x: Vec<f64> = vus.iter().map(|&n| usl_x(f64::from(n), alpha, beta)).collect();
            let (a, b) = usl(&vus, &x);
            assert!((a - alpha).abs() < 1e-9 && (b - beta).abs() < 1e-9, "{a} {b}");
            let c: Vec<f64> = vus.iter().map(|&n| 900.0 * (1.0 + alpha * f64::from(n - 1) + beta * f64::from(n * (n - 1)))).collect();
            let (a, b) = cpu_penalty(&vus, &c);
            assert!((a - alpha).abs() < 1e-9 && (b - beta).abs() < 1e-9, "{a} {b}");
        }
    }

    #[test]
    fn a_negative_coefficient_is_held_at_zero() {
        // 2.2× at 2 users and 4.4× at 4 would need α, β < 0: the rows
        // (1, 2, 2/2.2 − 1) and (3, 12, 4/4.4 − 1) have y < 0, so α alone
        // and β alone are both held at 0.
        assert_eq!(usl(&[1, 2, 4], &[100.0, 220.0, 440.0]), (0.0, 0.0));
        assert_eq!(usl(&[2, 4], &[100.0, 150.0]), (0.0, 0.0), "no one-user point");
    }

    #[test]
    fn the_miss_ratio_never_rises() {
        assert_eq!(non_increasing(&[0.5, 0.3, 0.35, 0.1, 0.12, -0.1]), vec![0.5, 0.3, 0.3, 0.1, 0.1, 0.0]);
    }

    #[test]
    fn the_writeback_curve_by_hand() {
        // Two units; 1 transaction of the sampler's own a sample. Sample 1:
        // (41 − 10 − 1) / 2 = 15 transactions, (300 − 100) / 2 = 100 pages,
        // (60 − 20) / 2 = 20 runs. Sample 2 lost pages (noise): held at 100.
        // Sample 3 follows a checkpoint's writes: the curve ends before it.
        let s = [(10.0, 100.0, 20.0, 5.0), (41.0, 300.0, 60.0, 5.0), (72.0, 250.0, 70.0, 5.0), (100.0, 400.0, 90.0, 9.0)];
        let c = writeback_curve(&s, 2.0, 1.0);
        assert_eq!(c.txns_per_unit, vec![15.0, 30.0]);
        assert_eq!(c.pages_per_unit, vec![100.0, 100.0]);
        assert_eq!(c.runs_per_unit, vec![20.0, 25.0]);
        assert_eq!(writeback_curve(&s[..1], 2.0, 1.0), WritebackCurve::default());
    }
}
