//! Every figure an import brings in is checked where it enters: rates,
//! sizes and counts finite and at least 0, latencies in the range a
//! catalog's service times may take (a storage I/O within 10 s, the limit
//! the catalog overlay reader enforces; a database transaction within an
//! hour). A file with a negative rate or a 10^19 µs latency is refused
//! naming the file, the result and the field, with the nearest valid value,
//! rather than read and refused later by `report` or `compare`.
//!
//! 0 is allowed everywhere: a format that does not give a figure (a
//! CrystalDiskMark 5/6 export has no latency) leaves it at 0, and the use
//! that needs it (calibrate) refuses it with that reason.

use super::ImportError;
use crate::{JobExtra, LatencySummary, RunRecord};

/// The longest service time of one storage I/O, µs (10 s; the catalog's
/// `LATENCY_RANGE_US` upper end, beyond any device's timeout).
pub const IO_LATENCY_MAX_US: f64 = 1e7;
/// The longest database transaction, µs (an hour).
pub const TXN_LATENCY_MAX_US: f64 = 3.6e9;

fn bad(file: &str, entry: &str, field: &str, v: f64, what: &str, nearest: f64) -> ImportError {
    ImportError::Entry { file: file.into(), entry: entry.into(), field: field.into(), message: format!("{v} — {what}; nearest valid value {nearest}") }
}

fn rate(file: &str, entry: &str, field: &str, v: f64) -> Result<(), ImportError> {
    if v.is_finite() && v >= 0.0 {
        return Ok(());
    }
    let nearest = if v == f64::INFINITY { f64::MAX } else { 0.0 };
    Err(bad(file, entry, field, v, "a rate, size or count is finite and at least 0", nearest))
}

fn latency(file: &str, entry: &str, l: &LatencySummary, max_us: f64) -> Result<(), ImportError> {
    let fields = [
        ("lat_mean_us", l.lat_mean_us),
        ("lat_p50_us", l.lat_p50_us),
        ("lat_p90_us", l.lat_p90_us),
        ("lat_p99_us", l.lat_p99_us),
        ("lat_p999_us", l.lat_p999_us),
        ("lat_p9999_us", l.lat_p9999_us),
        ("lat_max_us", l.lat_max_us),
    ];
    for (field, v) in fields {
        if !(v.is_finite() && (0.0..=max_us).contains(&v)) {
            let nearest = if v > max_us { max_us } else { 0.0 };
            return Err(bad(file, entry, field, v, &format!("a latency lies in [0, {max_us}] µs"), nearest));
        }
    }
    Ok(())
}

/// Refuses the first figure of `rec` out of its range.
pub fn values(file: &str, rec: &RunRecord) -> Result<(), ImportError> {
    for r in &rec.results {
        let entry = if r.config.is_empty() { r.job.clone() } else { format!("{} {}", r.config, r.job) };
        if let Some(io) = &r.io {
            for (field, v) in [("iops", io.iops), ("bw_bytes_s", io.bw_bytes_s), ("read_iops", io.read_iops), ("write_iops", io.write_iops), ("runtime_s", io.runtime_s)] {
                rate(file, &entry, field, v)?;
            }
            latency(file, &entry, &io.latency, IO_LATENCY_MAX_US)?;
        }
        if let Some(JobExtra::Db(d)) = &r.extra {
            for (field, v) in [("nopm", d.nopm), ("tpm", d.tpm), ("tpm_client", d.tpm_client), ("rows_per_min", d.rows_per_min), ("finish_s", d.finish_s)] {
                if let Some(v) = v {
                    rate(file, &entry, field, v)?;
                }
            }
            for (name, t) in &d.txn {
                let e = format!("{entry} {name}");
                rate(file, &e, "per_min", t.per_min)?;
                latency(file, &e, &t.latency, TXN_LATENCY_MAX_US)?;
            }
        }
    }
    for s in &rec.series {
        let entry = format!("series {} {}", s.resource, s.metric);
        rate(file, &entry, "period_s", s.period_s)?;
        for (i, v) in s.values.iter().enumerate() {
            rate(file, &format!("{entry} [{i}]"), "value", *v)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::import;

    // Each tool's own format with one figure made negative or huge: refused
    // naming the file, the result and the field.
    #[test]
    fn negative_rates_and_latencies_are_refused_in_every_format() {
        let cdm = "CrystalDiskMark 8.0.4 x64 (C) 2007-2021 hiyohiyo\n\
------------------------------------------------------------------------------\n\
* MB/s = 1,000,000 bytes/s [SATA/600 = 600,000,000 bytes/s]\n\
* KB = 1000 bytes, KiB = 1024 bytes\n\n\
[Read]\n\
  SEQ    1MiB (Q=  8, T= 1):   -12.5 MB/s [    -11.9 IOPS] <  8000.00 us>\n";
        let e = import("neg.txt", cdm.as_bytes()).unwrap_err().to_string();
        assert!(e.starts_with("neg.txt: ") && e.contains("SEQ1M-Q8T1-read") && e.contains("nearest valid value 0"), "{e}");
        let huge = cdm.replace("   -12.5 MB/s [    -11.9 IOPS] <  8000.00 us>", "   12.5 MB/s [    11.9 IOPS] < 18446744073709551616 us>");
        let e = import("huge.txt", huge.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("lat_mean_us") && e.contains("nearest valid value 10000000"), "{e}");
        let fio = br#"{"fio version": "fio-3.33", "jobs": [{"jobname": "w", "write": {"total_ios": 4, "iops": -4.0, "bw_bytes": 16384, "runtime": 1000}}]}"#;
        let e = import("fio.json", fio).unwrap_err().to_string();
        assert!(e.starts_with("fio.json: ") && e.contains(": iops: -4"), "{e}");
    }

    // sysbench prints `transactions: -100 (-5.00 per sec.)` for nonsense;
    // the sign is read, not dropped (which turned it into 300 TPM).
    #[test]
    fn sysbench_keeps_the_minus_sign() {
        let text = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\nSQL statistics:\n    transactions:                        -100 (-5.00 per sec.)\n";
        let e = import("sb.txt", text.as_bytes()).unwrap_err().to_string();
        assert!(e.starts_with("sb.txt: "), "{e}");
        assert!(e.contains("-100") || e.contains("-5"), "{e}");
    }
}
