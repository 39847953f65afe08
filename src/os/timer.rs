//! A deadline for blocking waits. `waitpid` has no timeout, so a thread-directed POSIX timer
//! sends SIGALRM to the ptrace thread; the handler does nothing and is installed without
//! SA_RESTART, so the blocked `waitpid` returns EINTR and the caller checks its deadline.

use std::sync::Once;
use std::time::Duration;

use super::OsError;

static INSTALL: Once = Once::new();

extern "C" fn wake(_: libc::c_int) {}

fn install_handler() {
    INSTALL.call_once(|| {
        // SAFETY: installs an async-signal-safe no-op handler for SIGALRM.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = wake as *const () as usize;
            action.sa_flags = 0; // no SA_RESTART: the point is to interrupt waitpid
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut());
        }
    });
}

/// After the first expiry the timer keeps firing every few milliseconds: if the signal lands
/// just before `waitpid` is entered (a window no flag can close), the next one still wakes it.
const REPEAT: Duration = Duration::from_millis(5);

pub(crate) struct WaitAlarm {
    timer: libc::timer_t,
}

impl WaitAlarm {
    /// Creates a timer whose signal goes to the calling thread only (the ptrace thread).
    pub(crate) fn for_current_thread() -> Result<Self, OsError> {
        install_handler();
        // SAFETY: timer_create fills `timer`; the sigevent is fully initialised.
        unsafe {
            let mut event: libc::sigevent = std::mem::zeroed();
            event.sigev_notify = libc::SIGEV_THREAD_ID;
            event.sigev_signo = libc::SIGALRM;
            event.sigev_notify_thread_id = libc::gettid();
            let mut timer: libc::timer_t = std::ptr::null_mut();
            if libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut timer) != 0 {
                return Err(OsError::Io {
                    what: "timer_create",
                    err: std::io::Error::last_os_error(),
                });
            }
            Ok(WaitAlarm { timer })
        }
    }

    pub(crate) fn arm(&self, after: Duration) {
        let after = after.max(Duration::from_micros(1));
        self.set(after, REPEAT);
    }

    pub(crate) fn disarm(&self) {
        self.set(Duration::ZERO, Duration::ZERO);
    }

    fn set(&self, first: Duration, every: Duration) {
        let ts = |d: Duration| libc::timespec {
            tv_sec: d.as_secs() as _,
            tv_nsec: d.subsec_nanos() as _,
        };
        let spec = libc::itimerspec {
            it_value: ts(first),
            it_interval: ts(every),
        };
        // SAFETY: the timer handle is valid for our lifetime.
        unsafe {
            libc::timer_settime(self.timer, 0, &spec, std::ptr::null_mut());
        }
    }
}

impl Drop for WaitAlarm {
    fn drop(&mut self) {
        // SAFETY: deleting our own timer once.
        unsafe {
            libc::timer_delete(self.timer);
        }
    }
}

/// Blocks SIGALRM, SIGINT, SIGTERM and SIGHUP in the calling thread; helper threads call this
/// so those signals always reach the ptrace thread, where they interrupt a blocked wait.
pub(crate) fn block_signals_in_helper_thread() {
    // SAFETY: manipulates only this thread's signal mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGALRM, libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}
