//! The keeper: a small process that answers for scry's seccomp filter once scry lets a
//! program go. A filter cannot be removed, and its SECCOMP_RET_TRACE makes a call fail with
//! ENOSYS when no tracer takes the stop; so before scry detaches from a process carrying its
//! filter (or lets a fork child of one run untraced), it stacks a second filter into it
//! that returns SECCOMP_RET_USER_NOTIF for the same calls. That action outranks TRACE, and
//! its listener (a file descriptor) is handed to the keeper, which answers every
//! notification with "continue": the call runs as if nothing were there. The keeper exits
//! when scry is gone and every process it answers for has exited (the listener then reports
//! POLLHUP).
//!
//! The keeper also reads, and drops, the output of programs scry started and let go: their
//! stdout and stderr are scry's pipes (or terminal), and with no reader left once scry
//! exits, the program's next write would kill it with SIGPIPE (a terminal would hang up).
//!
//! The keeper is scry's own binary started again in keeper mode (`scry-keeper --keeper`),
//! so it holds none of scry's memory; one serves up to [`PER_KEEPER`] listeners, then the
//! next is started.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Mutex;

use super::{OsError, Tid};

const ARGV0: &[u8] = b"scry-keeper\0";
const KEEPER_FLAG: &str = "--keeper";
/// The fd the keeper finds its socket on.
const SOCKET_FD: RawFd = 3;
/// Listeners one keeper serves (below the default soft limit of 1024 open files).
const PER_KEEPER: usize = 1000;

/// `SECCOMP_IOCTL_NOTIF_RECV` / `_SEND` (`_IOWR('!', 0 / 1, ...)`).
const NOTIF_RECV: libc::c_ulong = 0xc050_2100;
const NOTIF_SEND: libc::c_ulong = 0xc018_2101;
const NOTIF_SIZE: usize = 80;
const USER_NOTIF_FLAG_CONTINUE: u32 = 1;
const SECCOMP_GET_ACTION_AVAIL: libc::c_long = 2;

struct Keeper {
    socket: OwnedFd,
    served: usize,
    /// Its process id (it says so first thing), for the note at detach.
    pid: Tid,
}

static KEEPER: Mutex<Option<Keeper>> = Mutex::new(None);

/// This process was started as a keeper.
pub(crate) fn is_keeper_invocation() -> bool {
    let mut args = std::env::args_os();
    let first = args.next();
    first.as_deref() == Some("scry-keeper".as_ref())
        && args.next().as_deref() == Some(KEEPER_FLAG.as_ref())
}

/// Whether this kernel can take scry's filter out of the way when scry lets a program go:
/// USER_NOTIF filters (Linux 5.0) and taking a file descriptor from another process (5.6).
pub(crate) fn release_supported() -> Result<(), String> {
    static CHECKED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    CHECKED
        .get_or_init(|| {
            let action: u32 = super::seccomp::RET_USER_NOTIF;
            // SAFETY: asks whether an action exists; installs nothing.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_seccomp,
                    SECCOMP_GET_ACTION_AVAIL,
                    0,
                    &action as *const u32,
                )
            };
            if rc != 0 {
                return Err("the kernel has no SECCOMP_RET_USER_NOTIF (Linux 5.0)".into());
            }
            // SAFETY: an invalid pidfd: EBADF if the call exists, ENOSYS if not.
            let rc = unsafe { libc::syscall(libc::SYS_pidfd_getfd, -1, 0, 0) };
            if rc == -1 && nix::Error::last() == nix::Error::ENOSYS {
                return Err("the kernel has no pidfd_getfd (Linux 5.6)".into());
            }
            Ok(())
        })
        .clone()
}

/// A duplicate of file descriptor `fd` of process `pid` (scry must be allowed to trace it).
pub(crate) fn take_fd(pid: Tid, fd: i32) -> Result<OwnedFd, OsError> {
    let fail = |what: &'static str| OsError::Ptrace {
        what,
        tid: pid,
        errno: nix::Error::last(),
    };
    // SAFETY: plain system calls with integer arguments; the results are fds we now own.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if pidfd < 0 {
        return Err(fail("pidfd_open"));
    }
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as RawFd) };
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if got < 0 {
        return Err(fail("pidfd_getfd"));
    }
    Ok(unsafe { OwnedFd::from_raw_fd(got as RawFd) })
}

