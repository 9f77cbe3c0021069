//! InnoDB's write path (MySQL, MariaDB) as the database model applies it:
//! the doublewrite buffer's second copy of every page written back, and
//! the binary log's own durable write at commit.
//!
//! The settings come from, in order: the profile's recording
//! (`provenance.settings`), the managed service's rules for the config's
//! engine on its host (the catalog's `engine_settings`: RDS turns the
//! binary log on with automated backups and the doublewrite buffer off
//! where Optimized Writes applies), and the config's own `settings`.
//!
//! - `innodb_doublewrite` (default ON in MySQL and MariaDB): a page is
//!   first written to the doublewrite buffer, a block of one extent (1 MiB
//!   of pages, `TRX_SYS_DOUBLEWRITE_BLOCK_SIZE = FSP_EXTENT_SIZE`, InnoDB's
//!   trx0sys.h) written in one sequential I/O of up to a block
//!   (`buf_dblwr_flush_buffered_writes`), made durable, then written in
//!   place: the data pool takes the pages' bytes twice and one more
//!   durable I/O per block.
//! - `log_bin` with `sync_binlog = N` (N ≥ 1): at commit, after InnoDB's
//!   prepare has made the redo durable, the binary log is written and
//!   synced once every N commit groups, and the commits return only then
//!   (two-phase commit; MySQL reference manual, "sync_binlog"). With
//!   `sync_binlog = 0` the binary log is left to the kernel's write-back.
//!   The binary log lives beside the redo log, on the log pool.
//! - The page cleaner (`buf_flush_page_cleaner`) writes the dirty pages
//!   back, not the kernel: InnoDB opens its files with O_DIRECT. It wakes
//!   once a second; while the redo written since the oldest unwritten
//!   change is under the adaptive-flushing low-water mark
//!   (`innodb_adaptive_flushing_lwm`, 10 % of the redo log's capacity) it
//!   writes none, above it at most `innodb_io_capacity_max` pages a second,
//!   and once that redo passes `max_modified_age_sync` (InnoDB's
//!   `log_calc_max_ages`: the capacity less a tenth twice over, less a
//!   sixteenth) it writes what is beyond at once ("furious flushing":
//!   batches of io_capacity_max with no sleep, MDEV-25113). The model keeps
//!   the pages owed and their redo in step by the profile's mix (pages
//!   dirtied over redo bytes a transaction).

use storlab_model::deployment::Deployment;
use storlab_workload::profile::Profile;

/// The settings the model reads (a config's `settings`).
pub const SETTINGS: &[&str] = &["innodb_doublewrite", "log_bin", "sync_binlog", "innodb_io_capacity_max", "innodb_log_file_size", "innodb_buffer_pool_size"];

/// The buffer pool a config gives InnoDB, bytes, with where it came from:
/// the config's settings or the managed service's rules, never the
/// profile's recording (sized for the recording's data, not the host).
/// None where the profile is not InnoDB's or nothing sets it (the cache is
/// then the workload's `db_memory_gib` or the host's share).
pub fn buffer_pool_bytes(dep: &Deployment, profile: &Profile) -> Option<(f64, String)> {
    let engine = profile.engine()?;
    if engine != "mariadb" && engine != "mysql" {
        return None;
    }
    let s = dep.settings.get("innodb_buffer_pool_size")?;
    let bytes = storlab_workload::units::parse_size(s.value.trim())? as f64;
    let from = if s.from == "config" { "the config's settings".to_string() } else { s.from.clone() };
    Some((bytes, from))
}

/// The page cleaner's loop, s: it sleeps a second between batches.
pub const PAGE_CLEANER_PERIOD_S: f64 = 1.0;
/// `innodb_adaptive_flushing_lwm`'s default, a share of the redo capacity.
pub const ADAPTIVE_FLUSHING_LWM: f64 = 0.10;
/// `max_modified_age_sync` over the redo capacity: margin = capacity less
/// a tenth, less a tenth again (log_calc_max_ages), less a sixteenth
/// (`LOG_POOL_PREFLUSH_RATIO_SYNC`).
pub const SYNC_FLUSH_AGE: f64 = 0.9 * 0.9 * (1.0 - 1.0 / 16.0);

