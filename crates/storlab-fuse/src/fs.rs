//! The pass-through file system: every operation goes to the same path in
//! the backing folder; reads, writes and fsyncs are paced. Files are opened
//! with FUSE `direct_io`, so the kernel's page cache never answers for the
//! volume (`--ram` models that cache here instead), and each I/O the
//! application issues reaches the pacer.
//!
//! With `--ram`, buffered writes behave as in the instance's page cache:
//! the write returns at once and the volume is charged when the page is
//! written back — at `fsync` (whose reply waits for it), after 30 s dirty,
//! or when the page is reclaimed (`cache::Dirty`). Writes with O_DIRECT,
//! O_SYNC or O_DSYNC, and every write without `--ram`, are charged and
//! answered when the volume finishes them.
//!
//! Safety: a write is in the backing file (its page cache) before the reply;
//! an fsync is on the backing file's disk (`fsync`/`fdatasync`) before the
//! reply; nothing is kept only in the emulator, so the backing folder is
//! always a complete copy, and a killed emulator loses nothing a killed
//! kernel would not.

use crate::cache::{Dirty, Extent, Lru};
use crate::metrics::Counters;
use crate::pace::{Io, Pacer, Secs};
use crate::timer::TimerHandle;
use fuser::*;
use std::collections::HashMap;
use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use storlab_model::resources::IoClass;

/// The file storlab keeps in a backing folder it created; hidden from the mount.
pub const MARKER: &str = ".storlab-backing";
/// The emulator's own probe file (a round trip through the mount, to
/// calibrate the floor); left out of listings and of the counters.
pub const PROBE: &str = ".storlab-probe";
/// A probe read's reply waits this long in the timer, as a paced reply
/// does: the probe then pays what a paced I/O pays on top of its modelled
/// time (the timer's hand-off, the reader waking after a sleep).
pub const PROBE_DELAY: Duration = Duration::from_micros(500);

const TTL: Duration = Duration::from_secs(1);

/// Live counters of one pool, for the status line.
#[derive(Default)]
pub struct Live {
    pub ops: AtomicU64,
    pub bytes: AtomicU64,
    pub in_flight: AtomicU64,
    /// Operations refused because the backing folder is full (ENOSPC,
    /// EDQUOT): the writer gets that error, the emulator says so.
    pub refused_full: AtomicU64,
}

/// What the pools of one emulator share: the clock, the pacer (one
/// deployment: host limits are shared), the timer and the counters.
pub struct Shared {
    pub start: Instant,
    pub pacer: Mutex<Pacer>,
    pub timer: TimerHandle,
    pub period: Mutex<Vec<Counters>>,
    pub live: Vec<Live>,
    pub host_cache: Vec<Option<Mutex<Lru>>>,
    pub ram: Option<Mutex<Lru>>,
    /// The page cache's dirty pages (with `ram`).
    pub dirty: Option<Mutex<Dirty>>,
    /// Per file (inode): what its buffered writes since its last `fsync`
    /// took here beyond the instance's page cache, which takes them in
    /// microseconds — each is a FUSE round trip (`write_owed`).
    pub owed: Mutex<HashMap<u64, Duration>>,
    /// What fsyncs gave back of it (ns), and how many fsyncs did.
    pub given_back_ns: AtomicU64,
    pub fsyncs_given_back: AtomicU64,
    /// The round trip through FUSE that the application sees on top of the
    /// modelled time, in nanoseconds: taken off each deadline. Set by
    /// `--floor-us`, or calibrated from probe reads while mounted.
    pub floor_ns: AtomicU64,
    /// The probe file's inode (0: none): its reads wait PROBE_DELAY and are not counted.
    pub probe_ino: AtomicU64,
    pub paced: bool,
    /// Whether fsyncs give back what their files' buffered writes owe.
    pub give_back: bool,
}

struct Dir {
    entries: Vec<(u64, FileType, OsString)>,
}

/// Linux's `dirty_expire_centisecs` default: a page dirty this long is
/// written back by the flusher threads.
pub const DIRTY_EXPIRE: Duration = Duration::from_secs(30);
/// Linux's `dirty_writeback_centisecs` default: how often they look.
pub const DIRTY_WRITEBACK: Duration = Duration::from_secs(5);

