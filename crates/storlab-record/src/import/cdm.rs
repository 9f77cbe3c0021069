//! CrystalDiskMark text exports (File > Save text, or Copy), versions 5 to 9.
//!
//! Line formats, from CrystalDiskMark's DiskMarkDlg.cpp:
//! - 8 and 9 (`GetResultString`): `  SEQ    1MiB (Q=  8, T= 1):  %9.3f MB/s [%9.1f IOPS] <%9.2f us>`,
//!   `  RND    4KiB (Q= 32, T=16): …`, under `[Read]`, `[Write]` and `[Mix] Read 70%/Write 30%`;
//! - 7: `Sequential 1MiB (Q=  8, T= 1): …` and `    Random 4KiB (Q= 32, T=16): …`;
//! - 5 and 6: `   Sequential Read (Q= 32,T= 1) :   558.542 MB/s` (128 KiB blocks, no
//!   IOPS or latency) and `  Random Read 4KiB (Q=  8,T= 8) :   393.900 MB/s [  96167.0 IOPS]`;
//!   CrystalDiskMark 5's `Sequential Read (T= 1)` is 1 MiB at queue depth 1.
//!
//! The footer (`Profile:`, `Test:`, `Mode:`, `Time:`, `Date:`, `OS:`; `Test :` with a
//! blank before the colon in 5 and 6) goes into `host_info`. Exports are CRLF and
//! may carry trailing blanks. CrystalDiskMark's MB/s is 10^6 B/s and its IOPS is
//! derived from it (MB/s × 10^6 / block); its latency is DiskSpd's mean, µs.
//! A test that did not run (the run was stopped) prints `0.000 MB/s`: such a
//! line is left out with a warning and the record is marked interrupted.

use super::{parse_size, record, source, ImportError};
use crate::{IoColumns, JobResult, LatencySummary, Object, RunRecord};
use regex::Regex;
use std::sync::OnceLock;

fn line_7_8() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(
            r"^\s*(SEQ|RND|Sequential|Random)\s*(\d+)\s*(KiB|MiB|KB|MB)\s*\(\s*Q\s*=\s*(\d+)\s*,\s*T\s*=\s*(\d+)\s*\)\s*:(.*)$",
        )
        .unwrap()
    })
}

fn line_5_6() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"^\s*(Sequential|Random)\s+(Read|Write)(?:\s+(\d+)\s*(KiB|MiB|KB|MB))?\s*\(\s*(?:Q\s*=\s*(\d+)\s*,\s*)?T\s*=\s*(\d+)\s*\)\s*:(.*)$").unwrap()
    })
}

fn line_compact() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"^\s*(SEQ|RND)(\d+)(K|M)\s+Q\s*(\d+)\s*T\s*(\d+)\s*:(.*)$").unwrap())
}

fn footer() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"^\s*(Profile|Test|Mode|Time|Date|OS)\s*:\s?(.*)$").unwrap())
}

/// The figures after the colon: `390.475 MB/s [    372.4 IOPS] < 21482.29 us>`,
/// any of them missing.
fn values() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"^\s*(?:([-\d.,]+)\s*([A-Za-z/]+))?\s*(?:\[\s*([-\d.,]+)\s*IOPS\s*\])?\s*(?:<\s*([-\d.,]+)\s*([A-Za-zµ]+)\s*>)?\s*$").unwrap()
    })
}

/// Whether `text` has CrystalDiskMark result lines even without its header
/// (a pasted excerpt).
pub fn looks_like(text: &str) -> bool {
    text.lines().any(|l| l.trim() == "[Read]") && text.lines().any(|l| line_7_8().is_match(l) || line_5_6().is_match(l) || line_compact().is_match(l))
}

fn num(file: &str, line: usize, field: &str, s: &str) -> Result<f64, ImportError> {
    s.replace(',', "").parse::<f64>().map_err(|_| ImportError::Line {
        file: file.into(),
        line,
        field: field.into(),
        message: format!("'{s}' is not a number"),
    })
}