/// The doublewrite buffer's block, bytes: one extent, 1 MiB of pages.
pub const DOUBLEWRITE_BLOCK_BYTES: f64 = 1_048_576.0;

#[derive(Debug, Clone, PartialEq)]
pub struct WritePath {
    pub doublewrite: bool,
    /// Binary log synced once every this many commit groups; 0 for never
    /// (or no binary log).
    pub binlog_sync_every: u32,
    /// The binary log's bytes per transaction: the profile's measurement,
    /// or its redo bytes where it recorded none (`binlog_measured`).
    pub binlog_bytes_per_txn: Option<f64>,
    /// `innodb_io_capacity_max`: the page cleaner's pages a second.
    pub io_capacity_max: f64,
    /// The redo log's capacity, bytes (`innodb_log_file_size`).
    pub redo_capacity_bytes: f64,
    /// In words, with where each setting came from, for the record.
    pub words: String,
}

/// Whether a config's value for a setting the model reads is one the
/// server takes; the message names the nearest valid value.
pub fn check_value(name: &str, value: &str) -> Result<(), String> {
    let v = value.trim();
    let onoff = || matches!(v.to_ascii_uppercase().as_str(), "ON" | "OFF" | "1" | "0" | "TRUE" | "FALSE" | "YES" | "NO");
    match name {
        "innodb_doublewrite" | "log_bin" if !onoff() => Err(format!("'{v}' is not ON or OFF — nearest valid value 'ON'")),
        "sync_binlog" if v.parse::<u32>().is_err() => Err(format!("'{v}' is not a whole number of commit groups (0 for never) — nearest valid value '1'")),
        "innodb_io_capacity_max" => match v.parse::<f64>() {
            Ok(n) if n >= 100.0 && n.fract() == 0.0 => Ok(()),
            _ => Err(format!("'{v}' is not a whole number of pages a second of at least 100 (the server's lowest) — nearest valid value '2000'")),
        },
        "innodb_buffer_pool_size" => match storlab_workload::units::parse_size(v) {
            Some(b) if b >= 5 * 1048576 => Ok(()),
            _ => Err(format!("'{v}' is not a size of at least 5 MiB (the server's lowest; bytes, or with a unit: 128M, 12G) — nearest valid value '128M'")),
        },
        "innodb_log_file_size" => match storlab_workload::units::parse_size(v) {
            Some(b) if b >= 1048576 => Ok(()),
            _ => Err(format!("'{v}' is not a size of at least 1 MiB (bytes, or with a unit: 96M, 1G) — nearest valid value '96M'")),
        },
        _ => Ok(()),
    }
}

fn on(v: &str) -> bool {
    matches!(v.trim().to_ascii_uppercase().as_str(), "ON" | "1" | "TRUE" | "YES")
}

