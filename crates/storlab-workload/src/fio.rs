//! The fio job-file subset storlab reads, with fio's meanings (HOWTO, "Job
//! file format"): `[global]` sets defaults for the job sections after it,
//! every other section is a job; `;` and `#` start comments. Supported
//! options: rw, rwmixread, bs, iodepth, numjobs, size, runtime, time_based,
//! ramp_time, rate_iops, thinktime, ioengine, direct, stonewall,
//! group_reporting, filename, directory. Anything else is an error that
//! names the option and the line, never silently ignored.

use crate::job::{Job, Pattern};
use crate::WorkloadError;
use std::time::Duration;

pub const OPTIONS: &[&str] = &[
    "rw", "readwrite", "rwmixread", "bs", "blocksize", "iodepth", "numjobs", "size", "runtime", "time_based",
    "ramp_time", "rate_iops", "thinktime", "ioengine", "direct", "stonewall", "wait_for_previous", "new_group",
    "group_reporting",
    "filename", "directory", "loops",
];

/// Engines fio ships on Linux; any other name fio rejects.
pub const ENGINES: &[&str] = &[
    "sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "io_uring_cmd", "posixaio", "mmap",
    "null", "splice", "sg", "net", "netsplice", "cpuio", "filecreate", "filestat", "filedelete", "ftruncate",
    "falloc", "e4defrag", "exec",
];

pub(crate) struct Ctx<'a> {
    pub(crate) file: &'a str,
    pub(crate) line: usize,
}

impl Ctx<'_> {
    pub(crate) fn invalid(&self, option: &str, message: impl Into<String>) -> WorkloadError {
        WorkloadError::InvalidValue { file: self.file.into(), line: self.line, option: option.into(), message: message.into() }
    }
}

/// Parses a job file. `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Vec<Job>, WorkloadError> {
    let mut global = Job::new("global", Pattern::Read);
    let mut jobs: Vec<Job> = Vec::new();
    // None: before any section; Some(None): in [global]; Some(Some(i)): job i.
    let mut section: Option<Option<usize>> = None;
    for (i, raw) in text.lines().enumerate() {
        let cx = Ctx { file, line: i + 1 };
        let line = raw.trim();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest.strip_suffix(']').ok_or_else(|| WorkloadError::Syntax {
                file: file.into(),
                line: cx.line,
                message: format!("section header '{line}' has no closing ']'"),
            })?;
            let name = name.trim();
            if name.is_empty() {
                return Err(WorkloadError::Syntax { file: file.into(), line: cx.line, message: "empty section name".into() });
            }
            if name == "global" {
                section = Some(None);
            } else {
                let mut j = global.clone();
                j.name = name.to_string();
                jobs.push(j);
                section = Some(Some(jobs.len() - 1));
            }
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (line, None),
        };
        let target = match section {
            None => {
                return Err(WorkloadError::Syntax {
                    file: file.into(),
                    line: cx.line,
                    message: format!("option '{key}' before any [section] — put it under [global] or a job section"),
                })
            }
            Some(None) => &mut global,
            Some(Some(j)) => &mut jobs[j],
        };
        apply(&cx, target, key, value)?;
    }
    if jobs.is_empty() {
        return Err(WorkloadError::Syntax { file: file.into(), line: text.lines().count().max(1), message: "no job section: add one, e.g. [job1]".into() });
    }
    for j in &jobs {
        if j.bs_bytes > j.size_bytes {
            let line = find_section(text, &j.name);
            return Err(WorkloadError::InvalidValue { file: file.into(), line, option: "bs".into(), message: format!("block size {} exceeds size {}", j.bs_bytes, j.size_bytes) });
        }
    }
    Ok(jobs)
}

fn find_section(text: &str, name: &str) -> usize {
    text.lines().position(|l| l.trim() == format!("[{name}]")).map_or(1, |p| p + 1)
}

