//! Opening files whose names come from the target: source paths in debug information, the
//! files a core names, debug-file candidates. Any of them may name a FIFO (where `open`
//! blocks until a writer comes), a device (`/dev/zero` never ends, a tty changes state),
//! or `/dev/stdin` and `/proc/self/fd/N`, which are scry's own protocol stream. So they are
//! opened without blocking and without taking a controlling terminal, and kept only when the
//! open file itself (not the name, which can change between a look and the open) is a
//! regular file.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens `path` for reading only if it is a regular file.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(file)
}

/// The contents of the regular file at `path`, refused when larger than `limit` bytes.
pub(crate) fn read_regular(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let len = file.metadata()?.len();
    if len > limit {
        return Err(std::io::Error::other(format!(
            "{len} bytes, more than the {limit} read from such a file"
        )));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // Bounded even if the file grows while it is read.
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other(format!(
            "it grew past {limit} bytes while being read"
        )));
    }
    Ok(bytes)
}

/// Renames `from` to `to` unless `to` exists (then `AlreadyExists`, and nothing changed):
/// one atomic step, so nothing created at `to` after a look is ever replaced.
pub(crate) fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::other("a path with a NUL byte"))
    };
    let (from_c, to_c) = (c(from)?, c(to)?);
    // SAFETY: both paths are NUL-terminated strings we own; renameat2 only reads them.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from_c.as_ptr(),
            libc::AT_FDCWD,
            to_c.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    if err.raw_os_error() != Some(libc::EINVAL) {
        return Err(err);
    }
    // A file system without RENAME_NOREPLACE: a hard link fails the same way when `to`
    // exists.
    std::fs::hard_link(from, to)?;
    std::fs::remove_file(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_open() {
        let err = |p: &str| open_regular(Path::new(p)).unwrap_err().to_string();
        assert_eq!(err("/dev/null"), "not a regular file");
        assert_eq!(err("/dev/zero"), "not a regular file");
        assert!(open_regular(Path::new("/proc/self/exe")).is_ok());
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        assert!(read_regular(&exe, 10)
            .unwrap_err()
            .to_string()
            .contains("more than the 10"));
    }

    #[test]
    fn rename_never_replaces() {
        let dir = std::env::temp_dir().join(format!("scry-rename-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::write(&a, "new").unwrap();
        std::fs::write(&b, "old").unwrap();
        let e = rename_noreplace(&a, &b).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "old");
        std::fs::remove_file(&b).unwrap();
        rename_noreplace(&a, &b).unwrap();
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "new");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_fifo_does_not_block() {
        let dir = std::env::temp_dir().join(format!("scry-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("pipe");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated name we own.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let started = std::time::Instant::now();
        assert!(open_regular(&fifo).is_err());
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
