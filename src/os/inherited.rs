//! The signal dispositions and mask scry was started with, for the programs it spawns. A
//! launcher that ignores SIGPIPE, SIGHUP, SIGINT or SIGTERM (`nohup`, a service manager)
//! passes SIG_IGN on to what it runs, and a program started under scry must get exactly what
//! it would get started by that launcher directly. By the time `main` runs, Rust's runtime has
//! set SIGPIPE to SIG_IGN whatever it was, and scry then installs handlers of its own, so the
//! originals are read in a constructor that runs before the runtime's initialisation.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Bit n-1: signal n was ignored when scry started.
static IGNORED: AtomicU64 = AtomicU64::new(0);
/// The main thread's blocked-signal mask when scry started (bit n-1 for signal n).
static MASK: AtomicU64 = AtomicU64::new(0);
static CAPTURED: AtomicBool = AtomicBool::new(false);

extern "C" fn capture() {
    let mut ignored = 0u64;
    for sig in 1..=64 {
        // SAFETY: sigaction with a null new action only reads the current one into memory
        // we own.
        let old = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            old
        };
        if old.sa_sigaction == libc::SIG_IGN {
            ignored |= 1 << (sig - 1);
        }
    }
    // SAFETY: reads this thread's mask into a sigset we own.
    let mask = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut set);
        (1..=64).fold(0u64, |m, sig| {
            if libc::sigismember(&set, sig) == 1 {
                m | 1 << (sig - 1)
            } else {
                m
            }
        })
    };
    IGNORED.store(ignored, Ordering::SeqCst);
    MASK.store(mask, Ordering::SeqCst);
    CAPTURED.store(true, Ordering::SeqCst);
}

/// Runs `capture` before `main` (and before Rust's runtime changes SIGPIPE).
#[used]
#[link_section = ".init_array"]
static CAPTURE: extern "C" fn() = capture;

/// What a spawned program is to inherit: (ignored signals, blocked mask), as bit sets.
/// Taken once, before fork: the child may only make async-signal-safe calls.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Inherited {
    ignored: u64,
    mask: u64,
}

impl Inherited {
    pub(crate) fn at_start() -> Inherited {
        // The constructor's static must be kept by the linker: naming it here does that.
        let _ = &CAPTURE;
        if !CAPTURED.load(Ordering::SeqCst) {
            // Not run (a loader that skips constructors): what scry's own state says, with
            // SIGPIPE default as Rust's runtime would have found it most often.
            capture();
            IGNORED.fetch_and(!(1 << (libc::SIGPIPE - 1)), Ordering::SeqCst);
        }
        Inherited {
            ignored: IGNORED.load(Ordering::SeqCst),
            mask: MASK.load(Ordering::SeqCst),
        }
    }

    /// In a forked child, before exec: every signal scry catches or ignores goes back to what
    /// scry inherited (exec resets handlers, not SIG_IGN), and the mask is the one scry
    /// started with.
    ///
    /// # Safety
    /// Only async-signal-safe calls: fit for a child between fork and exec.
    pub(crate) unsafe fn apply_in_child(&self) {
        for sig in 1..=64 {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let handler = if self.ignored & (1 << (sig - 1)) != 0 {
                libc::SIG_IGN
            } else {
                libc::SIG_DFL
            };
            libc::signal(sig, handler);
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in 1..=64 {
            if self.mask & (1 << (sig - 1)) != 0 {
                libc::sigaddset(&mut set, sig);
            }
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    }
}
