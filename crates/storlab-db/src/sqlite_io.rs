//! What SQLite asks of the storage: a counting VFS ("storlab-count") that
//! wraps the platform's default VFS and counts each read, write and sync,
//! telling the write-ahead log apart from the database file, plus the page
//! cache's hits and misses (sqlite3_db_status) folded in after every
//! transaction. Every storlab SQLite connection opens through it.

use crate::error::{DbError, Result};
use crate::session::Outcome;
use rusqlite::ffi;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

static DB_READS: AtomicU64 = AtomicU64::new(0);
static DB_READ_BYTES: AtomicU64 = AtomicU64::new(0);
static DB_WRITES: AtomicU64 = AtomicU64::new(0);
static DB_WRITE_BYTES: AtomicU64 = AtomicU64::new(0);
static WAL_READS: AtomicU64 = AtomicU64::new(0);
static WAL_READ_BYTES: AtomicU64 = AtomicU64::new(0);
static WAL_WRITES: AtomicU64 = AtomicU64::new(0);
static WAL_WRITE_BYTES: AtomicU64 = AtomicU64::new(0);
static DB_SYNCS: AtomicU64 = AtomicU64::new(0);
static WAL_SYNCS: AtomicU64 = AtomicU64::new(0);
static CACHE_HITS: AtomicU64 = AtomicU64::new(0);
static CACHE_MISSES: AtomicU64 = AtomicU64::new(0);

pub const VFS_NAME: &CStr = c"storlab-count";

/// Our file: the base struct SQLite sees, whether it is a WAL, and the
/// parent VFS's file right behind it (szOsFile covers both).
#[repr(C)]
struct CountFile {
    base: ffi::sqlite3_file,
    wal: bool,
}

unsafe fn real(f: *mut ffi::sqlite3_file) -> *mut ffi::sqlite3_file {
    (f as *mut u8).add(std::mem::size_of::<CountFile>()) as *mut ffi::sqlite3_file
}

unsafe fn methods(f: *mut ffi::sqlite3_file) -> &'static ffi::sqlite3_io_methods {
    &*(*real(f)).pMethods
}

unsafe fn parent(v: *mut ffi::sqlite3_vfs) -> *mut ffi::sqlite3_vfs {
    (*v).pAppData as *mut ffi::sqlite3_vfs
}

