//! CloudWatch `get-metric-data` output (`aws cloudwatch get-metric-data`,
//! or GetMetricData through an SDK, or storlab's own `--cloudwatch FILE`):
//! `MetricDataResults[{Id, Label, Timestamps, Values, StatusCode}]`, each a
//! series of the record. The period is the spacing of the timestamps (the
//! API returns the newest first unless asked otherwise; they are sorted
//! here). A label of three words or more reads as `config resource metric`
//! (storlab's own), of two as `resource metric`, of one as the metric; one
//! whose first word is a namespace (`AWS/EBS VolumeReadOps VolumeId vol-0abc`)
//! as `namespace metric dimension value…`.
//!
//! The console's CSV download of a graph (one row a period, one column a
//! graphed metric) is read by [`read_csv`] into the same series.

use super::{record, source, ImportError};
use crate::{RunRecord, Series, Stamp};
use serde_json::Value;

fn err(file: &str, entry: &str, field: &str, message: impl Into<String>) -> ImportError {
    ImportError::Entry { file: file.into(), entry: entry.into(), field: field.into(), message: message.into() }
}

fn line_err(file: &str, line: usize, field: &str, message: impl Into<String>) -> ImportError {
    ImportError::Line { file: file.into(), line, field: field.into(), message: message.into() }
}

/// A series of a metric labelled `label` (or named by `id`), with its
/// period: the least step between points, 60 s for a single point.
fn series(label: &str, id: &str, period_s: f64, timestamps: Vec<Stamp>, values: Vec<f64>) -> Series {
    let (config, resource, metric) = split_label(label, id);
    Series { config, resource, unit: unit_of(&metric).into(), metric, period_s: if period_s.is_finite() { period_s } else { 60.0 }, timestamps, values }
}

/// `(config, resource, metric)` of a label (see the module's note);
/// `fallback` is the resource of a one-word label.
fn split_label(label: &str, fallback: &str) -> (String, String, String) {
    let words: Vec<&str> = label.split_whitespace().collect();
    match words.len() {
        0 | 1 => ("CloudWatch".into(), fallback.into(), label.trim().into()),
        // Namespace, metric name, then dimension name/value pairs: the values name the resource.
        _ if words[0].contains('/') => ("CloudWatch".into(), words[2..].iter().skip(1).step_by(2).copied().collect::<Vec<_>>().join(" "), words[1].into()),
        2 => ("CloudWatch".into(), words[0].into(), words[1].into()),
        k => (words[0].into(), words[1..k - 1].join(" "), words[k - 1].into()),
    }
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
        if m.get("StatusCode").and_then(|v| v.as_str()).is_some_and(|s| s != "Complete") {
            rec.warnings.push(format!("{file}: {entry} ({label}): StatusCode {} — not every data point was returned", m["StatusCode"]));
            rec.interrupted = true;
        }
        let stamps = pts.iter().map(|(_, t, _)| match t {
            Value::String(s) => Stamp::Utc(s.clone()),
            other => Stamp::Seconds(other.as_f64().unwrap_or(0.0)),
        });
        rec.series.push(series(label, id, period_s, stamps.collect(), pts.iter().map(|p| p.2).collect()));
    }
    if rec.series.is_empty() {
        return Err(ImportError::Empty { file: file.into(), format: "CloudWatch".into(), hint: "MetricDataResults is empty".into() });
    }
    Ok(rec)
}