/// Makes sure a keeper runs (before anything is changed in a program that would depend on
/// it).
pub(crate) fn ready() -> Result<(), OsError> {
    let mut keeper = KEEPER.lock().unwrap_or_else(|e| e.into_inner());
    if keeper.as_ref().is_none_or(|k| k.served >= PER_KEEPER) {
        *keeper = Some(start()?);
    }
    Ok(())
}

/// Gives a seccomp listener to the keeper (started if none runs, or if it died); returns
/// the keeper's process id.
pub(crate) fn hand_over(listener: OwnedFd) -> Result<Tid, OsError> {
    send(&listener).map_err(|()| {
        OsError::Keeper("could not hand the seccomp listener to a keeper process".into())
    })
}

/// Gives the read end of a program's output pipe (or its terminal's master side) to the
/// keeper, which reads it until every writer has closed it and drops what it reads.
pub(crate) fn keep_reading(output: OwnedFd) -> Result<Tid, OsError> {
    send(&output).map_err(|()| {
        OsError::Keeper("could not hand the program's output to a keeper process".into())
    })
}

fn send(fd: &OwnedFd) -> Result<Tid, ()> {
    let mut keeper = KEEPER.lock().unwrap_or_else(|e| e.into_inner());
    for _ in 0..2 {
        if keeper.as_ref().is_none_or(|k| k.served >= PER_KEEPER) {
            *keeper = Some(start().map_err(drop)?);
        }
        let k = keeper.as_mut().expect("just started");
        if send_fd(k.socket.as_raw_fd(), fd.as_raw_fd()).is_ok() {
            k.served += 1;
            return Ok(k.pid);
        }
        // The keeper is gone (killed?): start another one.
        *keeper = None;
    }
    Err(())
}

fn send_fd(socket: RawFd, fd: RawFd) -> Result<(), nix::Error> {
    let byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_ptr() as *mut libc::c_void,
        iov_len: 1,
    };
    // Room for one `struct cmsghdr` carrying one int, 8-byte aligned.
    let mut control = [0u64; 4];
    // SAFETY: msghdr points at the iovec and control buffer above, which outlive the call;
    // the CMSG macros stay within the control buffer sized for one fd.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
        if libc::sendmsg(socket, &msg, libc::MSG_NOSIGNAL) < 0 {
            return Err(nix::Error::last());
        }
    }
    Ok(())
}

