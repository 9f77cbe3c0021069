//! storlab-fuse: emulated volumes. A FUSE file system passes every file
//! operation through to a backing folder and paces each read and write with
//! the same `storlab-model` resources the simulator spends — the
//! deployment's caps, buckets, I/O accounting, latency and Azure host cache
//! — on the wall clock, so a real database runs on a folder that behaves
//! like the modelled cloud volume.
//!
//! `emulate` mounts one or more pools of one deployment (they share the
//! host's limits), runs until the stop flag is set, and unmounts. It keeps
//! CloudWatch-style series per period.

pub mod cache;
pub mod fs;
pub mod metrics;
pub mod mount;
pub mod pace;
pub mod timer;

use fs::{Live, PassFs, Shared, MARKER, PROBE, PROBE_DELAY};
use metrics::{Counters, Recorder, Row};
use pace::{Pacer, Secs};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use storlab_model::deployment::{resolve_all, Deployment};
use storlab_model::scenario::ScenarioFile;
use storlab_model::{Catalog, ModelError};
use storlab_record::{EmulateRun, Engine, RecordExtra, RunRecord};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmulateError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("{file}: no config '{config}' — configs: {valid}")]
    NoConfig { file: String, config: String, valid: String },
    #[error("{file}: config '{config}' has no pool '{role}' — pools: {valid}")]
    NoPool { file: String, config: String, role: String, valid: String },
    #[error("no latency model for {device} in the catalog — add a [[latency]] entry that covers it (docs/catalog.md)")]
    NoLatency { device: String },
    #[error("{path}: {what} — {fix}")]
    Folder { path: String, what: String, fix: String },
    #[error("mounting {path}: {source} — is /dev/fuse there, and fuse3 installed (apt-get install fuse3)?")]
    Mount { path: String, source: std::io::Error },
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
}

/// One pool to emulate: its role (the config's primary pool when `None`),
/// the backing folder that holds the data and the folder to mount on.
#[derive(Debug, Clone)]
pub struct Target {
    pub role: Option<String>,
    pub backing: PathBuf,
    pub mount: PathBuf,
}

/// What `emulate` takes besides the pools; fields left out of a JSON
/// object keep their `Default`.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default)]
pub struct Options {
    /// Every bucket starts this percent full (100 when `None`).
    pub initial_credits_pct: Option<f64>,
    /// The instance's OS page cache, modelled in the emulator.
    pub ram_bytes: Option<u64>,
    pub metrics_file: Option<PathBuf>,
    pub metrics_port: Option<u16>,
    pub period_s: f64,
    pub seed: u64,
    /// Taken off each modelled completion: FUSE's own round trip. `None`:
    /// calibrated while mounted (the mean of probe reads through the mount).
    pub floor_us: Option<f64>,
    /// No caps and no latency: the pass-through alone (overhead baseline).
    pub unpaced: bool,
    /// Mount over a non-empty folder.
    pub nonempty: bool,
    /// Use a non-empty backing folder storlab did not create.
    pub adopt_backing: bool,
    /// FUSE request threads per mount.
    pub threads: usize,
    /// An fsync gives back the round trips of its file's buffered writes
    /// (with `ram_bytes`, the volume idle); false answers it at the
    /// modelled time (to measure what giving back does).
    pub give_back: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            initial_credits_pct: None,
            ram_bytes: None,
            metrics_file: None,
            metrics_port: None,
            period_s: 60.0,
            seed: 1,
            floor_us: None,
            unpaced: false,
            nonempty: false,
            adopt_backing: false,
            threads: 4,
            give_back: true,
        }
    }
}

/// The live state, once a second.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PoolStatus {
    pub pool: String,
    pub mount: String,
    pub backing: String,
    /// Operations refused since the mount because the backing folder is
    /// full (ENOSPC, EDQUOT), each passed on to its caller.
    pub refused_full: u64,
    pub iops: f64,
    pub bw_bytes_s: f64,
    pub in_flight: u64,
    pub burst_balance: Option<f64>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Status {
    pub elapsed_s: f64,
    pub pools: Vec<PoolStatus>,
    /// What made I/O wait in the last second, in `storlab limits` words.
    pub binding: Option<String>,
    pub metrics_port: Option<u16>,
    /// Set once every pool is mounted (the first call).
    pub mounted: bool,
    /// The round trip taken off each modelled completion (µs).
    pub floor_us: f64,
}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> EmulateError {
    let what = what.into();
    move |source| EmulateError::Io { what, source }
}

