//! An I/O job in fio's names and meanings: what to issue (direction, size,
//! randomness, mix), how much of it at once (iodepth × numjobs), over what
//! working set, for how long, and at what rate.

use serde::Serialize;
use std::time::Duration;

/// fio's `rw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed reads and writes (`rw`/`readwrite`).
    Rw,
    RandRw,
}

impl Pattern {
    pub fn parse(s: &str) -> Option<Pattern> {
        Some(match s {
            "read" => Pattern::Read,
            "write" => Pattern::Write,
            "randread" => Pattern::RandRead,
            "randwrite" => Pattern::RandWrite,
            "rw" | "readwrite" => Pattern::Rw,
            "randrw" => Pattern::RandRw,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Read => "read",
            Pattern::Write => "write",
            Pattern::RandRead => "randread",
            Pattern::RandWrite => "randwrite",
            Pattern::Rw => "rw",
            Pattern::RandRw => "randrw",
        }
    }
    pub fn is_random(self) -> bool {
        matches!(self, Pattern::RandRead | Pattern::RandWrite | Pattern::RandRw)
    }
    /// Percentage of reads for a given `rwmixread`.
    pub fn read_percent(self, rwmixread: u8) -> u8 {
        match self {
            Pattern::Read | Pattern::RandRead => 100,
            Pattern::Write | Pattern::RandWrite => 0,
            Pattern::Rw | Pattern::RandRw => rwmixread,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Job {
    pub name: String,
    pub rw: Pattern,
    /// Percent reads for mixed patterns (fio default 50).
    pub rwmixread: u8,
    pub bs_bytes: u64,
    pub iodepth: u32,
    pub numjobs: u32,
    /// Test file / working set.
    pub size_bytes: u64,
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub ramp_time: Duration,
    /// Rate cap per job thread (fio `rate_iops`): still a closed loop.
    pub rate_iops: Option<u64>,
    /// Open loop: Poisson arrivals at this rate, whatever the completions;
    /// `iodepth × numjobs` is then not a limit.
    pub arrival_iops: Option<f64>,
    pub thinktime: Duration,
    pub ioengine: Option<String>,
    pub direct: bool,
    /// Wait for every job before to finish (fio `stonewall`,
    /// `wait_for_previous`); jobs without it run at once with those before.
    pub stonewall: bool,
    /// Start a new reporting group without waiting (fio `new_group`).
    pub new_group: bool,
    /// Report the jobs of the reporting group as one (fio `group_reporting`).
    pub group_reporting: bool,
    pub filename: Option<String>,
    pub directory: Option<String>,
    /// Times the measured part runs (fio `loops`; CrystalDiskMark's run count).
    pub loops: u32,
    /// The pool role the job's I/O goes to (`data`, `log`, ...); `None`: the
    /// config's data pool, else its `all` pool.
    pub pool: Option<String>,
}

impl Job {
    /// A job with fio's defaults: 4 KiB, iodepth 1, one job, direct I/O off.
    pub fn new(name: &str, rw: Pattern) -> Job {
        Job {
            name: name.to_string(),
            rw,
            rwmixread: 50,
            bs_bytes: 4096,
            iodepth: 1,
            numjobs: 1,
            size_bytes: 1 << 30,
            runtime: None,
            time_based: false,
            ramp_time: Duration::ZERO,
            rate_iops: None,
            arrival_iops: None,
            thinktime: Duration::ZERO,
            ioengine: None,
            direct: false,
            stonewall: false,
            new_group: false,
            group_reporting: false,
            filename: None,
            directory: None,
            loops: 1,
            pool: None,
        }
    }

    /// I/Os in flight at once in a closed loop.
    pub fn outstanding(&self) -> u64 {
        u64::from(self.iodepth) * u64::from(self.numjobs)
    }

    /// CrystalDiskMark's name for the job: `SEQ1M-Q8T1-read`,
    /// `RND4K-Q32T16-write`, `RND4K-Q1T1-mix70`.
    pub fn cdm_name(&self) -> String {
        let kind = if self.rw.is_random() { "RND" } else { "SEQ" };
        let dir = match self.rw.read_percent(self.rwmixread) {
            100 => "read".to_string(),
            0 => "write".to_string(),
            p => format!("mix{p}"),
        };
        format!("{kind}{}-Q{}T{}-{dir}", size_label(self.bs_bytes), self.iodepth, self.numjobs)
    }
}

/// `1M`, `128K`, `4K`, `512` — CDM's block labels.
pub fn size_label(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{}M", bytes >> 20)
    } else if bytes >= 1024 && bytes % 1024 == 0 {
        format!("{}K", bytes >> 10)
    } else {
        format!("{bytes}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdm_names() {
        let mut j = Job::new("x", Pattern::RandWrite);
        j.iodepth = 32;
        j.numjobs = 16;
        assert_eq!(j.cdm_name(), "RND4K-Q32T16-write");
        let mut j = Job::new("x", Pattern::Read);
        j.bs_bytes = 1 << 20;
        j.iodepth = 8;
        assert_eq!(j.cdm_name(), "SEQ1M-Q8T1-read");
        let mut j = Job::new("x", Pattern::RandRw);
        j.rwmixread = 70;
        assert_eq!(j.cdm_name(), "RND4K-Q1T1-mix70");
    }
}
