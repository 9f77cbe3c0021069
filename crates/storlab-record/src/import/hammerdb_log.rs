//! HammerDB's text logs, v4 to v6: the run log (`hammerdb.log`, or
//! `hammerdb_<guid>.log` with unique log names) and the transaction
//! counter log (`hdbtcount.log`).
//!
//! The run log (HammerDB `src/generic/genvu.tcl`: `Hammerdb Log @ <date>`
//! then the virtual users' output, each line `Vuser N:<text>`) holds one
//! timed run per `TEST RESULT` line, as the monitor virtual user prints it
//! (`modules/tpcccommon-1.0.tm`, `testresult`):
//!
//! - `TEST RESULT : System achieved <nopm> NOPM from <tpm> <db> TPM`, or,
//!   with `<first_result>TPM</first_result>`,
//!   `TEST RESULT : System achieved <tpm> <db> TPM at <nopm> NOPM`;
//!   `<db>` is PostgreSQL, MySQL, MariaDB, SQL Server, Oracle, Db2 or
//!   TimesTen. SQL Server's TPM counts batch requests a minute.
//! - before it, `<n> Active Virtual Users configured` (the workers, the
//!   monitor left out; with event-driven scaling `<v> VU * <c> AC = <s>
//!   Active Sessions configured`, the sessions), `Beginning rampup time of <m> minutes` and
//!   `Timing test period of <m> in minutes`.
//!
//! An autopilot or scripted sequence (`foreach z {1 2 4} { vuset vu $z; … }`)
//! appends one run after another: each becomes one result, a sweep.
//!
//! The transaction counter log (`src/generic/gentccmn.tcl`): `Hammerdb
//! Transaction Counter Log @ <date>`, then `<n> <rdbms> tpm @ <date>` every
//! refresh (10 s by default), which becomes a TPM series.

use super::{record, source, ImportError};
use crate::db::DbJob;
use crate::{JobExtra, JobResult, RunRecord, Series, Stamp};

/// Whether `text` is a HammerDB run log or transaction counter log.
pub fn looks_like(text: &str) -> bool {
    text.contains("TEST RESULT : System achieved") || text.contains("Hammerdb Log @") || text.contains("Hammerdb Transaction Counter Log @")
}

/// The text after a `Vuser N:` prefix (or the line itself, as the CLI
/// prints it without one).
fn body(line: &str) -> &str {
    let t = line.trim();
    if let Some(rest) = t.strip_prefix("Vuser ") {
        if let Some((n, after)) = rest.split_once(':') {
            if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                return after.trim();
            }
        }
    }
    t
}

fn number(file: &str, line: usize, field: &str, s: &str) -> Result<f64, ImportError> {
    s.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| ImportError::Line {
        file: file.into(),
        line,
        field: field.into(),
        message: format!("'{s}' is not a number"),
    })
}

/// (nopm, tpm, database) from the text after `System achieved `.
fn result(file: &str, line: usize, s: &str) -> Result<(f64, f64, String), ImportError> {
    let w: Vec<&str> = s.split_whitespace().collect();
    let bad = || ImportError::Line {
        file: file.into(),
        line,
        field: "TEST RESULT".into(),
        message: format!("'{s}' is neither '<nopm> NOPM from <tpm> <db> TPM' nor '<tpm> <db> TPM at <nopm> NOPM'"),
    };
    if w.len() >= 5 && w[1] == "NOPM" && w[2] == "from" && w.last() == Some(&"TPM") {
        let db = w[4..w.len() - 1].join(" ");
        return Ok((number(file, line, "NOPM", w[0])?, number(file, line, "TPM", w[3])?, db));
    }
    if w.len() >= 5 && w[w.len() - 1] == "NOPM" && w[w.len() - 3] == "at" && w[w.len() - 4] == "TPM" {
        let db = w[1..w.len() - 4].join(" ");
        return Ok((number(file, line, "NOPM", w[w.len() - 2])?, number(file, line, "TPM", w[0])?, db));
    }
    Err(bad())
}

/// `HH:MM:SS` of a Tcl `clock format` date (`Mon Apr 14 13:18:34 BST 2025`),
/// in seconds of the day.
fn time_of_day(date: &str) -> Option<f64> {
    let hms = date.split_whitespace().find(|w| w.len() == 8 && w.as_bytes()[2] == b':' && w.as_bytes()[5] == b':')?;
    let mut it = hms.split(':').map(|x| x.parse::<f64>().ok());
    Some(it.next()?? * 3600.0 + it.next()?? * 60.0 + it.next()??)
}

