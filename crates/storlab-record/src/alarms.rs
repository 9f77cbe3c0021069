//! CloudWatch metric alarms evaluated on a record's series: a pure function
//! from the alarm and the series to the alarm's state changes, so a
//! simulated, emulated or measured run can say when an alarm would have
//! fired.
//!
//! The rules are CloudWatch's ("Using Amazon CloudWatch alarms", CloudWatch
//! user guide): each alarm period gives one datapoint, the statistic of the
//! metric over that period; at the end of each period the alarm looks at the
//! last N datapoints (`evaluation_periods`) and goes to ALARM when M of them
//! (`datapoints_to_alarm`) breach the threshold. It starts in
//! INSUFFICIENT_DATA. With missing data treated as missing (CloudWatch's
//! default) it goes to OK once the datapoints it has can no longer make M
//! breaches (more than N − M of them do not breach), and it stays where it
//! is while the window holds no datapoint.

use crate::{AlarmChange, Series, Stamp};
use serde::{Deserialize, Serialize};

/// One `[[alarms]]` entry of a scenario, read as it is written there (with
/// CloudWatch's defaults; storlab-model checks its values against the
/// scenario): a CloudWatch metric alarm with CloudWatch's field meanings.
/// Each `period_s` gives one datapoint, the `statistic` of the metric over
/// that period; the alarm looks at the last `evaluation_periods` (N)
/// datapoints and goes to ALARM when `datapoints_to_alarm` (M) of them
/// breach the threshold ("M out of N").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlarmRule {
    pub name: String,
    pub metric: String,
    #[serde(default = "average")]
    pub statistic: String,
    #[serde(default = "sixty")]
    pub period_s: f64,
    pub threshold: f64,
    /// CloudWatch's names: GreaterThanOrEqualToThreshold, GreaterThanThreshold,
    /// LessThanThreshold, LessThanOrEqualToThreshold.
    pub comparison: String,
    #[serde(default = "one")]
    pub evaluation_periods: u32,
    /// M; defaults to `evaluation_periods` (CloudWatch: "If you omit this, M = N").
    #[serde(default)]
    pub datapoints_to_alarm: Option<u32>,
    /// Only series of this resource (`pool data`, `host`, ...).
    #[serde(default)]
    pub resource: Option<String>,
    /// Only this config.
    #[serde(default)]
    pub config: Option<String>,
}

fn average() -> String {
    "Average".into()
}

fn sixty() -> f64 {
    60.0
}

fn one() -> u32 {
    1
}

/// CloudWatch's comparison operators for static thresholds, with the
/// symbol used in alarm reasons.
pub const COMPARISONS: [(&str, &str); 4] = [
    ("GreaterThanOrEqualToThreshold", ">="),
    ("GreaterThanThreshold", ">"),
    ("LessThanThreshold", "<"),
    ("LessThanOrEqualToThreshold", "<="),
];

pub const OK: &str = "OK";
pub const ALARM: &str = "ALARM";
pub const INSUFFICIENT_DATA: &str = "INSUFFICIENT_DATA";

