//! An engine's storage rules as the database model applies them: the page
//! a data read or write moves, the longest log write, how often the dirty
//! pages are written back and in runs of how many bytes.
//!
//! A recorded profile carries its own engine's (PostgreSQL's settings as it
//! was recorded, InnoDB's page; `Rules::recorded`). storlab cannot run
//! SQL Server or Db2, so for a config that names one of them the rules
//! come from the engine's documentation instead (`Rules::documented`),
//! applied to the profile's logical work: its CPU, page accesses, pages
//! dirtied and log bytes a transaction stay the recording's, counted as
//! pages of the documented size (the same rows on pages of another size
//! touch about as many pages: one leaf and the levels above it). The record
//! says so: "I/O rules: SQL Server, from documentation; CPU: PostgreSQL
//! recording".
//!
//! SQL Server (2016 and later; Microsoft Learn, as of 2026-12):
//! - pages of 8 KiB, in extents of 8 pages ("Pages and extents
//!   architecture guide");
//! - the log is written in log blocks of 512 bytes to 60 KiB, flushed at
//!   commit ("SQL Server transaction log architecture and management
//!   guide"; the I/O sizes table of "SQL Server I/O basics"), several
//!   blocks in flight at once;
//! - databases created on 2016 and later use indirect checkpoints with
//!   `TARGET_RECOVERY_TIME` = 60 s: a background writer keeps the dirty
//!   pages young enough that recovery stays within 60 s ("Database
//!   checkpoints"), so the write-back cycle is 60 s, not a log-size trigger;
//! - checkpoint and lazy-writer writes gather up to 128 contiguous dirty
//!   pages (1 MiB) in one write, 32 (256 KiB) before 2016 ("Writing pages";
//!   Bob Dorr, "SQL 2016 – It just runs faster: larger data file writes",
//!   2016);
//! - the buffer pool replaces pages by LRU-2 ("Buffer management"); the
//!   model's miss-ratio curve is the recording's (PostgreSQL's clock sweep),
//!   not LRU-2's.
//!
//! Db2 (11.5 for Linux, UNIX and Windows; IBM Documentation, as of 2026-12):
//! - `CREATE DATABASE`'s default page size is 4 KiB (`PAGESIZE 4096`);
//! - log records go to the log buffer (`logbufsz`, default 256 pages of
//!   4 KiB: 1 MiB) and are written at commit or when it is full, so a log
//!   write is at most 1 MiB;
//! - new databases set `softmax` = 0, so the page cleaners write a changed
//!   page within `page_age_trgt_mcr` = 240 s of its change (the soft
//!   checkpoint's frequency);
//! - no documented gathering of neighbouring pages by the page cleaners:
//!   each page is a write of its own.

use storlab_model::deployment::Deployment;
use storlab_workload::profile::{Profile, Writeback};

/// The storage rules a config's database runs by.
#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    /// A data page, bytes: a miss reads one, a write-back writes whole ones.
    pub page_bytes: f64,
    /// The longest single log write, bytes; a larger flush is several
    /// writes in flight at once.
    pub max_log_write: f64,
    /// The write-back cycle: a checkpoint (or the page cleaners' round)
    /// at most this far apart, s.
    pub checkpoint_s: f64,
    /// Log bytes that bring a checkpoint forward (PostgreSQL's
    /// `max_wal_size / (1 + checkpoint_completion_target)`); infinite where
    /// only time decides.
    pub checkpoint_log_bytes: f64,
    /// The longest write-back I/O, bytes: contiguous dirty pages go as one.
    pub max_writeback_io: f64,
    /// Where the rules come from, for the record: the engine's name and
    /// "from documentation", or None for the recording's own.
    pub documented: Option<&'static str>,
}

/// PostgreSQL writes its WAL in writes of up to this many bytes (one
/// flush's pieces; the model's long-standing figure).
pub const POSTGRES_MAX_LOG_WRITE: f64 = 1048576.0;

/// The engines whose rules storlab takes from their documentation.
pub const DOCUMENTED: [&str; 2] = ["sqlserver", "db2"];