/// The cells of a CSV text (RFC 4180: a quoted cell may hold commas,
/// doubled quotes and line breaks; CRLF or LF), each record with the line
/// it starts on. Blank lines are left out; unquoted cells are trimmed.
fn csv_records(file: &str, text: &str) -> Result<Vec<(usize, Vec<String>)>, ImportError> {
    let mut out = Vec::new();
    let (mut line, mut start) = (1usize, 1usize);
    let mut cells: Vec<String> = Vec::new();
    let mut cell = String::new();
    let (mut quoted, mut was_quoted) = (false, false);
    let finish = |cell: &mut String, was_quoted: &mut bool| {
        let c = if *was_quoted { std::mem::take(cell) } else { std::mem::take(cell).trim().to_string() };
        *was_quoted = false;
        c
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    cell.push('"');
                }
                '"' => quoted = false,
                '\r' if chars.peek() == Some(&'\n') => {}
                '\n' => {
                    line += 1;
                    cell.push('\n');
                }
                _ => cell.push(c),
            }
            continue;
        }
        match c {
            '"' if !was_quoted && cell.trim().is_empty() => {
                cell.clear();
                quoted = true;
                was_quoted = true;
            }
            ',' => cells.push(finish(&mut cell, &mut was_quoted)),
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                cells.push(finish(&mut cell, &mut was_quoted));
                if !(cells.len() == 1 && cells[0].is_empty()) {
                    out.push((start, std::mem::take(&mut cells)));
                }
                cells.clear();
                line += 1;
                start = line;
            }
            // Blanks after a closing quote are not part of the cell.
            c if was_quoted && c.is_whitespace() => {}
            _ => cell.push(c),
        }
    }
    if quoted {
        return Err(line_err(file, start, &format!("column {}", cells.len() + 1), "a quoted cell is not closed — a cell that opens with \" ends with \""));
    }
    if !cells.is_empty() || !cell.trim().is_empty() || was_quoted {
        cells.push(finish(&mut cell, &mut was_quoted));
        out.push((start, cells));
    }
    Ok(out)
}

/// A header cell naming the time column.
fn is_time_header(h: &str) -> bool {
    let h = h.split(['(', '[']).next().unwrap_or("").trim().to_ascii_lowercase();
    matches!(h.as_str(), "timestamp" | "timestamps" | "time" | "date" | "datetime" | "date time" | "timebucket")
}