impl AlarmRule {
    /// The comparison's symbol, for reasons: `<`, `<=`, `>`, `>=`.
    pub fn symbol(&self) -> &'static str {
        COMPARISONS.iter().find(|c| c.0 == self.comparison).map_or("?", |c| c.1)
    }

    /// True when `v` breaches the threshold.
    pub fn breaches(&self, v: f64) -> bool {
        match self.symbol() {
            ">=" => v >= self.threshold,
            ">" => v > self.threshold,
            "<" => v < self.threshold,
            "<=" => v <= self.threshold,
            _ => false,
        }
    }

    /// M of "M out of N".
    pub fn datapoints(&self) -> u32 {
        self.datapoints_to_alarm.unwrap_or(self.evaluation_periods)
    }

    /// "BurstBalance < 50 for 2 of 2 periods".
    fn reason(&self, breaching: u32) -> String {
        format!("{} {} {} for {breaching} of {} periods", self.metric, self.symbol(), fmt_num(self.threshold), self.evaluation_periods)
    }
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The alarm periods' datapoints of one series: the statistic over each run
/// of `period_s / series.period_s` series values (NaN where none), with the
/// period starts in seconds. `Err` when the alarm period is not a whole
/// number of series periods.
fn datapoints(rule: &AlarmRule, s: &Series) -> Result<Vec<(f64, f64)>, String> {
    let k = rule.period_s / s.period_s;
    if !(k >= 1.0 - 1e-9 && (k - k.round()).abs() < 1e-9) {
        return Err(format!(
            "alarm '{}': period_s {} is not a whole multiple of the series' period ({} s) — e.g. {}",
            rule.name,
            fmt_num(rule.period_s),
            fmt_num(s.period_s),
            fmt_num(s.period_s * (rule.period_s / s.period_s).round().max(1.0))
        ));
    }
    let k = k.round() as usize;
    let start = |i: usize| match s.timestamps.get(i) {
        Some(Stamp::Seconds(t)) => *t,
        _ => i as f64 * s.period_s,
    };
    Ok(s.values
        .chunks(k)
        .enumerate()
        .map(|(j, vs)| {
            let vs: Vec<f64> = vs.iter().copied().filter(|v| v.is_finite()).collect();
            let v = if vs.is_empty() {
                f64::NAN
            } else {
                match rule.statistic.as_str() {
                    "Sum" => vs.iter().sum(),
                    "Minimum" => vs.iter().copied().fold(f64::INFINITY, f64::min),
                    "Maximum" => vs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    "SampleCount" => vs.len() as f64,
                    _ => vs.iter().sum::<f64>() / vs.len() as f64,
                }
            };
            (start(j * k), v)
        })
        .collect())
}