impl Shared {
    /// Charges write-backs to the volume from `at`: counted and paced like
    /// any write, nobody waiting; the latest completion, if any.
    pub fn write_back(&self, extents: &[Extent], at: Instant) -> Option<Instant> {
        self.write_back_queued(extents, at).map(|(due, _)| due)
    }

    /// As `write_back`, and whether any of the I/Os was admitted later than
    /// `at` (queued behind other I/O, or waited for a bucket's tokens).
    fn write_back_queued(&self, extents: &[Extent], at: Instant) -> Option<(Instant, bool)> {
        if extents.is_empty() || !self.paced {
            return None;
        }
        let t = Secs(at.saturating_duration_since(self.start).as_secs_f64());
        let mut last = t.0;
        let mut queued = false;
        let mut pacer = self.pacer.lock().unwrap();
        let mut period = self.period.lock().unwrap();
        for e in extents {
            let (admitted, done) = pacer.admit_and_complete(Io { pool: e.pool, class: IoClass::Write, offset: e.offset, len: e.len, sequential: e.sequential }, t);
            queued |= admitted.0 > t.0;
            period[e.pool].add(false, e.len as f64, (done.0 - t.0).max(0.0));
            last = last.max(done.0);
        }
        Some((self.start + Duration::from_secs_f64(last), queued))
    }

    /// A buffered write that the page cache took (`--ram`) but that cost
    /// the application a round trip through FUSE here: from its arrival at
    /// the worker to now (the reply sent), plus the floor (the part of the
    /// round trip before the worker, as the probes measure it). Owed to the
    /// file until its next `fsync`.
    pub fn write_owed(&self, ino: u64, arrived: Instant) {
        let floor = Duration::from_nanos(self.floor_ns.load(Ordering::Relaxed));
        *self.owed.lock().unwrap().entry(ino).or_default() += arrived.elapsed() + floor;
    }

    /// When an `fsync` that arrived at `arrived` replies: its write-back's
    /// completion less the floor (its own round trip) and, when the
    /// write-back did not queue, less what the file's buffered writes
    /// since the last `fsync` were owed. On the instance those writes took
    /// microseconds, so its `fsync` was issued that much earlier; with the
    /// volume idle it completes that much earlier (a queued volume finishes
    /// when it does, whenever the `fsync` came). A write-then-`fsync` — a
    /// database's commit — then takes what the model says, not that plus
    /// the round trips, as long as the modelled time is the longer.
    fn fsync_due(&self, ino: u64, extents: &[Extent], arrived: Instant) -> Option<Instant> {
        let owed = self.owed.lock().unwrap().remove(&ino).unwrap_or_default();
        let (due, queued) = self.write_back_queued(extents, arrived)?;
        let floor = Duration::from_nanos(self.floor_ns.load(Ordering::Relaxed));
        let due = due.checked_sub(floor).unwrap_or(arrived).max(arrived);
        if queued || owed.is_zero() {
            return Some(due);
        }
        let earlier = due.checked_sub(owed).unwrap_or(arrived).max(arrived);
        let given = due - earlier;
        if !given.is_zero() {
            self.given_back_ns.fetch_add(given.as_nanos() as u64, Ordering::Relaxed);
            self.fsyncs_given_back.fetch_add(1, Ordering::Relaxed);
        }
        Some(earlier)
    }

    /// The flusher: pages dirty for `DIRTY_EXPIRE` are written back.
    pub fn expire_dirty(&self, now: Instant) {
        if let (Some(d), Some(before)) = (&self.dirty, now.checked_sub(DIRTY_EXPIRE)) {
            let ext = d.lock().unwrap().take_older(before);
            self.write_back(&ext, now);
        }
    }

    /// Pages the page cache reclaimed: the dirty ones are written back now.
    fn reclaimed(&self, pages: &[(u64, u64)], now: Instant) {
        if pages.is_empty() {
            return;
        }
        if let Some(d) = &self.dirty {
            let ext = d.lock().unwrap().take_pages(pages);
            self.write_back(&ext, now);
        }
    }