unsafe extern "C" fn x_close(f: *mut ffi::sqlite3_file) -> c_int {
    let r = real(f);
    let rc = (methods(f).xClose.expect("xClose"))(r);
    (*f).pMethods = std::ptr::null();
    rc
}
unsafe extern "C" fn x_read(f: *mut ffi::sqlite3_file, buf: *mut c_void, amt: c_int, off: ffi::sqlite3_int64) -> c_int {
    let (n, b) = if (*(f as *mut CountFile)).wal { (&WAL_READS, &WAL_READ_BYTES) } else { (&DB_READS, &DB_READ_BYTES) };
    n.fetch_add(1, Relaxed);
    b.fetch_add(amt as u64, Relaxed);
    (methods(f).xRead.expect("xRead"))(real(f), buf, amt, off)
}
unsafe extern "C" fn x_write(f: *mut ffi::sqlite3_file, buf: *const c_void, amt: c_int, off: ffi::sqlite3_int64) -> c_int {
    let (n, b) = if (*(f as *mut CountFile)).wal { (&WAL_WRITES, &WAL_WRITE_BYTES) } else { (&DB_WRITES, &DB_WRITE_BYTES) };
    n.fetch_add(1, Relaxed);
    b.fetch_add(amt as u64, Relaxed);
    (methods(f).xWrite.expect("xWrite"))(real(f), buf, amt, off)
}
unsafe extern "C" fn x_truncate(f: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    (methods(f).xTruncate.expect("xTruncate"))(real(f), size)
}
unsafe extern "C" fn x_sync(f: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    if (*(f as *mut CountFile)).wal { &WAL_SYNCS } else { &DB_SYNCS }.fetch_add(1, Relaxed);
    (methods(f).xSync.expect("xSync"))(real(f), flags)
}
unsafe extern "C" fn x_file_size(f: *mut ffi::sqlite3_file, size: *mut ffi::sqlite3_int64) -> c_int {
    (methods(f).xFileSize.expect("xFileSize"))(real(f), size)
}
unsafe extern "C" fn x_lock(f: *mut ffi::sqlite3_file, l: c_int) -> c_int {
    (methods(f).xLock.expect("xLock"))(real(f), l)
}
unsafe extern "C" fn x_unlock(f: *mut ffi::sqlite3_file, l: c_int) -> c_int {
    (methods(f).xUnlock.expect("xUnlock"))(real(f), l)
}
unsafe extern "C" fn x_check_reserved_lock(f: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    (methods(f).xCheckReservedLock.expect("xCheckReservedLock"))(real(f), out)
}
unsafe extern "C" fn x_file_control(f: *mut ffi::sqlite3_file, op: c_int, arg: *mut c_void) -> c_int {
    (methods(f).xFileControl.expect("xFileControl"))(real(f), op, arg)
}
unsafe extern "C" fn x_sector_size(f: *mut ffi::sqlite3_file) -> c_int {
    (methods(f).xSectorSize.expect("xSectorSize"))(real(f))
}
unsafe extern "C" fn x_device_characteristics(f: *mut ffi::sqlite3_file) -> c_int {
    (methods(f).xDeviceCharacteristics.expect("xDeviceCharacteristics"))(real(f))
}
unsafe extern "C" fn x_shm_map(f: *mut ffi::sqlite3_file, pg: c_int, pgsz: c_int, extend: c_int, pp: *mut *mut c_void) -> c_int {
    match methods(f).xShmMap {
        Some(m) => m(real(f), pg, pgsz, extend, pp),
        None => ffi::SQLITE_IOERR,
    }
}
unsafe extern "C" fn x_shm_lock(f: *mut ffi::sqlite3_file, off: c_int, n: c_int, flags: c_int) -> c_int {
    match methods(f).xShmLock {
        Some(m) => m(real(f), off, n, flags),
        None => ffi::SQLITE_IOERR,
    }
}
unsafe extern "C" fn x_shm_barrier(f: *mut ffi::sqlite3_file) {
    if let Some(m) = methods(f).xShmBarrier {
        m(real(f))
    }
}
unsafe extern "C" fn x_shm_unmap(f: *mut ffi::sqlite3_file, del: c_int) -> c_int {
    match methods(f).xShmUnmap {
        Some(m) => m(real(f), del),
        None => ffi::SQLITE_OK,
    }
}
unsafe extern "C" fn x_fetch(f: *mut ffi::sqlite3_file, off: ffi::sqlite3_int64, amt: c_int, pp: *mut *mut c_void) -> c_int {
    match methods(f).xFetch {
        Some(m) => m(real(f), off, amt, pp),
        None => {
            *pp = std::ptr::null_mut();
            ffi::SQLITE_OK
        }
    }
}
unsafe extern "C" fn x_unfetch(f: *mut ffi::sqlite3_file, off: ffi::sqlite3_int64, p: *mut c_void) -> c_int {
    match methods(f).xUnfetch {
        Some(m) => m(real(f), off, p),
        None => ffi::SQLITE_OK,
    }
}

static IO_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: Some(x_shm_map),
    xShmLock: Some(x_shm_lock),
    xShmBarrier: Some(x_shm_barrier),
    xShmUnmap: Some(x_shm_unmap),
    xFetch: Some(x_fetch),
    xUnfetch: Some(x_unfetch),
};

unsafe extern "C" fn v_open(v: *mut ffi::sqlite3_vfs, name: *const c_char, f: *mut ffi::sqlite3_file, flags: c_int, out: *mut c_int) -> c_int {
    let p = parent(v);
    let cf = f as *mut CountFile;
    (*cf).wal = flags & ffi::SQLITE_OPEN_WAL != 0;
    let r = real(f);
    let rc = ((*p).xOpen.expect("xOpen"))(p, name, r, flags, out);
    (*f).pMethods = if rc == ffi::SQLITE_OK && !(*r).pMethods.is_null() { &IO_METHODS } else { std::ptr::null() };
    rc
}
unsafe extern "C" fn v_delete(v: *mut ffi::sqlite3_vfs, name: *const c_char, sync: c_int) -> c_int {
    let p = parent(v);
    ((*p).xDelete.expect("xDelete"))(p, name, sync)
}
unsafe extern "C" fn v_access(v: *mut ffi::sqlite3_vfs, name: *const c_char, flags: c_int, out: *mut c_int) -> c_int {
    let p = parent(v);
    ((*p).xAccess.expect("xAccess"))(p, name, flags, out)
}
unsafe extern "C" fn v_full_pathname(v: *mut ffi::sqlite3_vfs, name: *const c_char, n: c_int, out: *mut c_char) -> c_int {
    let p = parent(v);
    ((*p).xFullPathname.expect("xFullPathname"))(p, name, n, out)
}
unsafe extern "C" fn v_randomness(v: *mut ffi::sqlite3_vfs, n: c_int, out: *mut c_char) -> c_int {
    let p = parent(v);
    ((*p).xRandomness.expect("xRandomness"))(p, n, out)
}
unsafe extern "C" fn v_sleep(v: *mut ffi::sqlite3_vfs, us: c_int) -> c_int {
    let p = parent(v);
    ((*p).xSleep.expect("xSleep"))(p, us)
}
unsafe extern "C" fn v_current_time(v: *mut ffi::sqlite3_vfs, out: *mut f64) -> c_int {
    let p = parent(v);
    ((*p).xCurrentTime.expect("xCurrentTime"))(p, out)
}
unsafe extern "C" fn v_get_last_error(v: *mut ffi::sqlite3_vfs, n: c_int, out: *mut c_char) -> c_int {
    let p = parent(v);
    match (*p).xGetLastError {
        Some(m) => m(p, n, out),
        None => 0,
    }
}
unsafe extern "C" fn v_current_time_int64(v: *mut ffi::sqlite3_vfs, out: *mut ffi::sqlite3_int64) -> c_int {
    let p = parent(v);
    match (*p).xCurrentTimeInt64 {
        Some(m) => m(p, out),
        None => ffi::SQLITE_ERROR,
    }
}

