//! A guard against being stopped by the program scry debugs. A traced program can read its
//! tracer's pid (`TracerPid` in /proc/self/status) and send it SIGSTOP, which no process can
//! catch or block: scry would freeze with it, and every call of the harness with it. So in
//! pipe mode, in a session daemon and in the MCP server, scry leaves a small guardian process
//! behind (double-forked, so it is nobody's business to reap and not scry's child) that looks
//! at scry every 50 ms and sends SIGCONT when it finds it stopped. Not on a terminal: there a
//! stop is the user's own Ctrl-Z. A program scry traces that ptrace-attaches scry holds it in a
//! stop SIGCONT cannot end (scry is not dumpable, so only a program with CAP_SYS_PTRACE can);
//! the guardian ends that program after 0.1 s. The guardian ends when scry does.
//!
//! The guardian is forked from a process that may have threads, so it runs only
//! async-signal-safe calls on stack buffers: no allocation, no locks.

use std::sync::atomic::{AtomicI32, Ordering};

/// Starts the guardian of the calling process. Best effort: on failure scry goes on without.
/// `SCRY_GUARDIAN=0` in the environment leaves it out.
pub(crate) fn start() {
    if std::env::var_os("SCRY_GUARDIAN").is_some_and(|v| v == "0") {
        return;
    }
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let Some(born) = start_time(me) else {
        return;
    };
    // The guardian tells scry which program it ended through this pipe (4 bytes a pid).
    let mut pipe = [-1 as libc::c_int; 2];
    // SAFETY: pipe2 writes two fds into the array we own.
    if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        pipe = [-1, -1];
    }
    // SAFETY: the child only calls fork, _exit and (in the grandchild) `guard`, which uses
    // async-signal-safe calls alone; the parent reaps the child it made.
    unsafe {
        let child = libc::fork();
        if child == 0 {
            if libc::fork() == 0 {
                guard(me, born, pipe[1]);
            }
            libc::_exit(0);
        }
        if child > 0 {
            let mut status = 0;
            libc::waitpid(child, &mut status, 0);
        }
        if pipe[1] >= 0 {
            libc::close(pipe[1]);
        }
    }
    REPORTS.store(pipe[0], Ordering::SeqCst);
}

/// The read end of the guardian's pipe (-1 without one).
static REPORTS: AtomicI32 = AtomicI32::new(-1);

/// The program the guardian ended since the last look because it held scry in a ptrace stop
/// (see the module comment), if it did.
pub(crate) fn ended_attacker() -> Option<i32> {
    let fd = REPORTS.load(Ordering::SeqCst);
    if fd < 0 {
        return None;
    }
    let mut bytes = [0u8; 4];
    // SAFETY: reads at most 4 bytes into our buffer from a non-blocking pipe we own.
    let n = unsafe { libc::read(fd, bytes.as_mut_ptr().cast(), 4) };
    (n == 4).then(|| i32::from_ne_bytes(bytes))
}

/// The guardian's loop. Never returns.
unsafe fn guard(scry: libc::pid_t, born: u64, report: libc::c_int) -> ! {
    // Hold none of scry's files but the report pipe: its stdout must reach end of file when
    // scry exits.
    let report = if report >= 0 {
        libc::fcntl(report, libc::F_DUPFD, 1000)
    } else {
        -1
    };
    libc::syscall(libc::SYS_close_range, 0u32, 999u32, 0u32);
    if report >= 0 {
        libc::syscall(libc::SYS_close_range, (report + 1) as u32, u32::MAX, 0u32);
    } else {
        libc::syscall(libc::SYS_close_range, 1000u32, u32::MAX, 0u32);
    }
    let mut all: libc::sigset_t = std::mem::zeroed();
    libc::sigfillset(&mut all);
    libc::sigprocmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: 50_000_000,
    };
    let mut held_by = 0;
    let mut held_for = 0;
    loop {
        libc::nanosleep(&pause, std::ptr::null_mut());
        match read_stat(scry) {
            // The same process (not a later one with a reused pid), stopped: wake it.
            Some((state, started)) if started == born => {
                if state == b'T' {
                    libc::kill(scry, libc::SIGCONT);
                }
                // Held in a ptrace stop by a program scry itself traces (only a process with
                // CAP_SYS_PTRACE can attach to scry, which is not dumpable): neither can move
                // until the other does. Ending that program is the only way out.
                let tracer = if state == b't' { tracer_of(scry) } else { None };
                match tracer {
                    Some(t) if tracer_of(t) == Some(scry) => {
                        held_for = if t == held_by { held_for + 1 } else { 1 };
                        held_by = t;
                        if held_for >= 2 && libc::kill(t, libc::SIGKILL) == 0 && report >= 0 {
                            libc::write(report, t.to_ne_bytes().as_ptr().cast(), 4);
                            held_for = 0;
                        }
                    }
                    _ => held_for = 0,
                }
            }
            _ => libc::_exit(0),
        }
    }
}

