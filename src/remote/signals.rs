//! Signal numbers on the wire: the remote protocol numbers signals as gdb does (the old Sun
//! order: SIGUSR1 is 30, SIGCHLD 20), not as Linux does (measured against gdbserver 13:
//! `raise(SIGUSR1)` is reported as `T1e`).

/// (Linux number, protocol number) where they differ or both exist.
const TABLE: [(i32, u8); 31] = [
    (1, 1),   // SIGHUP
    (2, 2),   // SIGINT
    (3, 3),   // SIGQUIT
    (4, 4),   // SIGILL
    (5, 5),   // SIGTRAP
    (6, 6),   // SIGABRT
    (7, 10),  // SIGBUS
    (8, 8),   // SIGFPE
    (9, 9),   // SIGKILL
    (10, 30), // SIGUSR1
    (11, 11), // SIGSEGV
    (12, 31), // SIGUSR2
    (13, 13), // SIGPIPE
    (14, 14), // SIGALRM
    (15, 15), // SIGTERM
    (17, 20), // SIGCHLD
    (18, 19), // SIGCONT
    (19, 17), // SIGSTOP
    (20, 18), // SIGTSTP
    (21, 21), // SIGTTIN
    (22, 22), // SIGTTOU
    (23, 16), // SIGURG
    (24, 24), // SIGXCPU
    (25, 25), // SIGXFSZ
    (26, 26), // SIGVTALRM
    (27, 27), // SIGPROF
    (28, 28), // SIGWINCH
    (29, 23), // SIGIO
    (30, 32), // SIGPWR
    (31, 12), // SIGSYS
    (32, 77), // the first real-time signal (glibc's own)
];

/// How a stub numbers signals: as gdb does, or as Linux does (lldb-server's
/// `native-signals+`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Numbering {
    Gdb,
    Native,
}

impl Numbering {
    /// The Linux signal a number on the wire stands for, if any.
    pub(crate) fn to_linux(self, wire: u8) -> Option<i32> {
        match self {
            Numbering::Gdb => to_linux(wire),
            Numbering::Native => (1..=64).contains(&wire).then_some(i32::from(wire)),
        }
    }

    /// The number on the wire of a Linux signal, if it has one.
    pub(crate) fn to_wire(self, linux: i32) -> Option<u8> {
        match self {
            Numbering::Gdb => to_wire(linux),
            Numbering::Native => u8::try_from(linux).ok().filter(|s| (1..=64).contains(s)),
        }
    }

    /// Whether a stop with this signal can be the stub's answer to the interrupt byte:
    /// gdbserver says SIGINT (or 0), lldb-server the SIGSTOP it stops the program with.
    pub(crate) fn answers_interrupt(self, wire: u8) -> bool {
        match self {
            Numbering::Gdb => wire == 2 || wire == 0,
            Numbering::Native => matches!(wire, 0 | 2 | 19),
        }
    }
}

/// The Linux signal a protocol number stands for, if any.
fn to_linux(wire: u8) -> Option<i32> {
    match wire {
        45..=75 => Some(i32::from(wire) - 45 + 33),
        78 => Some(64),
        _ => TABLE.iter().find(|&&(_, w)| w == wire).map(|&(l, _)| l),
    }
}

/// The protocol number of a Linux signal, if it has one.
fn to_wire(linux: i32) -> Option<u8> {
    match linux {
        33..=63 => u8::try_from(linux - 33 + 45).ok(),
        64 => Some(78),
        _ => TABLE.iter().find(|&&(l, _)| l == linux).map(|&(_, w)| w),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_gdbserver_reports_them() {
        // Measured: raise(n) under gdbserver 13 gives these stop replies.
        for (linux, wire) in [(7, 0x0a), (10, 0x1e), (12, 0x1f), (17, 0x14), (18, 0x13)] {
            assert_eq!(to_wire(linux), Some(wire));
            assert_eq!(to_linux(wire), Some(linux));
        }
        for (linux, wire) in [(20, 0x12), (31, 0x0c), (34, 0x2e), (40, 0x34), (64, 0x4e)] {
            assert_eq!(to_wire(linux), Some(wire));
            assert_eq!(to_linux(wire), Some(linux));
        }
        assert_eq!(to_linux(7), None, "SIGEMT has no Linux signal");
        assert_eq!(to_wire(16), None, "SIGSTKFLT has no protocol number");
    }
}
