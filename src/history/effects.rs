//! What a system call writes into the calling process's memory, as far as a recorder must
//! know to take it back: nothing, some buffers (found from the arguments before the call),
//! or something it cannot know (a barrier). x86-64 call numbers.
//!
//! A buffer's length is its most: the recorder reads it whole before the call and keeps
//! only the bytes that changed, so a call that fills less than its buffer costs no more.

/// How long a buffer the kernel may fill is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Len {
    /// The value of this argument.
    Arg(usize),
    /// This many bytes.
    Fixed(u64),
    /// As many bytes as the `u32`/`socklen_t` this argument points to says (at most).
    Pointed(usize),
}

/// What a call writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Effects {
    /// Nothing in the process's memory (registers only).
    None,
    /// These buffers: `(argument holding the address, its length)`. A null address is no
    /// buffer.
    Buffers(Vec<(usize, Len)>),
    /// The buffers an array of `struct iovec` names: `(argument holding the array, argument
    /// holding its count)`.
    Iovec(usize, usize),
    /// What recvmsg fills through the `struct msghdr` this argument points to: the header
    /// itself, the source address, the iovec buffers and the control buffer.
    Msghdr(usize),
    /// What it does to memory is not known, or cannot be taken back (memory unmapped,
    /// replaced, a new image): going back past it is refused with this reason.
    Barrier(&'static str),
}

const MAP_FIXED: u64 = 0x10;
const TCGETS: u64 = 0x5401;
const TIOCGWINSZ: u64 = 0x5413;