fn folder_err(path: &Path, what: &str, fix: &str) -> EmulateError {
    EmulateError::Folder { path: path.display().to_string(), what: what.into(), fix: fix.into() }
}

/// Checks (and prepares) the backing folder: created and marked by
/// storlab, or empty, or adopted on request.
pub fn prepare_backing(backing: &Path, adopt: bool) -> Result<(), EmulateError> {
    if !backing.exists() {
        std::fs::create_dir_all(backing).map_err(io_err(format!("creating {}", backing.display())))?;
    } else if !backing.is_dir() {
        return Err(folder_err(backing, "the backing folder is not a folder", "name a folder"));
    }
    let marker = backing.join(MARKER);
    if !marker.exists() {
        let empty = std::fs::read_dir(backing).map_err(io_err(format!("reading {}", backing.display())))?.next().is_none();
        if !empty && !adopt {
            return Err(folder_err(backing, "this backing folder has files and storlab did not create it", "name a new or empty folder, or pass --adopt-backing to use it as it is"));
        }
        std::fs::write(&marker, "created by storlab emulate: the backing folder of an emulated volume\n").map_err(io_err(format!("writing {}", marker.display())))?;
    }
    Ok(())
}

/// Checks the mount point: no stale or live mount there, and empty.
pub fn check_mount_point(dir: &Path, nonempty: bool) -> Result<(), EmulateError> {
    if mount::is_stale(dir) {
        return Err(folder_err(dir, "a stale emulated volume is still mounted here (its emulator was killed)", &format!("run `storlab emulate --unmount {}`", dir.display())));
    }
    if let Some(t) = mount::mounted_at(dir) {
        if t.starts_with("fuse") {
            return Err(folder_err(dir, &format!("a file system ({t}) is already mounted here"), &format!("unmount it first (`storlab emulate --unmount {}`)", dir.display())));
        }
    }
    if !dir.exists() {
        std::fs::create_dir_all(dir).map_err(io_err(format!("creating {}", dir.display())))?;
    }
    if !dir.is_dir() {
        return Err(folder_err(dir, "the mount point is not a folder", "name a folder"));
    }
    let empty = std::fs::read_dir(dir).map_err(io_err(format!("reading {}", dir.display())))?.next().is_none();
    if !empty && !nonempty {
        return Err(folder_err(dir, "the mount point is not empty (mounting would hide its files)", "name an empty folder, or pass --nonempty"));
    }
    Ok(())
}

/// Clears a mount at `dir` (stale or live); Ok when nothing was mounted.
pub fn unmount(dir: &Path) -> Result<bool, EmulateError> {
    let stale = mount::is_stale(dir);
    let mounted = mount::mounted_at(dir).is_some_and(|t| t.starts_with("fuse"));
    if !stale && !mounted {
        return Ok(false);
    }
    mount::unmount(dir).map_err(io_err(format!("unmounting {}", dir.display())))?;
    Ok(true)
}

fn dev_minor(dir: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).ok().map(|m| libc::minor(m.dev()))
}

