//! A profile's health: what makes a recorded profile suspect even though
//! every figure in it is valid, so `simulate` and `advise` refuse it (or use
//! it with a warning when accepted) and the recorder warns before writing
//! it. The loader (`Profile::from_toml`) already refuses what is wrong in
//! itself — a negative, NaN or infinite figure, a missing field, a list of
//! the wrong length; this module finds what is valid but untrustworthy: a
//! sweep that dips beyond its noise, a penalty the fit could not find, a
//! window too short for the rate it measured. Each suspect comes with the
//! change to `storlab bench db` that records a sound profile.

use crate::profile::Profile;

/// The sweep's noise where the recording has no repeats (a count run once,
/// `throughput_stdev` 0 or absent): 10 % of the higher of two counts'
/// throughput. One run of a short window on a shared machine moves by a few
/// percent from run to run; a fall and a rise of more than 10 % each is
/// beyond that.
pub const DEFAULT_SWEEP_NOISE: f64 = 0.10;

/// The fewest transactions one window should count. A count of n
/// independent events has a standard deviation of √n (Poisson), so the rate
/// measured in one window is known within 1/√n relative: 5 % at n = 400
/// (1/√400 = 1/20). Below 400 a step's rate is uncertain by more than 5 %,
/// as much as a sweep's steps differ.
pub const MIN_WINDOW_TXNS: f64 = 400.0;

/// The bounds the recorder's penalty fit searched before profiles carried
/// `concurrency.penalty_bounds` (`storlab_sim::database::PENALTY_RANGE`).
pub const PENALTY_BOUNDS: (f64, f64) = (0.25, 8.0);

/// How far from 1 a one-user penalty may be in a recording without
/// repeats. One user waits for no other, so the model's own CPU and I/O
/// waits should give the recorded rate there and the penalty should be
/// near 1 (the shipped recordings fit 0.98–0.99). A factor of 1.5 either
/// way is five times the 10 % noise of one run (`DEFAULT_SWEEP_NOISE`):
/// beyond it the one run is more likely a disturbed window than a slow
/// server, and nothing in the recording can tell the two apart.
pub const ONE_USER_PENALTY: f64 = 1.5;

/// One reason a profile is suspect: the field it concerns, what is wrong
/// with the values it holds, and the change to the recording that fixes it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Suspect {
    pub field: String,
    pub reason: String,
    pub fix: String,
}

impl std::fmt::Display for Suspect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} — {}", self.field, self.reason, self.fix)
    }
}