fn block_label(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes & ((1 << 20) - 1) == 0 {
        format!("{}M", bytes >> 20)
    } else {
        format!("{}K", bytes >> 10)
    }
}

struct Row {
    line: usize,
    seq: bool,
    block: u64,
    q: u64,
    t: u64,
    /// `read`, `write`, or the mix's read percentage.
    dir: Dir,
    rest: String,
}

#[derive(Clone, Copy, PartialEq)]
enum Dir {
    Read,
    Write,
    Mix(u8),
}

/// Reads a CrystalDiskMark text export.
pub fn read(file: &str, text: &str) -> Result<RunRecord, ImportError> {
    let mut version = String::new();
    let mut edition = String::new();
    let mut section: Option<Dir> = None;
    let mut rows: Vec<Row> = Vec::new();
    let mut info = source("CrystalDiskMark", file);
    let mut last_key = String::new();
    for (i, raw) in text.split('\n').enumerate() {
        let n = i + 1;
        let l = raw.trim_end_matches(['\r', ' ', '\t']);
        let t = l.trim();
        if t.is_empty() || t.starts_with("---") || t.starts_with('*') {
            continue;
        }
        if let Some(pos) = t.find("CrystalDiskMark ") {
            if version.is_empty() && (t.contains("hiyohiyo") || t.starts_with("CrystalDiskMark")) {
                let mut it = t[pos + "CrystalDiskMark ".len()..].split_whitespace();
                version = it.next().unwrap_or("").to_string();
                edition = it.take_while(|w| !w.starts_with("(C)")).collect::<Vec<_>>().join(" ");
                continue;
            }
        }
        if t.starts_with("Crystal Dew World") {
            continue;
        }
        if t.starts_with('[') {
            let head = t.split(']').next().unwrap_or("").trim_start_matches('[');
            match head {
                "Read" => section = Some(Dir::Read),
                "Write" => section = Some(Dir::Write),
                "Mix" => {
                    // `[Mix] Read 70%/Write 30%`
                    let pct = t.split("Read").nth(1).and_then(|s| s.trim().split('%').next()).and_then(|s| s.trim().parse::<u8>().ok());
                    let pct = pct.ok_or_else(|| ImportError::Line {
                        file: file.into(),
                        line: n,
                        field: "[Mix]".into(),
                        message: format!("'{t}' has no read share — expected e.g. '[Mix] Read 70%/Write 30%'"),
                    })?;
                    info.insert("mix".into(), t.trim_start_matches("[Mix]").trim().into());
                    section = Some(Dir::Mix(pct));
                }
                _ => {}
            }
            continue;
        }
        if let Some(r) = result_line(file, n, l, section)? {
            rows.push(r);
            continue;
        }
        if let Some(c) = footer().captures(l) {
            last_key = footer_line(&c[1], &c[2], &mut info);
            continue;
        }
        if last_key == "os" {
            // Free text the user typed under the footer.
            info.insert("comment".into(), t.into());
        }
    }
    if rows.is_empty() {
        return Err(ImportError::Empty {
            file: file.into(),
            format: "CrystalDiskMark".into(),
            hint: "expected lines such as '  SEQ    1MiB (Q=  8, T= 1):  390.475 MB/s [ 372.4 IOPS] < 21482.29 us>' under [Read] and [Write]".into(),
        });
    }
    let tool = if version.is_empty() { "CrystalDiskMark".to_string() } else { format!("CrystalDiskMark {version}") };
    if !edition.is_empty() {
        info.insert("edition".into(), edition.into());
    }
    let profile = info.get("profile").and_then(|v| v.as_str()).unwrap_or("Default").to_string();
    let runtime_s = info.get("measure_s").and_then(|v| v.as_f64()).unwrap_or(5.0);
    let mut rec = record(&tool, &version, format!("CrystalDiskMark {profile}"), info);
    let config = "CrystalDiskMark".to_string();
    let mut no_latency: Vec<String> = Vec::new();
    for r in rows {
        let (bw, iops, lat) = figures(file, &r)?;
        let kind = if r.seq { "SEQ" } else { "RND" };
        let dir = match r.dir {
            Dir::Read => "read".to_string(),
            Dir::Write => "write".to_string(),
            Dir::Mix(p) => format!("mix{p}"),
        };
        let job = format!("{kind}{}-Q{}T{}-{dir}", block_label(r.block), r.q, r.t);
        let (Some(bw), iops) = (bw, iops) else {
            rec.warnings.push(format!("{file}: line {}: {job} has no result (the run was stopped before this test): left out", r.line));
            rec.interrupted = true;
            continue;
        };
        for (field, v) in [("MB/s", Some(bw)), ("IOPS", iops), ("latency", lat)] {
            if let Some(v) = v.filter(|v| *v < 0.0) {
                return Err(ImportError::Line { file: file.into(), line: r.line, field: format!("{job} {field}"), message: format!("{v} — a rate or a latency is at least 0; nearest valid value 0") });
            }
        }
        if bw == 0.0 {
            rec.warnings.push(format!("{file}: line {}: {job} reads 0.000 MB/s (the run was stopped before this test): left out", r.line));
            rec.interrupted = true;
            continue;
        }
        let iops = iops.unwrap_or(bw / r.block as f64);
        let (read_iops, write_iops) = match r.dir {
            Dir::Read => (iops, 0.0),
            Dir::Write => (0.0, iops),
            Dir::Mix(p) => (iops * p as f64 / 100.0, iops * (100 - p) as f64 / 100.0),
        };
        if lat.is_none() {
            no_latency.push(job.clone());
        }
        rec.results.push(JobResult {
            config: config.clone(),
            job,
            pool: "path".into(),
            binding: "measured by CrystalDiskMark".into(),
            io: Some(IoColumns {
                iops,
                bw_bytes_s: bw,
                read_iops,
                write_iops,
                latency: LatencySummary { lat_mean_us: lat.unwrap_or(0.0), ..LatencySummary::default() },
                outstanding: r.q * r.t,
                runtime_s,
            }),
            extra: None,
            phases: Vec::new(),
        });
    }
    if !no_latency.is_empty() {
        rec.warnings.push(format!("{file}: {} carry no latency (CrystalDiskMark 5 and 6 exports print none): their latency columns are 0", no_latency.join(", ")));
    }
    if rec.results.is_empty() {
        return Err(ImportError::Empty {
            file: file.into(),
            format: "CrystalDiskMark".into(),
            hint: "every test reads 0.000 MB/s: the run was stopped before its first test finished".into(),
        });
    }
    Ok(rec)
}

