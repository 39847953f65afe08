//! Pipe queries.

use std::os::fd::AsRawFd;

/// Bytes written into a pipe and not yet read (FIONREAD); 0 when the query fails.
pub fn pending_bytes(fd: &impl AsRawFd) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer we own.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) };
    if rc == 0 && n > 0 {
        n as usize
    } else {
        0
    }
}
