//! The symbolic values system-call arguments and results are shown with (x86-64 Linux
//! numbering): flag sets, enumerations and errno names, as data.

/// A flag set: named bits (a name may cover several bits; wider ones come first so they
/// win), and an optional enumerated field under `mask` whose values are named alone.
pub(crate) struct FlagSet {
    pub field_mask: u64,
    pub field: &'static [(u64, &'static str)],
    pub bits: &'static [(u64, &'static str)],
}

pub(crate) const OPEN_FLAGS: FlagSet = FlagSet {
    field_mask: 0o3,
    field: &[(0, "O_RDONLY"), (1, "O_WRONLY"), (2, "O_RDWR")],
    bits: &[
        (0o20200000, "O_TMPFILE"),
        (0o4010000, "O_SYNC"),
        (0o100, "O_CREAT"),
        (0o200, "O_EXCL"),
        (0o400, "O_NOCTTY"),
        (0o1000, "O_TRUNC"),
        (0o2000, "O_APPEND"),
        (0o4000, "O_NONBLOCK"),
        (0o10000, "O_DSYNC"),
        (0o20000, "O_ASYNC"),
        (0o40000, "O_DIRECT"),
        (0o100000, "O_LARGEFILE"),
        (0o200000, "O_DIRECTORY"),
        (0o400000, "O_NOFOLLOW"),
        (0o1000000, "O_NOATIME"),
        (0o2000000, "O_CLOEXEC"),
        (0o10000000, "O_PATH"),
    ],
};

pub(crate) const PROT: FlagSet = FlagSet {
    field_mask: 0,
    field: &[],
    bits: &[
        (0x1, "PROT_READ"),
        (0x2, "PROT_WRITE"),
        (0x4, "PROT_EXEC"),
        (0x0100_0000, "PROT_GROWSDOWN"),
        (0x0200_0000, "PROT_GROWSUP"),
    ],
};
pub(crate) const PROT_NONE: &str = "PROT_NONE";

pub(crate) const MAP_FLAGS: FlagSet = FlagSet {
    field_mask: 0x3,
    field: &[
        (1, "MAP_SHARED"),
        (2, "MAP_PRIVATE"),
        (3, "MAP_SHARED_VALIDATE"),
    ],
    bits: &[
        (0x10, "MAP_FIXED"),
        (0x20, "MAP_ANONYMOUS"),
        (0x40, "MAP_32BIT"),
        (0x100, "MAP_GROWSDOWN"),
        (0x800, "MAP_DENYWRITE"),
        (0x1000, "MAP_EXECUTABLE"),
        (0x2000, "MAP_LOCKED"),
        (0x4000, "MAP_NORESERVE"),
        (0x8000, "MAP_POPULATE"),
        (0x10000, "MAP_NONBLOCK"),
        (0x20000, "MAP_STACK"),
        (0x40000, "MAP_HUGETLB"),
        (0x80000, "MAP_SYNC"),
        (0x100000, "MAP_FIXED_NOREPLACE"),
    ],
};

pub(crate) const AT_FLAGS: FlagSet = FlagSet {
    field_mask: 0,
    field: &[],
    bits: &[
        (0x100, "AT_SYMLINK_NOFOLLOW"),
        (0x200, "AT_REMOVEDIR"),
        (0x400, "AT_SYMLINK_FOLLOW"),
        (0x800, "AT_NO_AUTOMOUNT"),
        (0x1000, "AT_EMPTY_PATH"),
    ],
};

/// `access` modes; 0 is `F_OK`.
pub(crate) const ACCESS_MODE: FlagSet = FlagSet {
    field_mask: 0,
    field: &[],
    bits: &[(0x4, "R_OK"), (0x2, "W_OK"), (0x1, "X_OK")],
};
pub(crate) const F_OK: &str = "F_OK";