/// Seconds since 1970 of a CSV time cell: ISO 8601 with a `T` or a blank
/// between date and time, seconds optional, fractions kept, and `Z`,
/// `±hh:mm`, `±hhmm`, ` UTC` or no zone (UTC). Out-of-range fields (month 13,
/// 25 o'clock) are refused.
fn csv_time(s: &str) -> Option<f64> {
    let s = s.trim();
    let s = s.strip_suffix(" UTC").or_else(|| s.strip_suffix(" GMT")).unwrap_or(s);
    let (date, rest) = s.split_once(['T', ' '])?;
    let d: Vec<&str> = date.split('-').collect();
    if d.len() != 3 || d[0].len() != 4 || d.iter().any(|x| x.is_empty() || !x.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let (y, m, day): (i64, u32, u32) = (d[0].parse().ok()?, d[1].parse().ok()?, d[2].parse().ok()?);
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&m) || day == 0 || day > month_days[m as usize - 1] {
        return None;
    }
    let time_end = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
    let clock = rest[..time_end].trim_end();
    let t: Vec<&str> = clock.split(':').collect();
    if !(2..=3).contains(&t.len()) || t[..2].iter().any(|x| x.len() != 2 || !x.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let (hh, mm): (u32, u32) = (t[0].parse().ok()?, t[1].parse().ok()?);
    let ss: f64 = t.get(2).map_or(Some(0.0), |x| x.parse().ok().filter(|v: &f64| v.is_finite()))?;
    if hh > 23 || mm > 59 || !(0.0..61.0).contains(&ss) {
        return None;
    }
    let zone = &rest[time_end..];
    let zone = match zone.len() {
        0 => "Z".to_string(),
        1 if zone.eq_ignore_ascii_case("z") => "Z".to_string(),
        // ±hh:mm, ±hhmm, ±hh
        3 | 5 | 6 if zone[1..].bytes().filter(|b| *b != b':').all(|b| b.is_ascii_digit()) => {
            let digits: String = zone[1..].chars().filter(|c| *c != ':').collect();
            if (digits.len() != 2 && digits.len() != 4) || (zone.len() == 6 && zone.as_bytes()[3] != b':') {
                return None;
            }
            format!("{}{}:{}", &zone[..1], &digits[..2], digits.get(2..).filter(|x| !x.is_empty()).unwrap_or("00"))
        }
        _ => return None,
    };
    epoch(&Value::String(format!("{date}T{clock}{zone}")))
}

/// Where a CSV cell is: `column 3 'vol-0abc VolumeWriteOps'`.
fn column(header: &[String], i: usize) -> String {
    match header.get(i).map(|h| h.as_str()) {
        Some("") | None => format!("column {}", i + 1),
        Some(h) => format!("column {} '{}'", i + 1, one_line(h)),
    }
}

/// Reads the CSV the CloudWatch console downloads for a graph (Metrics →
/// a graph → Actions → Download as .csv).
///
/// Sources, and what they show. No published page states this file's
/// layout: the CloudWatch User Guide's graphing pages
/// (github.com/awsdocs/amazon-cloudwatch-user-guide) never mention CSV, and
/// no page, issue or repository found quotes a downloaded file. The layout
/// read here is the one AWS documents for the nearest sibling, and the
/// sample in tests/data/import follows it:
/// - https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/cloudwatch-csv.html
///   ("Download metrics data in CSV format"): the CloudFront console's
///   download of a distribution's CloudWatch metrics — a few report lines,
///   then columns DistributionID, FriendlyName, `TimeBucket` (UTC) and one
///   a metric (Requests, BytesDownloaded, …), each row one period of the
///   report's granularity.
/// - https://zenn.dev/team_delta/articles/1215c5dab15415: the CloudWatch
///   metrics console exports a graph's data as CSV, one value a period (Sum
///   over 1 day there), for summing in a spreadsheet; it does not show the
///   columns.
///
/// So: one header row, then one row a period. The time column is the one
/// headed `Timestamp` (or `Time`, `Date`, `TimeBucket`), or the first column
/// when its header is empty or its cells are ISO-8601 times; every other
/// column is a graphed metric, its header the graph's label, read like a
/// `get-metric-data` label (see the module's note). Cells may be quoted
/// (RFC 4180), lines CRLF or LF; an empty cell is a period with no data
/// point and is left out of that series, never read as 0. Rows may come in
/// any order; timestamps are written back as ISO-8601 UTC.
pub fn read_csv(file: &str, text: &str) -> Result<RunRecord, ImportError> {
    let records = csv_records(file, text)?;
    let Some((header_line, header)) = records.first() else {
        return Err(ImportError::Empty { file: file.into(), format: "CloudWatch CSV".into(), hint: "the file has no header row".into() });
    };
    let header_line = *header_line;
    let rows = &records[1..];
    let first_is_time = header[0].is_empty() || rows.first().and_then(|(_, r)| r.first()).is_some_and(|c| csv_time(c).is_some());
    let time_col = header.iter().position(|h| is_time_header(h)).or(first_is_time.then_some(0)).ok_or_else(|| {
        line_err(
            file,
            header_line,
            "header",
            format!("no timestamp column in {header:?} — head the time column Timestamp, or put ISO-8601 times (2024-03-01T10:00:00Z) in the first column"),
        )
    })?;
    // An unlabelled column with no values (a trailing comma) is no metric.
    let metric_cols: Vec<usize> = (0..header.len())
        .filter(|&i| i != time_col && !(header[i].is_empty() && rows.iter().all(|(_, r)| r.get(i).is_none_or(|c| c.is_empty()))))
        .collect();
    if let Some(&i) = metric_cols.iter().find(|&&i| header[i].is_empty()) {
        return Err(line_err(file, header_line, &column(header, i), "no label over a column of values — head it with the metric, e.g. vol-0abc VolumeReadOps"));
    }
    if metric_cols.is_empty() {
        return Err(line_err(file, header_line, "header", format!("no metric column beside the time column in {header:?}")));
    }
    let mut times: Vec<(f64, usize)> = Vec::with_capacity(rows.len());
    let mut points: Vec<Vec<(f64, f64)>> = vec![Vec::new(); metric_cols.len()];
    let mut last_good: Option<(usize, &str)> = None;
    for (line, cells) in rows {
        if cells.len() != header.len() {
            let (i, what) = if cells.len() < header.len() { (cells.len(), "missing") } else { (header.len(), "one cell too many") };
            return Err(line_err(
                file,
                *line,
                &column(header, i),
                format!("{what}: {} cells for the header's {} columns (line {header_line}) — give each row one cell a column, empty where a period has no data point", cells.len(), header.len()),
            ));
        }
        let cell = cells[time_col].as_str();
        let t = csv_time(cell).ok_or_else(|| {
            let like = last_good.map_or("2024-03-01T10:00:00Z".to_string(), |(l, t)| format!("line {l}'s {t}"));
            line_err(file, *line, &column(header, time_col), format!("'{cell}' is not an ISO-8601 time — nearest valid value {like}"))
        })?;
        if let Some(&(_, l)) = times.iter().find(|(e, _)| *e == t) {
            return Err(line_err(file, *line, &column(header, time_col), format!("'{cell}' repeats line {l}'s time — one row a period")));
        }
        times.push((t, *line));
        last_good = Some((*line, cell));
        for (k, &i) in metric_cols.iter().enumerate() {
            let c = cells[i].as_str();
            if c.is_empty() {
                continue;
            }
            let v = c.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| {
                // "903000 Count": a number and a unit word.
                let hint = c
                    .split_once(char::is_whitespace)
                    .and_then(|(n, _)| n.parse::<f64>().ok())
                    .map_or(String::from(" — give a decimal number, or leave the cell empty where there is no data point"), |n| format!(" — nearest valid value {n}"));
                line_err(file, *line, &column(header, i), format!("'{}' is not a number{hint}", one_line(c)))
            })?;
            points[k].push((t, v));
        }
    }
    let mut sorted: Vec<f64> = times.iter().map(|(t, _)| *t).collect();
    sorted.sort_by(f64::total_cmp);
    let period_s = sorted.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min);
    let mut rec = record("CloudWatch", "", "CloudWatch", source("CloudWatch", file));
    if !period_s.is_finite() && !rows.is_empty() {
        rec.warnings.push(format!("{file}: one row only — its period is taken as 60 s"));
    }
    for (k, &i) in metric_cols.iter().enumerate() {
        let pts = &mut points[k];
        if pts.is_empty() {
            rec.warnings.push(format!("{file}: {}: no values — left out", column(header, i)));
            continue;
        }
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let stamps = pts.iter().map(|p| Stamp::Utc(crate::db::utc_text(p.0))).collect();
        rec.series.push(series(&header[i], "", period_s, stamps, pts.iter().map(|p| p.1).collect()));
    }
    if rec.series.is_empty() {
        return Err(ImportError::Empty { file: file.into(), format: "CloudWatch CSV".into(), hint: "no row under the header has a value".into() });
    }
    Ok(rec)
}

