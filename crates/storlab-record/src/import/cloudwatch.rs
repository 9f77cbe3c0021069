//! CloudWatch `get-metric-data` output (`aws cloudwatch get-metric-data`,
//! or GetMetricData through an SDK, or storlab's own `--cloudwatch FILE`):
//! `MetricDataResults[{Id, Label, Timestamps, Values, StatusCode}]`, each a
//! series of the record. The period is the spacing of the timestamps (the
//! API returns the newest first unless asked otherwise; they are sorted
//! here). A label of three words or more reads as `config resource metric`
//! (storlab's own), of two as `resource metric`, of one as the metric.
//!
//! The console's CSV download is not read: no published description of its
//! layout was found to test against.

use super::{record, source, ImportError};
use crate::{RunRecord, Series, Stamp};
use serde_json::Value;

fn err(file: &str, entry: &str, field: &str, message: impl Into<String>) -> ImportError {
    ImportError::Entry { file: file.into(), entry: entry.into(), field: field.into(), message: message.into() }
}

/// CloudWatch's unit for the EBS, EC2 and RDS metric names storlab models.
fn unit_of(metric: &str) -> &'static str {
    if metric.ends_with("Ops") || metric.ends_with("Count") || metric == "VolumeQueueLength" || metric == "DiskQueueDepth" {
        "Count"
    } else if metric.ends_with("Bytes") {
        "Bytes"
    } else if metric.ends_with("Balance") || metric.ends_with("Balance%") || metric.contains("Utilization") || metric.ends_with("Percentage") {
        "Percent"
    } else if metric.ends_with("Throughput") {
        "Bytes/Second"
    } else if metric.ends_with("IOPS") {
        "Count/Second"
    } else if metric.ends_with("Latency") || metric.ends_with("Time") {
        "Seconds"
    } else {
        "None"
    }
}

