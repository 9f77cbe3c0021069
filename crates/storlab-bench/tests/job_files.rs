//! fio job files on real temp files, run as fio runs them: jobs without
//! `stonewall` at the same time on the one file, `group_reporting` folding a
//! group into one result, `size=` honoured, fio's engines mapped to
//! storlab's with a warning.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use storlab_bench::engine::EngineKind;
use storlab_bench::{bench_disk, engine_for, BenchOptions, BenchReport};

fn tmpdir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(name: &str, job_file: &str, o: &BenchOptions) -> BenchReport {
    let dir = tmpdir(name);
    let jobs = storlab_workload::fio::parse("j.fio", job_file).unwrap();
    let stop = AtomicBool::new(false);
    let rep = bench_disk(&dir, &jobs, o, &stop, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "the test file is removed");
    rep
}

fn job_sizes() -> BenchOptions {
    BenchOptions { size_bytes: None, engine: EngineKind::Psync, direct: false, ..BenchOptions::default() }
}

// fio runs [a] and [b] together (no stonewall): their measured windows
// overlap. With `stonewall` on [b], b starts once a has ended.
#[test]
fn jobs_without_stonewall_run_at_the_same_time() {
    let file = "[global]\nrw=randread\nbs=4k\nsize=4m\nruntime=0.4\ntime_based\n[a]\n[b]\n";
    let rep = run("together", file, &job_sizes());
    let (a, b) = (&rep.jobs[0].runs[0], &rep.jobs[1].runs[0]);
    assert_eq!((rep.jobs[0].job.as_str(), rep.jobs[1].job.as_str()), ("a", "b"));
    assert!(a.start_s < b.start_s + b.elapsed_s && b.start_s < a.start_s + a.elapsed_s, "windows overlap: {a:?} {b:?}");
    assert!((a.start_s - b.start_s).abs() < 0.05, "{} vs {}", a.start_s, b.start_s);

    let rep = run("apart", &file.replace("[b]\n", "[b]\nstonewall\n"), &job_sizes());
    let (a, b) = (&rep.jobs[0].runs[0], &rep.jobs[1].runs[0]);
    assert!(b.start_s >= a.start_s + a.elapsed_s - 1e-3, "b waits for a: {} < {} + {}", b.start_s, a.start_s, a.elapsed_s);
}

// Without time_based each job does its `size` once (fio): a = 4 MiB / 4 KiB
// = 1,024 reads, b = 8 MiB / 4 KiB = 2,048. The test file holds the larger
// size, 8 MiB. Under group_reporting the two report as one result of
// 1,024 + 2,048 = 3,072 reads, its I/Os in flight 1 + 1 (psync, one
// thread each).
#[test]
fn group_reporting_folds_the_group_and_size_is_honoured() {
    let file = "[global]\nrw=randread\nbs=4k\ngroup_reporting\n[a]\nsize=4m\n[b]\nsize=8m\n";
    let rep = run("grouped", file, &job_sizes());
    assert_eq!(rep.file_bytes, 8 << 20);
    assert_eq!(rep.jobs.len(), 1);
    let g = &rep.jobs[0];
    assert_eq!((g.job.as_str(), g.jobs, g.numjobs), ("a", Some(2), 2));
    assert_eq!(g.runs[0].read.ios, 3072);
    assert_eq!(rep.outstanding, vec![2]);

    // Reported apart: 1,024 and 2,048.
    let rep = run("separate", &file.replace("group_reporting\n", ""), &job_sizes());
    assert_eq!(rep.jobs.iter().map(|j| j.runs[0].read.ios).collect::<Vec<_>>(), vec![1024, 2048]);
    // --size 4 MiB is every job's size: 1,024 reads each.
    let rep = run("sized", &file.replace("group_reporting\n", ""), &BenchOptions { size_bytes: Some(4 << 20), ..job_sizes() });
    assert_eq!(rep.file_bytes, 4 << 20);
    assert_eq!(rep.jobs.iter().map(|j| j.runs[0].read.ios).collect::<Vec<_>>(), vec![1024, 1024]);
}

// libaio (what most job files name) runs with io_uring, the same iodepth
// in flight; synchronous engines with psync; where io_uring is refused,
// psync. Each says so.
#[test]
fn fio_engines_map_to_storlab_engines_with_a_warning() {
    let jobs = storlab_workload::fio::parse("j.fio", "[a]\nioengine=libaio\n[b]\nioengine=sync\n[c]\nioengine=io_uring\n[d]\nioengine=mmap\n").unwrap();
    let (k, w) = engine_for(&jobs[0], EngineKind::IoUring, true).unwrap();
    assert_eq!(k, EngineKind::IoUring);
    assert_eq!(w.unwrap(), "job 'a': ioengine=libaio runs with io_uring (iodepth I/Os in flight, as with libaio)");
    let (k, w) = engine_for(&jobs[0], EngineKind::IoUring, false).unwrap();
    assert_eq!(k, EngineKind::Psync);
    assert!(w.unwrap().contains("ioengine=libaio runs with psync: io_uring is not available here"));
    assert_eq!(engine_for(&jobs[1], EngineKind::IoUring, true).unwrap().0, EngineKind::Psync);
    assert_eq!(engine_for(&jobs[2], EngineKind::IoUring, true).unwrap(), (EngineKind::IoUring, None));
    assert!(engine_for(&jobs[3], EngineKind::IoUring, true).unwrap_err().to_string().contains("ioengine 'mmap'"));
}