fn apply<'a>(cx: &Ctx, j: &mut Job, key: &str, value: Option<&'a str>) -> Result<(), WorkloadError> {
    fn need<'v>(cx: &Ctx, key: &str, v: Option<&'v str>) -> Result<&'v str, WorkloadError> {
        match v {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(cx.invalid(key, "needs a value: key=value")),
        }
    }
    let need = |v: Option<&'a str>| need(cx, key, v);
    match key {
        "rw" | "readwrite" => {
            let v = need(value)?;
            j.rw = Pattern::parse(v).ok_or_else(|| {
                cx.invalid(key, format!("'{v}' is not supported — use read, write, randread, randwrite, rw or randrw"))
            })?;
        }
        "rwmixread" => {
            let v = parse_int(cx, key, need(value)?)?;
            if v > 100 {
                return Err(cx.invalid(key, format!("{v} is not a percentage — nearest valid value 100")));
            }
            j.rwmixread = v as u8;
        }
        "bs" | "blocksize" => {
            let v = parse_size(cx, key, need(value)?)?;
            if v == 0 {
                return Err(cx.invalid(key, "must be at least 1 byte"));
            }
            j.bs_bytes = v;
        }
        "size" => {
            let v = parse_size(cx, key, need(value)?)?;
            if v == 0 {
                return Err(cx.invalid(key, "must be at least 1 byte"));
            }
            j.size_bytes = v;
        }
        "iodepth" => j.iodepth = positive(cx, key, parse_int(cx, key, need(value)?)?)?,
        "numjobs" => j.numjobs = positive(cx, key, parse_int(cx, key, need(value)?)?)?,
        // fio takes rate_iops=0 as no cap; storlab asks for the option to be
        // left out instead, so a 0 never becomes an endless gap between I/Os.
        "rate_iops" => j.rate_iops = Some(u64::from(positive(cx, key, parse_int(cx, key, need(value)?)?)?)),
        // fio: runtime and ramp_time default to seconds, thinktime to µs.
        "runtime" => j.runtime = Some(parse_time(cx, key, need(value)?, Duration::from_secs(1))?),
        "ramp_time" => j.ramp_time = parse_time(cx, key, need(value)?, Duration::from_secs(1))?,
        "thinktime" => j.thinktime = parse_time(cx, key, need(value)?, Duration::from_micros(1))?,
        "time_based" => j.time_based = parse_bool(cx, key, value)?,
        "group_reporting" => j.group_reporting = parse_bool(cx, key, value)?,
        "stonewall" | "wait_for_previous" => j.stonewall = parse_bool(cx, key, value)?,
        "new_group" => j.new_group = parse_bool(cx, key, value)?,
        "direct" => j.direct = parse_bool(cx, key, Some(need(value)?))?,
        "ioengine" => {
            let v = need(value)?;
            if !ENGINES.contains(&v) {
                let near = crate::nearest(v, ENGINES.iter().copied()).map(|s| format!(" — did you mean '{s}'?")).unwrap_or_default();
                return Err(cx.invalid(key, format!("unknown engine '{v}'{near}")));
            }
            j.ioengine = Some(v.to_string());
        }
        "loops" => j.loops = positive(cx, key, parse_int(cx, key, need(value)?)?)?,
        "filename" => j.filename = Some(need(value)?.to_string()),
        "directory" => j.directory = Some(need(value)?.to_string()),
        other => {
            return Err(WorkloadError::UnknownOption {
                file: cx.file.into(),
                line: cx.line,
                option: other.to_string(),
                suggestion: crate::nearest(other, OPTIONS.iter().copied()),
            })
        }
    }
    Ok(())
}

fn positive(cx: &Ctx, key: &str, v: u64) -> Result<u32, WorkloadError> {
    if v == 0 || v > u64::from(u32::MAX) {
        return Err(cx.invalid(key, format!("{v} is out of range — nearest valid value 1")));
    }
    Ok(v as u32)
}

fn parse_int(cx: &Ctx, key: &str, v: &str) -> Result<u64, WorkloadError> {
    v.parse::<u64>().map_err(|_| cx.invalid(key, format!("'{v}' is not a whole number")))
}