/// Starts a keeper: scry's binary again, detached from scry (its own session, its parent
/// gone at once so it is nobody's child to wait for), with /dev/null for stdio so it never
/// holds scry's pipes open.
fn start() -> Result<Keeper, OsError> {
    let spawn_err = |what: &str| {
        OsError::Keeper(format!(
            "starting the keeper: {what}: {}",
            nix::Error::last()
        ))
    };
    let mut pair = [0 as RawFd; 2];
    // SAFETY: socketpair writes two fds into the array we own.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        )
    } != 0
    {
        return Err(spawn_err("socketpair"));
    }
    // SAFETY: both fds were just created and are ours.
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
    // The running binary, even if its path was replaced since scry started.
    let exe = std::fs::File::open("/proc/self/exe")
        .map_err(|e| OsError::Keeper(format!("starting the keeper: /proc/self/exe: {e}")))?;
    let devnull = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .map_err(|e| OsError::Keeper(format!("starting the keeper: /dev/null: {e}")))?;
    // Far from 0-3, which the child rearranges before exec.
    let high = |fd: RawFd| -> Result<OwnedFd, OsError> {
        // SAFETY: duplicates an fd we own into a new one we then own.
        let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10) };
        if new < 0 {
            return Err(spawn_err("fcntl"));
        }
        Ok(unsafe { OwnedFd::from_raw_fd(new) })
    };
    let exe = high(exe.as_raw_fd())?;
    let theirs = high(theirs.as_raw_fd())?;
    let devnull = high(devnull.as_raw_fd())?;
    let flag = b"--keeper\0";
    let argv: [*const libc::c_char; 3] = [
        ARGV0.as_ptr().cast(),
        flag.as_ptr().cast(),
        std::ptr::null(),
    ];
    let envp: [*const libc::c_char; 1] = [std::ptr::null()];
    let empty = b"\0";
    // SAFETY: between fork and exec the children call only async-signal-safe functions on
    // memory prepared above.
    let first = unsafe { libc::fork() };
    if first < 0 {
        return Err(spawn_err("fork"));
    }
    if first == 0 {
        unsafe {
            libc::setsid();
            if libc::fork() != 0 {
                libc::_exit(0);
            }
            let null = devnull.as_raw_fd();
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            libc::dup2(null, 2);
            libc::dup2(theirs.as_raw_fd(), SOCKET_FD);
            // Every other descriptor closes at exec.
            libc::syscall(
                libc::SYS_close_range,
                SOCKET_FD + 1,
                u32::MAX,
                4, /* CLOSE_RANGE_CLOEXEC */
            );
            let sigset = {
                let mut s: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut s);
                s
            };
            libc::sigprocmask(libc::SIG_SETMASK, &sigset, std::ptr::null_mut());
            libc::syscall(
                libc::SYS_execveat,
                exe.as_raw_fd(),
                empty.as_ptr(),
                argv.as_ptr(),
                envp.as_ptr(),
                libc::AT_EMPTY_PATH,
            );
            libc::_exit(127);
        }
    }
    let mut status = 0;
    // SAFETY: reaping the intermediate child we just forked.
    unsafe { libc::waitpid(first, &mut status, 0) };
    drop(theirs);
    let pid = read_pid(&ours).ok_or_else(|| {
        OsError::Keeper("starting the keeper: it did not say its process id within 5 s".into())
    })?;
    Ok(Keeper {
        socket: ours,
        served: 0,
        pid,
    })
}

/// The keeper's first message: its pid, 4 bytes. Waits at most 5 s.
fn read_pid(socket: &OwnedFd) -> Option<Tid> {
    let mut poll = libc::pollfd {
        fd: socket.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll and recv use the struct and buffer we own.
    unsafe {
        if libc::poll(&mut poll, 1, 5000) != 1 {
            return None;
        }
        let mut bytes = [0u8; 4];
        let n = libc::recv(poll.fd, bytes.as_mut_ptr().cast(), 4, 0);
        (n == 4).then(|| Tid::from_ne_bytes(bytes))
    }
}

/// The keeper's main loop: receive listeners and outputs from scry, answer every
/// notification with "continue", read outputs, drop listeners whose processes are all gone
/// and outputs no process writes to any more; exit when scry has closed its end and none is
/// left. Returns the exit code.
pub(crate) fn serve() -> i32 {
    // SAFETY: the fd scry's start() put there for us.
    let socket = unsafe { OwnedFd::from_raw_fd(SOCKET_FD) };
    let mut scry_open = true;
    // Each with whether it is a program's output (else a seccomp listener).
    let mut listeners: Vec<(OwnedFd, bool)> = Vec::new();
    // SAFETY: naming this process for ps; the name is a static NUL-terminated string.
    unsafe { libc::prctl(libc::PR_SET_NAME, ARGV0.as_ptr()) };
    // Programs depend on it for as long as they live: a `pkill scry` or a terminal's hang-up
    // must not take it away from them (only SIGKILL can). It ends on its own when the last
    // of them has exited.
    for sig in [
        libc::SIGTERM,
        libc::SIGINT,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGPIPE,
        libc::SIGUSR1,
        libc::SIGUSR2,
    ] {
        // SAFETY: sets a disposition; no handler runs.
        unsafe { libc::signal(sig, libc::SIG_IGN) };
    }
    let pid = std::process::id() as Tid;
    // SAFETY: sends 4 bytes we own on our socket.
    unsafe { libc::send(socket.as_raw_fd(), pid.to_ne_bytes().as_ptr().cast(), 4, 0) };
    loop {
        if !scry_open && listeners.is_empty() {
            return 0;
        }
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(listeners.len() + 1);
        fds.push(libc::pollfd {
            fd: if scry_open { socket.as_raw_fd() } else { -1 },
            events: libc::POLLIN,
            revents: 0,
        });
        fds.extend(listeners.iter().map(|(l, _)| libc::pollfd {
            fd: l.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }));
        // SAFETY: poll reads and writes the array we own.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n < 0 {
            if nix::Error::last() == nix::Error::EINTR {
                continue;
            }
            return 1;
        }
        if fds[0].revents != 0 {
            match receive_fd(socket.as_raw_fd()) {
                Some(fd) => {
                    let output = is_output(fd.as_raw_fd());
                    listeners.push((fd, output));
                }
                None => scry_open = false,
            }
        }
        let mut gone = Vec::new();
        for (i, (p, (_, output))) in fds[1..].iter().zip(&listeners).enumerate() {
            let hung_up = p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0;
            if *output {
                // Read (and dropped) until no writer is left: EOF, or EIO from a terminal.
                if (p.revents & libc::POLLIN != 0 || hung_up) && !drain(p.fd) {
                    gone.push(i);
                }
            } else if p.revents & libc::POLLIN != 0 {
                answer(p.fd);
            } else if hung_up {
                gone.push(i);
            }
        }
        for i in gone.into_iter().rev() {
            listeners.swap_remove(i);
        }
    }
}

