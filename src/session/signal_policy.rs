//! Which signals stop the program and which pass to it unseen, and whether threads'
//! creation and exit are stops: the user's policy (`signal.mode()`, `thread` listeners),
//! asked by every resume.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignalMode {
    Stop,
    Pass,
    /// The default for signals that stop: a stop, unless the program ignores the signal
    /// (SIG_IGN), when it has no effect on the program and passes without one.
    StopUnlessIgnored,
}

/// The policy: a mode for each signal number (0 unused) and whether thread events stop.
#[derive(Clone, Copy)]
pub(super) struct SignalPolicy {
    pub(super) modes: [SignalMode; 65],
    pub(super) thread_events: bool,
}

impl Default for SignalPolicy {
    /// Every signal stops unless ignored, except those that pass silently (SIGCHLD,
    /// SIGWINCH and the like: `signals::passes_silently`).
    fn default() -> Self {
        let mut modes = [SignalMode::StopUnlessIgnored; 65];
        for (sig, mode) in modes.iter_mut().enumerate() {
            if signals::passes_silently(sig as i32) {
                *mode = SignalMode::Pass;
            }
        }
        SignalPolicy {
            modes,
            thread_events: false,
        }
    }
}

impl SignalPolicy {
    /// Whether `sig` passes to the program without a stop. `pid`: the local process whose
    /// ignored signals (SIG_IGN) pass too; `None` for another machine's, whose dispositions
    /// this kernel cannot read (such a signal stops: SPEC, remote targets).
    fn passes(modes: &[SignalMode; 65], pid: Option<Tid>, sig: i32) -> bool {
        match modes.get(sig as usize) {
            Some(SignalMode::Pass) => true,
            // Read only when such a signal comes (one status read per signal).
            Some(SignalMode::StopUnlessIgnored) => pid
                .and_then(procfs::status_text)
                .is_some_and(|status| ignores(&status, sig)),
            _ => false,
        }
    }

    /// Sets how `signal` is handled; an error for a number that is no signal.
    fn set(&mut self, signal: i32, mode: SignalMode) -> Result<()> {
        let slot = self
            .modes
            .get_mut(signal as usize)
            .filter(|_| signal > 0)
            .ok_or_else(|| SessionError::Invalid(format!("no signal {signal}")))?;
        *slot = mode;
        Ok(())
    }
}

impl Session {
    /// Which signals pass without a stop, as the inferior asks.
    pub(super) fn pass_fn(&self) -> impl Fn(i32) -> bool {
        let modes = self.signals.modes;
        let pid = self
            .targets
            .live
            .as_ref()
            .filter(|t| t.process.is_local())
            .map(|t| t.process.pid());
        move |sig: i32| SignalPolicy::passes(&modes, pid, sig)
    }

    /// Thread creation and exit become stops during `cont()` (for `thread` listeners).
    pub fn set_thread_events(&mut self, on: bool) {
        self.signals.thread_events = on;
        if let Some(t) = &mut self.targets.live {
            t.process.set_report_threads(on);
        }
    }

    pub(crate) fn signal_mode(&mut self, signal: i32, mode: SignalMode) -> Result<()> {
        self.signals.set(signal, mode)
    }

    /// A remote stub reported `stop`, a signal that stops unless the program ignores it,
    /// and the program does ignore it: the target's own `/proc/PID/status` (read through
    /// the stub, gdbserver's `vFile`) says SIG_IGN. The stub holds the signal for the next
    /// resume, where it does nothing, as it would have done alone. A local process's were
    /// passed by the backend already; a stub that cannot read the target's files leaves
    /// the stop as it is.
    pub(super) fn ignored_remotely(&self, stop: &Stop) -> bool {
        let Stop::Signal { signal, .. } = *stop else {
            return false;
        };
        let stops_unless_ignored =
            self.signals.modes.get(signal as usize) == Some(&SignalMode::StopUnlessIgnored);
        // SIGTRAP is the debugger's; SIGKILL and SIGSTOP cannot be ignored.
        if !stops_unless_ignored || matches!(signal, 5 | 9 | 19) || !(1..=64).contains(&signal) {
            return false;
        }
        let Some(live) = self.targets.live.as_ref().filter(|t| !t.process.is_local()) else {
            return false;
        };
        live.process
            .proc_file("status")
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .is_some_and(|status| ignores(&status, signal))
    }
}

/// A process's `/proc/PID/status` text says it ignores `sig` (SIG_IGN, its `SigIgn` set).
fn ignores(status: &str, sig: i32) -> bool {
    procfs::signal_set(status, "SigIgn")
        .is_some_and(|ign| (1..=64).contains(&sig) && ign & (1 << (sig - 1)) != 0)
}
