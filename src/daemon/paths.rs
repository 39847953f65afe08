//! Where sessions live: `$XDG_RUNTIME_DIR/scry/NAME.sock`, or `/tmp/scry-$UID/NAME.sock` when
//! that variable is unset. The directory is private to the user (mode 0700, owned by them)
//! and each socket is mode 0600, so only the user can reach a session.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::PathBuf;

/// `sun_path` holds 108 bytes including the terminating NUL.
const SOCKET_PATH_MAX: usize = 107;
const NAME_MAX: usize = 64;

/// The private directory of this user's sessions, created (mode 0700) when missing.
pub(crate) fn runtime_dir() -> Result<PathBuf, String> {
    let uid = user_id()?;
    let dir = match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(base) if !base.is_empty() => PathBuf::from(base).join("scry"),
        _ => PathBuf::from(format!("/tmp/scry-{uid}")),
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
    }
    // Not followed through a symlink: a directory someone else planted is refused.
    let meta = std::fs::symlink_metadata(&dir)
        .map_err(|e| format!("cannot use {}: {e}", dir.display()))?;
    if !meta.is_dir() || meta.uid() != uid {
        return Err(format!(
            "refusing {}: not a directory owned by this user",
            dir.display()
        ));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot make {} private: {e}", dir.display()))?;
    }
    Ok(dir)
}

/// This process's user id: the owner of `/proc/self` (no unsafe `getuid` call outside `os`).
fn user_id() -> Result<u32, String> {
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .map_err(|e| format!("cannot read /proc/self: {e}"))
}

/// Checks a session name: 1 to 64 of letters, digits, `.`, `_`, `-`, not starting with `.`.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let fine = !name.is_empty()
        && name.len() <= NAME_MAX
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if fine {
        Ok(())
    } else {
        Err(format!(
            "bad session name '{name}': use 1 to {NAME_MAX} letters, digits, '.', '_' or '-'"
        ))
    }
}

/// The socket of session `name` (the directory is created when missing).
pub(crate) fn socket_path(name: &str) -> Result<PathBuf, String> {
    check_name(name)?;
    let path = runtime_dir()?.join(format!("{name}.sock"));
    if path.as_os_str().len() > SOCKET_PATH_MAX {
        return Err(format!(
            "socket path {} is too long for a Unix socket; set XDG_RUNTIME_DIR to a shorter directory",
            path.display()
        ));
    }
    Ok(path)
}

/// The daemon's log (its stderr) next to the socket.
pub(crate) fn log_path(name: &str) -> Result<PathBuf, String> {
    check_name(name)?;
    Ok(runtime_dir()?.join(format!("{name}.log")))
}