/// A result line in any of CrystalDiskMark's layouts (8/7, the compact
/// one, 5/6), under the heading `section`; None for another line.
fn result_line(file: &str, n: usize, l: &str, section: Option<Dir>) -> Result<Option<Row>, ImportError> {
    if let Some(c) = line_7_8().captures(l) {
        let dir = under_heading(file, n, section)?;
        let size: u64 = c[2].parse().unwrap_or(0);
        let block = size * if c[3].starts_with('M') { 1 << 20 } else { 1 << 10 };
        return Ok(Some(Row {
            line: n,
            seq: c[1].starts_with('S'),
            block,
            q: c[4].parse().unwrap_or(1),
            t: c[5].parse().unwrap_or(1),
            dir,
            rest: c[6].to_string(),
        }));
    }
    if let Some(c) = line_compact().captures(l) {
        let dir = under_heading(file, n, section)?;
        let size: u64 = c[2].parse().unwrap_or(0);
        return Ok(Some(Row {
            line: n,
            seq: &c[1] == "SEQ",
            block: size * if &c[3] == "M" { 1 << 20 } else { 1 << 10 },
            q: c[4].parse().unwrap_or(1),
            t: c[5].parse().unwrap_or(1),
            dir,
            rest: c[6].to_string(),
        }));
    }
    if let Some(c) = line_5_6().captures(l) {
        let seq = &c[1] == "Sequential";
        let block = match (c.get(3), c.get(4)) {
            (Some(s), Some(u)) => s.as_str().parse::<u64>().unwrap_or(0) * if u.as_str().starts_with('M') { 1 << 20 } else { 1 << 10 },
            // CrystalDiskMark 5/6: sequential with a queue is 128 KiB
            // (DiskSpd -b128k), without one (5's `(T= 1)`) 1 MiB.
            _ if c.get(5).is_some() => 128 << 10,
            _ => 1 << 20,
        };
        return Ok(Some(Row {
            line: n,
            seq,
            block,
            q: c.get(5).map(|m| m.as_str().parse().unwrap_or(1)).unwrap_or(1),
            t: c[6].parse().unwrap_or(1),
            dir: if &c[2] == "Read" { Dir::Read } else { Dir::Write },
            rest: c[7].to_string(),
        }));
    }
    Ok(None)
}