    fn forget_file(&self, ino: u64) {
        if let Some(ram) = &self.ram {
            ram.lock().unwrap().drop_file(ino);
        }
        if let Some(d) = &self.dirty {
            d.lock().unwrap().drop_file(ino);
        }
        self.owed.lock().unwrap().remove(&ino);
    }
}

struct Inodes {
    paths: HashMap<u64, PathBuf>,
}

pub struct PassFs {
    root: PathBuf,
    root_ino: u64,
    pool: usize,
    shared: Arc<Shared>,
    inodes: RwLock<Inodes>,
    /// Per open file: the end of its last I/O (sequential detection).
    last_end: Mutex<HashMap<u64, u64>>,
    dirs: Mutex<HashMap<u64, Dir>>,
    next_dir: AtomicU64,
}

fn errno(e: std::io::Error) -> Errno {
    Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO))
}

fn last_errno() -> Errno {
    errno(std::io::Error::last_os_error())
}

fn cpath(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap_or_default()
}

fn kind(mode: u32) -> FileType {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => FileType::Directory,
        libc::S_IFLNK => FileType::Symlink,
        libc::S_IFBLK => FileType::BlockDevice,
        libc::S_IFCHR => FileType::CharDevice,
        libc::S_IFIFO => FileType::NamedPipe,
        libc::S_IFSOCK => FileType::Socket,
        _ => FileType::RegularFile,
    }
}

fn time(s: i64, ns: i64) -> SystemTime {
    if s >= 0 {
        UNIX_EPOCH + Duration::new(s as u64, ns as u32)
    } else {
        UNIX_EPOCH
    }
}

impl PassFs {
    pub fn new(root: PathBuf, pool: usize, shared: Arc<Shared>) -> std::io::Result<PassFs> {
        let md = std::fs::metadata(&root)?;
        let mut paths = HashMap::new();
        paths.insert(1, PathBuf::new());
        Ok(PassFs {
            root,
            root_ino: std::os::unix::fs::MetadataExt::ino(&md),
            pool,
            shared,
            inodes: RwLock::new(Inodes { paths }),
            last_end: Mutex::new(HashMap::new()),
            dirs: Mutex::new(HashMap::new()),
            next_dir: AtomicU64::new(1),
        })
    }

    fn fuse_ino(&self, st_ino: u64) -> u64 {
        if st_ino == self.root_ino {
            1
        } else {
            st_ino
        }
    }

    fn rel(&self, ino: INodeNo) -> Result<PathBuf, Errno> {
        self.inodes.read().unwrap().paths.get(&ino.0).cloned().ok_or(Errno::ESTALE)
    }

    fn full(&self, rel: &Path) -> PathBuf {
        if rel.as_os_str().is_empty() {
            self.root.clone()
        } else {
            self.root.join(rel)
        }
    }

    fn child(&self, parent: INodeNo, name: &OsStr) -> Result<PathBuf, Errno> {
        let p = self.rel(parent)?;
        if parent.0 == 1 && name == MARKER {
            return Err(Errno::EACCES);
        }
        Ok(p.join(name))
    }

    fn attr_of(&self, st: &libc::stat) -> FileAttr {
        FileAttr {
            ino: INodeNo(self.fuse_ino(st.st_ino)),
            size: st.st_size as u64,
            blocks: st.st_blocks as u64,
            atime: time(st.st_atime, st.st_atime_nsec),
            mtime: time(st.st_mtime, st.st_mtime_nsec),
            ctime: time(st.st_ctime, st.st_ctime_nsec),
            crtime: time(st.st_ctime, st.st_ctime_nsec),
            kind: kind(st.st_mode),
            perm: (st.st_mode & 0o7777) as u16,
            nlink: st.st_nlink as u32,
            uid: st.st_uid,
            gid: st.st_gid,
            rdev: st.st_rdev as u32,
            blksize: st.st_blksize as u32,
            flags: 0,
        }
    }