/// Seconds since 1970 of an ISO-8601 time (`2024-01-01T00:05:00+00:00`,
/// `…Z`) or a number, for ordering and the period.
pub(crate) fn epoch(v: &Value) -> Option<f64> {
    if let Some(n) = v.as_f64() {
        return Some(n);
    }
    let s = v.as_str()?;
    let (date, rest) = s.split_once(['T', ' '])?;
    let mut d = date.split('-').map(|x| x.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let time_end = rest.find(['Z', '+']).or_else(|| rest.rfind('-').filter(|i| *i > 5)).unwrap_or(rest.len());
    let mut t = rest[..time_end].split(':').map(|x| x.parse::<f64>().ok());
    let (hh, mm, ss) = (t.next()??, t.next()??, t.next().flatten().unwrap_or(0.0));
    let mut off = 0.0;
    let zone = &rest[time_end..];
    if zone.len() >= 3 && (zone.starts_with('+') || zone.starts_with('-')) {
        let sign = if zone.starts_with('-') { -1.0 } else { 1.0 };
        let z: Vec<f64> = zone[1..].split(':').filter_map(|x| x.parse().ok()).collect();
        off = sign * (z.first().copied().unwrap_or(0.0) * 3600.0 + z.get(1).copied().unwrap_or(0.0) * 60.0);
    }
    // Days from civil (H. Hinnant).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days as f64 * 86_400.0 + hh * 3600.0 + mm * 60.0 + ss - off)
}

/// Reads `get-metric-data` JSON.
pub fn read_json(file: &str, doc: &Value) -> Result<RunRecord, ImportError> {
    let list = doc.get("MetricDataResults").and_then(|v| v.as_array()).ok_or_else(|| err(file, "document", "MetricDataResults", "not an array"))?;
    let mut rec = record("CloudWatch", "", "CloudWatch", source("CloudWatch", file));
    for (i, m) in list.iter().enumerate() {
        let entry = format!("MetricDataResults[{i}]");
        let id = m.get("Id").and_then(|v| v.as_str()).unwrap_or("");
        let label = m.get("Label").and_then(|v| v.as_str()).filter(|l| !l.is_empty()).unwrap_or(id);
        let ts = m.get("Timestamps").and_then(|v| v.as_array()).ok_or_else(|| err(file, &entry, "Timestamps", "missing or not an array"))?;
        let vs = m.get("Values").and_then(|v| v.as_array()).ok_or_else(|| err(file, &entry, "Values", "missing or not an array"))?;
        if ts.len() != vs.len() {
            return Err(err(file, &entry, "Values", format!("{} values for {} timestamps — CloudWatch gives one value per timestamp", vs.len(), ts.len())));
        }
        let mut pts = Vec::with_capacity(ts.len());
        for (j, (t, v)) in ts.iter().zip(vs).enumerate() {
            let e = epoch(t).ok_or_else(|| err(file, &entry, &format!("Timestamps[{j}]"), format!("{t} is not an ISO-8601 time")))?;
            let v = v.as_f64().ok_or_else(|| err(file, &entry, &format!("Values[{j}]"), format!("{v} is not a number")))?;
            pts.push((e, t.clone(), v));
        }
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let period_s = pts.windows(2).map(|w| w[1].0 - w[0].0).filter(|d| *d > 0.0).fold(f64::INFINITY, f64::min);
        let words: Vec<&str> = label.split_whitespace().collect();
        let (config, resource, metric) = match words.len() {
            0 | 1 => ("CloudWatch".to_string(), id.to_string(), label.to_string()),
            2 => ("CloudWatch".to_string(), words[0].to_string(), words[1].to_string()),
            k => (words[0].to_string(), words[1..k - 1].join(" "), words[k - 1].to_string()),
        };
        if m.get("StatusCode").and_then(|v| v.as_str()).is_some_and(|s| s != "Complete") {
            rec.warnings.push(format!("{file}: {entry} ({label}): StatusCode {} — not every data point was returned", m["StatusCode"]));
            rec.interrupted = true;
        }
        rec.series.push(Series {
            config,
            resource,
            unit: unit_of(&metric).into(),
            metric,
            period_s: if period_s.is_finite() { period_s } else { 60.0 },
            timestamps: pts.iter().map(|(_, t, _)| match t {
                Value::String(s) => Stamp::Utc(s.clone()),
                other => Stamp::Seconds(other.as_f64().unwrap_or(0.0)),
            }).collect(),
            values: pts.iter().map(|p| p.2).collect(),
        });
    }
    if rec.series.is_empty() {
        return Err(ImportError::Empty { file: file.into(), format: "CloudWatch".into(), hint: "MetricDataResults is empty".into() });
    }
    Ok(rec)
}

/// The console's CSV is not read (see the module's note).
pub fn looks_like_csv(_text: &str) -> bool {
    false
}

/// The console's CSV is not read (see the module's note).
pub fn read_csv(file: &str, _text: &str) -> Result<RunRecord, ImportError> {
    Err(ImportError::UnknownFormat { file: file.into(), why: "the CloudWatch console's CSV is not read yet — export with `aws cloudwatch get-metric-data` instead".into() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn newest_first_results_are_sorted_with_their_period() {
        let doc = json!({"MetricDataResults": [
            {"Id": "m1", "Label": "vol-0abc VolumeReadOps", "StatusCode": "Complete",
             "Timestamps": ["2024-03-01T10:10:00+00:00", "2024-03-01T10:05:00+00:00", "2024-03-01T10:00:00+00:00"],
             "Values": [300.0, 200.0, 100.0]},
            {"Id": "m2", "Label": "gp2 pool data BurstBalance", "StatusCode": "PartialData",
             "Timestamps": ["2024-03-01T10:00:00Z"], "Values": [99.0]}], "Messages": []});
        let r = read_json("cw.json", &doc).unwrap();
        let s = &r.series[0];
        assert_eq!((s.resource.as_str(), s.metric.as_str(), s.unit.as_str(), s.period_s), ("vol-0abc", "VolumeReadOps", "Count", 300.0));
        assert_eq!(s.values, [100.0, 200.0, 300.0]);
        let b = &r.series[1];
        assert_eq!((b.config.as_str(), b.resource.as_str(), b.metric.as_str(), b.unit.as_str()), ("gp2", "pool data", "BurstBalance", "Percent"));
        assert!(r.interrupted && r.warnings[0].contains("PartialData"));
    }

    #[test]
    fn epoch_reads_zones() {
        assert_eq!(epoch(&json!("1970-01-02T00:00:00Z")), Some(86400.0));
        assert_eq!(epoch(&json!("1970-01-02T01:00:00+01:00")), Some(86400.0));
        assert_eq!(epoch(&json!("2024-03-01T10:00:00+00:00")), Some(1709287200.0));
    }

    #[test]
    fn mismatched_lengths_name_the_entry() {
        let doc = json!({"MetricDataResults": [{"Id": "m1", "Timestamps": ["2024-03-01T10:00:00Z"], "Values": []}]});
        assert_eq!(read_json("cw.json", &doc).unwrap_err().to_string(), "cw.json: MetricDataResults[0]: Values: 0 values for 1 timestamps — CloudWatch gives one value per timestamp");
    }
}