/// A footer line `Key : value` into the record's source info (with the
/// test size, count and measure time parsed out); its key, lower case.
fn footer_line(key: &str, val: &str, info: &mut Object) -> String {
    let key = key.to_ascii_lowercase();
    let val = val.trim().to_string();
    match key.as_str() {
        "test" => {
            if let Some(sz) = val.split(['(', '[']).next().and_then(parse_size) {
                info.insert("test_size_bytes".into(), sz.into());
            }
            if let Some(x) = val.split("(x").nth(1).and_then(|s| s.split(')').next()).and_then(|s| s.trim().parse::<u64>().ok()) {
                info.insert("test_count".into(), x.into());
            }
        }
        "time" => {
            if let Some(m) = val.split("Measure").nth(1).and_then(|s| s.split_whitespace().next()).and_then(|s| s.parse::<f64>().ok()) {
                info.insert("measure_s".into(), m.into());
            }
        }
        _ => {}
    }
    info.insert(key.clone(), val.into());
    key
}

/// The heading a result line stands under; none is an error naming the line.
fn under_heading(file: &str, line: usize, section: Option<Dir>) -> Result<Dir, ImportError> {
    section.ok_or_else(|| ImportError::Line {
        file: file.into(),
        line,
        field: "section".into(),
        message: "a result line before any [Read], [Write] or [Mix] heading".into(),
    })
}

/// Bandwidth (B/s), IOPS and mean latency (µs) of a line, each where given.
type Figures = (Option<f64>, Option<f64>, Option<f64>);

