//! Per-thread bookkeeping of the tracer.

use crate::os::regs::RawRegs;
use crate::os::Tid;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunState {
    Running,
    Stopped,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopKind {
    /// A ptrace-event or interrupt stop: resumed with no signal.
    Event,
    /// A signal-delivery-stop: resuming passes `pending_signal`.
    Signal,
    /// A ptrace event reported from inside a system call (clone, fork, vfork, vfork-done,
    /// exec): resuming finishes that call, so no injected call can run here (its registers
    /// would be taken for the unfinished call's: a clone made twice, a thread on another's
    /// stack).
    InSyscall,
}

pub(crate) struct Thread {
    pub tid: Tid,
    pub state: RunState,
    pub stop_kind: StopKind,
    /// Signal to deliver on the next resume (0 = none).
    pub pending_signal: i32,
    /// Registers read since the last resume; `None` until someone asks.
    pub regs: Option<RawRegs>,
    /// Created by a clone and not yet seen stopped: its debug registers still need arming.
    pub fresh: bool,
    /// Its creation was reported (thread events); the clone event, not the new thread's
    /// first stop (which may come first), is what announces it.
    pub announced: bool,
    /// The breakpoint this thread's last reported stop was at: resuming executes the
    /// instruction under it first.
    pub parked_at: Option<u64>,
    /// Its breakpoint hit was undone while all threads were stopped: it must hit again
    /// (never be stepped over), until it reports something other than an interrupt.
    pub rewound: bool,
    /// It did not stop when interrupted (an uninterruptible wait in the kernel): why, for
    /// the user. It still counts as running and stops when the kernel lets it go.
    pub stuck: Option<String>,
    /// Its last stop was a group-stop (job control: SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU): the
    /// stopping signal. Resuming it listens for SIGCONT instead of running it, as the
    /// process would stay stopped without a debugger.
    pub group_stop: Option<i32>,
    /// It was let go from an interrupt stop to take a trap still queued for it (see
    /// `flush_trap`); cleared at its next stop of any other kind.
    pub flushing: bool,
    /// Its last resume was a single step of scry's: a step trap (TRAP_TRACE, or TRAP_BRKPT
    /// at a system call's exit) is scry's. Otherwise such a trap is the program's own (it
    /// set the trap flag itself, or executed `icebp`).
    pub stepped: bool,
    /// It is being stepped into the program's own SIGTRAP handler (see `deliver_signal`).
    pub entering_handler: bool,
}

impl Thread {
    pub(crate) fn new_stopped(tid: Tid) -> Self {
        Thread {
            tid,
            state: RunState::Stopped,
            stop_kind: StopKind::Event,
            pending_signal: 0,
            regs: None,
            fresh: false,
            announced: false,
            parked_at: None,
            rewound: false,
            stuck: None,
            group_stop: None,
            flushing: false,
            stepped: false,
            entering_handler: false,
        }
    }

    pub(crate) fn mark_running(&mut self) {
        self.state = RunState::Running;
        self.parked_at = None;
        // `rewound` stays: a thread resumed at its int3 may be interrupted before it runs
        // an instruction (another thread's or process's stop), and is still there to hit
        // it. Only a report other than an interrupt says it moved on (see `handle`).
        self.regs = None;
        self.pending_signal = 0;
    }

    pub(crate) fn mark_stopped(&mut self, kind: StopKind) {
        self.state = RunState::Stopped;
        self.stuck = None;
        self.stop_kind = kind;
        self.regs = None;
    }
}
