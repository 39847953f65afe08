//! Names of the x86-64 system calls a stopped thread is most often found inside.

const NAMES: &[(u64, &str)] = &[
    (0, "read"),
    (1, "write"),
    (7, "poll"),
    (23, "select"),
    (34, "pause"),
    (35, "nanosleep"),
    (43, "accept"),
    (45, "recvfrom"),
    (47, "recvmsg"),
    (61, "wait4"),
    (128, "rt_sigtimedwait"),
    (130, "rt_sigsuspend"),
    (202, "futex"),
    (230, "clock_nanosleep"),
    (232, "epoll_wait"),
    (247, "waitid"),
    (270, "pselect6"),
    (271, "ppoll"),
    (281, "epoll_pwait"),
    (288, "accept4"),
    (441, "epoll_pwait2"),
];

/// `futex` for 202; `syscall 999` for one not in the table.
pub fn name(nr: u64) -> String {
    NAMES
        .iter()
        .find(|(n, _)| *n == nr)
        .map(|(_, s)| (*s).to_string())
        .unwrap_or_else(|| format!("syscall {nr}"))
}