/// Reads a HammerDB run log or transaction counter log.
pub fn read(file: &str, text: &str) -> Result<RunRecord, ImportError> {
    let mut info = source("HammerDB log", file);
    let mut database = String::new();
    let mut jobs: Vec<DbJob> = Vec::new();
    let mut runs = Vec::new();
    let (mut vus, mut rampup_min, mut duration_min) = (None::<u32>, None::<f64>, None::<f64>);
    let (mut tc_t, mut tc_v, mut tc_db) = (Vec::new(), Vec::new(), String::new());
    let mut last_t = None::<f64>;
    let mut day = 0.0;
    for (i, raw) in text.split('\n').enumerate() {
        let n = i + 1;
        let t = body(raw);
        if let Some(date) = t.strip_prefix("Hammerdb Log @").or_else(|| t.strip_prefix("Hammerdb Transaction Counter Log @")) {
            info.entry("date").or_insert(date.trim().into());
            continue;
        }
        if let Some(rest) = t.strip_prefix("TEST RESULT : System achieved ") {
            let (nopm, tpm, db) = result(file, n, rest)?;
            if database.is_empty() {
                database = db.clone();
            }
            let d = DbJob {
                vus: vus.take().unwrap_or(0),
                repeats: 1,
                nopm: Some(nopm),
                tpm: Some(tpm),
                hammerdb: Some(format!("System achieved {nopm:.0} NOPM from {tpm:.0} {db} TPM")),
                ..DbJob::default()
            };
            // The timed window of each run, as the monitor announced it.
            runs.push(serde_json::json!({ "vus": d.vus, "rampup_min": rampup_min.take(), "duration_min": duration_min.take() }));
            jobs.push(d);
            continue;
        }
        // Event-driven scaling: `5 VU * 10 AC = 50 Active Sessions configured`.
        if let Some(head) = t.strip_suffix(" Active Sessions configured") {
            if let Some((_, sessions)) = head.rsplit_once('=') {
                vus = Some(number(file, n, "Active Sessions", sessions.trim())?.max(0.0) as u32);
            }
            continue;
        }
        if let Some(n_vus) = t.strip_suffix(" Active Virtual Users configured") {
            vus = Some(number(file, n, "Active Virtual Users", n_vus.trim())?.max(0.0) as u32);
            continue;
        }
        if let Some(rest) = t.strip_prefix("Beginning rampup time of ") {
            rampup_min = rest.split_whitespace().next().and_then(|m| m.parse().ok());
            continue;
        }
        if let Some(rest) = t.strip_prefix("Timing test period of ") {
            duration_min = rest.split_whitespace().next().and_then(|m| m.parse().ok());
            continue;
        }
        // `1630290 MSSQLServer tpm @ Mon Apr 14 13:18:44 BST 2025`
        if let Some((head, date)) = t.split_once(" tpm @ ") {
            let mut w = head.split_whitespace();
            let (Some(v), Some(db)) = (w.next(), w.next()) else { continue };
            let v = number(file, n, "tpm", v)?;
            let Some(mut at) = time_of_day(date) else {
                return Err(ImportError::Line { file: file.into(), line: n, field: "tpm @".into(), message: format!("'{}' has no HH:MM:SS time", date.trim()) });
            };
            // A counter log that runs past midnight.
            if let Some(prev) = last_t {
                if at + day < prev {
                    day += 86_400.0;
                }
            }
            at += day;
            last_t = Some(at);
            tc_db = db.to_string();
            tc_t.push(at);
            tc_v.push(v);
        }
    }
    if jobs.is_empty() && tc_v.is_empty() {
        return Err(ImportError::Empty {
            file: file.into(),
            format: "HammerDB log".into(),
            hint: "no 'TEST RESULT : System achieved …' line and no transaction counter line — the run did not finish its timed test".into(),
        });
    }
    if database.is_empty() {
        database = match tc_db.as_str() {
            "MSSQLServer" => "SQL Server".into(),
            other => other.into(),
        };
    }
    info.insert("database".into(), database.clone().into());
    if !runs.is_empty() {
        info.insert("runs".into(), runs.into());
    }
    let config = if database.is_empty() { "HammerDB".to_string() } else { database.clone() };
    let mut rec = record("HammerDB", "", "tpcc", info);
    if database == "SQL Server" {
        rec.warnings.push(format!("{file}: SQL Server's TPM in HammerDB counts batch requests a minute, not transactions; NOPM is the comparable figure"));
    }
    for d in jobs {
        let vus = d.vus;
        rec.results.push(JobResult {
            config: config.clone(),
            job: "tpcc".into(),
            pool: String::new(),
            binding: "measured by HammerDB".into(),
            io: None,
            extra: Some(JobExtra::Db(DbJob { vus, ..d })),
            phases: Vec::new(),
        });
    }
    if !tc_v.is_empty() {
        let t0 = tc_t[0];
        let period_s = if tc_t.len() > 1 { tc_t[1] - tc_t[0] } else { 10.0 };
        rec.series.push(Series {
            config: config.clone(),
            resource: "db".into(),
            metric: "TPM".into(),
            unit: "Count/Minute".into(),
            period_s,
            timestamps: tc_t.iter().map(|t| Stamp::Seconds(t - t0)).collect(),
            values: tc_v,
        });
    }
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_result_orders_and_every_engine() {
        assert_eq!(result("f", 1, "123456 NOPM from 283456 PostgreSQL TPM").unwrap(), (123456.0, 283456.0, "PostgreSQL".into()));
        assert_eq!(result("f", 1, "616230 SQL Server TPM at 264796 NOPM").unwrap(), (264796.0, 616230.0, "SQL Server".into()));
        for db in ["MySQL", "MariaDB", "SQL Server", "Oracle", "Db2", "TimesTen"] {
            assert_eq!(result("f", 1, &format!("10 NOPM from 23 {db} TPM")).unwrap().2, db);
        }
        let e = result("f", 7, "lots of NOPM").unwrap_err().to_string();
        assert!(e.starts_with("f: line 7: TEST RESULT:"), "{e}");
    }

    fn sample(name: &str) -> RunRecord {
        let path = format!("{}/../../tests/data/import/{name}", env!("CARGO_MANIFEST_DIR"));
        super::super::import(name, &std::fs::read(&path).unwrap()).unwrap()
    }

    fn db(r: &JobResult) -> &DbJob {
        match &r.extra {
            Some(JobExtra::Db(d)) => d,
            other => panic!("{other:?}"),
        }
    }

    // HammerDB's documented CLI sequence `foreach z { 1 2 4 }` on SQL Server:
    // three runs, each "N Active Virtual Users configured" then its result.
    #[test]
    fn a_scripted_sequence_is_a_sweep() {
        let r = sample("hammerdb-sqlserver-sequence.log");
        let got: Vec<(u32, Option<f64>, Option<f64>)> = r.results.iter().map(|x| db(x)).map(|d| (d.vus, d.nopm, d.tpm)).collect();
        assert_eq!(got, [(1, Some(121771.0), Some(283024.0)), (2, Some(177765.0), Some(413812.0)), (4, Some(198787.0), Some(462298.0))]);
        assert_eq!(r.results[0].config, "SQL Server");
        assert_eq!(r.host_info.as_ref().unwrap()["runs"][2]["duration_min"], 1.0);
        assert!(r.warnings.iter().any(|w| w.contains("batch requests")), "{:?}", r.warnings);
    }

    // HammerDB's documented counter log: a line every 10 s.
    #[test]
    fn the_transaction_counter_log_is_a_tpm_series() {
        let r = sample("hdbtcount.log");
        let s = &r.series[0];
        assert_eq!((s.metric.as_str(), s.period_s, s.values.len()), ("TPM", 10.0, 11));
        assert_eq!((s.values[1], s.values[10]), (1630290.0, 1713126.0));
        assert!(r.results.is_empty());
    }

    #[test]
    fn the_tpm_first_order_and_async_sessions() {
        let text = "Hammerdb Log @ Tue Jan 16 09:00:00 GMT 2024\n\
Vuser 1:Beginning rampup time of 2 minutes\n\
Vuser 1:Timing test period of 5 in minutes\n\
Vuser 1:5 VU * 10 AC = 50 Active Sessions configured\n\
Vuser 1:TEST RESULT : System achieved 108955 MySQL TPM at 46829 NOPM\n";
        let r = read("hammerdb.log", text).unwrap();
        let d = db(&r.results[0]);
        assert_eq!((d.vus, d.nopm, d.tpm), (50, Some(46829.0), Some(108955.0)));
        assert_eq!(r.host_info.as_ref().unwrap()["runs"][0]["rampup_min"], 2.0);
        let e = read("hammerdb.log", "Hammerdb Log @ x\nVuser 1:RUNNING\n").unwrap_err().to_string();
        assert!(e.contains("no 'TEST RESULT"), "{e}");
    }

    #[test]
    fn the_counter_log_crosses_midnight() {
        let text = "Hammerdb Transaction Counter Log @ Mon Apr 14 23:59:41 BST 2025\n\
+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+\n\
0 PostgreSQL tpm @ Mon Apr 14 23:59:44 BST 2025\n\
1000 PostgreSQL tpm @ Mon Apr 14 23:59:54 BST 2025\n\
1200 PostgreSQL tpm @ Tue Apr 15 00:00:04 BST 2025\n";
        let r = read("hdbtcount.log", text).unwrap();
        let s = &r.series[0];
        assert_eq!((s.period_s, s.values.clone()), (10.0, vec![0.0, 1000.0, 1200.0]));
        assert_eq!(s.timestamps[2], Stamp::Seconds(20.0));
    }
}