/// A whole number with thousands separators: 26000 → "26,000".
pub fn thousands(x: f64) -> String {
    let n = x.round() as i64;
    let digits = n.abs().to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

fn users(n: f64) -> String {
    if n == 1.0 {
        "1 user".into()
    } else {
        format!("{n} users")
    }
}

impl Profile {
    /// The profile's throughput at a count in its own metric, with the
    /// metric's name: NOPM (transactions a second × 60 × the New-Order
    /// share) for TPC-C, else TPM.
    fn in_metric(&self, tx_s: f64) -> (f64, &'static str) {
        if self.metric == "nopm" && self.nopm_per_txn > 0.0 {
            (tx_s * 60.0 * self.nopm_per_txn, "NOPM")
        } else {
            (tx_s * 60.0, "TPM")
        }
    }

    /// What makes this profile suspect, one `Suspect` per finding; empty
    /// for a sound profile. Checked:
    ///
    /// - the recorded sweep (`concurrency.throughput` per `vus`) falls and
    ///   rises again by more than its noise: at some count both the highest
    ///   throughput before it and the highest after it exceed it by more
    ///   than the noise between the two counts. With repeats
    ///   (`throughput_stdev` above 0 at both counts) that noise is two
    ///   standard deviations of their difference, 2·√(s₁² + s₂²); without,
    ///   `DEFAULT_SWEEP_NOISE` (10 %) of the higher of the two. Only the
    ///   deepest dip is reported. A fall at the sweep's end is no dip: a
    ///   server past its tipping point does that.
    /// - a fitted `penalty` at or beyond the bounds its fit searched
    ///   (`penalty_bounds`, else `PENALTY_BOUNDS`): the model could not
    ///   reproduce the recorded throughput there and the fit stopped at the
    ///   bound. Where no penalty is recorded, a negative USL `alpha` or
    ///   `beta` (the recorder fits both at 0 or more): the CPU per
    ///   transaction would fall as users grow.
    /// - a one-user penalty beyond `ONE_USER_PENALTY` either way where that
    ///   count was run once.
    /// - repeats at some counts (`throughput_stdev` above 0) and none at
    ///   others: the missing counts' repeats were lost.
    /// - a step whose window (`window_s`) counted fewer than
    ///   `MIN_WINDOW_TXNS` transactions at the rate it measured.
    ///
    /// Negative, NaN, infinite or missing figures never get here: the
    /// loader refuses them.
    pub fn health(&self) -> Vec<Suspect> {
        let mut out = Vec::new();
        let c = &self.concurrency;
        let (vus, thr, sd) = (&c.vus, &c.throughput, &c.throughput_stdev);
        let repeats = sd.len() == thr.len();
        let noise = |a: usize, b: usize| -> f64 {
            match repeats && sd[a] > 0.0 && sd[b] > 0.0 {
                true => 2.0 * (sd[a] * sd[a] + sd[b] * sd[b]).sqrt(),
                false => DEFAULT_SWEEP_NOISE * thr[a].max(thr[b]),
            }
        };
        if thr.len() == vus.len() && thr.len() >= 3 {
            let argmax = |r: std::ops::Range<usize>| r.max_by(|&i, &j| thr[i].total_cmp(&thr[j]));
            // The deepest dip: the least share of the lower of its two peaks.
            let mut deepest: Option<(f64, usize, usize, usize)> = None;
            for j in 1..thr.len() - 1 {
                let (Some(i), Some(k)) = (argmax(0..j), argmax(j + 1..thr.len())) else { continue };
                let share = thr[j] / thr[i].min(thr[k]);
                if thr[i] - thr[j] > noise(i, j) && thr[k] - thr[j] > noise(j, k) && deepest.is_none_or(|d| share < d.0) {
                    deepest = Some((share, i, j, k));
                }
            }
            if let Some((_, i, j, k)) = deepest {
                let unit = self.in_metric(1.0).1;
                let v = |x: usize| thousands(self.in_metric(thr[x]).0);
                let how = match repeats && sd[j] > 0.0 {
                    true => "two standard deviations of its repeats".to_string(),
                    false => format!("{:.0} % without repeats", DEFAULT_SWEEP_NOISE * 100.0),
                };
                out.push(Suspect {
                    field: "concurrency.throughput".into(),
                    reason: format!(
                        "the sweep falls from {} {unit} at {} to {} at {} and rises again to {} at {}, beyond its noise ({how})",
                        v(i),
                        users(vus[i]),
                        v(j),
                        users(vus[j]),
                        v(k),
                        users(vus[k])
                    ),
                    fix: "record again with --repeat 3 --duration 60 (on a quiet machine)".into(),
                });
            }
        }

        if !c.penalty.is_empty() && c.penalty.len() == vus.len() {
            let (lo, hi) = match c.penalty_bounds.as_slice() {
                [lo, hi] => (*lo, *hi),
                _ => PENALTY_BOUNDS,
            };
            let at: Vec<String> = c
                .penalty
                .iter()
                .zip(vus)
                .filter(|(p, _)| **p <= lo * (1.0 + 1e-9) || **p >= hi * (1.0 - 1e-9))
                .map(|(p, n)| format!("{p} at {}", users(*n)))
                .collect();
            if !at.is_empty() {
                out.push(Suspect {
                    field: "concurrency.penalty".into(),
                    reason: format!(
                        "{} — at or beyond the bounds [{lo}, {hi}] its fit searched: the model could not reproduce the recorded throughput there",
                        at.join(", ")
                    ),
                    fix: "record again with --repeat 3 --duration 60 (a count the fit cannot reach is mostly a noisy one)".into(),
                });
            }
            // The lowest count, where it is one user, run once.
            let first = (0..vus.len()).min_by(|&a, &b| vus[a].total_cmp(&vus[b]));
            if let Some(i) = first.filter(|&i| vus[i] == 1.0 && !(repeats && sd[i] > 0.0)) {
                let p = c.penalty[i];
                let bound = p <= lo * (1.0 + 1e-9) || p >= hi * (1.0 - 1e-9);
                if !bound && (p > ONE_USER_PENALTY || p < 1.0 / ONE_USER_PENALTY) {
                    out.push(Suspect {
                        field: "concurrency.penalty".into(),
                        reason: format!(
                            "×{p} at 1 user from one run — one user waits for no other, so the model's CPU and I/O should give the recorded rate there \
                             (a penalty within ×{ONE_USER_PENALTY} of 1), and without repeats a disturbed window cannot be told from a slow server"
                        ),
                        fix: "rerun with --repeat 3 --duration 60 (on a quiet machine)".into(),
                    });
                }
            }
        } else if c.penalty.is_empty() {
            for (name, x) in [("alpha", c.alpha), ("beta", c.beta)] {
                if x < 0.0 {
                    out.push(Suspect {
                        field: format!("concurrency.{name}"),
                        reason: format!("{x} — a negative USL coefficient makes each transaction cheaper as users grow; the recorder fits it at 0 or more"),
                        fix: "record again with this storlab's bench db --profile-out".into(),
                    });
                }
            }
        }

        // Repeats recorded at some counts and not at others: runs were lost.
        if repeats && sd.iter().any(|&x| x > 0.0) {
            let missing: Vec<String> = (0..vus.len()).filter(|&i| sd[i] == 0.0).map(|i| users(vus[i])).collect();
            if !missing.is_empty() {
                out.push(Suspect {
                    field: "concurrency.throughput_stdev".into(),
                    reason: format!(
                        "no spread at {} where the other counts have one — their repeats are missing (a run lost or cut short), so those counts rest on one run",
                        missing.join(", ")
                    ),
                    fix: "rerun with --repeat 3 --duration 60".into(),
                });
            }
        }

        if c.window_s.len() == vus.len() && thr.len() == vus.len() {
            let short: Vec<usize> = (0..vus.len()).filter(|&i| thr[i] > 0.0 && thr[i] * c.window_s[i] < MIN_WINDOW_TXNS).collect();
            if let Some(&slow) = short.iter().min_by(|&&a, &&b| thr[a].total_cmp(&thr[b])) {
                let steps: Vec<String> = short
                    .iter()
                    .map(|&i| format!("{} transactions in {} s at {}", thousands(thr[i] * c.window_s[i]), c.window_s[i], users(vus[i])))
                    .collect();
                // The window that counts MIN_WINDOW_TXNS at the slowest
                // short step, rounded up to 10 s.
                let need = (MIN_WINDOW_TXNS / thr[slow] / 10.0).ceil() * 10.0;
                let fix = if self.workload == "insert" {
                    let times = (MIN_WINDOW_TXNS / (thr[slow] * c.window_s[slow])).ceil();
                    format!("record again with {times:.0} times the --rows-per-user (the window ends when the rows are in)")
                } else {
                    format!("record again with --duration {need:.0}")
                };
                out.push(Suspect {
                    field: "concurrency.window_s".into(),
                    reason: format!(
                        "{} — fewer than {MIN_WINDOW_TXNS:.0} transactions, so the rate measured there is uncertain by more than 5 % (1/√n)",
                        steps.join(", ")
                    ),
                    fix,
                });
            }
        }
        out
    }
}