/// `TracerPid` of /proc/PID/status, when it is not 0.
fn tracer_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let mut buf = [0u8; 2048];
    let got = read_proc(pid, b"/status", &mut buf)?;
    let text = &buf[..got];
    let key = b"TracerPid:";
    let at = text.windows(key.len()).position(|w| w == key)? + key.len();
    let mut value: libc::pid_t = 0;
    for &b in text[at..]
        .iter()
        .skip_while(|b| **b == b'\t' || **b == b' ')
    {
        if !b.is_ascii_digit() {
            break;
        }
        value = value
            .checked_mul(10)?
            .checked_add((b - b'0') as libc::pid_t)?;
    }
    (value > 0).then_some(value)
}

fn start_time(pid: libc::pid_t) -> Option<u64> {
    read_stat(pid).map(|(_, t)| t)
}

/// The state letter and start time (field 22) from /proc/PID/stat, read into a stack buffer.
fn read_stat(pid: libc::pid_t) -> Option<(u8, u64)> {
    let mut buf = [0u8; 1024];
    let got = read_proc(pid, b"/stat", &mut buf)?;
    parse_stat(&buf[..got])
}

/// Reads /proc/PID<name> into `buf` with no allocation; the bytes read.
fn read_proc(pid: libc::pid_t, name: &[u8], buf: &mut [u8]) -> Option<usize> {
    let mut path = [0u8; 48];
    let prefix = b"/proc/";
    path[..prefix.len()].copy_from_slice(prefix);
    let mut at = prefix.len();
    let mut digits = [0u8; 12];
    let mut n = pid as u64;
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in (0..len).rev() {
        path[at] = digits[i];
        at += 1;
    }
    path[at..at + name.len()].copy_from_slice(name);
    // SAFETY: `path` is NUL-terminated (zero-filled past the name); read fills our buffer.
    let got = unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let got = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        got
    };
    (got > 0).then_some(got as usize)
}

/// Pure: the state and start time of a /proc/PID/stat line. The command name in parentheses
/// may contain anything, so fields are counted after the last `)`.
fn parse_stat(stat: &[u8]) -> Option<(u8, u64)> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    let mut fields = stat[close + 1..]
        .split(|&b| b == b' ')
        .filter(|f| !f.is_empty());
    let state = *fields.next()?.first()?;
    // The state is field 3; the start time is field 22.
    let started = fields.nth(18)?;
    let mut value = 0u64;
    for &d in started {
        if !d.is_ascii_digit() {
            break;
        }
        value = value.checked_mul(10)?.checked_add((d - b'0') as u64)?;
    }
    Some((state, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_state_and_start_time_past_a_hostile_name() {
        let line = b"42 (a) b) T 1 42 42 0 -1 4194304 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(parse_stat(line), Some((b'T', 987654)));
        assert_eq!(parse_stat(b"garbage"), None);
        // SAFETY: getpid has no preconditions.
        let me = unsafe { libc::getpid() };
        let (state, started) = read_stat(me).unwrap();
        assert!(state == b'R' || state == b'S', "{}", state as char);
        assert!(started > 0);
    }
}