/// Registers the counting VFS once per process.
fn register() -> Result<()> {
    // The VFS struct is leaked on purpose: SQLite keeps a pointer to it for
    // the life of the process.
    static DONE: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    let r = DONE.get_or_init(|| unsafe {
        let p = ffi::sqlite3_vfs_find(std::ptr::null());
        if p.is_null() {
            return Err("SQLite has no default VFS".into());
        }
        let v = Box::new(ffi::sqlite3_vfs {
            iVersion: 2,
            szOsFile: (*p).szOsFile + std::mem::size_of::<CountFile>() as c_int,
            mxPathname: (*p).mxPathname,
            pNext: std::ptr::null_mut(),
            zName: VFS_NAME.as_ptr(),
            pAppData: p as *mut c_void,
            xOpen: Some(v_open),
            xDelete: Some(v_delete),
            xAccess: Some(v_access),
            xFullPathname: Some(v_full_pathname),
            xDlOpen: None,
            xDlError: None,
            xDlSym: None,
            xDlClose: None,
            xRandomness: Some(v_randomness),
            xSleep: Some(v_sleep),
            xCurrentTime: Some(v_current_time),
            xGetLastError: Some(v_get_last_error),
            xCurrentTimeInt64: Some(v_current_time_int64),
            xSetSystemCall: None,
            xGetSystemCall: None,
            xNextSystemCall: None,
        });
        let v = Box::into_raw(v);
        match ffi::sqlite3_vfs_register(v, 0) {
            ffi::SQLITE_OK => Ok(()),
            rc => Err(format!("registering the counting VFS failed ({rc})")),
        }
    });
    r.clone().map_err(|e| DbError::sql("SQLite", e))
}

/// Opens a connection through the counting VFS with the settings every
/// storlab SQLite run uses: WAL, durable commits (synchronous = FULL: the WAL
/// is synced at every commit) and a long busy timeout so writers queue.
pub fn open(path: &Path) -> Result<rusqlite::Connection> {
    register()?;
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_CREATE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let c = rusqlite::Connection::open_with_flags_and_vfs(path, flags, VFS_NAME.to_str().expect("ascii")).map_err(|e| DbError::Connect {
        target: format!("sqlite {}", path.display()),
        reason: e.to_string(),
        hint: "check that --dir exists and is writable".into(),
    })?;
    c.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 60000;")
        .map_err(|e| DbError::sql(format!("configuring {}", path.display()), e))?;
    register_reverse(&c)?;
    Ok(c)
}

/// SQLite has no reverse(); the insert storm's index on an expression needs
/// a deterministic one, so every connection gets it.
fn register_reverse(c: &rusqlite::Connection) -> Result<()> {
    use rusqlite::functions::FunctionFlags;
    c.create_scalar_function("reverse", 1, FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC, |ctx| {
        let s: String = ctx.get(0)?;
        Ok(s.chars().rev().collect::<String>())
    })
    .map_err(|e| DbError::sql("registering reverse()", e))
}