    fn lstat(&self, full: &Path) -> Result<libc::stat, Errno> {
        let c = cpath(full);
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::lstat(c.as_ptr(), &mut st) } != 0 {
            return Err(last_errno());
        }
        Ok(st)
    }

    fn fstat(fd: i32) -> Result<libc::stat, Errno> {
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(last_errno());
        }
        Ok(st)
    }

    /// Looks `rel` up in the backing folder and remembers its inode.
    fn entry(&self, rel: PathBuf) -> Result<FileAttr, Errno> {
        let st = self.lstat(&self.full(&rel))?;
        let a = self.attr_of(&st);
        self.inodes.write().unwrap().paths.insert(a.ino.0, rel);
        Ok(a)
    }

    /// New files belong to the caller, as on a kernel file system (the
    /// emulator runs as root; PostgreSQL insists on owning its folder).
    fn own(&self, req: &Request, full: &Path) {
        let c = cpath(full);
        unsafe {
            libc::lchown(c.as_ptr(), req.uid(), req.gid());
        }
    }

    fn sequential(&self, fh: u64, offset: u64, len: u64) -> bool {
        let mut m = self.last_end.lock().unwrap();
        let seq = m.get(&fh) == Some(&offset);
        m.insert(fh, offset + len);
        seq
    }

    /// When the modelled volume finishes this I/O, as an `Instant`; counts
    /// it. `None` when unpaced (reply now).
    fn pace(&self, ino: u64, fh: u64, read: bool, offset: u64, len: u64, arrived: Instant, buffered: bool) -> Option<Instant> {
        let sh = &self.shared;
        if ino == sh.probe_ino.load(Ordering::Relaxed) && self.pool == 0 {
            return Some(arrived + PROBE_DELAY);
        }
        let live = &sh.live[self.pool];
        live.ops.fetch_add(1, Ordering::Relaxed);
        live.bytes.fetch_add(len, Ordering::Relaxed);
        if !sh.paced {
            sh.period.lock().unwrap()[self.pool].add(read, len as f64, 0.0);
            return None;
        }
        // The instance's page cache (--ram) answers reads it holds and
        // keeps buffered writes dirty until they are written back.
        if let Some(ram) = &sh.ram {
            let mut r = ram.lock().unwrap();
            let hit = read && r.contains(ino, offset, len);
            let evicted = r.touch(ino, offset, len);
            drop(r);
            sh.reclaimed(&evicted, arrived);
            if hit {
                return None;
            }
            if !read && buffered {
                if let Some(d) = &sh.dirty {
                    d.lock().unwrap().mark(self.pool, ino, offset, len, arrived);
                    return None;
                }
            }
        }
        let class = if !read {
            if let Some(c) = &sh.host_cache[self.pool] {
                c.lock().unwrap().touch(ino, offset, len);
            }
            IoClass::Write
        } else if let Some(c) = &sh.host_cache[self.pool] {
            let mut c = c.lock().unwrap();
            let hit = c.contains(ino, offset, len);
            c.touch(ino, offset, len);
            if hit {
                IoClass::ReadHit
            } else {
                IoClass::ReadMiss
            }
        } else {
            IoClass::ReadMiss
        };
        let sequential = self.sequential(fh, offset, len);
        let t = Secs(arrived.duration_since(sh.start).as_secs_f64());
        let done = sh.pacer.lock().unwrap().complete_at(Io { pool: self.pool, class, offset, len, sequential }, t);
        let lat = (done.0 - t.0).max(0.0);
        sh.period.lock().unwrap()[self.pool].add(read, len as f64, lat);
        // The modelled completion is the time the application should see:
        // `arrived` was taken before the backing I/O, so that I/O's own time
        // is already inside it; the floor takes off the round trip through
        // the kernel that the application sees on top.
        let due = sh.start + Duration::from_secs_f64(done.0);
        let floor = Duration::from_nanos(sh.floor_ns.load(Ordering::Relaxed));
        Some(due.checked_sub(floor).unwrap_or(due))
    }

    /// `e`, counted when it says the backing folder is full.
    fn refused(&self, e: Errno) -> Errno {
        if e == Errno::ENOSPC || e == Errno::EDQUOT {
            self.shared.live[self.pool].refused_full.fetch_add(1, Ordering::Relaxed);
        }
        e
    }

    fn reply_later(&self, due: Option<Instant>, f: impl FnOnce() + Send + 'static) {
        let live = self.shared.clone();
        let pool = self.pool;
        let done = move || {
            f();
            live.live[pool].in_flight.fetch_sub(1, Ordering::Relaxed);
        };
        match due {
            None => done(),
            Some(at) => self.shared.timer.at(at, done),
        }
    }
}