// A libaio job file measures and says what ran, in the report's warnings.
#[test]
fn a_libaio_job_file_runs() {
    let rep = run("libaio", "[a]\nioengine=libaio\nrw=randread\nbs=4k\niodepth=4\nsize=4m\n", &job_sizes());
    assert_eq!(rep.jobs[0].runs[0].read.ios, 1024);
    let expect = if storlab_bench::engine::uring_available() { "io_uring" } else { "psync" };
    assert_eq!(rep.jobs[0].engine, expect);
    assert!(rep.warnings.iter().any(|w| w.contains("ioengine=libaio runs with")), "{:?}", rep.warnings);
}

// fio's `directory=` and `filename=` (fio HOWTO, "Target file/device"):
// the test file goes to <--path>/<directory>/<filename>. The folders storlab
// made for it are gone afterwards with the file; one that was there stays.
#[test]
fn directory_and_filename_are_honoured_under_path() {
    let file = "; fio's own syntax\n[global]\nioengine=psync\nrw=randread\nbs=4k\nsize=4m\ndirectory=data/tpcc\nfilename=bench.dat\n\n[rnd]\nruntime=0.2\ntime_based\n";
    let dir = tmpdir("named");
    std::fs::create_dir(dir.join("data")).unwrap();
    let jobs = storlab_workload::fio::parse("j.fio", file).unwrap();
    let stop = AtomicBool::new(false);
    let target = dir.join("data/tpcc/bench.dat");
    let mut seen = None;
    let rep = bench_disk(&dir, &jobs, &job_sizes(), &stop, &mut |_, _| seen = std::fs::metadata(&target).ok().map(|m| m.len())).unwrap_or_else(|e| panic!("{e}"));
    // 4 MiB = 4,194,304 bytes, written while the job ran.
    assert_eq!(seen, Some(4 << 20));
    assert!(rep.jobs[0].runs[0].read.ios > 0);
    assert!(!target.exists() && !dir.join("data/tpcc").exists(), "the file and the folder storlab made are removed");
    assert!(dir.join("data").is_dir(), "the folder that was there stays");
}

fn refused(name: &str, file: &str) -> String {
    let dir = tmpdir(name);
    let jobs = storlab_workload::fio::parse("j.fio", file).unwrap();
    let stop = AtomicBool::new(false);
    let e = bench_disk(&dir, &jobs, &job_sizes(), &stop, &mut |_, _| {}).expect_err("refused").to_string();
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing is left behind: {e}");
    e
}

#[test]
fn a_directory_outside_path_or_a_path_as_filename_is_refused() {
    let job = |opt: &str| format!("[global]\nrw=read\nbs=4k\nsize=1m\n[seq]\n{opt}\n");
    let e = refused("abs", &job("directory=/var/tmp/db"));
    assert!(e.contains("job 'seq'") && e.contains("directory '/var/tmp/db' is absolute") && e.contains("nearest valid value 'db'"), "{e}");
    let e = refused("up", &job("directory=../elsewhere"));
    assert!(e.contains("leads out of --path") && e.contains("nearest valid value '.'"), "{e}");
    let e = refused("upup", &job("directory=a/../../b"));
    assert!(e.contains("leads out of --path"), "{e}");
    let e = refused("dev", &job("filename=/dev/nvme0n1"));
    assert!(e.contains("filename '/dev/nvme0n1' is not a file name") && e.contains("nearest valid value 'nvme0n1'"), "{e}");
    let e = refused("two", "[global]\nrw=read\nbs=4k\nsize=1m\n[a]\nfilename=one.dat\n[b]\nfilename=two.dat\n");
    assert!(e.contains("job 'b'") && e.contains("another test file than job 'a'"), "{e}");
}

// A file already at that name may be someone's data: refused, untouched.
#[test]
fn an_existing_file_is_never_overwritten() {
    let dir = tmpdir("exists");
    std::fs::write(dir.join("keep.dat"), b"data").unwrap();
    let jobs = storlab_workload::fio::parse("j.fio", "[seq]\nrw=write\nbs=4k\nsize=1m\nfilename=keep.dat\n").unwrap();
    let e = bench_disk(&dir, &jobs, &job_sizes(), &AtomicBool::new(false), &mut |_, _| {}).expect_err("refused").to_string();
    assert!(e.contains("keep.dat: already exists"), "{e}");
    assert_eq!(std::fs::read(dir.join("keep.dat")).unwrap(), b"data");
}