/// Folds the connection's page-cache hits and misses since the last call
/// into the process totals.
pub fn account(c: &rusqlite::Connection) {
    let (mut cur, mut hi) = (0, 0);
    // SAFETY: a valid open handle; reset = 1 zeroes the connection's counter.
    unsafe {
        let h = c.handle();
        if ffi::sqlite3_db_status(h, ffi::SQLITE_DBSTATUS_CACHE_HIT, &mut cur, &mut hi, 1) == ffi::SQLITE_OK {
            CACHE_HITS.fetch_add(cur as u64, Relaxed);
        }
        if ffi::sqlite3_db_status(h, ffi::SQLITE_DBSTATUS_CACHE_MISS, &mut cur, &mut hi, 1) == ffi::SQLITE_OK {
            CACHE_MISSES.fetch_add(cur as u64, Relaxed);
        }
    }
}

/// Runs `body` between `begin` (if any) and a COMMIT (if `commit`); an
/// error rolls back, and so does a body returning Ok(false) (an intended
/// rollback). The page-cache counters are folded in either way.
pub fn txn(c: &rusqlite::Connection, begin: Option<&str>, commit: bool, body: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<bool>) -> Outcome {
    let r = (|| {
        if let Some(b) = begin {
            c.execute_batch(b)?;
        }
        if !body(c)? {
            return Ok(false);
        }
        if commit {
            c.execute_batch("COMMIT")?;
        }
        Ok::<_, rusqlite::Error>(true)
    })();
    let out = match r {
        Ok(true) => Outcome::Commit,
        Ok(false) => {
            let _ = c.execute_batch("ROLLBACK");
            Outcome::Rollback
        }
        Err(e) => {
            let _ = c.execute_batch("ROLLBACK");
            Outcome::Error(e.to_string())
        }
    };
    account(c);
    out
}

/// Runs `f` on a virtual user's connection on tokio's blocking pool (SQLite
/// calls block) and puts the connection back.
pub async fn on_pool<T: Send + 'static>(slot: &mut Option<rusqlite::Connection>, f: impl FnOnce(&rusqlite::Connection) -> T + Send + 'static) -> Result<T> {
    let c = slot.take().ok_or_else(|| DbError::sql("SQLite", "the connection was lost in an earlier call"))?;
    let (c, out) = tokio::task::spawn_blocking(move || {
        let out = f(&c);
        (c, out)
    })
    .await
    .map_err(|e| DbError::sql("SQLite", e))?;
    *slot = Some(c);
    Ok(out)
}

/// The process totals, under the names `monitor::io_profile` reads.
pub fn snapshot() -> BTreeMap<&'static str, f64> {
    let g = |a: &AtomicU64| a.load(Relaxed) as f64;
    BTreeMap::from([
        ("read_calls", g(&DB_READS) + g(&WAL_READS)),
        ("write_calls", g(&DB_WRITES) + g(&WAL_WRITES)),
        ("io_read_bytes", g(&DB_READ_BYTES) + g(&WAL_READ_BYTES)),
        ("io_write_bytes", g(&DB_WRITE_BYTES) + g(&WAL_WRITE_BYTES)),
        ("db_read_bytes", g(&DB_READ_BYTES)),
        ("db_write_bytes", g(&DB_WRITE_BYTES)),
        ("wal_read_bytes", g(&WAL_READ_BYTES)),
        ("wal_bytes", g(&WAL_WRITE_BYTES)),
        ("db_syncs", g(&DB_SYNCS)),
        ("wal_syncs", g(&WAL_SYNCS)),
        ("fsyncs", g(&DB_SYNCS) + g(&WAL_SYNCS)),
        ("blks_hit", g(&CACHE_HITS)),
        ("blks_read", g(&CACHE_MISSES)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_wal_writes_and_one_sync_per_commit() {
        let dir = std::env::temp_dir().join(format!("storlab-vfs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let c = open(&dir.join("t.db")).unwrap();
        c.execute_batch("CREATE TABLE t (x integer)").unwrap();
        let before = snapshot();
        for i in 0..10 {
            c.execute("INSERT INTO t VALUES (?1)", [i]).unwrap();
        }
        let after = snapshot();
        let d = |k: &str| after[k] - before[k];
        // Ten autocommit inserts with synchronous = FULL in WAL mode: each
        // commit appends at least one 4 KiB page frame (+24-byte header) to
        // the WAL and syncs it once (sqlite.org/wal.html, pragma synchronous).
        assert!(d("wal_syncs") >= 10.0, "{}", d("wal_syncs"));
        assert!(d("wal_bytes") >= 10.0 * 4096.0, "{}", d("wal_bytes"));
        assert_eq!(d("db_write_bytes"), 0.0, "no checkpoint for ten pages");
        drop(c);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