impl Filesystem for PassFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        for f in [InitFlags::FUSE_ASYNC_DIO, InitFlags::FUSE_PARALLEL_DIROPS, InitFlags::FUSE_ATOMIC_O_TRUNC, InitFlags::FUSE_DIRECT_IO_ALLOW_MMAP] {
            let _ = config.add_capabilities(f);
        }
        // Enough requests in flight for QD32 (and more) from one process.
        let _ = config.set_max_background(256);
        let _ = config.set_congestion_threshold(200);
        let _ = config.set_max_write(1 << 20);
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        if parent.0 == 1 && name == MARKER {
            return reply.error(Errno::ENOENT);
        }
        match self.rel(parent).and_then(|p| self.entry(p.join(name))) {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        let st = match fh {
            Some(fh) if fh.0 != 0 => Self::fstat(fh.0 as i32),
            _ => self.rel(ino).and_then(|p| self.lstat(&self.full(&p))),
        };
        match st {
            Ok(st) => reply.attr(&TTL, &self.attr_of(&st)),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let rel = match self.rel(ino) {
            Ok(r) => r,
            Err(e) => return reply.error(e),
        };
        let full = self.full(&rel);
        let c = cpath(&full);
        let fd = fh.map(|f| f.0 as i32).filter(|f| *f > 0);
        let r = unsafe {
            let mut r = 0;
            if let Some(m) = mode {
                r |= libc::chmod(c.as_ptr(), m & 0o7777);
            }
            if uid.is_some() || gid.is_some() {
                r |= libc::lchown(c.as_ptr(), uid.unwrap_or(u32::MAX), gid.unwrap_or(u32::MAX));
            }
            if let Some(s) = size {
                r |= match fd {
                    Some(fd) => libc::ftruncate(fd, s as i64),
                    None => libc::truncate(c.as_ptr(), s as i64),
                };
                self.shared.forget_file(ino.0);
            }
            if atime.is_some() || mtime.is_some() {
                let ts = |t: Option<TimeOrNow>| match t {
                    None => libc::timespec { tv_sec: 0, tv_nsec: libc::UTIME_OMIT },
                    Some(TimeOrNow::Now) => libc::timespec { tv_sec: 0, tv_nsec: libc::UTIME_NOW },
                    Some(TimeOrNow::SpecificTime(t)) => {
                        let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
                        libc::timespec { tv_sec: d.as_secs() as i64, tv_nsec: d.subsec_nanos() as i64 }
                    }
                };
                let times = [ts(atime), ts(mtime)];
                r |= libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), libc::AT_SYMLINK_NOFOLLOW);
            }
            r
        };
        if r != 0 {
            return reply.error(self.refused(last_errno()));
        }
        match self.lstat(&full) {
            Ok(st) => reply.attr(&TTL, &self.attr_of(&st)),
            Err(e) => reply.error(e),
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        match self.rel(ino).and_then(|p| std::fs::read_link(self.full(&p)).map_err(errno)) {
            Ok(t) => reply.data(t.as_os_str().as_bytes()),
            Err(e) => reply.error(e),
        }
    }

    fn mknod(&self, req: &Request, parent: INodeNo, name: &OsStr, mode: u32, umask: u32, rdev: u32, reply: ReplyEntry) {
        let rel = match self.child(parent, name) {
            Ok(r) => r,
            Err(e) => return reply.error(e),
        };
        let full = self.full(&rel);
        let c = cpath(&full);
        if unsafe { libc::mknod(c.as_ptr(), mode & !umask, rdev as libc::dev_t) } != 0 {
            return reply.error(self.refused(last_errno()));
        }
        self.own(req, &full);
        match self.entry(rel) {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(&self, req: &Request, parent: INodeNo, name: &OsStr, mode: u32, umask: u32, reply: ReplyEntry) {
        let rel = match self.child(parent, name) {
            Ok(r) => r,
            Err(e) => return reply.error(e),
        };
        let full = self.full(&rel);
        let c = cpath(&full);
        if unsafe { libc::mkdir(c.as_ptr(), mode & !umask) } != 0 {
            return reply.error(self.refused(last_errno()));
        }
        self.own(req, &full);
        match self.entry(rel) {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let gone = self.child(parent, name).ok().and_then(|r| self.lstat(&self.full(&r)).ok()).filter(|st| st.st_nlink <= 1);
        match self.child(parent, name).and_then(|r| std::fs::remove_file(self.full(&r)).map_err(errno)) {
            Ok(()) => {
                // A removed file's dirty pages are never written back.
                if let Some(st) = gone {
                    self.shared.forget_file(self.fuse_ino(st.st_ino));
                }
                reply.ok()
            }
            Err(e) => reply.error(e),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        match self.child(parent, name).and_then(|r| std::fs::remove_dir(self.full(&r)).map_err(errno)) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn symlink(&self, req: &Request, parent: INodeNo, link_name: &OsStr, target: &Path, reply: ReplyEntry) {
        let rel = match self.child(parent, link_name) {
            Ok(r) => r,
            Err(e) => return reply.error(e),
        };
        let full = self.full(&rel);
        if let Err(e) = std::os::unix::fs::symlink(target, &full) {
            return reply.error(self.refused(errno(e)));
        }
        self.own(req, &full);
        match self.entry(rel) {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn rename(&self, _req: &Request, parent: INodeNo, name: &OsStr, newparent: INodeNo, newname: &OsStr, flags: RenameFlags, reply: ReplyEmpty) {
        let (from, to) = match (self.child(parent, name), self.child(newparent, newname)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => return reply.error(e),
        };
        let (cf, ct) = (cpath(&self.full(&from)), cpath(&self.full(&to)));
        let r = unsafe { libc::renameat2(libc::AT_FDCWD, cf.as_ptr(), libc::AT_FDCWD, ct.as_ptr(), flags.bits()) };
        if r != 0 {
            return reply.error(self.refused(last_errno()));
        }
        // Every inode at or under the old path now lives under the new one.
        let mut inodes = self.inodes.write().unwrap();
        for p in inodes.paths.values_mut() {
            if let Ok(rest) = p.strip_prefix(&from) {
                *p = if rest.as_os_str().is_empty() { to.clone() } else { to.join(rest) };
            }
        }
        reply.ok();
    }

    fn link(&self, _req: &Request, ino: INodeNo, newparent: INodeNo, newname: &OsStr, reply: ReplyEntry) {
        let (from, to) = match (self.rel(ino), self.child(newparent, newname)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => return reply.error(e),
        };
        if let Err(e) = std::fs::hard_link(self.full(&from), self.full(&to)) {
            return reply.error(self.refused(errno(e)));
        }
        match self.lstat(&self.full(&to)) {
            Ok(st) => reply.entry(&TTL, &self.attr_of(&st), Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let rel = match self.rel(ino) {
            Ok(r) => r,
            Err(e) => return reply.error(e),
        };
        // The kernel resolves appends and direct I/O; the backing file
        // gets plain positioned I/O (O_SYNC and O_DSYNC are kept).
        let f = flags.0 & !(libc::O_DIRECT | libc::O_APPEND | libc::O_CREAT | libc::O_EXCL | libc::O_NOCTTY);
        let c = cpath(&self.full(&rel));
        let fd = unsafe { libc::open(c.as_ptr(), f | libc::O_CLOEXEC) };
        if fd < 0 {
            return reply.error(last_errno());
        }
        if flags.0 & libc::O_TRUNC != 0 {
            self.shared.forget_file(ino.0);
        }
        reply.opened(FileHandle(fd as u64), FopenFlags::FOPEN_DIRECT_IO);
    }

    fn create(&self, req: &Request, parent: INodeNo, name: &OsStr, mode: u32, umask: u32, flags: i32, reply: ReplyCreate) {
        let rel = match self.child(parent, name) {
            Ok(r) => r,
            Err(e) => return reply.error(e),
        };
        let full = self.full(&rel);
        let c = cpath(&full);
        let f = (flags & !(libc::O_DIRECT | libc::O_APPEND | libc::O_NOCTTY)) | libc::O_CREAT | libc::O_CLOEXEC;
        let fd = unsafe { libc::open(c.as_ptr(), f, mode & !umask) };
        if fd < 0 {
            return reply.error(self.refused(last_errno()));
        }
        unsafe {
            libc::fchown(fd, req.uid(), req.gid());
        }
        match Self::fstat(fd) {
            Ok(st) => {
                let a = self.attr_of(&st);
                self.inodes.write().unwrap().paths.insert(a.ino.0, rel);
                reply.created(&TTL, &a, Generation(0), FileHandle(fd as u64), FopenFlags::FOPEN_DIRECT_IO);
            }
            Err(e) => {
                unsafe { libc::close(fd) };
                reply.error(e)
            }
        }
    }

    fn read(&self, _req: &Request, ino: INodeNo, fh: FileHandle, offset: u64, size: u32, _flags: OpenFlags, _lock: Option<LockOwner>, reply: ReplyData) {
        let arrived = Instant::now();
        self.shared.live[self.pool].in_flight.fetch_add(1, Ordering::Relaxed);
        let mut buf = vec![0u8; size as usize];
        let mut got = 0usize;
        while got < buf.len() {
            let n = unsafe { libc::pread(fh.0 as i32, buf[got..].as_mut_ptr().cast(), buf.len() - got, (offset + got as u64) as i64) };
            if n < 0 {
                let e = last_errno();
                return self.reply_later(None, move || reply.error(e));
            }
            if n == 0 {
                break;
            }
            got += n as usize;
        }
        buf.truncate(got);
        let due = if got == 0 { None } else { self.pace(ino.0, fh.0, true, offset, got as u64, arrived, false) };
        self.reply_later(due, move || reply.data(&buf));
    }

    fn write(&self, _req: &Request, ino: INodeNo, fh: FileHandle, offset: u64, data: &[u8], _wf: WriteFlags, flags: OpenFlags, _lock: Option<LockOwner>, reply: ReplyWrite) {
        let arrived = Instant::now();
        self.shared.live[self.pool].in_flight.fetch_add(1, Ordering::Relaxed);
        let mut done = 0usize;
        while done < data.len() {
            let n = unsafe { libc::pwrite(fh.0 as i32, data[done..].as_ptr().cast(), data.len() - done, (offset + done as u64) as i64) };
            if n < 0 {
                let e = self.refused(last_errno());
                return self.reply_later(None, move || reply.error(e));
            }
            done += n as usize;
        }
        // The kernel passes the file's open flags: O_DIRECT and the sync
        // flags bypass (or write through) the page cache.
        let buffered = flags.0 & (libc::O_DIRECT | libc::O_SYNC | libc::O_DSYNC) == 0;
        let due = self.pace(ino.0, fh.0, false, offset, data.len() as u64, arrived, buffered);
        let n = data.len() as u32;
        // In the page cache (dirty until written back) but answered only
        // now: the round trip is owed to the file's next fsync.
        let cached = due.is_none() && buffered && self.shared.paced && self.shared.give_back && self.shared.dirty.is_some();
        self.reply_later(due, move || reply.written(n));
        if cached {
            self.shared.write_owed(ino.0, arrived);
        }
    }

    fn flush(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _lock: LockOwner, reply: ReplyEmpty) {
        // direct_io keeps no dirty pages in the kernel: close has nothing to write.
        reply.ok();
    }

    fn release(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, _flags: OpenFlags, _lock: Option<LockOwner>, _flush: bool, reply: ReplyEmpty) {
        self.last_end.lock().unwrap().remove(&fh.0);
        unsafe { libc::close(fh.0 as i32) };
        reply.ok();
    }

    fn fsync(&self, _req: &Request, ino: INodeNo, fh: FileHandle, datasync: bool, reply: ReplyEmpty) {
        // The file's dirty pages (--ram) are written back to the volume
        // now, and the reply waits for the last; writes without the page
        // cache were charged when made. The sync makes the backing file
        // durable before the reply, whatever the model says.
        let arrived = Instant::now();
        let sh = &self.shared;
        let due = match &sh.dirty {
            Some(d) if sh.paced => {
                let ext = d.lock().unwrap().take_file(ino.0);
                sh.fsync_due(ino.0, &ext, arrived)
            }
            _ => None,
        };
        let r = unsafe {
            if datasync {
                libc::fdatasync(fh.0 as i32)
            } else {
                libc::fsync(fh.0 as i32)
            }
        };
        if r != 0 {
            reply.error(self.refused(last_errno()))
        } else {
            sh.live[self.pool].in_flight.fetch_add(1, Ordering::Relaxed);
            self.reply_later(due, move || reply.ok())
        }
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let rel = match self.rel(ino) {
            Ok(r) => r,
            Err(e) => return reply.error(e),
        };
        let full = self.full(&rel);
        let rd = match std::fs::read_dir(&full) {
            Ok(r) => r,
            Err(e) => return reply.error(errno(e)),
        };
        let me = self.lstat(&full).map(|s| s.st_ino).unwrap_or(0);
        let mut entries = vec![(self.fuse_ino(me), FileType::Directory, OsString::from(".")), (1, FileType::Directory, OsString::from(".."))];
        for e in rd.flatten() {
            if ino.0 == 1 && (e.file_name() == MARKER || e.file_name() == PROBE) {
                continue;
            }
            let ft = e.file_type().ok();
            let k = match ft {
                Some(t) if t.is_dir() => FileType::Directory,
                Some(t) if t.is_symlink() => FileType::Symlink,
                _ => FileType::RegularFile,
            };
            let i = std::os::unix::fs::DirEntryExt::ino(&e);
            entries.push((self.fuse_ino(i), k, e.file_name()));
        }
        let id = self.next_dir.fetch_add(1, Ordering::Relaxed);
        self.dirs.lock().unwrap().insert(id, Dir { entries });
        reply.opened(FileHandle(id), FopenFlags::empty());
    }

    fn readdir(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        let dirs = self.dirs.lock().unwrap();
        let Some(d) = dirs.get(&fh.0) else { return reply.error(Errno::EBADF) };
        for (i, (ino, k, name)) in d.entries.iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(*ino), (i + 1) as u64, *k, name) {
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, _flags: OpenFlags, reply: ReplyEmpty) {
        self.dirs.lock().unwrap().remove(&fh.0);
        reply.ok();
    }

    fn fsyncdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        match self.rel(ino).and_then(|p| std::fs::File::open(self.full(&p)).and_then(|f| f.sync_all()).map_err(errno)) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let c = cpath(&self.root);
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
            return reply.error(last_errno());
        }
        reply.statfs(s.f_blocks, s.f_bfree, s.f_bavail, s.f_files, s.f_ffree, s.f_bsize as u32, s.f_namemax as u32, s.f_frsize as u32);
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: AccessFlags, reply: ReplyEmpty) {
        // default_permissions: the kernel has checked already.
        reply.ok();
    }

    fn fallocate(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, offset: u64, length: u64, mode: i32, reply: ReplyEmpty) {
        if unsafe { libc::fallocate(fh.0 as i32, mode, offset as i64, length as i64) } != 0 {
            return reply.error(self.refused(last_errno()));
        }
        reply.ok();
    }

    fn lseek(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, offset: i64, whence: i32, reply: ReplyLseek) {
        let r = unsafe { libc::lseek(fh.0 as i32, offset, whence) };
        if r < 0 {
            return reply.error(last_errno());
        }
        reply.offset(r);
    }
}
