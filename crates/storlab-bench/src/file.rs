//! The test file: created by storlab inside the folder the user names,
//! filled with incompressible data, opened with O_DIRECT where the file
//! system allows it, and removed when the handle drops — on success, on
//! error, and when a run is stopped.

use crate::BenchError;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Alignment for O_DIRECT buffers and offsets: 4 KiB covers the logical
/// block size of every device we meet.
pub const ALIGN: usize = 4096;

/// A heap buffer aligned for O_DIRECT.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the buffer is plain memory owned by one worker at a time.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub fn new(len: usize) -> AlignedBuf {
        let layout = Layout::from_size_align(len.max(ALIGN), ALIGN).expect("valid layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory for I/O buffers");
        AlignedBuf { ptr, layout }
    }
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.ptr
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for layout.size() bytes.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// Fills `buf` with pseudo-random bytes (xorshift), so compressing or
/// deduplicating storage sees incompressible data.
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let mut x = seed | 1;
    for chunk in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x.to_le_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
    }
}

/// Free bytes for an unprivileged writer in the file system holding `dir`.
pub fn free_bytes(dir: &Path) -> std::io::Result<u64> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).map_err(std::io::Error::other)?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid C string and out-pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Checks the folder the user gave: it must exist, be a directory, and
/// have room for the test file.
pub fn check_dir(dir: &Path, size: u64) -> Result<(), BenchError> {
    let meta = std::fs::metadata(dir).map_err(|e| BenchError::Path {
        path: dir.display().to_string(),
        message: format!("{e} — give an existing folder on the disk to measure"),
    })?;
    let ft = meta.file_type();
    if ft.is_block_device() || ft.is_char_device() {
        return Err(BenchError::Path {
            path: dir.display().to_string(),
            message: "is a device; storlab measures through a file system — give a folder on it".into(),
        });
    }
    if !meta.is_dir() {
        return Err(BenchError::Path {
            path: dir.display().to_string(),
            message: "is a file, not a folder; storlab writes its own test file inside the folder you give".into(),
        });
    }
    let free = free_bytes(dir).map_err(|e| BenchError::Path { path: dir.display().to_string(), message: e.to_string() })?;
    // Keep 64 MiB spare so the benchmark never fills a file system.
    let need = size + (64 << 20);
    if free < need {
        let fits = free.saturating_sub(64 << 20) >> 20;
        // Below 1 MiB there is no test file worth measuring: say so rather
        // than suggest a size of 0.
        let fix = if fits >= 1 { format!("use --size {fits}MiB or less") } else { "free some space there or measure another folder".into() };
        return Err(BenchError::Path {
            path: dir.display().to_string(),
            message: format!("has {} MiB free, the test file needs {} MiB and 64 MiB spare — {fix}", free >> 20, size.div_ceil(1 << 20)),
        });
    }
    Ok(())
}

/// The test file, removed on drop.
pub struct TestFile {
    pub path: PathBuf,
    pub file: File,
    pub size: u64,
    /// False where the file system refused O_DIRECT (tmpfs): buffered I/O.
    pub direct: bool,
    /// Files storlab created are removed on drop; a benchmark's own file
    /// (`open_existing`) is left alone.
    owned: bool,
}

impl TestFile {
    /// Creates `storlab-bench-<pid>-<n>.dat` in `dir`, `size` bytes of
    /// incompressible data written with 1 MiB writes.
    pub fn create(dir: &Path, size: u64, want_direct: bool) -> Result<TestFile, BenchError> {
        Self::create_named(dir, None, size, want_direct)
    }