/// `clone` and `unshare` flags; the low byte of `clone`'s is the exit signal.
pub(crate) const CLONE_FLAGS: FlagSet = FlagSet {
    field_mask: 0,
    field: &[],
    bits: &[
        (0x100, "CLONE_VM"),
        (0x200, "CLONE_FS"),
        (0x400, "CLONE_FILES"),
        (0x800, "CLONE_SIGHAND"),
        (0x1000, "CLONE_PIDFD"),
        (0x2000, "CLONE_PTRACE"),
        (0x4000, "CLONE_VFORK"),
        (0x8000, "CLONE_PARENT"),
        (0x10000, "CLONE_THREAD"),
        (0x20000, "CLONE_NEWNS"),
        (0x40000, "CLONE_SYSVSEM"),
        (0x80000, "CLONE_SETTLS"),
        (0x100000, "CLONE_PARENT_SETTID"),
        (0x200000, "CLONE_CHILD_CLEARTID"),
        (0x400000, "CLONE_DETACHED"),
        (0x800000, "CLONE_UNTRACED"),
        (0x1000000, "CLONE_CHILD_SETTID"),
        (0x2000000, "CLONE_NEWCGROUP"),
        (0x4000000, "CLONE_NEWUTS"),
        (0x8000000, "CLONE_NEWIPC"),
        (0x10000000, "CLONE_NEWUSER"),
        (0x20000000, "CLONE_NEWPID"),
        (0x40000000, "CLONE_NEWNET"),
        (0x80000000, "CLONE_IO"),
    ],
};

pub(crate) const SOCK_TYPE: FlagSet = FlagSet {
    field_mask: 0xf,
    field: &[
        (1, "SOCK_STREAM"),
        (2, "SOCK_DGRAM"),
        (3, "SOCK_RAW"),
        (4, "SOCK_RDM"),
        (5, "SOCK_SEQPACKET"),
        (6, "SOCK_DCCP"),
        (10, "SOCK_PACKET"),
    ],
    bits: &[(0o4000, "SOCK_NONBLOCK"), (0o2000000, "SOCK_CLOEXEC")],
};

/// `futex` operations: the command, `FUTEX_PRIVATE_FLAG` shown as `_PRIVATE` like strace.
pub(crate) const FUTEX_OPS: &[(u64, &str)] = &[
    (0, "FUTEX_WAIT"),
    (1, "FUTEX_WAKE"),
    (2, "FUTEX_FD"),
    (3, "FUTEX_REQUEUE"),
    (4, "FUTEX_CMP_REQUEUE"),
    (5, "FUTEX_WAKE_OP"),
    (6, "FUTEX_LOCK_PI"),
    (7, "FUTEX_UNLOCK_PI"),
    (8, "FUTEX_TRYLOCK_PI"),
    (9, "FUTEX_WAIT_BITSET"),
    (10, "FUTEX_WAKE_BITSET"),
    (11, "FUTEX_WAIT_REQUEUE_PI"),
    (12, "FUTEX_CMP_REQUEUE_PI"),
    (13, "FUTEX_LOCK_PI2"),
];
pub(crate) const FUTEX_PRIVATE: u64 = 128;
pub(crate) const FUTEX_CLOCK_REALTIME: u64 = 256;

pub(crate) const WHENCE: &[(u64, &str)] = &[
    (0, "SEEK_SET"),
    (1, "SEEK_CUR"),
    (2, "SEEK_END"),
    (3, "SEEK_DATA"),
    (4, "SEEK_HOLE"),
];

pub(crate) const SIG_HOW: &[(u64, &str)] =
    &[(0, "SIG_BLOCK"), (1, "SIG_UNBLOCK"), (2, "SIG_SETMASK")];

