//! Pipe queries.

use std::os::fd::AsRawFd;

/// Bytes written into a pipe and not yet read (FIONREAD); 0 when the query fails.
pub(crate) fn pending_bytes(fd: &impl AsRawFd) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer we own.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) };
    if rc == 0 && n > 0 {
        n as usize
    } else {
        0
    }
}

/// Blocks until `fd` has bytes to read or its write end is closed (or poll fails).
pub(crate) fn wait_readable(fd: &impl AsRawFd) {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: polls one pollfd we own, without a timeout.
        let rc = unsafe { libc::poll(&mut pfd, 1, -1) };
        if rc >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// Whether `fd` has something to read within `ms` milliseconds.
pub(crate) fn readable_within(fd: &impl AsRawFd, ms: i32) -> bool {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: polls one pollfd we own.
    unsafe { libc::poll(&mut pfd, 1, ms) == 1 && pfd.revents & libc::POLLIN != 0 }
}

/// The write end is closed (POLLHUP), checked without waiting.
pub(crate) fn is_hung_up(fd: &impl AsRawFd) -> bool {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: polls one pollfd we own, returning at once.
    let rc = unsafe { libc::poll(&mut pfd, 1, 0) };
    rc < 0 || pfd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}