/// Emulates the `targets` pools of `config` until `stop` is set, then
/// unmounts. `status` is called once a second (first right after the
/// mounts are up).
pub fn emulate(
    cat: &Catalog,
    file: &str,
    text: &str,
    config: &str,
    targets: &[Target],
    opts: &Options,
    stop: &AtomicBool,
    status: &mut dyn FnMut(&Status),
) -> Result<RunRecord, EmulateError> {
    let sc = ScenarioFile::from_toml(file, text)?;
    let deps = resolve_all(cat, file, &sc)?;
    let dep = deps.into_iter().find(|d| d.name == config);
    let Some(dep) = dep else {
        return Err(EmulateError::NoConfig { file: file.into(), config: config.into(), valid: sc.configs.keys().cloned().collect::<Vec<_>>().join(", ") });
    };
    let pool_idx = targets.iter().map(|t| pool_of(file, &dep, t)).collect::<Result<Vec<_>, _>>()?;
    for t in targets {
        check_target(t, opts)?;
    }
    let config_name = dep.name.clone();
    let mut pacer = Pacer::new(cat, dep, &pool_idx, opts.initial_credits_pct.map(|p| (p / 100.0).clamp(0.0, 1.0)), opts.seed)?;
    pacer.unpaced = opts.unpaced;
    let names: Vec<String> = (0..targets.len()).map(|k| pacer.pool_name(k)).collect();
    let host_cache = (0..targets.len()).map(|k| pacer.host_cache_bytes(k).map(|b| Mutex::new(cache::Lru::new(b)))).collect();
    let mut timer = timer::Timer::start();
    let shared = Arc::new(Shared {
        start: Instant::now(),
        pacer: Mutex::new(pacer),
        timer: timer.sender(),
        period: Mutex::new(vec![Counters::default(); targets.len()]),
        live: (0..targets.len()).map(|_| Live::default()).collect(),
        host_cache,
        ram: opts.ram_bytes.map(|b| Mutex::new(cache::Lru::new(b))),
        dirty: opts.ram_bytes.map(|_| Mutex::new(cache::Dirty::default())),
        owed: Mutex::new(std::collections::HashMap::new()),
        given_back_ns: std::sync::atomic::AtomicU64::new(0),
        fsyncs_given_back: std::sync::atomic::AtomicU64::new(0),
        floor_ns: std::sync::atomic::AtomicU64::new((opts.floor_us.unwrap_or(0.0).max(0.0) * 1e3) as u64),
        probe_ino: std::sync::atomic::AtomicU64::new(0),
        paced: !opts.unpaced,
        give_back: opts.give_back,
    });
    let rec = Arc::new(Mutex::new(Recorder { config: config_name.clone(), pools: names.clone(), period_s: opts.period_s, rows: Vec::new() }));
    let port = match opts.metrics_port {
        Some(p) => Some(metrics::serve(p, rec.clone()).map_err(io_err(format!("serving metrics on 127.0.0.1:{p}")))?),
        None => None,
    };

    let (sessions, minors) = mount_all(targets, &shared, opts)?;

    // The floor: what a 4 KiB direct read through the first mount takes
    // beyond the time its reply was held (PROBE_DELAY), averaged over the
    // last PROBE_KEEP probe reads: 200 at once, then 10 every second (the
    // machine's load moves it).
    let mut probe = if opts.floor_us.is_none() && !opts.unpaced { Probe::open(&targets[0], &shared).ok() } else { None };
    if let Some(p) = probe.as_mut() {
        p.run(&shared, 200);
    }

    let period = Duration::from_secs_f64(opts.period_s.max(0.01));
    let start = shared.start;
    let mut next_period = start + period;
    let mut next_status = Instant::now();
    let mut last = (Instant::now(), vec![(0u64, 0u64); targets.len()]);
    let mut first = true;
    let close_period = |end: Instant| {
        let rows: Vec<Counters> = std::mem::replace(&mut *shared.period.lock().unwrap(), vec![Counters::default(); targets.len()]);
        let p = shared.pacer.lock().unwrap();
        let t = Secs(end.duration_since(start).as_secs_f64());
        let row = rows.into_iter().enumerate().map(|(k, c)| Row { c, burst_balance: p.burst_balance(k, t) }).collect();
        drop(p);
        let mut r = rec.lock().unwrap();
        r.rows.push(row);
        if let Some(f) = &opts.metrics_file {
            let _ = metrics::write_atomic(f, &r.json());
        }
    };
    let mut next_writeback = Instant::now() + fs::DIRTY_WRITEBACK;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= next_writeback {
            shared.expire_dirty(now);
            next_writeback = now + fs::DIRTY_WRITEBACK;
        }
        if now >= next_period {
            close_period(next_period);
            next_period += period;
            continue;
        }
        if now >= next_status {
            let t = Secs(now.duration_since(start).as_secs_f64());
            let (pools, binding) = pool_status(&shared, targets, &names, &mut last, now, t);
            if let Some(pr) = probe.as_mut() {
                pr.run(&shared, 10);
            }
            let floor_us = shared.floor_ns.load(Ordering::Relaxed) as f64 / 1e3;
            status(&Status { elapsed_s: t.0, pools, binding, metrics_port: port, mounted: first, floor_us });
            first = false;
            next_status = now + Duration::from_secs(1);
        }
        let wake = next_period.min(next_status).min(Instant::now() + Duration::from_millis(50));
        std::thread::sleep(wake.saturating_duration_since(Instant::now()));
    }

    let floor_us = shared.floor_ns.load(Ordering::Relaxed) as f64 / 1e3;
    let floor_calibrated = probe.is_some();
    if let Some(p) = probe.take() {
        p.close(&targets[0]);
    }
    unmount_all(sessions, targets, minors);
    timer.stop();
    let end = Instant::now();
    close_period(end);
    let r = rec.lock().unwrap();
    let mut out = RunRecord::new(Engine::Emulate, "the I/O on the mounted volumes", 0);
    out.scenario = Some(file.into());
    out.series = r.series();
    out.extra = Some(RecordExtra::Emulate(EmulateRun {
        config: config_name,
        elapsed_s: end.duration_since(start).as_secs_f64(),
        floor_us,
        floor_calibrated,
        fsync_given_back_s: shared.given_back_ns.load(Ordering::Relaxed) as f64 / 1e9,
        fsyncs_given_back: shared.fsyncs_given_back.load(Ordering::Relaxed),
        refused_full: shared.live.iter().map(|l| l.refused_full.load(Ordering::Relaxed)).sum(),
    }));
    Ok(out)
}