fn parse_bool(cx: &Ctx, key: &str, v: Option<&str>) -> Result<bool, WorkloadError> {
    match v {
        None => Ok(true),
        Some("1") | Some("true") => Ok(true),
        Some("0") | Some("false") => Ok(false),
        Some(x) => Err(cx.invalid(key, format!("'{x}' is not 0 or 1"))),
    }
}

/// fio's size syntax with its default `kb_base=1024`: `4k` = `4kb` = 4096,
/// `1m` = 2^20, `1g` = 2^30; the IEC-looking `KiB`, `MiB` mean powers of
/// 1000 under that default (fio's documented compatibility inversion).
pub(crate) fn parse_size(cx_or_none: &Ctx, key: &str, v: &str) -> Result<u64, WorkloadError> {
    let s = v.trim().to_ascii_lowercase();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().map_err(|_| cx_or_none.invalid(key, format!("'{v}' is not a size (e.g. 4k, 1m, 1g)")))?;
    let (power, decimal) = match unit {
        "" | "b" => (0, false),
        "k" | "kb" => (1, false),
        "m" | "mb" => (2, false),
        "g" | "gb" => (3, false),
        "t" | "tb" => (4, false),
        "p" | "pb" => (5, false),
        "ki" | "kib" => (1, true),
        "mi" | "mib" => (2, true),
        "gi" | "gib" => (3, true),
        "ti" | "tib" => (4, true),
        "pi" | "pib" => (5, true),
        _ => return Err(cx_or_none.invalid(key, format!("'{v}' has an unknown unit '{unit}' (use k, m, g, t)"))),
    };
    let base: f64 = if decimal { 1000.0 } else { 1024.0 };
    let bytes = n * base.powi(power);
    if !(bytes.is_finite() && bytes <= MAX_SIZE_BYTES) {
        return Err(cx_or_none.invalid(key, format!("'{v}' is beyond 1 EiB — nearest valid value 1024p")));
    }
    if bytes.fract() != 0.0 {
        return Err(cx_or_none.invalid(key, format!("'{v}' is not a whole number of bytes")));
    }
    Ok(bytes as u64)
}

/// The largest size a job file may give: 1 EiB, far beyond any device, and
/// still exact in a `u64`.
pub const MAX_SIZE_BYTES: f64 = (1u64 << 60) as f64;

