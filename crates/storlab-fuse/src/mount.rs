//! Mount points: what is mounted where, stale mounts left by a killed
//! emulator (the kernel answers ENOTCONN), and clearing them.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Unescapes the octal escapes of /proc/self/mountinfo (`\040` is a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() + 0 && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            out.push(u8::from_str_radix(&s[i + 1..i + 4], 8).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every mount point and its file-system type.
pub fn mounts() -> Vec<(PathBuf, String)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let dash = f.iter().position(|x| *x == "-")?;
            Some((PathBuf::from(unescape(f.get(4)?)), f.get(dash + 1)?.to_string()))
        })
        .collect()
}

/// The file-system type mounted at `dir`, if something is.
pub fn mounted_at(dir: &Path) -> Option<String> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    mounts().into_iter().rev().find(|(p, _)| *p == dir).map(|(_, t)| t)
}

/// A FUSE mount whose server is gone: the kernel answers ENOTCONN.
pub fn is_stale(dir: &Path) -> bool {
    // Opening the folder asks the server (a stat may come from cached attributes).
    let gone = |e: std::io::Error| e.raw_os_error() == Some(libc::ENOTCONN);
    match std::fs::metadata(dir) {
        Err(e) => gone(e),
        Ok(m) if m.is_dir() => std::fs::read_dir(dir).err().is_some_and(gone),
        Ok(_) => false,
    }
}

/// Unmounts `dir`; a busy mount is detached (it goes once its last user
/// leaves).
pub fn unmount(dir: &Path) -> std::io::Result<()> {
    let c = CString::new(dir.as_os_str().as_bytes()).unwrap_or_default();
    if unsafe { libc::umount2(c.as_ptr(), 0) } == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EPERM) {
        // Not root: the setuid helper.
        let st = std::process::Command::new("fusermount3").arg("-u").arg("-z").arg(dir).status()?;
        return if st.success() { Ok(()) } else { Err(std::io::Error::other("fusermount3 -u failed")) };
    }
    if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } == 0 {
        return Ok(());
    }
    Err(std::io::Error::last_os_error())
}

/// Ends a FUSE connection whose server stopped answering, so that
/// processes blocked on it get an error instead of waiting forever.
pub fn abort_connection(dev_minor: u32) {
    let dir = Path::new("/sys/fs/fuse/connections");
    if dir.exists() && !dir.join(dev_minor.to_string()).exists() {
        // fusectl is not always mounted; as root we can mount it.
        let (none, at, fstype) = (CString::new("none").unwrap(), CString::new("/sys/fs/fuse/connections").unwrap(), CString::new("fusectl").unwrap());
        unsafe { libc::mount(none.as_ptr(), at.as_ptr(), fstype.as_ptr(), 0, std::ptr::null()) };
    }
    let _ = std::fs::write(dir.join(dev_minor.to_string()).join("abort"), "1");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape(r"/tmp/a\040b"), "/tmp/a b");
        assert_eq!(unescape(r"/plain"), "/plain");
    }

    #[test]
    fn the_root_is_a_mount_point() {
        assert!(mounted_at(Path::new("/")).is_some());
        assert!(!is_stale(Path::new("/")));
    }
}