/// A line's [`Figures`], converting the units CrystalDiskMark's views use
/// (MB/s, GB/s, KB/s; us, ms).
fn figures(file: &str, r: &Row) -> Result<Figures, ImportError> {
    let c = values().captures(&r.rest).ok_or_else(|| ImportError::Line {
        file: file.into(),
        line: r.line,
        field: "result".into(),
        message: format!("'{}' is not 'N MB/s [N IOPS] <N us>'", r.rest.trim()),
    })?;
    let scaled = |v: Option<regex::Match>, u: Option<regex::Match>, field: &str, units: &[(&[&str], f64)], expected: &str| -> Result<Option<f64>, ImportError> {
        let (Some(v), Some(u)) = (v, u) else { return Ok(None) };
        let mul = units.iter().find(|(names, _)| names.contains(&u.as_str())).map(|(_, m)| *m).ok_or_else(|| ImportError::Line {
            file: file.into(),
            line: r.line,
            field: field.into(),
            message: format!("unknown unit '{}' — expected {expected}", u.as_str()),
        })?;
        Ok(Some(num(file, r.line, field, v.as_str())? * mul))
    };
    let bw = scaled(c.get(1), c.get(2), "bandwidth", &[(&["MB/s"], 1e6), (&["GB/s"], 1e9), (&["KB/s"], 1e3), (&["B/s"], 1.0)], "MB/s (or GB/s, KB/s)")?;
    let iops = c.get(3).map(|v| num(file, r.line, "IOPS", v.as_str())).transpose()?;
    let lat = scaled(c.get(4), c.get(5), "latency", &[(&["us", "µs"], 1.0), (&["ms"], 1e3), (&["s"], 1e6)], "us (or ms)")?;
    Ok((bw, iops, lat))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(r: &JobResult) -> &IoColumns {
        r.io.as_ref().unwrap()
    }

    const CDM7: &str = "------------------------------------------------------------------------------\r\n\
CrystalDiskMark 7.0.0 x64 (C) 2007-2019 hiyohiyo\r\n\
                                  Crystal Dew World: https://crystalmark.info/\r\n\
------------------------------------------------------------------------------\r\n\
* MB/s = 1,000,000 bytes/s [SATA/600 = 600,000,000 bytes/s]\r\n\
* KB = 1000 bytes, KiB = 1024 bytes\r\n\
\r\n\
[Read]\r\n\
Sequential 1MiB (Q=  8, T= 1):   390.475 MB/s [    372.4 IOPS] < 21482.29 us>\r\n\
    Random 4KiB (Q= 32, T=16):     0.851 MB/s [    207.8 IOPS] <635043.04 us>  \r\n\
\r\n\
[Write]\r\n\
Sequential 1MiB (Q=  8, T= 1):    88.490 MB/s [     84.4 IOPS] < 93668.80 us>\r\n\
\r\n\
Profile: Default\r\n\
   Test: 1 GiB (x5) [Interval: 5 sec] <DefaultAffinity=DISABLED>\r\n\
   Date: 2020/01/03 11:44:51\r\n\
     OS: Windows 10  [10.0 Build 18363] (x64)\r\n";

    /// The issue's line: 390.475 MB/s = 390.475e6 B/s, 372.4 IOPS, 21482.29 µs.
    #[test]
    fn cdm7_crlf_lines_and_footer() {
        let r = read("cdm7.txt", CDM7).unwrap();
        assert_eq!(r.tool.as_ref().unwrap().name, "CrystalDiskMark 7.0.0");
        let jobs: Vec<&str> = r.results.iter().map(|x| x.job.as_str()).collect();
        assert_eq!(jobs, ["SEQ1M-Q8T1-read", "RND4K-Q32T16-read", "SEQ1M-Q8T1-write"]);
        let a = io(&r.results[0]);
        assert_eq!((a.bw_bytes_s, a.iops, a.latency.lat_mean_us, a.outstanding), (390.475e6, 372.4, 21482.29, 8));
        assert_eq!((a.read_iops, a.write_iops), (372.4, 0.0));
        // Q32 × T16 = 512 outstanding; 635043.04 µs latency kept as µs.
        let b = io(&r.results[1]);
        assert_eq!((b.outstanding, b.latency.lat_mean_us), (512, 635043.04));
        assert_eq!(io(&r.results[2]).write_iops, 84.4);
        let h = r.host_info.as_ref().unwrap();
        assert_eq!(h["profile"], "Default");
        assert_eq!(h["date"], "2020/01/03 11:44:51");
        assert_eq!(h["os"], "Windows 10  [10.0 Build 18363] (x64)");
        assert_eq!(h["test_size_bytes"], 1u64 << 30);
        assert_eq!(h["test_count"], 5);
        assert_eq!(r.config_of_first(), "CrystalDiskMark");
        assert!(!r.interrupted);
    }

    impl RunRecord {
        fn config_of_first(&self) -> &str {
            &self.results[0].config
        }
    }

    #[test]
    fn cdm8_mix_section_splits_reads_and_writes() {
        let text = "[Read]\n  SEQ    1MiB (Q=  8, T= 1):  7427.749 MB/s [   7083.7 IOPS] <   987.81 us>\n\
[Mix] Read 70%/Write 30%\n  RND    4KiB (Q=  1, T= 1):    70.461 MB/s [  17202.4 IOPS] <    58.03 us>\n\
Profile: Peak\n   Time: Measure 5 sec / Interval 5 sec \n";
        let r = read("x.txt", text).unwrap();
        assert_eq!(r.results[1].job, "RND4K-Q1T1-mix70");
        let m = io(&r.results[1]);
        // 17202.4 × 0.7 = 12041.68 reads, × 0.3 = 5160.72 writes.
        assert!((m.read_iops - 12041.68).abs() < 1e-6 && (m.write_iops - 5160.72).abs() < 1e-6);
        assert_eq!(r.workload, "CrystalDiskMark Peak");
        assert_eq!(m.runtime_s, 5.0);
    }

    #[test]
    fn cdm6_lines_derive_iops_for_sequential() {
        let text = "CrystalDiskMark 6.0.2 x64 (C) 2007-2018 hiyohiyo\n\
   Sequential Read (Q= 32,T= 1) :   471.231 MB/s\n\
  Random Read 4KiB (Q=  8,T= 8) :   393.900 MB/s [  96167.0 IOPS]\n\
  Test : 1024 MiB [C: 26.4% (122.8/465.2 GiB)] (x5)  [Interval=5 sec]\n";
        let r = read("c6.txt", text).unwrap();
        assert_eq!(r.results[0].job, "SEQ128K-Q32T1-read");
        // 471.231e6 B/s over 131072-byte blocks = 3595.2 IOPS.
        assert!((io(&r.results[0]).iops - 471.231e6 / 131072.0).abs() < 1e-9);
        assert_eq!(r.results[1].job, "RND4K-Q8T8-read");
        assert_eq!(io(&r.results[1]).outstanding, 64);
        assert_eq!(r.host_info.as_ref().unwrap()["test_size_bytes"], 1u64 << 30);
        assert!(r.warnings.iter().any(|w| w.contains("no latency")));
    }

    #[test]
    fn compact_lines_are_read() {
        let r = read("c.txt", "[Read]\n  RND4K  Q1T1 :     3.224 MB/s [    787.1 IOPS] <  1017.24 us>\n").unwrap();
        assert_eq!(r.results[0].job, "RND4K-Q1T1-read");
        assert_eq!(io(&r.results[0]).latency.lat_mean_us, 1017.24);
    }

    #[test]
    fn stopped_run_leaves_out_zero_lines() {
        let text = "[Read]\n  SEQ    1MiB (Q=  8, T= 1):   512.000 MB/s [    488.3 IOPS] < 16374.01 us>\n\
  SEQ    1MiB (Q=  1, T= 1):     0.000 MB/s [      0.0 IOPS] <     0.00 us>\n  RND    4KiB (Q= 32, T= 1):\n";
        let r = read("s.txt", text).unwrap();
        assert_eq!(r.results.len(), 1);
        assert!(r.interrupted);
        assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
        assert!(r.warnings[0].contains("line 3: SEQ1M-Q1T1-read reads 0.000 MB/s"));
    }

    #[test]
    fn other_units_are_converted_or_refused() {
        let r = read("u.txt", "[Write]\n  SEQ    1MiB (Q=  8, T= 1):  1.250 GB/s [ 1192.1 IOPS] < 6.71 ms>\n").unwrap();
        let a = io(&r.results[0]);
        assert_eq!((a.bw_bytes_s, a.latency.lat_mean_us), (1.25e9, 6710.0));
        let e = read("u.txt", "[Write]\n  SEQ    1MiB (Q=  8, T= 1):  1.250 furlongs [ 1192.1 IOPS]\n").unwrap_err().to_string();
        assert_eq!(e, "u.txt: line 2: bandwidth: unknown unit 'furlongs' — expected MB/s (or GB/s, KB/s)");
    }
}