/// The effects of call `nr` with arguments `args`.
pub(crate) fn of(nr: u64, args: &[u64; 6]) -> Effects {
    use Effects::{Barrier, Buffers};
    use Len::{Arg, Fixed, Pointed};
    let one = |arg: usize, len: Len| Buffers(vec![(arg, len)]);
    match nr {
        // read, pread64, readlink(at), getcwd, getrandom, getdents64, getxattr kin
        0 | 17 => one(1, Arg(2)),
        89 => one(1, Arg(2)),
        267 => one(2, Arg(3)),
        79 => one(0, Arg(1)),
        318 => one(0, Arg(1)),
        217 | 78 => one(1, Arg(2)),
        // readv, preadv, preadv2; process_vm_readv into this process's iovecs
        19 | 295 | 327 => Effects::Iovec(1, 2),
        310 => Effects::Iovec(1, 2),
        // recvmsg
        47 => Effects::Msghdr(1),
        // recvfrom: the buffer, the source address and its length
        45 => Buffers(vec![(1, Arg(2)), (4, Pointed(5)), (5, Fixed(4))]),
        // stat, fstat, lstat, newfstatat: struct stat is 144 bytes
        4..=6 => one(1, Fixed(144)),
        262 => one(2, Fixed(144)),
        // statx: 256 bytes
        332 => one(4, Fixed(256)),
        // statfs, fstatfs: 120 bytes
        137 | 138 => one(1, Fixed(120)),
        // clock_gettime, clock_getres: a timespec
        228 | 229 => one(1, Fixed(16)),
        // gettimeofday: timeval and timezone
        96 => Buffers(vec![(0, Fixed(16)), (1, Fixed(8))]),
        // time: an optional time_t
        201 => one(0, Fixed(8)),
        // nanosleep: what is left; clock_nanosleep likewise
        35 => one(1, Fixed(16)),
        230 => one(3, Fixed(16)),
        // rt_sigaction: the old action (sa_handler, flags, restorer, mask)
        13 => one(2, Fixed(32)),
        // rt_sigprocmask: the old set, as long as the size argument says
        14 => one(2, Arg(3)),
        // sigaltstack: the old stack
        131 => one(1, Fixed(24)),
        // pipe, pipe2, socketpair: two descriptors
        22 | 293 => one(0, Fixed(8)),
        53 => one(3, Fixed(8)),
        // uname
        63 => one(0, Fixed(390)),
        // sysinfo
        99 => one(0, Fixed(112)),
        // getrlimit, prlimit64 (the old limit), getrusage
        97 => one(1, Fixed(16)),
        302 => one(3, Fixed(16)),
        98 => one(1, Fixed(144)),
        // wait4: status and rusage; waitid: siginfo and rusage
        61 => Buffers(vec![(1, Fixed(4)), (3, Fixed(144))]),
        247 => Buffers(vec![(2, Fixed(128)), (4, Fixed(144))]),
        // getsockname, getpeername, accept, accept4: an address and its length
        51 | 52 | 43 | 288 => Buffers(vec![(1, Pointed(2)), (2, Fixed(4))]),
        // getsockopt: the value and its length
        55 => Buffers(vec![(3, Pointed(4)), (4, Fixed(4))]),
        // poll, ppoll: the revents of every entry (8 bytes each)
        7 => Buffers(vec![(0, Len::Fixed(8 * args[1].min(1 << 16)))]),
        // ppoll also writes back what is left of its timeout
        271 => Buffers(vec![
            (0, Len::Fixed(8 * args[1].min(1 << 16))),
            (2, Fixed(16)),
        ]),
        // select, pselect6: the three sets (the size in bits of each is nfds, rounded up)
        23 | 270 => {
            let bytes = args[0].min(1 << 16).div_ceil(64) * 8;
            // Linux also writes back what is left of the timeout.
            Buffers(vec![
                (1, Fixed(bytes)),
                (2, Fixed(bytes)),
                (3, Fixed(bytes)),
                (4, Fixed(16)),
            ])
        }
        // epoll_wait, epoll_pwait: maxevents of 12 bytes
        232 | 281 => one(1, Fixed(12 * args[2].min(1 << 16))),
        // getresuid, getresgid
        118 | 120 => Buffers(vec![(0, Fixed(4)), (1, Fixed(4)), (2, Fixed(4))]),
        // getgroups
        115 => one(1, Fixed(4 * args[0].min(1 << 16))),
        // sched_getaffinity
        204 => one(2, Arg(1)),
        // set_tid_address writes nothing now (the kernel writes at the thread's exit);
        // set_robust_list only registers a list (walked when a thread dies holding a lock)
        218 | 273 => Effects::None,
        // get_robust_list: the head and its length
        274 => Buffers(vec![(1, Fixed(8)), (2, Fixed(8))]),
        // futex: a wait or wake writes nothing; the other operations may
        202 => match args[1] & 0x7f {
            0 | 1 | 9 | 10 => Effects::None,
            _ => Barrier("a futex operation that may write memory"),
        },
        // mmap over a mapping replaces its bytes; elsewhere it only adds pages.
        9 if args[3] & MAP_FIXED != 0 => Barrier("memory mapped over"),
        // madvise(MADV_DONTNEED): the pages read as zeros from now on (a thread's stack
        // when it ends): their old bytes are kept as a buffer's are. MADV_FREE may drop
        // them at any later moment, MADV_REMOVE punches the file.
        28 if matches!(args[2], 4 | 24) => one(0, Arg(1)),
        28 if matches!(args[2], 8 | 9) => Barrier("memory contents dropped"),
        // prctl: the options that set something write nothing; PR_GET_NAME fills 16 bytes
        157 => match args[0] {
            16 => one(1, Fixed(16)),
            1 | 4 | 8 | 15 | 22 | 23 | 24 | 36 | 38 | 0x5356_4d41 => Effects::None,
            _ => Barrier("a prctl option whose writes to memory are not known"),
        },
        // ioctl: the terminal queries the C library makes, else not known
        16 => match args[1] {
            TCGETS => one(2, Fixed(60)),
            TIOCGWINSZ => one(2, Fixed(8)),
            _ => Barrier("an ioctl whose writes to memory are not known"),
        },
        // fcntl: the lock queries write a struct flock
        72 if matches!(args[1], 5 | 36) => one(2, Fixed(32)),
        // F_GETOWN_EX (struct f_owner_ex), F_GET_RW_HINT / F_GET_FILE_RW_HINT (a u64)
        72 if matches!(args[1], 16 | 1035 | 1037) => one(2, Fixed(8)),
        // Calls that write no memory of the process.
        1
        | 2
        | 3
        | 8
        | 9
        | 10
        | 12
        | 15
        | 18
        | 20
        | 21
        | 24
        | 28
        | 32
        | 33
        | 34
        | 37
        | 39
        | 41
        | 42
        | 44
        | 46
        | 48..=50
        | 54
        | 60
        | 62
        | 72
        | 74..=77
        | 80..=88
        | 90..=95
        | 102
        | 104
        | 107
        | 108
        | 110..=112
        | 186
        | 200
        | 231
        | 233
        | 234
        | 257
        | 258
        | 263
        | 280
        | 284
        | 290
        | 291
        | 292
        | 334 => Effects::None,
        // munmap is the session's: anonymous memory it takes away is read first.
        11 => Barrier("memory unmapped"),
        25 => Barrier("memory remapped"),
        // clone and clone3 are the session's (a thread's ids are recorded; a process is a
        // barrier); fork and vfork make a process.
        56 | 57 | 58 | 435 => Barrier("a new process"),
        59 | 322 => Barrier("a new program image"),
        _ => Barrier("a call whose writes to memory are not known"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_from_the_arguments() {
        let args = [3, 0x1000, 64, 0, 0, 0];
        assert_eq!(of(0, &args), Effects::Buffers(vec![(1, Len::Arg(2))]));
        assert_eq!(of(1, &args), Effects::None);
        assert_eq!(of(11, &args), Effects::Barrier("memory unmapped"));
        assert!(matches!(of(999, &args), Effects::Barrier(_)));
        // A futex wait writes nothing; a requeue may.
        assert_eq!(of(202, &[0, 0x80, 0, 0, 0, 0]), Effects::None);
        assert!(matches!(of(202, &[0, 4, 0, 0, 0, 0]), Effects::Barrier(_)));
    }
}