/// fio's time syntax: a number with an optional unit (us, ms, s, m, h, d);
/// without one, `default_unit`.
fn parse_time(cx: &Ctx, key: &str, v: &str, default_unit: Duration) -> Result<Duration, WorkloadError> {
    let s = v.trim().to_ascii_lowercase();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().map_err(|_| cx.invalid(key, format!("'{v}' is not a time (e.g. 30, 30s, 5m)")))?;
    let unit: Duration = match unit {
        "" => default_unit,
        "us" | "usec" => Duration::from_micros(1),
        "ms" | "msec" => Duration::from_millis(1),
        "s" | "sec" => Duration::from_secs(1),
        "m" | "min" => Duration::from_secs(60),
        "h" | "hour" => Duration::from_secs(3600),
        "d" | "day" => Duration::from_secs(86400),
        other => return Err(cx.invalid(key, format!("'{v}' has an unknown time unit '{other}' (use us, ms, s, m, h)"))),
    };
    let secs = n * unit.as_secs_f64();
    if !(secs.is_finite() && secs <= MAX_TIME_S) {
        return Err(cx.invalid(key, format!("'{v}' is beyond {} days — nearest valid value {}s", MAX_TIME_S / 86400.0, MAX_TIME_S)));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The longest time a job file may give (a year): long enough for any run,
/// short of what a `Duration` or a simulated clock holds exactly.
pub const MAX_TIME_S: f64 = 365.0 * 86400.0;

#[cfg(test)]
mod tests {
    use super::*;

    const OLTP: &str = "\
; an OLTP-like mix
[global]
ioengine=io_uring
direct=1
size=1g
runtime=30
time_based
group_reporting

[oltp]
rw=randrw
rwmixread=70
bs=8k
iodepth=16
numjobs=4

[log]
stonewall
rw=write
bs=4k
iodepth=1
thinktime=100
";

    #[test]
    fn global_applies_to_the_jobs_after_it() {
        let jobs = parse("oltp.fio", OLTP).unwrap();
        assert_eq!(jobs.len(), 2);
        let o = &jobs[0];
        assert_eq!((o.name.as_str(), o.rw, o.rwmixread, o.bs_bytes, o.iodepth, o.numjobs), ("oltp", Pattern::RandRw, 70, 8192, 16, 4));
        assert_eq!(o.size_bytes, 1 << 30);
        assert_eq!(o.runtime, Some(Duration::from_secs(30)));
        assert!(o.time_based && o.direct && o.group_reporting);
        assert_eq!(o.ioengine.as_deref(), Some("io_uring"));
        let l = &jobs[1];
        assert!(l.stonewall);
        // thinktime is in microseconds by default
        assert_eq!(l.thinktime, Duration::from_micros(100));
    }

    // fio HOWTO: `wait_for_previous` is `stonewall`'s alias; `new_group`
    // starts a reporting group without waiting.
    #[test]
    fn stonewall_alias_and_new_group() {
        let jobs = parse("j.fio", "[a]\nrw=read\n[b]\nwait_for_previous\n[c]\nnew_group\n").unwrap();
        assert_eq!(jobs.iter().map(|j| (j.stonewall, j.new_group)).collect::<Vec<_>>(), [(false, false), (true, false), (false, true)]);
    }

    #[test]
    fn sizes_follow_fio_kb_base_1024() {
        let cx = Ctx { file: "f", line: 1 };
        assert_eq!(parse_size(&cx, "bs", "4k").unwrap(), 4096);
        assert_eq!(parse_size(&cx, "bs", "4K").unwrap(), 4096);
        assert_eq!(parse_size(&cx, "bs", "1m").unwrap(), 1 << 20);
        assert_eq!(parse_size(&cx, "bs", "512").unwrap(), 512);
        // fio's inversion under the default kb_base=1024: KiB is 1000.
        assert_eq!(parse_size(&cx, "bs", "4KiB").unwrap(), 4000);
        assert!(parse_size(&cx, "bs", "4q").is_err());
    }

    #[test]
    fn unknown_options_name_the_line_and_the_nearest() {
        let e = parse("j.fio", "[a]\nrw=read\niodepht=4\n").unwrap_err();
        assert_eq!(e.to_string(), "j.fio:3: option 'iodepht' is not supported — did you mean 'iodepth'?");
        let e = parse("j.fio", "[a]\nverify=md5\n").unwrap_err();
        assert!(e.to_string().starts_with("j.fio:2: option 'verify' is not supported"), "{e}");
    }

    #[test]
    fn values_fio_would_reject() {
        for (text, needle) in [
            ("[a]\nrw=randomread\n", "j.fio:2: rw: 'randomread' is not supported"),
            ("[a]\nioengine=uring\n", "unknown engine 'uring'"),
            ("[a]\niodepth=0\n", "j.fio:2: iodepth"),
            ("[a]\nrwmixread=120\n", "nearest valid value 100"),
            ("[a]\nbs=1m\nsize=4k\n", "exceeds size"),
            ("rw=read\n", "before any [section]"),
            ("[global]\nbs=4k\n", "no job section"),
            ("[a\nrw=read\n", "no closing ']'"),
            ("[a]\nruntime=5x\n", "unknown time unit"),
            // rate_iops=0 would space I/Os an infinite time apart
            ("[a]\nrw=randrw\nbs=8k\nrate_iops=0\nsize=128m\nruntime=3\n", "j.fio:4: rate_iops: 0 is out of range — nearest valid value 1"),
            // 10^25 s overflows a Duration: refused, not a panic
            ("[a]\nruntime=10000000000000000000000000\n", "nearest valid value 31536000s"),
            ("[a]\nsize=99999999999999999999999p\n", "beyond 1 EiB"),
        ] {
            let e = parse("j.fio", text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }
}