pub(crate) const ADDRESS_FAMILIES: &[(u64, &str)] = &[
    (0, "AF_UNSPEC"),
    (1, "AF_UNIX"),
    (2, "AF_INET"),
    (3, "AF_AX25"),
    (4, "AF_IPX"),
    (5, "AF_APPLETALK"),
    (9, "AF_X25"),
    (10, "AF_INET6"),
    (16, "AF_NETLINK"),
    (17, "AF_PACKET"),
    (29, "AF_CAN"),
    (31, "AF_BLUETOOTH"),
    (38, "AF_ALG"),
    (40, "AF_VSOCK"),
    (44, "AF_XDP"),
];

pub(crate) const FCNTL_CMDS: &[(u64, &str)] = &[
    (0, "F_DUPFD"),
    (1, "F_GETFD"),
    (2, "F_SETFD"),
    (3, "F_GETFL"),
    (4, "F_SETFL"),
    (5, "F_GETLK"),
    (6, "F_SETLK"),
    (7, "F_SETLKW"),
    (8, "F_SETOWN"),
    (9, "F_GETOWN"),
    (10, "F_SETSIG"),
    (11, "F_GETSIG"),
    (15, "F_SETOWN_EX"),
    (16, "F_GETOWN_EX"),
    (36, "F_OFD_GETLK"),
    (37, "F_OFD_SETLK"),
    (38, "F_OFD_SETLKW"),
    (1024, "F_SETLEASE"),
    (1025, "F_GETLEASE"),
    (1026, "F_NOTIFY"),
    (1030, "F_DUPFD_CLOEXEC"),
    (1031, "F_SETPIPE_SZ"),
    (1032, "F_GETPIPE_SZ"),
    (1033, "F_ADD_SEALS"),
    (1034, "F_GET_SEALS"),
];

/// `dirfd` arguments: the current directory.
pub(crate) const AT_FDCWD: i64 = -100;

