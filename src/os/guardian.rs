//! A guard against being stopped by the program scry debugs. A traced program can read its
//! tracer's pid (`TracerPid` in /proc/self/status) and send it SIGSTOP, which no process can
//! catch or block: scry would freeze with it, and every call of the harness with it. So in
//! pipe mode, in a session daemon and in the MCP server, scry leaves a small guardian process
//! behind (double-forked, so it is nobody's business to reap and not scry's child) that looks
//! at scry every 50 ms and sends SIGCONT when it finds it stopped. Not on a terminal: there a
//! stop is the user's own Ctrl-Z. The guardian ends when scry does.
//!
//! The guardian is forked from a process that may have threads, so it runs only
//! async-signal-safe calls on stack buffers: no allocation, no locks.

/// Starts the guardian of the calling process. Best effort: on failure scry goes on without.
/// `SCRY_GUARDIAN=0` in the environment leaves it out.
pub fn start() {
    if std::env::var_os("SCRY_GUARDIAN").is_some_and(|v| v == "0") {
        return;
    }
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let Some(born) = start_time(me) else {
        return;
    };
    // SAFETY: the child only calls fork, _exit and (in the grandchild) `guard`, which uses
    // async-signal-safe calls alone; the parent reaps the child it made.
    unsafe {
        let child = libc::fork();
        if child == 0 {
            if libc::fork() == 0 {
                guard(me, born);
            }
            libc::_exit(0);
        }
        if child > 0 {
            let mut status = 0;
            libc::waitpid(child, &mut status, 0);
        }
    }
}

/// The guardian's loop. Never returns.
unsafe fn guard(scry: libc::pid_t, born: u64) -> ! {
    // Hold none of scry's files: its stdout must reach end of file when scry exits.
    libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
    let mut all: libc::sigset_t = std::mem::zeroed();
    libc::sigfillset(&mut all);
    libc::sigprocmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: 50_000_000,
    };
    loop {
        libc::nanosleep(&pause, std::ptr::null_mut());
        match read_stat(scry) {
            // The same process (not a later one with a reused pid), stopped: wake it.
            Some((state, started)) if started == born => {
                if state == b'T' {
                    libc::kill(scry, libc::SIGCONT);
                }
            }
            _ => libc::_exit(0),
        }
    }
}

fn start_time(pid: libc::pid_t) -> Option<u64> {
    read_stat(pid).map(|(_, t)| t)
}

/// The state letter and start time (field 22) from /proc/PID/stat, read into a stack buffer.
fn read_stat(pid: libc::pid_t) -> Option<(u8, u64)> {
    let mut path = [0u8; 32];
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
    path[at..at + 5].copy_from_slice(b"/stat");
    let mut buf = [0u8; 1024];
    // SAFETY: `path` is NUL-terminated (zero-filled past `at + 5`); read fills our buffer.
    let got = unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let got = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        got
    };
    if got <= 0 {
        return None;
    }
    parse_stat(&buf[..got as usize])
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
