//! CrystalDiskMark presets (DiskMarkDlg.cpp / DiskBench.cpp; summarised in
//! shared/reference/disk-benchmarks.md §2.1): four test slots for the main
//! screen, two for "Peak Performance", two for "Real World Performance";
//! each test is run for reads and for writes, all reads first. Defaults:
//! 1 GiB test file, 5 s measured, 5 s interval, CDM 9's 3 runs after a
//! discarded warm-up, unbuffered I/O.

use crate::job::{Job, Pattern};
use crate::WorkloadError;
use std::time::Duration;

/// One CDM test slot: sequential or random, block size, queues, threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub random: bool,
    pub bs_bytes: u64,
    pub queues: u32,
    pub threads: u32,
}

const fn seq(bs_kib: u64, q: u32, t: u32) -> Slot {
    Slot { random: false, bs_bytes: bs_kib * 1024, queues: q, threads: t }
}
const fn rnd(bs_kib: u64, q: u32, t: u32) -> Slot {
    Slot { random: true, bs_bytes: bs_kib * 1024, queues: q, threads: t }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    pub name: &'static str,
    pub title: &'static str,
    pub slots: &'static [Slot],
    pub measure: Duration,
    pub interval: Duration,
    /// Measured runs after the discarded warm-up (CDM 9.0: 3; CDM 8.0: 5).
    pub runs: u32,
    pub size_bytes: u64,
}

const DEFAULT: &[Slot] = &[seq(1024, 8, 1), seq(1024, 1, 1), rnd(4, 32, 1), rnd(4, 1, 1)];
const PEAK: &[Slot] = &[seq(1024, 8, 1), rnd(4, 32, 1)];
const REAL_WORLD: &[Slot] = &[seq(1024, 1, 1), rnd(4, 1, 1)];
const NVME: &[Slot] = &[seq(1024, 8, 1), seq(128, 32, 1), rnd(4, 32, 16), rnd(4, 1, 1)];

pub const PRESETS: &[Preset] = &[
    preset("cdm-default", "CrystalDiskMark Default: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1", DEFAULT),
    preset("cdm-peak", "CrystalDiskMark Peak Performance: SEQ1M Q8T1, RND4K Q32T1", PEAK),
    preset("cdm-real-world", "CrystalDiskMark Real World Performance: SEQ1M Q1T1, RND4K Q1T1", REAL_WORLD),
    preset("cdm-nvme", "CrystalDiskMark NVMe SSD: SEQ1M Q8T1, SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1", NVME),
];

const fn preset(name: &'static str, title: &'static str, slots: &'static [Slot]) -> Preset {
    Preset {
        name,
        title,
        slots,
        measure: Duration::from_secs(5),
        interval: Duration::from_secs(5),
        runs: 3,
        size_bytes: 1 << 30,
    }
}

impl Preset {
    pub fn by_name(name: &str) -> Result<&'static Preset, WorkloadError> {
        PRESETS.iter().find(|p| p.name == name).ok_or_else(|| WorkloadError::UnknownPreset {
            name: name.to_string(),
            suggestion: crate::nearest(name, PRESETS.iter().map(|p| p.name)),
            valid: PRESETS.iter().map(|p| p.name).collect::<Vec<_>>().join(", "),
        })
    }

    /// The preset's jobs in CDM's order: every slot read, then every slot
    /// written. A sequential slot with several threads is one shared stream
    /// in CDM 9 (DiskSpd -si); that is the engines' business.
    pub fn jobs(&self) -> Vec<Job> {
        let mut out = Vec::new();
        for read in [true, false] {
            for s in self.slots {
                let rw = match (s.random, read) {
                    (true, true) => Pattern::RandRead,
                    (true, false) => Pattern::RandWrite,
                    (false, true) => Pattern::Read,
                    (false, false) => Pattern::Write,
                };
                let mut j = Job::new("", rw);
                j.bs_bytes = s.bs_bytes;
                j.iodepth = s.queues;
                j.numjobs = s.threads;
                j.size_bytes = self.size_bytes;
                j.runtime = Some(self.measure);
                // The discarded warm-up run, then `runs` measured runs.
                j.ramp_time = self.measure;
                j.loops = self.runs;
                j.time_based = true;
                j.direct = true;
                j.stonewall = true;
                j.group_reporting = true;
                j.name = j.cdm_name();
                out.push(j);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // CrystalDiskMark 8/9 Default preset: the main screen's four slots.
    #[test]
    fn default_preset_matches_crystaldiskmark() {
        let names: Vec<String> = Preset::by_name("cdm-default").unwrap().jobs().iter().map(|j| j.name.clone()).collect();
        assert_eq!(
            names,
            [
                "SEQ1M-Q8T1-read", "SEQ1M-Q1T1-read", "RND4K-Q32T1-read", "RND4K-Q1T1-read",
                "SEQ1M-Q8T1-write", "SEQ1M-Q1T1-write", "RND4K-Q32T1-write", "RND4K-Q1T1-write",
            ]
        );
    }

    // "NVMe SSD" preset: SEQ128K Q32T1 and RND4K Q32T16 replace slots 1–2.
    #[test]
    fn nvme_preset_matches_crystaldiskmark() {
        let jobs = Preset::by_name("cdm-nvme").unwrap().jobs();
        assert_eq!(jobs[1].name, "SEQ128K-Q32T1-read");
        assert_eq!(jobs[2].name, "RND4K-Q32T16-read");
        assert_eq!(jobs[2].outstanding(), 512);
        assert!(jobs.iter().all(|j| j.size_bytes == 1 << 30 && j.direct && j.runtime == Some(Duration::from_secs(5))));
    }

    #[test]
    fn peak_and_real_world() {
        let peak: Vec<String> = Preset::by_name("cdm-peak").unwrap().jobs().iter().map(|j| j.name.clone()).collect();
        assert_eq!(peak, ["SEQ1M-Q8T1-read", "RND4K-Q32T1-read", "SEQ1M-Q8T1-write", "RND4K-Q32T1-write"]);
        let rw: Vec<String> = Preset::by_name("cdm-real-world").unwrap().jobs().iter().map(|j| j.name.clone()).collect();
        assert_eq!(rw, ["SEQ1M-Q1T1-read", "RND4K-Q1T1-read", "SEQ1M-Q1T1-write", "RND4K-Q1T1-write"]);
    }

    #[test]
    fn unknown_preset_suggests() {
        let e = Preset::by_name("cdm-defualt").unwrap_err();
        assert!(e.to_string().contains("did you mean 'cdm-default'"), "{e}");
    }
}
