//! Fuzzing the formats storlab-workload owns (fio job files, database
//! profiles, scenario workloads): valid files mutated at random — numbers
//! swapped for extreme ones, spans cut, lines doubled, bytes inserted. Every
//! input must be read or refused in one non-empty line, never a panic, and
//! what is read must be in range. `cargo test` runs a bounded number of
//! cases per target; `STORLAB_FUZZ_CASES=N` runs N (`make fuzz`).

mod fuzzing;

use fuzzing::{fuzz, one_line};
use storlab_workload::profile::Profile;

const FIO: &[&str] = &[
    "[global]\nioengine=io_uring\ndirect=1\nsize=1g\nruntime=30\ntime_based\n\n[oltp]\nrw=randrw\nrwmixread=70\nbs=8k\niodepth=16\nnumjobs=4\n\n[log]\nstonewall\nrw=write\nbs=4k\niodepth=1\nthinktime=100\n",
    "[mix]\nrw=randrw\nbs=8k\nrate_iops=500\nsize=128m\nruntime=3\nramp_time=1\nloops=2\n",
];

#[test]
fn fuzz_fio_job_files() {
    fuzz("fio", FIO, 3000, |text| match storlab_workload::fio::parse("f.fio", text) {
        Err(e) => one_line(e),
        Ok(jobs) => {
            for j in &jobs {
                if j.rate_iops == Some(0) || j.bs_bytes == 0 || j.bs_bytes > j.size_bytes || j.iodepth == 0 || j.numjobs == 0 {
                    return Err(format!("read a job out of range: {j:?}"));
                }
                if j.runtime.is_some_and(|r| r.as_secs_f64() > storlab_workload::fio::MAX_TIME_S) {
                    return Err(format!("read a runtime beyond a year: {j:?}"));
                }
            }
            Ok(())
        }
    });
}

const PROFILE: &str = include_str!("../../../python/storlab/profiles/tpcc-postgresql.toml");
const INSERT: &str = include_str!("../../../python/storlab/profiles/insert-postgresql.toml");

#[test]
fn fuzz_database_profiles() {
    fuzz("profile", &[PROFILE, INSERT], 1500, |text| match Profile::from_toml("p.toml", text) {
        Err(e) => one_line(e),
        Ok(p) => {
            for t in &p.transactions {
                for (f, x) in [("share", t.share), ("cpu_us", t.cpu_us), ("wal_bytes", t.wal_bytes), ("pages_dirtied", t.pages_dirtied), ("commits", t.commits)] {
                    if !(x.is_finite() && x >= 0.0) {
                        return Err(format!("read transaction '{}' with {f} = {x}", t.name));
                    }
                }
            }
            Ok(())
        }
    });
}

const WORKLOADS: &[&str] = &[
    "[workload]\nduration_s = 4000\nseed = 3\n[[workload.jobs]]\nrw = \"randwrite\"\nbs = \"16k\"\niodepth = 64\nnumjobs = 2\nsize = \"1g\"\nruntime_s = 30\nrate_iops = 100\n",
    "[workload]\nprofile = \"cdm-default\"\nduration_s = 100\n",
    "[workload]\n[[workload.jobs]]\nrw = \"randrw\"\nrwmixread = 70\nbs = \"8k\"\narrival_iops = 2500.5\nsize = \"10g\"\nruntime_s = 60\nthinktime_us = 10\n",
];

#[test]
fn fuzz_scenario_workloads() {
    fuzz("workload", WORKLOADS, 3000, |text| {
        let Ok(t) = toml::from_str::<toml::Table>(text) else { return Err(String::new()) };
        let w = t.get("workload").and_then(|w| w.as_table());
        match storlab_workload::spec::from_table("s.toml", std::path::Path::new("/nonexistent"), w) {
            Err(e) => one_line(e),
            Ok(wl) => {
                for j in &wl.jobs {
                    if j.rate_iops == Some(0) || j.arrival_iops.is_some_and(|r| !(r.is_finite() && r > 0.0)) || j.bs_bytes == 0 {
                        return Err(format!("read a job out of range: {j:?}"));
                    }
                }
                Ok(())
            }
        }
    });
}
