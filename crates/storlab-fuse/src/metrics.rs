//! What the emulated volume did, as CloudWatch would show it: per period
//! and per pool, the metrics `storlab simulate --cloudwatch` writes, with
//! the same names and units (VolumeReadOps, ..., VolumeQueueLength,
//! BurstBalance). Written to a JSON file every period and served in
//! Prometheus's text format on a loopback port.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub use storlab_record::volume::VolumeCounters as Counters;
pub use storlab_record::Series;
use storlab_record::volume::{volume_series, volume_value, VOLUME_METRICS};

/// One closed period of one pool.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub c: Counters,
    pub burst_balance: Option<f64>,
}

pub struct Recorder {
    pub config: String,
    pub pools: Vec<String>,
    pub period_s: f64,
    pub rows: Vec<Vec<Row>>,
}

impl Recorder {
    pub fn series(&self) -> Vec<Series> {
        let mut out = Vec::new();
        for (pi, pool) in self.pools.iter().enumerate() {
            let rows: Vec<Counters> = self.rows.iter().map(|r| r[pi].c).collect();
            let burst = self.rows.first().is_some_and(|r| r[pi].burst_balance.is_some())
                .then(|| self.rows.iter().map(|r| r[pi].burst_balance.unwrap_or(100.0)).collect());
            out.extend(volume_series(&self.config, pool, self.period_s, &rows, burst));
        }
        out
    }

    pub fn json(&self) -> String {
        serde_json::json!({
            "schema_version": 1,
            "engine": "emulate",
            "config": self.config,
            "period_s": self.period_s,
            "series": self.series(),
        })
        .to_string()
    }

    /// The last closed period in Prometheus's text format (gauges named
    /// after the CloudWatch metrics).
    pub fn prometheus(&self) -> String {
        let mut s = String::new();
        let Some(last) = self.rows.last() else { return s };
        for (m, u) in VOLUME_METRICS.iter().chain([("BurstBalance", "Percent")].iter()) {
            let name = format!("storlab_{}", m);
            s += &format!("# HELP {name} CloudWatch {m} ({u}) over the last {} s period\n# TYPE {name} gauge\n", self.period_s);
            for (pi, pool) in self.pools.iter().enumerate() {
                let v = if *m == "BurstBalance" {
                    match last[pi].burst_balance {
                        Some(b) => b,
                        None => continue,
                    }
                } else {
                    volume_value(m, &last[pi].c, self.period_s)
                };
                s += &format!("{name}{{config=\"{}\",pool=\"{}\"}} {v}\n", self.config, pool);
            }
        }
        s
    }
}

/// Writes `text` to `path` whole: a reader never sees half a file.
pub fn write_atomic(path: &PathBuf, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp~");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Serves `GET /metrics` (any path) on 127.0.0.1:`port` from a thread;
/// returns the bound port (0 picks one).
pub fn serve(port: u16, rec: Arc<Mutex<Recorder>>) -> std::io::Result<u16> {
    let l = TcpListener::bind(("127.0.0.1", port))?;
    let port = l.local_addr()?.port();
    std::thread::Builder::new().name("storlab-metrics".into()).spawn(move || {
        for conn in l.incoming() {
            let Ok(mut c) = conn else { continue };
            let _ = c.set_read_timeout(Some(std::time::Duration::from_secs(2)));
            let mut buf = [0u8; 2048];
            let _ = c.read(&mut buf);
            let body = rec.lock().map(|r| r.prometheus()).unwrap_or_default();
            let _ = write!(c, "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\n\r\n{}", body.len(), body);
        }
    })?;
    Ok(port)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_length_is_io_time_over_the_period() {
        // 100 reads of 4 ms each in a 2 s period: 0.4 s of I/O time, so
        // 0.2 requests outstanding on average.
        let mut c = Counters::default();
        for _ in 0..100 {
            c.add(true, 4096.0, 0.004);
        }
        let rec = Recorder { config: "gp2".into(), pools: vec!["pool data".into()], period_s: 2.0, rows: vec![vec![Row { c, burst_balance: Some(50.0) }]] };
        let s = rec.series();
        let q = s.iter().find(|s| s.metric == "VolumeQueueLength").unwrap();
        assert!((q.values[0] - 0.2).abs() < 1e-9);
        assert_eq!(s.iter().find(|s| s.metric == "VolumeReadOps").unwrap().values, vec![100.0]);
        assert_eq!(s.iter().find(|s| s.metric == "BurstBalance").unwrap().values, vec![50.0]);
        let p = rec.prometheus();
        assert!(p.contains("storlab_VolumeReadOps{config=\"gp2\",pool=\"pool data\"} 100\n"), "{p}");
        assert!(p.contains("storlab_BurstBalance{config=\"gp2\",pool=\"pool data\"} 50\n"), "{p}");
    }
}