/// Whether `text` is a CloudWatch console CSV: its first line is a header
/// of two cells or more with a CloudWatch metric name storlab knows
/// (`VolumeReadOps`, `BurstBalance`, …) among them, or a time column whose
/// first cell is an ISO-8601 time beside a metric-like label (`…
/// NetworkPacketsIn`).
pub fn looks_like_csv(text: &str) -> bool {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(first) = lines.next() else { return false };
    if !first.contains(',') {
        return false;
    }
    let cells: Vec<String> = first.split(',').map(|c| c.trim().trim_matches('"').trim().to_string()).collect();
    let metric_word = |c: &str| c.split_whitespace().last().is_some_and(|w| w.starts_with(|ch: char| ch.is_ascii_uppercase()) && w.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '%'));
    if cells.iter().any(|c| metric_word(c) && unit_of(c.split_whitespace().last().unwrap_or("")) != "None") {
        return true;
    }
    let time_col = cells.iter().position(|c| is_time_header(c)).unwrap_or(0);
    let timed = lines.next().and_then(|l| l.split(',').nth(time_col)).is_some_and(|c| csv_time(c.trim().trim_matches('"')).is_some());
    timed && cells.iter().enumerate().any(|(i, c)| i != time_col && metric_word(c))
}

/// A cell as a message shows it: on one line, a quoted cell's line breaks
/// and other control characters escaped (`\n`).
fn one_line(cell: &str) -> String {
    cell.chars().flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] }).collect()
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

    /// tests/data/import/cloudwatch-console.csv: one gp volume's four
    /// Volume* Sums over seven 300 s periods from 2024-03-01 10:00 UTC, the
    /// 10:15 VolumeWriteOps cell empty.
    const CONSOLE: &str = include_str!("../../../../tests/data/import/cloudwatch-console.csv");

    #[test]
    fn console_csv_gives_one_series_a_column() {
        assert!(looks_like_csv(CONSOLE));
        assert_eq!(super::super::detect("cw.csv", CONSOLE).unwrap().0, super::super::Format::CloudWatchCsv);
        let r = read_csv("cw.csv", CONSOLE).unwrap();
        let names: Vec<(&str, &str, &str, &str)> = r.series.iter().map(|s| (s.config.as_str(), s.resource.as_str(), s.metric.as_str(), s.unit.as_str())).collect();
        let vol = "vol-0a1b2c3d4e5f67890";
        assert_eq!(names, [
            ("CloudWatch", vol, "VolumeReadOps", "Count"),
            ("CloudWatch", vol, "VolumeWriteOps", "Count"),
            ("CloudWatch", vol, "VolumeReadBytes", "Bytes"),
            ("CloudWatch", vol, "VolumeWriteBytes", "Bytes"),
        ]);
        // Rows 5 minutes apart.
        assert!(r.series.iter().all(|s| s.period_s == 300.0));
        let reads = &r.series[0];
        assert_eq!(reads.values, [420000.0, 450000.0, 510000.0, 480000.0, 600000.0, 540000.0, 390000.0]);
        assert_eq!(reads.timestamps[0], Stamp::Utc("2024-03-01T10:00:00Z".into()));
        assert_eq!(reads.timestamps[6], Stamp::Utc("2024-03-01T10:30:00Z".into()));
        // The empty 10:15 cell is no point, not a zero: six writes, 10:10 then 10:20.
        let writes = &r.series[1];
        assert_eq!(writes.values, [180000.0, 195000.0, 240000.0, 270000.0, 255000.0, 150000.0]);
        assert_eq!(writes.timestamps[2..4], [Stamp::Utc("2024-03-01T10:10:00Z".into()), Stamp::Utc("2024-03-01T10:20:00Z".into())]);
        // 10:15's VolumeWriteBytes is there: 225,000 × 32,768.
        assert_eq!(r.series[3].values[3], 7_372_800_000.0);
        assert!(r.warnings.is_empty() && !r.interrupted);
    }

    #[test]
    fn rows_in_any_order_quoted_cells_and_zones() {
        // Newest first, LF, an empty time header, a namespace label, a
        // quoted label holding a comma, a +01:00 time (09:05 UTC), a
        // blank-separated time with no zone (UTC).
        let text = ",\"AWS/EBS VolumeReadOps VolumeId vol-0abc\",\"gp2 vol-1,vol-2 BurstBalance\"\n\
                    2024-03-01 09:10:00,30,\n\
                    2024-03-01T10:05:00+01:00,20,99.5\n\
                    2024-03-01T09:00:00Z,10,100\n";
        assert!(looks_like_csv(text));
        let r = read_csv("cw.csv", text).unwrap();
        let s = &r.series[0];
        assert_eq!((s.config.as_str(), s.resource.as_str(), s.metric.as_str(), s.period_s), ("CloudWatch", "vol-0abc", "VolumeReadOps", 300.0));
        assert_eq!(s.values, [10.0, 20.0, 30.0]);
        assert_eq!(s.timestamps[1], Stamp::Utc("2024-03-01T09:05:00Z".into()));
        let b = &r.series[1];
        assert_eq!((b.config.as_str(), b.resource.as_str(), b.metric.as_str(), b.unit.as_str()), ("gp2", "vol-1,vol-2", "BurstBalance", "Percent"));
        assert_eq!(b.values, [100.0, 99.5]);
    }

    #[test]
    fn csv_errors_name_the_line_and_the_column() {
        let e = |text: &str| read_csv("cw.csv", text).unwrap_err().to_string();
        let col3 = "column 3 'vol-0a1b2c3d4e5f67890 VolumeWriteOps'";
        assert_eq!(
            e(&CONSOLE.replacen("510000,240000,", "510000,24o000,", 1)),
            format!("cw.csv: line 4: {col3}: '24o000' is not a number — give a decimal number, or leave the cell empty where there is no data point")
        );
        assert_eq!(e(&CONSOLE.replacen(",240000,", ",240000 Count,", 1)), format!("cw.csv: line 4: {col3}: '240000 Count' is not a number — nearest valid value 240000"));
        assert_eq!(
            e(&CONSOLE.replacen("2024-03-01T10:15:00.000Z", "2024-03-01T10:75:00.000Z", 1)),
            "cw.csv: line 5: column 1 'Timestamp': '2024-03-01T10:75:00.000Z' is not an ISO-8601 time — nearest valid value line 4's 2024-03-01T10:10:00.000Z"
        );
        assert_eq!(
            e(&CONSOLE.replacen(",5898240000\r\n", "\r\n", 1)),
            "cw.csv: line 2: column 5 'vol-0a1b2c3d4e5f67890 VolumeWriteBytes': missing: 4 cells for the header's 5 columns (line 1) — give each row one cell a column, empty where a period has no data point"
        );
        assert_eq!(
            e(&CONSOLE.replacen("10:20:00.000Z", "10:05:00.000Z", 1)),
            "cw.csv: line 6: column 1 'Timestamp': '2024-03-01T10:05:00.000Z' repeats line 3's time — one row a period"
        );
        assert_eq!(
            e("\"vol-1 VolumeReadOps\",\"vol-1 VolumeWriteOps\"\r\n5,6\r\n"),
            "cw.csv: line 1: header: no timestamp column in [\"vol-1 VolumeReadOps\", \"vol-1 VolumeWriteOps\"] — head the time column Timestamp, or put ISO-8601 times (2024-03-01T10:00:00Z) in the first column"
        );
        assert_eq!(e("Timestamp,\"vol-1 VolumeReadOps\r\n"), "cw.csv: line 1: column 2: a quoted cell is not closed — a cell that opens with \" ends with \"");
        // A header over no rows has nothing to import.
        assert!(e("Timestamp,vol-1 VolumeReadOps\r\n").contains("no row under the header has a value"));
    }

    #[test]
    fn csv_times_are_checked_field_by_field() {
        assert_eq!(csv_time("1970-01-02T00:00:00.000Z"), Some(86400.0));
        assert_eq!(csv_time("1970-01-02 01:30 +0130"), Some(86400.0));
        assert_eq!(csv_time("1970-01-02 00:00:00 UTC"), Some(86400.0));
        assert_eq!(csv_time("2024-02-29T00:00:00Z"), epoch(&json!("2024-02-29T00:00:00Z")));
        for bad in ["2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-03-01T24:00:00Z", "2024-03-01", "1709287200", "2024-03-01T10:00:00+5:30"] {
            assert_eq!(csv_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn other_csv_is_not_taken_for_cloudwatch() {
        assert!(!looks_like_csv("name,age\r\nbob,3\r\n"));
        // A time header over something else than times.
        assert!(!looks_like_csv("Date,Amount\r\n2024-01-01,5\r\n"));
        // A metric storlab has no unit for, under a time column of times.
        assert!(looks_like_csv("Time,\"i-0abc NetworkPacketsIn\"\r\n2024-03-01T10:00:00Z,3\r\n"));
        // A known metric name is enough: its errors then say what is wrong.
        assert!(looks_like_csv("\"vol-1 VolumeReadOps\",\"vol-1 VolumeWriteOps\"\r\n5,6\r\n"));
    }
}