/// errno names by number: 1-133, then the kernel's own restart codes (512-530), which a
/// tracer sees at a system-call exit before the kernel restarts or converts them.
pub(crate) const ERRNO: &[(u16, &str)] = &[
    (1, "EPERM"),
    (2, "ENOENT"),
    (3, "ESRCH"),
    (4, "EINTR"),
    (5, "EIO"),
    (6, "ENXIO"),
    (7, "E2BIG"),
    (8, "ENOEXEC"),
    (9, "EBADF"),
    (10, "ECHILD"),
    (11, "EAGAIN"),
    (12, "ENOMEM"),
    (13, "EACCES"),
    (14, "EFAULT"),
    (15, "ENOTBLK"),
    (16, "EBUSY"),
    (17, "EEXIST"),
    (18, "EXDEV"),
    (19, "ENODEV"),
    (20, "ENOTDIR"),
    (21, "EISDIR"),
    (22, "EINVAL"),
    (23, "ENFILE"),
    (24, "EMFILE"),
    (25, "ENOTTY"),
    (26, "ETXTBSY"),
    (27, "EFBIG"),
    (28, "ENOSPC"),
    (29, "ESPIPE"),
    (30, "EROFS"),
    (31, "EMLINK"),
    (32, "EPIPE"),
    (33, "EDOM"),
    (34, "ERANGE"),
    (35, "EDEADLK"),
    (36, "ENAMETOOLONG"),
    (37, "ENOLCK"),
    (38, "ENOSYS"),
    (39, "ENOTEMPTY"),
    (40, "ELOOP"),
    (42, "ENOMSG"),
    (43, "EIDRM"),
    (44, "ECHRNG"),
    (45, "EL2NSYNC"),
    (46, "EL3HLT"),
    (47, "EL3RST"),
    (48, "ELNRNG"),
    (49, "EUNATCH"),
    (50, "ENOCSI"),
    (51, "EL2HLT"),
    (52, "EBADE"),
    (53, "EBADR"),
    (54, "EXFULL"),
    (55, "ENOANO"),
    (56, "EBADRQC"),
    (57, "EBADSLT"),
    (59, "EBFONT"),
    (60, "ENOSTR"),
    (61, "ENODATA"),
    (62, "ETIME"),
    (63, "ENOSR"),
    (64, "ENONET"),
    (65, "ENOPKG"),
    (66, "EREMOTE"),
    (67, "ENOLINK"),
    (68, "EADV"),
    (69, "ESRMNT"),
    (70, "ECOMM"),
    (71, "EPROTO"),
    (72, "EMULTIHOP"),
    (73, "EDOTDOT"),
    (74, "EBADMSG"),
    (75, "EOVERFLOW"),
    (76, "ENOTUNIQ"),
    (77, "EBADFD"),
    (78, "EREMCHG"),
    (79, "ELIBACC"),
    (80, "ELIBBAD"),
    (81, "ELIBSCN"),
    (82, "ELIBMAX"),
    (83, "ELIBEXEC"),
    (84, "EILSEQ"),
    (85, "ERESTART"),
    (86, "ESTRPIPE"),
    (87, "EUSERS"),
    (88, "ENOTSOCK"),
    (89, "EDESTADDRREQ"),
    (90, "EMSGSIZE"),
    (91, "EPROTOTYPE"),
    (92, "ENOPROTOOPT"),
    (93, "EPROTONOSUPPORT"),
    (94, "ESOCKTNOSUPPORT"),
    (95, "EOPNOTSUPP"),
    (96, "EPFNOSUPPORT"),
    (97, "EAFNOSUPPORT"),
    (98, "EADDRINUSE"),
    (99, "EADDRNOTAVAIL"),
    (100, "ENETDOWN"),
    (101, "ENETUNREACH"),
    (102, "ENETRESET"),
    (103, "ECONNABORTED"),
    (104, "ECONNRESET"),
    (105, "ENOBUFS"),
    (106, "EISCONN"),
    (107, "ENOTCONN"),
    (108, "ESHUTDOWN"),
    (109, "ETOOMANYREFS"),
    (110, "ETIMEDOUT"),
    (111, "ECONNREFUSED"),
    (112, "EHOSTDOWN"),
    (113, "EHOSTUNREACH"),
    (114, "EALREADY"),
    (115, "EINPROGRESS"),
    (116, "ESTALE"),
    (117, "EUCLEAN"),
    (118, "ENOTNAM"),
    (119, "ENAVAIL"),
    (120, "EISNAM"),
    (121, "EREMOTEIO"),
    (122, "EDQUOT"),
    (123, "ENOMEDIUM"),
    (124, "EMEDIUMTYPE"),
    (125, "ECANCELED"),
    (126, "ENOKEY"),
    (127, "EKEYEXPIRED"),
    (128, "EKEYREVOKED"),
    (129, "EKEYREJECTED"),
    (130, "EOWNERDEAD"),
    (131, "ENOTRECOVERABLE"),
    (132, "ERFKILL"),
    (133, "EHWPOISON"),
    (512, "ERESTARTSYS"),
    (513, "ERESTARTNOINTR"),
    (514, "ERESTARTNOHAND"),
    (515, "ENOIOCTLCMD"),
    (516, "ERESTART_RESTARTBLOCK"),
    (517, "EPROBE_DEFER"),
    (518, "EOPENSTALE"),
    (519, "ENOPARAM"),
    (521, "EBADHANDLE"),
    (522, "ENOTSYNC"),
    (523, "EBADCOOKIE"),
    (524, "ENOTSUPP"),
    (525, "ETOOSMALL"),
    (526, "ESERVERFAULT"),
    (527, "EBADTYPE"),
    (528, "EJUKEBOX"),
    (529, "EIOCBQUEUED"),
    (530, "ERECALLCONFLICT"),
];

/// The errno name of a failed call's result (`-2` is `ENOENT`), or `None` when `ret` is
/// not an error (the kernel's errors are -1 to -4095).
pub(crate) fn errno_name(ret: i64) -> Option<String> {
    if !(-4095..=-1).contains(&ret) {
        return None;
    }
    let n = (-ret) as u16;
    Some(match ERRNO.iter().find(|(v, _)| *v == n) {
        Some((_, name)) => (*name).to_string(),
        None => format!("E{n}"),
    })
}