/// The state changes of `rule` on every series it selects (its metric, and
/// its config and resource when given), in time order. A change happens at
/// the end of the period that decided it. When a config has the metric on
/// more than one resource, each is its own alarm, named `name (resource)`.
pub fn evaluate(rule: &AlarmRule, series: &[Series]) -> Result<Vec<AlarmChange>, String> {
    let chosen: Vec<&Series> = series
        .iter()
        .filter(|s| s.metric == rule.metric)
        .filter(|s| rule.config.as_ref().map_or(true, |c| &s.config == c))
        .filter(|s| rule.resource.as_ref().map_or(true, |r| &s.resource == r))
        .collect();
    let n = rule.evaluation_periods.max(1) as usize;
    let m = rule.datapoints().max(1) as usize;
    let mut out = Vec::new();
    for s in &chosen {
        let shared = chosen.iter().filter(|o| o.config == s.config).count() > 1;
        let alarm = if shared { format!("{} ({})", rule.name, s.resource) } else { rule.name.clone() };
        let points = datapoints(rule, s)?;
        let mut state = INSUFFICIENT_DATA;
        for i in 0..points.len() {
            let window = &points[(i + 1).saturating_sub(n)..=i];
            let present: Vec<f64> = window.iter().map(|p| p.1).filter(|v| !v.is_nan()).collect();
            let breaching = present.iter().filter(|v| rule.breaches(**v)).count();
            let next = if breaching >= m {
                ALARM
            } else if present.len() - breaching > n - m {
                OK
            } else {
                state
            };
            if next != state {
                out.push(AlarmChange {
                    alarm: alarm.clone(),
                    config: s.config.clone(),
                    time_s: points[i].0 + rule.period_s,
                    from: state.into(),
                    to: next.into(),
                    reason: rule.reason(breaching as u32),
                });
                state = next;
            }
        }
    }
    out.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(cmp: &str, n: u32, m: u32) -> AlarmRule {
        AlarmRule {
            name: "burst-below-half".into(),
            metric: "BurstBalance".into(),
            statistic: "Average".into(),
            period_s: 60.0,
            threshold: 50.0,
            comparison: cmp.into(),
            evaluation_periods: n,
            datapoints_to_alarm: Some(m),
            resource: None,
            config: None,
        }
    }

    fn series(period_s: f64, values: Vec<f64>) -> Series {
        Series {
            config: "gp2".into(),
            resource: "pool all".into(),
            metric: "BurstBalance".into(),
            unit: "Percent".into(),
            period_s,
            timestamps: (0..values.len()).map(|i| Stamp::Seconds(i as f64 * period_s)).collect(),
            values,
        }
    }

    /// gp2 100 GiB at 3,000 IOPS (EBS user guide: 5.4 M credits, refill
    /// 300/s): the bucket drains at 2,700 credits/s and is empty after
    /// 5.4e6 / 2,700 = 2,000 s, so BurstBalance at time t is
    /// 100 × (1 − t / 2,000) %. CloudWatch reports BurstBalance once a
    /// minute; as in the simulator, the minute's sample is the balance at
    /// its end, 100 × (1 − 60 (k + 1) / 2,000) for minute k. Below 50 first
    /// for 60 (k + 1) > 1,000, i.e. k + 1 = 17 (1,020 s: 49 %; 960 s: 52 %).
    /// Minutes 16 and 17 (from 0) are the first 2 of 2 below 50: ALARM at
    /// the end of minute 17, 18 × 60 = 1,080 s (00:18:00). Minute 0 (97 %)
    /// does not breach, and one non-breaching datapoint is more than
    /// N − M = 0: OK at 60 s.
    #[test]
    fn gp2_burst_balance_alarm_fires_at_minute_18() {
        let values: Vec<f64> = (0..34).map(|k| (100.0 * (1.0 - 60.0 * (k + 1) as f64 / 2000.0)).max(0.0)).collect();
        let changes = evaluate(&rule("LessThanThreshold", 2, 2), &[series(60.0, values)]).unwrap();
        let got: Vec<(f64, &str, &str)> = changes.iter().map(|c| (c.time_s, c.from.as_str(), c.to.as_str())).collect();
        assert_eq!(got, vec![(60.0, INSUFFICIENT_DATA, OK), (1080.0, OK, ALARM)]);
        assert_eq!(changes[1].reason, "BurstBalance < 50 for 2 of 2 periods");
    }

    /// 2 out of 3, values 60, 40, 60, 40, 60 against "< 50" (windows by hand below).
    #[test]
    fn m_out_of_n_counts_breaches_anywhere_in_the_window() {
        // windows: [60] 0 breaching, 1 non (not > 1): stays INSUFFICIENT_DATA
        //          [60,40] 1 breaching, 1 non: stays
        //          [60,40,60] 1 breaching, 2 non (> 1): OK at 180 s
        //          [40,60,40] 2 breaching: ALARM at 240 s
        //          [60,40,60] 1 breaching, 2 non: OK at 300 s
        let changes = evaluate(&rule("LessThanThreshold", 3, 2), &[series(60.0, vec![60.0, 40.0, 60.0, 40.0, 60.0])]).unwrap();
        let got: Vec<(f64, &str)> = changes.iter().map(|c| (c.time_s, c.to.as_str())).collect();
        assert_eq!(got, vec![(180.0, OK), (240.0, ALARM), (300.0, OK)]);
        assert_eq!(changes[1].reason, "BurstBalance < 50 for 2 of 3 periods");
    }

    /// A 120 s alarm period over 60 s series: Average of pairs (10, 30) = 20,
    /// (50, 70) = 60; Maximum of the same pairs 30 and 70; ">= 50" breaches
    /// only the second pair either way, at its end, 240 s.
    #[test]
    fn longer_periods_aggregate_the_series_with_the_statistic() {
        let mut r = rule("GreaterThanOrEqualToThreshold", 1, 1);
        r.period_s = 120.0;
        for stat in ["Average", "Maximum"] {
            r.statistic = stat.into();
            let changes = evaluate(&r, &[series(60.0, vec![10.0, 30.0, 50.0, 70.0])]).unwrap();
            let got: Vec<(f64, &str)> = changes.iter().map(|c| (c.time_s, c.to.as_str())).collect();
            assert_eq!(got, vec![(120.0, OK), (240.0, ALARM)], "{stat}");
        }
        r.period_s = 90.0;
        let e = evaluate(&r, &[series(60.0, vec![1.0])]).unwrap_err();
        assert!(e.contains("period_s 90 is not a whole multiple of the series' period (60 s) — e.g. 120"), "{e}");
    }

    #[test]
    fn filters_pick_the_config_and_resource() {
        let mut r = rule("LessThanThreshold", 1, 1);
        r.config = Some("other".into());
        assert!(evaluate(&r, &[series(60.0, vec![10.0])]).unwrap().is_empty());
        r.config = Some("gp2".into());
        r.resource = Some("pool all".into());
        assert_eq!(evaluate(&r, &[series(60.0, vec![10.0])]).unwrap()[0].to, ALARM);
    }
}