    /// `create` under the name a job file gives (fio's `filename=`), or
    /// storlab's own where it gives none. A file already there is never
    /// overwritten: it may be someone's data.
    pub fn create_named(dir: &Path, name: Option<&str>, size: u64, want_direct: bool) -> Result<TestFile, BenchError> {
        check_dir(dir, size)?;
        let name = name.map_or_else(|| format!("storlab-bench-{}-{}.dat", std::process::id(), unique()), str::to_string);
        let path = dir.join(name);
        if std::fs::symlink_metadata(&path).is_ok() {
            return Err(BenchError::Path {
                path: path.display().to_string(),
                message: "already exists — storlab writes and removes a test file of its own; remove this one or give the job another filename=".into(),
            });
        }
        let io_err = |e: std::io::Error, what: &str| BenchError::Path { path: path.display().to_string(), message: format!("{what}: {e}") };
        {
            // Filled with unbuffered 1 MiB writes where the file system
            // allows (as CrystalDiskMark does): data left in the page cache
            // would make every later O_DIRECT I/O invalidate cached pages.
            let mut o = OpenOptions::new();
            o.write(true).create_new(true);
            if want_direct {
                o.custom_flags(libc::O_DIRECT);
            }
            let mut f = match o.open(&path) {
                Ok(f) => f,
                Err(e) if want_direct && e.raw_os_error() == Some(libc::EINVAL) => {
                    let _ = std::fs::remove_file(&path);
                    OpenOptions::new().write(true).create_new(true).open(&path).map_err(|e| io_err(e, "cannot create the test file"))?
                }
                Err(e) => return Err(io_err(e, "cannot create the test file")),
            };
            // From here on the file is removed if anything fails.
            let guard = RemoveOnDrop(path.clone());
            let mut buf = AlignedBuf::new(1 << 20);
            let mut left = size;
            let mut n = 0u64;
            while left > 0 {
                fill_random(buf.as_mut_slice(), 0x5EED ^ n);
                // A last partial MiB is rounded up to the 4 KiB alignment.
                let len = (left.min(1 << 20) as usize).div_ceil(ALIGN) * ALIGN;
                f.write_all(&buf.as_slice()[..len]).map_err(|e| io_err(e, "cannot write the test file"))?;
                left = left.saturating_sub(len as u64);
                n += 1;
            }
            f.sync_all().map_err(|e| io_err(e, "cannot flush the test file"))?;
            // Whatever is still cached (buffered fallback) is dropped.
            // SAFETY: valid descriptor.
            unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
            std::mem::forget(guard);
        }
        let open = |direct: bool| {
            let mut o = OpenOptions::new();
            o.read(true).write(true);
            if direct {
                o.custom_flags(libc::O_DIRECT);
            }
            o.open(&path)
        };
        let (file, direct) = match (want_direct, open(want_direct)) {
            (true, Ok(f)) => (f, true),
            (true, Err(e)) if e.raw_os_error() == Some(libc::EINVAL) => (open(false).map_err(|e| io_err(e, "cannot open the test file"))?, false),
            (_, Ok(f)) => (f, false),
            (_, Err(e)) => {
                let _ = std::fs::remove_file(&path);
                return Err(io_err(e, "cannot open the test file"));
            }
        };
        Ok(TestFile { path, file, size, direct, owned: true })
    }

    /// Opens an existing file for side-by-side benchmarks, so storlab and a
    /// peer measure the very same file. Not offered to users: the CLI only
    /// ever writes a file of its own. The file is left in place.
    pub fn open_existing(path: &Path, want_direct: bool) -> Result<TestFile, BenchError> {
        let io_err = |e: std::io::Error| BenchError::Path { path: path.display().to_string(), message: e.to_string() };
        let size = std::fs::metadata(path).map_err(io_err)?.len();
        let mut o = OpenOptions::new();
        o.read(true).write(true);
        if want_direct {
            o.custom_flags(libc::O_DIRECT);
        }
        let file = o.open(path).map_err(io_err)?;
        Ok(TestFile { path: path.to_path_buf(), file, size, direct: want_direct, owned: false })
    }

    pub fn fd(&self) -> std::os::fd::RawFd {
        self.file.as_raw_fd()
    }
}

impl Drop for TestFile {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The folders a job file's `directory=` named under `--path` that storlab
/// made: removed at the end, deepest first, and only while empty.
#[derive(Debug, Default)]
pub struct CreatedDirs(Vec<PathBuf>);

impl CreatedDirs {
    /// Makes `rel` under `base`, noting each folder that was not there.
    pub fn make(base: &Path, rel: &Path) -> Result<CreatedDirs, BenchError> {
        let mut made = CreatedDirs::default();
        let mut at = base.to_path_buf();
        for c in rel.components() {
            at.push(c);
            if at.is_dir() {
                continue;
            }
            std::fs::create_dir(&at).map_err(|e| BenchError::Path { path: at.display().to_string(), message: format!("cannot create the job file's directory: {e}") })?;
            made.0.push(at.clone());
        }
        Ok(made)
    }
}

impl Drop for CreatedDirs {
    fn drop(&mut self) {
        for d in self.0.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos() as u64);
    (t << 16) ^ N.fetch_add(1, Ordering::Relaxed)
}