/// The kernel restarts a call that returns one of these once the tracer lets it go (or
/// turns it into EINTR when a handler runs): the call has not ended.
pub(crate) fn is_restart(ret: i64) -> bool {
    matches!(-ret, 512..=514 | 516)
}

/// Renders `value` with a flag set: `O_RDWR|O_CREAT|0x40000000`; `zero` names an empty set.
pub(crate) fn flags_text(set: &FlagSet, value: u64, zero: Option<&str>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut rest = value;
    if set.field_mask != 0 {
        let field = value & set.field_mask;
        match set.field.iter().find(|(v, _)| *v == field) {
            Some((_, name)) => {
                parts.push((*name).to_string());
                rest &= !set.field_mask;
            }
            None if field == 0 => {}
            None => {}
        }
    }
    for (bits, name) in set.bits {
        if *bits != 0 && rest & bits == *bits {
            parts.push((*name).to_string());
            rest &= !bits;
        }
    }
    if rest != 0 {
        parts.push(format!("{rest:#x}"));
    }
    if parts.is_empty() {
        return zero.map_or_else(|| "0".to_string(), str::to_string);
    }
    parts.join("|")
}

/// The name of an enumerated value, else the number.
pub(crate) fn enum_text(table: &[(u64, &str)], value: u64) -> String {
    match table.iter().find(|(v, _)| *v == value) {
        Some((_, name)) => (*name).to_string(),
        None => (value as i64).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_sets_render_like_strace() {
        assert_eq!(flags_text(&OPEN_FLAGS, 0, None), "O_RDONLY");
        assert_eq!(
            flags_text(&OPEN_FLAGS, 0o2000000 | 0o100 | 0o1000 | 1, None),
            "O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC"
        );
        // O_SYNC carries O_DSYNC's bit: named once, as the wider flag.
        assert_eq!(flags_text(&OPEN_FLAGS, 0o4010002, None), "O_RDWR|O_SYNC");
        assert_eq!(
            flags_text(&OPEN_FLAGS, 0o20200000 | 2, None),
            "O_RDWR|O_TMPFILE"
        );
        assert_eq!(flags_text(&PROT, 0, Some(PROT_NONE)), "PROT_NONE");
        assert_eq!(flags_text(&PROT, 5, Some(PROT_NONE)), "PROT_READ|PROT_EXEC");
        assert_eq!(
            flags_text(&MAP_FLAGS, 0x22, None),
            "MAP_PRIVATE|MAP_ANONYMOUS"
        );
        assert_eq!(
            flags_text(&SOCK_TYPE, 1 | 0o2000000, None),
            "SOCK_STREAM|SOCK_CLOEXEC"
        );
        // Unknown bits stay visible.
        assert_eq!(flags_text(&PROT, 0x81, None), "PROT_READ|0x80");
        assert_eq!(flags_text(&ACCESS_MODE, 0, Some(F_OK)), "F_OK");
        assert_eq!(flags_text(&ACCESS_MODE, 6, Some(F_OK)), "R_OK|W_OK");
    }

    #[test]
    fn errno_names() {
        assert_eq!(errno_name(-2).as_deref(), Some("ENOENT"));
        assert_eq!(errno_name(-13).as_deref(), Some("EACCES"));
        assert_eq!(errno_name(-512).as_deref(), Some("ERESTARTSYS"));
        assert_eq!(errno_name(-4000).as_deref(), Some("E4000"));
        assert_eq!(errno_name(3), None);
        assert_eq!(errno_name(-4096), None);
        assert!(is_restart(-512) && is_restart(-516) && !is_restart(-4));
        assert_eq!(enum_text(WHENCE, 2), "SEEK_END");
        assert_eq!(enum_text(WHENCE, 9), "9");
    }
}