/// The index of the pool of `dep` that target `t` emulates: its role's, or
/// the primary pool without one.
fn pool_of(file: &str, dep: &Deployment, t: &Target) -> Result<usize, EmulateError> {
    dep.pool_index(t.role.as_deref()).map_err(|valid| EmulateError::NoPool {
        file: file.into(),
        config: dep.name.clone(),
        role: t.role.clone().unwrap_or_default(),
        valid,
    })
}

/// Refuses a target whose mount point and backing folder overlap or cannot
/// be used, and prepares its backing folder.
fn check_target(t: &Target, opts: &Options) -> Result<(), EmulateError> {
    let b = std::fs::canonicalize(&t.backing).unwrap_or(t.backing.clone());
    let m = std::fs::canonicalize(&t.mount).unwrap_or(t.mount.clone());
    if b.starts_with(&m) || m.starts_with(&b) {
        return Err(folder_err(&t.mount, "the mount point and the backing folder lie inside one another", "use two separate folders"));
    }
    check_mount_point(&t.mount, opts.nonempty)?;
    prepare_backing(&t.backing, opts.adopt_backing)
}

/// Mounts every target: the FUSE sessions and each mount's device minor
/// (to abort its connection should it hang). On a failure the mounts made
/// so far are taken down again.
fn mount_all(targets: &[Target], shared: &Arc<Shared>, opts: &Options) -> Result<(Vec<fuser::BackgroundSession>, Vec<Option<u32>>), EmulateError> {
    let mut sessions = Vec::new();
    let mut minors = Vec::new();
    for (k, t) in targets.iter().enumerate() {
        let fs = PassFs::new(t.backing.clone(), k, shared.clone()).map_err(io_err(format!("opening {}", t.backing.display())))?;
        let mut cfg = fuser::Config::default();
        cfg.mount_options = vec![fuser::MountOption::FSName(format!("storlab:{}", t.backing.display())), fuser::MountOption::Subtype("storlab".into()), fuser::MountOption::DefaultPermissions];
        cfg.acl = fuser::SessionACL::All;
        cfg.n_threads = Some(opts.threads.max(1));
        cfg.clone_fd = true;
        match fuser::spawn_mount(fs, &t.mount, &cfg) {
            Ok(s) => {
                minors.push(dev_minor(&t.mount));
                sessions.push(s);
            }
            Err(source) => {
                for (s, t) in sessions.into_iter().zip(targets) {
                    let _ = mount::unmount(&t.mount);
                    drop(s);
                }
                return Err(EmulateError::Mount { path: t.mount.display().to_string(), source });
            }
        }
    }
    Ok((sessions, minors))
}

