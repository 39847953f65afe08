//! Signal names and numbers (x86-64 Linux numbering).

const NAMES: [(&str, i32); 31] = [
    ("SIGHUP", 1),
    ("SIGINT", 2),
    ("SIGQUIT", 3),
    ("SIGILL", 4),
    ("SIGTRAP", 5),
    ("SIGABRT", 6),
    ("SIGBUS", 7),
    ("SIGFPE", 8),
    ("SIGKILL", 9),
    ("SIGUSR1", 10),
    ("SIGSEGV", 11),
    ("SIGUSR2", 12),
    ("SIGPIPE", 13),
    ("SIGALRM", 14),
    ("SIGTERM", 15),
    ("SIGSTKFLT", 16),
    ("SIGCHLD", 17),
    ("SIGCONT", 18),
    ("SIGSTOP", 19),
    ("SIGTSTP", 20),
    ("SIGTTIN", 21),
    ("SIGTTOU", 22),
    ("SIGURG", 23),
    ("SIGXCPU", 24),
    ("SIGXFSZ", 25),
    ("SIGVTALRM", 26),
    ("SIGPROF", 27),
    ("SIGWINCH", 28),
    ("SIGIO", 29),
    ("SIGPWR", 30),
    ("SIGSYS", 31),
];

/// The trap signal: a debugger's own, never passed to the program by a recorder.
pub(crate) const SIGTRAP: i32 = libc::SIGTRAP;
/// glibc keeps the first two real-time signals for itself (thread cancellation, and
/// setuid/setgid broadcast to every thread), so a program's SIGRTMIN is 34.
pub(crate) const SIGCANCEL: i32 = 32;
pub(crate) const SIGSETXID: i32 = 33;
const SIGRTMIN: i32 = 34;
const SIGRTMAX: i32 = 64;

/// `SIGSEGV` for 11; real-time signals the way users know them from glibc: `SIGRTMIN+n`
/// (SIGRTMIN = 34), `SIGRTMAX` (64), and glibc's own 32 and 33 by their use.
pub(crate) fn signal_name(sig: i32) -> String {
    match sig {
        SIGCANCEL => "SIGCANCEL".into(),
        SIGSETXID => "SIGSETXID".into(),
        SIGRTMIN => "SIGRTMIN".into(),
        SIGRTMAX => "SIGRTMAX".into(),
        35..=63 => format!("SIGRTMIN+{}", sig - SIGRTMIN),
        _ => match NAMES.iter().find(|(_, n)| *n == sig) {
            Some((name, _)) => (*name).to_string(),
            None => format!("SIG{sig}"),
        },
    }
}

/// Accepts `SIGSEGV`, `segv`, `11`, `SIGRTMIN+3`, `SIGRTMAX-2`, `SIG37`, `SIGCANCEL`.
pub(crate) fn signal_number(name: &str) -> Option<i32> {
    let name = name.trim();
    let valid = |n: i32| (1..=64).contains(&n).then_some(n);
    if let Ok(n) = name.parse::<i32>() {
        return valid(n);
    }
    let upper = name.to_ascii_uppercase().replace(' ', "");
    let full = if upper.starts_with("SIG") {
        upper
    } else {
        format!("SIG{upper}")
    };
    let offset = |rest: &str| -> Option<i32> {
        match rest {
            "" => Some(0),
            _ => rest.parse::<i32>().ok(),
        }
    };
    if let Some(rest) = full.strip_prefix("SIGRTMIN") {
        let n = SIGRTMIN + offset(rest.strip_prefix('+').unwrap_or(rest))?;
        return (SIGRTMIN..=SIGRTMAX).contains(&n).then_some(n);
    }
    if let Some(rest) = full.strip_prefix("SIGRTMAX") {
        let n = SIGRTMAX - offset(rest.strip_prefix('-').unwrap_or(rest))?.abs();
        return (SIGRTMIN..=SIGRTMAX).contains(&n).then_some(n);
    }
    match full.as_str() {
        "SIGCANCEL" => return Some(SIGCANCEL),
        "SIGSETXID" => return Some(SIGSETXID),
        "SIGIOT" => return Some(libc::SIGABRT),
        "SIGPOLL" => return Some(libc::SIGIO),
        "SIGCLD" => return Some(libc::SIGCHLD),
        _ => {}
    }
    if let Some(n) = full.strip_prefix("SIG").and_then(|d| d.parse::<i32>().ok()) {
        return valid(n);
    }
    NAMES.iter().find(|(n, _)| *n == full).map(|(_, n)| *n)
}

/// True for signals numbered 32 and up, whose names alone are less known: stop lines add
/// the number.
pub(crate) fn is_realtime(sig: i32) -> bool {
    sig >= SIGCANCEL
}

/// Signals whose siginfo carries a meaningful fault address (`si_addr`).
pub(crate) fn has_fault_addr(sig: i32) -> bool {
    matches!(sig, 4 | 7 | 8 | 11)
}

/// Signals that by default do not stop a run: they are routine for the programs that use them
/// (timers, child bookkeeping, window changes), and stopping on each would bury the user.
/// glibc's SIGCANCEL and SIGSETXID are its own machinery (pthread_cancel, setuid in a threaded
/// program): stopping on them would only show glibc talking to itself.
pub(crate) fn passes_silently(sig: i32) -> bool {
    matches!(
        sig,
        14 | 17 | 23 | 26 | 27 | 28 | 29 | 18 | SIGCANCEL | SIGSETXID
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for n in 1..=64 {
            assert_eq!(signal_number(&signal_name(n)), Some(n), "signal {n}");
        }
        assert_eq!(signal_number("segv"), Some(11));
        assert_eq!(signal_number("9"), Some(9));
        assert_eq!(signal_number("SIGNOPE"), None);
        assert_eq!(signal_number("0"), None);
        assert_eq!(signal_number("65"), None);
        assert_eq!(signal_name(34), "SIGRTMIN");
        assert_eq!(signal_name(36), "SIGRTMIN+2");
        assert_eq!(signal_name(64), "SIGRTMAX");
        assert_eq!(signal_name(32), "SIGCANCEL");
        assert_eq!(signal_number("SIGRTMAX-2"), Some(62));
        assert_eq!(signal_number("rtmin+1"), Some(35));
        assert_eq!(signal_number("SIG40"), Some(40));
        assert_eq!(signal_number("SIGRTMIN+31"), None);
        assert_eq!(signal_number("SIGRTMAX-31"), None);
        assert_eq!(signal_number("SIGSETXID"), Some(33));
    }
}