impl WritePath {
    /// The write path for a config, or None where the profile is not
    /// InnoDB's (PostgreSQL has neither) or the config runs by another
    /// engine's documented rules (`iorules`: SQL Server, Db2).
    pub fn resolve(dep: &Deployment, profile: &Profile) -> Option<WritePath> {
        let engine = profile.engine()?;
        if engine != "mariadb" && engine != "mysql" || crate::iorules::Rules::resolve(dep, profile).documented.is_some() {
            return None;
        }
        let recorded = profile.provenance.get("settings").and_then(|s| s.as_table());
        let get = |name: &str, default: &str| -> (String, String) {
            if let Some(s) = dep.settings.get(name) {
                let from = if s.from == "config" { "the config's settings".to_string() } else { s.from.clone() };
                return (s.value.clone(), from);
            }
            if let Some(v) = recorded.and_then(|t| t.get(name)) {
                let v = v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
                return (v, format!("as the profile {} was recorded", profile.name));
            }
            (default.to_string(), format!("the {engine} default"))
        };
        let (dw, dw_from) = get("innodb_doublewrite", "ON");
        let (lb, lb_from) = get("log_bin", "OFF");
        let (sb, sb_from) = get("sync_binlog", "0");
        // MariaDB's and MySQL 8.0's defaults: 2000 pages a second; a redo
        // log of 96 MiB (MariaDB 10.5+; MySQL 8.0's two files of 48 MiB).
        let (cap, cap_from) = get("innodb_io_capacity_max", "2000");
        let (redo, redo_from) = get("innodb_log_file_size", "100663296");
        let io_capacity_max = cap.trim().parse::<f64>().ok().filter(|v| *v >= 100.0).unwrap_or(2000.0);
        let redo_capacity_bytes = storlab_workload::units::parse_size(redo.trim()).map(|b| b as f64).filter(|b| *b > 0.0).unwrap_or(100663296.0);
        let doublewrite = on(&dw);
        let sync_every: u32 = if on(&lb) { sb.trim().parse().unwrap_or(0) } else { 0 };
        let measured = profile
            .provenance
            .get("write_path")
            .and_then(|w| w.get("binlog_bytes_per_txn"))
            .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
            .filter(|&b| b > 0.0);
        let dw_words = if doublewrite {
            format!("doublewrite on ({dw_from}): every page written back is written twice, first to the doublewrite buffer in sequential durable writes of up to 1 MiB")
        } else {
            format!("doublewrite off ({dw_from}): each page written back once")
        };
        let bl_words = match (on(&lb), sync_every) {
            (false, _) => format!("binary log off ({lb_from})"),
            (true, 0) => format!("binary log on ({lb_from}), sync_binlog = 0 ({sb_from}): left to the kernel, no durable write at commit"),
            (true, n) => {
                let every = if n == 1 { "every commit group".to_string() } else { format!("every {n}th commit group") };
                let bytes = match measured {
                    Some(b) => format!("{b:.0} bytes a transaction, as recorded"),
                    None => "as many bytes as the redo log's (the profile recorded none)".to_string(),
                };
                format!("binary log on ({lb_from}), synced at {every} (sync_binlog = {n}, {sb_from}) after the redo log: a second durable write on the log pool before the commits return, {bytes}")
            }
        };
        let pc_words = format!(
            "page cleaner: once a second, none while the redo since the oldest unwritten change is under {:.0} MiB (10 % of the {:.0} MiB redo log, innodb_log_file_size, {redo_from}), then up to {io_capacity_max:.0} pages a second (innodb_io_capacity_max, {cap_from}), all beyond {:.0} MiB at once",
            ADAPTIVE_FLUSHING_LWM * redo_capacity_bytes / 1048576.0,
            redo_capacity_bytes / 1048576.0,
            SYNC_FLUSH_AGE * redo_capacity_bytes / 1048576.0
        );
        Some(WritePath {
            doublewrite,
            binlog_sync_every: sync_every,
            binlog_bytes_per_txn: measured,
            io_capacity_max,
            redo_capacity_bytes,
            words: format!("InnoDB write path: {dw_words}; {bl_words}; {pc_words}"),
        })
    }

    /// The pages the page cleaner writes at a wake `dt` s after the one
    /// before, with `owed` pages dirty and unwritten and `pages_per_redo_byte`
    /// pages dirtied for each byte of redo. `warm`: the server is in a
    /// sweep's steady state, the pages held under the low-water mark are
    /// those of the runs before, so what comes in goes out (paced); a
    /// fresh server holds its first pages until the low-water mark.
    pub fn pages_to_flush(&self, owed: f64, pages_per_redo_byte: f64, dt: f64, warm: bool) -> f64 {
        let paced = (self.io_capacity_max * dt).min(owed);
        if !pages_per_redo_byte.is_finite() {
            return paced;
        }
        let lwm = ADAPTIVE_FLUSHING_LWM * self.redo_capacity_bytes * pages_per_redo_byte;
        let held = if warm { lwm } else { 0.0 };
        if owed + held <= lwm {
            return 0.0;
        }
        let sync = SYNC_FLUSH_AGE * self.redo_capacity_bytes * pages_per_redo_byte;
        paced.max(owed + held - sync).min(owed)
    }
}
