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

/// `SIGSEGV` for 11; real-time signals as `SIGRT<n>`.
pub fn signal_name(sig: i32) -> String {
    match NAMES.iter().find(|(_, n)| *n == sig) {
        Some((name, _)) => (*name).to_string(),
        None if (32..=64).contains(&sig) => format!("SIGRT{}", sig - 32),
        None => format!("SIG{sig}"),
    }
}

/// Accepts `SIGSEGV`, `segv`, `11`.
pub fn signal_number(name: &str) -> Option<i32> {
    let name = name.trim();
    if let Ok(n) = name.parse::<i32>() {
        return (1..=64).contains(&n).then_some(n);
    }
    let upper = name.to_ascii_uppercase();
    let full = if upper.starts_with("SIG") {
        upper
    } else {
        format!("SIG{upper}")
    };
    if let Some(rest) = full.strip_prefix("SIGRT") {
        return rest
            .parse::<i32>()
            .ok()
            .filter(|n| (0..=32).contains(n))
            .map(|n| n + 32);
    }
    NAMES.iter().find(|(n, _)| *n == full).map(|(_, n)| *n)
}

/// Signals whose siginfo carries a meaningful fault address (`si_addr`).
pub fn has_fault_addr(sig: i32) -> bool {
    matches!(sig, 4 | 7 | 8 | 11)
}

/// Signals that by default do not stop a run: they are routine for the programs that use them
/// (timers, child bookkeeping, window changes), and stopping on each would bury the user.
pub fn passes_silently(sig: i32) -> bool {
    matches!(sig, 14 | 17 | 23 | 26 | 27 | 28 | 29 | 18)
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
    }
}
