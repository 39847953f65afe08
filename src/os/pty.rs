//! A pseudo-terminal of the program's own: its controlling terminal when scry runs at one.
//! Without it a program that opens `/dev/tty` would reach scry's terminal directly, past the
//! capture (and so past the protocol's escaping: a forged status line), and reading it from
//! its own process group would stop it with SIGTTIN.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::OsError;

pub(crate) struct Pty {
    /// What the program writes to its terminal comes out here.
    pub master: OwnedFd,
    /// The terminal's path, for the child to open (which makes it its controlling terminal).
    pub slave: CString,
    /// scry's own hold on the terminal: without one, the master reads as hung up whenever
    /// the program has it closed (before it opens `/dev/tty`, between two opens).
    pub hold: OwnedFd,
}

impl Pty {
    /// A new pty: no echo, no output processing (what the program writes is what is
    /// captured), the size of scry's own terminal on stdin if it has one.
    pub(crate) fn open() -> Result<Pty, OsError> {
        let fail = |what: &str| OsError::Spawn(format!("pty: {what}: {}", nix::Error::last()));
        // SAFETY: posix_openpt returns a new fd or -1.
        let fd = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(fail("posix_openpt"));
        }
        // SAFETY: the fd was just opened and is ours.
        let master = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut name = [0 as libc::c_char; 128];
        // SAFETY: grantpt/unlockpt take our master fd; ptsname_r writes at most `len` bytes.
        unsafe {
            if libc::grantpt(fd) != 0 || libc::unlockpt(fd) != 0 {
                return Err(fail("unlockpt"));
            }
            if libc::ptsname_r(fd, name.as_mut_ptr(), name.len()) != 0 {
                return Err(fail("ptsname"));
            }
        }
        // SAFETY: ptsname_r wrote a NUL-terminated string into `name`.
        let slave = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }.to_owned();
        // SAFETY: opens the terminal just made, without making it scry's own.
        let hold = unsafe {
            libc::open(
                slave.as_ptr(),
                libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
            )
        };
        if hold < 0 {
            return Err(fail("open"));
        }
        // SAFETY: the fd was just opened and is ours.
        let hold = unsafe { OwnedFd::from_raw_fd(hold) };
        // SAFETY: termios and winsize calls on fds we own or scry's stdin, into structs we own.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(master.as_raw_fd(), &mut t) == 0 {
                t.c_oflag &= !libc::OPOST;
                t.c_lflag &= !(libc::ECHO | libc::ECHONL);
                libc::tcsetattr(master.as_raw_fd(), libc::TCSANOW, &t);
            }
            let mut size: libc::winsize = std::mem::zeroed();
            if libc::ioctl(0, libc::TIOCGWINSZ, &mut size) == 0 {
                libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &size);
            }
        }
        Ok(Pty {
            master,
            slave,
            hold,
        })
    }
}

/// In a forked child before exec: a new session, with `tty` (a pty's path) as its controlling
/// terminal when given. Only async-signal-safe calls.
///
/// # Safety
/// Fit only for a child between fork and exec.
pub(crate) unsafe fn new_session(tty: Option<&CString>) {
    libc::setsid();
    if let Some(path) = tty {
        // Opened by a session leader without O_NOCTTY, it becomes the controlling terminal;
        // the fd itself is not needed after that.
        let fd = libc::open(path.as_ptr(), libc::O_RDWR);
        if fd >= 0 {
            libc::ioctl(fd, libc::TIOCSCTTY, 0);
            if fd > 2 {
                libc::close(fd);
            }
        }
    }
}

/// Whether scry's stdin is a terminal (then a spawned program gets one of its own).
pub(crate) fn stdin_is_terminal() -> bool {
    // SAFETY: isatty only looks at the fd.
    unsafe { libc::isatty(0) == 1 }
}
