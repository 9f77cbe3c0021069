//! CloudWatch-style series: per period (default 60 s) and per pool, the EBS
//! volume metrics (VolumeReadOps, ..., BurstBalance); per RDS host, the RDS
//! instance metrics (ReadIOPS, ..., DiskQueueDepth, BurstBalance); per
//! burstable EC2 host, EBSIOBalance% and EBSByteBalance%. Names, units and
//! statistics follow the CloudWatch user guides (reference/cloud-specs.md §6).
//! Memory grows with the number of periods only, never with I/Os.

use crate::engine::Sink;
use storlab_model::pacing::{PacerId, PacerSet, Secs};

pub use storlab_record::Series;
use storlab_record::volume::{volume_series, VolumeCounters as Counters};
use storlab_record::Stamp;

/// A pool as the sink sees it: its name and the pacers whose buckets make
/// its BurstBalance.
pub struct SinkPool {
    pub name: String,
    pub buckets: Vec<PacerId>,
}

pub struct SeriesSink {
    config: String,
    period: f64,
    period_end: f64,
    pools: Vec<SinkPool>,
    counters: Vec<Counters>,
    rows: Vec<Vec<Counters>>,
    balances: Vec<Vec<Option<f64>>>,
    host_balance: Vec<(Option<f64>, Option<f64>)>,
    host_buckets: (Option<PacerId>, Option<PacerId>),
    rds: bool,
}

impl SeriesSink {
    pub fn new(config: &str, period_s: f64, pools: Vec<SinkPool>, host_buckets: (Option<PacerId>, Option<PacerId>), rds: bool) -> Self {
        let n = pools.len();
        SeriesSink {
            config: config.to_string(),
            period: period_s,
            period_end: period_s,
            pools,
            counters: vec![Counters::default(); n],
            rows: Vec::new(),
            balances: Vec::new(),
            host_balance: Vec::new(),
            host_buckets,
            rds,
        }
    }

    fn flush(&mut self, st: &PacerSet) {
        let t = Secs(self.period_end);
        self.rows.push(std::mem::take(&mut self.counters).into_iter().collect());
        self.counters = vec![Counters::default(); self.pools.len()];
        self.balances.push(
            self.pools
                .iter()
                .map(|p| p.buckets.iter().filter_map(|&b| st.get(b).balance_percent(t)).reduce(f64::min))
                .collect(),
        );
        let hb = |b: Option<PacerId>| b.and_then(|b| st.get(b).balance_percent(t));
        self.host_balance.push((hb(self.host_buckets.0), hb(self.host_buckets.1)));
        self.period_end += self.period;
    }

    /// Closes the periods up to `end` (the last one may be partial) and
    /// returns the series.
    pub fn finish(mut self, end: Secs, st: &PacerSet) -> Vec<Series> {
        self.advance(end, st);
        self.series(st)
    }
}

impl Sink for SeriesSink {
    /// Closes every period that ends at or before `t`.
    #[inline]
    fn advance(&mut self, t: Secs, st: &PacerSet) {
        // Never more than MAX_SERIES_POINTS periods, whatever time an I/O
        // reports: what comes after the last one is counted in it.
        while t.0 >= self.period_end && (self.rows.len() as u64) < crate::MAX_SERIES_POINTS {
            self.flush(st);
        }
    }

    #[inline]
    fn complete(&mut self, pool: usize, read: bool, bytes: f64, latency_s: f64) {
        self.counters[pool].add(read, bytes, latency_s);
    }

}

impl SeriesSink {
    fn series(mut self, st: &PacerSet) -> Vec<Series> {
        if self.counters.iter().any(|c| c.read_ops + c.write_ops > 0.0) || self.rows.is_empty() {
            self.flush(st);
        }
        let n = self.rows.len();
        let ts: Vec<f64> = (0..n).map(|i| i as f64 * self.period).collect();
        let mut out = Vec::new();
        let mk = |resource: &str, metric: &str, unit: &str, values: Vec<f64>| Series {
            config: self.config.clone(),
            resource: resource.to_string(),
            metric: metric.to_string(),
            unit: unit.to_string(),
            period_s: self.period,
            timestamps: ts.iter().map(|&t| Stamp::Seconds(t)).collect(),
            values,
        };
        let p = self.period;
        for (pi, pool) in self.pools.iter().enumerate() {
            let rows: Vec<Counters> = self.rows.iter().map(|r| r[pi]).collect();
            let burst = (!pool.buckets.is_empty()).then(|| self.balances.iter().map(|b| b[pi].unwrap_or(100.0)).collect());
            out.extend(volume_series(&self.config, &pool.name, p, &rows, burst));
        }
        if self.rds {
            let sum = |f: &dyn Fn(&Counters) -> f64| self.rows.iter().map(|r| r.iter().map(f).sum::<f64>()).collect::<Vec<f64>>();
            let div = |a: Vec<f64>, b: Vec<f64>| a.iter().zip(&b).map(|(x, y)| if *y > 0.0 { x / y } else { 0.0 }).collect::<Vec<f64>>();
            out.push(mk("host", "ReadIOPS", "Count/Second", sum(&|c| c.read_ops / p)));
            out.push(mk("host", "WriteIOPS", "Count/Second", sum(&|c| c.write_ops / p)));
            out.push(mk("host", "ReadLatency", "Seconds", div(sum(&|c| c.read_time), sum(&|c| c.read_ops))));
            out.push(mk("host", "WriteLatency", "Seconds", div(sum(&|c| c.write_time), sum(&|c| c.write_ops))));
            out.push(mk("host", "ReadThroughput", "Bytes/Second", sum(&|c| c.read_bytes / p)));
            out.push(mk("host", "WriteThroughput", "Bytes/Second", sum(&|c| c.write_bytes / p)));
            out.push(mk("host", "DiskQueueDepth", "Count", sum(&|c| (c.read_time + c.write_time) / p)));
            if self.pools.iter().any(|p| !p.buckets.is_empty()) {
                let v = self.balances.iter().map(|b| b.iter().flatten().copied().reduce(f64::min).unwrap_or(100.0)).collect();
                out.push(mk("host", "BurstBalance", "Percent", v));
            }
        }
        if self.host_buckets.0.is_some() {
            out.push(mk("host", "EBSIOBalance%", "Percent", self.host_balance.iter().map(|b| b.0.unwrap_or(100.0)).collect()));
        }
        if self.host_buckets.1.is_some() {
            out.push(mk("host", "EBSByteBalance%", "Percent", self.host_balance.iter().map(|b| b.1.unwrap_or(100.0)).collect()));
        }
        out
    }
}