/// One listener from scry, or `None` when scry closed its end.
fn receive_fd(socket: RawFd) -> Option<OwnedFd> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut control = [0u64; 4];
    // SAFETY: msghdr points at buffers we own; the received fd is checked before use.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        loop {
            let n = libc::recvmsg(socket, &mut msg, libc::MSG_CMSG_CLOEXEC);
            if n < 0 && nix::Error::last() == nix::Error::EINTR {
                continue;
            }
            if n <= 0 {
                return None;
            }
            break;
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() || (*cmsg).cmsg_type != libc::SCM_RIGHTS {
            // A message without a descriptor: nothing to serve, the socket stays open.
            return receive_fd(socket);
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
        Some(OwnedFd::from_raw_fd(fd))
    }
}

/// Whether `fd` is a program's output (a pipe or a terminal's master side), not a seccomp
/// listener (an anonymous inode).
fn is_output(fd: RawFd) -> bool {
    // SAFETY: fstat fills the zeroed struct we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return false;
    }
    matches!(st.st_mode & libc::S_IFMT, libc::S_IFIFO | libc::S_IFCHR)
}

/// Reads what is waiting in `fd` and drops it; false once no writer is left.
fn drain(fd: RawFd) -> bool {
    let mut buf = [0u8; 16384];
    loop {
        // SAFETY: reads into the buffer we own.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n > 0 {
            return true;
        }
        if n < 0 && nix::Error::last() == nix::Error::EINTR {
            continue;
        }
        return false;
    }
}

/// Lets one notified system call run as if no filter were there.
fn answer(listener: RawFd) {
    let mut notif = [0u8; NOTIF_SIZE];
    // SAFETY: the kernel fills the zeroed `struct seccomp_notif` we own.
    if unsafe { libc::ioctl(listener, NOTIF_RECV, notif.as_mut_ptr()) } != 0 {
        // The caller was killed meanwhile, or another reader took it.
        return;
    }
    // struct seccomp_notif_resp: id, val (s64), error (s32), flags (u32).
    let mut resp = [0u8; 24];
    resp[..8].copy_from_slice(&notif[..8]);
    resp[20..24].copy_from_slice(&USER_NOTIF_FLAG_CONTINUE.to_ne_bytes());
    // SAFETY: the kernel reads the 24-byte response we own. A failure means the caller is
    // gone: nothing to answer.
    unsafe { libc::ioctl(listener, NOTIF_SEND, resp.as_mut_ptr()) };
}
