//! The engines on real temp files: what is written is read back, offsets
//! stay in range and aligned, runs measure and clean up.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use storlab_bench::engine::{self, Completion, EngineKind, Op};
use storlab_bench::file::{AlignedBuf, TestFile};
use storlab_bench::run::{next_offset, run_job};
use storlab_workload::{Job, Pattern};

fn tmpdir(name: &str) -> PathBuf {
    // On the project's disk (ext4), not tmpfs, so O_DIRECT is exercised.
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn one(eng: &mut Box<dyn engine::Engine>, op: Op) -> Completion {
    eng.queue(op).unwrap();
    let mut out = Vec::new();
    while out.is_empty() {
        eng.reap(1, &mut out).unwrap();
    }
    out[0]
}

#[test]
fn what_is_written_is_read_back() {
    let dir = tmpdir("readback");
    let f = TestFile::create(&dir, 8 << 20, true).unwrap();
    assert!(f.direct, "ext4 takes O_DIRECT");
    for kind in [EngineKind::Psync, EngineKind::IoUring] {
        let mut eng = engine::open(kind, f.fd(), 4).unwrap();
        let mut w = AlignedBuf::new(4096);
        let r = AlignedBuf::new(4096);
        for (i, offset) in [0u64, 4096, 1 << 20, (8 << 20) - 4096].into_iter().enumerate() {
            w.as_mut_slice().iter_mut().enumerate().for_each(|(k, b)| *b = (k as u8) ^ (i as u8) ^ kind as u8);
            let c = one(&mut eng, Op { slot: 0, write: true, offset, len: 4096, buf: w.as_mut_ptr() });
            assert_eq!(c.result, 4096, "{kind:?} write at {offset}");
            let c = one(&mut eng, Op { slot: 1, write: false, offset, len: 4096, buf: r.as_mut_ptr() });
            assert_eq!(c.result, 4096);
            assert_eq!(r.as_slice(), w.as_slice(), "{kind:?}: read back at {offset}");
        }
    }
    let path = f.path.clone();
    drop(f);
    assert!(!path.exists(), "the test file is removed");
}

#[test]
fn null_engine_touches_nothing() {
    let mut eng = engine::open(EngineKind::Null, -1, 8).unwrap();
    let b = AlignedBuf::new(4096);
    let c = one(&mut eng, Op { slot: 3, write: false, offset: 0, len: 4096, buf: b.as_mut_ptr() });
    assert_eq!((c.slot, c.result), (3, 4096));
}

#[test]
fn offsets_stay_in_range_and_aligned() {
    let (blocks, bs) = (1000u64, 8192u64);
    let mut x = 0x1234_5678u64;
    let mut cursor = 0;
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let o = next_offset(true, x, &mut cursor, blocks, bs);
        assert!(o % bs == 0 && o + bs <= blocks * bs);
    }
    let seq: Vec<u64> = (0..1002).map(|_| next_offset(false, 0, &mut cursor, blocks, bs)).collect();
    assert_eq!(&seq[..3], &[0, 8192, 16384]);
    assert_eq!(seq[1000], 0, "sequential wraps at the end of the file");
}

fn job(rw: Pattern, bs: u64, depth: u32, secs: f64) -> Job {
    let mut j = Job::new("t", rw);
    j.bs_bytes = bs;
    j.iodepth = depth;
    j.size_bytes = 16 << 20;
    j.runtime = Some(Duration::from_secs_f64(secs));
    j.time_based = true;
    j
}

#[test]
fn a_timed_run_measures_for_its_runtime() {
    let dir = tmpdir("timed");
    let f = TestFile::create(&dir, 16 << 20, true).unwrap();
    let stop = AtomicBool::new(false);
    for kind in [EngineKind::IoUring, EngineKind::Psync, EngineKind::Null] {
        let t0 = std::time::Instant::now();
        let r = run_job(kind, &f, &job(Pattern::RandRw, 4096, 8, 0.3), 1, &stop).unwrap();
        let wall = t0.elapsed().as_secs_f64();
        assert!(r.ios() > 100, "{kind:?}: {} I/Os", r.ios());
        // The window is measured, not assumed: it lasted the runtime on the
        // wall clock (5 ms of timer slack), and no longer than the call did.
        assert!(r.elapsed_s >= 0.295 && r.elapsed_s <= wall, "{kind:?}: window {} s, call {wall} s", r.elapsed_s);
        assert!(r.read.ios > 0 && r.write.ios > 0, "a 50/50 mix does both");
        assert!(r.usr_cpu_s + r.sys_cpu_s > 0.0);
    }
}

#[test]
fn a_stopped_run_keeps_what_it_measured() {
    let dir = tmpdir("stopped");
    let f = TestFile::create(&dir, 16 << 20, true).unwrap();
    let stop = AtomicBool::new(false);
    let r = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        run_job(EngineKind::IoUring, &f, &job(Pattern::RandRead, 4096, 4, 30.0), 1, &stop).unwrap()
    });
    assert!(r.interrupted && r.ios() > 0);
    assert!(r.elapsed_s < 5.0);
}

#[test]
fn refuses_paths_it_must_not_write() {
    let dir = tmpdir("refuse");
    let file = dir.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    for (p, needle) in [
        (file.clone(), "is a file, not a folder"),
        (PathBuf::from("/dev/null"), "is a device"),
        (dir.join("missing"), "No such file"),
    ] {
        let e = TestFile::create(&p, 1 << 20, true).err().expect("refused").to_string();
        assert!(e.contains(needle), "{}: {e}", p.display());
    }
    let e = TestFile::create(&dir, 1 << 60, true).err().expect("no room").to_string();
    assert!(e.contains("MiB free") && e.contains("--size"), "{e}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "nothing but the user's file is left");
}