/// Each pool's figures since the last status (`last`: when, and each
/// pool's operation and byte counts then, moved on to now), and the limit
/// that bound since.
fn pool_status(shared: &Shared, targets: &[Target], names: &[String], last: &mut (Instant, Vec<(u64, u64)>), now: Instant, t: Secs) -> (Vec<PoolStatus>, Option<String>) {
    let dt = now.duration_since(last.0).as_secs_f64().max(1e-9);
    let mut p = shared.pacer.lock().unwrap();
    let binding = p.take_binding(t).map(|b| b.0);
    let pools = (0..targets.len())
        .map(|k| {
            let l = &shared.live[k];
            let (ops, bytes) = (l.ops.load(Ordering::Relaxed), l.bytes.load(Ordering::Relaxed));
            let (o0, b0) = last.1[k];
            last.1[k] = (ops, bytes);
            PoolStatus {
                pool: names[k].clone(),
                mount: targets[k].mount.display().to_string(),
                backing: targets[k].backing.display().to_string(),
                refused_full: l.refused_full.load(Ordering::Relaxed),
                iops: (ops - o0) as f64 / dt,
                bw_bytes_s: (bytes - b0) as f64 / dt,
                in_flight: l.in_flight.load(Ordering::Relaxed),
                burst_balance: p.burst_balance(k, t),
            }
        })
        .collect();
    last.0 = now;
    (pools, binding)
}

/// Unmounts, then ends each session; a mount still in use is detached and
/// its connection aborted so that nothing hangs on it.
fn unmount_all(sessions: Vec<fuser::BackgroundSession>, targets: &[Target], minors: Vec<Option<u32>>) {
    for ((s, t), minor) in sessions.into_iter().zip(targets).zip(minors) {
        let busy = mount::unmount(&t.mount).is_err() || mount::mounted_at(&t.mount).is_some_and(|x| x.starts_with("fuse"));
        if busy {
            let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(t.mount.as_os_str())).unwrap_or_default();
            unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
            if let Some(m) = minor {
                mount::abort_connection(m);
            }
        }
        // The session ends when the kernel closes the connection; should it
        // not, leave its thread behind rather than hang (process exit ends it).
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = s.join();
            let _ = tx.send(());
        });
        let _ = rx.recv_timeout(Duration::from_secs(5));
    }
}

/// Probe reads kept for the floor's mean.
const PROBE_KEEP: usize = 400;

/// The floor's calibration: 4 KiB O_DIRECT reads of the probe file through
/// the mount, each reply held PROBE_DELAY by the timer as a paced reply is,
/// timed as the application would time them.
struct Probe {
    fd: i32,
    buf: *mut u8,
    samples: std::collections::VecDeque<f64>,
}

// SAFETY: the buffer is owned by the probe and used by one thread at a time.
unsafe impl Send for Probe {}

impl Probe {
    fn open(t: &Target, shared: &Shared) -> std::io::Result<Probe> {
        use std::os::unix::fs::MetadataExt;
        let backing = t.backing.join(PROBE);
        std::fs::write(&backing, vec![0u8; 4096])?;
        shared.probe_ino.store(std::fs::metadata(&backing)?.ino(), Ordering::Relaxed);
        let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(t.mount.join(PROBE).as_os_str())).unwrap_or_default();
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECT | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut buf: *mut libc::c_void = std::ptr::null_mut();
        if unsafe { libc::posix_memalign(&mut buf, 4096, 4096) } != 0 {
            unsafe { libc::close(fd) };
            return Err(std::io::Error::other("no memory for the probe buffer"));
        }
        Ok(Probe { fd, buf: buf.cast(), samples: Default::default() })
    }

    /// `n` timed reads; the floor becomes the mean of the last PROBE_KEEP.
    fn run(&mut self, shared: &Shared, n: usize) {
        for _ in 0..n {
            let t0 = Instant::now();
            let r = unsafe { libc::pread(self.fd, self.buf.cast(), 4096, 0) };
            if r < 0 {
                return;
            }
            self.samples.push_back(t0.elapsed().saturating_sub(PROBE_DELAY).as_secs_f64());
            if self.samples.len() > PROBE_KEEP {
                self.samples.pop_front();
            }
        }
        let mean = self.samples.iter().sum::<f64>() / self.samples.len().max(1) as f64;
        shared.floor_ns.store((mean * 1e9) as u64, Ordering::Relaxed);
    }

    fn close(self, t: &Target) {
        unsafe {
            libc::close(self.fd);
            libc::free(self.buf.cast());
        }
        let _ = std::fs::remove_file(t.backing.join(PROBE));
    }
}
