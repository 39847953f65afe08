//! SIGINT, SIGTERM and SIGHUP to scry itself. The handlers only record the signal; they are
//! installed without SA_RESTART so a blocked `waitpid` or `read` returns EINTR and the code
//! around it looks at what was recorded. Helper threads block these signals, so the main
//! thread (the ptrace thread) is the one that sees them.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static TERMINATE: AtomicI32 = AtomicI32::new(0);
static INTERRUPT: AtomicBool = AtomicBool::new(false);
static INTERACTIVE: AtomicBool = AtomicBool::new(false);

extern "C" fn record(sig: libc::c_int) {
    if sig == libc::SIGINT && INTERACTIVE.load(Ordering::SeqCst) {
        INTERRUPT.store(true, Ordering::SeqCst);
    } else {
        TERMINATE.store(sig, Ordering::SeqCst);
    }
}

/// Installs the handlers. `interactive`: SIGINT interrupts the running command (a person
/// pressed Ctrl-C) instead of ending the session.
pub(crate) fn install(interactive: bool) {
    INTERACTIVE.store(interactive, Ordering::SeqCst);
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installs an async-signal-safe handler that only stores to atomics.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = record as *const () as usize;
            action.sa_flags = 0;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// The signal that asked scry to end, if one did.
pub(crate) fn termination() -> Option<i32> {
    match TERMINATE.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// Whether the current command should stop: termination pending, or a Ctrl-C not yet
/// consumed.
pub(crate) fn pending() -> bool {
    termination().is_some() || INTERRUPT.load(Ordering::SeqCst)
}

/// Consumes a Ctrl-C; true if there was one.
pub(crate) fn take_interrupt() -> bool {
    INTERRUPT.swap(false, Ordering::SeqCst)
}
