//! One token bucket for every burst mechanism: gp2 I/O credits, st1/sc1
//! throughput credits, Azure credit bursting, the EBS burst of smaller EC2
//! instances, FSx disk burst. Tokens are counted units of work (I/O credits,
//! MiB, bytes); they refill at the baseline rate, each unit of work takes one,
//! and while any remain the device may run at the peak rate.
//!
//! With that rule the EBS user guide's arithmetic falls out: a full bucket
//! lasts `capacity / (peak − baseline)` at the peak (gp2 100 GiB: 5.4 M /
//! (3,000 − 300) = 2,000 s), and an idle empty bucket refills in
//! `capacity / baseline` (5.4 M / 300 = 18,000 s).
//!
//! A bucket also remembers when its balance was last brought up to date
//! (`updated`), so an engine can spend from it at any time without ticking
//! it: `at(t)` is the balance at `t`, refilled since. Time is `Secs` since
//! the run began, whatever the clock (virtual in the simulator, the wall
//! clock in an emulator).

use crate::time::Secs;
use serde::Serialize;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bucket {
    /// Largest balance, in the bucket's unit.
    pub capacity: f64,
    /// Tokens added per second: the baseline rate.
    pub refill_per_s: f64,
    /// Rate allowed while the balance is positive.
    pub peak_per_s: f64,
    /// Balance at `updated`.
    pub balance: f64,
    /// When `balance` was last brought up to date.
    #[serde(skip)]
    pub updated: Secs,
}

impl Bucket {
    /// A bucket that starts full, as every EBS and Azure bucket does.
    pub fn full(capacity: f64, refill_per_s: f64, peak_per_s: f64) -> Self {
        Bucket { capacity, refill_per_s, peak_per_s, balance: capacity, updated: Secs::ZERO }
    }

    /// The balance at `t`: refilled since `updated`, never above capacity.
    /// A `t` before `updated` sees the balance as of `updated`.
    #[inline]
    pub fn at(&self, t: Secs) -> f64 {
        (self.balance + self.refill_per_s * (t.0 - self.updated.0).max(0.0)).min(self.capacity)
    }

    /// Spends `tokens` at `t` (the balance never goes below zero: work
    /// admitted on an empty bucket runs at the refill rate instead).
    #[inline]
    pub fn take(&mut self, tokens: f64, t: Secs) {
        self.balance = (self.at(t) - tokens).max(0.0);
        self.updated = self.updated.max(t);
    }

    /// How long after `t` the balance holds `tokens`: zero when it already
    /// does, infinite when it never refills.
    #[inline]
    pub fn wait_for(&self, tokens: f64, t: Secs) -> f64 {
        let bal = self.at(t);
        if bal >= tokens {
            0.0
        } else if self.refill_per_s > 0.0 {
            (tokens - bal) / self.refill_per_s
        } else {
            f64::INFINITY
        }
    }

    /// Sets the balance at `t` to `percent` of capacity (an emulator's
    /// `--initial-credits`, or a run that starts with drained buckets).
    pub fn set_balance_percent(&mut self, percent: f64, t: Secs) {
        self.balance = self.capacity * (percent / 100.0).clamp(0.0, 1.0);
        self.updated = t;
    }

    /// True when bursting cannot raise the rate (gp2 at 1,000 GiB and above).
    pub fn is_inert(&self) -> bool {
        self.peak_per_s <= self.refill_per_s || self.capacity <= 0.0
    }

    /// The rate the bucket allows now.
    pub fn allowed_per_s(&self) -> f64 {
        if self.balance > 0.0 && !self.is_inert() {
            self.peak_per_s
        } else {
            self.refill_per_s
        }
    }

    /// How long the current balance sustains `demand_per_s` (capped at the
    /// peak); `None` when it never runs out.
    pub fn time_to_empty(&self, demand_per_s: f64) -> Option<Duration> {
        let rate = demand_per_s.min(self.peak_per_s);
        let drain = rate - self.refill_per_s;
        if drain <= 0.0 || self.is_inert() {
            return None;
        }
        Some(Duration::from_secs_f64(self.balance / drain))
    }

    /// How long an idle bucket takes to fill from its current balance.
    pub fn time_to_fill(&self) -> Option<Duration> {
        if self.is_inert() || self.refill_per_s <= 0.0 {
            return None;
        }
        Some(Duration::from_secs_f64((self.capacity - self.balance).max(0.0) / self.refill_per_s))
    }

    /// Advances the bucket by `dt` during which `used` tokens were spent.
    pub fn advance(&mut self, dt: Duration, used: f64) {
        self.balance = (self.balance + self.refill_per_s * dt.as_secs_f64() - used).clamp(0.0, self.capacity);
    }

    /// Balance as CloudWatch's BurstBalance: percent of capacity.
    pub fn balance_percent(&self) -> f64 {
        if self.capacity <= 0.0 {
            100.0
        } else {
            100.0 * self.balance / self.capacity
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // EBS user guide, gp2 burst table: 5.4 M credits, burst to 3,000 IOPS.
    #[test]
    fn gp2_100gib_bursts_2000s_and_refills_in_18000s() {
        let mut b = Bucket::full(5.4e6, 300.0, 3000.0);
        assert_eq!(b.time_to_empty(3000.0), Some(Duration::from_secs(2000)));
        b.balance = 0.0;
        assert_eq!(b.time_to_fill(), Some(Duration::from_secs(18000)));
    }

    #[test]
    fn advance_never_leaves_the_range() {
        let mut b = Bucket::full(100.0, 1.0, 10.0);
        b.advance(Duration::from_secs(5), 1000.0);
        assert_eq!(b.balance, 0.0);
        assert_eq!(b.allowed_per_s(), 1.0);
        b.advance(Duration::from_secs(1000), 0.0);
        assert_eq!(b.balance, 100.0);
        assert_eq!(b.allowed_per_s(), 10.0);
    }

    // Spend 1,000 of 5,000 at t = 10 s, refill 10/s: at t = 50 s the bucket
    // holds 4,000 + 40 × 10 = 4,400; 5,000 tokens are there 60 s later.
    #[test]
    fn at_refills_since_the_last_update() {
        let mut b = Bucket::full(5000.0, 10.0, 100.0);
        b.take(1000.0, Secs(10.0));
        assert_eq!(b.at(Secs(50.0)), 4400.0);
        assert_eq!(b.wait_for(5000.0, Secs(50.0)), 60.0);
        assert_eq!(b.at(Secs(1000.0)), 5000.0);
        b.set_balance_percent(25.0, Secs(0.0));
        assert_eq!(b.balance_percent(), 25.0);
    }

    #[test]
    fn baseline_at_or_above_peak_never_bursts() {
        let b = Bucket::full(5.4e6, 3000.0, 3000.0);
        assert!(b.is_inert());
        assert_eq!(b.time_to_empty(3000.0), None);
    }
}