impl Rules {
    /// The rules the profile was recorded under.
    pub fn recorded(profile: &Profile) -> Rules {
        let d = Writeback::default();
        let w = profile.writeback.as_ref().unwrap_or(&d);
        let page = profile.data.page_bytes;
        Rules {
            page_bytes: page,
            max_log_write: POSTGRES_MAX_LOG_WRITE,
            checkpoint_s: w.checkpoint_timeout_s,
            checkpoint_log_bytes: w.max_wal_bytes / (1.0 + w.completion_target),
            max_writeback_io: w.flush_after_bytes.max(page),
            documented: None,
        }
    }

    /// The documented rules of `engine` (`sqlserver`, `db2`), or None.
    pub fn documented(engine: &str) -> Option<Rules> {
        match engine {
            "sqlserver" => Some(Rules {
                page_bytes: 8192.0,
                max_log_write: 61440.0,
                checkpoint_s: 60.0,
                checkpoint_log_bytes: f64::INFINITY,
                max_writeback_io: 1048576.0,
                documented: Some("SQL Server"),
            }),
            "db2" => Some(Rules {
                page_bytes: 4096.0,
                max_log_write: 1048576.0,
                checkpoint_s: 240.0,
                checkpoint_log_bytes: f64::INFINITY,
                max_writeback_io: 4096.0,
                documented: Some("Db2"),
            }),
            _ => None,
        }
    }

    /// A config's rules: the documented ones where it names SQL Server or
    /// Db2 (`engine`, or a SQL Server licence) and the profile is another
    /// engine's, else the recording's.
    pub fn resolve(dep: &Deployment, profile: &Profile) -> Rules {
        match wanted_engine(dep) {
            Some(e) if profile.engine().as_deref() != Some(e.as_str()) => Rules::documented(&e).unwrap_or_else(|| Rules::recorded(profile)),
            _ => Rules::recorded(profile),
        }
    }

    /// The rules in words, for the record's assumptions; None for the
    /// recording's own (said once for the workload).
    pub fn words(&self, profile: &Profile) -> Option<String> {
        let engine = self.documented?;
        let recorded = profile.provenance.get("database").and_then(|v| v.as_str()).unwrap_or(&profile.name);
        let gather = if self.max_writeback_io > self.page_bytes {
            format!("contiguous dirty pages gathered into writes of up to {:.0} KiB", self.max_writeback_io / 1024.0)
        } else {
            "each page a write of its own".to_string()
        };
        let cycle = match engine {
            "SQL Server" => format!("indirect checkpoints with a {:.0} s recovery target write each dirty page back within {:.0} s", self.checkpoint_s, self.checkpoint_s),
            _ => format!("the page cleaners write a changed page back within {:.0} s (page_age_trgt_mcr)", self.checkpoint_s),
        };
        Some(format!(
            "I/O rules: {engine}, from documentation — pages of {:.0} KiB, log writes of up to {:.0} KiB, {cycle}, {gather}; CPU, page accesses, pages dirtied and log bytes: {recorded} recording (docs/dbmodel.md, Engines storlab cannot run)",
            self.page_bytes / 1024.0,
            self.max_log_write / 1024.0,
        ))
    }
}

/// The engine a config names (`engine`, or a SQL Server licence), lower
/// case, `postgresql` spelled `postgres`.
pub fn wanted_engine(dep: &Deployment) -> Option<String> {
    match (&dep.engine, dep.license.as_str()) {
        (Some(e), _) => Some(match e.to_ascii_lowercase().as_str() {
            "postgresql" => "postgres".to_string(),
            other => other.to_string(),
        }),
        (None, l) if l.starts_with("windows-sql") => Some("sqlserver".to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_rules_are_the_documents_figures() {
        // SQL Server: 8 KiB pages, 60 KiB log blocks, a 60 s recovery
        // target, gather writes of 128 pages (1 MiB).
        let s = Rules::documented("sqlserver").unwrap();
        assert_eq!((s.page_bytes, s.max_log_write, s.checkpoint_s, s.max_writeback_io), (8192.0, 60.0 * 1024.0, 60.0, 128.0 * 8192.0));
        assert!(s.checkpoint_log_bytes.is_infinite());
        // Db2: 4 KiB pages, a log buffer of 256 pages of 4 KiB, 240 s page age.
        let d = Rules::documented("db2").unwrap();
        assert_eq!((d.page_bytes, d.max_log_write, d.checkpoint_s, d.max_writeback_io), (4096.0, 256.0 * 4096.0, 240.0, 4096.0));
        assert!(Rules::documented("oracle").is_none() && Rules::documented("postgres").is_none());
    }
}
